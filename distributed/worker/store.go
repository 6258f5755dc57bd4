package worker

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/internal/spillfile"
)

type entryState uint8

const (
	inMemory entryState = iota
	spilling            // being written; the value is still in memory
	onDisk
)

// entry is one held value.
type entry struct {
	key        graph.Key
	value      any
	size       int64
	state      entryState
	path       string
	prev, next *entry // least recently used first, for entries in memory
}

// store holds a worker's values, in memory or spilled to disk, and
// accounts their size as package local does. Its fields are guarded by the
// worker's mutex.
type store struct {
	m       map[graph.Key]*entry
	lru     entry // sentinel of the ring of entries in memory
	managed int64
	spilled int64
	limit   int64 // bytes above which values spill; 0 means never
	dir     string
	nfiles  int
	reg     *graph.Registry
	logger  *slog.Logger
}

func (s *store) init(limit int64, dir string, reg *graph.Registry, logger *slog.Logger) {
	*s = store{m: map[graph.Key]*entry{}, limit: limit, dir: dir, reg: reg, logger: logger}
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

func (s *store) put(k graph.Key, v any, size int64) {
	if old := s.m[k]; old != nil {
		s.drop(k)
	}
	en := &entry{key: k, value: v, size: size}
	s.m[k] = en
	s.pushBack(en)
	s.managed += size
}

// get returns the entry of k, marking it recently used.
func (s *store) get(k graph.Key) *entry {
	en := s.m[k]
	if en != nil && en.state != onDisk {
		s.unlink(en)
		s.pushBack(en)
	}
	return en
}

// drop forgets k's value and deletes its spill file.
func (s *store) drop(k graph.Key) {
	en := s.m[k]
	if en == nil {
		return
	}
	delete(s.m, k)
	if en.state == onDisk {
		s.spilled -= en.size
		s.removeFile(en)
		return
	}
	s.unlink(en)
	s.managed -= en.size
}

func (s *store) removeFile(en *entry) {
	if err := os.Remove(en.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.logger.Warn("cannot remove spill file", "key", en.key, "path", en.path, "error", err)
	}
}

func (s *store) dropAll() {
	for k := range s.m {
		s.drop(k)
	}
}

func (s *store) overLimit() bool { return s.limit > 0 && s.managed > s.limit }

// spillVictims marks the least recently used values to write so that the
// rest fit under the limit, and returns them.
func (s *store) spillVictims() []*entry {
	var victims []*entry
	excess := s.managed - s.limit
	for en := s.lru.next; en != &s.lru && excess > 0; en = en.next {
		if en.state == inMemory {
			victims = append(victims, en)
			excess -= en.size
		}
	}
	for _, en := range victims {
		en.state = spilling
		s.nfiles++
		en.path = filepath.Join(s.dir, spillfile.Name(en.key, s.nfiles, en.value))
	}
	return victims
}

// spillDone records the outcome of writing victims. It returns the first
// error.
func (s *store) spillDone(victims []*entry, errs []error, worker string) error {
	var first error
	for i, en := range victims {
		if s.m[en.key] != en {
			os.Remove(en.path) // dropped while it was written
			continue
		}
		if errs[i] != nil {
			os.Remove(en.path)
			en.state = inMemory
			serr := &spillfile.Error{Key: en.key, Path: en.path, Bytes: en.size, Err: errs[i]}
			en.path = ""
			s.logger.Error("spill failed; the value stays in memory", "worker", worker, "key", en.key,
				"path", serr.Path, "bytes", en.size, "error", errs[i])
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
		s.logger.Debug("spilled", "worker", worker, "key", en.key, "path", en.path, "bytes", en.size)
	}
	return first
}

// loaded records that en was read back from disk.
func (s *store) loaded(en *entry, v any) {
	if s.m[en.key] != en || en.state != onDisk {
		return
	}
	s.removeFile(en)
	en.value, en.state, en.path = v, inMemory, ""
	s.spilled -= en.size
	s.managed += en.size
	s.pushBack(en)
}

func (s *store) String() string {
	return fmt.Sprintf("%d values, %d bytes in memory, %d on disk", len(s.m), s.managed, s.spilled)
}
