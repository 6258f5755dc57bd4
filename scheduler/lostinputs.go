package scheduler

import (
	"errors"
	"slices"

	"github.com/shoal-data/shoal/graph"
)

// lostInputs handles the failure of t with a graph.LostInputsError: what
// some of its dependencies left beside their values (files on a worker)
// is gone. Those dependencies are computed again and t waits for them, up
// to Config.AllowedFailures times; it reports false, for a plain failure,
// when err is no such error, when it names keys that are not dependencies
// of t computed by a task, or when t failed so too often.
func (s *State) lostInputs(t *task, err error) bool {
	var le *graph.LostInputsError
	if !errors.As(err, &le) || len(le.Keys) == 0 || int(t.lostInputs) >= s.cfg.AllowedFailures {
		return false
	}
	lost := make([]*task, 0, len(le.Keys))
	for _, k := range le.Keys {
		i := slices.IndexFunc(t.deps, func(d *task) bool { return d.key == k })
		if i < 0 || t.deps[i].external {
			return false // not a dependency, or one that cannot be computed
		}
		lost = append(lost, t.deps[i])
	}
	t.lostInputs++
	s.setState(t, Waiting)
	t.nWaitingOn = int32(s.countMissing(t))
	for _, d := range lost {
		if d.state != Memory {
			continue // already computed again, for another of its dependents
		}
		s.emitRelease(d.key, d.id, d.whoNames())
		for _, w := range d.who {
			w.nbytes -= d.nbytes
		}
		d.who = d.who[:0]
		s.setState(d, Released) // t, waiting, now waits for it
		s.recommend(d, Waiting)
	}
	if t.nWaitingOn == 0 {
		s.makeReady(t)
	}
	return true
}
