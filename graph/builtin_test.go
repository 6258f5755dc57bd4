package graph_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/shoal-data/shoal/graph"
)

func valueTask(t testing.TB, key graph.Key, v any) *graph.Task {
	t.Helper()
	return &graph.Task{Key: key, Op: graph.OpValue, Params: mustMarshal(t, graph.Default(), v)}
}

// runBoth runs g and its decoded copy (in a fresh registry holding the same
// ops) and checks that both give want for key.
func runBoth(t *testing.T, reg, reg2 *graph.Registry, g *graph.Graph, ext map[graph.Key]any, key graph.Key, want any) {
	t.Helper()
	vs, err := seqEval(t.Context(), reg, g, ext, key)
	if err != nil {
		t.Fatal(err)
	}
	if !sameValue(vs[0], want) {
		t.Errorf("value = %#v, want %#v", vs[0], want)
	}
	c := encodeDecode(t, g)
	vs2, err := seqEval(t.Context(), reg2, c, ext, key)
	if err != nil {
		t.Fatalf("decoded copy: %v", err)
	}
	if !sameValue(vs2[0], vs[0]) {
		t.Errorf("decoded copy computes %#v, the original %#v", vs2[0], vs[0])
	}
}

func TestBuiltinOpsSurviveEncoding(t *testing.T) {
	a := newArith(t)
	b := newArith(t) // the registry of the process that decodes
	tests := []struct {
		name  string
		tasks []*graph.Task
		ext   map[graph.Key]any
		key   graph.Key
		want  any
	}{
		{"value", []*graph.Task{valueTask(t, "v", int64(42))}, nil, "v", int64(42)},
		{"value list", []*graph.Task{valueTask(t, "v", []any{1, "x", nil})}, nil, "v", []any{1, "x", nil}},
		{"list", []*graph.Task{
			valueTask(t, "a", 1), valueTask(t, "b", "two"),
			{Key: "l", Op: graph.OpList, Deps: []graph.Key{"a", "b", "a"}},
		}, nil, "l", []any{1, "two", 1}},
		{"empty list", []*graph.Task{{Key: "l", Op: graph.OpList}}, nil, "l", []any(nil)},
		{"list of external", []*graph.Task{{Key: "l", Op: graph.OpList, Deps: []graph.Key{"held"}}},
			map[graph.Key]any{"held": 2.5}, "l", []any{2.5}},
		{"alias", []*graph.Task{
			valueTask(t, "a", "x"),
			{Key: "b", Op: graph.OpAlias, Deps: []graph.Key{"a"}},
		}, nil, "b", "x"},
		{"getitem", []*graph.Task{
			valueTask(t, "a", int64(1)), valueTask(t, "b", int64(2)),
			{Key: "l", Op: graph.OpList, Deps: []graph.Key{"a", "b"}},
			{Key: "g", Op: graph.OpGetItem, Params: graph.GetItemParams(1), Deps: []graph.Key{"l"}},
		}, nil, "g", int64(2)},
		{"getitem of a value", []*graph.Task{
			valueTask(t, "l", []any{"p", []any{"q"}}),
			{Key: "g0", Op: graph.OpGetItem, Params: graph.GetItemParams(1), Deps: []graph.Key{"l"}},
			{Key: "g1", Op: graph.OpGetItem, Params: graph.GetItemParams(0), Deps: []graph.Key{"g0"}},
		}, nil, "g1", "q"},
		{"function call", mustTasks(t, a.add.Call(a.double.Call(3), 1)), nil, a.add.Call(a.double.Call(3), 1).Key(), int64(7)},
	}
	fused, fusedKey := fusedChain(t, a)
	tests = append(tests, struct {
		name  string
		tasks []*graph.Task
		ext   map[graph.Key]any
		key   graph.Key
		want  any
	}{"fused", fused, nil, fusedKey, int64(3*2*2 + 3)})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := mustGraph(t, tt.tasks...)
			for k := range tt.ext {
				g.AddExternal(k)
			}
			runBoth(t, a.reg, b.reg, g, tt.ext, tt.key, tt.want)
		})
	}
}

func mustTasks(t testing.TB, d graph.Delayed) []*graph.Task {
	t.Helper()
	return graphOf(t, d).Tasks()
}

// fusedChain returns the tasks of a graph that computes
// add(double(double(x)), x) for x = 3, with the three calls fused into one
// task, and the key of the result.
func fusedChain(t testing.TB, a *arith) ([]*graph.Task, graph.Key) {
	t.Helper()
	x := a.reg.Literal(int64(3))
	d2 := a.double.Call(a.double.Call(x))
	top := a.add.Call(d2, x)
	g := graphOf(t, top)
	inner := g.Tasks()[1:] // everything but the literal
	params, err := graph.FusedParams(inner, []graph.Key{x.Key()})
	if err != nil {
		t.Fatal(err)
	}
	lit, _ := g.Get(x.Key())
	return []*graph.Task{lit, {Key: top.Key(), Op: graph.OpFused, Params: params, Deps: []graph.Key{x.Key()}}}, top.Key()
}

func TestFusedParamsRoundTrip(t *testing.T) {
	a := newArith(t)
	x := graph.FromKey("x")
	y := graph.FromKey("y")
	p := a.add.Call(a.double.Call(x), y)
	q := a.add.Call(p, a.double.Call(y))
	g := graphOf(t, q)
	g.Tasks()[0].Annotations = graph.Annotations{Priority: 2, Span: "inner"}
	// Inputs in an order other than the one the tasks name them in, and
	// one input that no inner task uses.
	inputs := []graph.Key{"y", "unused", "x"}
	params, err := graph.FusedParams(g.Tasks(), inputs)
	if err != nil {
		t.Fatal(err)
	}
	tasks, gotInputs, err := graph.FusedTasks(params)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gotInputs, inputs) {
		t.Errorf("inputs %v, want %v", gotInputs, inputs)
	}
	if len(tasks) != g.Len() {
		t.Fatalf("%d tasks, want %d", len(tasks), g.Len())
	}
	for i, tk := range tasks {
		if !tk.Equal(g.Tasks()[i]) {
			t.Errorf("task %d: %+v, want %+v", i, tk, g.Tasks()[i])
		}
	}
	// Same tasks, same bytes.
	again, _ := graph.FusedParams(g.Tasks(), inputs)
	if string(again) != string(params) {
		t.Error("FusedParams is not deterministic")
	}

	// The fused task computes what the unfused graph computes.
	ext := map[graph.Key]any{"x": int64(5), "y": int64(7), "unused": "whatever"}
	want, err := seqEval(t.Context(), a.reg, g, ext, q.Key())
	if err != nil {
		t.Fatal(err)
	}
	fg := mustGraph(t, &graph.Task{Key: q.Key(), Op: graph.OpFused, Params: params, Deps: inputs})
	fg.AddExternal(inputs...)
	runBoth(t, a.reg, newArith(t).reg, fg, ext, q.Key(), want[0])
	if want[0] != int64(5*2+7+7*2) {
		t.Errorf("unfused value = %v", want[0])
	}

	// Inputs must cover what the tasks depend on.
	if _, err := graph.FusedParams(g.Tasks(), []graph.Key{"x"}); err == nil {
		t.Error("FusedParams with a missing input: no error")
	}
	if _, _, err := graph.FusedTasks([]byte{0xff, 0x01}); err == nil {
		t.Error("FusedTasks of garbage: no error")
	}
}

func TestFusedInnerError(t *testing.T) {
	reg := graph.Default().Child()
	fail, err := graph.RegisterFunc("test.fail", func(_ context.Context, x int64) (int64, error) {
		if x > 10 {
			return 0, fmt.Errorf("%d is too big", x)
		}
		return x, nil
	}, graph.InRegistry(reg))
	if err != nil {
		t.Fatal(err)
	}
	dbl, err := graph.RegisterFunc("test.dbl", func(_ context.Context, x int64) (int64, error) { return 2 * x, nil },
		graph.InRegistry(reg))
	if err != nil {
		t.Fatal(err)
	}
	x := graph.FromKey("x")
	mid := fail.Call(dbl.Call(x))
	top := dbl.Call(mid)
	g := graphOf(t, top)
	params, err := graph.FusedParams(g.Tasks(), []graph.Key{"x"})
	if err != nil {
		t.Fatal(err)
	}
	fused := &graph.Task{Key: top.Key(), Op: graph.OpFused, Params: params, Deps: []graph.Key{"x"}}

	v, err := reg.RunTask(t.Context(), fused, []any{int64(3)}, nil)
	if err != nil || v != int64(12) {
		t.Fatalf("fused = %v, %v; want 12", v, err)
	}
	_, err = reg.RunTask(t.Context(), fused, []any{int64(6)}, nil)
	if err == nil {
		t.Fatal("no error")
	}
	if !strings.Contains(err.Error(), string(mid.Key())) || !strings.Contains(err.Error(), "test.fail") ||
		!strings.Contains(err.Error(), "12 is too big") {
		t.Errorf("error %q does not name the inner task %s, its op and the cause", err, mid.Key())
	}
	var ie *graph.InnerTaskError
	if !errors.As(err, &ie) || ie.Key != mid.Key() || ie.Op != "test.fail" {
		t.Errorf("error is %T, want an *InnerTaskError for %s", err, mid.Key())
	}

	// A panic inside is caught too, and blamed on the inner task.
	boom, err := graph.RegisterFunc("test.boom", func(_ context.Context, x int64) (int64, error) {
		var m map[string]int
		m["x"] = int(x) // nil map: panics
		return 0, nil
	}, graph.InRegistry(reg))
	if err != nil {
		t.Fatal(err)
	}
	inner := boom.Call(x)
	g = graphOf(t, dbl.Call(inner))
	params, _ = graph.FusedParams(g.Tasks(), []graph.Key{"x"})
	_, err = reg.RunTask(t.Context(), &graph.Task{Key: "f", Op: graph.OpFused, Params: params, Deps: []graph.Key{"x"}},
		[]any{int64(1)}, nil)
	var pe *graph.PanicError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), string(inner.Key())) {
		t.Errorf("panic inside a fused task: %v", err)
	}

	// Wrong number of inputs; no inner tasks.
	if _, err := reg.RunTask(t.Context(), &graph.Task{Key: "f", Op: graph.OpFused, Params: params, Deps: []graph.Key{"x", "y"}},
		[]any{int64(1), int64(2)}, nil); err == nil {
		t.Error("fused task with more inputs than declared: no error")
	}
	empty, err := graph.FusedParams(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.RunTask(t.Context(), &graph.Task{Key: "f", Op: graph.OpFused, Params: empty}, nil, nil); err == nil {
		t.Error("empty fused task: no error")
	}
	// Cancellation stops between inner tasks.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := reg.RunTask(ctx, fused, []any{int64(1)}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled fused task = %v", err)
	}
}

func TestGetItemErrors(t *testing.T) {
	reg := graph.Default()
	tests := []struct {
		name   string
		params []byte
		inputs []any
		want   string
	}{
		{"out of range", graph.GetItemParams(3), []any{[]any{1, 2, 3}}, "index 3 out of range (3 items)"},
		{"empty", graph.GetItemParams(0), []any{[]any{}}, "out of range"},
		{"huge index", graph.GetItemParams(1 << 62), []any{[]any{1}}, "out of range"},
		{"not a list", graph.GetItemParams(0), []any{"abc"}, "string"},
		{"bad params", nil, []any{[]any{1}}, "params"},
		{"two inputs", graph.GetItemParams(0), []any{[]any{1}, []any{2}}, "2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			deps := make([]graph.Key, len(tt.inputs))
			for i := range deps {
				deps[i] = graph.NewKey("in", "", i)
			}
			_, err := reg.RunTask(t.Context(), &graph.Task{Key: "g", Op: graph.OpGetItem, Params: tt.params, Deps: deps}, tt.inputs, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
	// Out of range through a whole graph, as an executor would report it.
	g := mustGraph(t, valueTask(t, "l", []any{1}),
		&graph.Task{Key: "g", Op: graph.OpGetItem, Params: graph.GetItemParams(5), Deps: []graph.Key{"l"}})
	_, err := seqEval(t.Context(), reg, encodeDecode(t, g), nil, "g")
	var te *graph.TaskError
	if !errors.As(err, &te) || te.Key != "g" || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("error = %v", err)
	}
}

func TestAliasAndValueErrors(t *testing.T) {
	reg := graph.Default()
	if _, err := reg.RunTask(t.Context(), &graph.Task{Key: "a", Op: graph.OpAlias}, nil, nil); err == nil {
		t.Error("alias of nothing: no error")
	}
	if _, err := reg.RunTask(t.Context(), &graph.Task{Key: "v", Op: graph.OpValue, Params: []byte{0xff}}, nil, nil); err == nil {
		t.Error("value with garbage params: no error")
	}
	if v, err := reg.RunTask(t.Context(), &graph.Task{Key: "v", Op: graph.OpValue}, nil, nil); err == nil {
		t.Errorf("value with empty params = %#v, want an error", v)
	}
	// OpList copies its inputs: changing the result does not change them.
	in := []any{1, 2}
	out, err := reg.RunTask(t.Context(), &graph.Task{Key: "l", Op: graph.OpList, Deps: []graph.Key{"a", "b"}}, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	out.([]any)[0] = 9
	if in[0] != 1 || !reflect.DeepEqual(out, []any{9, 2}) {
		t.Error("OpList shares its inputs")
	}
}
