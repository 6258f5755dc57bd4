package worker

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shoal-data/shoal/diagnostics/dump"
	"github.com/shoal-data/shoal/graph"
)

// The State's logs: the transitions of tasks and the events handled, in
// rings, for the story of a task (Story) and the cluster dump (Dump).

// logState is a state of a task or value in the transition log.
type logState uint8

const (
	stReleased logState = iota
	stWaiting
	stReady
	stExecuting
	stMemory
	stError
	stFetching
	stMissing
	stCancelled
)

var logStateNames = [...]string{stReleased: "released", stWaiting: "waiting", stReady: "ready",
	stExecuting: "executing", stMemory: "memory", stError: "error", stFetching: "fetching", stMissing: "missing",
	stCancelled: "cancelled"}

func (t *wtask) logState() logState {
	switch t.state {
	case ready:
		return stReady
	case executing:
		return stExecuting
	}
	return stWaiting
}

// ring keeps the last max values added.
type ring[T any] struct {
	max  int
	buf  []T
	next int // where the next value goes, once full
}

func (r *ring[T]) add(v T) {
	if len(r.buf) < r.max {
		r.buf = append(r.buf, v)
		return
	}
	r.buf[r.next] = v
	r.next = (r.next + 1) % r.max
}

// each calls f with every value kept, oldest first.
func (r *ring[T]) each(f func(*T)) {
	for i := range r.buf {
		f(&r.buf[(r.next+i)%len(r.buf)])
	}
}

type transition struct {
	key      graph.Key
	err      string
	time     int64 // Unix nanoseconds; 0: unknown
	from, to logState
	cause    uint8 // eventKind of the event handled
}

type eventRec struct {
	key    graph.Key
	detail string
	time   int64
	kind   uint8
}

// The kinds of events, as the logs name them.
const (
	evRunTask uint8 = iota
	evFetchKey
	evReleaseKey
	evCancelTask
	evReset
	evPause
	evResume
	evPut
	evExecuted
	evFetched
	evFailReady
	// evStart is no event but the cause of ready -> executing: the
	// worker starts ready tasks after each batch of events, while
	// threads are free.
	evStart
)

var eventNames = [...]string{evRunTask: "run-task", evFetchKey: "fetch-key", evReleaseKey: "release-key",
	evCancelTask: "cancel-task", evReset: "reset", evPause: "pause", evResume: "resume", evPut: "put",
	evExecuted: "executed", evFetched: "fetched", evFailReady: "fail-ready", evStart: "thread-free"}

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

// logEvent records an event about to be handled, and makes it the cause
// of the transitions that follow.
func (s *State) logEvent(e Event) {
	r := eventRec{time: unixNano(s.now)}
	switch e := e.(type) {
	case *RunTask:
		r.kind, r.key, r.detail = evRunTask, e.Task.Key, e.Task.Op
	case *FetchKey:
		r.kind, r.key, r.detail = evFetchKey, e.Key, "from "+strings.Join(e.From, ", ")
	case *ReleaseKey:
		r.kind, r.key = evReleaseKey, e.Key
	case *CancelTask:
		r.kind, r.key = evCancelTask, e.Key
		if e.Steal {
			r.detail = "to run it elsewhere"
		}
	case *Reset:
		r.kind, r.detail = evReset, fmt.Sprintf("%d tasks, %d values, %d fetches dropped", len(s.tasks), len(s.data),
			len(s.fetches))
	case *Pause:
		r.kind = evResume
		if e.Paused {
			r.kind = evPause
		}
	case *Put:
		r.kind, r.key = evPut, e.Key
	case *FailReady:
		r.kind, r.detail = evFailReady, e.Err.Error()
	case *Executed:
		r.kind, r.key = evExecuted, e.Key
		if e.Err != nil {
			r.detail = e.Err.Error()
		}
	case *Fetched:
		r.kind, r.key = evFetched, e.Key
		if e.Err != nil {
			r.detail = e.Err.Error()
		}
	default:
		return
	}
	s.cause = r.kind
	s.events.add(r)
}

// logTransition records a change of state of key, caused by the event
// logged last; err is the error of a task that failed.
func (s *State) logTransition(k graph.Key, from, to logState, err error) {
	t := transition{key: k, from: from, to: to, time: unixNano(s.now), cause: s.cause}
	if err != nil {
		t.err = err.Error()
	}
	s.trans.add(t)
}

func (t *transition) dump(worker string) dump.Transition {
	return dump.Transition{Time: fromUnixNano(t.time), Key: string(t.key), From: logStateNames[t.from],
		To: logStateNames[t.to], Cause: eventNames[t.cause], Worker: worker, Error: t.err}
}

// Story returns the transitions of keys kept, oldest first, as those of
// the worker named worker.
func (s *State) Story(worker string, keys ...graph.Key) []dump.Transition {
	want := make(map[graph.Key]bool, len(keys))
	for _, k := range keys {
		want[k] = true
	}
	var out []dump.Transition
	s.trans.each(func(t *transition) {
		if want[t.key] {
			out = append(out, t.dump(worker))
		}
	})
	return out
}

// Dump returns the state: the tasks not finished, the values held and
// fetched, the paused flag, and the transitions and events kept, as
// those of the worker named worker. The caller fills Time, MemoryLimit
// and Memory.
func (s *State) Dump(worker string) *dump.WorkerState {
	d := &dump.WorkerState{Threads: s.threads, Paused: s.paused, Tasks: []dump.WorkerTask{},
		Data: make(map[string]int64, len(s.data)), Fetching: []dump.Fetch{}, Transitions: []dump.Transition{},
		Events: []dump.Event{}}
	for _, t := range s.tasks {
		wt := dump.WorkerTask{Key: string(t.key), Op: t.spec.Op, State: logStateNames[t.logState()], Since: t.since,
			Computation: t.comp}
		if t.state == waiting {
			for _, dep := range t.spec.Deps {
				if _, ok := s.data[dep]; !ok {
					wt.Missing = append(wt.Missing, string(dep))
				}
			}
		}
		d.Tasks = append(d.Tasks, wt)
	}
	for k, n := range s.data {
		d.Data[string(k)] = n
	}
	for _, f := range s.fetches {
		if !f.dropped {
			d.Fetching = append(d.Fetching, dump.Fetch{Key: string(f.key), From: f.from, Since: f.since})
		}
	}
	s.trans.each(func(t *transition) { d.Transitions = append(d.Transitions, t.dump(worker)) })
	s.events.each(func(e *eventRec) {
		d.Events = append(d.Events, dump.Event{Time: fromUnixNano(e.time), Kind: eventNames[e.kind],
			Key: string(e.key), Detail: e.detail})
	})
	slices.SortFunc(d.Tasks, func(a, b dump.WorkerTask) int { return strings.Compare(a.Key, b.Key) })
	slices.SortFunc(d.Fetching, func(a, b dump.Fetch) int { return strings.Compare(a.Key, b.Key) })
	return d
}
