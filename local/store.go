package local

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/internal/dirlock"
	"github.com/shoal-data/shoal/internal/spillfile"
	"github.com/shoal-data/shoal/scheduler"
)

// SpillError says that a result could not be written to disk. Nothing is
// lost: the result stays in memory, and the task that needed the room fails
// with this error. Its fields: Key, the result being spilled; Path, the file
// it was written to; Bytes, the size of the result; Err, what the file
// system said.
type SpillError = spillfile.Error

type entryState uint8

const (
	inMemory entryState = iota
	spilling            // being written; the value is still in memory
	onDisk
)

// entry is one held result.
type entry struct {
	id         int32
	key        graph.Key
	value      any
	size       int64
	state      entryState
	path       string
	prev, next *entry // least recently used first, for entries in memory
}

// store holds results, in memory or spilled to disk, and accounts their
// size. All fields are guarded by the executor's mutex.
type store struct {
	m        []*entry // by scheduler task id
	n        int      // entries held
	lru      entry    // sentinel of the ring of entries in memory
	managed  int64
	spilled  int64
	limit    int64  // bytes above which results spill; 0 means never
	dir      string // the executor's directory
	made     bool
	lock     *os.File // held while the executor runs (see makeDir)
	nfiles   int
	writing  int // spills being written, the lock released (see end)
	logger   *slog.Logger
	registry *graph.Registry
}

// init sets up the store in place (the LRU ring points at the store's own
// sentinel, so the store must not be copied afterwards).
func (s *store) init(cfg config, logger *slog.Logger) {
	*s = store{dir: ownDir(cfg.localDir), logger: logger, registry: cfg.registry}
	s.makeDir()
	if cfg.memoryLimit > 0 {
		s.limit = int64(float64(cfg.memoryLimit) * cfg.spillFraction)
	}
	s.lru.prev, s.lru.next = &s.lru, &s.lru
}

func (s *store) unlink(en *entry) {
	en.prev.next, en.next.prev = en.next, en.prev
	en.prev, en.next = nil, nil
}

func (s *store) pushBack(en *entry) {
	en.prev, en.next = s.lru.prev, &s.lru
	s.lru.prev.next = en
	s.lru.prev = en
}

func (s *store) put(id int32, k graph.Key, v any, size int64) {
	for int(id) >= len(s.m) {
		s.m = append(s.m, nil)
	}
	if old := s.m[id]; old != nil {
		s.remove(old)
	}
	en := &entry{id: id, key: k, value: v, size: size}
	s.m[id] = en
	s.n++
	s.pushBack(en)
	s.managed += size
}

// lookup returns the entry of task id with key k, or nil.
func (s *store) lookup(id int32, k graph.Key) *entry {
	if id <= 0 || int(id) >= len(s.m) {
		return nil
	}
	if en := s.m[id]; en != nil && en.key == k {
		return en
	}
	return nil
}

// get returns the entry of task id with key k, marking it recently used.
func (s *store) get(id int32, k graph.Key) *entry {
	en := s.lookup(id, k)
	if en != nil && en.state != onDisk {
		s.unlink(en)
		s.pushBack(en)
	}
	return en
}

// remove forgets an entry and returns the spill file to delete, if any.
func (s *store) remove(en *entry) string {
	s.m[en.id] = nil
	s.n--
	switch en.state {
	case onDisk:
		s.spilled -= en.size
		return en.path
	default:
		s.unlink(en)
		s.managed -= en.size
	}
	return ""
}

// release drops k's value, deleting its spill file.
func (s *store) release(id int32, k graph.Key) {
	en := s.lookup(id, k)
	if en == nil {
		return
	}
	if p := s.remove(en); p != "" {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.logger.Warn("cannot remove spill file", "key", k, "path", p, "error", err)
		}
	}
}

// drop forgets a value without touching files.
func (s *store) drop(id int32, k graph.Key) {
	if en := s.lookup(id, k); en != nil {
		s.remove(en)
	}
}

func (s *store) overLimit() bool { return s.limit > 0 && s.managed > s.limit }

// close removes the executor's directory: spill files, and what tasks
// wrote there.
func (s *store) close() error {
	err := removeAll(s.dir)
	if s.lock != nil {
		s.lock.Close()
	}
	return err
}

// makeDir makes the executor's directory and takes its lock, so that a
// later executor can tell it from the directory of a killed process;
// first it removes the directories killed processes left. Where it
// cannot, the directory is made on first use, without a lock.
func (s *store) makeDir() {
	if removed, err := dirlock.Sweep(filepath.Join(filepath.Dir(s.dir), "shoal-local-*-*")); len(removed) > 0 || err != nil {
		s.logger.Info("removed the directories of executors whose processes were killed", "paths", removed, "error", err)
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return
	}
	l, err := dirlock.Lock(s.dir)
	if err != nil {
		return
	}
	s.lock, s.made = l, true
}

// ensureDir makes the executor's directory on first use.
func (s *store) ensureDir() (string, error) {
	if !s.made {
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			return s.dir, err
		}
		s.made = true
	}
	return s.dir, nil
}

// ownDir names a directory of the executor's own under base (default
// os.TempDir()), which two executors, of one process or of two, never
// share: made when first used, removed by Close.
func ownDir(base string) string {
	if base == "" {
		base = os.TempDir()
	}
	return filepath.Join(base, fmt.Sprintf("shoal-local-%d-%08x", os.Getpid(), rand.Uint32()))
}

// spill writes least recently used results to disk until the held results
// fit under the limit again. It is called with e.mu held, and releases it
// while writing. The result just computed (fresh) is spilled last.
func (e *Executor) spill(fresh *entry) error {
	s := &e.store
	dir, err := s.ensureDir()
	if err != nil {
		return &SpillError{Key: fresh.key, Path: dir, Bytes: fresh.size, Err: err}
	}
	for s.overLimit() {
		var victims []*entry
		excess := s.managed - s.limit
		for en := s.lru.next; en != &s.lru && excess > 0; en = en.next {
			if en.state == inMemory && en != fresh {
				victims = append(victims, en)
				excess -= en.size
			}
		}
		if excess > 0 {
			if s.lookup(fresh.id, fresh.key) == fresh && fresh.state == inMemory {
				victims = append(victims, fresh)
			}
		}
		if len(victims) == 0 {
			return nil // everything is already being written
		}
		for _, en := range victims {
			en.state = spilling
			s.nfiles++
			en.path = filepath.Join(dir, spillfile.Name(en.key, s.nfiles, en.value))
		}
		s.writing++
		e.mu.Unlock()
		errs := make([]error, len(victims))
		for i, en := range victims {
			var tm spillfile.Timing
			tm, errs[i] = spillfile.WriteTimed(en.path, en.value, s.registry)
			if errs[i] == nil {
				e.spillMetrics(en.key, diagnostics.ActivitySpillWrite, diagnostics.ActivityEncode, en.size, tm)
			}
		}
		e.mu.Lock()
		if s.writing--; s.writing == 0 && e.waiters > 0 {
			e.cond.Broadcast()
		}
		var first error
		for i, en := range victims {
			if s.lookup(en.id, en.key) != en {
				// Released while it was written.
				os.Remove(en.path)
				continue
			}
			if errs[i] != nil {
				os.Remove(en.path)
				en.state = inMemory
				serr := &SpillError{Key: en.key, Path: en.path, Bytes: en.size, Err: errs[i]}
				en.path = ""
				e.logger.Error("spill failed; the result stays in memory", "key", en.key, "path", serr.Path,
					"bytes", en.size, "error", errs[i])
				if first == nil {
					first = serr
				}
				continue
			}
			s.unlink(en)
			en.state = onDisk
			en.value = nil
			s.managed -= en.size
			s.spilled += en.size
			e.alerts.spilled += en.size
			e.logger.Debug("spilled", "key", en.key, "path", en.path, "bytes", en.size)
			if e.hub.Active() {
				e.evbuf = append(e.evbuf[:0], diagnostics.Event{Kind: diagnostics.Spill, Key: en.key,
					Prefix: en.key.Prefix(), Worker: workerName, Bytes: en.size, Path: en.path})
				e.hub.Publish(e.evbuf...)
			}
		}
		if first != nil {
			return first
		}
	}
	return nil
}

// unspill returns k's value, reading it back from disk if it was spilled.
func (e *Executor) unspill(id int32, k graph.Key) (any, error) {
	e.mu.Lock()
	en := e.store.lookup(id, k)
	if en == nil {
		e.mu.Unlock()
		return nil, fmt.Errorf("value of %q: %w", k, scheduler.ErrMissingData)
	}
	if en.state != onDisk {
		v := en.value
		e.mu.Unlock()
		return v, nil
	}
	path, size := en.path, en.size
	e.mu.Unlock()
	v, tm, err := spillfile.ReadTimed(path, e.cfg.registry)
	if err == nil {
		e.spillMetrics(k, diagnostics.ActivitySpillRead, diagnostics.ActivityDecode, size, tm)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if en2 := e.store.lookup(id, k); en2 != en || en.state != onDisk {
		if en2 != nil && en2.state != onDisk {
			return en2.value, nil // another slot read it first
		}
		if en2 == nil {
			return nil, fmt.Errorf("value of %q: %w", k, scheduler.ErrMissingData)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("read spilled value of %q from %s: %w", k, path, err)
	}
	s := &e.store
	en.value = v
	en.state = inMemory
	en.path = ""
	s.spilled -= en.size
	s.managed += en.size
	s.pushBack(en)
	os.Remove(path)
	if e.hub.Active() {
		e.evbuf = append(e.evbuf[:0], diagnostics.Event{Kind: diagnostics.Unspill, Key: k, Prefix: k.Prefix(),
			Worker: workerName, Bytes: en.size, Path: path})
		e.hub.Publish(e.evbuf...)
	}
	return v, nil
}

// spillMetrics counts a spill or its reading back in the fine metrics of
// the result's prefix: the file system's time, bytes and count under
// activity, the rest of the time under code (encode or decode).
func (e *Executor) spillMetrics(k graph.Key, activity, code string, size int64, tm spillfile.Timing) {
	p := k.Prefix()
	e.fine.Add(workerName, p, activity, diagnostics.UnitSeconds, tm.IO.Seconds())
	e.fine.Add(workerName, p, activity, diagnostics.UnitBytes, float64(size))
	e.fine.Add(workerName, p, activity, diagnostics.UnitCount, 1)
	e.fine.Add(workerName, p, code, diagnostics.UnitSeconds, (tm.Total - tm.IO).Seconds())
}
