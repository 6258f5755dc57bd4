package worker

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/graph"
)

// runInputs records what the worker's task runs got from other workers,
// while the scheduler traces runs (wire.Welcome.OtelInputs), and hands it
// out with the end of each run (wire.TaskDone.OtelInputs): the values of
// inputs fetched from peers, and what tasks read of peers' shuffle files.
// Off, its methods do nothing.
type runInputs struct {
	on      atomic.Bool
	mu      sync.Mutex
	fetched map[graph.Key]*wire.OtelTransfer   // values fetched from peers, while held
	runs    map[graph.Key][]*wire.OtelTransfer // inputs of the runs under way, by task
}

// setOn turns recording on or off (forgetting what was recorded).
func (r *runInputs) setOn(on bool) {
	r.on.Store(on)
	r.reset()
}

// fetchedValue records that the value of k came from peer.
func (r *runInputs) fetchedValue(k graph.Key, peer string, start time.Time, d time.Duration, bytes int64) {
	if !r.on.Load() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fetched == nil {
		r.fetched = map[graph.Key]*wire.OtelTransfer{}
	}
	r.fetched[k] = &wire.OtelTransfer{Key: string(k), From: peer, StartUnixNano: start.UnixNano(),
		DurationNanos: int64(d), Bytes: bytes}
}

// started records the inputs of t that were fetched, as a run of t
// starts.
func (r *runInputs) started(t *graph.Task) {
	if !r.on.Load() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var ins []*wire.OtelTransfer
	for _, d := range t.Deps {
		if f := r.fetched[d]; f != nil {
			ins = append(ins, f)
		}
	}
	if r.runs == nil {
		r.runs = map[graph.Key][]*wire.OtelTransfer{}
	}
	r.runs[t.Key] = ins
}

// readFile records that task read bytes of peer's files, waiting d from
// start: the reads of a run from one peer add up into one transfer.
func (r *runInputs) readFile(task graph.Key, peer string, start time.Time, d time.Duration, bytes int64) {
	if !r.on.Load() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ins, ok := r.runs[task]
	if !ok {
		return // not a run of this worker's
	}
	for _, in := range ins {
		if in.Key == "" && in.From == peer {
			in.StartUnixNano = min(in.StartUnixNano, start.UnixNano())
			in.DurationNanos += int64(d)
			in.Bytes += bytes
			return
		}
	}
	r.runs[task] = append(ins, &wire.OtelTransfer{From: peer, StartUnixNano: start.UnixNano(),
		DurationNanos: int64(d), Bytes: bytes})
}

// take returns the inputs of the run of task that ended, and forgets
// them.
func (r *runInputs) take(task graph.Key) []*wire.OtelTransfer {
	if !r.on.Load() {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ins := r.runs[task]
	delete(r.runs, task)
	return ins
}

// drop forgets the transfer of the value of k, which the worker dropped.
func (r *runInputs) drop(k graph.Key) {
	if !r.on.Load() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.fetched, k)
}

// reset forgets everything, as the worker drops every value.
func (r *runInputs) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fetched, r.runs = nil, nil
}
