package dashboard

import (
	"strings"
	"sync"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/graph"
)

// DefaultStreamSize is how many task runs a Recorder keeps by default.
const DefaultStreamSize = 10_000

// Recorder keeps what the dashboard shows of a scheduler's diagnostics
// events: the last task runs (the task stream) and the busy time of every
// second of the last hour (the task stream of long windows), the progress
// of each task prefix and of each computation, the task groups, and the
// tasks that failed. Subscribe its Record method to the scheduler's
// events.
//
// Progress follows each task the events name, from its first transition
// until it is forgotten. A prefix counts the tasks the scheduler holds,
// plus those it computed (or that failed) and forgot since the current
// computations began: a computation's bars stay full after it ends, until
// the next computation starts while no task waits or runs. Computations
// keep their own bars after they end, failed ones with their error.
type Recorder struct {
	mu       sync.Mutex
	size     int
	runs     []runRec // ring: the run numbered q is at (q-1) % size
	names    []string // the workers and prefixes of runs, by their index in runRec
	nameIdx  map[string]uint32
	total    uint64 // runs ever recorded
	keys     map[graph.Key]*keyState
	prefixes map[string]*prefixCounts
	order    []*prefixCounts // in order of appearance
	busy     int             // tasks waiting, queued, processing or cancelled

	lastKey    graph.Key // the key of the last transition, and its state
	lastKS     *keyState
	free       []*keyState   // of forgotten keys, for new ones: a computation's worth of garbage saved
	lastPrefix *prefixCounts // the prefix of the last task seen first

	secs secondRing // busy time per second, worker and prefix

	comps     []*compState // newest last
	compByID  map[uint64]*compState
	groups    map[string]*groupState
	groupList []*groupState // in order of appearance
	edges     map[[2]string]int

	errors     []ErrorRecord // ring of the last maxErrors, newest at errorNext-1
	errorNext  int
	errorTotal int
}

// stateIndex numbers the task states the Recorder counts; others count
// as released. (A switch: a map lookup per event cost the scheduler.)
func stateIndex(s string) int {
	switch s {
	case diagnostics.StateWaiting:
		return 1
	case diagnostics.StateQueued:
		return 2
	case diagnostics.StateProcessing:
		return 3
	case diagnostics.StateMemory:
		return 4
	case diagnostics.StateErred:
		return 5
	case diagnostics.StateCancelled:
		return 6
	}
	return 0
}

var stateNames = [numStates]string{"released", "waiting", "queued", "processing", "memory", "erred", "cancelled"}

const (
	numStates  = 7
	processing = 3
	memory     = 4
	erred      = 5
)

func busyState(i int) bool { return i >= 1 && i <= 3 || i == 6 }

type keyState struct {
	prefix *prefixCounts
	comp   *compPrefix // the computation's counts of the prefix, if known
	group  *groupState
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
	return &Recorder{size: size, keys: map[graph.Key]*keyState{}, prefixes: map[string]*prefixCounts{},
		compByID: map[uint64]*compState{}, groups: map[string]*groupState{}, edges: map[[2]string]int{}}
}

// Record takes a batch of events, as a diagnostics.Hub subscriber.
func (r *Recorder) Record(events []diagnostics.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range events {
		e := &events[i]
		switch e.Kind {
		case diagnostics.ComputeStarted:
			if r.busy == 0 {
				r.reset(e.Compute)
			}
			r.computeStarted(e)
		case diagnostics.ComputeFinished:
			r.computeFinished(e)
		case diagnostics.TaskTransition:
			r.transition(e)
			if e.Worker != "" { // else it failed or was cancelled before it ran
				if tr, ok := diagnostics.TaskRecordOf(e); ok {
					r.addRun(&tr)
				}
			}
		}
	}
}

// addRun records the run of a task that stopped running. Called with
// r.mu held.
func (r *Recorder) addRun(tr *diagnostics.TaskRecord) {
	r.total++
	run := TaskRun{Seq: r.total, Worker: tr.Worker, Key: string(tr.Key), Prefix: tr.Prefix, Start: tr.Start,
		Stop: tr.Stop, State: tr.State, Error: tr.Err}
	rec := runRec{key: run.Key, err: run.Error, worker: r.name(run.Worker), prefix: r.name(run.Prefix),
		start: unixNano(run.Start), stop: unixNano(run.Stop), state: uint8(stateIndex(run.State))}
	if len(r.runs) < r.size {
		r.runs = append(r.runs, rec)
	} else {
		r.runs[(r.total-1)%uint64(r.size)] = rec
	}
	r.secs.add(&run)
}

// runRec is a run as the ring keeps it: few pointers, for the garbage
// collector has the whole ring to scan.
type runRec struct {
	key, err       string
	start, stop    int64 // Unix nanoseconds; 0: unknown
	worker, prefix uint32
	state          uint8 // stateIndex of how it ended
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// name returns the index of a worker's or prefix's name. Called with
// r.mu held.
func (r *Recorder) name(s string) uint32 {
	i, ok := r.nameIdx[s]
	if !ok {
		if r.nameIdx == nil {
			r.nameIdx = map[string]uint32{}
		}
		i = uint32(len(r.names))
		r.names = append(r.names, s)
		r.nameIdx[s] = i
	}
	return i
}

// run returns the run numbered q. Called with r.mu held.
func (r *Recorder) run(q uint64) TaskRun {
	rec := &r.runs[(q-1)%uint64(r.size)]
	return TaskRun{Seq: q, Worker: r.names[rec.worker], Key: rec.key, Prefix: r.names[rec.prefix],
		Start: fromUnixNano(rec.start), Stop: fromUnixNano(rec.stop), State: stateNames[rec.state], Error: rec.err}
}

// transition applies a task's change of state. Called with r.mu held.
// The state the task leaves is the one recorded, not the event's From:
// the counts heal if events were dropped.
func (r *Recorder) transition(e *diagnostics.Event) {
	// A task often changes state twice in a row (waiting, then
	// processing; released, then forgotten): the last one is at hand.
	ks := r.lastKS
	if ks == nil || e.Key != r.lastKey {
		ks = r.keys[e.Key]
	}
	if ks == nil {
		if e.To == diagnostics.StateForgotten {
			return
		}
		name := e.Prefix
		if name == "" {
			name = e.Key.Prefix()
		}
		p := r.lastPrefix
		if p == nil || p.name != name {
			if p = r.prefixes[name]; p == nil {
				p = &prefixCounts{name: name}
				r.prefixes[name] = p
				r.order = append(r.order, p)
			}
			r.lastPrefix = p
		}
		if n := len(r.free); n > 0 {
			ks, r.free = r.free[n-1], r.free[:n-1]
		} else {
			ks = &keyState{}
		}
		*ks = keyState{prefix: p, comp: r.compPrefix(e.Compute, name), group: r.group(e.Key, name, e.Compute)}
		r.keys[e.Key] = ks
		if ks.group != nil {
			ks.group.total++
		}
	} else {
		r.leave(ks)
	}
	p := ks.prefix
	switch e.To {
	case diagnostics.StateMemory:
		if !ks.done && ks.comp != nil {
			ks.comp.done++
		}
		ks.done, ks.erred = true, false
		if g := ks.group; g != nil {
			g.bytes += e.Bytes
			g.seconds += e.Duration.Seconds()
		}
	case diagnostics.StateErred:
		if !ks.erred && ks.comp != nil {
			ks.comp.erred++
		}
		ks.done, ks.erred = false, true
		if e.Worker != "" {
			r.addError(e)
		}
	case diagnostics.StateWaiting, diagnostics.StateQueued, diagnostics.StateProcessing:
		if ks.comp != nil {
			if ks.done {
				ks.comp.done--
			}
			if ks.erred {
				ks.comp.erred--
			}
		}
		ks.done, ks.erred = false, false
	case diagnostics.StateForgotten:
		if ks.done {
			p.goneDone++
		} else if ks.erred {
			p.goneErred++
		}
		if g := ks.group; g != nil {
			if ks.done {
				g.goneDone++
			} else if ks.erred {
				g.goneErred++
			}
		}
		delete(r.keys, e.Key)
		r.lastKey, r.lastKS = "", nil
		if len(r.free) < maxFreeKeys {
			*ks = keyState{}
			r.free = append(r.free, ks)
		}
		return
	}
	r.lastKey, r.lastKS = e.Key, ks
	ks.state = stateIndex(e.To)
	p.live[ks.state]++
	if ks.done {
		p.liveDone++
	}
	if ks.erred {
		p.liveErred++
	}
	if ks.comp != nil && ks.state == processing {
		ks.comp.processing++
	}
	if g := ks.group; g != nil {
		g.live[ks.state]++
		if ks.done {
			g.liveDone++
		}
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
	if ks.comp != nil && ks.state == processing {
		ks.comp.processing--
	}
	if g := ks.group; g != nil {
		g.live[ks.state]--
		if ks.done {
			g.liveDone--
		}
	}
	if busyState(ks.state) {
		r.busy--
	}
}

// reset forgets the tasks of the computations that ended, when
// computation comp starts. Called with r.mu held.
func (r *Recorder) reset(comp uint64) {
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
	r.lastPrefix = nil
	r.resetGroups(comp)
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
		ts.Tasks = append(ts.Tasks, r.run(q))
	}
	return ts
}

// WorkerRuns returns the last n runs of worker kept, oldest first.
func (r *Recorder) WorkerRuns(worker string, n int) []TaskRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []TaskRun
	w, ok := r.nameIdx[worker]
	for q := r.total; ok && q > r.total-uint64(len(r.runs)) && len(out) < n; q-- {
		if r.runs[(q-1)%uint64(r.size)].worker == w {
			out = append(out, r.run(q))
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// maxFreeKeys bounds the states of forgotten keys kept for reuse.
const maxFreeKeys = 1 << 17

// maxErrors is how many task errors a Recorder keeps.
const maxErrors = 1000

// addError keeps the error of a task that ran and failed. Called with
// r.mu held.
func (r *Recorder) addError(e *diagnostics.Event) {
	r.errorTotal++
	msg, stack := splitStack(e.Err)
	rec := ErrorRecord{Time: e.Time, Key: string(e.Key), Prefix: e.Key.Prefix(), Op: e.Op, Worker: e.Worker,
		Computation: e.Compute, Error: msg, Stack: stack}
	if len(r.errors) < maxErrors {
		r.errors = append(r.errors, rec)
		r.errorNext = len(r.errors) % maxErrors
		return
	}
	r.errors[r.errorNext] = rec
	r.errorNext = (r.errorNext + 1) % maxErrors
}

// splitStack separates the stack of a panic from an error's message: the
// message of a panic is followed by the goroutine's stack.
func splitStack(msg string) (string, string) {
	if i := strings.Index(msg, "\ngoroutine "); i >= 0 {
		return msg[:i], msg[i+1:]
	}
	return msg, ""
}

// Errors returns the last n errors of tasks that ran and failed (every
// one kept when n <= 0), newest first, and how many there were in all.
func (r *Recorder) Errors(n int) ([]ErrorRecord, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := len(r.errors)
	if n > 0 && n < k {
		k = n
	}
	out := make([]ErrorRecord, 0, k)
	for i := 1; i <= k; i++ {
		out = append(out, r.errors[(r.errorNext-i+len(r.errors))%len(r.errors)])
	}
	return out, r.errorTotal
}
