package graph

import (
	"fmt"
	"strconv"
	"strings"
)

func quote(s string) string { return strconv.Quote(s) }

// DuplicateKeyError is returned when two different tasks share a key.
type DuplicateKeyError struct {
	Key      Key
	Old, New *Task
}

func (e *DuplicateKeyError) Error() string {
	return fmt.Sprintf("graph: duplicate key %q with different content (op %q with %d deps vs op %q with %d deps)",
		e.Key, e.Old.Op, len(e.Old.Deps), e.New.Op, len(e.New.Deps))
}

// MissingDependency is one task naming a dependency that is not in the graph.
type MissingDependency struct {
	Task, Dep Key
}

// MissingDependencyError lists the dependencies that are neither tasks of
// the graph nor external keys.
type MissingDependencyError struct {
	Missing []MissingDependency
}

func (e *MissingDependencyError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "graph: %d missing dependencies: ", len(e.Missing))
	for i, m := range e.Missing {
		if i == 5 {
			fmt.Fprintf(&b, ", and %d more", len(e.Missing)-5)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "task %q depends on %q", m.Task, m.Dep)
	}
	return b.String()
}

// CycleError reports a cycle: each key depends on the next, and the last on
// the first.
type CycleError struct {
	Keys []Key
}

func (e *CycleError) Error() string {
	if len(e.Keys) == 0 {
		return "graph: cycle"
	}
	parts := make([]string, len(e.Keys)+1)
	for i, k := range e.Keys {
		parts[i] = strconv.Quote(string(k))
	}
	parts[len(e.Keys)] = strconv.Quote(string(e.Keys[0]))
	return "graph: cycle: " + strings.Join(parts, " depends on ")
}

// UnknownOpError is returned when a task names an op that is not registered
// in the process that runs it.
type UnknownOpError struct {
	Op  string
	Key Key
}

func (e *UnknownOpError) Error() string {
	var where string
	if e.Key != "" {
		where = fmt.Sprintf(" (task %q)", e.Key)
	}
	return fmt.Sprintf("op %q is not registered in this process%s: register it before running, "+
		"for example graph.RegisterFunc(%q, fn) at package level or at the top of main, "+
		"and make sure every worker runs the same program", e.Op, where, e.Op)
}

// TaskError is the error of a task that failed, or that could not run
// because a task it depends on failed. Err is the cause: the error of the
// task that failed first (Root).
type TaskError struct {
	Key    Key    // the task whose value was asked for
	Op     string // its op
	Root   Key    // the task that failed first; equal to Key when it failed itself
	RootOp string // the op of Root
	Worker string // where Root ran, if known
	Err    error  // what went wrong in Root
}

func (e *TaskError) Error() string {
	var where string
	if e.Worker != "" {
		where = " on " + e.Worker
	}
	if e.Root == e.Key || e.Root == "" {
		return fmt.Sprintf("task %q (op %s) failed%s: %v", e.Key, e.Op, where, e.Err)
	}
	return fmt.Sprintf("task %q (op %s) not computed: its dependency %q (op %s) failed%s: %v",
		e.Key, e.Op, e.Root, e.RootOp, where, e.Err)
}

func (e *TaskError) Unwrap() error { return e.Err }

// PanicError is the cause of a TaskError when the op panicked.
type PanicError struct {
	Value any
	Stack string
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("panic: %v\n%s", e.Value, e.Stack)
}

// RemoteError carries the message of an error that crossed a process
// boundary and lost its Go type (see RegisterError), and the errors it
// wrapped, as far as they kept theirs: errors.Is and errors.As look into
// Causes.
type RemoteError struct {
	Message string
	Causes  []error
}

func (e *RemoteError) Error() string { return e.Message }

// Unwrap returns the errors it wrapped.
func (e *RemoteError) Unwrap() []error { return e.Causes }

// LostInputsError is the error of a task that could not read what some of
// its dependencies left beside their values, such as the files of a
// shuffle's shards on a worker that died, or that an earlier run of the
// task consumed. The executor computes Keys again, then runs the task
// again; it fails with this error only when that happened too often.
type LostInputsError struct {
	Keys []Key // the dependencies to compute again
	Err  error // what went wrong
}

func (e *LostInputsError) Error() string { return e.Err.Error() }

func (e *LostInputsError) Unwrap() error { return e.Err }

// WorkerLostError says that a task could not reach another worker for
// data it holds (files it wrote, values it computed). Reason is why the
// scheduler removed that worker (an exit code, a signal, the memory
// limit, silence), when it knew by the time the error reached it.
type WorkerLostError struct {
	Worker string
	Reason string
	Err    error // what reaching it gave
}

func (e *WorkerLostError) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("worker %s lost: %s", e.Worker, e.Reason)
	}
	return fmt.Sprintf("worker %s unreachable: %v", e.Worker, e.Err)
}

func (e *WorkerLostError) Unwrap() error { return e.Err }

// InnerTaskError is the error of a fused task (see OpFused) when one of the
// tasks inside it failed: it names that task, so that errors blame the
// task the user wrote rather than the fused one.
type InnerTaskError struct {
	Key Key
	Op  string
	Err error
}

func (e *InnerTaskError) Error() string {
	return fmt.Sprintf("task %q (op %s): %v", e.Key, e.Op, e.Err)
}

func (e *InnerTaskError) Unwrap() error { return e.Err }

// DisplayOp returns the op a user would recognise for t: for a fused task,
// the op of its last inner task.
func DisplayOp(t *Task) string {
	if t.Op != OpFused {
		return t.Op
	}
	tasks, _, err := FusedTasks(t.Params)
	if err != nil || len(tasks) == 0 {
		return t.Op
	}
	return DisplayOp(tasks[len(tasks)-1])
}
