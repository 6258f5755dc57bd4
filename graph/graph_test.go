package graph_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/shoal-data/shoal/graph"
)

// task is a short way to write a task in tests.
func task(key graph.Key, op string, deps ...graph.Key) *graph.Task {
	return &graph.Task{Key: key, Op: op, Deps: deps}
}

func mustGraph(t testing.TB, tasks ...*graph.Task) *graph.Graph {
	t.Helper()
	g, err := graph.NewFromTasks(tasks...)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestGraphAdd(t *testing.T) {
	g := graph.New()
	a := &graph.Task{Key: "a", Op: "op", Params: []byte{1}}
	if err := g.Add(a); err != nil {
		t.Fatal(err)
	}
	// The same work under the same key is a no-op.
	if err := g.Add(a.Clone()); err != nil {
		t.Fatalf("adding an equal task: %v", err)
	}
	if g.Len() != 1 {
		t.Fatalf("Len = %d, want 1", g.Len())
	}
	if got, ok := g.Get("a"); !ok || got != a {
		t.Fatalf("Get(a) = %v, %v; want the first task", got, ok)
	}

	differs := []*graph.Task{
		{Key: "a", Op: "other", Params: []byte{1}},
		{Key: "a", Op: "op", Params: []byte{2}},
		{Key: "a", Op: "op", Params: []byte{1}, Deps: []graph.Key{"b"}},
		{Key: "a", Op: "op", Params: []byte{1}, Annotations: graph.Annotations{Priority: 1}},
		{Key: "a", Op: "op", Params: []byte{1}, Annotations: graph.Annotations{Resources: map[string]float64{"GPU": 1}}},
	}
	for _, d := range differs {
		err := g.Add(d)
		var de *graph.DuplicateKeyError
		if !errors.As(err, &de) {
			t.Errorf("Add(%+v) = %v, want a *DuplicateKeyError", d, err)
			continue
		}
		if de.Key != "a" || de.Old != a || de.New != d {
			t.Errorf("DuplicateKeyError = %+v", de)
		}
		if !strings.Contains(err.Error(), `"a"`) {
			t.Errorf("error %q does not name the key", err)
		}
	}
	if g.Len() != 1 {
		t.Fatalf("Len = %d after failed adds, want 1", g.Len())
	}

	if err := g.Add(&graph.Task{Op: "op"}); err == nil || !strings.Contains(err.Error(), "empty key") {
		t.Errorf("Add of a task with no key = %v, want an error about the empty key", err)
	}

	// A zero Graph is usable.
	var z graph.Graph
	if err := z.Add(task("x", "op")); err != nil || !z.Has("x") {
		t.Errorf("zero Graph: Add = %v, Has = %v", err, z.Has("x"))
	}
}

func TestNewFromTasks(t *testing.T) {
	g := mustGraph(t, task("a", "op"), task("b", "op", "a"), task("c", "op", "a", "b"))
	if got, want := g.Keys(), []graph.Key{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("Keys = %v, want %v", got, want)
	}
	if _, err := graph.NewFromTasks(task("a", "op"), task("a", "other")); err == nil {
		t.Error("NewFromTasks with a duplicate key: no error")
	}
}

func TestGraphAccessors(t *testing.T) {
	g := mustGraph(t, task("a", "op"), task("b", "op", "a"), task("c", "op", "a", "b"), task("d", "op", "ext"))
	g.AddExternal("ext", "a") // "a" is a task, so it does not become external
	if got, want := g.External(), []graph.Key{"ext"}; !slices.Equal(got, want) {
		t.Errorf("External = %v, want %v", got, want)
	}
	if !g.IsExternal("ext") || g.IsExternal("a") || g.Has("ext") {
		t.Error("IsExternal/Has mix up tasks and external keys")
	}
	if _, ok := g.Get("zzz"); ok {
		t.Error("Get of a missing key succeeded")
	}
	deps := g.Dependents()
	want := map[graph.Key][]graph.Key{"a": {"b", "c"}, "b": {"c"}, "ext": {"d"}}
	if len(deps) != len(want) {
		t.Errorf("Dependents = %v, want %v", deps, want)
	}
	for k, w := range want {
		if !slices.Equal(deps[k], w) {
			t.Errorf("Dependents[%s] = %v, want %v", k, deps[k], w)
		}
	}
	if got := len(g.Tasks()); got != 4 {
		t.Errorf("len(Tasks) = %d, want 4", got)
	}

	c := g.Clone()
	if err := c.Add(task("e", "op")); err != nil {
		t.Fatal(err)
	}
	c.AddExternal("ext2")
	if g.Has("e") || g.IsExternal("ext2") || g.Len() != 4 {
		t.Error("changing a clone changed the original")
	}
	if !slices.Equal(c.Keys()[:4], g.Keys()) || !c.IsExternal("ext") {
		t.Error("clone lost tasks or external keys")
	}

	// A task added under an external key replaces the external key.
	if err := c.Add(task("ext", "op")); err != nil {
		t.Fatal(err)
	}
	if c.IsExternal("ext") {
		t.Error("a key is both a task and external")
	}
}

func TestGraphMerge(t *testing.T) {
	g1 := mustGraph(t, task("a", "op"), task("b", "op", "a", "x"))
	g1.AddExternal("x")
	g2 := mustGraph(t, task("a", "op"), task("c", "op", "a", "y", "x"))
	g2.AddExternal("x", "y")
	g3 := mustGraph(t, task("x", "op")) // computes what g1 took as external

	g := graph.New()
	if err := g.Merge(g1, nil, g2, g, g3); err != nil {
		t.Fatal(err)
	}
	if got, want := g.Keys(), []graph.Key{"a", "b", "c", "x"}; !slices.Equal(got, want) {
		t.Errorf("Keys = %v, want %v", got, want)
	}
	if got, want := g.External(), []graph.Key{"y"}; !slices.Equal(got, want) {
		t.Errorf("External = %v, want %v", got, want)
	}
	if err := g.Validate(); err != nil {
		t.Error(err)
	}

	bad := mustGraph(t, task("a", "different"))
	var de *graph.DuplicateKeyError
	if err := g.Merge(bad); !errors.As(err, &de) || de.Key != "a" {
		t.Errorf("Merge of a conflicting graph = %v, want a *DuplicateKeyError for a", err)
	}
}

func TestValidateMissingDependency(t *testing.T) {
	g := mustGraph(t, task("a", "op"), task("b", "op", "a", "nope"), task("c", "op", "gone", "b"))
	err := g.Validate()
	var me *graph.MissingDependencyError
	if !errors.As(err, &me) {
		t.Fatalf("Validate = %v, want a *MissingDependencyError", err)
	}
	want := []graph.MissingDependency{{Task: "b", Dep: "nope"}, {Task: "c", Dep: "gone"}}
	if !slices.Equal(me.Missing, want) {
		t.Errorf("Missing = %v, want %v", me.Missing, want)
	}
	for _, s := range []string{`"b"`, `"nope"`, `"c"`, `"gone"`} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not name %s", err, s)
		}
	}
	g.AddExternal("nope", "gone")
	if err := g.Validate(); err != nil {
		t.Errorf("with external keys: %v", err)
	}

	// Many missing keys: the message stays short.
	var many []*graph.Task
	for i := range 20 {
		many = append(many, task(graph.NewKey("t", "", i), "op", graph.NewKey("m", "", i)))
	}
	err = mustGraph(t, many...).Validate()
	if !errors.As(err, &me) || len(me.Missing) != 20 {
		t.Fatalf("Validate = %v", err)
	}
	if !strings.Contains(err.Error(), "and 15 more") {
		t.Errorf("error %q does not summarize", err)
	}
}

func TestValidateCycle(t *testing.T) {
	tests := []struct {
		name  string
		tasks []*graph.Task
		cycle []graph.Key // in dependency order, starting anywhere
	}{
		{"self loop", []*graph.Task{task("a", "op", "a")}, []graph.Key{"a"}},
		{"two", []*graph.Task{task("a", "op", "b"), task("b", "op", "a")}, []graph.Key{"a", "b"}},
		{"three", []*graph.Task{task("a", "op", "b"), task("b", "op", "c"), task("c", "op", "a")},
			[]graph.Key{"a", "b", "c"}},
		{"four, added backwards", []*graph.Task{task("d", "op", "a"), task("c", "op", "d"),
			task("b", "op", "c"), task("a", "op", "b")}, []graph.Key{"a", "b", "c", "d"}},
		{"reachable from an acyclic prefix", []*graph.Task{
			task("root", "op", "x", "p1"),
			task("x", "op"),
			task("p1", "op", "p2", "x"),
			task("p2", "op", "c1"),
			task("c1", "op", "c2", "x"),
			task("c2", "op", "c3"),
			task("c3", "op", "x", "c1"),
		}, []graph.Key{"c1", "c2", "c3"}},
		{"after an acyclic component", []*graph.Task{
			task("s", "op"), task("t", "op", "s"), task("u", "op", "s", "t"),
			task("v", "op", "w"), task("w", "op", "u", "v"),
		}, []graph.Key{"v", "w"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := mustGraph(t, tt.tasks...)
			err := g.Validate()
			var ce *graph.CycleError
			if !errors.As(err, &ce) {
				t.Fatalf("Validate = %v, want a *CycleError", err)
			}
			if !sameCycle(ce.Keys, tt.cycle) {
				t.Errorf("cycle = %v, want %v (in some rotation)", ce.Keys, tt.cycle)
			}
			checkCycle(t, g, ce.Keys)
			for _, k := range tt.cycle {
				if !strings.Contains(err.Error(), fmt.Sprintf("%q", k)) {
					t.Errorf("error %q does not name %q", err, k)
				}
			}
		})
	}
}

// sameCycle reports whether got is want rotated.
func sameCycle(got, want []graph.Key) bool {
	if len(got) != len(want) {
		return false
	}
	for r := range want {
		if slices.Equal(got, append(slices.Clone(want[r:]), want[:r]...)) {
			return true
		}
	}
	return false
}

// checkCycle checks that each key depends on the next and the last on the
// first, as CycleError promises.
func checkCycle(t *testing.T, g *graph.Graph, cyc []graph.Key) {
	t.Helper()
	for i, k := range cyc {
		next := cyc[(i+1)%len(cyc)]
		tk, ok := g.Get(k)
		if !ok || !slices.Contains(tk.Deps, next) {
			t.Errorf("cycle %v: %s does not depend on %s", cyc, k, next)
		}
	}
}

func TestCycleErrorMessage(t *testing.T) {
	err := &graph.CycleError{Keys: []graph.Key{"a", "b"}}
	if got, want := err.Error(), `graph: cycle: "a" depends on "b" depends on "a"`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got := (&graph.CycleError{}).Error(); !strings.Contains(got, "cycle") {
		t.Errorf("empty CycleError: %q", got)
	}
}

func TestValidateLongChain(t *testing.T) {
	// A million-task chain: validation must not recurse.
	const n = 1_000_000
	tasks := make([]*graph.Task, n)
	keys := make([]graph.Key, n)
	for i := range keys {
		keys[i] = graph.NewKey("chain", "", i)
	}
	for i := range tasks {
		tasks[i] = &graph.Task{Key: keys[i], Op: "op"}
		if i > 0 {
			tasks[i].Deps = keys[i-1 : i]
		}
	}
	// Add in reverse so that the search starts at the far end.
	slices.Reverse(tasks)
	g := mustGraph(t, tasks...)
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	// Close the chain into one big cycle.
	tasks[len(tasks)-1].Deps = []graph.Key{keys[n-1]}
	g = mustGraph(t, tasks...)
	var ce *graph.CycleError
	if err := g.Validate(); !errors.As(err, &ce) || len(ce.Keys) != n {
		t.Fatalf("Validate of a %d-cycle: %T", n, err)
	}
	checkCycle(t, g, ce.Keys)
}

func TestTaskEqualClone(t *testing.T) {
	a := &graph.Task{
		Key: "a", Op: "op", Params: []byte{1, 2}, Deps: []graph.Key{"b"},
		Annotations: graph.Annotations{
			Priority: 3, Retries: 2, Resources: map[string]float64{"GPU": 1},
			Workers: []string{"w1"}, LooseRestrictions: true, Span: "s",
		},
	}
	c := a.Clone()
	if !a.Equal(c) || !c.Equal(a) {
		t.Fatal("clone differs")
	}
	c.Params[0] = 9
	c.Deps[0] = "z"
	c.Resources["GPU"] = 2
	c.Workers[0] = "w2"
	if a.Params[0] != 1 || a.Deps[0] != "b" || a.Resources["GPU"] != 1 || a.Workers[0] != "w1" {
		t.Error("Clone shares memory with the original")
	}
	if a.Equal(c) {
		t.Error("Equal ignores differences")
	}
	if a.Annotations.IsZero() || !(&graph.Annotations{Resources: map[string]float64{}}).IsZero() {
		t.Error("IsZero is wrong")
	}
}
