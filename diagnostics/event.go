package diagnostics

import (
	"fmt"
	"strconv"
	"time"

	"github.com/shoal-data/shoal/graph"
)

// Kind says what happened in an Event.
type Kind uint8

// The kinds of events executors publish.
const (
	// TaskTransition: a task changed state, From -> To. When a task stops
	// running (To is "memory", "erred" or "cancelled"), Worker, Start,
	// Duration and, for "memory", Bytes describe the run.
	TaskTransition Kind = iota + 1
	// ComputeStarted: a graph was submitted. Tasks counts its tasks per
	// key prefix; Caller says where the program submitted it; Trace, if
	// set, is the trace context of the caller.
	ComputeStarted
	// ComputeFinished: a computation ended. Err is set if it failed or was
	// cancelled.
	ComputeFinished
	// Spill: a result was written to disk: Key, Bytes, Path, Worker.
	Spill
	// Unspill: a spilled result was read back from disk.
	Unspill
	// WorkerAdded: a worker (or a local slot) joined. Worker names it.
	WorkerAdded
	// WorkerRemoved: a worker left or was lost. Err says why, if it was lost.
	WorkerRemoved
	// Metrics: fine performance metrics, what workers spent on each
	// activity for each task prefix since their last report (Metrics,
	// added to the totals).
	Metrics
	// AlertRaised: something is wrong on a worker (Alert, with Worker,
	// Key and Path copied from it).
	AlertRaised
	// AlertResolved: an alert no longer holds (Alert, with End set).
	AlertResolved
)

var kindNames = [...]string{
	TaskTransition:  "task-transition",
	ComputeStarted:  "compute-started",
	ComputeFinished: "compute-finished",
	Spill:           "spill",
	Unspill:         "unspill",
	WorkerAdded:     "worker-added",
	WorkerRemoved:   "worker-removed",
	Metrics:         "metrics",
	AlertRaised:     "alert-raised",
	AlertResolved:   "alert-resolved",
}

// String returns the kind's name, as written in JSON: "task-transition",
// "compute-started", "compute-finished", "spill", "unspill", "worker-added",
// "worker-removed", "metrics", "alert-raised" or "alert-resolved".
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// MarshalText writes the kind's name.
func (k Kind) MarshalText() ([]byte, error) {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return []byte(kindNames[k]), nil
	}
	return nil, fmt.Errorf("diagnostics: unknown event kind %d", uint8(k))
}

// UnmarshalText reads a kind's name.
func (k *Kind) UnmarshalText(b []byte) error {
	for i, name := range kindNames {
		if name != "" && name == string(b) {
			*k = Kind(i)
			return nil
		}
	}
	return fmt.Errorf("diagnostics: unknown event kind %q", b)
}

// Task states, as they appear in Event.From and Event.To.
const (
	StateReleased   = "released"
	StateWaiting    = "waiting"
	StateQueued     = "queued"
	StateProcessing = "processing"
	StateMemory     = "memory"
	StateErred      = "erred"
	StateForgotten  = "forgotten"
	StateCancelled  = "cancelled"
)

// Event is one thing that happened while a graph ran: a task changed
// state, a computation started or ended, a result was spilled to disk, a
// worker came or went, an alert was raised or resolved. Which fields are
// set depends on Kind; the others are zero and are left out of JSON.
//
// Events are plain values. Once published, an event's Tasks map, Metrics
// and Inputs slices and Alert are shared by every subscriber and must not be
// modified.
type Event struct {
	Time     time.Time      `json:"time,omitzero"`      // when it happened
	Kind     Kind           `json:"kind,omitempty"`     // what happened
	Compute  uint64         `json:"compute,omitempty"`  // id of the computation
	Key      graph.Key      `json:"key,omitempty"`      // the task, or the spilled result
	Prefix   string         `json:"prefix,omitempty"`   // Key.Prefix()
	From     string         `json:"from,omitempty"`     // task state before (TaskTransition)
	To       string         `json:"to,omitempty"`       // task state after (TaskTransition)
	Worker   string         `json:"worker,omitempty"`   // worker address, or local slot such as "local-0"
	Start    time.Time      `json:"start,omitzero"`     // when the task started running
	Duration time.Duration  `json:"duration,omitempty"` // how long the task ran, in nanoseconds
	Bytes    int64          `json:"bytes,omitempty"`    // size of the result
	Path     string         `json:"path,omitempty"`     // spill file
	Err      string         `json:"err,omitempty"`      // what went wrong
	Stimulus string         `json:"stimulus,omitempty"` // id of what caused a transition
	Tasks    map[string]int `json:"tasks,omitempty"`    // ComputeStarted: tasks per key prefix
	Op       string         `json:"op,omitempty"`       // the task's op (TaskTransition to "erred")
	Metrics  []FineMetric   `json:"metrics,omitempty"`  // Metrics: what was added to the totals
	Alert    *Alert         `json:"alert,omitempty"`    // AlertRaised, AlertResolved
	Caller   string         `json:"caller,omitempty"`   // ComputeStarted: where the user's code asked for it (see Caller)
	// Trace is the W3C traceparent of the span the caller of Compute or
	// Submit was in (ComputeStarted), so that tracing continues its trace.
	Trace string `json:"trace,omitempty"`
	// Inputs are what the worker got from other workers for the run that
	// ended (TaskTransition from "processing"), when the executor was asked
	// to report them (as it is while tracing).
	Inputs []Transfer `json:"inputs,omitempty"`
}

// Transfer is data a worker got from another worker for a run of a task:
// the value of one of the task's inputs (Key set), or what the task read
// of the other worker's shuffle files (Key empty).
type Transfer struct {
	Key      graph.Key     `json:"key,omitempty"`
	From     string        `json:"from"`     // the worker it came from
	Start    time.Time     `json:"start"`    // when it began
	Duration time.Duration `json:"duration"` // how long it took, in nanoseconds
	Bytes    int64         `json:"bytes"`
}

// TotalTasks returns the number of tasks of a ComputeStarted event: the sum
// of Tasks.
func (e Event) TotalTasks() int {
	n := 0
	for _, c := range e.Tasks {
		n += c
	}
	return n
}
