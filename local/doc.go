// Package local computes task graphs on a pool of goroutines in the
// current process.
//
// An Executor implements graph.Executor: hand it to graph.Compute, to a
// collection's Compute method, or call its Compute and Submit methods with a
// graph directly. It runs ready tasks in the graph's static order, at most
// one per thread (runtime.GOMAXPROCS(0) by default), and drops
// intermediate results as soon as no remaining task needs them.
//
// What it does for you:
//
//   - Errors name the task you asked for and the task that failed first,
//     with its function and the cause; a panic in a task becomes an error
//     with its stack, and the executor keeps working.
//   - Cancelling the context of Compute stops queued work, asks running tasks
//     to stop (through their context), frees the results and returns
//     ctx.Err().
//   - WithMemoryLimit bounds the memory held by results: beyond the spill
//     fraction of the limit, the least recently used results are written to
//     disk (Arrow IPC files for Arrow data) and read back when needed. A full
//     disk or an unusable directory is an error naming the key, the file and
//     the reason.
//   - Events publishes what happens (task transitions with the slot that ran
//     them, durations, result sizes, spills); WithProgress draws progress
//     bars; Story and Dump explain the scheduler's decisions.
//
// The executor never prints and never exits the process; it logs through
// the *slog.Logger given with WithLogger.
package local
