// Package procmem reads how much memory the process uses.
package procmem

import (
	"bytes"
	"os"
	"runtime/metrics"
	"strconv"
)

var pageSize = int64(os.Getpagesize())

// RSS returns the resident set size of the process in bytes: what the
// operating system counts against it. Where /proc is not available, it
// returns the memory the Go runtime holds from the system.
func RSS() int64 {
	if b, err := os.ReadFile("/proc/self/statm"); err == nil {
		f := bytes.Fields(b)
		if len(f) > 1 {
			if pages, err := strconv.ParseInt(string(f[1]), 10, 64); err == nil {
				return pages * pageSize
			}
		}
	}
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		return int64(s[0].Value.Uint64())
	}
	return 0
}
