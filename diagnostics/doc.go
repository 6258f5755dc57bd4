// Package diagnostics lets you see what a computation is doing and what it
// did: which tasks ran where and for how long, which failed, what was
// spilled to disk, and how far a computation has got.
//
// Executors (the in-process pool and the cluster client) publish Events to a
// Hub: a task changed state, a computation started or finished, a result was
// spilled, a worker came or went. Anything may listen:
//
//   - a Recorder keeps the latest events in memory and returns them as a
//     list, as a task stream (one TaskRecord per task run: where, when, how
//     long, how big) or as JSON lines, which ReadJSONLines reads back;
//   - a Progress draws a progress bar per kind of task on a terminal, or
//     writes plain lines to a log;
//   - your own function, given to Hub.Subscribe.
//
// Listening never slows the computation down: every listener has its own
// bounded queue and goroutine, and when nobody listens publishing costs
// next to nothing.
//
// An Alert is something wrong an executor noticed while a graph ran (a
// worker's disk nearly full, a straggler task, a skewed shuffle), with
// what to do about it: executors publish AlertRaised and AlertResolved
// events, and package diagnostics/alert has the rules that raise them.
//
// The package also has the slog handlers the rest of Shoal uses for
// logging: NewConsoleHandler for people, NewJSONHandler for machines.
// Nothing in it writes anywhere but to the writers and loggers you give it.
package diagnostics
