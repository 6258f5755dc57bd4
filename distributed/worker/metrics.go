package worker

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/shoal-data/shoal/distributed/internal/metrics"
	"github.com/shoal-data/shoal/distributed/internal/procmem"
)

// The worker's Prometheus metrics, served on /metrics at
// Config.MetricsListen. Every series carries the label worker, the
// worker's address, as the scheduler's series of it do:
//
//	shoal_worker_threads                                  tasks the worker runs at once
//	shoal_worker_tasks{state}                             tasks here: executing, ready (waiting for a thread or its inputs), fetching, memory (values held)
//	shoal_worker_memory_bytes{kind}                       managed, unmanaged (process minus managed), spilled, process
//	shoal_worker_paused                                   1 while the worker starts no tasks (memory above the pause threshold)
//	shoal_worker_task_compute_seconds_total{prefix}       seconds tasks computed here, by task prefix
//	shoal_worker_tasks_finished_total{prefix,outcome}     tasks that ended here (memory, erred)
//	shoal_worker_transfer_bytes_total{direction}          bytes of values fetched from peers (in) and served to peers and clients (out)
//	shoal_worker_transfer_seconds_total{prefix}           seconds spent fetching inputs from peers, by task prefix
//	shoal_worker_transfers_in_flight{direction}           fetches from peers under way (in), values being served (out)
//	shoal_worker_transfer_in_flight_bytes{direction}      bytes of those, as their holders reported them
//	shoal_worker_spill_bytes_total{direction}             bytes written to disk (write) and read back (read)
//	shoal_worker_spill_seconds_total{direction}           seconds spent writing and reading spilled values
//	shoal_worker_spill_count_total{direction}             values written to disk and read back
//	shoal_worker_fine_seconds_total{prefix,activity}      fine performance metrics: seconds per activity (compute, cpu, queued, waiting, transfer-in, spill-write, disk-write, encode, idle, ...), by task prefix
//	shoal_worker_fine_bytes_total{prefix,activity}        bytes moved by each activity, by task prefix
//	shoal_worker_fine_count_total{prefix,activity}        how many times each activity happened, by task prefix
//	shoal_worker_disk_used_bytes{dir}                     bytes of the files in the worker's own directory (local) and the ops' scratch directory (scratch)
//	shoal_worker_disk_free_bytes{dir}                     bytes free on the file system of each
//	shoal_worker_disk_size_bytes{dir}                     bytes of the file system of each
//	shoal_worker_memory_limit_bytes                       the worker's memory limit (0: none)
//	shoal_worker_tick_lateness_seconds                    goroutine latency of the worker process
//
// plus the Go runtime's and the process's standard collectors (only for
// worker processes: in-process workers share one process).
type workerMetrics struct {
	reg          *prometheus.Registry
	compute      *prometheus.CounterVec
	finished     *prometheus.CounterVec
	transfer     *prometheus.CounterVec
	transferTime *prometheus.CounterVec
	spill        *prometheus.CounterVec
	spillTime    *prometheus.CounterVec
	spillCount   *prometheus.CounterVec
	lateness     *metrics.Lateness
	http         *metrics.Server
}

type workerCollector struct {
	w                       *Worker
	tasks, memory, paused   *prometheus.Desc
	diskUsed, diskFree      *prometheus.Desc
	diskSize, memoryLimit   *prometheus.Desc
	threads                 *prometheus.Desc
	inFlight, inFlightBytes *prometheus.Desc
	fine                    metrics.Fine
}

func (c *workerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.tasks, c.memory, c.paused, c.diskUsed, c.diskFree, c.diskSize, c.memoryLimit,
		c.threads, c.inFlight, c.inFlightBytes} {
		ch <- d
	}
	c.fine.Describe(ch)
}

func (c *workerCollector) Collect(ch chan<- prometheus.Metric) {
	w := c.w
	w.mu.Lock()
	executing, all, fetching, held := w.state.Executing(), w.state.Tasks(), w.state.Fetching(), len(w.state.Held())
	managed, spilled := w.store.managed, w.store.spilled
	paused := w.state.Paused()
	w.mu.Unlock()
	process := procmem.RSS()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(c.tasks, float64(executing), "executing")
	gauge(c.tasks, float64(all-executing), "ready")
	gauge(c.tasks, float64(fetching), "fetching")
	gauge(c.tasks, float64(held), "memory")
	gauge(c.memory, float64(managed), "managed")
	gauge(c.memory, float64(max(0, process-managed)), "unmanaged")
	gauge(c.memory, float64(spilled), "spilled")
	gauge(c.memory, float64(process), "process")
	p := 0.0
	if paused {
		p = 1
	}
	gauge(c.paused, p)
	gauge(c.threads, float64(w.cfg.Threads))
	gauge(c.memoryLimit, float64(w.cfg.MemoryLimit))
	gauge(c.inFlight, float64(w.tel.fetching.Load()), "in")
	gauge(c.inFlightBytes, float64(w.tel.fetchingBytes.Load()), "in")
	gauge(c.inFlight, float64(w.tel.serving.Load()), "out")
	gauge(c.inFlightBytes, float64(w.tel.servingBytes.Load()), "out")
	c.fine.Collect(ch, w.FineMetrics())
	dirs := [][2]string{{"local", w.dir}}
	if w.env.LocalDir != w.dir {
		dirs = append(dirs, [2]string{"scratch", w.env.LocalDir})
	}
	for _, d := range dirs {
		u, err := metrics.Disk(d[1])
		if err != nil {
			w.logger.Debug("cannot measure disk usage", "path", d[1], "error", err)
		}
		gauge(c.diskUsed, float64(u.Used), d[0])
		gauge(c.diskFree, float64(u.Free), d[0])
		gauge(c.diskSize, float64(u.Size), d[0])
	}
}

func newWorkerMetrics(w *Worker, process bool) *workerMetrics {
	reg := prometheus.NewRegistry()
	m := &workerMetrics{reg: reg,
		compute: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "shoal_worker_task_compute_seconds_total",
			Help: "Seconds tasks spent computing on this worker, by task prefix."}, []string{"prefix"}),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "shoal_worker_tasks_finished_total",
			Help: "Tasks that ended on this worker, by task prefix and outcome (memory or erred)."}, []string{"prefix", "outcome"}),
		transfer: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "shoal_worker_transfer_bytes_total",
			Help: "Bytes of values fetched from peers (in) and served to peers and clients (out)."}, []string{"direction"}),
		transferTime: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "shoal_worker_transfer_seconds_total",
			Help: "Seconds spent fetching values from peers, by task prefix of the value."}, []string{"prefix"}),
		spill: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "shoal_worker_spill_bytes_total",
			Help: "Bytes of values written to disk (write) and read back (read)."}, []string{"direction"}),
		spillTime: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "shoal_worker_spill_seconds_total",
			Help: "Seconds spent writing values to disk (write) and reading them back (read)."}, []string{"direction"}),
		spillCount: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "shoal_worker_spill_count_total",
			Help: "Values written to disk (write) and read back (read)."}, []string{"direction"}),
	}
	col := &workerCollector{w: w,
		tasks:    prometheus.NewDesc("shoal_worker_tasks", "Tasks on this worker by state (executing, ready, fetching, memory).", []string{"state"}, nil),
		memory:   prometheus.NewDesc("shoal_worker_memory_bytes", "Memory of this worker: managed (results), unmanaged (the rest of the process), spilled (on disk), process.", []string{"kind"}, nil),
		paused:   prometheus.NewDesc("shoal_worker_paused", "1 while the worker starts no tasks: its process memory is above the pause threshold.", nil, nil),
		diskUsed: prometheus.NewDesc("shoal_worker_disk_used_bytes", "Bytes of the files in the worker's own directory (local) and the ops' scratch directory (scratch).", []string{"dir"}, nil),
		diskFree: prometheus.NewDesc("shoal_worker_disk_free_bytes", "Bytes free on the file system of each directory.", []string{"dir"}, nil),
		diskSize: prometheus.NewDesc("shoal_worker_disk_size_bytes", "Bytes of the file system of each directory.", []string{"dir"}, nil),
		memoryLimit: prometheus.NewDesc("shoal_worker_memory_limit_bytes", "The worker's memory limit in bytes; 0: none.",
			nil, nil),
		threads: prometheus.NewDesc("shoal_worker_threads", "Tasks the worker runs at once.", nil, nil),
		inFlight: prometheus.NewDesc("shoal_worker_transfers_in_flight",
			"Transfers under way: fetches of values from peers (in), values being served to peers and clients (out).",
			[]string{"direction"}, nil),
		inFlightBytes: prometheus.NewDesc("shoal_worker_transfer_in_flight_bytes",
			"Bytes of the transfers under way, as the values' holders reported them.", []string{"direction"}, nil),
		fine: metrics.NewFine("shoal_worker", "this worker"),
	}
	// Every series carries the worker's address, to join with the
	// scheduler's series of it.
	wreg := prometheus.WrapRegistererWith(prometheus.Labels{"worker": w.addr}, reg)
	wreg.MustRegister(m.compute, m.finished, m.transfer, m.transferTime, m.spill, m.spillTime, m.spillCount, col)
	for _, d := range []string{"in", "out"} {
		m.transfer.WithLabelValues(d)
	}
	for _, d := range []string{"write", "read"} {
		m.spill.WithLabelValues(d)
		m.spillTime.WithLabelValues(d)
		m.spillCount.WithLabelValues(d)
	}
	if process {
		wreg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	m.lateness = metrics.NewLateness(wreg, "shoal_worker_tick_lateness_seconds",
		"How late the worker process picks up a timer: goroutine scheduling latency.", 100*time.Millisecond)
	return m
}

// Metrics returns the registry of the worker's Prometheus metrics.
func (w *Worker) Metrics() *prometheus.Registry { return w.metrics.reg }

// MetricsAddress returns the host:port where /metrics is served, or "".
func (w *Worker) MetricsAddress() string {
	if w.metrics.http == nil {
		return ""
	}
	return w.metrics.http.Address()
}

func (m *workerMetrics) close() {
	m.lateness.Stop()
	if m.http != nil {
		m.http.Close()
	}
}
