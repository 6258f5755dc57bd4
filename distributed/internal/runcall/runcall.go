// Package runcall runs a call of a registered function directly in a
// process (Client.Run on workers, Client.RunOnScheduler), outside the
// scheduler: the call and its arguments travel as an encoded graph, are
// evaluated here one task at a time, and the value goes back encoded with
// the registry's codecs.
package runcall

import (
	"context"
	"fmt"

	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/graph"
)

// Request encodes a call of the function registered under fn on args.
func Request(reg *graph.Registry, fn string, args []any) (*wire.RunRequest, error) {
	d := reg.Call(fn, args...)
	if err := d.Err(); err != nil {
		return nil, err
	}
	g, keys, err := graph.Collect(d)
	if err != nil {
		return nil, err
	}
	b, err := graph.Encode(g)
	if err != nil {
		return nil, fmt.Errorf("encode the call of %s: %w", fn, err)
	}
	return &wire.RunRequest{Graph: b, Key: string(keys[0])}, nil
}

// Serve answers a RunRequest: it evaluates the call with reg and env and
// encodes its value, or the error.
func Serve(ctx context.Context, reg *graph.Registry, env *graph.Env, req *wire.RunRequest) *wire.RunReply {
	v, err := run(ctx, reg, env, req)
	if err != nil {
		return &wire.RunReply{Error: wire.EncodeError(err)}
	}
	b, err := reg.MarshalValue(v)
	if err != nil {
		return &wire.RunReply{Error: wire.EncodeError(fmt.Errorf("encode the result of %q: %w", req.Key, err))}
	}
	return &wire.RunReply{Value: b}
}

func run(ctx context.Context, reg *graph.Registry, env *graph.Env, req *wire.RunRequest) (any, error) {
	g, err := graph.Decode(req.Graph)
	if err != nil {
		return nil, fmt.Errorf("decode the call: %w", err)
	}
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("decode the call: %w", err)
	}
	if len(g.External()) > 0 {
		return nil, fmt.Errorf("call %q depends on values held by the cluster (%v); Run takes constants only",
			req.Key, g.External())
	}
	if !g.Has(graph.Key(req.Key)) {
		return nil, fmt.Errorf("call %q is not in its graph", req.Key)
	}
	e := &evaluator{ctx: ctx, reg: reg, env: env, g: g, vals: map[graph.Key]any{}}
	return e.eval(graph.Key(req.Key))
}

type evaluator struct {
	ctx  context.Context
	reg  *graph.Registry
	env  *graph.Env
	g    *graph.Graph
	vals map[graph.Key]any
}

// eval computes k after its dependencies; the graph was validated, so it
// has no cycle.
func (e *evaluator) eval(k graph.Key) (any, error) {
	if v, ok := e.vals[k]; ok {
		return v, nil
	}
	t, _ := e.g.Get(k)
	inputs := make([]any, len(t.Deps))
	for i, d := range t.Deps {
		v, err := e.eval(d)
		if err != nil {
			return nil, err
		}
		inputs[i] = v
	}
	if err := e.ctx.Err(); err != nil {
		return nil, err
	}
	v, err := e.reg.RunTask(e.ctx, t, inputs, e.env)
	if err != nil {
		return nil, &graph.TaskError{Key: k, Op: graph.DisplayOp(t), Root: k, RootOp: graph.DisplayOp(t),
			Worker: e.env.Worker, Err: err}
	}
	e.vals[k] = v
	return v, nil
}

// Decode turns a RunReply back into the value or the error.
func Decode(reg *graph.Registry, rep *wire.RunReply) (any, error) {
	if rep.Error != nil {
		return nil, wire.DecodeError(rep.Error)
	}
	return reg.UnmarshalValue(rep.Value)
}
