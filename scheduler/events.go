package scheduler

import (
	"time"

	"github.com/shoal-data/shoal/graph"
)

// Event is something that happened outside the scheduler: a graph was
// submitted, a task finished, a worker joined. State.Handle takes events and
// returns the instructions they lead to.
//
// Handle does not keep the event values, so a caller may reuse them.
type Event interface {
	meta() *Meta
	kind() eventKind
}

// Meta is common to all events.
type Meta struct {
	// Time is when the event happened; the scheduler has no clock of its
	// own. The zero time means "same as the previous event".
	Time time.Time
	// Stimulus optionally names the cause, such as a message id; it is
	// recorded with every transition the event causes.
	Stimulus string
}

func (m *Meta) meta() *Meta { return m }

// GraphSubmitted asks for the values of Keys, computed by the tasks of
// Graph. The Client holds the keys until it releases them (KeysReleased).
// Tasks whose keys the scheduler already knows are not computed again.
type GraphSubmitted struct {
	Meta
	Client string
	Graph  *graph.Graph
	Keys   []graph.Key
	// Priority is added to the priority annotation of every task.
	Priority int
	// Order is the static priority of every task of Graph, in the order of
	// Graph.Tasks() (lower runs first). Nil means the scheduler computes it
	// with Config.Order.
	Order []int
}

// TaskFinished reports that Worker computed Key; its value takes Size bytes.
type TaskFinished struct {
	Meta
	Key      graph.Key
	ID       int32 // the ID from Run, or 0
	Worker   string
	Size     int64
	Start    time.Time
	Duration time.Duration
}

// TaskFailed reports that Worker failed to compute Key.
type TaskFailed struct {
	Meta
	Key    graph.Key
	ID     int32 // the ID from Run, or 0
	Worker string
	Err    error
	// Start and Duration say when and how long the task ran.
	Start    time.Time
	Duration time.Duration
}

// WorkerAdded reports a new worker.
type WorkerAdded struct {
	Meta
	Worker WorkerInfo
}

// WorkerInfo describes a worker.
type WorkerInfo struct {
	Name        string             // unique name or address
	Threads     int                // tasks it runs at once
	MemoryLimit int64              // bytes; 0 means no limit
	Resources   map[string]float64 // abstract resources it offers, such as {"GPU": 1}
}

// WorkerRemoved reports that a worker left or died. Tasks it was running
// are run elsewhere; values only it held are computed again if needed.
type WorkerRemoved struct {
	Meta
	Worker string
	Reason string
	// Safe says the worker stopped on purpose (its nanny restarted it):
	// the tasks it was running are not suspected of killing it, so that
	// it does not count towards their AllowedFailures.
	Safe bool
}

// WorkerRetiring reports that a worker is shutting down gracefully: it gets
// no new tasks.
type WorkerRetiring struct {
	Meta
	Worker string
}

// WorkerMemory reports a worker's memory use.
type WorkerMemory struct {
	Meta
	Worker  string
	Managed int64 // bytes of task results held in memory
	Process int64 // bytes the worker process uses in all
	Spilled int64 // bytes of task results spilled to disk
}

// KeysReleased says that Client no longer needs Keys (nil: all its keys).
// Values nobody needs are released; computations nobody needs are
// cancelled.
type KeysReleased struct {
	Meta
	Client string
	Keys   []graph.Key
}

// Cancel stops computing Keys for Client (nil: all its keys) and releases
// them, like KeysReleased; Client gets an error report for each of the
// keys that was not yet computed.
type Cancel struct {
	Meta
	Client string
	Keys   []graph.Key
	Reason error
}

// DataMissing reports that Worker does not hold Keys, although the
// scheduler believed it did: a fetch to it failed, or a peer could not get
// them from it. The scheduler forgets that Worker holds them; a key held
// nowhere else is computed again when it is still needed.
type DataMissing struct {
	Meta
	Worker string
	Keys   []graph.Key
}

// Tick tells the core the time when nothing else happens, so that it can
// act on its timeouts (Config.NoWorkersTimeout). A transport sends one
// every second or so.
type Tick struct {
	Meta
}

// eventKind numbers the event types for the transition log.
type eventKind uint8

const (
	_ eventKind = iota
	kindGraphSubmitted
	kindTaskFinished
	kindTaskFailed
	kindWorkerAdded
	kindWorkerRemoved
	kindWorkerRetiring
	kindWorkerMemory
	kindKeysReleased
	kindCancel
	kindTick
	kindDataMissing
)

var eventKindNames = [...]string{"", "graph-submitted", "task-finished", "task-failed", "worker-added", "worker-removed", "worker-retiring", "worker-memory", "keys-released", "cancel", "tick", "data-missing"}

func (*GraphSubmitted) kind() eventKind { return kindGraphSubmitted }
func (*TaskFinished) kind() eventKind   { return kindTaskFinished }
func (*TaskFailed) kind() eventKind     { return kindTaskFailed }
func (*WorkerAdded) kind() eventKind    { return kindWorkerAdded }
func (*WorkerRemoved) kind() eventKind  { return kindWorkerRemoved }
func (*WorkerRetiring) kind() eventKind { return kindWorkerRetiring }
func (*WorkerMemory) kind() eventKind   { return kindWorkerMemory }
func (*KeysReleased) kind() eventKind   { return kindKeysReleased }
func (*Cancel) kind() eventKind         { return kindCancel }
func (*Tick) kind() eventKind           { return kindTick }
func (*DataMissing) kind() eventKind    { return kindDataMissing }
