package server

import (
	"slices"
	"strings"
	"time"

	"github.com/shoal-data/shoal/distributed/dashboard"
	"github.com/shoal-data/shoal/distributed/internal/metrics"
	"github.com/shoal-data/shoal/scheduler"
)

// dashboardLogs is how many of its last log records the scheduler shows
// on its dashboard.
const dashboardLogs = 200

// serveDashboard starts recording the task stream and serving the
// dashboard on Config.DashboardListen.
func (s *Server) serveDashboard() error {
	s.dash = dashboard.NewRecorder(0)
	sub := s.hub.Subscribe(s.dash.Record)
	hs, err := metrics.ServeHTTP("dashboard", s.cfg.DashboardListen, dashboard.Handler(s), s.logger)
	if err != nil {
		sub.Close()
		return err
	}
	s.subs = append(s.subs, sub)
	s.dashHTTP = hs
	if s.cfg.DashboardAddress == "" {
		s.cfg.DashboardAddress = hs.Address()
	}
	return nil
}

// DashboardAddress returns the host:port where the dashboard is served,
// or "" when Config.DashboardListen was not set.
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
	type conn struct {
		name, metrics string
		seen          time.Time
	}
	st := &dashboard.Status{Time: time.Now(), Tasks: map[string]int{}, Workers: []dashboard.Worker{},
		Progress: []dashboard.Progress{}, Logs: []dashboard.LogRecord{},
		Scheduler: dashboard.Scheduler{ID: s.id, Address: s.Address(), Started: s.started, Metrics: s.MetricsAddress()}}
	s.mu.Lock()
	st.Scheduler.Clients = len(s.clients)
	counts := s.state.Counts()
	workers := s.state.Workers()
	held := s.state.HeldCounts()
	conns := make([]conn, len(workers))
	for i, w := range workers {
		if wc := s.workers[w.Name]; wc != nil {
			conns[i] = conn{name: wc.info.Name, metrics: wc.info.MetricsAddress, seen: wc.lastSeen}
		} else {
			workers[i].State = scheduler.WorkerGone
		}
	}
	s.mu.Unlock()

	for state, n := range counts {
		st.Tasks[state.String()] = n
	}
	for i, w := range workers {
		if w.State == scheduler.WorkerGone {
			continue
		}
		c := conns[i]
		dw := dashboard.Worker{Address: w.Name, State: w.State.String(), Threads: w.Threads,
			MemoryLimit: w.MemoryLimit, Managed: w.Memory.Managed, Unmanaged: max(0, w.Memory.Process-w.Memory.Managed),
			Spilled: w.Memory.Spilled, Processing: w.Processing, InMemory: held[w.Name], LastSeen: c.seen,
			Metrics: c.metrics}
		if c.name != w.Name {
			dw.Name = c.name
		}
		st.Workers = append(st.Workers, dw)
	}
	slices.SortFunc(st.Workers, func(a, b dashboard.Worker) int { return strings.Compare(a.Address, b.Address) })
	if s.dash != nil {
		st.Progress = s.dash.Progress()
		st.StreamNext = s.dash.Count()
	}
	for _, r := range s.ring.Last(dashboardLogs) {
		st.Logs = append(st.Logs, dashboard.LogRecord{Time: r.Time, Level: r.Level.String(), Message: r.Message,
			Attrs: r.Attrs})
	}
	return st
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

// closeDashboard stops serving the dashboard.
func (s *Server) closeDashboard() {
	if s.dashHTTP == nil {
		return
	}
	if err := s.dashHTTP.Close(); err != nil {
		s.logger.Warn("dashboard server did not stop cleanly", "error", err)
	}
}
