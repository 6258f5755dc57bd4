package scheduler

import (
	"errors"
	"fmt"
)

// Validate checks every invariant of the state and returns the violations
// found. Tests call it after every Handle; it costs time linear in the
// number of tasks and edges.
func (s *State) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		if len(errs) < 20 {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	var counts [numTaskStates]int
	processing := map[*worker]int{}
	nbytes := map[*worker]int64{}
	used := map[*worker]map[string]float64{}
	queued := 0
	for k, t := range s.tasks {
		if t.key != k {
			bad("task under key %q has key %q", k, t.key)
		}
		if t.id <= 0 || int(t.id) >= len(s.byID) || s.byID[t.id] != t {
			bad("%q: id %d does not lead to it", k, t.id)
		}
		for i, d := range t.deps {
			if t.depIDs[i] != d.id {
				bad("%q: dependency %q has id %d, listed as %d", k, d.key, d.id, t.depIDs[i])
			}
		}
		if t.state == Forgotten {
			bad("%q: forgotten but still known", k)
		}
		counts[t.state]++
		// Dependencies and dependents agree.
		for _, d := range t.deps {
			if d.state == Forgotten {
				bad("%q: dependency %q is forgotten", k, d.key)
			}
			if s.tasks[d.key] != d {
				bad("%q: dependency %q is not the known task of that key", k, d.key)
			}
		}
		live, waiters := 0, 0
		for _, d := range t.dependents {
			if d.state == Forgotten {
				continue
			}
			live++
			if d.state.needsDeps() {
				waiters++
			}
		}
		if live != int(t.nDependents) {
			bad("%q: %d live dependents, counted %d", k, live, t.nDependents)
		}
		if waiters != int(t.waiters) {
			bad("%q (%s): %d dependents need it, counted %d", k, t.state, waiters, t.waiters)
		}
		missing := 0
		for _, d := range t.deps {
			if d.state != Memory {
				missing++
			}
		}
		switch t.state {
		case Waiting:
			if missing != int(t.nWaitingOn) {
				bad("%q: waiting on %d dependencies, counted %d", k, missing, t.nWaitingOn)
			}
			if missing == 0 {
				bad("%q: waiting with all dependencies in memory", k)
			}
		case Queued, Processing:
			if missing != 0 {
				bad("%q (%s): %d dependencies not in memory", k, t.state, missing)
			}
		}
		if t.state == Queued {
			queued++
			if t.heapIdx < 0 && !containsTask(s.constrained, t) {
				bad("%q: queued but in no queue", k)
			}
		} else if t.heapIdx >= 0 || containsTask(s.constrained, t) {
			bad("%q (%s): in a queue", k, t.state)
		}
		if t.heapIdx >= 0 && (int(t.heapIdx) >= len(s.queue) || s.queue[t.heapIdx] != t) {
			bad("%q: wrong queue position %d", k, t.heapIdx)
		}
		// Where it runs and where it is held.
		switch t.state {
		case Processing:
			if t.proc == nil {
				bad("%q: processing on no worker", k)
			}
		case Cancelled:
			if t.proc == nil {
				bad("%q: cancelled but not running", k)
			}
		default:
			if t.proc != nil {
				bad("%q (%s): has a worker running it", k, t.state)
			}
		}
		if t.proc != nil {
			processing[t.proc]++
			if t.proc.state == WorkerGone {
				bad("%q: processing on a gone worker", k)
			}
			if used[t.proc] == nil {
				used[t.proc] = map[string]float64{}
			}
			for r, n := range t.spec.Resources {
				used[t.proc][r] += n
			}
		}
		if (t.state == Memory) != (len(t.who) > 0) {
			bad("%q (%s): held by %d workers", k, t.state, len(t.who))
		}
		for _, w := range t.who {
			nbytes[w] += t.nbytes
			if w.state == WorkerGone {
				bad("%q: held by a gone worker", k)
			}
		}
		if t.state == Erred && t.failure == nil {
			bad("%q: erred without a failure", k)
		}
		// Nothing is kept that nobody needs.
		if len(t.clients) == 0 && t.waiters == 0 {
			switch t.state {
			case Memory:
				bad("%q: in memory but nobody needs it", k)
			case Waiting, Queued, Processing:
				bad("%q (%s): computed but nobody needs it", k, t.state)
			case Released, Erred:
				if t.nDependents == 0 {
					bad("%q (%s): should be forgotten", k, t.state)
				}
			}
		}
		for _, r := range t.clients {
			c := r.c
			if s.clients[c.id] != c || !containsTask(c.tasks, t) {
				bad("%q: client %q does not list it", k, c.id)
			}
		}
	}
	for st := TaskState(0); st < numTaskStates; st++ {
		if st != Forgotten && counts[st] != s.counts[st] {
			bad("%d tasks %s, counted %d", counts[st], st, s.counts[st])
		}
	}
	if queued != len(s.queue)+len(s.constrained) {
		bad("%d queued tasks, queues hold %d", queued, len(s.queue)+len(s.constrained))
	}
	for i := 1; i < len(s.queue); i++ {
		if !s.deferStart && s.queue.less(i, (i-1)/2) {
			bad("queue out of heap order at %d", i)
		}
	}
	for i := 1; i < len(s.constrained); i++ {
		if s.constrained[i].prio.less(s.constrained[i-1].prio) {
			bad("constrained queue out of order at %d", i)
		}
	}
	for _, w := range s.wlist {
		if processing[w] != w.processing {
			bad("worker %s: %d tasks running, counted %d", w.info.Name, processing[w], w.processing)
		}
		if w.processing > max(w.slots, w.maxSlots) {
			bad("worker %s: %d tasks running in %d slots", w.info.Name, w.processing, max(w.slots, w.maxSlots))
		}
		if nbytes[w] != w.nbytes {
			bad("worker %s: holds %d bytes, counted %d", w.info.Name, nbytes[w], w.nbytes)
		}
		for r, n := range w.used {
			if d := n - used[w][r]; d > 1e-9 || d < -1e-9 {
				bad("worker %s: %g of %s used, counted %g", w.info.Name, used[w][r], r, n)
			}
		}
		if s.workers[w.info.Name] != w {
			bad("worker %s: listed but not known", w.info.Name)
		}
	}
	if len(s.wlist) != len(s.workers) {
		bad("%d workers listed, %d known", len(s.wlist), len(s.workers))
	}
	for id, c := range s.clients {
		if c.n == 0 {
			bad("client %q wants nothing but is kept", id)
		}
		if n := len(c.keys()); n != c.n {
			bad("client %q wants %d keys, counted %d", id, n, c.n)
		}
	}
	return errors.Join(errs...)
}

func containsTask(ts []*task, t *task) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

func containsClient(cs []clientRef, c *client) bool {
	for _, x := range cs {
		if x.c == c {
			return true
		}
	}
	return false
}
