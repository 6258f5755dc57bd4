package server

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/diagnostics/dashboard"
	imetrics "github.com/shoal-data/shoal/distributed/internal/metrics"
	"github.com/shoal-data/shoal/distributed/internal/procmem"
	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/internal/logring"
	"github.com/shoal-data/shoal/scheduler"
)

// dashboardLogs is how many of its last log records the scheduler shows
// on its status page.
const dashboardLogs = 200

// streamRuns is how many task runs the dashboard keeps one by one; beyond,
// the task stream shows busy time per second.
const streamRuns = 50_000

// workerPageLogs and workerPageTasks bound a worker's page.
const (
	workerPageLogs  = 1000
	workerPageTasks = 500
)

// serveDashboard starts recording what the dashboard shows and serving
// it, with /metrics, on Config.DashboardListen.
func (s *Server) serveDashboard() error {
	s.dash = dashboard.NewRecorder(streamRuns)
	// The pages' event streams end with the dashboard, before its
	// server shuts down (which waits for them).
	ctx, cancel := context.WithCancel(context.Background())
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{Registry: s.metrics.reg}))
	mux.Handle("/", dashboard.Handler(dashSource{s}, dashboard.WithContext(ctx)))
	hs, err := imetrics.ServeHTTP("dashboard", s.cfg.DashboardListen, mux, s.cfg.HTTPTLS, s.logger)
	if err != nil {
		cancel()
		s.dash = nil
		return err
	}
	s.dashCancel = cancel
	s.dashHTTP = hs
	if s.cfg.DashboardAddress == "" {
		s.cfg.DashboardAddress = hs.Address()
	}
	s.wg.Add(1)
	go s.sampleSystem()
	return nil
}

// DashboardAddress returns the host:port where the dashboard (and
// /metrics) is served, or "" when Config.DashboardListen was not set.
func (s *Server) DashboardAddress() string {
	if s.dashHTTP == nil {
		return ""
	}
	return s.dashHTTP.Address()
}

// Snapshot returns the state of the cluster that the dashboard shows. It
// copies what it needs under the scheduler's lock; the progress and the
// task stream are known only when the dashboard is served.
func (s *Server) Snapshot() *dashboard.Status {
	st := &dashboard.Status{Time: time.Now(), Tasks: map[string]int{}, Workers: []dashboard.Worker{},
		Progress: []dashboard.Progress{}, Logs: []dashboard.LogRecord{}, Computations: []dashboard.Computation{},
		RecentErrors: []dashboard.ErrorRecord{},
		Scheduler:    dashboard.Scheduler{ID: s.id, Address: s.Address(), Started: s.started, Metrics: s.MetricsAddress()}}
	s.mu.Lock()
	st.Scheduler.Clients = len(s.clients)
	counts := s.state.Counts()
	st.Workers = s.dashWorkers()
	s.mu.Unlock()
	for state, n := range counts {
		st.Tasks[state.String()] = n
	}
	if s.dash != nil {
		st.Progress = s.dash.Progress()
		st.StreamNext = s.dash.Count()
		st.Computations = s.dash.Computations()
		st.RecentErrors, st.Erred = s.dash.Errors(5)
	}
	for _, r := range s.ring.Last(dashboardLogs) {
		st.Logs = append(st.Logs, logRecord(r))
	}
	return st
}

func logRecord(r logring.Record) dashboard.LogRecord {
	return dashboard.LogRecord{Time: r.Time, Level: r.Level.String(), Message: r.Message, Attrs: r.Attrs}
}

// dashWorkersFresh is how long the dashboard's description of the
// workers is reused: the pages ask for it several times a second, and
// counting what each holds walks every task.
const dashWorkersFresh = 250 * time.Millisecond

// dashWorkers describes the connected workers, by address. Called with
// s.mu held.
func (s *Server) dashWorkers() []dashboard.Worker {
	now := time.Now()
	if now.Sub(s.dashWorkersAt) < dashWorkersFresh {
		return slices.Clone(s.dashWorkersLast)
	}
	out := s.describeWorkers()
	s.dashWorkersAt, s.dashWorkersLast = now, out
	return slices.Clone(out)
}

// describeWorkers describes the connected workers, by address. Called
// with s.mu held.
func (s *Server) describeWorkers() []dashboard.Worker {
	workers := s.state.Workers()
	held := s.state.HeldCounts()
	out := make([]dashboard.Worker, 0, len(workers))
	for _, w := range workers {
		wc := s.workers[w.Name]
		if wc == nil || w.State == scheduler.WorkerGone {
			continue
		}
		dw := dashboard.Worker{Address: w.Name, State: w.State.String(), Threads: w.Threads,
			MemoryLimit: w.MemoryLimit, Managed: w.Memory.Managed, Unmanaged: max(0, w.Memory.Process-w.Memory.Managed),
			Spilled: w.Memory.Spilled, Processing: w.Processing, InMemory: held[w.Name], LastSeen: wc.lastSeen,
			Metrics: wc.info.MetricsAddress}
		if wc.info.Name != w.Name {
			dw.Name = wc.info.Name
		}
		out = append(out, dw)
	}
	slices.SortFunc(out, func(a, b dashboard.Worker) int { return strings.Compare(a.Address, b.Address) })
	return out
}

// TaskStream returns the task runs recorded after the first since, at
// most limit: the newest when there are more. It is empty when the
// dashboard is not served.
func (s *Server) TaskStream(since uint64, limit int) *dashboard.TaskStream {
	if s.dash == nil {
		return &dashboard.TaskStream{Tasks: []dashboard.TaskRun{}}
	}
	return s.dash.TaskStream(since, limit)
}

// TaskWindow returns the task stream of the last window.
func (s *Server) TaskWindow(window time.Duration, maxBars int) *dashboard.TaskWindow {
	now := time.Now()
	if s.dash == nil {
		return &dashboard.TaskWindow{Start: now.Add(-window), Stop: now, Workers: []dashboard.StreamWorker{},
			Prefixes: []string{}, Runs: []dashboard.TaskRun{}}
	}
	tw := s.dash.TaskWindow(now, window, maxBars)
	s.mu.Lock()
	for i := range tw.Workers {
		if wc := s.workers[tw.Workers[i].Address]; wc != nil {
			tw.Workers[i].Threads = wc.sinfo.Threads
		}
	}
	s.mu.Unlock()
	return tw
}

// listHistory is how many samples of each worker the list of workers
// has: two minutes, for sparklines (a worker's page has them all).
const listHistory = 120

// Workers returns the workers, connected and gone, with their use of
// resources and its last two minutes.
func (s *Server) Workers() *dashboard.Workers { return s.workerList(listHistory, "") }

// workerList returns the workers (only the one of that address or name,
// when only is set) with their last history samples.
func (s *Server) workerList(history int, only string) *dashboard.Workers {
	out := &dashboard.Workers{Time: time.Now(), Workers: []dashboard.WorkerStats{}}
	s.mu.Lock()
	connected := s.dashWorkers()
	type gone struct{ addr, name, reason string }
	var left []gone
	for addr, g := range s.gone {
		if s.workers[addr] == nil {
			left = append(left, gone{addr, g.name, g.reason})
		}
	}
	s.mu.Unlock()
	t := s.tel
	t.mu.Lock()
	defer t.mu.Unlock()
	want := func(addr, name string) bool { return only == "" || only == addr || only == name }
	for _, w := range connected {
		if want(w.Address, w.Name) {
			out.Workers = append(out.Workers, t.workerStats(w, false, history))
		}
	}
	for _, g := range left {
		if !want(g.addr, g.name) {
			continue
		}
		w := dashboard.Worker{Address: g.addr, State: "gone"}
		if g.name != g.addr {
			w.Name = g.name
		}
		ws := t.workerStats(w, true, history)
		ws.Reason = g.reason
		out.Workers = append(out.Workers, ws)
	}
	slices.SortFunc(out.Workers, func(a, b dashboard.WorkerStats) int {
		return cmp.Or(cmp.Compare(btoi(a.Gone), btoi(b.Gone)), strings.Compare(a.Address, b.Address))
	})
	return out
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// workerStats adds a worker's last report to w, and its last history
// samples (all when history <= 0). Called with t.mu held.
func (t *telemetry) workerStats(w dashboard.Worker, gone bool, history int) dashboard.WorkerStats {
	ws := dashboard.WorkerStats{Worker: w, FDs: -1, CPU: -1, Disk: []dashboard.Disk{}, Tasks: map[string]int{},
		Gone: gone, History: []dashboard.WorkerSample{}}
	wt := t.workers[w.Address]
	if wt == nil || wt.stats == nil {
		return ws
	}
	st := wt.stats
	ws.CPU, ws.RSS, ws.NetIn, ws.NetOut, ws.FDs = wt.cpu, st.Rss, wt.netIn, wt.netOut, int(st.Fds)
	for _, d := range st.Disks {
		ws.Disk = append(ws.Disk, dashboard.Disk{Name: d.Name, Path: d.Path, Used: d.Used, Free: d.Free, Size: d.Size})
	}
	for k, v := range st.Tasks {
		ws.Tasks[k] = int(v)
	}
	ws.History = wt.samples()
	if history > 0 && len(ws.History) > history {
		ws.History = ws.History[len(ws.History)-history:]
	}
	if gone && len(ws.History) > 0 {
		last := ws.History[len(ws.History)-1]
		ws.Managed, ws.Spilled = last.Managed, last.Spilled
	}
	return ws
}

// Worker returns the page of one worker: connected or gone.
func (s *Server) Worker(name string) *dashboard.WorkerPage {
	ws := s.workerList(0, name).Workers
	if len(ws) == 0 {
		return nil
	}
	page := &dashboard.WorkerPage{Worker: ws[0]}
	addr := page.Worker.Address
	logs, _ := s.WorkerLogs(workerPageLogs, addr)
	page.Logs = make([]dashboard.LogEntry, 0, len(logs[addr]))
	for _, r := range logs[addr] {
		page.Logs = append(page.Logs, dashboard.LogEntry{LogRecord: wireLog(r), Source: addr})
	}
	page.Tasks = []dashboard.TaskRun{}
	if s.dash != nil {
		page.Tasks = s.dash.WorkerRuns(addr, workerPageTasks)
	}
	return page
}

func wireLog(r *wire.LogRecord) dashboard.LogRecord {
	return dashboard.LogRecord{Time: time.Unix(0, r.TimeUnixNano), Level: slog.Level(r.Level).String(),
		Message: r.Message, Attrs: r.Attrs}
}

// Logs returns the records of the scheduler and the workers that match q,
// oldest first.
func (s *Server) Logs(q dashboard.LogQuery) *dashboard.Logs {
	out := &dashboard.Logs{Records: []dashboard.LogEntry{}, Sources: []string{"scheduler"}}
	match := q.Matches
	var all []dashboard.LogEntry
	if q.Source == "" || q.Source == "scheduler" {
		for _, r := range s.ring.Records() {
			if lr := logRecord(r); match(lr) {
				all = append(all, dashboard.LogEntry{LogRecord: lr, Source: "scheduler"})
			}
		}
	}
	logs, _ := s.WorkerLogs(0)
	names := map[string]string{} // of the workers, by address
	s.mu.Lock()
	for addr := range logs {
		if wc := s.workers[addr]; wc != nil {
			names[addr] = wc.info.Name
		} else if g := s.gone[addr]; g != nil {
			names[addr] = g.name
		}
	}
	s.mu.Unlock()
	for addr, rs := range logs {
		out.Sources = append(out.Sources, addr)
		if q.Source == "scheduler" || q.Source != "" && q.Source != addr && q.Source != names[addr] {
			continue
		}
		for _, r := range rs {
			if lr := wireLog(r); match(lr) {
				all = append(all, dashboard.LogEntry{LogRecord: lr, Source: addr})
			}
		}
	}
	slices.Sort(out.Sources[1:])
	slices.SortStableFunc(all, func(a, b dashboard.LogEntry) int { return a.Time.Compare(b.Time) })
	out.Matched = len(all)
	if q.Limit > 0 && len(all) > q.Limit {
		all = all[len(all)-q.Limit:]
	}
	out.Records = append(out.Records, all...)
	return out
}

// Errors returns the tasks that failed and the failed computations.
func (s *Server) Errors() *dashboard.Errors {
	out := &dashboard.Errors{Errors: []dashboard.ErrorRecord{}, Failed: []dashboard.Computation{}}
	if s.dash == nil {
		return out
	}
	out.Errors, out.Total = s.dash.Errors(0)
	for _, c := range s.dash.Computations() {
		if c.State == "failed" {
			out.Failed = append(out.Failed, c)
		}
	}
	return out
}

// dashSource is the server as the dashboard's Source, whose Profile and
// FineMetrics are not the server's own.
type dashSource struct{ *Server }

// Profile returns the flame graph of the profile windows q selects, and
// the timeline of the prefixes that ran. It does not ask the workers to
// cut their windows: the last seconds come with their next heartbeat.
func (d dashSource) Profile(q dashboard.ProfileQuery) (*dashboard.Profile, error) {
	s := d.Server
	opts := diagnostics.ProfileOptions{Start: q.Start, Stop: q.Stop, Prefixes: q.Prefixes, Workers: q.Workers}
	p, err := s.tel.profiles.Profile(opts)
	if err != nil {
		return nil, err
	}
	out := dashboard.ProfileOf(p, s.tel.profiles)
	start, stop := q.Start, q.Stop
	if stop.IsZero() {
		stop = time.Now()
	}
	if start.IsZero() {
		start = out.Start
		if start.IsZero() || stop.Sub(start) > dashboard.MaxWindow {
			start = stop.Add(-15 * time.Minute)
		}
	}
	if s.dash != nil {
		out.Timeline = s.dash.Timeline(start, stop, 200)
	} else {
		out.Timeline = dashboard.Timeline{Start: start, Prefixes: []string{}, Busy: [][]float64{}}
	}
	return out, nil
}

// ProfileData returns the profile q selects, gzipped, for go tool pprof.
func (d dashSource) ProfileData(q dashboard.ProfileQuery) ([]byte, error) {
	s := d.Server
	p, err := s.tel.profiles.Profile(diagnostics.ProfileOptions{Start: q.Start, Stop: q.Stop, Prefixes: q.Prefixes,
		Workers: q.Workers})
	if err != nil {
		return nil, err
	}
	return encodeProfile(p)
}

// FineMetrics returns the workers' fine metrics, summed over workers.
func (d dashSource) FineMetrics() *dashboard.FineMetrics {
	s := d.Server
	out := &dashboard.FineMetrics{Activities: diagnostics.Activities, Rows: []dashboard.FineMetricRow{}}
	for _, m := range diagnostics.SumFineMetrics(s.tel.fine.Totals()) {
		out.Rows = append(out.Rows, dashboard.FineMetricRow{Prefix: m.Prefix, Activity: m.Activity, Unit: m.Unit,
			Value: m.Value})
	}
	return out
}

// Bandwidth returns the bytes moved between workers and to clients.
func (s *Server) Bandwidth() *dashboard.Bandwidth {
	t := s.tel
	t.mu.Lock()
	defer t.mu.Unlock()
	out := &dashboard.Bandwidth{Workers: []string{}, Pairs: []dashboard.Transfer{}, Prefixes: []dashboard.PrefixTransfer{}}
	seen := map[string]bool{}
	for _, p := range t.pairs {
		out.Pairs = append(out.Pairs, *p)
		for _, w := range []string{p.From, p.To} {
			if !seen[w] {
				seen[w] = true
				out.Workers = append(out.Workers, w)
			}
		}
	}
	for _, p := range t.prefixes {
		out.Prefixes = append(out.Prefixes, *p)
	}
	slices.Sort(out.Workers)
	slices.SortFunc(out.Pairs, func(a, b dashboard.Transfer) int {
		return cmp.Or(strings.Compare(a.From, b.From), strings.Compare(a.To, b.To))
	})
	slices.SortFunc(out.Prefixes, func(a, b dashboard.PrefixTransfer) int { return cmp.Compare(b.Bytes, a.Bytes) })
	return out
}

// Shuffles returns the shuffles of the current and recent computations,
// with what each worker wrote, read and holds of them.
func (s *Server) Shuffles() *dashboard.Shuffles {
	out := &dashboard.Shuffles{Shuffles: []dashboard.Shuffle{}}
	if s.dash == nil {
		return out
	}
	shuffles := s.dash.Shuffles()
	t := s.tel
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, sh := range shuffles {
		byWorker := map[string]*dashboard.ShuffleWorker{}
		get := func(addr string) *dashboard.ShuffleWorker {
			w := byWorker[addr]
			if w == nil {
				w = &dashboard.ShuffleWorker{Address: addr, Free: t.freeDisk[addr]}
				byWorker[addr] = w
			}
			return w
		}
		for _, g := range slices.Concat(sh.SplitGroups, sh.CollectGroups) {
			for addr, io := range t.shuffleIO[g] {
				w := get(addr)
				w.BytesWritten += io.BytesWritten
				w.BytesRead += io.BytesRead
			}
		}
		for addr, n := range t.shuffleDisk[sh.ID] {
			get(addr).Disk = n
		}
		for _, w := range byWorker {
			sh.Workers = append(sh.Workers, *w)
		}
		slices.SortFunc(sh.Workers, func(a, b dashboard.ShuffleWorker) int { return strings.Compare(a.Address, b.Address) })
		out.Shuffles = append(out.Shuffles, sh)
	}
	return out
}

// Groups returns the task groups of the graphs the scheduler knows.
func (s *Server) Groups() *dashboard.Groups {
	if s.dash == nil {
		return &dashboard.Groups{Groups: []dashboard.Group{}, Edges: []dashboard.GroupEdge{}}
	}
	return s.dash.Groups()
}

// sampleSystem samples the scheduler process every second while the
// dashboard is served.
func (s *Server) sampleSystem() {
	defer s.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	lastCPU, lastAt := procmem.CPUSeconds(), time.Now()
	ms := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			cpu := procmem.CPUSeconds()
			metrics.Read(ms)
			smp := dashboard.SystemSample{Time: now, RSS: procmem.RSS(), Goroutines: runtime.NumGoroutine(),
				FDs: procmem.OpenFiles(), Lateness: s.metrics.lateness.Last().Seconds()}
			if ms[0].Value.Kind() == metrics.KindUint64 {
				smp.HeapInUse = int64(ms[0].Value.Uint64())
			}
			if dt := now.Sub(lastAt).Seconds(); dt > 0 && cpu >= 0 && lastCPU >= 0 {
				smp.CPU = 100 * (cpu - lastCPU) / dt
			}
			lastCPU, lastAt = cpu, now
			s.mu.Lock()
			if s.handles > 0 {
				smp.Handle = s.handleTime.Seconds() / float64(s.handles)
			}
			smp.HandleMax, smp.Batches = s.handleMax.Seconds(), s.handles
			s.handles, s.handleTime, s.handleMax = 0, 0, 0
			s.mu.Unlock()
			s.sysMu.Lock()
			if len(s.system) < historySize {
				s.system = append(s.system, smp)
			} else {
				s.system[s.sysNext] = smp
				s.sysNext = (s.sysNext + 1) % historySize
			}
			s.sysMu.Unlock()
		}
	}
}

// System returns the scheduler process's use of resources over the last
// quarter of an hour.
func (s *Server) System() *dashboard.System {
	s.sysMu.Lock()
	defer s.sysMu.Unlock()
	out := &dashboard.System{History: make([]dashboard.SystemSample, 0, len(s.system))}
	out.History = append(out.History, s.system[s.sysNext:]...)
	out.History = append(out.History, s.system[:s.sysNext]...)
	if n := len(out.History); n > 0 {
		out.Now = out.History[n-1]
	}
	return out
}

// closeDashboard stops serving the dashboard.
func (s *Server) closeDashboard() {
	if s.dashHTTP == nil {
		return
	}
	s.dashCancel()
	if err := s.dashHTTP.Close(); err != nil {
		s.logger.Warn("dashboard server did not stop cleanly", "error", err)
	}
}
