package local

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"time"

	"github.com/shoal-data/shoal/diagnostics/archive"
)

// WithArchive keeps the executor's telemetry in Parquet files in dir that
// outlive it: its log records, events, one row per task run, transitions,
// and samples of its memory, CPU and tasks every 5 seconds, the same
// tables as a cluster's (see package diagnostics/archive, whose options
// tune it: size bound, flush interval...). Close writes what is left.
// When dir cannot be used, the executor logs why at level Error and keeps
// no archive.
func WithArchive(dir string, opts ...archive.Option) Option {
	return func(c *config) {
		c.archiveDir = dir
		c.archiveOpts = opts
	}
}

// openArchive opens the archive of cfg, if it has one, logging to logger
// why it cannot. The archive's sampler samples the executor stored in
// self, once there is one.
func openArchive(cfg config, logger *slog.Logger) (*archive.Writer, *atomic.Pointer[Executor]) {
	if cfg.archiveDir == "" {
		return nil, nil
	}
	self := &atomic.Pointer[Executor]{}
	var id [6]byte
	rand.Read(id[:])
	opts := append([]archive.Option{archive.WithCluster("local-" + hex.EncodeToString(id[:])),
		archive.WithLogger(logger)}, cfg.archiveOpts...)
	var cpu goSampler
	opts = append(opts, archive.WithSampler(func(now time.Time) []archive.Sample {
		if e := self.Load(); e != nil {
			return e.archiveSamples(now, &cpu)
		}
		return nil
	}))
	w, err := archive.Open(cfg.archiveDir, opts...)
	if err != nil {
		logger.Error("local executor: no archive", "path", cfg.archiveDir, "error", err)
		return nil, nil
	}
	return w, self
}

// ArchiveDir returns the directory of the executor's archive, or "" when
// it keeps none (WithArchive).
func (e *Executor) ArchiveDir() string {
	if e.archive == nil {
		return ""
	}
	return e.archive.Dir()
}

// goSampler reads what the Go runtime says of the process.
type goSampler struct {
	s       [4]metrics.Sample
	last    time.Time
	lastCPU float64
}

// read returns the CPU seconds the process's Go code and runtime used so
// far and the memory the runtime holds from the system, as the runtime
// estimates them.
func (g *goSampler) read() (cpu float64, mem uint64) {
	g.s[0].Name = "/cpu/classes/total:cpu-seconds"
	g.s[1].Name = "/cpu/classes/idle:cpu-seconds"
	g.s[2].Name = "/memory/classes/total:bytes"
	g.s[3].Name = "/memory/classes/heap/released:bytes"
	metrics.Read(g.s[:])
	return g.s[0].Value.Float64() - g.s[1].Value.Float64(), g.s[2].Value.Uint64() - g.s[3].Value.Uint64()
}

// archiveSamples samples the executor's memory, its tasks, and the
// process as the Go runtime sees it. Only the archive's sampler calls it.
func (e *Executor) archiveSamples(now time.Time, g *goSampler) []archive.Sample {
	var out []archive.Sample
	put := func(name string, v float64) {
		out = append(out, archive.Sample{Time: now, Process: archive.ProcessLocal, Worker: workerName, Name: name,
			Value: v})
	}
	cpu, mem := g.read()
	if !g.last.IsZero() {
		if dt := now.Sub(g.last).Seconds(); dt > 0 {
			put("cpu_percent", max(0, 100*(cpu-g.lastCPU)/dt))
		}
	}
	g.last, g.lastCPU = now, cpu
	put("go_memory_bytes", float64(mem))
	put("goroutines", float64(runtime.NumGoroutine()))
	e.mu.Lock()
	managed, spilled := e.store.managed, e.store.spilled
	executing, ready := e.busy, len(e.ready)-e.readyHead
	e.mu.Unlock()
	put("memory_managed_bytes", float64(managed))
	put("memory_spilled_bytes", float64(spilled))
	put("tasks_executing", float64(executing))
	put("tasks_ready", float64(ready))
	return out
}
