package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/diagnostics/dashboard"
	"github.com/shoal-data/shoal/diagnostics/dump"
	"github.com/shoal-data/shoal/internal/dumpstate"
)

// The executor's performance report and dump, and the Source of the
// dashboard's pages they show.

// sampleInterval is how often a report samples the executor's memory.
const sampleInterval = 250 * time.Millisecond

// PerformanceReport runs fn and writes to the file path a performance
// report of what the executor did meanwhile: one HTML file that opens
// offline (it loads nothing) and can be mailed, with the pages of the
// dashboard for the period: a summary (wall time, task runs, bytes
// computed and spilled, where in the program each computation was
// submitted), the task stream (the executor's threads are its rows), the
// progress, the fine metrics of each prefix, the CPU profile as a flame
// graph, the memory over time, the erred tasks with their errors, and
// what the executor and its tasks logged (graph.Logger) at level Info and
// above (the last 10,000 records).
//
// Its size is bounded as that of distributed.Client.PerformanceReport:
// up to 5,000 task runs one by one in the task stream, beyond summed in
// buckets of time (of the last hour of a longer period); the last 1,000
// errors; the profile of the whole period, and of each of the 16
// busiest prefixes alone.
//
// The report is written whether fn fails or not; PerformanceReport
// returns fn's error, joined with the report's if it could not be
// written.
func (e *Executor) PerformanceReport(ctx context.Context, path string, fn func(context.Context) error) error {
	p := dashboard.NewPeriod()
	src := e.newSource(p.Recorder())
	src.since = time.Now()
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return ErrClosed
	}
	e.reports = append(e.reports, p.Recorder())
	e.mu.Unlock()
	p.Start(e.hub, src)
	stop := src.sampleEvery(sampleInterval)
	fnErr := fn(ctx)
	stop()
	e.mu.Lock()
	e.reports = slices.DeleteFunc(e.reports, func(r *dashboard.Recorder) bool { return r == p.Recorder() })
	e.mu.Unlock()
	if e.profiler != nil {
		if err := e.profiler.Flush(ctx); err != nil {
			p.Discard()
			return errors.Join(fnErr, fmt.Errorf("performance report %s: %w", path, err))
		}
	}
	snap := p.Stop(src, 0, fnErr)
	return errors.Join(fnErr, dashboard.SaveReport(path, snap))
}

// DumpClusterState writes the executor's state to the file path, in the
// format of a cluster dump (package diagnostics/dump): the scheduling
// core's tasks, transition log and worker (the executor itself, "local",
// with its fine metrics), its last log records (as the scheduler's), and
// what the dashboard's pages show of it. The executor has no worker state
// machine and no task stream outside of a performance report: the dump
// has none.
func (e *Executor) DumpClusterState(ctx context.Context, path string) error {
	if e.profiler != nil {
		if err := e.profiler.Flush(ctx); err != nil {
			return fmt.Errorf("dump %s: %w", path, err)
		}
	}
	f := &dump.File{Version: dump.Version, Time: time.Now(), Executor: "local"}
	e.mu.Lock()
	f.Scheduler = dumpstate.Scheduler(e.state)
	e.mu.Unlock()
	f.Scheduler.Address, f.Scheduler.ID, f.Scheduler.Started = "in-process", "local", e.started
	src := e.newSource(dashboard.NewRecorder(0))
	f.Scheduler.Logs = src.records(0)
	src.sample(time.Now())
	w := dump.Worker{Address: workerName, Logs: []dashboard.LogRecord{}, Metrics: src.history,
		FineMetrics: e.fine.Totals()}
	f.Workers = []dump.Worker{w}
	f.Dashboard = dashboard.Capture(src, dashboard.CaptureOptions{})
	return dump.Save(path, f)
}

// source is the executor as the dashboard's Source: its task stream,
// progress, computations, errors and groups come from rec (fed with its
// events), its one worker is itself, sampled while a report runs.
type source struct {
	e     *Executor
	rec   *dashboard.Recorder
	since time.Time // the first log record it shows is of then or later

	mu      sync.Mutex
	history []dashboard.WorkerSample
	system  []dashboard.SystemSample
}

func (e *Executor) newSource(rec *dashboard.Recorder) *source { return &source{e: e, rec: rec} }

// sampleEvery samples the executor's memory and the process every d
// until the returned function is called.
func (s *source) sampleEvery(d time.Duration) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		s.sample(time.Now())
		for {
			select {
			case <-done:
				s.sample(time.Now())
				return
			case now := <-t.C:
				s.sample(now)
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

// sample notes the executor's memory and the process's goroutines and
// heap.
func (s *source) sample(now time.Time) {
	m := s.e.Memory()
	s.e.mu.Lock()
	busy := s.e.busy
	s.e.mu.Unlock()
	ms := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(ms)
	sys := dashboard.SystemSample{Time: now, Goroutines: runtime.NumGoroutine(), FDs: -1, CPU: -1}
	if ms[0].Value.Kind() == metrics.KindUint64 {
		sys.HeapInUse = int64(ms[0].Value.Uint64())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.history = append(s.history, dashboard.WorkerSample{Time: now, CPU: -1, Managed: m.Managed, Spilled: m.Spilled,
		Executing: busy})
	s.system = append(s.system, sys)
}

func (s *source) worker() dashboard.Worker {
	m := s.e.Memory()
	s.e.mu.Lock()
	busy := s.e.busy
	s.e.mu.Unlock()
	return dashboard.Worker{Address: workerName, State: "running", Threads: s.e.cfg.threads, MemoryLimit: m.Limit,
		Managed: m.Managed, Spilled: m.Spilled, Processing: busy, InMemory: m.Keys, LastSeen: time.Now()}
}

func (s *source) stats() dashboard.WorkerStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return dashboard.WorkerStats{Worker: s.worker(), CPU: -1, FDs: -1, Disk: []dashboard.Disk{},
		Tasks: map[string]int{}, History: slices.Clone(s.history)}
}

func (s *source) Snapshot() *dashboard.Status {
	e := s.e
	st := &dashboard.Status{Time: time.Now(), Scheduler: dashboard.Scheduler{ID: "local", Address: "in-process",
		Started: e.started}, Workers: []dashboard.Worker{s.worker()}, Tasks: map[string]int{},
		Progress: s.rec.Progress(), Logs: s.records(statusLogs), StreamNext: s.rec.Count(),
		Computations: s.rec.Computations()}
	st.RecentErrors, st.Erred = s.rec.Errors(5)
	e.mu.Lock()
	for state, n := range e.state.Counts() {
		st.Tasks[state.String()] = n
	}
	e.mu.Unlock()
	return st
}

func (s *source) TaskStream(since uint64, limit int) *dashboard.TaskStream {
	return s.rec.TaskStream(since, limit)
}

func (s *source) TaskWindow(window time.Duration, maxBars int) *dashboard.TaskWindow {
	tw := s.rec.TaskWindow(time.Now(), window, maxBars)
	for i := range tw.Workers {
		tw.Workers[i].Threads = 1 // a row is a thread of the executor
	}
	return tw
}

func (s *source) Workers() *dashboard.Workers {
	return &dashboard.Workers{Time: time.Now(), Workers: []dashboard.WorkerStats{s.stats()}}
}

// workerPageRuns is how many task runs the page of the executor shows.
const workerPageRuns = 500

func (s *source) Worker(name string) *dashboard.WorkerPage {
	if name != workerName {
		return nil
	}
	return &dashboard.WorkerPage{Worker: s.stats(), Logs: s.Logs(dashboard.LogQuery{}).Records,
		Tasks: s.rec.TaskStream(0, workerPageRuns).Tasks}
}

func (s *source) System() *dashboard.System {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &dashboard.System{History: slices.Clone(s.system)}
	if n := len(s.system); n > 0 {
		out.Now = s.system[n-1]
	}
	return out
}

func (s *source) Groups() *dashboard.Groups { return s.rec.Groups() }

// statusLogs is how many log records the status shows.
const statusLogs = 20

// records returns the newest n (0: all) of the executor's log records
// since s.since, oldest first.
func (s *source) records(n int) []dashboard.LogRecord {
	out := []dashboard.LogRecord{}
	for _, r := range s.e.ring.Last(n) { // in time order: the newest n since then are among them
		if !r.Time.Before(s.since) {
			out = append(out, dashboard.LogRecord{Time: r.Time, Level: r.Level.String(), Message: r.Message, Attrs: r.Attrs})
		}
	}
	return out
}

// Logs returns the executor's log records, and its tasks', that match q:
// the executor is their one source, "local".
func (s *source) Logs(q dashboard.LogQuery) *dashboard.Logs {
	out := &dashboard.Logs{Records: []dashboard.LogEntry{}, Sources: []string{workerName}}
	if q.Source != "" && q.Source != workerName {
		return out
	}
	for _, r := range s.records(0) {
		if q.Matches(r) {
			out.Records = append(out.Records, dashboard.LogEntry{LogRecord: r, Source: workerName})
		}
	}
	out.Matched = len(out.Records)
	if q.Limit > 0 && len(out.Records) > q.Limit {
		out.Records = out.Records[len(out.Records)-q.Limit:]
	}
	return out
}

func (s *source) Errors() *dashboard.Errors {
	out := &dashboard.Errors{Failed: []dashboard.Computation{}}
	out.Errors, out.Total = s.rec.Errors(0)
	for _, c := range s.rec.Computations() {
		if c.State == "failed" {
			out.Failed = append(out.Failed, c)
		}
	}
	return out
}

func (s *source) Profile(q dashboard.ProfileQuery) (*dashboard.Profile, error) {
	e := s.e
	if e.profiles == nil {
		return nil, diagnostics.ErrNoProfile
	}
	p, err := e.profiles.Profile(diagnostics.ProfileOptions{Start: q.Start, Stop: q.Stop, Prefixes: q.Prefixes,
		Workers: q.Workers})
	if err != nil {
		return nil, err
	}
	out := dashboard.ProfileOf(p, e.profiles)
	stop := q.Stop
	if stop.IsZero() {
		stop = time.Now()
	}
	start := q.Start
	if start.IsZero() {
		start = out.Start
	}
	out.Timeline = s.rec.Timeline(start, stop, 200)
	return out, nil
}

func (s *source) ProfileData(q dashboard.ProfileQuery) ([]byte, error) {
	e := s.e
	if e.profiles == nil {
		return nil, diagnostics.ErrNoProfile
	}
	p, err := e.profiles.Profile(diagnostics.ProfileOptions{Start: q.Start, Stop: q.Stop, Prefixes: q.Prefixes,
		Workers: q.Workers})
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		return nil, fmt.Errorf("encode the profile: %w", err)
	}
	return buf.Bytes(), nil
}

func (s *source) FineMetrics() *dashboard.FineMetrics {
	e := s.e
	e.mu.Lock()
	e.accountIdle(time.Now())
	e.foldTimes()
	e.mu.Unlock()
	out := &dashboard.FineMetrics{Activities: diagnostics.Activities, Rows: []dashboard.FineMetricRow{}}
	for _, m := range diagnostics.SumFineMetrics(e.fine.Totals()) {
		out.Rows = append(out.Rows, dashboard.FineMetricRow{Prefix: m.Prefix, Activity: m.Activity, Unit: m.Unit,
			Value: m.Value})
	}
	return out
}

// Bandwidth is empty: nothing moves between the executor's threads.
func (s *source) Bandwidth() *dashboard.Bandwidth {
	return &dashboard.Bandwidth{Workers: []string{}, Pairs: []dashboard.Transfer{}, Prefixes: []dashboard.PrefixTransfer{}}
}

func (s *source) Shuffles() *dashboard.Shuffles {
	out := &dashboard.Shuffles{Shuffles: s.rec.Shuffles()}
	if out.Shuffles == nil {
		out.Shuffles = []dashboard.Shuffle{}
	}
	return out
}

var _ dashboard.Source = (*source)(nil)
