package graph_test

import (
	"context"
	"errors"
	"math/big"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/graph/graphpb"
)

// arith registers a few small functions in a child of the default
// registry, as a test or a program would at init time.
type arith struct {
	reg    *graph.Registry
	double *graph.Func[int64, int64]
	sum    *graph.Func[[]int64, int64]
	add    *graph.Func2[int64, int64, int64]
	clamp  *graph.Func3[float64, float64, float64, float64]
	show   *graph.Func[any, string]
	small  *graph.Func[int8, int8]
	unsign *graph.Func[uint32, uint32]
	half   *graph.Func[float32, float32]
}

func newArith(t testing.TB) *arith {
	t.Helper()
	reg := graph.Default().Child()
	in := graph.InRegistry(reg)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	a := &arith{reg: reg}
	var err error
	a.double, err = graph.RegisterFunc("test.double", func(_ context.Context, x int64) (int64, error) { return 2 * x, nil }, in)
	must(err)
	a.sum, err = graph.RegisterFunc("test.sum", func(_ context.Context, xs []int64) (int64, error) {
		var s int64
		for _, x := range xs {
			s += x
		}
		return s, nil
	}, in)
	must(err)
	a.add, err = graph.RegisterFunc2("test.add", func(_ context.Context, x, y int64) (int64, error) { return x + y, nil }, in)
	must(err)
	a.clamp, err = graph.RegisterFunc3("test.clamp", func(_ context.Context, x, lo, hi float64) (float64, error) {
		return min(max(x, lo), hi), nil
	}, in, graph.AsCheap())
	must(err)
	a.show, err = graph.RegisterFunc("test.show", func(_ context.Context, v any) (string, error) {
		return reflect.TypeOf(v).String(), nil
	}, in)
	must(err)
	a.small, err = graph.RegisterFunc("test.small", func(_ context.Context, x int8) (int8, error) { return x, nil }, in)
	must(err)
	a.unsign, err = graph.RegisterFunc("test.unsigned", func(_ context.Context, x uint32) (uint32, error) { return x, nil }, in)
	must(err)
	a.half, err = graph.RegisterFunc("test.half", func(_ context.Context, x float32) (float32, error) { return x / 2, nil }, in)
	must(err)
	return a
}

// value computes d with the sequential evaluator of the tests.
func (a *arith) value(t testing.TB, d graph.Delayed) any {
	t.Helper()
	return mustCompute(t, a.reg, d)
}

func TestRegisterFuncCall(t *testing.T) {
	a := newArith(t)
	tests := []struct {
		name string
		d    graph.Delayed
		want any
	}{
		{"typed literal", a.double.Call(int64(21)), int64(42)},
		{"untyped constant into int64", a.double.Call(21), int64(42)},
		{"int32 into int64", a.double.Call(int32(-4)), int64(-8)},
		{"delayed arg", a.double.Call(a.double.Call(1)), int64(4)},
		{"two args", a.add.Call(1, a.double.Call(2)), int64(5)},
		{"three args", a.clamp.Call(7.5, 0, a.reg.Literal(5.0)), 5.0},
		{"float32 function", a.half.Call(a.half.Call(float32(10))), float32(2.5)},
		{"list of delayed and literals", a.sum.Call(graph.List(a.double.Call(1), int64(10), 7, a.double.Call(2))), int64(23)},
		{"empty list", a.sum.Call(graph.List()), int64(0)},
		{"slice of delayed", a.sum.Call([]graph.Delayed{a.double.Call(1), a.add.Call(1, 1)}), int64(4)},
		{"slice literal", a.sum.Call([]int64{1, 2, 3}), int64(6)},
		{"same delayed twice", a.add.Call(a.double.Call(3), a.double.Call(3)), int64(12)},
		{"any param, list", a.show.Call(graph.List(1, "x")), "[]interface {}"},
		{"any param, literal", a.show.Call(int16(3)), "int16"},
		{"any param, delayed", a.show.Call(a.double.Call(1)), "int64"},
		{"nil is the zero value", a.reg.Call("test.add", nil, 1), int64(1)},
		{"float constant to float32", a.half.Call(0.1), float32(0.1) / 2},
		{"int constant to float32", a.half.Call(3), float32(1.5)},
		{"int to uint32", a.unsign.Call(7), uint32(7)},
		{"int to int8", a.small.Call(-128), int8(-128)},
		{"whole float to int64", a.double.Call(2.0), int64(4)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.d.Err(); err != nil {
				t.Fatal(err)
			}
			if got := a.value(t, tt.d); got != tt.want {
				t.Errorf("value = %#v, want %#v", got, tt.want)
			}
		})
	}

	d := a.double.Call(1)
	if d.Type() != reflect.TypeFor[int64]() {
		t.Errorf("Type = %v", d.Type())
	}
	if p := d.Key().Prefix(); p != "test.double" {
		t.Errorf("key %s has prefix %q", d.Key(), p)
	}
	if a.double.Name() != "test.double" || a.add.Name() != "test.add" || a.clamp.Name() != "test.clamp" {
		t.Error("Name is wrong")
	}
	op, _ := a.reg.Lookup("test.clamp")
	if !op.Cheap || op.Signature != "func(float64, float64, float64) float64" {
		t.Errorf("clamp op: cheap %v, signature %q", op.Cheap, op.Signature)
	}
	op, _ = a.reg.Lookup("test.sum")
	if op.Cheap || op.Signature != "func([]int64) int64" {
		t.Errorf("sum op: cheap %v, signature %q", op.Cheap, op.Signature)
	}
	// A repeated dependency is one input.
	tk := graphOf(t, a.add.Call(d, d)).Tasks()
	if last := tk[len(tk)-1]; len(last.Deps) != 1 {
		t.Errorf("add(d, d) has deps %v", last.Deps)
	}
}

func TestCallErrors(t *testing.T) {
	a := newArith(t)
	strDelayed := a.show.Call(1)
	bad := a.reg.Call("test.nope")
	tests := []struct {
		name string
		d    graph.Delayed
		want []string // substrings of the error
	}{
		{"wrong literal type", a.double.Call("x"), []string{`"test.double"`, "argument 0", "string", "int64"}},
		{"wrong type, second argument", a.add.Call(1, "x"), []string{`"test.add"`, "argument 1"}},
		{"wrong type, third argument", a.clamp.Call(1, 2, []int{3}), []string{`"test.clamp"`, "argument 2"}},
		{"wrong delayed type", a.double.Call(strDelayed), []string{"argument 0", "string", "int64", string(strDelayed.Key())}},
		{"fraction to int", a.double.Call(2.5), []string{"argument 0", "does not fit"}},
		{"overflow int8", a.small.Call(300), []string{"does not fit", "int8"}},
		{"negative to uint", a.unsign.Call(-1), []string{"does not fit", "uint32"}},
		{"overflow uint32", a.unsign.Call(int64(1) << 40), []string{"does not fit"}},
		{"big float to float32", a.half.Call(1e300), []string{"does not fit", "float32"}},
		{"big uint to int64", a.double.Call(uint64(1<<63 + 1)), []string{"does not fit"}},
		{"delayed float32 to float64", a.clamp.Call(1, 2, a.half.Call(1)), []string{"argument 2", "float32", "float64"}},
		{"list to a scalar", a.double.Call(graph.List(1)), []string{"argument 0", "list"}},
		{"wrong list item", a.sum.Call(graph.List(1, "two")), []string{"argument 0", "list item 1"}},
		{"wrong delayed list item", a.sum.Call(graph.List(1, strDelayed)), []string{"list item 1", "string"}},
		{"too many arguments", a.reg.Call("test.double", 1, 2), []string{`"test.double"`, "2 arguments", "takes 1"}},
		{"too few arguments", a.reg.Call("test.add", 1), []string{"1 arguments", "takes 2"}},
		{"unknown op", bad, []string{`"test.nope"`, "graph.RegisterFunc"}},
		{"op that is not a function", a.reg.Call(graph.OpList, 1), []string{graph.OpList, "RegisterFunc"}},
		{"chan literal", a.show.Call(make(chan int)), []string{"argument 0", "chan int", "RegisterCodec"}},
		{"func literal", a.show.Call(func() {}), []string{"argument 0", "func()"}},
		{"chan in a list", a.show.Call(graph.List(1, make(chan int))), []string{"list item 1", "chan int"}},
		{"failed dependency", a.double.Call(bad), []string{`"test.nope"`}},
		{"zero delayed", a.double.Call(graph.Delayed{}), []string{"zero Delayed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.d.Err()
			if err == nil {
				t.Fatal("no error")
			}
			for _, s := range tt.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			// A Delayed that could not be built cannot be collected.
			if _, _, cerr := graph.Collect(tt.d); cerr == nil {
				t.Error("Collect succeeded")
			}
		})
	}

	var ue *graph.UnknownOpError
	if !errors.As(bad.Err(), &ue) || ue.Op != "test.nope" {
		t.Errorf("unknown op error is %T", bad.Err())
	}
	var ee *graph.UnencodableError
	if err := a.show.Call(make(chan int)).Err(); !errors.As(err, &ee) {
		t.Errorf("chan literal error is %T, want an *UnencodableError inside", err)
	}
	if !errors.As(a.double.Call(bad).Err(), &ue) {
		t.Error("the error of a dependency is not passed on")
	}
	if graph.Call("test.double", 1).Err() == nil {
		t.Error("graph.Call found an op that is only in a child registry")
	}
}

type withFuncField struct {
	Name string
	F    func()
}

type noExported struct{ a, b int }

type deep struct {
	Items []map[string]*withChan
}

// money has only unexported fields but encodes itself, as gob allows.
type money struct {
	Amount *big.Int
	cents  int
}

func TestRegisterFuncUnencodable(t *testing.T) {
	reg := graph.Default().Child()
	in := graph.InRegistry(reg)
	tests := []struct {
		name     string
		register func() error
		want     []string
	}{
		{"chan field in the argument", func() error {
			_, err := graph.RegisterFunc("bad.in", func(context.Context, withChan) (int, error) { return 0, nil }, in)
			return err
		}, []string{`"bad.in"`, "field C", "chan"}},
		{"func field in the result", func() error {
			_, err := graph.RegisterFunc("bad.out", func(context.Context, int) (withFuncField, error) { return withFuncField{}, nil }, in)
			return err
		}, []string{`"bad.out"`, "field F", "func"}},
		{"deep chan", func() error {
			_, err := graph.RegisterFunc("bad.deep", func(context.Context, deep) (int, error) { return 0, nil }, in)
			return err
		}, []string{"field Items", "field C"}},
		{"no exported fields", func() error {
			_, err := graph.RegisterFunc("bad.unexported", func(context.Context, noExported) (int, error) { return 0, nil }, in)
			return err
		}, []string{"no exported fields"}},
		{"chan argument of Func2", func() error {
			_, err := graph.RegisterFunc2("bad.two", func(context.Context, int, chan int) (int, error) { return 0, nil }, in)
			return err
		}, []string{`"bad.two"`, "chan"}},
		{"func result of Func2", func() error {
			_, err := graph.RegisterFunc2("bad.two.out", func(context.Context, int, int) (func(), error) { return nil, nil }, in)
			return err
		}, []string{`"bad.two.out"`, "func"}},
		{"chan argument of Func3", func() error {
			_, err := graph.RegisterFunc3("bad.three", func(context.Context, int, int, withChan) (int, error) { return 0, nil }, in)
			return err
		}, []string{`"bad.three"`, "chan"}},
		{"chan result of Func3", func() error {
			_, err := graph.RegisterFunc3("bad.three.out", func(context.Context, int, int, int) (chan int, error) { return nil, nil }, in)
			return err
		}, []string{`"bad.three.out"`, "chan"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.register()
			var ue *graph.UnencodableError
			if !errors.As(err, &ue) {
				t.Fatalf("error = %v, want an *UnencodableError", err)
			}
			for _, s := range tt.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
	for _, name := range []string{"bad.in", "bad.out", "bad.two", "bad.three"} {
		if _, ok := reg.Lookup(name); ok {
			t.Errorf("%s was registered despite the error", name)
		}
	}

	// Types that encode themselves (here through *big.Int's GobEncode) are fine.
	f, err := graph.RegisterFunc("ok.money", func(_ context.Context, m money) (money, error) {
		return money{Amount: new(big.Int).Mul(m.Amount, big.NewInt(2))}, nil
	}, in)
	if err != nil {
		t.Fatal(err)
	}
	v := mustCompute(t, reg, f.Call(money{Amount: big.NewInt(1e18)})).(money)
	if v.Amount.String() != "2000000000000000000" {
		t.Errorf("money = %v", v.Amount)
	}
	if _, err := graph.RegisterFunc("ok.bigint", func(_ context.Context, b *big.Int) (*big.Int, error) { return b, nil }, in); err != nil {
		t.Error(err)
	}
}

func TestRegisterFuncDuplicate(t *testing.T) {
	reg := graph.Default().Child()
	fn := func(_ context.Context, x int) (int, error) { return x, nil }
	if _, err := graph.RegisterFunc("dup.f", fn, graph.InRegistry(reg)); err != nil {
		t.Fatal(err)
	}
	_, err := graph.RegisterFunc("dup.f", fn, graph.InRegistry(reg))
	var de *graph.DuplicateOpError
	if !errors.As(err, &de) {
		t.Errorf("second RegisterFunc = %v, want a *DuplicateOpError", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("MustRegisterFunc of a taken name did not panic")
		}
	}()
	graph.MustRegisterFunc("dup.f", fn, graph.InRegistry(reg))
}

func TestMustRegister(t *testing.T) {
	reg := graph.Default().Child()
	in := graph.InRegistry(reg)
	f1 := graph.MustRegisterFunc("must.one", func(_ context.Context, s string) (int, error) { return len(s), nil }, in)
	f2 := graph.MustRegisterFunc2("must.two", func(_ context.Context, s string, n int) (string, error) {
		return strings.Repeat(s, n), nil
	}, in)
	f3 := graph.MustRegisterFunc3("must.three", func(_ context.Context, a, b, c string) (string, error) { return a + b + c, nil }, in)
	got := mustCompute(t, reg, f1.Call(f3.Call("a", f2.Call("b", 3), "c")))
	if got != 5 {
		t.Errorf("value = %v, want 5", got)
	}
	for name, f := range map[string]func(){
		"2": func() {
			graph.MustRegisterFunc2("must.two", func(context.Context, int, int) (int, error) { return 0, nil }, in)
		},
		"3": func() {
			graph.MustRegisterFunc3("must.three", func(context.Context, int, int, int) (int, error) { return 0, nil }, in)
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("MustRegisterFunc%s of a taken name did not panic", name)
				}
			}()
			f()
		}()
	}
}

func TestCallsArePure(t *testing.T) {
	a := newArith(t)
	b := newArith(t) // another registry with the same functions: another process
	same := []struct{ x, y graph.Delayed }{
		{a.double.Call(1), a.double.Call(1)},
		{a.double.Call(1), a.double.Call(int64(1))}, // converted before encoding
		{a.double.Call(1), b.double.Call(1)},
		{a.sum.Call(graph.List(1, a.double.Call(2))), b.sum.Call(graph.List(int64(1), b.double.Call(2)))},
		{a.add.Call(a.double.Call(1), 2), b.add.Call(b.double.Call(1), 2)},
		{a.show.Call(map[string]string{"a": "1", "b": "2", "c": "3", "d": "4"}),
			a.show.Call(map[string]string{"d": "4", "c": "3", "b": "2", "a": "1"})},
		{a.reg.Literal(3), b.reg.Literal(3)},
	}
	for i, p := range same {
		if p.x.Key() != p.y.Key() || p.x.Key() == "" {
			t.Errorf("case %d: keys %q and %q differ", i, p.x.Key(), p.y.Key())
		}
	}
	different := []graph.Delayed{
		a.double.Call(1),
		a.double.Call(2),
		a.double.Call(a.double.Call(1)),
		a.double.Call(a.double.Call(2)),
		a.show.Call(1),
		a.show.Call(int64(1)), // the literal's type is part of the call
		a.show.Call("1"),
		a.add.Call(1, 2),
		a.add.Call(2, 1),
		a.sum.Call(graph.List(1, 2)),
		a.sum.Call(graph.List(2, 1)),
		a.sum.Call(graph.List(1, 2, 0)),
		a.sum.Call([]int64{1, 2}), // a literal slice is not a list of literals
		a.reg.Literal(int64(1)),
		a.reg.Literal(1),
		a.show.Call(a.reg.Literal(1)),
		a.show.Call(graph.FromKey("x")),
		a.show.Call(graph.FromKey("y")),
	}
	seen := map[graph.Key]int{}
	for i, d := range different {
		if err := d.Err(); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if j, ok := seen[d.Key()]; ok {
			t.Errorf("cases %d and %d have the same key %s", j, i, d.Key())
		}
		seen[d.Key()] = i
	}
}

func callParams(t testing.TB, args ...*graphpb.Arg) []byte {
	t.Helper()
	b, err := proto.Marshal(&graphpb.Call{Args: args})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCallParamsFromElsewhere(t *testing.T) {
	// Params written by hand (another program, a corrupted dump): the
	// function's op checks them rather than trusting them.
	a := newArith(t)
	lit := func(v any) *graphpb.Arg {
		ev, err := a.reg.EncodeValue(v)
		if err != nil {
			t.Fatal(err)
		}
		return &graphpb.Arg{Kind: &graphpb.Arg_Literal{Literal: &graphpb.Value{Codec: ev.Codec, Data: ev.Data}}}
	}
	dep := func(i uint32) *graphpb.Arg { return &graphpb.Arg{Kind: &graphpb.Arg_Dep{Dep: i}} }
	list := func(items ...*graphpb.Arg) *graphpb.Arg {
		return &graphpb.Arg{Kind: &graphpb.Arg_List{List: &graphpb.ArgList{Items: items}}}
	}
	tests := []struct {
		name   string
		op     string
		args   []*graphpb.Arg
		inputs []any
		want   any
		err    string
	}{
		{"dep out of range", "test.double", []*graphpb.Arg{dep(3)}, []any{int64(1)}, nil, "dependency 3 of 1"},
		{"empty argument", "test.double", []*graphpb.Arg{{}}, nil, nil, "empty argument"},
		{"literal of another type", "test.double", []*graphpb.Arg{lit("x")}, nil, nil, "argument 0 is a string"},
		{"unknown codec", "test.double", []*graphpb.Arg{{Kind: &graphpb.Arg_Literal{Literal: &graphpb.Value{Codec: "zzz"}}}},
			nil, nil, `"zzz"`},
		{"list item of another type", "test.sum", []*graphpb.Arg{list(lit(int64(1)), dep(0))}, []any{"s"}, nil,
			"list item 1 is a string"},
		{"nil list item", "test.sum", []*graphpb.Arg{list(lit(int64(1)), dep(0), lit(nil))}, []any{nil}, int64(1), ""},
		{"bad list item", "test.sum", []*graphpb.Arg{list(lit(int64(1)), &graphpb.Arg{})}, nil, nil, "list item 1: empty argument"},
		{"list into any", "test.show", []*graphpb.Arg{list(lit(1))}, nil, "[]interface {}", ""},
		{"nested list into any", "test.show", []*graphpb.Arg{list(list(lit(1)))}, nil, "[]interface {}", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			deps := make([]graph.Key, len(tt.inputs))
			for i := range deps {
				deps[i] = graph.NewKey("in", "", i)
			}
			tk := &graph.Task{Key: "k", Op: tt.op, Params: callParams(t, tt.args...), Deps: deps}
			v, err := a.reg.RunTask(t.Context(), tk, tt.inputs, nil)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("error = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil || v != tt.want {
				t.Errorf("RunTask = %#v, %v; want %#v", v, err, tt.want)
			}
		})
	}
}
