package graph

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Test ops, registered once in a child of the default registry.
const (
	optOpSum   = "opttest.sum"   // param + Σ (i+1)*input_i, inputs int64 or []any of them
	optOpCheap = "opttest.cheap" // the same, registered as cheap
	optOpNeg   = "opttest.neg"   // a cheap Go function of one int64 (AsCheap)
	optOpMul   = "opttest.mul"   // an expensive Go function of two int64
)

var optTestRegistry = sync.OnceValue(func() *Registry {
	reg := Default().Child()
	for _, op := range []Op{
		{Name: optOpSum, Signature: "test", Run: optRunSum},
		{Name: optOpCheap, Signature: "test", Cheap: true, Run: optRunSum},
	} {
		if err := reg.Register(op); err != nil {
			panic(err)
		}
	}
	if _, err := RegisterFunc(optOpNeg, func(_ context.Context, x int64) (int64, error) {
		return 1 - 3*x, nil
	}, InRegistry(reg), AsCheap()); err != nil {
		panic(err)
	}
	if _, err := RegisterFunc2(optOpMul, func(_ context.Context, a, b int64) (int64, error) {
		return 7*a - b, nil
	}, InRegistry(reg)); err != nil {
		panic(err)
	}
	return reg
})

func optRunSum(_ context.Context, in OpInput) (any, error) {
	p, n := binary.Varint(in.Params)
	if n <= 0 {
		return nil, fmt.Errorf("bad params %x", in.Params)
	}
	s := p
	for i, v := range in.Inputs {
		x, err := optFold(v)
		if err != nil {
			return nil, fmt.Errorf("input %d: %w", i, err)
		}
		s += int64(i+1) * x
	}
	return s, nil
}

// optFold reduces a value of the test graphs (an int64 or a []any of such
// values) to one int64, in an order-sensitive way.
func optFold(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case []any:
		var s int64
		for i, e := range x {
			y, err := optFold(e)
			if err != nil {
				return 0, err
			}
			s = s*31 + int64(i+1)*y
		}
		return s, nil
	}
	return 0, fmt.Errorf("unexpected %T", v)
}

func optSumParams(p int64) []byte { return binary.AppendVarint(nil, p) }

// optCallParams returns the params of a call of a registered function whose
// arguments are the task's dependencies, in order.
func optCallParams(t testing.TB, reg *Registry, op string, nargs int) []byte {
	t.Helper()
	args := make([]any, nargs)
	for i := range args {
		args[i] = FromKey(Key(fmt.Sprintf("arg-%d", i)))
	}
	g, err := reg.Call(op, args...).Graph()
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range g.Tasks() {
		if tk.Op == op {
			return tk.Params
		}
	}
	t.Fatalf("no %s task", op)
	return nil
}

// optExtValue is the value that the evaluator gives an external key.
func optExtValue(k Key) int64 {
	var h int64
	for _, c := range []byte(k) {
		h = h*131 + int64(c)
	}
	return h % 1000
}

// evalGraph runs every task of g in a topological order with
// reg.RunTask, external keys getting optExtValue, and returns the values of
// keys.
func evalGraph(t testing.TB, reg *Registry, g *Graph, keys []Key) map[Key]any {
	t.Helper()
	vals, err := optEval(reg, g)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[Key]any, len(keys))
	for _, k := range keys {
		v, ok := vals[k]
		if !ok {
			t.Fatalf("key %q not computed", k)
		}
		out[k] = v
	}
	return out
}

func optEval(reg *Registry, g *Graph) (map[Key]any, error) {
	ctx := context.Background()
	env := &Env{Registry: reg}
	vals := map[Key]any{}
	for _, k := range g.External() {
		vals[k] = optExtValue(k)
	}
	done := make([]bool, g.Len())
	for left := g.Len(); left > 0; {
		progress := false
		for i, tk := range g.Tasks() {
			if done[i] {
				continue
			}
			inputs := make([]any, len(tk.Deps))
			ready := true
			for j, d := range tk.Deps {
				v, ok := vals[d]
				if !ok {
					ready = false
					break
				}
				inputs[j] = v
			}
			if !ready {
				continue
			}
			v, err := reg.RunTask(ctx, tk, inputs, env)
			if err != nil {
				return nil, fmt.Errorf("task %q: %w", tk.Key, err)
			}
			vals[tk.Key] = v
			done[i] = true
			left--
			progress = true
		}
		if !progress {
			return nil, errors.New("evaluation stuck: cycle or missing dependency")
		}
	}
	return vals, nil
}

// optKind describes the value a generated task produces: an int64 (list
// nil) or a list of values of the given kinds.
type optKind struct {
	list   []optKind
	isList bool
}

// optRandomGraph builds a random valid graph of up to maxTasks tasks mixing
// test ops, cheap ops, the built-ins, typed functions, external keys,
// annotations and long chains. The tasks are added in a random order.
func optRandomGraph(t testing.TB, reg *Registry, rng *rand.Rand, maxTasks int) *Graph {
	t.Helper()
	n := 1 + rng.IntN(maxTasks)
	negParams := optCallParams(t, reg, optOpNeg, 1)
	mulParams := optCallParams(t, reg, optOpMul, 2)
	exts := []Key{"ext-a", "ext-b", "ext-c"}
	tasks := make([]*Task, 0, n)
	kinds := make([]optKind, 0, n)
	var usedExt []Key
	pickDep := func(i int, wantInt bool) (Key, bool) {
		// Prefer the previous task, to make chains.
		if i > 0 && rng.IntN(2) == 0 && (!wantInt || !kinds[i-1].isList) {
			return tasks[i-1].Key, true
		}
		for range 4 {
			if i > 0 && rng.IntN(6) != 0 {
				j := rng.IntN(i)
				if !wantInt || !kinds[j].isList {
					return tasks[j].Key, true
				}
				continue
			}
			e := exts[rng.IntN(len(exts))]
			usedExt = append(usedExt, e)
			return e, true
		}
		return "", false
	}
	kindOf := func(k Key) optKind {
		for j, tk := range tasks {
			if tk.Key == k {
				return kinds[j]
			}
		}
		return optKind{} // external: an int
	}
	for i := 0; i < n; i++ {
		var tk Task
		var kind optKind
		switch r := rng.IntN(20); {
		case r < 3 || i == 0: // a constant
			b, err := reg.MarshalValue(int64(rng.IntN(100)))
			if err != nil {
				t.Fatal(err)
			}
			tk = Task{Key: NewKey("value", "", i), Op: OpValue, Params: b}
		case r < 9, r < 12: // sum (expensive or cheap) of 0..3 deps
			op := optOpSum
			if r >= 9 {
				op = optOpCheap
			}
			tk = Task{Key: NewKey(strings.TrimPrefix(op, "opttest."), "", i), Op: op, Params: optSumParams(int64(rng.IntN(50)))}
			for range rng.IntN(4) {
				if k, ok := pickDep(i, false); ok {
					tk.Deps = append(tk.Deps, k)
				}
			}
		case r < 14: // a list of 1..3 values
			tk = Task{Key: NewKey("list", "", i), Op: OpList}
			kind.isList = true
			for range 1 + rng.IntN(3) {
				if k, ok := pickDep(i, false); ok {
					tk.Deps = append(tk.Deps, k)
					kind.list = append(kind.list, kindOf(k))
				}
			}
		case r < 16: // getitem of a list, or an alias
			var lists []int
			for j := range i {
				if kinds[j].isList && len(kinds[j].list) > 0 {
					lists = append(lists, j)
				}
			}
			if len(lists) > 0 && rng.IntN(3) != 0 {
				j := lists[rng.IntN(len(lists))]
				if rng.IntN(2) == 0 {
					j = lists[len(lists)-1]
				}
				idx := rng.IntN(len(kinds[j].list))
				tk = Task{Key: NewKey("getitem", "", i), Op: OpGetItem, Params: GetItemParams(idx), Deps: []Key{tasks[j].Key}}
				kind = kinds[j].list[idx]
			} else if k, ok := pickDep(i, false); ok {
				tk = Task{Key: NewKey("alias", "", i), Op: OpAlias, Deps: []Key{k}}
				kind = kindOf(k)
			} else {
				tk = Task{Key: NewKey("sum", "", i), Op: optOpSum, Params: optSumParams(1)}
			}
		case r < 18: // a cheap Go function
			if k, ok := pickDep(i, true); ok {
				tk = Task{Key: NewKey("neg", "", i), Op: optOpNeg, Params: negParams, Deps: []Key{k}}
			} else {
				tk = Task{Key: NewKey("sum", "", i), Op: optOpSum, Params: optSumParams(2)}
			}
		default: // an expensive Go function of two ints
			a, ok1 := pickDep(i, true)
			b, ok2 := pickDep(i, true)
			if ok1 && ok2 {
				tk = Task{Key: NewKey("mul", "", i), Op: optOpMul, Params: mulParams, Deps: []Key{a, b}}
			} else {
				tk = Task{Key: NewKey("sum", "", i), Op: optOpSum, Params: optSumParams(3)}
			}
		}
		if rng.IntN(8) == 0 {
			switch rng.IntN(5) {
			case 0:
				tk.Priority = 1 + rng.IntN(3)
			case 1:
				tk.Retries = 1 + rng.IntN(3)
			case 2:
				tk.Resources = map[string]float64{"GPU": 1}
			case 3:
				tk.Workers = []string{"w1"}
				tk.LooseRestrictions = rng.IntN(2) == 0
			case 4:
				tk.Span = "span-x"
			}
		}
		tasks = append(tasks, &tk)
		kinds = append(kinds, kind)
	}
	order := slices.Clone(tasks)
	if rng.IntN(2) == 0 {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	g, err := NewFromTasks(order...)
	if err != nil {
		t.Fatal(err)
	}
	g.AddExternal(usedExt...)
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	return g
}

// optRandomKeep picks 1..4 task keys of g, and sometimes an external key.
func optRandomKeep(rng *rand.Rand, g *Graph) []Key {
	keys := g.Keys()
	var keep []Key
	for range 1 + rng.IntN(4) {
		keep = append(keep, keys[rng.IntN(len(keys))])
	}
	if ext := g.External(); len(ext) > 0 && rng.IntN(5) == 0 {
		keep = append(keep, ext[0])
	}
	return keep
}

func optTaskKeys(keys []Key, g *Graph) []Key {
	var out []Key
	for _, k := range keys {
		if g.Has(k) {
			out = append(out, k)
		}
	}
	return out
}

// optRoundTrip encodes and decodes g.
func optRoundTrip(t testing.TB, g *Graph) *Graph {
	t.Helper()
	b, err := Encode(g)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// optCheckOrder checks that prio is a topological permutation for g.
func optCheckOrder(t testing.TB, g *Graph, prio []int) {
	t.Helper()
	if len(prio) != g.Len() {
		t.Fatalf("Order: %d priorities for %d tasks", len(prio), g.Len())
	}
	seen := make([]bool, len(prio))
	for i, p := range prio {
		if p < 0 || p >= len(prio) || seen[p] {
			t.Fatalf("Order: priority %d of task %d is out of range or repeated", p, i)
		}
		seen[p] = true
	}
	for i, tk := range g.Tasks() {
		for _, d := range tk.Deps {
			if j, ok := g.index[d]; ok && prio[j] >= prio[i] {
				t.Fatalf("Order: %q (priority %d) before its dependency %q (priority %d)", tk.Key, prio[i], d, prio[j])
			}
		}
	}
}

// optFusable reports the first pair of tasks that Fuse should have merged,
// computed from Dependents rather than from the code under test.
func optFusable(g *Graph, keep []Key) (Key, Key, bool) {
	deps := g.Dependents()
	for _, tk := range g.Tasks() {
		if slices.Contains(keep, tk.Key) {
			continue
		}
		ds := slices.Compact(slices.Clone(deps[tk.Key]))
		if len(ds) != 1 {
			continue
		}
		d, _ := g.Get(ds[0])
		var taskDeps []Key
		for _, k := range d.Deps {
			if g.Has(k) && !slices.Contains(taskDeps, k) {
				taskDeps = append(taskDeps, k)
			}
		}
		if len(taskDeps) != 1 {
			continue
		}
		if optSameRestrictions(&tk.Annotations, &d.Annotations) {
			return tk.Key, d.Key, true
		}
	}
	return "", "", false
}

func optIsInlinable(reg *Registry, tk *Task) bool {
	op, ok := reg.Lookup(tk.Op)
	return ok && op.Cheap && tk.Annotations.IsZero()
}

// TestOptimizeRandomGraphs checks on many random graphs that every
// optimization keeps the values of the kept keys, also after an
// encode/decode round trip, and has its defining property.
func TestOptimizeRandomGraphs(t *testing.T) {
	reg := optTestRegistry()
	type pass struct {
		name  string
		run   func(g *Graph, keep []Key) (*Graph, error)
		check func(t *testing.T, in, out *Graph, keep []Key)
	}
	passes := []pass{
		{
			name: "Cull",
			run:  func(g *Graph, keep []Key) (*Graph, error) { return Cull(g, keep...) },
			check: func(t *testing.T, in, out *Graph, keep []Key) {
				for _, tk := range out.Tasks() {
					if orig, ok := in.Get(tk.Key); !ok || orig != tk {
						t.Fatalf("Cull made up or changed task %q", tk.Key)
					}
				}
				again, err := Cull(out, keep...)
				if err != nil {
					t.Fatal(err)
				}
				if again.Len() != out.Len() {
					t.Fatalf("Cull left unneeded tasks: %d, then %d", out.Len(), again.Len())
				}
			},
		},
		{
			name: "Inline",
			run:  func(g *Graph, keep []Key) (*Graph, error) { return Inline(g, keep, reg) },
			check: func(t *testing.T, in, out *Graph, keep []Key) {
				for _, tk := range out.Tasks() {
					for _, d := range tk.Deps {
						if dt, ok := out.Get(d); ok && optIsInlinable(reg, dt) {
							t.Fatalf("task %q still depends on cheap task %q", tk.Key, d)
						}
					}
					if _, ok := in.Get(tk.Key); !ok {
						t.Fatalf("Inline made up task %q", tk.Key)
					}
				}
				for _, tk := range in.Tasks() {
					if !optIsInlinable(reg, tk) && !out.Has(tk.Key) {
						t.Fatalf("Inline dropped expensive task %q", tk.Key)
					}
				}
			},
		},
		{
			name: "Fuse",
			run:  func(g *Graph, keep []Key) (*Graph, error) { return Fuse(g, keep, reg) },
			check: func(t *testing.T, in, out *Graph, keep []Key) {
				if a, b, ok := optFusable(out, keep); ok {
					t.Fatalf("Fuse left %q -> %q unfused", a, b)
				}
				// Every task is in exactly one fused task, as itself or inside.
				count := 0
				for _, tk := range out.Tasks() {
					if orig, _ := in.Get(tk.Key); tk.Op == OpFused && orig.Op != OpFused {
						inner, _, err := FusedTasks(tk.Params)
						if err != nil {
							t.Fatal(err)
						}
						count += len(inner)
					} else {
						count++
					}
				}
				if count != in.Len() {
					t.Fatalf("fused graph holds %d tasks, want %d", count, in.Len())
				}
			},
		},
		{
			name: "Optimize",
			run:  func(g *Graph, keep []Key) (*Graph, error) { return Optimize(g, keep, reg) },
			check: func(t *testing.T, in, out *Graph, keep []Key) {
				c, err := Cull(in, keep...)
				if err != nil {
					t.Fatal(err)
				}
				if out.Len() > c.Len() {
					t.Fatalf("Optimize made %d tasks from %d", out.Len(), c.Len())
				}
				if a, b, ok := optFusable(out, keep); ok {
					t.Fatalf("Optimize left %q -> %q unfused", a, b)
				}
			},
		},
	}
	const seeds = 300
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 42))
		g := optRandomGraph(t, reg, rng, 40)
		keep := optRandomKeep(rng, g)
		taskKeep := optTaskKeys(keep, g)
		want := evalGraph(t, reg, g, taskKeep)
		for _, p := range passes {
			t.Run(fmt.Sprintf("%s/seed%d", p.name, seed), func(t *testing.T) {
				out, err := p.run(g, keep)
				if err != nil {
					t.Fatal(err)
				}
				if err := out.Validate(); err != nil {
					t.Fatal(err)
				}
				for _, k := range taskKeep {
					if !out.Has(k) {
						t.Fatalf("kept key %q is gone", k)
					}
				}
				if got := evalGraph(t, reg, out, taskKeep); !reflect.DeepEqual(got, want) {
					t.Fatalf("values changed:\n got %v\nwant %v", got, want)
				}
				if got := evalGraph(t, reg, optRoundTrip(t, out), taskKeep); !reflect.DeepEqual(got, want) {
					t.Fatalf("values changed after encode/decode:\n got %v\nwant %v", got, want)
				}
				optCheckOrder(t, out, Order(out))
				p.check(t, g, out, keep)
			})
		}
	}
}

// optChain returns a chain of tasks named prefix-0 .. prefix-(n-1): a
// constant, then sums each of the one before.
func optChain(t testing.TB, reg *Registry, prefix string, n int) []*Task {
	b, err := reg.MarshalValue(int64(3))
	if err != nil {
		t.Fatal(err)
	}
	ts := []*Task{{Key: NewKey(prefix, "", 0), Op: OpValue, Params: b}}
	for i := 1; i < n; i++ {
		ts = append(ts, &Task{Key: NewKey(prefix, "", i), Op: optOpSum, Params: optSumParams(int64(i)), Deps: []Key{ts[i-1].Key}})
	}
	return ts
}

func optSum(key Key, p int64, deps ...Key) *Task {
	return &Task{Key: key, Op: optOpSum, Params: optSumParams(p), Deps: deps}
}

func optGraphOf(t testing.TB, ext []Key, ts ...*Task) *Graph {
	t.Helper()
	g, err := NewFromTasks(ts...)
	if err != nil {
		t.Fatal(err)
	}
	g.AddExternal(ext...)
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	return g
}

// optShape describes a task of an optimized graph: its key, its op and the
// keys of its inner tasks when it is fused.
func optShape(t testing.TB, g *Graph) []string {
	t.Helper()
	var out []string
	for _, tk := range g.Tasks() {
		s := string(tk.Key)
		if tk.Op == OpFused {
			inner, inputs, err := FusedTasks(tk.Params)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(inputs, tk.Deps) {
				t.Fatalf("fused task %q: params inputs %q, deps %q", tk.Key, inputs, tk.Deps)
			}
			if inner[len(inner)-1].Key != tk.Key {
				t.Fatalf("fused task %q ends with %q", tk.Key, inner[len(inner)-1].Key)
			}
			var ks []string
			for _, it := range inner {
				ks = append(ks, string(it.Key))
			}
			s += "=fused(" + strings.Join(ks, ",") + ")"
		}
		if len(tk.Deps) > 0 {
			var ds []string
			for _, d := range tk.Deps {
				ds = append(ds, string(d))
			}
			s += "<-" + strings.Join(ds, ",")
		}
		out = append(out, s)
	}
	return out
}

func TestFuseShapes(t *testing.T) {
	reg := optTestRegistry()
	chain := func(n int) []*Task { return optChain(t, reg, "c", n) }
	tests := []struct {
		name  string
		tasks []*Task
		ext   []Key
		keep  []Key
		want  []string
	}{
		{
			name:  "chain of 5 becomes one task",
			tasks: chain(5),
			keep:  []Key{"c-4"},
			want:  []string{"c-4=fused(c-0,c-1,c-2,c-3,c-4)"},
		},
		{
			name:  "chain of 5 without keep",
			tasks: chain(5),
			want:  []string{"c-4=fused(c-0,c-1,c-2,c-3,c-4)"},
		},
		{
			name:  "kept key in the middle splits the chain",
			tasks: chain(5),
			keep:  []Key{"c-2", "c-4"},
			want:  []string{"c-2=fused(c-0,c-1,c-2)", "c-4=fused(c-3,c-4)<-c-2"},
		},
		{
			name: "diamond is not fused across the join",
			tasks: []*Task{
				optSum("a", 1), optSum("b", 2, "a"), optSum("c", 3, "a"), optSum("d", 4, "b", "c"),
			},
			want: []string{"a", "b<-a", "c<-a", "d<-b,c"},
		},
		{
			name: "diamond with tails fuses the tails only",
			tasks: []*Task{
				optSum("a", 1), optSum("b", 2, "a"), optSum("b2", 2, "b"), optSum("c", 3, "a"),
				optSum("d", 4, "b2", "c"), optSum("e", 5, "d"),
			},
			want: []string{"a", "b2=fused(b,b2)<-a", "c<-a", "e=fused(d,e)<-b2,c"},
		},
		{
			name: "external keys are inputs, in order of use",
			tasks: []*Task{
				optSum("a", 1, "ext-1"), optSum("b", 2, "ext-2", "a", "ext-1"), optSum("c", 3, "b", "ext-3"),
			},
			ext:  []Key{"ext-1", "ext-2", "ext-3"},
			want: []string{"c=fused(a,b,c)<-ext-1,ext-2,ext-3"},
		},
		{
			name: "a task used twice by its only dependent",
			tasks: []*Task{
				optSum("a", 1), optSum("b", 2, "a", "a"), optSum("c", 3, "b"),
			},
			want: []string{"c=fused(a,b,c)"},
		},
		{
			name: "first task of a chain may have many dependencies",
			tasks: []*Task{
				optSum("a", 1), optSum("b", 2), optSum("j", 3, "a", "b"), optSum("k", 4, "j"),
			},
			want: []string{"a", "b", "k=fused(j,k)<-a,b"},
		},
		{
			name: "fan-out stops a chain",
			tasks: []*Task{
				optSum("a", 1), optSum("b", 2, "a"), optSum("c", 3, "b"), optSum("d", 4, "b"),
			},
			want: []string{"b=fused(a,b)", "c<-b", "d<-b"},
		},
		{
			name: "different resources are not fused",
			tasks: []*Task{
				optSum("a", 1),
				{Key: "b", Op: optOpSum, Params: optSumParams(2), Deps: []Key{"a"}, Annotations: Annotations{Resources: map[string]float64{"GPU": 1}}},
				{Key: "c", Op: optOpSum, Params: optSumParams(3), Deps: []Key{"b"}, Annotations: Annotations{Resources: map[string]float64{"GPU": 1}}},
			},
			want: []string{"a", "c=fused(b,c)<-a"},
		},
		{
			name: "different workers are not fused",
			tasks: []*Task{
				{Key: "a", Op: optOpSum, Params: optSumParams(1), Annotations: Annotations{Workers: []string{"w1"}}},
				{Key: "b", Op: optOpSum, Params: optSumParams(2), Deps: []Key{"a"}, Annotations: Annotations{Workers: []string{"w2"}}},
			},
			want: []string{"a", "b<-a"},
		},
	}
	// A chain with many inputs, some used twice.
	var many []*Task
	var manyDeps, manyExt []Key
	for i := range 20 {
		many = append(many, optSum(NewKey("in", "", i), int64(i)))
		manyDeps = append(manyDeps, NewKey("in", "", i))
		manyExt = append(manyExt, NewKey("ext", "", i))
	}
	many = append(many, optSum("head", 1, append(manyDeps, manyDeps[3])...),
		optSum("mid", 2, slices.Concat([]Key{"head"}, manyExt, manyExt[:5])...),
		optSum("tail", 3, "ext-7", "mid", "ext-20"))
	var manyInputs []string
	for _, k := range slices.Concat(manyDeps, manyExt, []Key{"ext-20"}) {
		manyInputs = append(manyInputs, string(k))
	}
	var manyShape []string
	for _, k := range manyDeps {
		manyShape = append(manyShape, string(k))
	}
	manyShape = append(manyShape, "tail=fused(head,mid,tail)<-"+strings.Join(manyInputs, ","))
	tests = append(tests, struct {
		name  string
		tasks []*Task
		ext   []Key
		keep  []Key
		want  []string
	}{"many inputs", many, append(manyExt, "ext-20"), nil, manyShape})

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := optGraphOf(t, tc.ext, tc.tasks...)
			out, err := Fuse(g, tc.keep, reg)
			if err != nil {
				t.Fatal(err)
			}
			if got := optShape(t, out); !slices.Equal(got, tc.want) {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
			keys := g.Keys()
			want := evalGraph(t, reg, g, keys)
			got := evalGraph(t, reg, out, optTaskKeys(keys, out))
			for k, v := range got {
				if !reflect.DeepEqual(v, want[k]) {
					t.Fatalf("%q = %v, want %v", k, v, want[k])
				}
			}
		})
	}
}

func TestFuseAnnotations(t *testing.T) {
	reg := optTestRegistry()
	res := map[string]float64{"GPU": 1}
	g := optGraphOf(t, nil,
		&Task{Key: "a", Op: optOpSum, Params: optSumParams(1), Annotations: Annotations{Priority: 5, Retries: 3, Resources: res, Span: "first"}},
		&Task{Key: "b", Op: optOpSum, Params: optSumParams(2), Deps: []Key{"a"}, Annotations: Annotations{Priority: -1, Retries: 1, Resources: res}},
		&Task{Key: "c", Op: optOpSum, Params: optSumParams(3), Deps: []Key{"b"}, Annotations: Annotations{Priority: 2, Resources: res, Span: "last"}},
	)
	out, err := Fuse(g, nil, reg)
	if err != nil {
		t.Fatal(err)
	}
	if out.Len() != 1 {
		t.Fatalf("%d tasks, want 1", out.Len())
	}
	got := out.Tasks()[0].Annotations
	want := Annotations{Priority: 2, Retries: 3, Resources: res, Span: "last"}
	if !got.equal(&want) {
		t.Fatalf("annotations %+v, want %+v", got, want)
	}
	inner, _, err := FusedTasks(out.Tasks()[0].Params)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range inner {
		if !it.Annotations.IsZero() {
			t.Errorf("inner task %q keeps annotations %+v", it.Key, it.Annotations)
		}
	}
	// The input graph is untouched.
	if a, _ := g.Get("a"); a.Priority != 5 || a.Span != "first" {
		t.Fatalf("Fuse modified its input: %+v", a.Annotations)
	}
}

// TestFuseAgain fuses a graph that already holds fused tasks: the result
// nests them and computes the same values.
func TestFuseAgain(t *testing.T) {
	reg := optTestRegistry()
	g := optGraphOf(t, nil, optChain(t, reg, "c", 6)...)
	once, err := Fuse(g, []Key{"c-1", "c-3"}, reg)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := optShape(t, once), []string{"c-1=fused(c-0,c-1)", "c-3=fused(c-2,c-3)<-c-1", "c-5=fused(c-4,c-5)<-c-3"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	twice, err := Fuse(once, nil, reg)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := optShape(t, twice), []string{"c-5=fused(c-1,c-3,c-5)"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	want := evalGraph(t, reg, g, []Key{"c-5"})
	if got := evalGraph(t, reg, optRoundTrip(t, twice), []Key{"c-5"}); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestInlineShapes(t *testing.T) {
	reg := optTestRegistry()
	val := func(k Key, v int64) *Task {
		b, err := reg.MarshalValue(v)
		if err != nil {
			t.Fatal(err)
		}
		return &Task{Key: k, Op: OpValue, Params: b}
	}
	negParams := optCallParams(t, reg, optOpNeg, 1)
	tests := []struct {
		name  string
		tasks []*Task
		ext   []Key
		keep  []Key
		want  []string
	}{
		{
			name:  "a constant is copied into each user",
			tasks: []*Task{val("v", 5), optSum("x", 1), optSum("s1", 1, "v", "x"), optSum("s2", 2, "x", "v")},
			keep:  []Key{"s1", "s2"},
			want:  []string{"x", "s1=fused(v,s1)<-x", "s2=fused(v,s2)<-x"},
		},
		{
			name:  "a kept constant stays too",
			tasks: []*Task{val("v", 5), optSum("s1", 1, "v"), optSum("s2", 2, "v")},
			keep:  []Key{"v", "s2"},
			want:  []string{"v", "s1=fused(v,s1)", "s2=fused(v,s2)"},
		},
		{
			name:  "a cheap task without dependents stays",
			tasks: []*Task{optSum("x", 1), {Key: "g", Op: OpAlias, Deps: []Key{"x"}}},
			want:  []string{"x", "g<-x"},
		},
		{
			name: "expensive work stays outside as an input",
			tasks: []*Task{
				optSum("x", 1), {Key: "l", Op: OpList, Deps: []Key{"x", "x"}},
				{Key: "g0", Op: OpGetItem, Params: GetItemParams(0), Deps: []Key{"l"}},
				{Key: "g1", Op: OpGetItem, Params: GetItemParams(1), Deps: []Key{"l"}},
				optSum("d0", 1, "g0"), optSum("d1", 2, "g1", "ext-1"),
			},
			ext:  []Key{"ext-1"},
			want: []string{"x", "d0=fused(l,g0,d0)<-x", "d1=fused(l,g1,d1)<-x,ext-1"},
		},
		{
			name: "cheap Go functions are inlined",
			tasks: []*Task{
				optSum("x", 1), {Key: "n", Op: optOpNeg, Params: negParams, Deps: []Key{"x"}}, optSum("d", 1, "n"),
			},
			want: []string{"x", "d=fused(n,d)<-x"},
		},
		{
			name: "annotated cheap tasks are not inlined",
			tasks: []*Task{
				{Key: "v", Op: OpValue, Params: val("", 1).Params, Annotations: Annotations{Workers: []string{"w"}}},
				optSum("d", 1, "v"),
			},
			want: []string{"v", "d<-v"},
		},
		{
			name:  "unknown ops are not cheap",
			tasks: []*Task{{Key: "u", Op: "opttest.unknown"}, optSum("d", 1, "u")},
			want:  []string{"u", "d<-u"},
		},
		{
			name: "annotations of the user are kept",
			tasks: []*Task{
				val("v", 2), {Key: "d", Op: optOpSum, Params: optSumParams(1), Deps: []Key{"v"}, Annotations: Annotations{Priority: 3}},
			},
			want: []string{"d=fused(v,d)"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := optGraphOf(t, tc.ext, tc.tasks...)
			out, err := Inline(g, tc.keep, reg)
			if err != nil {
				t.Fatal(err)
			}
			if got := optShape(t, out); !slices.Equal(got, tc.want) {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
			for _, tk := range out.Tasks() {
				if orig, _ := g.Get(tk.Key); !tk.Annotations.equal(&orig.Annotations) {
					t.Fatalf("task %q: annotations %+v, want %+v", tk.Key, tk.Annotations, orig.Annotations)
				}
			}
			if strings.Contains(tc.name, "unknown") {
				return // cannot run
			}
			keys := optTaskKeys(g.Keys(), out)
			want := evalGraph(t, reg, g, keys)
			if got := evalGraph(t, reg, out, keys); !reflect.DeepEqual(got, want) {
				t.Fatalf("got %v, want %v", got, want)
			}
		})
	}
}

// TestInlineBound checks that a long run of cheap tasks, each used by an
// expensive task, is not copied quadratically, and still computes the same.
func TestInlineBound(t *testing.T) {
	reg := optTestRegistry()
	const n = 300
	var ts []*Task
	ts = append(ts, optSum("x", 1))
	prev := Key("x")
	for i := range n {
		c := NewKey("c", "", i)
		ts = append(ts, &Task{Key: c, Op: optOpCheap, Params: optSumParams(int64(i)), Deps: []Key{prev}})
		ts = append(ts, optSum(NewKey("d", "", i), 0, c))
		prev = c
	}
	g := optGraphOf(t, nil, ts...)
	out, err := Inline(g, nil, reg)
	if err != nil {
		t.Fatal(err)
	}
	inner := 0
	for _, tk := range out.Tasks() {
		if tk.Op == OpFused {
			in, _, err := FusedTasks(tk.Params)
			if err != nil {
				t.Fatal(err)
			}
			if len(in) > optMaxInline+1 {
				t.Fatalf("task %q holds %d tasks", tk.Key, len(in))
			}
			inner += len(in)
		}
	}
	if inner > n*(optMaxInline+1) {
		t.Fatalf("%d inner tasks for %d cheap tasks", inner, n)
	}
	// The cheap tasks that stay are one in optMaxInline+1.
	if limit := 1 + n + n/(optMaxInline+1); out.Len() > limit {
		t.Fatalf("%d tasks, want at most %d", out.Len(), limit)
	}
	keys := optTaskKeys(g.Keys(), out)
	want := evalGraph(t, reg, g, keys)
	if got := evalGraph(t, reg, out, keys); !reflect.DeepEqual(got, want) {
		t.Fatal("values changed")
	}
}

func TestOptimizeChains(t *testing.T) {
	reg := optTestRegistry()
	// n partitions: read (a constant), three steps, then a sum of all.
	const n = 8
	var ts []*Task
	var ends []Key
	for p := range n {
		c := optChain(t, reg, fmt.Sprintf("p%d", p), 4)
		ts = append(ts, c...)
		ends = append(ends, c[3].Key)
	}
	ts = append(ts, optSum("total", 0, ends...))
	ts = append(ts, optSum("unused", 0, ends[0]))
	g := optGraphOf(t, nil, ts...)
	out, err := Optimize(g, []Key{"total"}, reg)
	if err != nil {
		t.Fatal(err)
	}
	if out.Len() != n+1 {
		t.Fatalf("%d tasks, want %d: %q", out.Len(), n+1, optShape(t, out))
	}
	want := evalGraph(t, reg, g, []Key{"total"})
	if got := evalGraph(t, reg, optRoundTrip(t, out), []Key{"total"}); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestOptimizeErrors(t *testing.T) {
	reg := optTestRegistry()
	g := optGraphOf(t, []Key{"ext-1"}, optSum("a", 1, "ext-1"), optSum("b", 1, "a"))
	cyclic := &Graph{index: map[Key]int{}}
	for _, tk := range []*Task{optSum("x", 1, "y"), optSum("y", 1, "x"), optSum("z", 1, "y")} {
		optAppend(cyclic, tk)
	}
	tests := []struct {
		name    string
		run     func() (*Graph, error)
		wantMsg string
		wantAs  any
	}{
		{"cull missing key", func() (*Graph, error) { return Cull(g, "b", "nope-1") }, `"nope-1"`, nil},
		{"fuse unknown keep key", func() (*Graph, error) { return Fuse(g, []Key{"nope-2"}, reg) }, `"nope-2"`, nil},
		{"inline unknown keep key", func() (*Graph, error) { return Inline(g, []Key{"nope-3"}, reg) }, `"nope-3"`, nil},
		{"optimize missing key", func() (*Graph, error) { return Optimize(g, []Key{"nope-4"}, reg) }, `"nope-4"`, nil},
		{"fuse without fused op", func() (*Graph, error) { return Fuse(g, nil, NewRegistry()) }, OpFused, new(*UnknownOpError)},
		{"inline without fused op", func() (*Graph, error) { return Inline(g, nil, NewRegistry()) }, OpFused, new(*UnknownOpError)},
		{"fuse cycle", func() (*Graph, error) { return Fuse(cyclic, nil, reg) }, "cycle", new(*CycleError)},
		{"inline cycle", func() (*Graph, error) { return Inline(cyclic, nil, reg) }, "cycle", new(*CycleError)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.run()
			if err == nil {
				t.Fatalf("no error, got a graph of %d tasks", out.Len())
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("error %q does not mention %q", err, tc.wantMsg)
			}
			if tc.wantAs != nil && !errors.As(err, tc.wantAs) {
				t.Fatalf("error %q is not a %T", err, tc.wantAs)
			}
		})
	}

	// Culling to an external key, or a task that uses one, keeps it external.
	c, err := Cull(g, "ext-1")
	if err != nil || c.Len() != 0 || !c.IsExternal("ext-1") {
		t.Fatalf("Cull to an external key: %v, %d tasks, external %q", err, c.Len(), c.External())
	}
	c, err = Cull(g, "a")
	if err != nil || c.Len() != 1 || !c.IsExternal("ext-1") {
		t.Fatalf("Cull to a: %v, %d tasks, external %q", err, c.Len(), c.External())
	}
}

// TestFuseUnknownOp fuses tasks whose op is not registered: fusing works,
// running fails with an *UnknownOpError that names the inner task.
func TestFuseUnknownOp(t *testing.T) {
	reg := optTestRegistry()
	g := optGraphOf(t, nil, optSum("a", 1), &Task{Key: "u", Op: "opttest.unknown", Deps: []Key{"a"}}, optSum("b", 2, "u"))
	out, err := Fuse(g, nil, reg)
	if err != nil {
		t.Fatal(err)
	}
	if out.Len() != 1 {
		t.Fatalf("%q", optShape(t, out))
	}
	_, err = optEval(reg, out)
	var uerr *UnknownOpError
	if !errors.As(err, &uerr) || uerr.Op != "opttest.unknown" || !strings.Contains(err.Error(), `"u"`) {
		t.Fatalf("error %v, want an unknown op error naming task u", err)
	}
}

// optChainGraph returns parts independent chains of length steps.
func optChainGraph(b testing.TB, reg *Registry, parts, steps int) *Graph {
	var ts []*Task
	for p := range parts {
		ts = append(ts, optChain(b, reg, fmt.Sprintf("p%d", p), steps)...)
	}
	g, err := NewFromTasks(ts...)
	if err != nil {
		b.Fatal(err)
	}
	return g
}

func BenchmarkFuse(b *testing.B) {
	reg := optTestRegistry()
	g := optChainGraph(b, reg, 25_000, 4) // 100k tasks
	b.ResetTimer()
	for b.Loop() {
		if _, err := Fuse(g, nil, reg); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(g.Len()), "ns/task")
}

func BenchmarkCull(b *testing.B) {
	reg := optTestRegistry()
	g := optChainGraph(b, reg, 25_000, 4)
	var keys []Key
	for i, tk := range g.Tasks() {
		if i%8 == 3 {
			keys = append(keys, tk.Key)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := Cull(g, keys...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(g.Len()), "ns/task")
}

func BenchmarkInline(b *testing.B) {
	reg := optTestRegistry()
	g := optChainGraph(b, reg, 25_000, 4) // each chain starts with a constant
	b.ResetTimer()
	for b.Loop() {
		if _, err := Inline(g, nil, reg); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(g.Len()), "ns/task")
}

// TestOptimizeDelayed optimizes a graph built with Delayed values, with
// literal arguments mixed with dependencies, and runs the decoded copy.
func TestOptimizeDelayed(t *testing.T) {
	reg := optTestRegistry()
	x := reg.Literal(int64(5))
	var outs []Delayed
	for i := range 4 {
		y := reg.Call(optOpNeg, x)
		z := reg.Call(optOpMul, y, int64(i))
		w := reg.Call(optOpMul, z, z)
		outs = append(outs, reg.Call(optOpNeg, w))
	}
	g, keys, err := Collect(outs...)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Optimize(g, keys, reg)
	if err != nil {
		t.Fatal(err)
	}
	// neg(x) is shared but cheap: with x it is inlined into each mul(y, i),
	// which then fuses with the rest of its chain, one task per output.
	if out.Len() != len(outs) {
		t.Fatalf("%d tasks from %d: %q", out.Len(), g.Len(), optShape(t, out))
	}
	want := evalGraph(t, reg, g, keys)
	if got := evalGraph(t, reg, optRoundTrip(t, out), keys); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
