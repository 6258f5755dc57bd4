package server

import (
	"context"
	"sync"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/diagnostics/alert"
	"github.com/shoal-data/shoal/diagnostics/dashboard"
	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/graph"
)

// The scheduler's alerts: the rules of package diagnostics/alert, fed
// with the workers' heartbeats, the tasks they finish, the shuffles of
// the graphs submitted and the passing of time. What the rules decide is
// published as events, logged at WARN, counted in Prometheus series and
// shown on the dashboard.

type alerts struct {
	mu sync.Mutex
	m  *alert.Machine
}

// alertConfig fills in what the scheduler's own settings imply: a worker
// is late when it missed a few heartbeats, well before it is removed.
func alertConfig(cfg Config) alert.Config {
	c := cfg.Alerts
	if c.HeartbeatLate == 0 {
		c.HeartbeatLate = min(5*cfg.HeartbeatInterval, cfg.HeartbeatTimeout/2)
	}
	return c
}

// alert hands inputs to the rules and carries out what they decide.
func (s *Server) alert(now time.Time, inputs ...alert.Input) {
	if len(inputs) == 0 {
		return
	}
	a := &s.alerts
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, al := range a.m.Handle(now, inputs...) {
		if al.Active() {
			s.metrics.alerts.WithLabelValues(al.Name).Inc()
		}
		alert.Log(s.logger, &al)
		s.hub.Publish(alert.Event(now, &al))
	}
}

// Alerts returns the alerts raised and not resolved, oldest first, and
// the last ones resolved.
func (s *Server) Alerts() (active, recent []diagnostics.Alert) {
	s.alerts.mu.Lock()
	defer s.alerts.mu.Unlock()
	return s.alerts.m.Active(), s.alerts.m.Recent()
}

// alertReport is what a worker's heartbeat tells the rules. Called with
// s.mu held.
func alertReport(wc *workerConn, b *wire.WorkerBatch) *alert.WorkerReport {
	r := &alert.WorkerReport{Worker: wc.addr, MemoryLimit: wc.info.MemoryLimit, Latency: wc.latency}
	if m := b.Memory; m != nil {
		r.Managed, r.Process = m.Managed, m.Process
	}
	for _, fm := range b.Metrics {
		if fm.Activity == diagnostics.ActivitySpillWrite && fm.Unit == diagnostics.UnitBytes {
			r.SpillWrite += int64(fm.Value)
		}
	}
	st := b.Stats
	if st == nil {
		return r
	}
	r.Disks = make([]alert.Disk, len(st.Disks))
	for i, d := range st.Disks {
		r.Disks[i] = alert.Disk{Name: d.Name, Path: d.Path, Free: d.Free, Size: d.Size}
		// Shuffle files are in the scratch directory: the ops'.
		if len(st.Shuffles) > 0 && (d.Name == "scratch" || len(st.Disks) == 1) {
			r.Disks[i].Shuffles = make(map[string]int64, len(st.Shuffles))
			for _, sd := range st.Shuffles {
				r.Disks[i].Shuffles[sd.Id] += sd.Bytes
			}
		}
	}
	for _, rt := range st.Running {
		r.Running = append(r.Running, alert.Running{Key: graph.Key(rt.Key), Start: time.Unix(0, rt.StartUnixNano)})
	}
	return r
}

// alertEnded is what a task a worker finished tells the rules, or nil
// for a task that did not run to its end.
func alertEnded(worker string, d *wire.TaskDone) *alert.TaskEnded {
	if d.Error.Find(wire.Error_MISSING_DATA) != nil || d.Error.Find(wire.Error_CANCELED) != nil {
		return nil
	}
	return &alert.TaskEnded{Key: graph.Key(d.Key), Worker: worker, Duration: time.Duration(d.DurationNanos),
		Failed: d.Error != nil, Bytes: d.Size, Read: d.ReadBytes}
}

// alertEvents tells the rules of the computations that ended: a
// subscriber of the server's events.
func (s *Server) alertEvents(evs []diagnostics.Event) {
	var in []alert.Input
	for i := range evs {
		if evs[i].Kind == diagnostics.ComputeFinished {
			in = append(in, &alert.ComputationEnded{Computation: evs[i].Compute})
		}
	}
	s.alert(time.Now(), in...)
}

func (x *service) Alerts(context.Context, *wire.InfoRequest) (*wire.AlertsReply, error) {
	active, recent := x.s.Alerts()
	rep := &wire.AlertsReply{}
	for i := range active {
		rep.Active = append(rep.Active, wire.EncodeAlert(&active[i]))
	}
	for i := range recent {
		rep.Recent = append(rep.Recent, wire.EncodeAlert(&recent[i]))
	}
	return rep, nil
}

var _ dashboard.AlertSource = dashSource{}

// Alerts returns the alerts for the dashboard.
func (d dashSource) Alerts() *dashboard.Alerts {
	active, recent := d.Server.Alerts()
	return &dashboard.Alerts{Active: active, Recent: recent}
}
