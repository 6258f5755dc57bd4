// Package scheduler is the scheduling core that Shoal's executors share: a
// state machine that knows every task and worker, decides where each task
// runs, when a value can be dropped, what to do when a task fails or a
// worker dies, and records why.
//
// It does no I/O, starts no goroutines and reads no clock. Executors feed it
// events (a graph was submitted, a task finished or failed, a worker joined,
// left or reported its memory, a client released or cancelled keys) through
// State.Handle, and carry out the instructions it returns (run a task on a
// worker, fetch a value to a worker, release a value, report a result or an
// error to a client). The same code drives the in-process executor and the
// cluster scheduler, and tests drive it directly, without either.
//
// Tasks move between the states released, waiting, queued, processing,
// memory, erred, cancelled and forgotten; workers are running, paused,
// closing or gone. Every task transition is kept in a bounded log, with the
// event that caused it: Story tells how a task came to be where it is, and
// Dump writes the whole state as JSON for inspection after the fact.
//
// Placement prefers the worker that already holds most of a task's input
// bytes, then the least loaded one, and honours resources and worker
// restrictions. Ready tasks beyond Config.Saturation per thread wait in a
// priority queue instead of flooding workers, so memory stays bounded.
package scheduler
