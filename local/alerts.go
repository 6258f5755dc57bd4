package local

import (
	"context"
	"sync"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/diagnostics/alert"
	"github.com/shoal-data/shoal/graph"
)

// The executor's alerts: the rules of package diagnostics/alert that one
// process can apply to itself, straggler tasks, skewed shuffle partitions
// and heavy spilling. What they need is noted under e.mu as it happens, at
// the cost of an append: tasks that ended, shuffles submitted, bytes
// spilled, computations that ended. The rules take it in batches, under a
// lock of their own: when a slot runs out of tasks, every alertBatch
// tasks, and at each profile window (every 5 s while profiling, which is
// when a straggler is noticed while nothing else ends).

// alertBatch is how many ended tasks wait before the rules take them.
const alertBatch = 1024

type alerts struct {
	reads *alert.Reads // the tasks' meter: counts what each read, for the skew rule

	// What happened since the last batch; under Executor.mu.
	shuffles []*alert.ShuffleStarted
	ended    []alert.TaskEnded
	comps    []uint64
	spilled  int64

	mu sync.Mutex // guards m; taken without Executor.mu
	m  *alert.Machine
}

// localAlertConfig turns off the rules that do not apply in one process:
// nothing sends heartbeats.
func localAlertConfig(c alert.Config) alert.Config {
	c.Off = append(c.Off, alert.WorkerSilent)
	return c
}

// taskEnded notes a task that ran to its end (or failed). Called with
// e.mu held.
func (e *Executor) taskEnded(k graph.Key, d time.Duration, size int64, failed bool) {
	e.alerts.ended = append(e.alerts.ended, alert.TaskEnded{Key: k, Worker: workerName, Duration: d,
		Failed: failed, Bytes: size, Read: e.alerts.reads.Take(k)})
}

// alertInputs takes what happened since the last batch, with what the
// slots run now. Called with e.mu held.
func (e *Executor) alertInputs() []alert.Input {
	a := &e.alerts
	in := make([]alert.Input, 0, len(a.shuffles)+len(a.ended)+len(a.comps)+1)
	for _, s := range a.shuffles {
		in = append(in, s)
	}
	r := &alert.WorkerReport{Worker: workerName, SpillWrite: a.spilled}
	for _, s := range e.slots {
		if s.running != "" {
			r.Running = append(r.Running, alert.Running{Key: s.running, Start: s.start})
		}
	}
	in = append(in, r)
	ended := a.ended
	for i := range ended {
		in = append(in, &ended[i])
	}
	for _, c := range a.comps {
		in = append(in, &alert.ComputationEnded{Computation: c})
	}
	a.shuffles, a.ended, a.comps, a.spilled = nil, nil, nil, 0
	return in
}

// raiseAlerts hands inputs to the rules and carries out what they
// decide: a log record (WARN when raised) and an event. Called without
// e.mu.
func (e *Executor) raiseAlerts(now time.Time, in ...alert.Input) {
	a := &e.alerts
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, al := range a.m.Handle(now, in...) {
		alert.Log(e.logger, &al)
		e.hub.Publish(alert.Event(now, &al))
	}
}

// Alerts returns the alerts raised and not resolved, oldest first, and
// the last ones resolved: tasks that run far longer than the others of
// their prefix, shuffle partitions far larger than the others of their
// shuffle, heavy spilling (see package diagnostics/alert, and
// WithAlerts). They are logged (at WARN when raised) and published as
// AlertRaised and AlertResolved events.
func (e *Executor) Alerts(ctx context.Context) (active, recent []diagnostics.Alert, err error) {
	e.mu.Lock()
	in := e.alertInputs()
	e.mu.Unlock()
	e.raiseAlerts(time.Now(), append(in, &alert.Tick{})...)
	e.alerts.mu.Lock()
	defer e.alerts.mu.Unlock()
	return e.alerts.m.Active(), e.alerts.m.Recent(), nil
}

var _ diagnostics.AlertSource = (*Executor)(nil)
