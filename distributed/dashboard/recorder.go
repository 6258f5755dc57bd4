package dashboard

import (
	"sync"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/graph"
)

// DefaultStreamSize is how many task runs a Recorder keeps by default.
const DefaultStreamSize = 10_000

// Recorder keeps what the dashboard shows of a scheduler's diagnostics
// events: the last task runs (the task stream) and the progress of each
// task prefix. Subscribe its Record method to the scheduler's events.
//
// Progress follows each task the events name, from its first transition
// until it is forgotten. A prefix counts the tasks the scheduler holds,
// plus those it computed (or that failed) and forgot since the current
// computations began: a computation's bars stay full after it ends, until
// the next computation starts while no task waits or runs.
type Recorder struct {
	mu       sync.Mutex
	size     int
	runs     []TaskRun // ring: the run numbered q is at (q-1) % size
	total    uint64    // runs ever recorded
	keys     map[graph.Key]*keyState
	prefixes map[string]*prefixCounts
	order    []*prefixCounts // in order of appearance
	busy     int             // tasks waiting, queued, processing or cancelled
}

// The task states the Recorder counts; others count as released.
var stateIndex = map[string]int{
	diagnostics.StateReleased:   0,
	diagnostics.StateWaiting:    1,
	diagnostics.StateQueued:     2,
	diagnostics.StateProcessing: 3,
	diagnostics.StateMemory:     4,
	diagnostics.StateErred:      5,
	diagnostics.StateCancelled:  6,
}

const (
	numStates  = 7
	processing = 3
	memory     = 4
)

func busyState(i int) bool { return i >= 1 && i <= 3 || i == 6 }

type keyState struct {
	prefix *prefixCounts
	state  int
	done   bool // computed, and not to be computed again since
	erred  bool // failed, and not to be computed again since
}

type prefixCounts struct {
	name      string
	live      [numStates]int // tasks held, by state
	liveDone  int            // tasks held that are done
	liveErred int            // tasks held that erred
	goneDone  int            // tasks done and forgotten since the reset
	goneErred int            // tasks erred and forgotten since the reset
}

func (p *prefixCounts) held() int {
	n := 0
	for _, c := range p.live {
		n += c
	}
	return n
}

// NewRecorder returns a recorder that keeps the last size task runs
// (DefaultStreamSize when size <= 0).
func NewRecorder(size int) *Recorder {
	if size <= 0 {
		size = DefaultStreamSize
	}
	return &Recorder{size: size, keys: map[graph.Key]*keyState{}, prefixes: map[string]*prefixCounts{}}
}

// Record takes a batch of events, as a diagnostics.Hub subscriber.
func (r *Recorder) Record(events []diagnostics.Event) {
	runs := diagnostics.TaskStream(events)
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range events {
		e := &events[i]
		switch e.Kind {
		case diagnostics.ComputeStarted:
			if r.busy == 0 {
				r.reset()
			}
		case diagnostics.TaskTransition:
			r.transition(e)
		}
	}
	for i := range runs {
		tr := &runs[i]
		if tr.Worker == "" {
			continue // failed or cancelled before it ran
		}
		r.total++
		run := TaskRun{Seq: r.total, Worker: tr.Worker, Key: string(tr.Key), Prefix: tr.Prefix, Start: tr.Start,
			Stop: tr.Stop, State: tr.State, Error: tr.Err}
		if len(r.runs) < r.size {
			r.runs = append(r.runs, run)
		} else {
			r.runs[(r.total-1)%uint64(r.size)] = run
		}
	}
}

// transition applies a task's change of state. Called with r.mu held.
// The state the task leaves is the one recorded, not the event's From:
// the counts heal if events were dropped.
func (r *Recorder) transition(e *diagnostics.Event) {
	ks := r.keys[e.Key]
	if ks == nil {
		if e.To == diagnostics.StateForgotten {
			return
		}
		name := e.Prefix
		if name == "" {
			name = e.Key.Prefix()
		}
		p := r.prefixes[name]
		if p == nil {
			p = &prefixCounts{name: name}
			r.prefixes[name] = p
			r.order = append(r.order, p)
		}
		ks = &keyState{prefix: p}
		r.keys[e.Key] = ks
	} else {
		r.leave(ks)
	}
	p := ks.prefix
	switch e.To {
	case diagnostics.StateMemory:
		ks.done, ks.erred = true, false
	case diagnostics.StateErred:
		ks.done, ks.erred = false, true
	case diagnostics.StateWaiting, diagnostics.StateQueued, diagnostics.StateProcessing:
		ks.done, ks.erred = false, false
	case diagnostics.StateForgotten:
		if ks.done {
			p.goneDone++
		} else if ks.erred {
			p.goneErred++
		}
		delete(r.keys, e.Key)
		return
	}
	ks.state = stateIndex[e.To]
	p.live[ks.state]++
	if ks.done {
		p.liveDone++
	}
	if ks.erred {
		p.liveErred++
	}
	if busyState(ks.state) {
		r.busy++
	}
}

// leave takes a task out of the counts of its state. Called with r.mu
// held.
func (r *Recorder) leave(ks *keyState) {
	p := ks.prefix
	p.live[ks.state]--
	if ks.done {
		p.liveDone--
	}
	if ks.erred {
		p.liveErred--
	}
	if busyState(ks.state) {
		r.busy--
	}
}

// reset forgets the tasks of the computations that ended. Called with
// r.mu held.
func (r *Recorder) reset() {
	keep := r.order[:0]
	for _, p := range r.order {
		p.goneDone, p.goneErred = 0, 0
		if p.held() == 0 {
			delete(r.prefixes, p.name)
			continue
		}
		keep = append(keep, p)
	}
	clear(r.order[len(keep):])
	r.order = keep
}

// Progress returns the progress of each prefix, in the order the
// prefixes first appeared.
func (r *Recorder) Progress() []Progress {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Progress, 0, len(r.order))
	for _, p := range r.order {
		pr := Progress{Prefix: p.name, Total: p.held() + p.goneDone + p.goneErred, Done: p.liveDone + p.goneDone,
			Memory: p.live[memory], Erred: p.liveErred + p.goneErred, Processing: p.live[processing]}
		if pr.Total > 0 {
			out = append(out, pr)
		}
	}
	return out
}

// Count returns the number of task runs recorded so far.
func (r *Recorder) Count() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

// TaskStream returns the runs recorded after the first since, oldest
// first: the last limit of them when limit > 0. A since beyond the runs
// recorded (from before the scheduler restarted) gets every run kept.
func (r *Recorder) TaskStream(since uint64, limit int) *TaskStream {
	r.mu.Lock()
	defer r.mu.Unlock()
	if since > r.total {
		since = 0
	}
	start := max(since, r.total-uint64(len(r.runs)))
	if limit > 0 && r.total-start > uint64(limit) {
		start = r.total - uint64(limit)
	}
	ts := &TaskStream{Tasks: make([]TaskRun, 0, r.total-start), Next: r.total, Missed: start - since}
	for q := start + 1; q <= r.total; q++ {
		ts.Tasks = append(ts.Tasks, r.runs[(q-1)%uint64(r.size)])
	}
	return ts
}
