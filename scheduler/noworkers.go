package scheduler

import (
	"fmt"
	"strings"
	"time"

	"github.com/shoal-data/shoal/graph"
)

// maxGone bounds the removed workers remembered for NoWorkersError.
const maxGone = 8

// goneWorker is a worker that was removed, and why.
type goneWorker struct{ name, reason string }

// NoWorkersError is the cause of a task that waited for a worker while
// there was none for Config.NoWorkersTimeout.
type NoWorkersError struct {
	Key     graph.Key
	Timeout time.Duration
	// Workers are the last workers that left, oldest first, and Causes
	// why each was removed (an exit code, a signal, the memory limit, a
	// lost connection); empty when no worker ever joined.
	Workers []string
	Causes  []string
}

func (e *NoWorkersError) Error() string {
	msg := fmt.Sprintf("task %q waited for a worker, but there has been none for %v", e.Key, e.Timeout)
	if len(e.Workers) == 0 {
		return msg + " (no worker ever joined)"
	}
	parts := make([]string, len(e.Workers))
	for i, w := range e.Workers {
		parts[i] = w
		if i < len(e.Causes) && e.Causes[i] != "" {
			parts[i] += " (" + e.Causes[i] + ")"
		}
	}
	return msg + "; the last workers left: " + strings.Join(parts, ", ")
}

// checkNoWorkers fails the queued tasks when there has been no worker for
// Config.NoWorkersTimeout while they waited.
func (s *State) checkNoWorkers() {
	if s.cfg.NoWorkersTimeout <= 0 {
		return
	}
	if len(s.wlist) > 0 || len(s.queue) == 0 && len(s.constrained) == 0 {
		s.noWorkersSince = time.Time{}
		return
	}
	if s.noWorkersSince.IsZero() {
		s.noWorkersSince = s.now
		return
	}
	if s.now.Sub(s.noWorkersSince) < s.cfg.NoWorkersTimeout {
		return
	}
	s.noWorkersSince = time.Time{}
	var workers, causes []string
	for _, g := range s.gone {
		workers = append(workers, g.name)
		causes = append(causes, g.reason)
	}
	waiting := append(append([]*task(nil), s.queue...), s.constrained...)
	sortByPriority(waiting)
	for _, t := range waiting {
		t.failure = &failure{root: t.key, rootOp: graph.DisplayOp(t.spec),
			err: &NoWorkersError{Key: t.key, Timeout: s.cfg.NoWorkersTimeout, Workers: workers, Causes: causes}}
		s.recommend(t, Erred)
	}
	s.drain()
}

// The scheduler's errors keep their type when they reach a client in
// another process (see graph.RegisterError).
func init() {
	graph.RegisterError[NoWorkersError]("scheduler.NoWorkersError")
	graph.RegisterError[UnrunnableError]("scheduler.UnrunnableError")
}
