package server

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/shoal-data/shoal/distributed/internal/metrics"
	"github.com/shoal-data/shoal/scheduler"
)

// The scheduler's Prometheus metrics, served on /metrics at
// Config.MetricsListen:
//
//	shoal_scheduler_workers{state}                        workers by state (running, paused, closing)
//	shoal_scheduler_tasks{state}                          tasks by state (waiting, queued, processing, memory, erred, ...)
//	shoal_scheduler_clients                               connected clients
//	shoal_scheduler_worker_tasks{worker,state}            tasks per worker: processing, and held in memory ("memory")
//	shoal_scheduler_worker_memory_bytes{worker,kind}      managed, unmanaged (process minus managed), spilled, process
//	shoal_scheduler_task_compute_seconds_total{prefix}    seconds tasks computed, by task prefix
//	shoal_scheduler_tasks_finished_total{prefix,outcome}  tasks that ended (memory, erred), by prefix
//	shoal_scheduler_workers_removed_total                 workers lost or gone
//	shoal_scheduler_handle_seconds                        time the scheduling core takes per batch of events
//	shoal_scheduler_tick_lateness_seconds                 goroutine latency of the scheduler process
//
// plus the Go runtime's and the process's standard collectors.
type serverMetrics struct {
	reg       *prometheus.Registry
	compute   *prometheus.CounterVec
	finished  *prometheus.CounterVec
	removed   prometheus.Counter
	handle    prometheus.Histogram
	lateness  *metrics.Lateness
	http      *metrics.Server
	collector *stateCollector
}

type stateCollector struct {
	s            *Server
	workers      *prometheus.Desc
	tasks        *prometheus.Desc
	clients      *prometheus.Desc
	workerTasks  *prometheus.Desc
	workerMemory *prometheus.Desc
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.workers
	ch <- c.tasks
	ch <- c.clients
	ch <- c.workerTasks
	ch <- c.workerMemory
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	s.mu.Lock()
	counts := s.state.Counts()
	workers := s.state.Workers()
	nclients := len(s.clients)
	held := s.state.HeldCounts()
	s.mu.Unlock()
	byState := map[string]int{"running": 0, "paused": 0, "closing": 0}
	for _, w := range workers {
		if w.State != scheduler.WorkerGone {
			byState[w.State.String()]++
		}
	}
	for st, n := range byState {
		ch <- prometheus.MustNewConstMetric(c.workers, prometheus.GaugeValue, float64(n), st)
	}
	for st := scheduler.Released; st < scheduler.Forgotten; st++ {
		ch <- prometheus.MustNewConstMetric(c.tasks, prometheus.GaugeValue, float64(counts[st]), st.String())
	}
	ch <- prometheus.MustNewConstMetric(c.clients, prometheus.GaugeValue, float64(nclients))
	for _, w := range workers {
		ch <- prometheus.MustNewConstMetric(c.workerTasks, prometheus.GaugeValue, float64(w.Processing), w.Name, "processing")
		ch <- prometheus.MustNewConstMetric(c.workerTasks, prometheus.GaugeValue, float64(held[w.Name]), w.Name, "memory")
		m := w.Memory
		ch <- prometheus.MustNewConstMetric(c.workerMemory, prometheus.GaugeValue, float64(m.Managed), w.Name, "managed")
		ch <- prometheus.MustNewConstMetric(c.workerMemory, prometheus.GaugeValue, float64(max(0, m.Process-m.Managed)), w.Name, "unmanaged")
		ch <- prometheus.MustNewConstMetric(c.workerMemory, prometheus.GaugeValue, float64(m.Spilled), w.Name, "spilled")
		ch <- prometheus.MustNewConstMetric(c.workerMemory, prometheus.GaugeValue, float64(m.Process), w.Name, "process")
	}
}

func newServerMetrics(s *Server) *serverMetrics {
	reg := prometheus.NewRegistry()
	m := &serverMetrics{reg: reg,
		compute: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "shoal_scheduler_task_compute_seconds_total",
			Help: "Seconds tasks spent computing on workers, by task prefix."}, []string{"prefix"}),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "shoal_scheduler_tasks_finished_total",
			Help: "Tasks that ended on workers, by task prefix and outcome (memory or erred)."}, []string{"prefix", "outcome"}),
		removed: prometheus.NewCounter(prometheus.CounterOpts{Name: "shoal_scheduler_workers_removed_total",
			Help: "Workers that left or were lost."}),
		handle: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "shoal_scheduler_handle_seconds",
			Help:    "Seconds the scheduling core took to handle a batch of events.",
			Buckets: []float64{1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1}}),
		collector: &stateCollector{s: s,
			workers: prometheus.NewDesc("shoal_scheduler_workers", "Workers by state.", []string{"state"}, nil),
			tasks:   prometheus.NewDesc("shoal_scheduler_tasks", "Tasks by state.", []string{"state"}, nil),
			clients: prometheus.NewDesc("shoal_scheduler_clients", "Connected clients.", nil, nil),
			workerTasks: prometheus.NewDesc("shoal_scheduler_worker_tasks",
				"Tasks per worker: processing there, and results held there (memory).", []string{"worker", "state"}, nil),
			workerMemory: prometheus.NewDesc("shoal_scheduler_worker_memory_bytes",
				"Memory of each worker as it last reported: managed (results), unmanaged (the rest of the process), spilled (on disk), process.",
				[]string{"worker", "kind"}, nil),
		},
	}
	reg.MustRegister(m.compute, m.finished, m.removed, m.handle, m.collector,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.lateness = metrics.NewLateness(reg, "shoal_scheduler_tick_lateness_seconds",
		"How late the scheduler process picks up a timer: goroutine scheduling latency.", 100*time.Millisecond)
	return m
}

// Metrics returns the registry of the scheduler's Prometheus metrics, to
// serve or gather elsewhere.
func (s *Server) Metrics() *prometheus.Registry { return s.metrics.reg }

// MetricsAddress returns the host:port where /metrics is served, or ""
// when Config.MetricsListen was not set.
func (s *Server) MetricsAddress() string {
	if s.metrics.http == nil {
		return ""
	}
	return s.metrics.http.Address()
}

func (m *serverMetrics) close() {
	m.lateness.Stop()
	if m.http != nil {
		m.http.Close()
	}
}
