package scheduler

// balance moves tasks waiting on busy workers to workers with idle
// threads (Config.Steal): when nothing is queued, each worker with a free
// thread takes the task that would run last on the worker with the most
// tasks waiting, if computing it takes longer than moving its inputs.
func (s *State) balance() {
	if len(s.queue) > 0 || len(s.constrained) > 0 || len(s.wlist) < 2 {
		return
	}
	for _, idle := range s.wlist {
		for idle.state == WorkerRunning && idle.processing+idle.incoming < idle.info.Threads {
			t, from := s.stealCandidate(idle)
			if t == nil {
				break
			}
			t.stealTo = idle
			idle.incoming++
			from.outgoing++
			s.emit(&CancelRun{Key: t.key, Worker: from.info.Name, Steal: true})
		}
	}
}

// stealCandidate picks a task to move to idle, and the worker it waits on.
func (s *State) stealCandidate(idle *worker) (*task, *worker) {
	var from *worker
	most := 0
	for _, w := range s.wlist {
		waiting := w.processing - w.outgoing - w.info.Threads
		if w != idle && waiting > most {
			from, most = w, waiting
		}
	}
	if from == nil {
		return nil, nil
	}
	var best *task
	for t := range from.procs {
		if t.stealTo != nil || t.state != Processing || len(t.spec.Resources) > 0 || !s.allowed(t, idle) ||
			!s.worthMoving(t, idle) {
			continue
		}
		// The task that would run last there: the lowest priority.
		if best == nil || best.prio.less(t.prio) || (best.prio == t.prio && t.key > best.key) {
			best = t
		}
	}
	return best, from
}

// worthMoving reports whether computing t takes longer than twice moving
// its inputs to w.
func (s *State) worthMoving(t *task, w *worker) bool {
	var bytes int64
	for _, d := range t.deps {
		if !d.holds(w) {
			bytes += d.nbytes
		}
	}
	est, ok := s.durations[t.key.Prefix()]
	if !ok {
		return true
	}
	return est > 2*(float64(bytes)/s.cfg.StealBandwidth+0.001)
}
