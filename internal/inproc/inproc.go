// Package inproc lets collections hand in-memory data to tasks that run in
// the same process, instead of encoding it into the tasks' params: a table
// of held values, by id, that the tasks look up.
package inproc

import (
	"sync"

	"github.com/shoal-data/shoal/graph"
)

// Runs reports whether exec runs tasks in this process (it has a method
// InProcess that says so, as the local executor does).
func Runs(exec graph.Executor) bool {
	ip, ok := exec.(interface{ InProcess() bool })
	return ok && ip.InProcess()
}

// Table holds values for the tasks of this process. A value held by
// several computations at once (the same data computed twice concurrently)
// has one id, counted, so that their tasks are the same tasks with the same
// params. The zero value is ready to use.
type Table[K comparable, V any] struct {
	// OnRelease, when set, is called with a value when nobody holds it
	// any more.
	OnRelease func(V)

	mu   sync.Mutex
	byID map[uint64]*entry[K, V]
	ids  map[K]uint64
	next uint64
}

type entry[K comparable, V any] struct {
	key  K
	v    V
	refs int
}

// Hold keeps v, known by key, and returns its id.
func (t *Table[K, V]) Hold(key K, v V) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if id, ok := t.ids[key]; ok {
		t.byID[id].refs++
		return id
	}
	if t.byID == nil {
		t.byID, t.ids = map[uint64]*entry[K, V]{}, map[K]uint64{}
	}
	t.next++
	t.byID[t.next] = &entry[K, V]{key: key, v: v, refs: 1}
	t.ids[key] = t.next
	return t.next
}

// Release gives up one hold of each id.
func (t *Table[K, V]) Release(ids []uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, id := range ids {
		e, ok := t.byID[id]
		if !ok {
			continue
		}
		if e.refs--; e.refs == 0 {
			delete(t.byID, id)
			delete(t.ids, e.key)
			if t.OnRelease != nil {
				t.OnRelease(e.v)
			}
		}
	}
}

// Get returns the value of id, if it is held.
func (t *Table[K, V]) Get(id uint64) (V, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.byID[id]
	if !ok {
		var zero V
		return zero, false
	}
	return e.v, true
}
