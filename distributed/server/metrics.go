package server

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/distributed/internal/metrics"
	"github.com/shoal-data/shoal/scheduler"
)

// The scheduler's Prometheus metrics, served on /metrics beside the
// dashboard (Config.DashboardListen) and at Config.MetricsListen:
//
//	shoal_scheduler_workers{state}                         workers by state (running, paused, closing)
//	shoal_scheduler_tasks{state}                           tasks by state (waiting, queued, processing, memory, erred, ...)
//	shoal_scheduler_clients                                connected clients
//	shoal_scheduler_worker_threads{worker}                 threads of each worker: tasks it runs at once
//	shoal_scheduler_worker_tasks{worker,state}             tasks per worker: processing, and held in memory ("memory")
//	shoal_scheduler_worker_memory_bytes{worker,kind}       managed, unmanaged (process minus managed), spilled, process
//	shoal_scheduler_worker_memory_limit_bytes{worker}      each worker's memory limit (0: none)
//	shoal_scheduler_worker_disk_bytes{worker,dir,kind}     used and free bytes of each worker's directories (local, scratch), and the size of their file systems
//	shoal_scheduler_worker_latency_seconds{worker}         round trip of a message to each worker and back, at its last heartbeat
//	shoal_scheduler_worker_last_seen_seconds{worker}       seconds since each worker last sent anything
//	shoal_scheduler_task_compute_seconds_total{prefix}     seconds tasks computed, by task prefix
//	shoal_scheduler_task_output_bytes_total{prefix}        bytes of the results tasks computed, by prefix
//	shoal_scheduler_tasks_finished_total{prefix,outcome}   tasks that ended (memory, erred), by prefix
//	shoal_scheduler_prefix_state_totals_total{prefix,state} transitions of tasks into each state, by prefix
//	shoal_scheduler_tasks_forgotten_total                  tasks the scheduler forgot (their results no longer wanted)
//	shoal_scheduler_tasks_suspicious_total                 runs of tasks lost with the worker that ran them
//	shoal_scheduler_work_steals_total                      tasks the scheduler asked a busy worker to give up to an idle one
//	shoal_scheduler_fine_seconds_total{prefix,activity}    fine performance metrics of every worker: seconds per activity (compute, cpu, queued, ...)
//	shoal_scheduler_fine_bytes_total{prefix,activity}      bytes per activity (transfer-in, spill-write, disk-write, ...)
//	shoal_scheduler_fine_count_total{prefix,activity}      counts per activity (transfers, spills)
//	shoal_scheduler_workers_removed_total                  workers lost or gone
//	shoal_scheduler_handle_seconds                         time the scheduling core takes per batch of events
//	shoal_scheduler_tick_lateness_seconds                  goroutine latency of the scheduler process
//	shoal_scheduler_alert_active{alert,severity,worker,path,key,shuffle} 1 for each alert raised and not resolved
//	shoal_scheduler_alerts_raised_total{alert}             alerts raised, by rule
//
// plus the Go runtime's and the process's standard collectors.
type serverMetrics struct {
	reg       *prometheus.Registry
	compute   *prometheus.CounterVec
	output    *prometheus.CounterVec
	finished  *prometheus.CounterVec
	removed   prometheus.Counter
	forgotten prometheus.Counter
	suspect   prometheus.Counter
	steals    prometheus.Counter
	alerts    *prometheus.CounterVec
	latency   *prometheus.GaugeVec
	handle    prometheus.Histogram
	lateness  *metrics.Lateness
	http      *metrics.Server
	collector *stateCollector

	mu     sync.Mutex
	states map[[2]string]float64 // transitions by prefix and state
}

type stateCollector struct {
	s            *Server
	workers      *prometheus.Desc
	tasks        *prometheus.Desc
	clients      *prometheus.Desc
	workerTasks  *prometheus.Desc
	workerMemory *prometheus.Desc
	threads      *prometheus.Desc
	disk         *prometheus.Desc
	memoryLimit  *prometheus.Desc
	lastSeen     *prometheus.Desc
	alerts       *prometheus.Desc
	prefixStates *prometheus.Desc
	fine         metrics.Fine
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.workers, c.tasks, c.clients, c.workerTasks, c.workerMemory, c.threads,
		c.disk, c.memoryLimit, c.lastSeen, c.alerts, c.prefixStates} {
		ch <- d
	}
	c.fine.Describe(ch)
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	s.mu.Lock()
	counts := s.state.Counts()
	workers := s.state.Workers()
	nclients := len(s.clients)
	held := s.state.HeldCounts()
	lastSeen := make(map[string]time.Time, len(s.workers))
	for addr, wc := range s.workers {
		lastSeen[addr] = wc.lastSeen
	}
	s.mu.Unlock()
	now := time.Now()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	byState := map[string]int{"running": 0, "paused": 0, "closing": 0}
	for _, w := range workers {
		if w.State != scheduler.WorkerGone {
			byState[w.State.String()]++
		}
	}
	for st, n := range byState {
		gauge(c.workers, float64(n), st)
	}
	for st := scheduler.Released; st < scheduler.Forgotten; st++ {
		gauge(c.tasks, float64(counts[st]), st.String())
	}
	gauge(c.clients, float64(nclients))
	for _, w := range workers {
		gauge(c.threads, float64(w.Threads), w.Name)
		gauge(c.workerTasks, float64(w.Processing), w.Name, "processing")
		gauge(c.workerTasks, float64(held[w.Name]), w.Name, "memory")
		m := w.Memory
		gauge(c.workerMemory, float64(m.Managed), w.Name, "managed")
		gauge(c.workerMemory, float64(max(0, m.Process-m.Managed)), w.Name, "unmanaged")
		gauge(c.workerMemory, float64(m.Spilled), w.Name, "spilled")
		gauge(c.workerMemory, float64(m.Process), w.Name, "process")
		gauge(c.memoryLimit, float64(w.MemoryLimit), w.Name)
		if at, ok := lastSeen[w.Name]; ok {
			gauge(c.lastSeen, now.Sub(at).Seconds(), w.Name)
		}
	}
	t := s.tel
	t.mu.Lock()
	for _, w := range workers {
		if wt := t.workers[w.Name]; wt != nil && wt.stats != nil {
			for _, d := range wt.stats.Disks {
				gauge(c.disk, float64(d.Used), w.Name, d.Name, "used")
				gauge(c.disk, float64(d.Free), w.Name, d.Name, "free")
				gauge(c.disk, float64(d.Size), w.Name, d.Name, "size")
			}
		}
	}
	t.mu.Unlock()
	m := s.metrics
	m.mu.Lock()
	for k, n := range m.states {
		ch <- prometheus.MustNewConstMetric(c.prefixStates, prometheus.CounterValue, n, k[0], k[1])
	}
	m.mu.Unlock()
	c.fine.Collect(ch, diagnostics.SumFineMetrics(t.fine.Totals()))
	active, _ := s.Alerts()
	for _, a := range active {
		gauge(c.alerts, 1, a.Name, a.Severity, a.Worker, a.Path, string(a.Key), a.Shuffle)
	}
}

func newServerMetrics(s *Server) *serverMetrics {
	reg := prometheus.NewRegistry()
	m := &serverMetrics{reg: reg, states: map[[2]string]float64{},
		compute: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "shoal_scheduler_task_compute_seconds_total",
			Help: "Seconds tasks spent computing on workers, by task prefix."}, []string{"prefix"}),
		output: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "shoal_scheduler_task_output_bytes_total",
			Help: "Bytes of the results tasks computed on workers, by task prefix."}, []string{"prefix"}),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "shoal_scheduler_tasks_finished_total",
			Help: "Tasks that ended on workers, by task prefix and outcome (memory or erred)."}, []string{"prefix", "outcome"}),
		removed: prometheus.NewCounter(prometheus.CounterOpts{Name: "shoal_scheduler_workers_removed_total",
			Help: "Workers that left or were lost."}),
		forgotten: prometheus.NewCounter(prometheus.CounterOpts{Name: "shoal_scheduler_tasks_forgotten_total",
			Help: "Tasks the scheduler forgot: no client wanted their results any more."}),
		suspect: prometheus.NewCounter(prometheus.CounterOpts{Name: "shoal_scheduler_tasks_suspicious_total",
			Help: "Runs of tasks lost with the worker that ran them (a task lost this way too often is declared erred)."}),
		steals: prometheus.NewCounter(prometheus.CounterOpts{Name: "shoal_scheduler_work_steals_total",
			Help: "Tasks the scheduler asked a busy worker to give up, to run them on an idle one."}),
		alerts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "shoal_scheduler_alerts_raised_total",
			Help: "Alerts the scheduler raised, by rule (see shoal_scheduler_alert_active for those raised now)."},
			[]string{"alert"}),
		latency: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "shoal_scheduler_worker_latency_seconds",
			Help: "Round trip of a message from the scheduler to each worker and back, measured at its last heartbeat."},
			[]string{"worker"}),
		handle: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "shoal_scheduler_handle_seconds",
			Help:    "Seconds the scheduling core took to handle a batch of events.",
			Buckets: []float64{1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1}}),
		collector: &stateCollector{s: s,
			workers: prometheus.NewDesc("shoal_scheduler_workers", "Workers by state.", []string{"state"}, nil),
			tasks:   prometheus.NewDesc("shoal_scheduler_tasks", "Tasks by state.", []string{"state"}, nil),
			clients: prometheus.NewDesc("shoal_scheduler_clients", "Connected clients.", nil, nil),
			threads: prometheus.NewDesc("shoal_scheduler_worker_threads", "Threads of each worker: the tasks it runs at once.",
				[]string{"worker"}, nil),
			workerTasks: prometheus.NewDesc("shoal_scheduler_worker_tasks",
				"Tasks per worker: processing there, and results held there (memory).", []string{"worker", "state"}, nil),
			workerMemory: prometheus.NewDesc("shoal_scheduler_worker_memory_bytes",
				"Memory of each worker as it last reported: managed (results), unmanaged (the rest of the process), spilled (on disk), process.",
				[]string{"worker", "kind"}, nil),
			disk: prometheus.NewDesc("shoal_scheduler_worker_disk_bytes",
				"Bytes used by the files of each worker's directories (local: its own; scratch: the ops'), free on their file systems and the size of those (size), as it last reported.",
				[]string{"worker", "dir", "kind"}, nil),
			memoryLimit: prometheus.NewDesc("shoal_scheduler_worker_memory_limit_bytes",
				"Each worker's memory limit in bytes; 0: none.", []string{"worker"}, nil),
			lastSeen: prometheus.NewDesc("shoal_scheduler_worker_last_seen_seconds",
				"Seconds since each worker last sent anything: its heartbeats come every second by default.",
				[]string{"worker"}, nil),
			alerts: prometheus.NewDesc("shoal_scheduler_alert_active",
				"1 for each alert the scheduler raised and has not resolved: its rule, severity, worker, and the directory, task or shuffle it is about.",
				[]string{"alert", "severity", "worker", "path", "key", "shuffle"}, nil),
			prefixStates: prometheus.NewDesc("shoal_scheduler_prefix_state_totals_total",
				"Transitions of tasks into each state, by task prefix.", []string{"prefix", "state"}, nil),
			fine: metrics.NewFine("shoal_scheduler", "all workers"),
		},
	}
	reg.MustRegister(m.compute, m.output, m.finished, m.removed, m.forgotten, m.suspect, m.steals, m.alerts, m.latency,
		m.handle, m.collector, collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.lateness = metrics.NewLateness(reg, "shoal_scheduler_tick_lateness_seconds",
		"How late the scheduler process picks up a timer: goroutine scheduling latency.", 100*time.Millisecond)
	return m
}

// countTransitions counts the transitions of events by prefix and
// state: a subscriber of the server's events.
func (m *serverMetrics) countTransitions(evs []diagnostics.Event) {
	forgotten := 0
	m.mu.Lock()
	for i := range evs {
		e := &evs[i]
		if e.Kind != diagnostics.TaskTransition {
			continue
		}
		if e.To == diagnostics.StateForgotten {
			forgotten++
			continue
		}
		m.states[[2]string{e.Prefix, e.To}]++
	}
	m.mu.Unlock()
	m.forgotten.Add(float64(forgotten))
}

// Metrics returns the registry of the scheduler's Prometheus metrics, to
// serve or gather elsewhere.
func (s *Server) Metrics() *prometheus.Registry { return s.metrics.reg }

// MetricsAddress returns the host:port where /metrics is served: at
// Config.MetricsListen, else beside the dashboard; "" when neither is
// served.
func (s *Server) MetricsAddress() string {
	if s.metrics.http != nil {
		return s.metrics.http.Address()
	}
	return s.DashboardAddress()
}

func (m *serverMetrics) close() {
	m.lateness.Stop()
	if m.http != nil {
		m.http.Close()
	}
}
