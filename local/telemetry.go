package local

import (
	"context"
	"strconv"
	"time"

	"github.com/google/pprof/profile"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/diagnostics/alert"
)

// The executor's CPU profile and fine performance metrics.

// startProfiler starts sampling the CPU of the executor's tasks, unless
// told not to.
func (e *Executor) startProfiler() {
	if e.cfg.noProfile {
		return
	}
	e.profiles = diagnostics.NewProfileStore(0)
	e.profiler = diagnostics.StartProfiler(diagnostics.ProfilerOptions{Window: e.cfg.profileWindow,
		Worker: workerName, Logger: e.logger, OnWindow: e.profileWindow})
}

// profileWindow keeps a window of CPU samples and counts its CPU time in
// the fine metrics. It runs on the sampler's goroutine.
func (e *Executor) profileWindow(w *diagnostics.ProfileWindow) {
	e.profiles.Add(w)
	for prefix, sec := range diagnostics.CPUByPrefix(w.Profile) {
		e.fine.Add(workerName, prefix, diagnostics.ActivityCPU, diagnostics.UnitSeconds, sec)
	}
	e.mu.Lock()
	e.publishMetrics()
	in := e.alertInputs()
	e.mu.Unlock()
	e.raiseAlerts(time.Now(), append(in, &alert.Tick{})...)
}

// taskTimes adds up the times of a prefix's tasks until they go into the
// fine metrics: the task's path stays clear of their maps and lock.
type taskTimes struct {
	queued, compute time.Duration
}

// addTimes counts a task's time queued and computing. Called with e.mu
// held.
func (e *Executor) addTimes(prefix string, queued, compute time.Duration) {
	tt := e.times[prefix]
	if tt == nil {
		if e.times == nil {
			e.times = map[string]*taskTimes{}
		}
		tt = &taskTimes{}
		e.times[prefix] = tt
	}
	tt.queued += queued
	tt.compute += compute
}

// foldTimes adds the tasks' times into the fine metrics. Called with e.mu
// held.
func (e *Executor) foldTimes() {
	for prefix, tt := range e.times {
		e.fine.Add(workerName, prefix, diagnostics.ActivityQueued, diagnostics.UnitSeconds, tt.queued.Seconds())
		e.fine.Add(workerName, prefix, diagnostics.ActivityCompute, diagnostics.UnitSeconds, tt.compute.Seconds())
	}
	clear(e.times)
	e.fine.Add(workerName, "", diagnostics.ActivityIdle, diagnostics.UnitSeconds, e.idleTime.Seconds())
	e.idleTime = 0
}

// publishMetrics publishes the fine metrics added since the last call.
// Called with e.mu held.
func (e *Executor) publishMetrics() {
	if !e.hub.Active() {
		return
	}
	e.foldTimes()
	if ms := e.fine.Drain(); len(ms) > 0 {
		e.hub.Publish(diagnostics.Event{Kind: diagnostics.Metrics, Worker: workerName, Metrics: ms})
	}
}

// Profile returns the CPU profile of the executor's tasks in the windows
// opts selects, one profile merged from them that go tool pprof opens
// (write it with its Write method). Each sample carries the labels of
// its task: prefix, key, computation, and worker "local"; samples of no
// task (the garbage collector, the runtime) have none. The windows are
// 5 seconds long (WithProfileWindow); Profile cuts the current one first,
// so the samples until the call are in. It fails with
// diagnostics.ErrNoProfile when profiling is off (WithProfiling).
func (e *Executor) Profile(ctx context.Context, opts diagnostics.ProfileOptions) (*profile.Profile, error) {
	if e.profiler == nil {
		return nil, diagnostics.ErrNoProfile
	}
	if err := e.profiler.Flush(ctx); err != nil {
		return nil, err
	}
	return e.profiles.Profile(opts)
}

// FineMetrics returns where the time of the executor's tasks went since
// it started, per task prefix and activity (see diagnostics.Activities):
// their compute time, CPU time (when profiling), time queued for a
// thread, spilling and reading back, encoding and decoding, what the
// tasks reported themselves (graph.AddMetric), and the threads' idle time
// while other threads ran tasks. Worker is "local".
func (e *Executor) FineMetrics(ctx context.Context) ([]diagnostics.FineMetric, error) {
	if e.profiler != nil {
		if err := e.profiler.Flush(ctx); err != nil {
			return nil, err
		}
	}
	e.mu.Lock()
	e.accountIdle(time.Now())
	e.foldTimes()
	e.mu.Unlock()
	return e.fine.Totals(), nil
}

// accountIdle adds the idle thread time since the last call, when some
// thread ran a task or some task waited meanwhile. Called with e.mu held,
// before the number of busy slots changes.
func (e *Executor) accountIdle(now time.Time) {
	if e.busy > 0 || e.readyHead < len(e.ready) {
		if idle := len(e.slots) - e.busy; idle > 0 {
			e.idleTime += time.Duration(idle) * now.Sub(e.idleMark)
		}
	}
	e.idleMark = now
}

// computationOf names the computation of a scheduler client. Called with
// e.mu held.
func (e *Executor) computationOf(client string) string {
	if c := e.clients[client]; c != nil {
		if c.name == "" {
			c.name = strconv.FormatUint(c.id, 10)
		}
		return c.name
	}
	return ""
}

var (
	_ diagnostics.ProfileSource     = (*Executor)(nil)
	_ diagnostics.FineMetricsSource = (*Executor)(nil)
)
