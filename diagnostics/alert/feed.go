package alert

import (
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/graph"
)

// What executors use to feed a Machine.

// splitPrefix is the key prefix of the tasks that write a shuffle's
// files; the token of their keys is the shuffle's ID, the name of its
// directory (shuffle-ID) on the workers.
const splitPrefix = "shuffle-split"

// Shuffles returns the shuffles of a graph a computation submitted: a
// group of "shuffle-split" tasks is a shuffle, and the task groups that
// depend on it read its output (its collects, or the tasks they were
// fused into).
func Shuffles(g *graph.Graph, computation uint64) []*ShuffleStarted {
	byGroup := map[string]*ShuffleStarted{}
	var out []*ShuffleStarted
	readers := map[[2]string]bool{}
	for _, t := range g.Tasks() {
		if strings.HasPrefix(string(t.Key), splitPrefix+"-") && t.Key.Prefix() == splitPrefix {
			group := t.Key.Group()
			s := byGroup[group]
			if s == nil {
				s = &ShuffleStarted{ID: strings.TrimPrefix(group, splitPrefix+"-"), Computation: computation,
					SplitGroup: group}
				byGroup[group] = s
				out = append(out, s)
			}
			s.Splits++
			continue
		}
		for _, d := range t.Deps {
			if strings.HasPrefix(string(d), splitPrefix+"-") && d.Prefix() == splitPrefix {
				readers[[2]string{d.Group(), t.Key.Group()}] = true
				break
			}
		}
	}
	for r := range readers {
		if s := byGroup[r[0]]; s != nil {
			s.Readers = append(s.Readers, r[1])
		}
	}
	for _, s := range out {
		slices.Sort(s.Readers)
	}
	return out
}

// Reads is a graph.Meter that counts the bytes each task reads from
// files (the "disk-read" and "transfer-in" bytes tasks add with
// graph.AddMetric: a shuffle's shards, from this worker's disk or a
// peer's), for TaskEnded.Read, and passes every metric on. It is safe
// for concurrent use.
type Reads struct {
	next    graph.Meter
	pending atomic.Int64 // len(read), so that Take of a task that read nothing takes no lock
	mu      sync.Mutex
	read    map[graph.Key]int64
}

// NewReads returns a Reads that passes metrics on to next.
func NewReads(next graph.Meter) *Reads {
	return &Reads{next: next, read: map[graph.Key]int64{}}
}

// AddMetric passes the metric on, and counts it if it is bytes read.
func (r *Reads) AddMetric(task graph.Key, activity, unit string, value float64) {
	r.next.AddMetric(task, activity, unit, value)
	if unit != diagnostics.UnitBytes ||
		activity != diagnostics.ActivityDiskRead && activity != diagnostics.ActivityTransferIn {
		return
	}
	r.mu.Lock()
	if _, ok := r.read[task]; !ok {
		r.pending.Add(1)
	}
	r.read[task] += int64(value)
	r.mu.Unlock()
}

// Take returns the bytes a task read, and forgets them.
func (r *Reads) Take(task graph.Key) int64 {
	if r.pending.Load() == 0 {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	n, ok := r.read[task]
	if ok {
		delete(r.read, task)
		r.pending.Add(-1)
	}
	return n
}

// Forget forgets every count, of tasks that will never be taken (their
// worker dropped them).
func (r *Reads) Forget() {
	r.mu.Lock()
	clear(r.read)
	r.pending.Store(0)
	r.mu.Unlock()
}

// Log logs an alert raised at WARN, with its message and what to do,
// and one resolved at INFO, each with the rule, severity, worker and
// what it is about as attributes.
func Log(logger *slog.Logger, a *diagnostics.Alert) {
	attrs := []any{"alert", a.Name, "severity", a.Severity, "worker", a.Worker}
	for _, kv := range [][2]string{{"path", a.Path}, {"key", string(a.Key)}, {"shuffle", a.Shuffle}} {
		if kv[1] != "" {
			attrs = append(attrs, kv[0], kv[1])
		}
	}
	if a.Active() {
		logger.Warn(a.Message, append(attrs, "action", a.Action)...)
		return
	}
	logger.Info("resolved: "+a.Message, append(attrs, "after", a.End.Sub(a.Start).Round(time.Millisecond))...)
}

// Event returns the event of an alert raised or resolved at now.
func Event(now time.Time, a *diagnostics.Alert) diagnostics.Event {
	kind := diagnostics.AlertRaised
	if !a.Active() {
		kind = diagnostics.AlertResolved
	}
	return diagnostics.Event{Time: now, Kind: kind, Worker: a.Worker, Key: a.Key, Prefix: a.Key.Prefix(),
		Path: a.Path, Alert: a}
}
