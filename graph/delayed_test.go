package graph_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/shoal-data/shoal/graph"
)

// seqEval computes every task of g one at a time, in a topological order
// found from the dependencies (not from the order of g's tasks), with
// reg.RunTask, and returns the values of keys. ext holds the values of g's
// external keys. A failure is a *graph.TaskError naming the task that failed
// first.
func seqEval(ctx context.Context, reg *graph.Registry, g *graph.Graph, ext map[graph.Key]any, keys ...graph.Key) ([]any, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	vals := map[graph.Key]any{}
	for _, k := range g.External() {
		v, ok := ext[k]
		if !ok {
			return nil, fmt.Errorf("no value for external key %q", k)
		}
		vals[k] = v
	}
	// Kahn's algorithm; ready tasks run in key order so that a test does
	// not pass only because tasks happen to be listed inputs first.
	waiting := map[graph.Key]int{}
	for _, t := range g.Tasks() {
		deps := map[graph.Key]bool{}
		for _, d := range t.Deps {
			if g.Has(d) {
				deps[d] = true
			}
		}
		waiting[t.Key] = len(deps)
	}
	dependents := g.Dependents()
	var ready []graph.Key
	for k, n := range waiting {
		if n == 0 {
			ready = append(ready, k)
		}
	}
	for len(ready) > 0 {
		slices.Sort(ready)
		k := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		t, _ := g.Get(k)
		inputs := make([]any, len(t.Deps))
		for i, d := range t.Deps {
			inputs[i] = vals[d]
		}
		v, err := reg.RunTask(ctx, t, inputs, &graph.Env{Registry: reg, Worker: "seq"})
		if err != nil {
			return nil, &graph.TaskError{Key: k, Op: t.Op, Root: k, RootOp: t.Op, Worker: "seq", Err: err}
		}
		vals[k] = v
		seen := map[graph.Key]bool{}
		for _, dep := range dependents[k] {
			if seen[dep] { // a task that names k twice waits for it once
				continue
			}
			seen[dep] = true
			if waiting[dep]--; waiting[dep] == 0 {
				ready = append(ready, dep)
			}
		}
	}
	out := make([]any, len(keys))
	for i, k := range keys {
		v, ok := vals[k]
		if !ok {
			return nil, fmt.Errorf("key %q was not computed", k)
		}
		out[i] = v
	}
	return out, nil
}

// graphOf collects d.
func graphOf(t testing.TB, d graph.Delayed) *graph.Graph {
	t.Helper()
	g, err := d.Graph()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// mustCompute collects and computes d with seqEval.
func mustCompute(t testing.TB, reg *graph.Registry, d graph.Delayed) any {
	t.Helper()
	vs, err := seqEval(t.Context(), reg, graphOf(t, d), nil, d.Key())
	if err != nil {
		t.Fatal(err)
	}
	return vs[0]
}

// encodeDecode sends g through Encode and Decode and checks that the copy
// holds the same tasks in the same order.
func encodeDecode(t testing.TB, g *graph.Graph) *graph.Graph {
	t.Helper()
	b, err := graph.Encode(g)
	if err != nil {
		t.Fatal(err)
	}
	c, err := graph.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	sameGraph(t, c, g)
	return c
}

func sameGraph(t testing.TB, got, want *graph.Graph) {
	t.Helper()
	if !slices.Equal(got.Keys(), want.Keys()) {
		t.Fatalf("keys %v, want %v", got.Keys(), want.Keys())
	}
	for i, tk := range got.Tasks() {
		if w := want.Tasks()[i]; !tk.Equal(w) {
			t.Errorf("task %d: %+v, want %+v", i, tk, w)
		}
	}
	if !slices.Equal(got.External(), want.External()) {
		t.Errorf("external %v, want %v", got.External(), want.External())
	}
}

// checkInputsFirst checks that every task comes after the tasks it depends on.
func checkInputsFirst(t testing.TB, g *graph.Graph) {
	t.Helper()
	pos := map[graph.Key]int{}
	for i, k := range g.Keys() {
		pos[k] = i
	}
	for i, tk := range g.Tasks() {
		for _, d := range tk.Deps {
			if j, ok := pos[d]; ok && j >= i {
				t.Errorf("task %s (%d) is listed before its dependency %s (%d)", tk.Key, i, d, j)
			}
		}
	}
}

func TestCollect(t *testing.T) {
	a := newArith(t)
	shared := a.double.Call(1)
	c := a.double.Call(shared) // depends on shared
	b := a.add.Call(c, shared) // depends on both
	top := a.add.Call(b, c)    // b and c: c is reached twice
	other := a.sum.Call(graph.List(shared, c, 5))

	g, keys, err := graph.Collect(top, other, shared, top)
	if err != nil {
		t.Fatal(err)
	}
	if want := []graph.Key{top.Key(), other.Key(), shared.Key(), top.Key()}; !slices.Equal(keys, want) {
		t.Errorf("keys %v, want %v", keys, want)
	}
	if g.Len() != 5 {
		t.Errorf("graph has %d tasks, want 5: %v", g.Len(), g.Keys())
	}
	checkInputsFirst(t, g)
	if err := g.Validate(); err != nil {
		t.Error(err)
	}
	vs, err := seqEval(t.Context(), a.reg, g, nil, keys...)
	if err != nil {
		t.Fatal(err)
	}
	// shared=2, c=4, b=6, top=10, other=2+4+5=11.
	if want := []any{int64(10), int64(11), int64(2), int64(10)}; !reflect.DeepEqual(vs, want) {
		t.Errorf("values %v, want %v", vs, want)
	}

	// The order is deterministic and follows the arguments: the first
	// argument's subgraph first.
	g2, _, _ := graph.Collect(top, other, shared, top)
	if !slices.Equal(g.Keys(), g2.Keys()) {
		t.Error("Collect is not deterministic")
	}
	want := []graph.Key{shared.Key(), c.Key(), b.Key(), top.Key(), other.Key()}
	if !slices.Equal(g.Keys(), want) {
		t.Errorf("order %v, want %v", g.Keys(), want)
	}

	if _, _, err := graph.Collect(top, graph.Delayed{}); err == nil || !strings.Contains(err.Error(), "position 1") {
		t.Errorf("Collect with a zero Delayed = %v", err)
	}
	g, keys, err = graph.Collect()
	if err != nil || g.Len() != 0 || len(keys) != 0 {
		t.Errorf("Collect() = %v, %v, %v", g, keys, err)
	}
}

func TestCollectLongChain(t *testing.T) {
	// Collecting does not recurse.
	a := newArith(t)
	d := a.reg.Literal(int64(0))
	const n = 100_000
	for range n {
		d = a.add.Call(d, 1)
	}
	g := graphOf(t, d)
	if g.Len() != n+1 {
		t.Fatalf("Len = %d", g.Len())
	}
	checkInputsFirst(t, g)
	if v := mustCompute(t, a.reg, d); v != int64(n) {
		t.Errorf("value = %v", v)
	}
}

func TestCollectInputsFirstProperty(t *testing.T) {
	// Random DAGs of calls: whatever the shape, Collect lists inputs first
	// and the evaluation agrees with a direct computation.
	a := newArith(t)
	for seed := range 50 {
		rng := newRand(uint64(seed))
		var ds []graph.Delayed
		var want []int64
		for i := range 30 {
			switch {
			case i < 2 || rng.IntN(4) == 0:
				v := int64(rng.IntN(100))
				ds = append(ds, a.reg.Literal(v))
				want = append(want, v)
			case rng.IntN(2) == 0:
				x, y := rng.IntN(len(ds)), rng.IntN(len(ds))
				ds = append(ds, a.add.Call(ds[x], ds[y]))
				want = append(want, want[x]+want[y])
			default:
				var items []any
				var s int64
				for range rng.IntN(4) {
					j := rng.IntN(len(ds))
					items = append(items, ds[j])
					s += want[j]
				}
				ds = append(ds, a.sum.Call(graph.List(items...)))
				want = append(want, s)
			}
		}
		outs := []graph.Delayed{ds[len(ds)-1], ds[rng.IntN(len(ds))], ds[len(ds)/2]}
		g, keys, err := graph.Collect(outs...)
		if err != nil {
			t.Fatal(err)
		}
		checkInputsFirst(t, g)
		vs, err := seqEval(t.Context(), a.reg, encodeDecode(t, g), nil, keys...)
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range outs {
			j := slices.IndexFunc(ds, func(x graph.Delayed) bool { return x.Key() == d.Key() })
			if vs[i] != want[j] {
				t.Errorf("seed %d: output %d = %v, want %v", seed, i, vs[i], want[j])
			}
		}
	}
}

func TestWithAnnotations(t *testing.T) {
	a := newArith(t)
	d := a.double.Call(1)
	ann := graph.Annotations{Priority: 5, Retries: 2, Resources: map[string]float64{"GPU": 1},
		Workers: []string{"w1"}, LooseRestrictions: true, Span: "load"}
	ad := d.WithAnnotations(ann)
	if ad.Key() != d.Key() {
		t.Errorf("annotations changed the key: %s vs %s", ad.Key(), d.Key())
	}
	top := a.add.Call(ad, 1)
	g := graphOf(t, top)
	tk, _ := g.Get(d.Key())
	if tk.Priority != 5 || tk.Retries != 2 || tk.Resources["GPU"] != 1 || !slices.Equal(tk.Workers, []string{"w1"}) ||
		!tk.LooseRestrictions || tk.Span != "load" {
		t.Errorf("annotations lost: %+v", tk.Annotations)
	}
	if tk, _ := graphOf(t, d).Get(d.Key()); !tk.Annotations.IsZero() {
		t.Errorf("WithAnnotations changed the original: %+v", tk.Annotations)
	}
	if v := mustCompute(t, a.reg, top); v != int64(3) {
		t.Errorf("value = %v", v)
	}
	// The annotations survive the wire.
	c := encodeDecode(t, g)
	if tk, _ := c.Get(d.Key()); tk.Span != "load" || tk.Resources["GPU"] != 1 {
		t.Errorf("decoded annotations: %+v", tk.Annotations)
	}
	// A Delayed with an error keeps it.
	bad := a.double.Call("x")
	if bad.WithAnnotations(ann).Err() == nil {
		t.Error("WithAnnotations dropped the error")
	}
	if (graph.Delayed{}).WithAnnotations(ann).Err() == nil {
		t.Error("zero Delayed became valid")
	}
}

func TestFromKey(t *testing.T) {
	a := newArith(t)
	held := graph.FromKey("persisted-0123456789abcdef-3")
	if held.Err() != nil || held.Key() != "persisted-0123456789abcdef-3" {
		t.Fatalf("FromKey: %v, %q", held.Err(), held.Key())
	}
	top := a.add.Call(a.double.Call(held), held)
	g := graphOf(t, top)
	if !g.IsExternal(held.Key()) || g.Has(held.Key()) || g.Len() != 2 {
		t.Errorf("external %v, keys %v", g.External(), g.Keys())
	}
	if err := g.Validate(); err != nil {
		t.Error(err)
	}
	c := encodeDecode(t, g)
	vs, err := seqEval(t.Context(), a.reg, c, map[graph.Key]any{held.Key(): int64(7)}, top.Key())
	if err != nil {
		t.Fatal(err)
	}
	if vs[0] != int64(21) {
		t.Errorf("value = %v, want 21", vs[0])
	}
	// Collecting only the external key gives an empty graph that names it.
	g = graphOf(t, held)
	if g.Len() != 0 || !g.IsExternal(held.Key()) {
		t.Errorf("graph of FromKey: %v, %v", g.Keys(), g.External())
	}
}

func TestLiteral(t *testing.T) {
	a := newArith(t)
	lit := a.reg.Literal([]string{"a", "b"})
	if lit.Err() != nil {
		t.Fatal(lit.Err())
	}
	if lit.Key().Prefix() != "value" || lit.Type() != reflect.TypeFor[[]string]() {
		t.Errorf("key %s, type %v", lit.Key(), lit.Type())
	}
	g := graphOf(t, lit)
	if tk := g.Tasks()[0]; tk.Op != graph.OpValue || len(tk.Deps) != 0 {
		t.Errorf("task %+v", tk)
	}
	if v := mustCompute(t, a.reg, lit); !reflect.DeepEqual(v, []string{"a", "b"}) {
		t.Errorf("value = %#v", v)
	}
	if v := mustCompute(t, a.reg, a.reg.Literal(nil)); v != nil {
		t.Errorf("Literal(nil) = %#v", v)
	}
	if graph.Literal(1).Key() != a.reg.Literal(1).Key() {
		t.Error("graph.Literal and Registry.Literal differ")
	}
	var ue *graph.UnencodableError
	if err := a.reg.Literal(make(chan int)).Err(); !errors.As(err, &ue) || !strings.Contains(err.Error(), "graph.Literal") {
		t.Errorf("Literal(chan) error = %v", err)
	}
	// A user type known only to a child registry.
	if err := graph.Literal(point{}).Err(); err == nil {
		t.Error("graph.Literal of a type without a codec succeeded")
	}
}

func TestDelayedZero(t *testing.T) {
	var d graph.Delayed
	if d.Key() != "" || d.Type() != nil || d.Err() == nil {
		t.Errorf("zero Delayed: key %q, type %v, err %v", d.Key(), d.Type(), d.Err())
	}
	if _, err := d.Graph(); err == nil {
		t.Error("Graph of a zero Delayed succeeded")
	}
}

// fileStats is a user type: RegisterFunc gives it a gob codec.
type fileStats struct {
	Files int
	Lines int
	Words map[string]int
	Paths []string
}

// fakeFS stands for files that every worker can read.
var fakeFS = map[string]string{
	"data/a.txt": "the cat\nsat on the mat\n",
	"data/b.txt": "the dog\n",
	"data/c.txt": "",
	"data/d.txt": "cat cat cat\nend\n",
}

func newFileFuncs(t testing.TB) (*graph.Registry, *graph.Func[string, fileStats], *graph.Func[[]fileStats, fileStats]) {
	t.Helper()
	reg := graph.Default().Child()
	load, err := graph.RegisterFunc("test.load", func(_ context.Context, path string) (fileStats, error) {
		text, ok := fakeFS[path]
		if !ok {
			return fileStats{}, fmt.Errorf("open %s: no such file", path)
		}
		s := fileStats{Files: 1, Lines: strings.Count(text, "\n"), Words: map[string]int{}, Paths: []string{path}}
		for _, w := range strings.Fields(text) {
			s.Words[w]++
		}
		return s, nil
	}, graph.InRegistry(reg))
	if err != nil {
		t.Fatal(err)
	}
	combine, err := graph.RegisterFunc("test.combine", func(_ context.Context, parts []fileStats) (fileStats, error) {
		out := fileStats{Words: map[string]int{}}
		for _, p := range parts {
			out.Files += p.Files
			out.Lines += p.Lines
			for w, n := range p.Words {
				out.Words[w] += n
			}
			out.Paths = append(out.Paths, p.Paths...)
		}
		sort.Strings(out.Paths)
		return out, nil
	}, graph.InRegistry(reg))
	if err != nil {
		t.Fatal(err)
	}
	return reg, load, combine
}

func TestLoadThenCombine(t *testing.T) {
	reg, load, combine := newFileFuncs(t)
	paths := []string{"data/d.txt", "data/a.txt", "data/b.txt", "data/c.txt"}
	var parts []graph.Delayed
	for _, p := range paths {
		parts = append(parts, load.Call(p))
	}
	// A tree: two partial combines, then a final one.
	left := combine.Call(parts[:2])
	right := combine.Call(graph.List(parts[2], parts[3]))
	total := combine.Call(graph.List(left, right))
	if err := total.Err(); err != nil {
		t.Fatal(err)
	}
	want := fileStats{
		Files: 4, Lines: 5,
		Words: map[string]int{"the": 3, "cat": 4, "sat": 1, "on": 1, "mat": 1, "dog": 1, "end": 1},
		Paths: []string{"data/a.txt", "data/b.txt", "data/c.txt", "data/d.txt"},
	}
	g := graphOf(t, total)
	if g.Len() != 7 {
		t.Errorf("graph has %d tasks", g.Len())
	}
	vs, err := seqEval(t.Context(), reg, g, nil, total.Key())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(vs[0], want) {
		t.Errorf("value = %+v, want %+v", vs[0], want)
	}

	// The graph crosses a process boundary unchanged: encode, decode in a
	// fresh registry where the same functions are registered, run there.
	reg2, _, _ := newFileFuncs(t)
	c := encodeDecode(t, g)
	vs, err = seqEval(t.Context(), reg2, c, nil, total.Key())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(vs[0], want) {
		t.Errorf("decoded graph computes %+v, want %+v", vs[0], want)
	}
	// And the value itself crosses it.
	b, err := reg.MarshalValue(vs[0])
	if err != nil {
		t.Fatal(err)
	}
	if v, err := reg2.UnmarshalValue(b); err != nil || !reflect.DeepEqual(v, want) {
		t.Errorf("value round trip = %+v, %v", v, err)
	}

	// A failing load names the task, its op and the cause.
	bad := combine.Call(graph.List(load.Call("data/a.txt"), load.Call("data/missing.txt")))
	_, err = seqEval(t.Context(), reg, graphOf(t, bad), nil, bad.Key())
	var te *graph.TaskError
	if !errors.As(err, &te) || te.Op != "test.load" || !strings.Contains(err.Error(), "data/missing.txt") {
		t.Errorf("error = %v", err)
	}
	// Without the functions, the decoded graph cannot run, and says why.
	_, err = seqEval(t.Context(), graph.Default(), c, nil, total.Key())
	var ue *graph.UnknownOpError
	if !errors.As(err, &ue) || ue.Op != "test.load" {
		t.Errorf("running without the functions: %v", err)
	}
}

// seqExecutor is a graph.Executor over seqEval, to test Compute.
type seqExecutor struct{ reg *graph.Registry }

func (e seqExecutor) Compute(ctx context.Context, g *graph.Graph, keys ...graph.Key) ([]any, error) {
	return seqEval(ctx, e.reg, g, nil, keys...)
}

func (e seqExecutor) Submit(context.Context, *graph.Graph, ...graph.Key) ([]graph.Future, error) {
	return nil, errors.New("not supported")
}

func TestCompute(t *testing.T) {
	a := newArith(t)
	exec := seqExecutor{a.reg}
	ctx := t.Context()
	v, err := graph.Compute[int64](ctx, exec, a.double.Call(4))
	if err != nil || v != 8 {
		t.Errorf("Compute = %v, %v", v, err)
	}
	if _, err := graph.Compute[string](ctx, exec, a.double.Call(4)); err == nil || !strings.Contains(err.Error(), "int64") {
		t.Errorf("Compute into the wrong type = %v", err)
	}
	if v, err := graph.Compute[*int](ctx, exec, a.reg.Literal(nil)); err != nil || v != nil {
		t.Errorf("Compute of nil = %v, %v", v, err)
	}
	vs, err := graph.ComputeAll(ctx, exec, a.double.Call(1), a.add.Call(a.double.Call(1), 1))
	if err != nil || !reflect.DeepEqual(vs, []any{int64(2), int64(3)}) {
		t.Errorf("ComputeAll = %v, %v", vs, err)
	}
	if _, err := graph.Compute[int64](ctx, exec, a.double.Call("x")); err == nil {
		t.Error("Compute of a Delayed with an error succeeded")
	}
	if _, err := graph.Submit(ctx, exec, a.double.Call(1)); err == nil || err.Error() != "not supported" {
		t.Errorf("Submit = %v", err)
	}
	if _, err := graph.Submit(ctx, exec, graph.Delayed{}); err == nil {
		t.Error("Submit of a zero Delayed succeeded")
	}
}

// newRand returns a deterministic random source for a test.
func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }
