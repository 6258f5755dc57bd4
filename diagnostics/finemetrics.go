package diagnostics

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"github.com/shoal-data/shoal/graph"
)

// The activities of fine performance metrics: where the time of a task
// prefix went, in the manner of Dask's fine performance metrics. Each has
// seconds; those that move data have bytes too, spills a count.
const (
	// ActivityCompute is the wall time of the tasks' functions.
	ActivityCompute = "compute"
	// ActivityCPU is the CPU time of the tasks' functions and of the
	// goroutines they started, sampled by the profiler: part of
	// compute, and more than it when a task runs goroutines in parallel.
	ActivityCPU = "cpu"
	// ActivityQueued is the time tasks waited for a thread once their
	// inputs were at hand.
	ActivityQueued = "queued"
	// ActivityWaiting is the time tasks waited for their inputs to
	// arrive from other workers.
	ActivityWaiting = "waiting"
	// ActivityTransferIn is fetching results (of the prefix) from other
	// workers; ActivityTransferOut serving them to other workers and
	// clients.
	ActivityTransferIn  = "transfer-in"
	ActivityTransferOut = "transfer-out"
	// ActivitySpillWrite is writing results (of the prefix) to disk to
	// free memory; ActivitySpillRead reading them back.
	ActivitySpillWrite = "spill-write"
	ActivitySpillRead  = "spill-read"
	// ActivityDiskWrite and ActivityDiskRead are the tasks' own files,
	// such as a shuffle's shards.
	ActivityDiskWrite = "disk-write"
	ActivityDiskRead  = "disk-read"
	// ActivityEncode and ActivityDecode are turning results into bytes to
	// send or spill them, and back.
	ActivityEncode = "encode"
	ActivityDecode = "decode"
	// ActivityIdle is thread time with no task to run: it belongs to no
	// prefix.
	ActivityIdle = "idle"
)

// Activities lists the activities in the order to show them.
var Activities = []string{ActivityCompute, ActivityCPU, ActivityQueued, ActivityWaiting, ActivityTransferIn,
	ActivityTransferOut, ActivitySpillWrite, ActivitySpillRead, ActivityDiskWrite, ActivityDiskRead,
	ActivityEncode, ActivityDecode, ActivityIdle}

// Units of fine performance metrics.
const (
	UnitSeconds = "seconds"
	UnitBytes   = "bytes"
	UnitCount   = "count"
)

// FineMetric is one total of fine performance metrics: what a worker
// spent on an activity for the tasks of a prefix.
type FineMetric struct {
	Worker   string  `json:"worker,omitempty"`
	Prefix   string  `json:"prefix,omitempty"` // "" for activities of no task (idle)
	Activity string  `json:"activity"`
	Unit     string  `json:"unit"`
	Value    float64 `json:"value"`
}

type fineKey struct{ worker, prefix, activity, unit string }

// FineMetrics adds up fine performance metrics. It is safe for concurrent
// use; the zero value is ready.
type FineMetrics struct {
	mu    sync.Mutex
	total map[fineKey]float64
	delta map[fineKey]float64 // since the last Drain
}

// Add adds value to the total of worker, prefix, activity and unit.
func (f *FineMetrics) Add(worker, prefix, activity, unit string, value float64) {
	if value == 0 {
		return
	}
	k := fineKey{worker, prefix, activity, unit}
	f.mu.Lock()
	if f.total == nil {
		f.total, f.delta = map[fineKey]float64{}, map[fineKey]float64{}
	}
	f.total[k] += value
	f.delta[k] += value
	f.mu.Unlock()
}

// AddAll adds metrics, as Add.
func (f *FineMetrics) AddAll(ms []FineMetric) {
	for _, m := range ms {
		f.Add(m.Worker, m.Prefix, m.Activity, m.Unit, m.Value)
	}
}

// Drain returns what was added since the last Drain, sorted (see Sort).
func (f *FineMetrics) Drain() []FineMetric {
	f.mu.Lock()
	d := f.delta
	if len(d) == 0 {
		f.mu.Unlock()
		return nil
	}
	f.delta = map[fineKey]float64{}
	f.mu.Unlock()
	return sorted(d)
}

// Totals returns every total, sorted (see Sort).
func (f *FineMetrics) Totals() []FineMetric {
	f.mu.Lock()
	defer f.mu.Unlock()
	return sorted(f.total)
}

func sorted(m map[fineKey]float64) []FineMetric {
	out := make([]FineMetric, 0, len(m))
	for k, v := range m {
		out = append(out, FineMetric{Worker: k.worker, Prefix: k.prefix, Activity: k.activity, Unit: k.unit, Value: v})
	}
	SortFineMetrics(out)
	return out
}

// SortFineMetrics sorts metrics by prefix, activity (in the order of
// Activities, then by name), unit and worker.
func SortFineMetrics(ms []FineMetric) {
	slices.SortFunc(ms, func(a, b FineMetric) int {
		return cmp.Or(cmp.Compare(a.Prefix, b.Prefix), compareActivity(a.Activity, b.Activity),
			cmp.Compare(a.Unit, b.Unit), cmp.Compare(a.Worker, b.Worker))
	})
}

func compareActivity(a, b string) int {
	ia, ib := slices.Index(Activities, a), slices.Index(Activities, b)
	if ia < 0 {
		ia = len(Activities)
	}
	if ib < 0 {
		ib = len(Activities)
	}
	return cmp.Or(cmp.Compare(ia, ib), cmp.Compare(a, b))
}

// SumFineMetrics adds up metrics over workers: one total per prefix,
// activity and unit, with no Worker, sorted.
func SumFineMetrics(ms []FineMetric) []FineMetric {
	m := map[fineKey]float64{}
	for _, x := range ms {
		m[fineKey{"", x.Prefix, x.Activity, x.Unit}] += x.Value
	}
	return sorted(m)
}

// FineMetricsSource is implemented by executors that keep fine
// performance metrics: the in-process executor and the client of a
// cluster. FineMetrics returns the totals since the executor (or the
// scheduler) started, per worker.
type FineMetricsSource interface {
	FineMetrics(ctx context.Context) ([]FineMetric, error)
}

// Meter returns a graph.Meter that adds what tasks report (with
// graph.AddMetric) under worker and the prefix of the task's key.
func (f *FineMetrics) Meter(worker string) graph.Meter {
	return &fineMeter{f: f, worker: worker}
}

type fineMeter struct {
	f      *FineMetrics
	worker string
}

func (m *fineMeter) AddMetric(task graph.Key, activity, unit string, value float64) {
	m.f.Add(m.worker, task.Prefix(), activity, unit, value)
}
