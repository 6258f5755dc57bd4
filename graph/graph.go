package graph

import (
	"errors"
	"slices"
	"sync/atomic"
)

// Graph is a set of tasks keyed by their keys. Tasks keep the order in which
// they were added, so everything derived from a graph (its encoding, its
// static order, its picture) is deterministic.
//
// A graph may name external keys: values that its tasks depend on but that
// were computed earlier and are held by the executor (persisted results).
//
// A Graph is not safe for concurrent modification; the executors never
// modify a graph they are given.
type Graph struct {
	tasks    []*Task
	index    map[Key]int
	external map[Key]struct{}
	dagCache atomic.Pointer[optDAG] // index view of the edges, built on first use
}

// New returns an empty graph.
func New() *Graph {
	return &Graph{index: make(map[Key]int)}
}

// NewFromTasks returns a graph holding tasks, or the first error of Add.
func NewFromTasks(tasks ...*Task) (*Graph, error) {
	g := &Graph{index: make(map[Key]int, len(tasks)), tasks: make([]*Task, 0, len(tasks))}
	for _, t := range tasks {
		if err := g.Add(t); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// Add adds t to the graph, which takes ownership of it. Adding a task whose
// key is already present is a no-op when both describe the same work and a
// *DuplicateKeyError otherwise.
func (g *Graph) Add(t *Task) error {
	if t.Key == "" {
		return errors.New("graph: task with an empty key (op " + quote(t.Op) + ")")
	}
	if g.index == nil {
		g.index = make(map[Key]int)
	}
	if i, ok := g.index[t.Key]; ok {
		if g.tasks[i].Equal(t) {
			return nil
		}
		return &DuplicateKeyError{Key: t.Key, Old: g.tasks[i], New: t}
	}
	g.index[t.Key] = len(g.tasks)
	g.tasks = append(g.tasks, t)
	delete(g.external, t.Key)
	g.dagCache.Store(nil)
	return nil
}

// DepPositions returns, aligned with the Deps of the task at position i of
// Tasks(), the position of each dependency in Tasks(), or -1 for a
// dependency that is not a task of g (an external or missing key). The
// positions are computed once for all tasks and kept until g changes; the
// slice belongs to g.
func (g *Graph) DepPositions(i int) []int32 {
	d := newOptDAG(g)
	return d.pos[d.posStart[i]:d.posStart[i+1]]
}

// Merge adds every task and external key of the other graphs to g.
func (g *Graph) Merge(others ...*Graph) error {
	for _, o := range others {
		if o == nil || o == g {
			continue
		}
		for _, t := range o.tasks {
			if err := g.Add(t); err != nil {
				return err
			}
		}
		for k := range o.external {
			if !g.Has(k) {
				g.AddExternal(k)
			}
		}
	}
	return nil
}

// AddExternal declares keys whose values the executor already holds, such
// as persisted results, so that tasks of g may depend on them.
func (g *Graph) AddExternal(keys ...Key) {
	if g.external == nil {
		g.external = make(map[Key]struct{})
	}
	for _, k := range keys {
		if !g.Has(k) {
			g.external[k] = struct{}{}
		}
	}
}

// External returns the external keys of g, sorted.
func (g *Graph) External() []Key {
	ks := make([]Key, 0, len(g.external))
	for k := range g.external {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// IsExternal reports whether k is an external key of g.
func (g *Graph) IsExternal(k Key) bool {
	_, ok := g.external[k]
	return ok
}

// Get returns the task with key k.
func (g *Graph) Get(k Key) (*Task, bool) {
	i, ok := g.index[k]
	if !ok {
		return nil, false
	}
	return g.tasks[i], true
}

// Has reports whether g has a task with key k.
func (g *Graph) Has(k Key) bool {
	_, ok := g.index[k]
	return ok
}

// Len returns the number of tasks.
func (g *Graph) Len() int { return len(g.tasks) }

// Tasks returns the tasks in the order they were added. The slice belongs to
// the graph: do not modify it.
func (g *Graph) Tasks() []*Task { return g.tasks }

// Keys returns the keys of all tasks in the order they were added.
func (g *Graph) Keys() []Key {
	ks := make([]Key, len(g.tasks))
	for i, t := range g.tasks {
		ks[i] = t.Key
	}
	return ks
}

// Clone returns a copy of g that shares its tasks.
func (g *Graph) Clone() *Graph {
	c := &Graph{tasks: slices.Clone(g.tasks), index: make(map[Key]int, len(g.tasks))}
	for i, t := range c.tasks {
		c.index[t.Key] = i
	}
	for k := range g.external {
		c.AddExternal(k)
	}
	return c
}

// Dependents returns, for every task, the keys of the tasks that depend on
// it, each once, in graph order.
func (g *Graph) Dependents() map[Key][]Key {
	out := make(map[Key][]Key, len(g.tasks))
	for _, t := range g.tasks {
		for i, d := range t.Deps {
			if slices.Contains(t.Deps[:i], d) {
				continue // named twice by the same task
			}
			out[d] = append(out[d], t.Key)
		}
	}
	return out
}

// Validate checks that every dependency is a task of g or an external key,
// and that the graph has no cycle. The error is a *MissingDependencyError or
// a *CycleError naming the keys.
func (g *Graph) Validate() error {
	var missing []MissingDependency
	d := newOptDAG(g)
	for i, t := range g.tasks {
		for j, p := range d.pos[d.posStart[i]:d.posStart[i+1]] {
			if p < 0 && !g.IsExternal(t.Deps[j]) {
				missing = append(missing, MissingDependency{Task: t.Key, Dep: t.Deps[j]})
			}
		}
	}
	if len(missing) > 0 {
		return &MissingDependencyError{Missing: missing}
	}
	if _, acyclic := d.topo(); acyclic {
		return nil
	}
	if cyc := g.findCycle(); cyc != nil {
		return &CycleError{Keys: cyc}
	}
	return nil
}

// findCycle returns the keys of one cycle, in dependency order, or nil.
func (g *Graph) findCycle() []Key {
	const (
		white = iota
		grey
		black
	)
	color := make([]uint8, len(g.tasks))
	type frame struct{ task, next int }
	var stack []frame
	for root := range g.tasks {
		if color[root] != white {
			continue
		}
		stack = append(stack[:0], frame{task: root})
		color[root] = grey
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			deps := g.tasks[top.task].Deps
			if top.next == len(deps) {
				color[top.task] = black
				stack = stack[:len(stack)-1]
				continue
			}
			d, ok := g.index[deps[top.next]]
			top.next++
			if !ok {
				continue
			}
			switch color[d] {
			case white:
				color[d] = grey
				stack = append(stack, frame{task: d})
			case grey:
				// The cycle is the part of the stack from d to the top:
				// each frame depends on the next, and the top on d.
				i := len(stack) - 1
				for stack[i].task != d {
					i--
				}
				cyc := make([]Key, 0, len(stack)-i)
				for _, f := range stack[i:] {
					cyc = append(cyc, g.tasks[f.task].Key)
				}
				return cyc
			}
		}
	}
	return nil
}
