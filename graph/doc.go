// Package graph describes computations as task graphs that Shoal can run on
// the goroutines of one process or on a cluster of machines.
//
// A task graph is a set of tasks. Each task names a registered operation,
// carries its parameters as bytes and lists the tasks whose values it needs.
// Because a task holds no Go closure, a whole graph can be sent to other
// processes, stored and run again later; [Encode] and [Decode] turn a graph
// into bytes and back. DataFrames and arrays build their graphs for you; this
// package is where you build your own.
//
// # Your own functions
//
// Register a Go function under a name, at package level or at the top of
// main, then call it lazily. Arguments are constants, other lazy values
// ([Delayed]) or a [List] of both for a slice parameter:
//
//	var load = graph.MustRegisterFunc("myapp.load", func(ctx context.Context, path string) (Stats, error) { ... })
//	var merge = graph.MustRegisterFunc("myapp.merge", func(ctx context.Context, parts []Stats) (Stats, error) { ... })
//
//	var parts []any
//	for _, p := range paths {
//		parts = append(parts, load.Call(p)) // nothing runs yet
//	}
//	stats, err := graph.Compute[Stats](ctx, exec, merge.Call(graph.List(parts...)))
//
// The executor exec runs the loads in parallel, then the merge. Workers
// must be started from the same program, so that they have the same
// functions registered; the [Registry] fingerprint lets them check.
//
// Mistakes show up when the graph is built, not on a worker: calling an
// unregistered name, passing an argument of the wrong type or a value that
// cannot be sent to another process (a channel, a function) makes a Delayed
// whose Err says what is wrong and how to fix it. Calls are pure: the same
// call with the same arguments gets the same key, so it is computed once.
//
// # Values
//
// Values cross process boundaries through codecs: Go's basic types, times
// and durations, slices and maps of them, []any, and Arrow records and
// tables are built in. Argument and result types of registered functions
// get an encoding/gob codec unless you register one with [RegisterCodec].
// [SizeOf] tells how much memory a value holds, which executors use to
// decide what to keep in memory and what to spill to disk.
//
// # Running graphs
//
// An [Executor] computes graphs: the in-process pool and the client of a
// cluster both implement it, and collections take one without caring which.
// Before running, graphs can be simplified ([Cull], [Fuse], [Inline],
// [Optimize]) and ordered ([Order]) so that memory use stays low; [WriteDOT]
// draws a graph. When a task fails, the error is a [*TaskError] that names
// the task that failed first, its operation, and where it ran; a panic in
// an operation becomes an error with its stack and never stops the process.
package graph
