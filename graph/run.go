package graph

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
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
// logger.
func RunOp(ctx context.Context, op *Op, t *Task, inputs []any, env *Env) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			v, err = nil, &PanicError{Value: p, Stack: string(debug.Stack())}
		}
	}()
	if len(inputs) != len(t.Deps) {
		return nil, fmt.Errorf("task %q has %d dependencies but got %d inputs", t.Key, len(t.Deps), len(inputs))
	}
	return op.Run(ctx, OpInput{Key: t.Key, Params: t.Params, Inputs: inputs, Env: env})
}

var discard = slog.New(slog.DiscardHandler)
