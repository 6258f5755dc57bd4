package scheduler

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/shoal-data/shoal/graph"
)

// Config tunes the scheduler. The zero value gives the defaults.
type Config struct {
	// Saturation is how many tasks a worker gets per thread before further
	// ready tasks wait in the scheduler's queue (rounded up, at least one).
	// Keeping this small keeps memory bounded: root tasks are not started
	// faster than their results can be consumed. Default 1.0.
	Saturation float64
	// AllowedFailures is how many workers may die while running a task
	// before the task is declared erred (it may be what kills them).
	// Default 3.
	AllowedFailures int
	// PauseFraction pauses a worker whose process memory reaches this
	// fraction of its limit: it gets no new tasks until memory falls below.
	// Default 0.8; negative disables pausing.
	PauseFraction float64
	// LogSize is the number of transitions kept for Story and Dump.
	// Default 100,000.
	LogSize int
	// FailUnrunnable fails a ready task that no current worker could run
	// (restricted to absent workers, or needing resources no worker has)
	// instead of queueing it until such a worker joins. The in-process
	// executor sets it: no worker will ever join there.
	FailUnrunnable bool
	// Order computes static priorities of a submitted graph when the event
	// carries none. Default graph.Order.
	Order func(*graph.Graph) []int
	// Steal moves tasks that wait on a busy worker (sent there but not
	// started: it has more tasks than threads) to a worker with an idle
	// thread, when no task is queued and the task's expected compute time
	// (the mean of its prefix so far; unknown counts as worth it) exceeds
	// twice the cost of moving its inputs (StealBandwidth, plus a
	// millisecond). The busy worker is asked with CancelRun{Steal: true}
	// and gives the task up only if it has not started it; when it reports
	// the task cancelled, the task runs on the idle worker.
	Steal bool
	// StealBandwidth is the bytes per second moving inputs between workers
	// is reckoned at (default 100e6).
	StealBandwidth float64
	// Backlog lets a worker take more tasks than Saturation allows when
	// they are short: a task whose prefix has taken d seconds on average
	// so far may be sent while the worker has fewer than Threads*Backlog/d
	// tasks (at most MaxSaturation per thread). Where each message costs
	// a round trip, this keeps workers busy through it; tasks of unknown
	// or long duration keep the Saturation limit. Default 0: off.
	Backlog time.Duration
	// MaxSaturation bounds the tasks per thread that Backlog allows
	// (default 64).
	MaxSaturation float64
	// NoWorkersTimeout fails the tasks waiting for a worker, with a
	// *NoWorkersError, once there has been no worker for that long while
	// they waited (the clock is read from events; send Tick events to
	// have it read when nothing else happens). 0: wait for a worker for
	// ever.
	NoWorkersTimeout time.Duration
}

func (c Config) withDefaults() Config {
	if c.Saturation <= 0 {
		c.Saturation = 1
	}
	if c.AllowedFailures <= 0 {
		c.AllowedFailures = 3
	}
	if c.PauseFraction == 0 {
		c.PauseFraction = 0.8
	}
	if c.LogSize <= 0 {
		c.LogSize = 100_000
	}
	if c.Order == nil {
		c.Order = graph.Order
	}
	if c.MaxSaturation <= 0 {
		c.MaxSaturation = 64
	}
	if c.StealBandwidth <= 0 {
		c.StealBandwidth = 100e6
	}
	return c
}

// ErrMissingData is the error a worker reports (wrapped) when it could not
// get the value of a dependency. The scheduler then computes the dependency
// again instead of counting a failure against the task.
var ErrMissingData = errors.New("missing dependency data")

// KilledWorkerError is the cause of a task that was running on too many
// workers when they died.
type KilledWorkerError struct {
	Key     graph.Key
	Workers []string
	// Causes says why each of Workers was removed (the WorkerRemoved
	// reason: an exit code, a signal, the memory limit, a lost connection),
	// in the same order; it may be shorter than Workers.
	Causes []string
}

func (e *KilledWorkerError) Error() string {
	msg := fmt.Sprintf("task %q was running on %d workers when they died (%v); it may be what kills them",
		e.Key, len(e.Workers), e.Workers)
	if n := len(e.Causes); n > 0 && e.Causes[n-1] != "" {
		msg += "; last cause: " + e.Causes[n-1]
	}
	return msg
}

// MissingKeyError is the cause of a task that depends on a key that is
// neither in its graph nor held by the scheduler.
type MissingKeyError struct {
	Key graph.Key
}

func (e *MissingKeyError) Error() string {
	return fmt.Sprintf("key %q is not held: it was released or never computed", e.Key)
}

// task is the scheduler's record of one task.
type task struct {
	key  graph.Key
	spec *graph.Task
	prio priority

	deps       []*task
	depIDs     []int32 // ids of deps, handed out with Run
	dependents []*task // may hold forgotten tasks; nDependents counts the live ones

	who    []*worker // workers holding the value
	whoBuf [1]*worker
	proc   *worker // worker running it (processing, or cancelled while running)
	nbytes int64

	clients   []clientRef
	clientBuf [1]clientRef

	failure *failure
	lost    []string // workers that died while running it
	lostWhy []string // why each of them was removed

	id          int32 // index in State.byID
	nDependents int32
	nWaitingOn  int32 // while waiting: dependencies not in memory
	waiters     int32 // dependents that still need this value (waiting, queued or processing)
	retries     int32 // retries left
	lostInputs  int32 // runs that failed with a graph.LostInputsError
	heapIdx     int32 // position in the queue, or -1
	state       TaskState
	resubmit    bool // cancelled while running, then needed again
	external    bool // created for a dependency that no graph defined

	stealTo *worker // being moved there (Config.Steal), until its worker answers
	prefer  *worker // where to start it next, when it can
	origin  string  // the client whose graph defined it
	// stealGone: the worker it was being moved to left before its worker
	// answered; a give-up from that worker runs it again elsewhere.
	stealGone bool
}

// clientRef is a client that wants a task, and where it first named the
// task in GraphSubmitted.Keys.
type clientRef struct {
	c   *client
	idx int32
}

type priority struct {
	gen   uint64
	user  int32 // higher first
	order int32
}

func (p priority) less(o priority) bool {
	if p.user != o.user {
		return p.user > o.user
	}
	if p.gen != o.gen {
		return p.gen < o.gen
	}
	return p.order < o.order
}

// failure is why a task erred: the first task that failed and its error.
type failure struct {
	root   graph.Key
	rootOp string
	worker string
	err    error
}

type worker struct {
	info       WorkerInfo
	names      []string // {info.Name}, shared by instructions
	index      int      // order of arrival, for deterministic ties
	state      WorkerState
	slots      int
	maxSlots   int // slots for short tasks (Config.Backlog)
	processing int
	nbytes     int64
	used       map[string]float64 // resources taken by running tasks
	memory     WorkerMemory
	procs      map[*task]struct{} // tasks processing here (Config.Steal)
	incoming   int                // tasks being stolen for it
	outgoing   int                // tasks being stolen from it
}

type client struct {
	id    string
	tasks []*task // the tasks it wants, in order; may hold stale entries
	n     int     // how many tasks list it
}

func (c *client) add(t *task, idx int) {
	if containsClient(t.clients, c) {
		return
	}
	t.clients = append(t.clients, clientRef{c, int32(idx)})
	c.tasks = append(c.tasks, t)
	c.n++
}

func (c *client) remove(t *task) bool {
	for i, x := range t.clients {
		if x.c == c {
			t.clients = append(t.clients[:i], t.clients[i+1:]...)
			c.n--
			return true
		}
	}
	return false
}

// keys returns the keys the client wants, in the order it asked for them.
func (c *client) keys() []graph.Key {
	out := make([]graph.Key, 0, c.n)
	seen := make(map[*task]bool, c.n)
	for _, t := range c.tasks {
		if !seen[t] && containsClient(t.clients, c) {
			seen[t] = true
			out = append(out, t.key)
		}
	}
	return out
}

// State is the scheduling core: it knows every task and worker, decides
// where tasks run and when values can be dropped, and records every
// transition. It does no I/O, starts no goroutines and reads no clock:
// events carry the time.
//
// State is not safe for concurrent use; one goroutine (or a lock) owns it.
type State struct {
	cfg     Config
	tasks   map[graph.Key]*task
	byID    []*task // by id; id 0 is never used
	freeIDs []int32
	workers map[string]*worker
	wlist   []*worker // running, paused or closing workers in order of arrival
	clients map[string]*client

	queue       taskHeap // ready tasks without restrictions
	constrained []*task  // ready tasks with restrictions or resources, by priority

	gen      uint64
	nworkers int
	now      time.Time
	nowNanos int64

	// noWorkersSince is when the queue was last seen with tasks and no
	// worker to run them (Config.NoWorkersTimeout); gone are the last
	// workers removed, newest last, to say why there are none.
	noWorkersSince time.Time
	gone           []goneWorker

	durations map[string]float64 // mean compute seconds by task prefix (Config.Steal, Config.Backlog)
	counts    [numTaskStates]int

	// deferStart queues ready tasks instead of starting them, so that a
	// new graph's tasks start in priority order; needFill asks Handle to
	// hand queued tasks to free slots once the recommendations are drained.
	deferStart bool
	needFill   bool

	log      transitionLog
	stim     stimulus
	out      []Instruction
	runs     arena[Run]
	releases arena[Release]
	results  arena[ReportResult]
	recs     []rec
	rhead    int
}

type rec struct {
	t  *task
	to TaskState
}

type stimulus struct {
	seq  uint64
	kind eventKind
	id   string
}

// New returns an empty scheduler state.
func New(cfg Config) *State {
	cfg = cfg.withDefaults()
	return &State{
		cfg:     cfg,
		tasks:   make(map[graph.Key]*task),
		workers: make(map[string]*worker),
		clients: make(map[string]*client),
		log:     newTransitionLog(cfg.LogSize),

		durations: make(map[string]float64),
	}
}

// Handle applies events in order and returns the instructions they lead
// to, in the order they must be carried out. The returned slice and the
// instructions in it are reused by the next call to Handle: copy what you
// keep.
func (s *State) Handle(events ...Event) []Instruction {
	clear(s.out)
	s.out = s.out[:0]
	s.runs.reset()
	s.releases.reset()
	s.results.reset()
	for _, e := range events {
		m := e.meta()
		if !m.Time.IsZero() {
			s.now = m.Time
			s.nowNanos = m.Time.UnixNano()
		}
		s.stim.seq++
		s.stim.kind = e.kind()
		s.stim.id = m.Stimulus
		switch e := e.(type) {
		case *GraphSubmitted:
			s.handleGraph(e)
		case *TaskFinished:
			s.handleFinished(e)
		case *TaskFailed:
			s.handleFailed(e)
		case *WorkerAdded:
			s.handleWorkerAdded(e)
		case *WorkerRemoved:
			s.handleWorkerRemoved(e)
		case *WorkerRetiring:
			s.handleWorkerRetiring(e)
		case *WorkerMemory:
			s.handleWorkerMemory(e)
		case *KeysReleased:
			s.handleRelease(e.Client, e.Keys, nil)
		case *Cancel:
			reason := e.Reason
			if reason == nil {
				reason = errors.New("cancelled")
			}
			s.handleRelease(e.Client, e.Keys, reason)
		case *Tick:
		case *DataMissing:
			s.handleDataMissing(e)
		default:
			panic(fmt.Sprintf("scheduler: unknown event type %T", e))
		}
		s.drain()
		for s.needFill {
			s.needFill = false
			s.fillAll()
			s.drain()
		}
		s.checkNoWorkers()
	}
	if s.cfg.Steal {
		s.balance()
	}
	return s.out
}

func (s *State) emit(i Instruction) { s.out = append(s.out, i) }

func (s *State) emitRelease(k graph.Key, id int32, workers []string) {
	r := s.releases.new()
	r.Key, r.ID, r.Workers = k, id, workers
	s.emit(r)
}

func (s *State) emitResult(c *client, t *task, index int) {
	r := s.results.new()
	r.Client, r.Key, r.Index, r.ID, r.Workers, r.Size = c.id, t.key, index, t.id, t.whoNames(), t.nbytes
	s.emit(r)
}

func (s *State) recommend(t *task, to TaskState) {
	s.recs = append(s.recs, rec{t, to})
}

// drain carries out recommendations until none are left.
func (s *State) drain() {
	for s.rhead < len(s.recs) {
		r := s.recs[s.rhead]
		s.recs[s.rhead] = rec{}
		s.rhead++
		s.transition(r.t, r.to)
	}
	s.recs = s.recs[:0]
	s.rhead = 0
}

// --- graph submission ---

func (s *State) handleGraph(e *GraphSubmitted) {
	s.gen++
	c := s.client(e.Client)
	g := e.Graph
	if g == nil {
		g = graph.New()
	}
	tasks := g.Tasks()
	var order []int
	if len(tasks) > 0 {
		order = e.Order
		if len(order) != len(tasks) {
			order = s.cfg.Order(g)
		}
	}
	// Create records for the tasks the scheduler does not know, in one
	// allocation. byPos[i] is the record of tasks[i].
	slab := make([]task, len(tasks))
	created := make([]*task, 0, len(tasks))
	createdPos := make([]int32, 0, len(tasks))
	byPos := make([]*task, len(tasks))
	fresh := len(s.tasks) == 0 // nothing to look up
	ndeps := 0
	for i, spec := range tasks {
		if !fresh {
			if old, ok := s.tasks[spec.Key]; ok {
				byPos[i] = old
				continue
			}
		}
		t := &slab[len(created)]
		byPos[i] = t
		createdPos = append(createdPos, int32(i))
		t.key, t.spec, t.state, t.heapIdx, t.origin = spec.Key, spec, Released, -1, e.Client
		s.assignID(t)
		t.prio = priority{user: int32(spec.Priority + e.Priority), gen: s.gen, order: int32(order[i])}
		t.retries = int32(spec.Retries)
		t.who = t.whoBuf[:0]
		t.clients = t.clientBuf[:0]
		s.tasks[spec.Key] = t
		s.counts[Released]++
		created = append(created, t)
		ndeps += len(spec.Deps)
	}
	// Link dependencies. Dependencies outside the graph must be known.
	depBuf := make([]*task, 0, ndeps)
	idBuf := make([]int32, 0, ndeps)
	for ci, t := range created {
		start := len(depBuf)
		pos := g.DepPositions(int(createdPos[ci]))
		for j, dk := range t.spec.Deps {
			var d *task
			if p := pos[j]; p >= 0 {
				d = byPos[p]
			} else if x, ok := s.tasks[dk]; ok {
				d = x
			} else {
				d = s.missingTask(dk)
			}
			depBuf = append(depBuf, d)
			idBuf = append(idBuf, d.id)
			d.dependents = append(d.dependents, t)
			d.nDependents++
		}
		t.deps = depBuf[start:len(depBuf):len(depBuf)]
		t.depIDs = idBuf[start:len(idBuf):len(idBuf)]
	}
	s.deferStart = true
	defer func() { s.deferStart = false }()
	for i, k := range e.Keys {
		t, ok := s.tasks[k]
		if !ok {
			s.emit(&ReportError{Client: c.id, Key: k, Index: i, Err: &graph.TaskError{Key: k, Root: k,
				Err: fmt.Errorf("key %q is neither in the submitted graph nor held by the scheduler", k)}})
			continue
		}
		c.add(t, i)
		switch t.state {
		case Memory:
			s.emitResult(c, t, i)
		case Erred:
			s.emit(&ReportError{Client: c.id, Key: k, Index: i, Err: t.taskError()})
		case Released:
			s.recommend(t, Waiting)
		}
	}
	s.drain()
	// Tasks of the graph that no wanted key needs are dropped at once.
	for _, t := range created {
		s.checkForget(t)
	}
	// The queue was filled without ordering it: order it once.
	s.queue.init()
	if c.n == 0 {
		delete(s.clients, c.id)
	}
}

// missingTask records a dependency that no graph defines and the
// scheduler does not hold: an erred placeholder, so its dependents fail
// with a clear error.
func (s *State) missingTask(k graph.Key) *task {
	t := &task{key: k, spec: &graph.Task{Key: k}, state: Released, heapIdx: -1, external: true}
	s.assignID(t)
	t.who = t.whoBuf[:0]
	t.clients = t.clientBuf[:0]
	t.failure = &failure{root: k, err: &MissingKeyError{Key: k}}
	s.tasks[k] = t
	s.counts[Released]++
	s.setState(t, Erred)
	return t
}

func (s *State) client(id string) *client {
	c, ok := s.clients[id]
	if !ok {
		c = &client{id: id}
		s.clients[id] = c
	}
	return c
}

// --- task results ---

// lookup finds the task of an event by id when the event has one.
func (s *State) lookup(k graph.Key, id int32) (*task, bool) {
	if id > 0 && int(id) < len(s.byID) {
		if t := s.byID[id]; t != nil && t.key == k {
			return t, true
		}
	}
	t, ok := s.tasks[k]
	return t, ok
}

func (s *State) assignID(t *task) {
	if n := len(s.freeIDs); n > 0 {
		t.id = s.freeIDs[n-1]
		s.freeIDs = s.freeIDs[:n-1]
	} else {
		if len(s.byID) == 0 {
			s.byID = append(s.byID, nil)
		}
		t.id = int32(len(s.byID))
		s.byID = append(s.byID, nil)
	}
	s.byID[t.id] = t
}

func (s *State) handleFinished(e *TaskFinished) {
	t, ok := s.lookup(e.Key, e.ID)
	w := s.workers[e.Worker]
	if !ok || w == nil || t.proc != w {
		// A result nobody asked for (stale, or from a worker that left).
		if w != nil && w.state != WorkerGone && (!ok || !t.holds(w)) {
			s.emit(&Release{Key: e.Key, Workers: w.names})
		}
		return
	}
	s.endSteal(t)
	t.stealGone = false
	if e.Duration > 0 && (s.cfg.Steal || s.cfg.Backlog > 0) {
		p := t.key.Prefix()
		d := e.Duration.Seconds()
		if old, ok := s.durations[p]; ok {
			d = 0.8*old + 0.2*d
		}
		s.durations[p] = d
	}
	s.freeSlot(t, w)
	if t.state == Cancelled && !t.resubmit && t.waiters == 0 && len(t.clients) == 0 {
		s.emitRelease(t.key, t.id, w.names)
		s.setState(t, Released)
		s.checkForget(t)
		return
	}
	t.resubmit = false
	t.nbytes = e.Size
	t.who = append(t.who, w)
	w.nbytes += e.Size
	s.setState(t, Memory)
	for _, c := range t.clients {
		s.emitResult(c.c, t, int(c.idx))
	}
	s.checkNeeded(t)
}

func (s *State) handleFailed(e *TaskFailed) {
	t, ok := s.lookup(e.Key, e.ID)
	w := s.workers[e.Worker]
	if !ok || w == nil || t.proc != w {
		return
	}
	to, stolen := t.stealTo, t.stealTo != nil || t.stealGone
	s.endSteal(t)
	t.stealGone = false
	s.freeSlot(t, w)
	switch {
	case stolen && t.state == Processing && errors.Is(e.Err, context.Canceled):
		// Given up by a busy worker: run it on the idle one (or, when
		// that one left meanwhile, wherever it can).
		s.setState(t, Released)
		t.prefer = to
		s.recommend(t, Waiting)
	case t.state == Cancelled && !t.resubmit:
		s.setState(t, Released)
		s.checkForget(t)
	case t.state == Cancelled:
		t.resubmit = false
		s.setState(t, Released)
		s.recommend(t, Waiting)
	case errors.Is(e.Err, ErrMissingData):
		// Its worker could not get an input: wait for it again, keeping
		// the inputs that are in memory (the scheduler heard which are
		// missing, DataMissing).
		s.toWaiting(t)
	case t.state == Processing && s.lostInputs(t, e.Err):
		// Its dependencies are computed again, then it runs again.
	case t.retries > 0:
		t.retries--
		s.setState(t, Released)
		s.recommend(t, Waiting)
	default:
		t.failure = &failure{root: t.key, rootOp: graph.DisplayOp(t.spec), worker: w.info.Name, err: e.Err}
		var inner *graph.InnerTaskError
		if errors.As(e.Err, &inner) {
			t.failure.root, t.failure.rootOp, t.failure.err = inner.Key, inner.Op, inner.Err
		}
		s.recommend(t, Erred)
	}
}

// --- workers ---

func (s *State) handleWorkerAdded(e *WorkerAdded) {
	info := e.Worker
	if old, ok := s.workers[info.Name]; ok && old.state != WorkerGone {
		// A worker that reconnects under the same name: start afresh.
		s.removeWorker(old, "replaced by a new worker of the same name", false)
	}
	if info.Threads <= 0 {
		info.Threads = 1
	}
	slots := int(math.Ceil(float64(info.Threads) * s.cfg.Saturation))
	if slots < 1 {
		slots = 1
	}
	maxSlots := slots
	if s.cfg.Backlog > 0 {
		maxSlots = max(slots, int(math.Ceil(float64(info.Threads)*s.cfg.MaxSaturation)))
	}
	w := &worker{info: info, names: []string{info.Name}, index: s.nworkers, slots: slots, maxSlots: maxSlots,
		used: map[string]float64{}, procs: map[*task]struct{}{}}
	s.nworkers++
	s.workers[info.Name] = w
	s.wlist = append(s.wlist, w)
	s.needFill = true
}

func (s *State) handleWorkerRemoved(e *WorkerRemoved) {
	w, ok := s.workers[e.Worker]
	if !ok || w.state == WorkerGone {
		return
	}
	s.removeWorker(w, e.Reason, e.Safe)
}

func (s *State) removeWorker(w *worker, reason string, safe bool) {
	w.state = WorkerGone
	if len(s.gone) == maxGone {
		s.gone = append(s.gone[:0], s.gone[1:]...)
	}
	s.gone = append(s.gone, goneWorker{name: w.info.Name, reason: reason})
	delete(s.workers, w.info.Name)
	for i, x := range s.wlist {
		if x == w {
			s.wlist = append(s.wlist[:i], s.wlist[i+1:]...)
			break
		}
	}
	// Deterministic order: walk tasks by the order of the worker list is
	// not possible, so collect and sort by priority.
	var running, held []*task
	for _, t := range s.tasks {
		if t.stealTo == w && t.proc != w {
			t.stealGone = true
		}
		if t.proc == w {
			t.stealGone = false
		}
		if t.proc == w || t.stealTo == w {
			s.endSteal(t)
		}
		if t.prefer == w {
			t.prefer = nil
		}
		if t.proc == w {
			running = append(running, t)
		}
		if t.holds(w) {
			held = append(held, t)
		}
	}
	sortByPriority(running)
	sortByPriority(held)
	for _, t := range running {
		s.freeSlot(t, w)
		if t.state == Cancelled && !t.resubmit {
			s.setState(t, Released)
			s.checkForget(t)
			continue
		}
		t.resubmit = false
		if safe {
			s.setState(t, Released)
			s.recommend(t, Waiting)
			continue
		}
		t.lost = append(t.lost, w.info.Name)
		t.lostWhy = append(t.lostWhy, reason)
		if len(t.lost) >= s.cfg.AllowedFailures {
			t.failure = &failure{root: t.key, rootOp: graph.DisplayOp(t.spec), worker: w.info.Name,
				err: &KilledWorkerError{Key: t.key, Workers: t.lost, Causes: t.lostWhy}}
			if t.state == Cancelled {
				s.setState(t, Released)
			}
			s.recommend(t, Erred)
			continue
		}
		s.setState(t, Released)
		s.recommend(t, Waiting)
	}
	for _, t := range held {
		s.loseCopy(t, w)
	}
	w.nbytes = 0
	s.needFill = true
}

// loseCopy forgets that w holds t's value; a value held nowhere else is
// computed again when it is still needed.
func (s *State) loseCopy(t *task, w *worker) {
	t.dropHolder(w)
	w.nbytes -= t.nbytes
	if len(t.who) == 0 && t.state == Memory {
		s.setState(t, Released)
		if t.waiters > 0 || len(t.clients) > 0 {
			s.recommend(t, Waiting)
		} else {
			s.checkForget(t)
		}
	}
}

func (s *State) handleDataMissing(e *DataMissing) {
	w, ok := s.workers[e.Worker]
	if !ok || w.state == WorkerGone {
		return
	}
	for _, k := range e.Keys {
		if t, ok := s.tasks[k]; ok && t.holds(w) {
			s.loseCopy(t, w)
		}
	}
}

func (s *State) handleWorkerRetiring(e *WorkerRetiring) {
	if w, ok := s.workers[e.Worker]; ok && w.state != WorkerGone {
		w.state = WorkerClosing
	}
}

func (s *State) handleWorkerMemory(e *WorkerMemory) {
	w, ok := s.workers[e.Worker]
	if !ok {
		return
	}
	w.memory = *e
	if s.cfg.PauseFraction < 0 || w.info.MemoryLimit <= 0 {
		return
	}
	over := float64(e.Process) >= s.cfg.PauseFraction*float64(w.info.MemoryLimit)
	switch {
	case over && w.state == WorkerRunning:
		w.state = WorkerPaused
	case !over && w.state == WorkerPaused:
		w.state = WorkerRunning
		s.needFill = true
	}
}

// --- releasing and cancelling ---

func (s *State) handleRelease(clientID string, keys []graph.Key, cancel error) {
	c, ok := s.clients[clientID]
	if !ok {
		return
	}
	var ts []*task
	if keys == nil {
		ts = c.tasks
	} else {
		for _, k := range keys {
			if t, ok := s.tasks[k]; ok {
				ts = append(ts, t)
			}
		}
	}
	for _, t := range ts {
		k := t.key
		idx := -1
		for _, x := range t.clients {
			if x.c == c {
				idx = int(x.idx)
			}
		}
		if !c.remove(t) {
			continue
		}
		if cancel != nil && t.state != Memory && t.state != Erred {
			s.emit(&ReportError{Client: c.id, Key: k, Index: idx, Err: cancel})
		}
		s.checkNeeded(t)
	}
	if c.n == 0 {
		delete(s.clients, c.id)
	} else if len(c.tasks) > 2*c.n+16 {
		live := c.tasks[:0]
		for _, t := range c.tasks {
			if containsClient(t.clients, c) {
				live = append(live, t)
			}
		}
		clear(c.tasks[len(live):])
		c.tasks = live
	}
}

// checkNeeded releases t's value, or stops its computation, when neither a
// client nor a dependent needs it.
func (s *State) checkNeeded(t *task) {
	if t.waiters > 0 || len(t.clients) > 0 {
		return
	}
	switch t.state {
	case Memory:
		s.recommend(t, Released)
	case Waiting, Queued, Processing:
		s.recommend(t, Cancelled)
	case Cancelled:
		t.resubmit = false
	case Released, Erred:
		s.checkForget(t)
	}
}

// checkForget forgets t when nothing refers to it any more.
func (s *State) checkForget(t *task) {
	if t.nDependents == 0 && len(t.clients) == 0 && t.waiters == 0 &&
		(t.state == Released || t.state == Erred) {
		s.recommend(t, Forgotten)
	}
}

// --- helpers on tasks and workers ---

func (t *task) holds(w *worker) bool {
	for _, x := range t.who {
		if x == w {
			return true
		}
	}
	return false
}

func (t *task) dropHolder(w *worker) {
	for i, x := range t.who {
		if x == w {
			t.who = append(t.who[:i], t.who[i+1:]...)
			return
		}
	}
}

func (t *task) whoNames() []string {
	if len(t.who) == 1 {
		return t.who[0].names
	}
	names := make([]string, len(t.who))
	for i, w := range t.who {
		names[i] = w.info.Name
	}
	return names
}

func (t *task) taskError() *graph.TaskError {
	f := t.failure
	if f == nil {
		return &graph.TaskError{Key: t.key, Op: graph.DisplayOp(t.spec), Root: t.key, RootOp: graph.DisplayOp(t.spec),
			Err: errors.New("unknown failure")}
	}
	return &graph.TaskError{Key: t.key, Op: graph.DisplayOp(t.spec), Root: f.root, RootOp: f.rootOp, Worker: f.worker, Err: f.err}
}

// endSteal forgets that t was being stolen.
func (s *State) endSteal(t *task) {
	if t.stealTo == nil {
		return
	}
	t.stealTo.incoming--
	if t.proc != nil {
		t.proc.outgoing--
	}
	t.stealTo = nil
}

func (s *State) freeSlot(t *task, w *worker) {
	s.needFill = true
	t.proc = nil
	w.processing--
	delete(w.procs, t)
	for r, n := range t.spec.Resources {
		w.used[r] -= n
	}
}
