package scheduler

import (
	"fmt"
)

// TaskState is the state of a task in the scheduler.
type TaskState uint8

// Task states. A task is released when no computation needs it, waiting
// while its dependencies are computed, queued when it is ready but no
// suitable worker has a free slot, processing while a worker runs it, in
// memory when a worker holds its value, erred when it or a dependency failed,
// cancelled while a worker still runs a task nobody needs any more, and
// forgotten when the scheduler has dropped it.
const (
	Released TaskState = iota
	Waiting
	Queued
	Processing
	Memory
	Erred
	Cancelled
	Forgotten
	numTaskStates
)

var taskStateNames = [...]string{"released", "waiting", "queued", "processing", "memory", "erred", "cancelled", "forgotten"}

func (s TaskState) String() string {
	if int(s) < len(taskStateNames) {
		return taskStateNames[s]
	}
	return fmt.Sprintf("TaskState(%d)", s)
}

// MarshalText writes the state's name.
func (s TaskState) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// needsDeps reports whether a task in this state still needs the values of
// its dependencies.
func (s TaskState) needsDeps() bool {
	return s == Waiting || s == Queued || s == Processing
}

// WorkerState is the state of a worker in the scheduler.
type WorkerState uint8

// Worker states: running workers get tasks; paused workers (memory above
// the pause threshold) and closing workers keep what they hold and finish
// what they run but get no new tasks; gone workers have left.
const (
	WorkerRunning WorkerState = iota
	WorkerPaused
	WorkerClosing
	WorkerGone
)

var workerStateNames = [...]string{"running", "paused", "closing", "gone"}

func (s WorkerState) String() string {
	if int(s) < len(workerStateNames) {
		return workerStateNames[s]
	}
	return fmt.Sprintf("WorkerState(%d)", s)
}

// MarshalText writes the state's name.
func (s WorkerState) MarshalText() ([]byte, error) { return []byte(s.String()), nil }
