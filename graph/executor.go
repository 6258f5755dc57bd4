package graph

import "context"

// Executor runs task graphs. The in-process executor and the client of a
// cluster both implement it; collections take one and never care which.
//
// Executors honour the tasks' annotations, run ready tasks in the graph's
// static order (see Order), release intermediate results as soon as no
// remaining task needs them, and report the failure of a task as a
// *TaskError naming the task that failed first.
type Executor interface {
	// Compute runs the tasks of g needed for keys and returns their values
	// in the order of keys. Cancelling ctx stops the work, frees what it
	// held and returns ctx.Err(). g may depend on external keys that the
	// executor holds from an earlier Submit.
	Compute(ctx context.Context, g *Graph, keys ...Key) ([]any, error)

	// Submit starts the tasks of g needed for keys and returns at once with
	// one Future per key. The values stay on the executor, where later
	// graphs can use them as external keys (see Graph.AddExternal and
	// FromKey), until every Future for them is released. Cancelling ctx
	// cancels the tasks that have not finished yet.
	Submit(ctx context.Context, g *Graph, keys ...Key) ([]Future, error)
}

// Future is a value being computed, or computed and held, by an executor.
type Future interface {
	// Key names the value.
	Key() Key
	// Done is closed when the value is computed or has failed.
	Done() <-chan struct{}
	// Result waits until the value is computed, then returns it (fetched
	// from wherever it is held) or the error that prevented it.
	Result(ctx context.Context) (any, error)
	// Release tells the executor that this Future's holder no longer needs
	// the value; when no Future holds it, it is freed, or its computation
	// cancelled. Release is idempotent.
	Release()
}
