package scheduler

import (
	"fmt"
	"slices"

	"github.com/shoal-data/shoal/graph"
)

// transition moves t towards the state to, if that still makes sense:
// recommendations are queued, and the task may have moved on since.
// Processing as a target means "ready to run": placed on a worker, or
// queued when none has a free slot.
func (s *State) transition(t *task, to TaskState) {
	from := t.state
	if from == Forgotten || (from == to && to != Waiting) {
		return
	}
	switch to {
	case Waiting:
		switch from {
		case Released:
			if t.waiters == 0 && len(t.clients) == 0 {
				s.checkForget(t) // no longer needed since recommended
				return
			}
			s.toWaiting(t)
		case Queued:
			// A dependency was lost: wait for it again.
			if s.countMissing(t) == 0 {
				return
			}
			s.dequeue(t)
			t.nWaitingOn = int32(s.countMissing(t))
			s.setState(t, Waiting)
			if t.nWaitingOn == 0 {
				s.makeReady(t)
			}
		case Cancelled:
			t.resubmit = true
		}
	case Processing:
		if from == Waiting && t.nWaitingOn == 0 {
			s.makeReady(t)
		}
	case Released:
		if from == Memory {
			s.releaseMemory(t)
		}
	case Cancelled:
		switch from {
		case Waiting, Queued:
			if from == Queued {
				s.dequeue(t)
			}
			s.setState(t, Cancelled)
			s.setState(t, Released)
			s.checkForget(t)
		case Processing:
			s.setState(t, Cancelled)
			s.emit(&CancelRun{Key: t.key, Worker: t.proc.info.Name})
		}
	case Erred:
		switch from {
		case Released, Waiting, Queued, Processing:
			s.toErred(t)
		}
	case Forgotten:
		if (from == Released || from == Erred) && t.nDependents == 0 && len(t.clients) == 0 && t.waiters == 0 {
			s.forget(t)
		}
	default:
		panic(fmt.Sprintf("scheduler: no transition of %q from %s to %s", t.key, from, to))
	}
}

// countMissing returns how many dependencies of t are not in memory.
func (s *State) countMissing(t *task) int {
	n := 0
	for _, d := range t.deps {
		if d.state != Memory {
			n++
		}
	}
	return n
}

func (s *State) toWaiting(t *task) {
	for _, d := range t.deps {
		if d.state == Erred {
			t.failure = d.failure
			s.toErred(t)
			return
		}
	}
	t.nWaitingOn = 0
	for _, d := range t.deps {
		switch d.state {
		case Memory:
			continue
		case Released:
			s.recommend(d, Waiting)
		case Cancelled:
			d.resubmit = true
		}
		t.nWaitingOn++
	}
	s.setState(t, Waiting)
	if t.nWaitingOn == 0 {
		s.makeReady(t)
	}
}

func (s *State) makeReady(t *task) {
	if !s.deferStart && (len(s.queue) == 0 || t.prio.less(s.queue[0].prio)) {
		if w := s.decideWorker(t); w != nil {
			s.startOn(t, w)
			return
		}
	}
	if s.cfg.FailUnrunnable && !s.couldRun(t) {
		t.failure = &failure{root: t.key, rootOp: graph.DisplayOp(t.spec), err: s.unrunnableError(t)}
		s.toErred(t)
		return
	}
	s.enqueue(t)
	s.needFill = true
}

func (s *State) startOn(t *task, w *worker) {
	t.proc = w
	t.prefer = nil
	w.processing++
	w.procs[t] = struct{}{}
	for r, n := range t.spec.Resources {
		w.used[r] += n
	}
	s.setState(t, Processing)
	if len(s.wlist) > 1 {
		for _, d := range t.deps {
			if !d.holds(w) {
				// Counted as held from now on, so that releasing the
				// value reaches the copy too.
				s.emit(&Fetch{Key: d.key, From: d.whoNames(), To: w.info.Name, Size: d.nbytes})
				d.who = append(d.who, w)
				w.nbytes += d.nbytes
			}
		}
	}
	r := s.runs.new()
	r.Worker, r.Task, r.ID, r.DepIDs, r.Client = w.info.Name, t.spec, t.id, t.depIDs, t.origin
	s.emit(r)
}

func (s *State) releaseMemory(t *task) {
	if len(t.who) > 0 {
		s.emitRelease(t.key, t.id, t.whoNames())
	}
	for _, w := range t.who {
		w.nbytes -= t.nbytes
	}
	t.who = t.who[:0]
	s.setState(t, Released)
	s.checkForget(t)
}

func (s *State) toErred(t *task) {
	if t.state == Queued {
		s.dequeue(t)
	}
	if t.state == Processing && t.proc != nil {
		s.freeSlot(t, t.proc)
	}
	if t.failure == nil {
		t.failure = &failure{root: t.key, rootOp: graph.DisplayOp(t.spec), err: fmt.Errorf("failed")}
	}
	s.setState(t, Erred)
	if len(t.clients) > 0 {
		te := t.taskError()
		for _, c := range t.clients {
			s.emit(&ReportError{Client: c.c.id, Key: t.key, Index: int(c.idx), Err: te})
		}
	}
	for _, d := range t.dependents {
		switch d.state {
		case Released, Waiting, Queued:
			d.failure = t.failure
			s.recommend(d, Erred)
		}
	}
	s.checkNeeded(t)
}

func (s *State) forget(t *task) {
	s.setState(t, Forgotten)
	delete(s.tasks, t.key)
	s.byID[t.id] = nil
	s.freeIDs = append(s.freeIDs, t.id)
	for _, d := range t.deps {
		d.nDependents--
		if len(d.dependents) > 16 && int(d.nDependents) < len(d.dependents)/2 {
			d.dependents = slices.DeleteFunc(d.dependents, func(x *task) bool { return x.state == Forgotten })
		}
		s.checkForget(d)
	}
}

// setState changes t's state and keeps the counts that depend on it: the
// waiters of its dependencies and the missing inputs of its dependents.
func (s *State) setState(t *task, to TaskState) {
	from := t.state
	if from.needsDeps() != to.needsDeps() {
		if to.needsDeps() {
			for _, d := range t.deps {
				d.waiters++
			}
		} else {
			for _, d := range t.deps {
				d.waiters--
				if d.waiters == 0 {
					s.checkNeeded(d)
				}
			}
		}
	}
	if from == Memory && to != Memory {
		for _, d := range t.dependents {
			switch d.state {
			case Waiting:
				d.nWaitingOn++
			case Queued:
				s.recommend(d, Waiting)
			case Processing:
				// Its worker may not have the input: stop it, and run it
				// again unless it finishes after all.
				d.resubmit = true
				s.recommend(d, Cancelled)
			}
		}
	}
	if to == Memory {
		for _, d := range t.dependents {
			if d.state == Waiting {
				d.nWaitingOn--
				if d.nWaitingOn == 0 {
					s.recommend(d, Processing)
				}
			}
		}
	}
	s.counts[from]--
	s.counts[to]++
	t.state = to
	s.log.add(logEntry{key: t.key, from: from, to: to, stimulus: s.stim.id, cause: s.stim.kind,
		seq: s.stim.seq, time: s.nowNanos})
}
