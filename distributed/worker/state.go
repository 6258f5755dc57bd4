package worker

import (
	"context"
	"fmt"
	"time"

	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/graph"
)

// State is a worker's own state machine, in the style of the scheduler
// core: events in (the scheduler's instructions, tasks that ended, values
// that arrived from peers), instructions out (run this, fetch that, store
// or drop a value, report to the scheduler). It does no I/O, starts no
// goroutines and reads no clock; the Worker carries out its instructions.
//
// It runs a task once the values of its dependencies are held, at most
// Threads at a time, in the order the scheduler sent them; it fetches the
// dependencies the scheduler announced with FetchKey from the peers that
// hold them, and fails a task whose dependency could not be had with a
// *wire.MissingDataError, which the scheduler answers by computing the
// dependency again.
//
// It keeps the last transitions of its tasks and the last events it
// handled (LogSize of each), for the story of a task and the cluster
// dump; their times are those given to HandleAt.
//
// State is not safe for concurrent use.
type State struct {
	threads   int
	executing int
	seq       uint64
	tasks     map[graph.Key]*wtask
	ready     []*wtask
	readyHead int
	fetches   map[graph.Key]*fetch
	queued    []*fetch // fetches not started, oldest first
	queueHead int
	inFlight  int   // fetches started and not ended
	flyBytes  int64 // their sizes
	data      map[graph.Key]int64
	paused    bool
	out       []Instruction

	now    time.Time // of the events being handled
	cause  uint8     // the kind of the event being handled
	trans  ring[transition]
	events ring[eventRec]
}

type taskState uint8

const (
	waiting taskState = iota
	ready
	executing
)

type wtask struct {
	key       graph.Key
	spec      *graph.Task
	id        int32
	comp      uint64
	received  time.Time // when the scheduler's RunTask came
	readyAt   time.Time // when its inputs were all here
	state     taskState
	missing   int
	seq       uint64
	cancelled bool
	since     time.Time // when it came to its state
}

type fetch struct {
	key     graph.Key
	seq     uint64
	from    []string
	size    int64
	waiters []*wtask
	dropped bool
	started bool
	since   time.Time
}

// LogSize is how many transitions, and how many events, a State keeps.
const LogSize = 10_000

// A worker gets at most MaxFetches values from its peers at once, of at
// most MaxFetchBytes in all (one larger value alone); the other fetches
// wait their turn. A task that needs 200,000 inputs must not start
// 200,000 transfers at once.
const (
	MaxFetches    = 16
	MaxFetchBytes = 128 << 20
)

// NewState returns the state of a worker that runs threads tasks at once.
func NewState(threads int) *State {
	if threads < 1 {
		threads = 1
	}
	return &State{threads: threads, tasks: map[graph.Key]*wtask{}, fetches: map[graph.Key]*fetch{},
		data: map[graph.Key]int64{}, trans: ring[transition]{max: LogSize}, events: ring[eventRec]{max: LogSize}}
}

// Event is something that happened to a worker.
type Event interface{ workerEvent() }

// RunTask asks the worker to compute Task (an instruction of the scheduler)
// for the computation numbered Computation. Time is when it came.
type RunTask struct {
	ID          int32
	Task        *graph.Task
	Computation uint64
	Time        time.Time
}

// FetchKey tells the worker to get the value of Key from one of From
// (worker addresses): a task it will be asked to run needs it.
type FetchKey struct {
	Key  graph.Key
	From []string
	Size int64 // bytes, as the holders reported
}

// ReleaseKey drops the worker's copy of Key.
type ReleaseKey struct{ Key graph.Key }

// CancelTask stops computing Key. With Steal, the scheduler wants it on
// another worker: the worker gives it up only if it has not started it,
// reporting it cancelled; a task it has started it finishes.
type CancelTask struct {
	Key   graph.Key
	Steal bool
}

// Reset drops everything: the scheduler forgot what this worker held.
type Reset struct{}

// Put stores a value a client sent (Client.Scatter): the scheduler will
// ask for Key with RunTask, which is then answered at once.
type Put struct {
	Key   graph.Key
	Value any
	Size  int64
}

// Pause stops starting tasks (Paused true: the process uses more memory
// than the pause threshold) or starts them again (false). Tasks running
// go on; fetches go on.
type Pause struct{ Paused bool }

// FailReady fails, with Err, the tasks that are ready but not started: the
// worker cannot start them (paused on memory it cannot free).
type FailReady struct{ Err error }

// Executed reports that an Execute ended, with the task's value or error.
type Executed struct {
	Key      graph.Key
	Seq      uint64
	Value    any
	Size     int64
	Err      error
	Start    time.Time
	Duration time.Duration
}

// Fetched reports that a StartFetch ended, with the value or an error,
// at Time.
type Fetched struct {
	Key   graph.Key
	Seq   uint64
	Value any
	Size  int64
	Err   error
	Time  time.Time
}

func (*RunTask) workerEvent()    {}
func (*FetchKey) workerEvent()   {}
func (*ReleaseKey) workerEvent() {}
func (*CancelTask) workerEvent() {}
func (*Reset) workerEvent()      {}
func (*Pause) workerEvent()      {}
func (*FailReady) workerEvent()  {}
func (*Put) workerEvent()        {}
func (*Executed) workerEvent()   {}
func (*Fetched) workerEvent()    {}

// Instruction is something the Worker must do.
type Instruction interface{ workerInstruction() }

// Execute runs Task on the values of its dependencies, which are held.
// The Worker reports the end with an Executed event carrying Seq. The
// task came at Received and had its inputs at Ready (the same when it
// waited for none); Computation is RunTask's.
type Execute struct {
	Task        *graph.Task
	ID          int32
	Seq         uint64
	Computation uint64
	Received    time.Time
	Ready       time.Time
}

// StartFetch gets the value of Key from one of From. The Worker reports
// the end with a Fetched event carrying Seq.
type StartFetch struct {
	Key  graph.Key
	From []string
	Seq  uint64
	Size int64 // FetchKey's
}

// Store keeps Value as the value of Key.
type Store struct {
	Key   graph.Key
	Value any
	Size  int64
}

// Drop forgets the value of Key.
type Drop struct{ Key graph.Key }

// DropAll forgets every value.
type DropAll struct{}

// Abort cancels the Execute with Seq.
type Abort struct {
	Key graph.Key
	Seq uint64
}

// Report tells the scheduler that a task ended: with its value held
// (Err nil) or failed.
type Report struct {
	Key      graph.Key
	ID       int32
	Size     int64
	Err      error
	Start    time.Time
	Duration time.Duration
}

// ReportMissing tells the scheduler that Key, which it expects this worker
// to hold, could not be fetched from the peers From.
type ReportMissing struct {
	Key  graph.Key
	From []string
}

func (*Execute) workerInstruction()       {}
func (*StartFetch) workerInstruction()    {}
func (*Store) workerInstruction()         {}
func (*Drop) workerInstruction()          {}
func (*DropAll) workerInstruction()       {}
func (*Abort) workerInstruction()         {}
func (*Report) workerInstruction()        {}
func (*ReportMissing) workerInstruction() {}

// Handle applies events in order and returns the instructions they lead
// to. The slice is reused by the next call. The transitions and events
// it logs have no time: see HandleAt.
func (s *State) Handle(events ...Event) []Instruction { return s.HandleAt(time.Time{}, events...) }

// HandleAt is Handle for events that happened at now: the time of the
// transitions and events it logs.
func (s *State) HandleAt(now time.Time, events ...Event) []Instruction {
	clear(s.out)
	s.out = s.out[:0]
	s.now = now
	for _, e := range events {
		s.logEvent(e)
		switch e := e.(type) {
		case *RunTask:
			s.run(e)
		case *FetchKey:
			s.fetch(e)
		case *ReleaseKey:
			s.release(e.Key)
		case *CancelTask:
			s.cancel(e.Key, e.Steal)
		case *Reset:
			s.reset()
		case *Pause:
			s.paused = e.Paused
		case *FailReady:
			s.failReady(e.Err)
		case *Put:
			s.put(e)
		case *Executed:
			s.executed(e)
		case *Fetched:
			s.fetched(e)
		default:
			panic(fmt.Sprintf("worker: unknown event %T", e))
		}
	}
	s.fill()
	return s.out
}

func (s *State) emit(in Instruction) { s.out = append(s.out, in) }

func (s *State) run(e *RunTask) {
	k := e.Task.Key
	if _, ok := s.tasks[k]; ok {
		return // already here
	}
	if size, ok := s.data[k]; ok {
		s.emit(&Report{Key: k, ID: e.ID, Size: size})
		return
	}
	var missing []string
	for _, d := range e.Task.Deps {
		if _, ok := s.data[d]; ok {
			continue
		}
		if f, ok := s.fetches[d]; ok && !f.dropped {
			continue
		}
		missing = append(missing, string(d))
	}
	if missing != nil {
		err := &wire.MissingDataError{Keys: missing,
			Message: fmt.Sprintf("task %q: dependencies %q are neither held nor being fetched here: %v",
				k, missing, errMissing)}
		s.logTransition(k, stReleased, stError, err)
		s.emit(&Report{Key: k, ID: e.ID, Err: err})
		return
	}
	t := &wtask{key: k, spec: e.Task, id: e.ID, comp: e.Computation, received: e.Time, since: s.now}
	for i, d := range e.Task.Deps {
		if _, ok := s.data[d]; ok {
			continue
		}
		dup := false
		for _, x := range e.Task.Deps[:i] {
			dup = dup || x == d
		}
		if dup {
			continue
		}
		f := s.fetches[d]
		f.waiters = append(f.waiters, t)
		t.missing++
	}
	s.tasks[k] = t
	if t.missing == 0 {
		s.makeReady(t, e.Time, stReleased)
	} else {
		s.logTransition(k, stReleased, stWaiting, nil)
	}
}

var errMissing = fmt.Errorf("missing dependency data")

func (s *State) makeReady(t *wtask, at time.Time, from logState) {
	t.state = ready
	t.readyAt = at
	t.since = s.now
	s.ready = append(s.ready, t)
	s.logTransition(t.key, from, stReady, nil)
}

// fill starts ready tasks while threads are free.
func (s *State) fill() {
	s.cause = evStart
	for !s.paused && s.executing < s.threads && s.readyHead < len(s.ready) {
		t := s.ready[s.readyHead]
		s.ready[s.readyHead] = nil
		s.readyHead++
		if s.tasks[t.key] != t || t.state != ready {
			continue
		}
		t.state = executing
		t.since = s.now
		s.logTransition(t.key, stReady, stExecuting, nil)
		s.executing++
		s.seq++
		t.seq = s.seq
		s.emit(&Execute{Task: t.spec, ID: t.id, Seq: t.seq, Computation: t.comp, Received: t.received,
			Ready: t.readyAt})
	}
	if s.readyHead == len(s.ready) {
		s.ready = s.ready[:0]
		s.readyHead = 0
	} else if s.readyHead > 1024 && 2*s.readyHead > len(s.ready) {
		n := copy(s.ready, s.ready[s.readyHead:])
		clear(s.ready[n:])
		s.ready = s.ready[:n]
		s.readyHead = 0
	}
}

func (s *State) fetch(e *FetchKey) {
	if _, ok := s.data[e.Key]; ok {
		return
	}
	if f, ok := s.fetches[e.Key]; ok {
		f.from = e.From
		if f.dropped {
			f.dropped = false
			s.logTransition(e.Key, stReleased, stFetching, nil)
		}
		return
	}
	s.seq++
	f := &fetch{key: e.Key, seq: s.seq, from: e.From, size: e.Size, since: s.now}
	s.fetches[e.Key] = f
	s.logTransition(e.Key, stReleased, stFetching, nil)
	s.queued = append(s.queued, f)
	s.startFetches()
}

// startFetches starts queued fetches while the limits allow.
func (s *State) startFetches() {
	for s.queueHead < len(s.queued) && s.inFlight < MaxFetches {
		f := s.queued[s.queueHead]
		if s.fetches[f.key] == f && s.inFlight > 0 && s.flyBytes+f.size > MaxFetchBytes {
			break
		}
		s.queued[s.queueHead] = nil
		s.queueHead++
		if s.fetches[f.key] != f {
			continue // forgotten by a reset
		}
		f.started = true
		s.inFlight++
		s.flyBytes += f.size
		s.emit(&StartFetch{Key: f.key, From: f.from, Seq: f.seq, Size: f.size})
	}
	if s.queueHead == len(s.queued) {
		clear(s.queued)
		s.queued = s.queued[:0]
		s.queueHead = 0
	} else if s.queueHead > 1024 && 2*s.queueHead > len(s.queued) {
		n := copy(s.queued, s.queued[s.queueHead:])
		clear(s.queued[n:])
		s.queued = s.queued[:n]
		s.queueHead = 0
	}
}

// FetchQueue returns how many fetches run, and how many wait their turn.
func (s *State) FetchQueue() (running, queued int) {
	return s.inFlight, len(s.queued) - s.queueHead
}

func (s *State) put(e *Put) {
	from := stReleased
	if _, ok := s.data[e.Key]; ok {
		s.emit(&Drop{Key: e.Key})
		from = stMemory
	}
	s.logTransition(e.Key, from, stMemory, nil)
	s.data[e.Key] = e.Size
	s.emit(&Store{Key: e.Key, Value: e.Value, Size: e.Size})
}

func (s *State) release(k graph.Key) {
	if _, ok := s.data[k]; ok {
		delete(s.data, k)
		s.emit(&Drop{Key: k})
		s.logTransition(k, stMemory, stReleased, nil)
	}
	if f, ok := s.fetches[k]; ok && !f.dropped {
		f.dropped = true
		s.logTransition(k, stFetching, stReleased, nil)
	}
}

func (s *State) failReady(err error) {
	for _, t := range s.ready[s.readyHead:] {
		if t == nil || s.tasks[t.key] != t || t.state != ready {
			continue
		}
		delete(s.tasks, t.key)
		s.logTransition(t.key, stReady, stError, err)
		s.emit(&Report{Key: t.key, ID: t.id, Err: err})
	}
	clear(s.ready)
	s.ready = s.ready[:0]
	s.readyHead = 0
}

func (s *State) cancel(k graph.Key, steal bool) {
	t, ok := s.tasks[k]
	if !ok {
		return
	}
	if steal {
		if t.state == executing {
			return // started here: it finishes here
		}
		delete(s.tasks, k)
		s.logTransition(k, t.logState(), stCancelled, nil)
		s.emit(&Report{Key: k, ID: t.id, Err: fmt.Errorf("task %q moved to another worker before it ran: %w", k, context.Canceled)})
		return
	}
	if t.state == executing {
		if !t.cancelled {
			t.cancelled = true
			s.emit(&Abort{Key: k, Seq: t.seq})
		}
		return
	}
	delete(s.tasks, k)
	s.logTransition(k, t.logState(), stCancelled, nil)
	s.emit(&Report{Key: k, ID: t.id, Err: fmt.Errorf("task %q cancelled by the scheduler before it ran: %w", k, context.Canceled)})
}

func (s *State) reset() {
	for _, t := range s.tasks {
		if t.state == executing {
			s.emit(&Abort{Key: t.key, Seq: t.seq})
		}
		s.logTransition(t.key, t.logState(), stReleased, nil)
	}
	for k := range s.fetches {
		s.logTransition(k, stFetching, stReleased, nil)
	}
	clear(s.tasks)
	clear(s.fetches)
	clear(s.queued)
	s.queued, s.queueHead, s.inFlight, s.flyBytes = s.queued[:0], 0, 0, 0
	clear(s.ready)
	s.ready = s.ready[:0]
	s.readyHead = 0
	s.executing = 0
	if len(s.data) > 0 {
		clear(s.data)
	}
	s.emit(&DropAll{})
}

func (s *State) executed(e *Executed) {
	t, ok := s.tasks[e.Key]
	if !ok || t.seq != e.Seq || t.state != executing {
		return // from before a reset
	}
	delete(s.tasks, e.Key)
	s.executing--
	if e.Err != nil {
		s.logTransition(e.Key, stExecuting, stError, e.Err)
		s.emit(&Report{Key: e.Key, ID: t.id, Err: e.Err, Start: e.Start, Duration: e.Duration})
		return
	}
	s.logTransition(e.Key, stExecuting, stMemory, nil)
	s.data[e.Key] = e.Size
	s.emit(&Store{Key: e.Key, Value: e.Value, Size: e.Size})
	s.emit(&Report{Key: e.Key, ID: t.id, Size: e.Size, Start: e.Start, Duration: e.Duration})
}

func (s *State) fetched(e *Fetched) {
	f, ok := s.fetches[e.Key]
	if !ok || f.seq != e.Seq {
		return // from before a reset
	}
	delete(s.fetches, e.Key)
	s.inFlight--
	s.flyBytes -= f.size
	defer s.startFetches()
	if e.Err == nil && !f.dropped {
		s.logTransition(e.Key, stFetching, stMemory, nil)
		s.data[e.Key] = e.Size
		s.emit(&Store{Key: e.Key, Value: e.Value, Size: e.Size})
		for _, t := range f.waiters {
			if s.tasks[t.key] == t && t.state == waiting {
				t.missing--
				if t.missing == 0 {
					s.makeReady(t, e.Time, stWaiting)
				}
			}
		}
		return
	}
	cause := e.Err
	if cause == nil {
		cause = fmt.Errorf("released while it was fetched")
	} else {
		s.logTransition(e.Key, stFetching, stMissing, e.Err)
		s.emit(&ReportMissing{Key: e.Key, From: f.from})
	}
	for _, t := range f.waiters {
		if s.tasks[t.key] == t && t.state == waiting {
			delete(s.tasks, t.key)
			err := &wire.MissingDataError{Keys: []string{string(e.Key)},
				Message: fmt.Sprintf("task %q: fetch dependency %q from %v: %v (%v)", t.key, e.Key, f.from, cause, errMissing)}
			s.logTransition(t.key, stWaiting, stError, err)
			s.emit(&Report{Key: t.key, ID: t.id, Err: err})
		}
	}
}

// Paused reports whether the worker starts no tasks.
func (s *State) Paused() bool { return s.paused }

// Executing returns how many tasks run.
func (s *State) Executing() int { return s.executing }

// Held returns the keys whose values the worker holds, and their sizes.
func (s *State) Held() map[graph.Key]int64 { return s.data }

// Tasks returns how many tasks the worker knows that have not ended.
func (s *State) Tasks() int { return len(s.tasks) }

// Fetching returns how many values are being fetched.
func (s *State) Fetching() int { return len(s.fetches) }

// TaskStates counts the tasks the worker knows by state: "executing",
// "ready" (for a thread), "waiting" (for inputs), and the values it
// holds ("memory") and fetches ("fetching").
func (s *State) TaskStates() map[string]int {
	m := map[string]int{"executing": 0, "ready": 0, "waiting": 0, "fetching": len(s.fetches), "memory": len(s.data)}
	for _, t := range s.tasks {
		switch t.state {
		case executing:
			m["executing"]++
		case ready:
			m["ready"]++
		default:
			m["waiting"]++
		}
	}
	return m
}
