package dashboard

import (
	"slices"
	"strings"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
)

// maxComputations is how many computations a Recorder keeps: every one
// running, and the last that ended.
const maxComputations = 20

// compState is a computation as the Recorder follows it.
type compState struct {
	id       uint64
	started  time.Time
	finished time.Time
	state    string
	err      string
	tasks    int
	caller   string
	prefixes []*compPrefix // by name
}

// compPrefix counts the tasks of one prefix of a computation.
type compPrefix struct {
	name                           string
	total, done, erred, processing int
}

func (c *compState) prefix(name string) *compPrefix {
	i, found := slices.BinarySearchFunc(c.prefixes, name, func(p *compPrefix, n string) int {
		return strings.Compare(p.name, n)
	})
	if !found {
		c.prefixes = slices.Insert(c.prefixes, i, &compPrefix{name: name})
	}
	return c.prefixes[i]
}

// computation returns the computation numbered id, made when new. Called
// with r.mu held.
func (r *Recorder) computation(id uint64) *compState {
	c := r.compByID[id]
	if c == nil {
		c = &compState{id: id, state: "running"}
		r.compByID[id] = c
		r.comps = append(r.comps, c)
		r.trimComputations()
	}
	return c
}

// trimComputations forgets computations beyond maxComputations: the
// oldest that succeeded first, then the oldest cancelled, then the
// oldest failed, a running one last. Called with r.mu held.
func (r *Recorder) trimComputations() {
	for over := len(r.comps) - maxComputations; over > 0; over-- {
		i := -1
		for _, state := range []string{"done", "cancelled", "failed"} {
			if i = slices.IndexFunc(r.comps, func(c *compState) bool { return c.state == state }); i >= 0 {
				break
			}
		}
		if i < 0 {
			i = 0
		}
		delete(r.compByID, r.comps[i].id)
		r.comps = slices.Delete(r.comps, i, i+1)
	}
}

// compPrefix returns the counts of a prefix of computation id, or nil for
// a task of no known computation. Called with r.mu held.
func (r *Recorder) compPrefix(id uint64, prefix string) *compPrefix {
	if id == 0 {
		return nil
	}
	c := r.compByID[id]
	if c == nil {
		return nil
	}
	return c.prefix(prefix)
}

func (r *Recorder) computeStarted(e *diagnostics.Event) {
	if e.Compute == 0 {
		return
	}
	c := r.computation(e.Compute)
	c.started, c.caller = e.Time, e.Caller
	for name, n := range e.Tasks {
		c.prefix(name).total += n
		c.tasks += n
	}
}

func (r *Recorder) computeFinished(e *diagnostics.Event) {
	c := r.compByID[e.Compute]
	if c == nil {
		return
	}
	c.finished = e.Time
	switch {
	case e.Err == "":
		c.state = "done"
	case strings.Contains(e.Err, "context canceled") || strings.Contains(e.Err, "cancelled"):
		c.state, c.err = "cancelled", e.Err
	default:
		c.state, c.err = "failed", e.Err
	}
}

// Computations returns the computations kept, newest first.
func (r *Recorder) Computations() []Computation {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Computation, 0, len(r.comps))
	for i := len(r.comps) - 1; i >= 0; i-- {
		c := r.comps[i]
		cc := Computation{ID: c.id, Started: c.started, Finished: c.finished, State: c.state, Error: c.err,
			Tasks: c.tasks, Progress: make([]Progress, 0, len(c.prefixes)), Caller: c.caller}
		for _, p := range c.prefixes {
			cc.Progress = append(cc.Progress, Progress{Prefix: p.name, Total: max(p.total, p.done+p.erred),
				Done: p.done, Erred: p.erred, Processing: p.processing})
		}
		out = append(out, cc)
	}
	return out
}
