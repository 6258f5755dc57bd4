// Package ended remembers, in this process, when directories of scratch
// files were removed because the computation that wrote them ended, so
// that a task of that computation still running when it happened (its
// cancellation is on the way) removes what it writes afterwards instead of
// leaving it behind.
package ended

import (
	"path/filepath"
	"sync"
	"time"
)

// keep is how long a removal is remembered: far longer than a cancelled
// task takes to stop.
const keep = time.Hour

var (
	mu sync.Mutex
	at = map[string]time.Time{}
)

// Mark records that dir was removed now.
func Mark(dir string) {
	now := time.Now()
	mu.Lock()
	defer mu.Unlock()
	for d, t := range at {
		if now.Sub(t) > keep {
			delete(at, d)
		}
	}
	at[filepath.Clean(dir)] = now
}

// Since says whether dir was removed at or after t.
func Since(dir string, t time.Time) bool {
	mu.Lock()
	defer mu.Unlock()
	r, ok := at[filepath.Clean(dir)]
	return ok && !r.Before(t)
}
