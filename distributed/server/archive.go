package server

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/shoal-data/shoal/diagnostics/archive"
	"github.com/shoal-data/shoal/distributed/internal/procmem"
	"github.com/shoal-data/shoal/distributed/wire"
)

// The scheduler feeds the archive (Config.Archive): its own logs through
// its logger, the workers' logs and output as they arrive, its events
// through the hub, and samples of itself and of the workers' last reports.

// openArchive opens the archive of cfg, if it has one. The archive's
// sampler calls the server stored in self, once there is one.
func openArchive(cfg Config, id string) (*archive.Writer, *atomic.Pointer[Server], error) {
	if cfg.Archive == "" {
		return nil, nil, nil
	}
	self := &atomic.Pointer[Server]{}
	opts := append([]archive.Option{archive.WithCluster(id), archive.WithLogger(cfg.Logger)}, cfg.ArchiveOptions...)
	opts = append(opts, archive.WithSampler(func(now time.Time) []archive.Sample {
		if s := self.Load(); s != nil {
			return s.archiveSamples(now)
		}
		return nil
	}))
	w, err := archive.Open(cfg.Archive, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("scheduler: %w", err)
	}
	return w, self, nil
}

// ArchiveDir returns the directory of the scheduler's archive, or "" when
// it keeps none (Config.Archive).
func (s *Server) ArchiveDir() string {
	if s.archive == nil {
		return ""
	}
	return s.archive.Dir()
}

// closeArchive writes what the archive holds and stops it.
func (s *Server) closeArchive() error {
	if s.archive == nil {
		return nil
	}
	if err := s.archive.Close(); err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}
	return nil
}

// archiveLogs adds log records of a worker to the archive.
func (s *Server) archiveLogs(addr string, pid int32, recs []*wire.LogRecord) {
	if s.archive == nil || len(recs) == 0 {
		return
	}
	rows := make([]archive.Log, len(recs))
	for i, r := range recs {
		rows[i] = archive.NewLog(time.Unix(0, r.TimeUnixNano), slog.Level(r.Level), r.Message, r.Attrs)
		rows[i].Process, rows[i].Worker, rows[i].Pid = archive.ProcessWorker, addr, int64(pid)
	}
	s.archive.AddLogs(rows...)
}

// archiveTopic adds an event a client logged under a topic to the
// archive.
func (s *Server) archiveTopic(topic, msg string, t time.Time) {
	if s.archive != nil {
		s.archive.AddEvents(archive.Event{Time: t, Kind: "topic", Topic: topic, Message: msg})
	}
}

// archiveSampler is the state of the samples of the scheduler's CPU.
type archiveSampler struct {
	last    time.Time // when the last samples were taken
	lastCPU float64   // the scheduler's CPU seconds then
}

// archiveSamples samples the scheduler's process and every worker whose
// report arrived since the last samples: a worker that stops reporting
// leaves a gap. Only the archive's sampler goroutine calls it.
func (s *Server) archiveSamples(now time.Time) []archive.Sample {
	var out []archive.Sample
	put := func(process, worker, name, path string, v float64) {
		out = append(out, archive.Sample{Time: now, Process: process, Worker: worker, Name: name, Path: path,
			Value: v})
	}
	sched := func(name string, v float64) { put(archive.ProcessScheduler, "", name, "", v) }

	st := &s.sampled
	cpu := procmem.CPUSeconds()
	if cpu >= 0 && !st.last.IsZero() && st.lastCPU >= 0 {
		if dt := now.Sub(st.last).Seconds(); dt > 0 {
			sched("cpu_percent", max(0, 100*(cpu-st.lastCPU)/dt))
		}
	}
	since := st.last
	st.last, st.lastCPU = now, cpu
	sched("rss_bytes", float64(procmem.RSS()))
	if n := procmem.OpenFiles(); n >= 0 {
		sched("open_files", float64(n))
	}
	sched("goroutines", float64(runtime.NumGoroutine()))

	type conn struct {
		addr   string
		memory *wire.Memory
	}
	s.mu.Lock()
	for state, n := range s.state.Counts() {
		sched("tasks_"+state.String(), float64(n))
	}
	sched("workers", float64(len(s.workers)))
	sched("clients", float64(len(s.clients)))
	conns := make([]conn, 0, len(s.workers))
	for addr, wc := range s.workers {
		conns = append(conns, conn{addr, wc.memory})
	}
	s.mu.Unlock()

	t := s.tel
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range conns {
		wt := t.workers[c.addr]
		if wt == nil || wt.stats == nil || !wt.at.After(since) {
			continue
		}
		w := func(name, path string, v float64) { put(archive.ProcessWorker, c.addr, name, path, v) }
		ws := wt.stats
		rss := ws.Rss
		if m := c.memory; m != nil {
			w("memory_managed_bytes", "", float64(m.Managed))
			w("memory_spilled_bytes", "", float64(m.Spilled))
			if m.Process > 0 {
				w("memory_unmanaged_bytes", "", float64(max(0, m.Process-m.Managed)))
				if rss == 0 {
					rss = m.Process
				}
			}
		}
		if rss > 0 {
			w("rss_bytes", "", float64(rss))
		}
		if wt.cpu >= 0 {
			w("cpu_percent", "", wt.cpu)
		}
		w("net_in_bytes_per_second", "", wt.netIn)
		w("net_out_bytes_per_second", "", wt.netOut)
		if ws.Fds >= 0 {
			w("open_files", "", float64(ws.Fds))
		}
		for _, d := range ws.Disks {
			w("disk_used_bytes", d.Path, float64(d.Used))
			w("disk_free_bytes", d.Path, float64(d.Free))
			w("disk_size_bytes", d.Path, float64(d.Size))
		}
		for state, n := range ws.Tasks {
			w("tasks_"+state, "", float64(n))
		}
	}
	return out
}

// FlushArchive writes what the archive holds to its files now, instead of
// at the end of its flush interval: the rows of what the scheduler saw and
// received until the call. It does nothing when the scheduler keeps no
// archive.
func (s *Server) FlushArchive(ctx context.Context) error {
	if s.archive == nil {
		return nil
	}
	if err := s.archive.Flush(ctx); err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}
	return nil
}
