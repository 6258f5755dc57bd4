package graph

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/apache/arrow-go/v18/arrow"
)

// RunTask runs t's op on the values of its dependencies. A panic in the op
// becomes a *PanicError with the stack; an op that is not registered is an
// *UnknownOpError. Executors call RunTask; so does the fused op for the
// tasks inside it. When env has no Registry, r is used.
func (r *Registry) RunTask(ctx context.Context, t *Task, inputs []any, env *Env) (v any, err error) {
	op, ok := r.Lookup(t.Op)
	if !ok {
		return nil, &UnknownOpError{Op: t.Op, Key: t.Key}
	}
	if env == nil || env.Registry == nil || env.Logger == nil {
		e := Env{Registry: r}
		if env != nil {
			e = *env
		}
		if e.Registry == nil {
			e.Registry = r
		}
		if e.Logger == nil {
			e.Logger = discard
		}
		env = &e
	}
	return RunOp(ctx, op, t, inputs, env)
}

// RunOp runs op, which must be the op t names, on the values of t's
// dependencies, as RunTask does; executors that look ops up once for many
// tasks call it directly. env must name the registry op came from and a
// logger. The op's context speaks for t (Logger, AddMetric): the one
// the executor made with TaskContext, or one RunOp makes.
func RunOp(ctx context.Context, op *Op, t *Task, inputs []any, env *Env) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			v, err = nil, &PanicError{Value: p, Stack: string(debug.Stack())}
		}
	}()
	if len(inputs) != len(t.Deps) {
		return nil, fmt.Errorf("task %q has %d dependencies but got %d inputs", t.Key, len(t.Deps), len(inputs))
	}
	if taskOf(ctx) == nil {
		ctx = TaskContext(ctx, t, env, "", nil)
	}
	v, err = op.Run(ctx, OpInput{Key: t.Key, Params: t.Params, Inputs: inputs, Deps: t.Deps, Env: env})
	if err == nil {
		settleNulls(v)
	}
	return v, err
}

// settleNulls computes the null counts that Arrow computes lazily (those
// of slices): a result can be the input of several tasks running at once,
// and the first NullN call on such an array writes the count, which would
// race with the others' reads.
func settleNulls(v any) {
	switch x := v.(type) {
	case arrow.RecordBatch:
		for _, c := range x.Columns() {
			c.NullN()
		}
	case arrow.Table:
		for i := range x.NumCols() {
			for _, c := range x.Column(int(i)).Data().Chunks() {
				c.NullN()
			}
		}
	case arrow.Array:
		x.NullN()
	}
}

var discard = slog.New(slog.DiscardHandler)
