package graph

import (
	"context"
	"log/slog"
	"sync"
)

// The context of a running task tells the task's code who it is: Logger
// returns a logger tagged with the task, AddMetric adds to the task's
// fine performance metrics. Executors set it up (TaskContext); RunOp does
// when they did not.

type taskCtxKey struct{}

// taskInfo is what the context of a running task carries: it is the
// context, which saves an allocation per task.
type taskInfo struct {
	context.Context
	key         Key
	env         *Env
	computation string
	meter       Meter

	once   sync.Once
	logger *slog.Logger
}

// Meter receives what tasks spend on activities other than computing,
// such as the bytes and seconds of writing shuffle files: fine
// performance metrics per activity and unit (see AddMetric). An executor
// hands one to its tasks; its methods are safe for concurrent use.
type Meter interface {
	// AddMetric adds value (in unit: "seconds", "bytes" or "count") to
	// task's total for activity.
	AddMetric(task Key, activity, unit string, value float64)
}

// TaskContext returns ctx for running task t in env: Logger and
// AddMetric called with it (or with a context derived from it) speak for
// t. computation names the computation that asked for t ("" when
// unknown); meter may be nil. Executors call it once per task run;
// RunOp calls it itself when ctx has no task.
func TaskContext(ctx context.Context, t *Task, env *Env, computation string, meter Meter) context.Context {
	return &taskInfo{Context: ctx, key: t.Key, env: env, computation: computation, meter: meter}
}

func (ti *taskInfo) Value(key any) any {
	if key == (taskCtxKey{}) {
		return ti
	}
	return ti.Context.Value(key)
}

func taskOf(ctx context.Context) *taskInfo {
	if ti, ok := ctx.(*taskInfo); ok {
		return ti
	}
	ti, _ := ctx.Value(taskCtxKey{}).(*taskInfo)
	return ti
}

// Logger returns the logger of the task whose context ctx is (or derives
// from): the executor's logger, tagged with the task's key, its prefix,
// the worker that runs it and the computation that asked for it. What a
// task logs with it at level Info and above travels, on a cluster, to the
// scheduler with the worker's own records (Client.WorkerLogs and the
// dashboard show it while the worker lives). Outside a task it returns a
// logger that discards everything.
//
//	func clean(ctx context.Context, path string) (Stats, error) {
//		log := graph.Logger(ctx)
//		log.Info("cleaning", "path", path)
//		...
//	}
func Logger(ctx context.Context) *slog.Logger {
	ti := taskOf(ctx)
	if ti == nil {
		return discard
	}
	ti.once.Do(func() {
		base := discard
		if ti.env != nil && ti.env.Logger != nil {
			base = ti.env.Logger
		}
		attrs := []any{"key", string(ti.key), "prefix", ti.key.Prefix()}
		if ti.computation != "" {
			attrs = append(attrs, "computation", ti.computation)
		}
		ti.logger = base.With(attrs...)
	})
	return ti.logger
}

// AddMetric adds value to the fine performance metrics of the task whose
// context ctx is, under activity and unit (see Meter). Ops call it for
// the work the executor cannot see, such as a shuffle's writes to disk:
//
//	graph.AddMetric(ctx, "disk-write", "bytes", float64(n))
//
// Outside a task, or when the executor keeps no metrics, it does nothing.
func AddMetric(ctx context.Context, activity, unit string, value float64) {
	if ti := taskOf(ctx); ti != nil && ti.meter != nil {
		ti.meter.AddMetric(ti.key, activity, unit, value)
	}
}

// TaskKey returns the key of the task whose context ctx is (or derives
// from), and false outside a task.
func TaskKey(ctx context.Context) (Key, bool) {
	if ti := taskOf(ctx); ti != nil {
		return ti.key, true
	}
	return "", false
}
