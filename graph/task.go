package graph

import (
	"bytes"
	"maps"
	"slices"
)

// Task is one unit of work: it runs the registered op named Op on the
// encoded Params and on the values of the tasks named in Deps, in that order,
// and produces the value named Key. A task holds no Go closure, so it can be
// encoded and run in another process that registered the same ops.
type Task struct {
	Key    Key
	Op     string
	Params []byte
	Deps   []Key
	Annotations
}

// Annotations tell the scheduler how to treat a task. The zero value is the
// default: priority 0, no retries, no resources, no restrictions.
type Annotations struct {
	// Priority orders ready tasks: higher runs first. Ties are broken by the
	// order of submission, then by the graph's static order.
	Priority int
	// Retries is how many times the task is run again after it fails
	// before its error is final.
	Retries int
	// Resources are abstract amounts a worker must have free to run the
	// task, such as {"GPU": 1} or {"MEMORY": 8e9}.
	Resources map[string]float64
	// Workers restricts the task to the workers with these names or
	// addresses. Empty means any worker.
	Workers []string
	// LooseRestrictions lets the task run elsewhere when none of Workers is
	// available.
	LooseRestrictions bool
	// Span names the tracing span that the task's execution belongs to.
	Span string
}

// IsZero reports whether a holds only default values.
func (a *Annotations) IsZero() bool {
	return a.Priority == 0 && a.Retries == 0 && len(a.Resources) == 0 &&
		len(a.Workers) == 0 && !a.LooseRestrictions && a.Span == ""
}

// Equal reports whether two tasks describe the same work.
func (t *Task) Equal(o *Task) bool {
	return t.Key == o.Key && t.Op == o.Op && bytes.Equal(t.Params, o.Params) &&
		slices.Equal(t.Deps, o.Deps) && t.Annotations.equal(&o.Annotations)
}

func (a *Annotations) equal(o *Annotations) bool {
	return a.Priority == o.Priority && a.Retries == o.Retries &&
		maps.Equal(a.Resources, o.Resources) && slices.Equal(a.Workers, o.Workers) &&
		a.LooseRestrictions == o.LooseRestrictions && a.Span == o.Span
}

// Clone returns a deep copy of t.
func (t *Task) Clone() *Task {
	c := *t
	c.Params = bytes.Clone(t.Params)
	c.Deps = slices.Clone(t.Deps)
	c.Resources = maps.Clone(t.Resources)
	c.Workers = slices.Clone(t.Workers)
	return &c
}
