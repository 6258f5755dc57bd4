package alert

import (
	"slices"
	"strings"
	"sync"

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
	next graph.Meter
	mu   sync.Mutex
	read map[graph.Key]int64
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
	r.read[task] += int64(value)
	r.mu.Unlock()
}

// Take returns the bytes a task read, and forgets them.
func (r *Reads) Take(task graph.Key) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.read[task]
	delete(r.read, task)
	return n
}

// Forget forgets every count, of tasks that will never be taken (their
// worker dropped them).
func (r *Reads) Forget() {
	r.mu.Lock()
	clear(r.read)
	r.mu.Unlock()
}
