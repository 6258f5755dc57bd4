package scheduler

import "github.com/shoal-data/shoal/graph"

// Instruction is something the caller of State.Handle must do: run a task,
// move or drop a value, or tell a client about a result.
type Instruction interface {
	instruction()
}

// Run asks Worker to compute Task. The values of the task's dependencies
// are on Worker, or on their way there (see Fetch).
type Run struct {
	Worker string
	Task   *graph.Task
	// ID is a small positive number the scheduler gives the task for as
	// long as it knows it; numbers are reused once a task is forgotten.
	// An executor may index its own tables by it, and pass it back in
	// TaskFinished and TaskFailed to spare a lookup by key.
	ID int32
	// DepIDs are the IDs of Task.Deps, in order. Do not modify.
	DepIDs []int32
	// Client is the client whose graph first defined the task: the
	// computation it is run for, in logs and profiles.
	Client string
}

// Fetch asks worker To to copy the value of Key from one of From.
type Fetch struct {
	Key  graph.Key
	From []string
	To   string
	Size int64 // bytes of the value, as its holders reported
}

// Release asks Workers to drop their copy of Key's value.
type Release struct {
	Key     graph.Key
	ID      int32
	Workers []string
}

// CancelRun asks Worker to stop computing Key: nobody needs it any more.
// The worker still reports the task as finished or failed when it stops.
//
// With Steal, the task is wanted elsewhere (Config.Steal): the worker
// gives it up only if it has not started it, reporting it failed with an
// error that matches context.Canceled; a task it has started it finishes
// and reports as usual.
type CancelRun struct {
	Key    graph.Key
	Worker string
	Steal  bool
}

// ReportResult tells Client that the value of Key is ready on Workers.
type ReportResult struct {
	Client string
	Key    graph.Key
	// Index is the position of Key in the Keys of the GraphSubmitted
	// event by which Client first asked for it.
	Index   int
	ID      int32
	Workers []string
	Size    int64
}

// ReportError tells Client that Key cannot be computed.
type ReportError struct {
	Client string
	Key    graph.Key
	Index  int   // as in ReportResult; -1 if unknown
	Err    error // a *graph.TaskError, or the reason of a Cancel
}

func (*Run) instruction()          {}
func (*Fetch) instruction()        {}
func (*Release) instruction()      {}
func (*CancelRun) instruction()    {}
func (*ReportResult) instruction() {}
func (*ReportError) instruction()  {}

// arena hands out values of T that live until reset: the hot
// instructions are recycled between calls to Handle instead of allocated.
type arena[T any] struct {
	chunks [][]T
	chunk  int // index of the chunk in use
	used   int // values used in it
}

const arenaChunk = 256

func (a *arena[T]) new() *T {
	if a.chunk == len(a.chunks) {
		a.chunks = append(a.chunks, make([]T, arenaChunk))
	}
	p := &a.chunks[a.chunk][a.used]
	a.used++
	if a.used == arenaChunk {
		a.chunk++
		a.used = 0
	}
	return p
}

// reset makes every value handed out reusable, zeroing them so that they
// keep nothing alive.
func (a *arena[T]) reset() {
	for i := 0; i < a.chunk; i++ {
		clear(a.chunks[i])
	}
	if a.chunk < len(a.chunks) {
		clear(a.chunks[a.chunk][:a.used])
	}
	// Keep a few chunks; drop the rest so one huge Handle does not pin memory.
	if len(a.chunks) > 16 {
		a.chunks = a.chunks[:16]
	}
	a.chunk, a.used = 0, 0
}
