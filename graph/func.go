package graph

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/shoal-data/shoal/graph/graphpb"
)

// funcInfo describes an op registered from a typed Go function: the types
// of its parameters (after the context) and of its result.
type funcInfo struct {
	params []reflect.Type
	out    reflect.Type
	reg    *Registry
}

// RegisterOption configures RegisterFunc and its relatives.
type RegisterOption func(*registerConfig)

type registerConfig struct {
	reg   *Registry
	cheap bool
}

// InRegistry registers into r instead of the default registry.
func InRegistry(r *Registry) RegisterOption {
	return func(c *registerConfig) { c.reg = r }
}

// AsCheap marks the function as cheap enough to be inlined into the tasks
// that use its result (see Inline).
func AsCheap() RegisterOption {
	return func(c *registerConfig) { c.cheap = true }
}

func newRegisterConfig(opts []RegisterOption) registerConfig {
	c := registerConfig{}
	for _, o := range opts {
		o(&c)
	}
	if c.reg == nil {
		c.reg = Default()
	}
	return c
}

// Func is a Go function of one argument registered as an op. Its Call
// method builds a task that runs it.
type Func[In, Out any] struct {
	name string
	reg  *Registry
}

// Func2 is a Go function of two arguments registered as an op.
type Func2[A, B, Out any] struct {
	name string
	reg  *Registry
}

// Func3 is a Go function of three arguments registered as an op.
type Func3[A, B, C, Out any] struct {
	name string
	reg  *Registry
}

// RegisterFunc registers fn as the op name, so that tasks can call it by
// name in this process and in every worker started from the same program.
// Call it at package level or at the top of main, before any executor runs:
//
//	var clean = graph.MustRegisterFunc("myapp.clean", func(ctx context.Context, path string) (Stats, error) { ... })
//
// The argument and result types get a codec (encoding/gob unless one is
// registered), so that values can cross process boundaries; a type that
// cannot be encoded is an error here, not when a graph is sent. Registering
// a name twice is a *DuplicateOpError.
func RegisterFunc[In, Out any](name string, fn func(context.Context, In) (Out, error), opts ...RegisterOption) (*Func[In, Out], error) {
	c := newRegisterConfig(opts)
	if err := registerTypes2[In, Out](c.reg); err != nil {
		return nil, fmt.Errorf("register %q: %w", name, err)
	}
	info := &funcInfo{params: []reflect.Type{reflect.TypeFor[In]()}, out: reflect.TypeFor[Out](), reg: c.reg}
	err := c.reg.Register(Op{
		Name: name, Signature: info.signature(), Cheap: c.cheap, fn: info,
		Run: func(ctx context.Context, in OpInput) (any, error) {
			args, err := info.decodeArgs(in)
			if err != nil {
				return nil, err
			}
			a, err := as[In](args[0], name, 0)
			if err != nil {
				return nil, err
			}
			return fn(ctx, a)
		},
	})
	if err != nil {
		return nil, err
	}
	return &Func[In, Out]{name: name, reg: c.reg}, nil
}

// MustRegisterFunc is RegisterFunc that panics on error, for package-level
// variables.
func MustRegisterFunc[In, Out any](name string, fn func(context.Context, In) (Out, error), opts ...RegisterOption) *Func[In, Out] {
	f, err := RegisterFunc(name, fn, opts...)
	if err != nil {
		panic(err)
	}
	return f
}

// RegisterFunc2 is RegisterFunc for a function of two arguments.
func RegisterFunc2[A, B, Out any](name string, fn func(context.Context, A, B) (Out, error), opts ...RegisterOption) (*Func2[A, B, Out], error) {
	c := newRegisterConfig(opts)
	if err := registerTypes3[A, B, Out](c.reg); err != nil {
		return nil, fmt.Errorf("register %q: %w", name, err)
	}
	info := &funcInfo{params: []reflect.Type{reflect.TypeFor[A](), reflect.TypeFor[B]()}, out: reflect.TypeFor[Out](), reg: c.reg}
	err := c.reg.Register(Op{
		Name: name, Signature: info.signature(), Cheap: c.cheap, fn: info,
		Run: func(ctx context.Context, in OpInput) (any, error) {
			args, err := info.decodeArgs(in)
			if err != nil {
				return nil, err
			}
			a, err := as[A](args[0], name, 0)
			if err != nil {
				return nil, err
			}
			b, err := as[B](args[1], name, 1)
			if err != nil {
				return nil, err
			}
			return fn(ctx, a, b)
		},
	})
	if err != nil {
		return nil, err
	}
	return &Func2[A, B, Out]{name: name, reg: c.reg}, nil
}

// MustRegisterFunc2 is RegisterFunc2 that panics on error.
func MustRegisterFunc2[A, B, Out any](name string, fn func(context.Context, A, B) (Out, error), opts ...RegisterOption) *Func2[A, B, Out] {
	f, err := RegisterFunc2(name, fn, opts...)
	if err != nil {
		panic(err)
	}
	return f
}

// RegisterFunc3 is RegisterFunc for a function of three arguments.
func RegisterFunc3[A, B, C, Out any](name string, fn func(context.Context, A, B, C) (Out, error), opts ...RegisterOption) (*Func3[A, B, C, Out], error) {
	c := newRegisterConfig(opts)
	if err := registerTypes3[A, B, C](c.reg); err != nil {
		return nil, fmt.Errorf("register %q: %w", name, err)
	}
	if err := ensureCodecFor[Out](c.reg); err != nil {
		return nil, fmt.Errorf("register %q: %w", name, err)
	}
	info := &funcInfo{params: []reflect.Type{reflect.TypeFor[A](), reflect.TypeFor[B](), reflect.TypeFor[C]()}, out: reflect.TypeFor[Out](), reg: c.reg}
	err := c.reg.Register(Op{
		Name: name, Signature: info.signature(), Cheap: c.cheap, fn: info,
		Run: func(ctx context.Context, in OpInput) (any, error) {
			args, err := info.decodeArgs(in)
			if err != nil {
				return nil, err
			}
			a, err := as[A](args[0], name, 0)
			if err != nil {
				return nil, err
			}
			b, err := as[B](args[1], name, 1)
			if err != nil {
				return nil, err
			}
			cc, err := as[C](args[2], name, 2)
			if err != nil {
				return nil, err
			}
			return fn(ctx, a, b, cc)
		},
	})
	if err != nil {
		return nil, err
	}
	return &Func3[A, B, C, Out]{name: name, reg: c.reg}, nil
}

// MustRegisterFunc3 is RegisterFunc3 that panics on error.
func MustRegisterFunc3[A, B, C, Out any](name string, fn func(context.Context, A, B, C) (Out, error), opts ...RegisterOption) *Func3[A, B, C, Out] {
	f, err := RegisterFunc3(name, fn, opts...)
	if err != nil {
		panic(err)
	}
	return f
}

func registerTypes2[A, B any](r *Registry) error {
	if err := ensureCodecFor[A](r); err != nil {
		return err
	}
	return ensureCodecFor[B](r)
}

func registerTypes3[A, B, C any](r *Registry) error {
	if err := registerTypes2[A, B](r); err != nil {
		return err
	}
	return ensureCodecFor[C](r)
}

// Name returns the op name.
func (f *Func[In, Out]) Name() string { return f.name }

// Call returns a lazy call of the function. arg is either a value of type
// In, a Delayed whose value has type In, or, when In is a slice type, a
// List of such elements.
func (f *Func[In, Out]) Call(arg any) Delayed { return f.reg.Call(f.name, arg) }

// Name returns the op name.
func (f *Func2[A, B, Out]) Name() string { return f.name }

// Call returns a lazy call of the function (see Func.Call).
func (f *Func2[A, B, Out]) Call(a, b any) Delayed { return f.reg.Call(f.name, a, b) }

// Name returns the op name.
func (f *Func3[A, B, C, Out]) Name() string { return f.name }

// Call returns a lazy call of the function (see Func.Call).
func (f *Func3[A, B, C, Out]) Call(a, b, c any) Delayed { return f.reg.Call(f.name, a, b, c) }

func (fi *funcInfo) signature() string {
	parts := make([]string, len(fi.params))
	for i, p := range fi.params {
		parts[i] = typeName(p)
	}
	return "func(" + strings.Join(parts, ", ") + ") " + typeName(fi.out)
}

// as converts one decoded argument to the parameter type T.
func as[T any](v any, op string, i int) (T, error) {
	if v == nil {
		var zero T
		return zero, nil
	}
	t, ok := v.(T)
	if !ok {
		return t, fmt.Errorf("op %s: argument %d is a %T, want %s", op, i, v, reflect.TypeFor[T]())
	}
	return t, nil
}

// encodeArg turns one argument of a call into its wire form, adding the
// Delayed values it names to deps.
func (fi *funcInfo) encodeArg(reg *Registry, v any, want reflect.Type, deps *[]*node, depIdx map[Key]uint32) (*graphpb.Arg, error) {
	addDep := func(n *node) *graphpb.Arg {
		i, ok := depIdx[n.key()]
		if !ok {
			i = uint32(len(*deps))
			depIdx[n.key()] = i
			*deps = append(*deps, n)
		}
		return &graphpb.Arg{Kind: &graphpb.Arg_Dep{Dep: i}}
	}
	switch x := v.(type) {
	case Delayed:
		if x.n == nil {
			return nil, fmt.Errorf("zero Delayed value")
		}
		if x.n.err != nil {
			return nil, x.n.err
		}
		if x.n.out != nil && want != nil && want.Kind() != reflect.Interface && !x.n.out.AssignableTo(want) &&
			x.n.out.Kind() != reflect.Interface {
			return nil, fmt.Errorf("%s produces a %s, want %s", x.n.key(), x.n.out, want)
		}
		return addDep(x.n), nil
	case []Delayed:
		items := make([]any, len(x))
		for i := range x {
			items[i] = x[i]
		}
		return fi.encodeArg(reg, List(items...), want, deps, depIdx)
	case ListValue:
		var elem reflect.Type
		if want != nil {
			if want.Kind() != reflect.Slice && want.Kind() != reflect.Interface {
				return nil, fmt.Errorf("a list is passed where a %s is wanted", want)
			}
			if want.Kind() == reflect.Slice {
				elem = want.Elem()
			}
		}
		l := &graphpb.ArgList{Items: make([]*graphpb.Arg, len(x.items))}
		for i, it := range x.items {
			a, err := fi.encodeArg(reg, it, elem, deps, depIdx)
			if err != nil {
				return nil, fmt.Errorf("list item %d: %w", i, err)
			}
			l.Items[i] = a
		}
		return &graphpb.Arg{Kind: &graphpb.Arg_List{List: l}}, nil
	}
	// A literal: convert it to the parameter type, then encode it.
	if want != nil && want.Kind() != reflect.Interface && v != nil {
		rv := reflect.ValueOf(v)
		if !rv.Type().AssignableTo(want) {
			if isNumber(rv.Kind()) && isNumber(want.Kind()) && rv.CanConvert(want) {
				cv, ok := convertNumber(rv, want)
				if !ok {
					return nil, fmt.Errorf("%v (a %s) does not fit in a %s", v, rv.Type(), want)
				}
				v = cv.Interface()
			} else {
				return nil, fmt.Errorf("got a %s, want a %s", rv.Type(), want)
			}
		}
	}
	ev, err := reg.EncodeValue(v)
	if err != nil {
		return nil, err
	}
	return &graphpb.Arg{Kind: &graphpb.Arg_Literal{Literal: &graphpb.Value{Codec: ev.Codec, Data: ev.Data}}}, nil
}

func isNumber(k reflect.Kind) bool {
	return k >= reflect.Int && k <= reflect.Float64
}

// convertNumber converts a number to the type want, and reports whether the
// value survived: no change of sign, no overflow, no lost fraction. Between
// float types only the rounding of the mantissa is allowed.
func convertNumber(v reflect.Value, want reflect.Type) (reflect.Value, bool) {
	c := v.Convert(want)
	if sign(v) != sign(c) {
		return c, false
	}
	if isFloat(v.Kind()) && isFloat(want.Kind()) {
		return c, math.IsInf(c.Float(), 0) == math.IsInf(v.Float(), 0)
	}
	return c, c.Convert(v.Type()).Equal(v)
}

func isFloat(k reflect.Kind) bool { return k == reflect.Float32 || k == reflect.Float64 }

func sign(v reflect.Value) int {
	switch {
	case v.CanInt():
		return cmp.Compare(v.Int(), 0)
	case v.CanUint():
		return cmp.Compare(v.Uint(), 0)
	default:
		return cmp.Compare(v.Float(), 0)
	}
}

// decodeArgs rebuilds the arguments of a call from the task's params and
// inputs, converted to the parameter types.
func (fi *funcInfo) decodeArgs(in OpInput) ([]any, error) {
	var call graphpb.Call
	if err := proto.Unmarshal(in.Params, &call); err != nil {
		return nil, fmt.Errorf("decode call params: %w", err)
	}
	if len(call.Args) != len(fi.params) {
		return nil, fmt.Errorf("call has %d arguments, the function takes %d", len(call.Args), len(fi.params))
	}
	reg := fi.reg
	if in.Env != nil && in.Env.Registry != nil {
		reg = in.Env.Registry
	}
	out := make([]any, len(call.Args))
	for i, a := range call.Args {
		v, err := decodeArg(reg, a, fi.params[i], in.Inputs)
		if err != nil {
			return nil, fmt.Errorf("argument %d: %w", i, err)
		}
		out[i] = v
	}
	return out, nil
}

func decodeArg(reg *Registry, a *graphpb.Arg, want reflect.Type, inputs []any) (any, error) {
	switch k := a.Kind.(type) {
	case *graphpb.Arg_Dep:
		if int(k.Dep) >= len(inputs) {
			return nil, fmt.Errorf("dependency %d of %d", k.Dep, len(inputs))
		}
		return inputs[k.Dep], nil
	case *graphpb.Arg_Literal:
		return reg.DecodeValue(Value{Codec: k.Literal.Codec, Data: k.Literal.Data})
	case *graphpb.Arg_List:
		var elem reflect.Type
		if want != nil && want.Kind() == reflect.Slice {
			elem = want.Elem()
		}
		items := make([]any, len(k.List.Items))
		for i, it := range k.List.Items {
			v, err := decodeArg(reg, it, elem, inputs)
			if err != nil {
				return nil, fmt.Errorf("list item %d: %w", i, err)
			}
			items[i] = v
		}
		if want == nil || want.Kind() != reflect.Slice {
			return items, nil
		}
		s := reflect.MakeSlice(want, len(items), len(items))
		for i, it := range items {
			if it == nil {
				continue
			}
			rv := reflect.ValueOf(it)
			if !rv.Type().AssignableTo(elem) {
				return nil, fmt.Errorf("list item %d is a %s, want %s", i, rv.Type(), elem)
			}
			s.Index(i).Set(rv)
		}
		return s.Interface(), nil
	}
	return nil, fmt.Errorf("empty argument")
}
