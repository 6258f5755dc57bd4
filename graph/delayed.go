package graph

import (
	"context"
	"fmt"
	"reflect"

	"google.golang.org/protobuf/proto"

	"github.com/shoal-data/shoal/graph/graphpb"
)

// Delayed is a lazy value: the result of calling a registered function on
// constants and on other Delayed values. Building Delayed values only
// records tasks; an Executor computes them. The zero Delayed is invalid.
//
// A Delayed that could not be built (an unknown op, an argument that cannot
// be encoded) carries the error; Err returns it and computing it fails with it.
type Delayed struct{ n *node }

// node is one task of a Delayed graph and the nodes it depends on. The
// graph is materialized only when needed, so building long chains is linear.
type node struct {
	task *Task
	deps []*node
	out  reflect.Type
	err  error
}

func (n *node) key() Key { return n.task.Key }

// Key returns the key of the task that computes d.
func (d Delayed) Key() Key {
	if d.n == nil {
		return ""
	}
	return d.n.key()
}

// Err returns the error that building d met, if any.
func (d Delayed) Err() error {
	if d.n == nil {
		return fmt.Errorf("zero Delayed value")
	}
	return d.n.err
}

// Type returns the Go type of d's value, when it is known.
func (d Delayed) Type() reflect.Type {
	if d.n == nil {
		return nil
	}
	return d.n.out
}

// WithAnnotations returns d with its task's annotations (priority, retries,
// resources, restrictions) replaced by a.
func (d Delayed) WithAnnotations(a Annotations) Delayed {
	if d.n == nil || d.n.err != nil {
		return d
	}
	n := *d.n
	t := *n.task
	t.Annotations = a
	n.task = &t
	return Delayed{&n}
}

func errDelayed(err error) Delayed {
	return Delayed{&node{task: &Task{}, err: err}}
}

// ListValue is a list of arguments, built by List.
type ListValue struct{ items []any }

// List passes several values, Delayed or constant, as one slice argument:
// sum.Call(graph.List(a, b, c)) calls sum with []T{a, b, c}.
func List(items ...any) ListValue { return ListValue{items: items} }

// Call returns a lazy call of the function registered in the default
// registry under op. Each argument is a constant, a Delayed, or a List.
// Calls are pure: the same op with the same arguments gets the same key, and
// is computed once.
func Call(op string, args ...any) Delayed { return Default().Call(op, args...) }

// Call is the package-level Call for the functions registered in r.
func (r *Registry) Call(op string, args ...any) Delayed {
	o, ok := r.Lookup(op)
	if !ok {
		return errDelayed(&UnknownOpError{Op: op})
	}
	fi := o.fn
	if fi == nil {
		return errDelayed(fmt.Errorf("graph.Call(%q): the op was not registered from a Go function "+
			"(graph.RegisterFunc), so it takes no call arguments", op))
	}
	if len(args) != len(fi.params) {
		return errDelayed(fmt.Errorf("graph.Call(%q): %d arguments, the function takes %d (%s)",
			op, len(args), len(fi.params), fi.signature()))
	}
	var deps []*node
	depIdx := map[Key]uint32{}
	call := &graphpb.Call{Args: make([]*graphpb.Arg, len(args))}
	for i, a := range args {
		pa, err := fi.encodeArg(r, a, fi.params[i], &deps, depIdx)
		if err != nil {
			return errDelayed(fmt.Errorf("graph.Call(%q): argument %d: %w", op, i, err))
		}
		call.Args[i] = pa
	}
	params, err := proto.MarshalOptions{Deterministic: true}.Marshal(call)
	if err != nil {
		return errDelayed(fmt.Errorf("graph.Call(%q): %w", op, err))
	}
	return newNode(op, op, params, deps, fi.out)
}

func newNode(prefix, op string, params []byte, deps []*node, out reflect.Type) Delayed {
	parts := make([][]byte, 0, 2+len(deps))
	parts = append(parts, []byte(op), params)
	depKeys := make([]Key, len(deps))
	for i, d := range deps {
		depKeys[i] = d.key()
		parts = append(parts, []byte(d.key()))
	}
	t := &Task{Key: NewKey(prefix, Tokenize(parts...)), Op: op, Params: params, Deps: depKeys}
	return Delayed{&node{task: t, deps: deps, out: out}}
}

// Literal returns a Delayed holding the constant v, which must be
// encodable. Use it to place a value in a graph once and pass it to many
// calls.
func Literal(v any) Delayed { return Default().Literal(v) }

// Literal is the package-level Literal with r's codecs.
func (r *Registry) Literal(v any) Delayed {
	b, err := r.MarshalValue(v)
	if err != nil {
		return errDelayed(fmt.Errorf("graph.Literal: %w", err))
	}
	var out reflect.Type
	if v != nil {
		out = reflect.TypeOf(v)
	}
	return newNode("value", OpValue, b, nil, out)
}

// FromKey returns a Delayed for a value that the executor already holds
// under key, such as the key of a Future.
func FromKey(key Key) Delayed {
	return Delayed{&node{task: &Task{Key: key}}}
}

func (n *node) external() bool { return n.task.Op == "" && n.err == nil }

// Graph returns the graph of tasks that computes d.
func (d Delayed) Graph() (*Graph, error) {
	g, _, err := Collect(d)
	return g, err
}

// Collect returns one graph that computes all of ds, and their keys. Tasks
// are listed inputs first: every task comes after the tasks it depends on.
func Collect(ds ...Delayed) (*Graph, []Key, error) {
	g := New()
	keys := make([]Key, len(ds))
	for i, d := range ds {
		if d.n == nil {
			return nil, nil, fmt.Errorf("zero Delayed value at position %d", i)
		}
		keys[i] = d.n.key()
	}
	// Depth-first, iteratively (chains may be long); a task is added once
	// all of its dependencies are.
	type frame struct {
		n    *node
		next int
	}
	seen := map[*node]bool{}
	var stack []frame
	for _, d := range ds {
		if seen[d.n] {
			continue
		}
		seen[d.n] = true
		stack = append(stack, frame{n: d.n})
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			n := top.n
			if n.err != nil {
				return nil, nil, n.err
			}
			if n.external() {
				g.AddExternal(n.key())
				stack = stack[:len(stack)-1]
				continue
			}
			if top.next < len(n.deps) {
				dep := n.deps[top.next]
				top.next++
				if !seen[dep] {
					seen[dep] = true
					stack = append(stack, frame{n: dep})
				}
				continue
			}
			if err := g.Add(n.task); err != nil {
				return nil, nil, err
			}
			stack = stack[:len(stack)-1]
		}
	}
	return g, keys, nil
}

// Compute computes d with exec and returns its value as a T.
func Compute[T any](ctx context.Context, exec Executor, d Delayed) (T, error) {
	var zero T
	vs, err := ComputeAll(ctx, exec, d)
	if err != nil {
		return zero, err
	}
	if vs[0] == nil {
		return zero, nil
	}
	v, ok := vs[0].(T)
	if !ok {
		return zero, fmt.Errorf("compute %s: the value is a %T, not a %s", d.Key(), vs[0], reflect.TypeFor[T]())
	}
	return v, nil
}

// ComputeAll computes several Delayed values in one graph, sharing the
// tasks they have in common, and returns their values in order.
func ComputeAll(ctx context.Context, exec Executor, ds ...Delayed) ([]any, error) {
	g, keys, err := Collect(ds...)
	if err != nil {
		return nil, err
	}
	return exec.Compute(ctx, g, keys...)
}

// Submit starts computing ds with exec and returns one Future each; the
// values stay on the executor until the futures are released.
func Submit(ctx context.Context, exec Executor, ds ...Delayed) ([]Future, error) {
	g, keys, err := Collect(ds...)
	if err != nil {
		return nil, err
	}
	return exec.Submit(ctx, g, keys...)
}
