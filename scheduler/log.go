package scheduler

import (
	"encoding/json"
	"time"

	"github.com/shoal-data/shoal/graph"
)

// Transition is one change of a task's state.
type Transition struct {
	Seq      uint64    `json:"seq"`                // number of the event that caused it
	Key      graph.Key `json:"key"`                // the task
	From     TaskState `json:"from"`               // its old state
	To       TaskState `json:"to"`                 // its new state
	Cause    string    `json:"cause"`              // kind of event, such as "task-finished"
	Stimulus string    `json:"stimulus,omitempty"` // the event's stimulus id, if it had one
	Time     time.Time `json:"time"`
}

// logEntry is the compact form of a Transition kept in the log.
type logEntry struct {
	key      graph.Key
	stimulus string
	seq      uint64
	time     int64 // Unix nanoseconds; 0 for the zero time
	from, to TaskState
	cause    eventKind
}

func (e *logEntry) transition() Transition {
	t := Transition{Seq: e.seq, Key: e.key, From: e.from, To: e.to, Cause: eventKindNames[e.cause], Stimulus: e.stimulus}
	if e.time != 0 {
		t.Time = time.Unix(0, e.time).UTC()
	}
	return t
}

// transitionLog keeps the most recent transitions in a ring.
type transitionLog struct {
	max   int
	buf   []logEntry
	next  int    // position of the next write
	total uint64 // transitions ever written
}

func newTransitionLog(n int) transitionLog {
	return transitionLog{max: n, buf: make([]logEntry, 0, n)}
}

func (l *transitionLog) add(t logEntry) {
	if len(l.buf) < l.max {
		l.buf = append(l.buf, t)
	} else {
		l.buf[l.next] = t
	}
	l.next++
	if l.next == l.max {
		l.next = 0
	}
	l.total++
}

// all returns the kept transitions, oldest first.
func (l *transitionLog) all() []Transition {
	out := make([]Transition, 0, len(l.buf))
	if len(l.buf) < l.max {
		for i := range l.buf {
			out = append(out, l.buf[i].transition())
		}
		return out
	}
	for i := l.next; i < len(l.buf); i++ {
		out = append(out, l.buf[i].transition())
	}
	for i := 0; i < l.next; i++ {
		out = append(out, l.buf[i].transition())
	}
	return out
}

// Transitions returns the kept transitions, oldest first.
func (s *State) Transitions() []Transition { return s.log.all() }

// TransitionCount returns how many transitions happened since the start.
func (s *State) TransitionCount() uint64 { return s.log.total }

// TransitionsSince appends to buf the transitions after the first n ever
// made (as counted by TransitionCount) that are still kept, and returns it.
// Executors use it to publish transitions as they happen.
func (s *State) TransitionsSince(n uint64, buf []Transition) []Transition {
	l := &s.log
	if n >= l.total {
		return buf
	}
	missing := l.total - n
	if missing > uint64(len(l.buf)) {
		missing = uint64(len(l.buf))
	}
	start := l.next - int(missing)
	if start < 0 {
		start += len(l.buf)
	}
	for i := uint64(0); i < missing; i++ {
		buf = append(buf, l.buf[start].transition())
		start++
		if start == len(l.buf) {
			start = 0
		}
	}
	return buf
}

// Story returns the kept transitions of the given keys, oldest first: how
// each came to be in its state.
func (s *State) Story(keys ...graph.Key) []Transition {
	want := make(map[graph.Key]bool, len(keys))
	for _, k := range keys {
		want[k] = true
	}
	var out []Transition
	for _, t := range s.log.all() {
		if want[t.Key] {
			out = append(out, t)
		}
	}
	return out
}

// TaskInfo describes one task for Dump and Task.
type TaskInfo struct {
	Key          graph.Key   `json:"key"`
	Op           string      `json:"op"`
	State        TaskState   `json:"state"`
	Priority     [3]int64    `json:"priority"`
	Deps         []graph.Key `json:"deps,omitempty"`
	WaitingOn    int         `json:"waiting_on,omitempty"`
	Waiters      int         `json:"waiters,omitempty"`
	Who          []string    `json:"who_has,omitempty"`
	ProcessingOn string      `json:"processing_on,omitempty"`
	Bytes        int64       `json:"nbytes,omitempty"`
	Clients      []string    `json:"clients,omitempty"`
	Retries      int         `json:"retries_left,omitempty"`
	Error        string      `json:"error,omitempty"`
}

// WorkerStatus describes one worker for Dump and Workers.
type WorkerStatus struct {
	WorkerInfo
	State      WorkerState `json:"state"`
	Slots      int         `json:"slots"`
	Processing int         `json:"processing"`
	Bytes      int64       `json:"nbytes"`
	Memory     struct {
		Managed, Process, Spilled int64
	} `json:"memory"`
}

func (s *State) taskInfo(t *task) TaskInfo {
	ti := TaskInfo{Key: t.key, Op: t.spec.Op, State: t.state,
		Priority:  [3]int64{int64(t.prio.user), int64(t.prio.gen), int64(t.prio.order)},
		WaitingOn: int(t.nWaitingOn), Waiters: int(t.waiters), Bytes: t.nbytes, Retries: int(t.retries)}
	for _, d := range t.deps {
		ti.Deps = append(ti.Deps, d.key)
	}
	for _, w := range t.who {
		ti.Who = append(ti.Who, w.info.Name)
	}
	if t.proc != nil {
		ti.ProcessingOn = t.proc.info.Name
	}
	for _, c := range t.clients {
		ti.Clients = append(ti.Clients, c.c.id)
	}
	if t.state == Erred {
		ti.Error = t.taskError().Error()
	}
	return ti
}

// Task returns what the scheduler knows of key.
func (s *State) Task(key graph.Key) (TaskInfo, bool) {
	t, ok := s.tasks[key]
	if !ok {
		return TaskInfo{}, false
	}
	return s.taskInfo(t), true
}

// Tasks returns what the scheduler knows of every task it holds, by key.
func (s *State) Tasks() []TaskInfo {
	keys := make([]graph.Key, 0, len(s.tasks))
	for k := range s.tasks {
		keys = append(keys, k)
	}
	sortKeys(keys)
	out := make([]TaskInfo, len(keys))
	for i, k := range keys {
		out[i] = s.taskInfo(s.tasks[k])
	}
	return out
}

// Clients returns the keys each client holds or waits for, by client.
func (s *State) Clients() map[string][]graph.Key {
	out := make(map[string][]graph.Key, len(s.clients))
	for id, c := range s.clients {
		out[id] = c.keys()
	}
	return out
}

// Clock returns the time of the last event handled.
func (s *State) Clock() time.Time { return s.now }

// Workers returns the current workers in order of arrival.
func (s *State) Workers() []WorkerStatus {
	out := make([]WorkerStatus, len(s.wlist))
	for i, w := range s.wlist {
		out[i] = WorkerStatus{WorkerInfo: w.info, State: w.state, Slots: w.slots,
			Processing: w.processing, Bytes: w.nbytes}
		out[i].Memory.Managed, out[i].Memory.Process, out[i].Memory.Spilled = w.memory.Managed, w.memory.Process, w.memory.Spilled
	}
	return out
}

// Running returns the keys of the tasks a worker runs (or was sent to
// run), in key order.
func (s *State) Running(worker string) []graph.Key {
	w, ok := s.workers[worker]
	if !ok {
		return nil
	}
	keys := make([]graph.Key, 0, len(w.procs))
	for t := range w.procs {
		keys = append(keys, t.key)
	}
	sortKeys(keys)
	return keys
}

// HeldCounts returns how many values each worker holds, by worker name.
func (s *State) HeldCounts() map[string]int {
	m := make(map[string]int, len(s.wlist))
	for _, w := range s.wlist {
		m[w.info.Name] = 0
	}
	for _, t := range s.tasks {
		for _, w := range t.who {
			m[w.info.Name]++
		}
	}
	return m
}

// Counts returns the number of tasks in each state.
func (s *State) Counts() map[TaskState]int {
	m := make(map[TaskState]int)
	for st := TaskState(0); st < numTaskStates; st++ {
		if st != Forgotten && s.counts[st] != 0 {
			m[st] = s.counts[st]
		}
	}
	return m
}

// NumTasks returns how many tasks the scheduler knows.
func (s *State) NumTasks() int { return len(s.tasks) }

// Dump returns the whole state as JSON: every task, worker and client, and
// the kept transitions. Use it to inspect a scheduler after the fact.
func (s *State) Dump() ([]byte, error) {
	d := struct {
		Time        time.Time              `json:"time"`
		Tasks       []TaskInfo             `json:"tasks"`
		Workers     []WorkerStatus         `json:"workers"`
		Clients     map[string][]graph.Key `json:"clients"`
		Counts      map[string]int         `json:"counts"`
		Transitions []Transition           `json:"transitions"`
	}{Time: s.now, Tasks: s.Tasks(), Workers: s.Workers(), Clients: s.Clients(), Counts: map[string]int{},
		Transitions: s.log.all()}
	for st, n := range s.Counts() {
		d.Counts[st.String()] = n
	}
	return json.MarshalIndent(d, "", "  ")
}

// Wants returns how many distinct keys client holds or waits for.
func (s *State) Wants(client string) int {
	if c, ok := s.clients[client]; ok {
		return c.n
	}
	return 0
}
