package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// orderTree returns the tasks of a tree reduction of n leaves: leaves
// first, then each level, pairs combined (an odd task is carried up). The
// tasks are listed breadth first, so running them in list order holds all
// leaves at once.
func orderTree(n int) []*Task {
	var ts []*Task
	level := make([]Key, n)
	for i := range n {
		level[i] = NewKey("leaf", "", i)
		ts = append(ts, optSum(level[i], int64(i)))
	}
	for l := 1; len(level) > 1; l++ {
		var next []Key
		for i := 0; i < len(level); i += 2 {
			if i+1 == len(level) {
				next = append(next, level[i])
				continue
			}
			k := NewKey("combine", "", l, i/2)
			ts = append(ts, optSum(k, 0, level[i], level[i+1]))
			next = append(next, k)
		}
		level = next
	}
	return ts
}

// orderChains returns n chains a -> b -> c, all the a's first, then all
// the b's and the c's, and, when final, one sum of all the c's.
func orderChains(n int, final bool) []*Task {
	var as, bs, cs []*Task
	var ends []Key
	for i := range n {
		a := optSum(NewKey("a", "", i), int64(i))
		b := optSum(NewKey("b", "", i), 1, a.Key)
		c := optSum(NewKey("c", "", i), 2, b.Key)
		as, bs, cs = append(as, a), append(bs, b), append(cs, c)
		ends = append(ends, c.Key)
	}
	ts := slices.Concat(as, bs, cs)
	if final {
		ts = append(ts, optSum("total", 0, ends...))
	}
	return ts
}

// orderSharedRoot returns a constant that n reads depend on, then a tree
// reduction of the reads.
func orderSharedRoot(n int) []*Task {
	ts := []*Task{optSum("config", 7)}
	tree := orderTree(n)
	for _, tk := range tree[:n] { // the leaves read the config
		tk.Deps = []Key{"config"}
	}
	return append(ts, tree...)
}

// orderTwoReductions returns n partitions, each used by two maps, and a
// tree reduction over each map (as in computing a mean and a max of the
// same data).
func orderTwoReductions(n int) []*Task {
	var ts []*Task
	for i := range n {
		ts = append(ts, optSum(NewKey("part", "", i), int64(i)))
	}
	for _, name := range []string{"x", "y"} {
		tree := orderTree(n)
		for i, tk := range tree {
			tk.Key = Key(name + "-" + string(tk.Key))
			for j := range tk.Deps {
				tk.Deps[j] = Key(name + "-" + string(tk.Deps[j]))
			}
			if i < n {
				tk.Deps = []Key{NewKey("part", "", i)}
			}
		}
		ts = append(ts, tree...)
	}
	return ts
}

// orderMaxLive simulates running g with one worker in priority order and
// returns the largest number of values held at once. A value is held from
// when its task finishes until every task that uses it has finished; the
// value of a task that nothing uses is handed over (released) as soon as it
// is computed, but counts while it is computed, as do the inputs of the
// running task.
func orderMaxLive(g *Graph, prio []int) int {
	n := g.Len()
	byPrio := make([]int, n)
	for i, p := range prio {
		byPrio[p] = i
	}
	users := make([]int, n)
	for _, tk := range g.Tasks() {
		for _, d := range slices.Compact(slices.Sorted(slices.Values(tk.Deps))) {
			if j, ok := g.index[d]; ok {
				users[j]++
			}
		}
	}
	live, peak := 0, 0
	for _, i := range byPrio {
		live++
		peak = max(peak, live)
		if users[i] == 0 {
			live--
		}
		for _, d := range slices.Compact(slices.Sorted(slices.Values(g.tasks[i].Deps))) {
			if j, ok := g.index[d]; ok {
				if users[j]--; users[j] == 0 {
					live--
				}
			}
		}
	}
	return peak
}

func orderShuffled(ts []*Task, seed uint64) []*Task {
	ts = slices.Clone(ts)
	rng := rand.New(rand.NewPCG(seed, 7))
	rng.Shuffle(len(ts), func(i, j int) { ts[i], ts[j] = ts[j], ts[i] })
	return ts
}

func log2(n int) int { return int(math.Ceil(math.Log2(float64(n)))) }

func TestOrderMemory(t *testing.T) {
	const n = 1024
	tests := []struct {
		name  string
		tasks []*Task
		limit int
		// naive is a lower bound on what running the tasks in list
		// order holds, to show that the simulation tells orders apart.
		naive int
	}{
		{"tree reduction", orderTree(n), 2*log2(n) + 2, n},
		{"tree reduction, shuffled", orderShuffled(orderTree(n), 1), 2*log2(n) + 2, 0},
		{"tree reduction of 1000", orderTree(1000), 2*log2(1000) + 2, 1000},
		{"tree reduction of 1000, shuffled", orderShuffled(orderTree(1000), 2), 2*log2(1000) + 2, 0},
		{"chains", orderChains(n, false), 3, n},
		{"chains, shuffled", orderShuffled(orderChains(n, false), 3), 3, 0},
		// The final sum needs all n chain ends: n values must be held. A
		// good order holds nothing more than the chain being computed.
		{"chains and a final sum", orderChains(n, true), n + 2, 0},
		{"chains and a final sum, shuffled", orderShuffled(orderChains(n, true), 4), n + 2, 0},
		{"shared root then tree reduction", orderSharedRoot(n), 2*log2(n) + 3, n},
		{"shared root then tree reduction, shuffled", orderShuffled(orderSharedRoot(n), 5), 2*log2(n) + 3, 0},
		{"two reductions of the same partitions", orderTwoReductions(n), 4*log2(n) + 5, n},
		{"two reductions, shuffled", orderShuffled(orderTwoReductions(n), 6), 4*log2(n) + 5, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := optGraphOf(t, nil, tc.tasks...)
			prio := Order(g)
			optCheckOrder(t, g, prio)
			got := orderMaxLive(g, prio)
			if got > tc.limit {
				t.Errorf("Order holds %d values at once, want at most %d", got, tc.limit)
			}
			if tc.naive > 0 {
				listOrder := make([]int, g.Len())
				for i := range listOrder {
					listOrder[i] = i
				}
				if naive := orderMaxLive(g, listOrder); naive < tc.naive {
					t.Errorf("list order holds %d values, expected at least %d", naive, tc.naive)
				}
			}
			t.Logf("%d tasks, %d values held at most", g.Len(), got)
		})
	}
}

// TestOrderChainsContiguous checks that each chain is computed in one go:
// the tasks of a chain get consecutive priorities.
func TestOrderChainsContiguous(t *testing.T) {
	for _, final := range []bool{false, true} {
		for seed := range uint64(3) {
			ts := orderChains(64, final)
			if seed > 0 {
				ts = orderShuffled(ts, seed)
			}
			g := optGraphOf(t, nil, ts...)
			prio := Order(g)
			for i := range 64 {
				pa := prio[g.index[NewKey("a", "", i)]]
				pb := prio[g.index[NewKey("b", "", i)]]
				pc := prio[g.index[NewKey("c", "", i)]]
				if pb != pa+1 || pc != pb+1 {
					t.Fatalf("final=%v seed=%d: chain %d has priorities %d, %d, %d", final, seed, i, pa, pb, pc)
				}
			}
		}
	}
}

func TestOrderGolden(t *testing.T) {
	tests := []struct {
		name  string
		tasks []*Task
		want  []Key // tasks in the order they run
	}{
		{"empty", nil, nil},
		{
			name:  "tree of four leaves combines pairs first",
			tasks: orderTree(4),
			want:  []Key{"leaf-0", "leaf-1", "combine-1-0", "leaf-2", "leaf-3", "combine-1-1", "combine-2-0"},
		},
		{
			name: "the deepest dependency first",
			tasks: []*Task{
				optSum("small", 1), optSum("c1", 1), optSum("c2", 1, "c1"), optSum("c3", 1, "c2"),
				optSum("out", 0, "small", "c3"),
			},
			want: []Key{"c1", "c2", "c3", "small", "out"},
		},
		{
			name: "outputs in graph order",
			tasks: []*Task{
				optSum("x", 1), optSum("y", 1), optSum("uses-y", 1, "y"), optSum("uses-x", 1, "x"),
			},
			want: []Key{"y", "uses-y", "x", "uses-x"},
		},
		{
			name: "the users of a shared input run together",
			tasks: []*Task{
				optSum("p0", 1), optSum("p1", 1),
				optSum("x0", 1, "p0"), optSum("x1", 1, "p1"), optSum("y0", 1, "p0"), optSum("y1", 1, "p1"),
				optSum("x", 0, "x0", "x1"), optSum("y", 0, "y0", "y1"),
			},
			want: []Key{"p0", "x0", "y0", "p1", "x1", "y1", "y", "x"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := optGraphOf(t, nil, tc.tasks...)
			prio := Order(g)
			optCheckOrder(t, g, prio)
			got := make([]Key, len(prio))
			for i, p := range prio {
				got[p] = g.Tasks()[i].Key
			}
			if len(got) == 0 {
				got = nil
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestOrderRandomGraphs checks on random graphs that Order is a
// topological permutation and does not depend on anything but the graph.
func TestOrderRandomGraphs(t *testing.T) {
	reg := optTestRegistry()
	for seed := range 300 {
		rng := rand.New(rand.NewPCG(uint64(seed), 99))
		g := optRandomGraph(t, reg, rng, 60)
		prio := Order(g)
		optCheckOrder(t, g, prio)
		if again := Order(g); !slices.Equal(again, prio) {
			t.Fatalf("seed %d: two orders of one graph differ", seed)
		}
		if copied := Order(optRoundTrip(t, g)); !slices.Equal(copied, prio) {
			t.Fatalf("seed %d: the order of a decoded copy differs", seed)
		}
	}
}

// TestOrderCycle checks that a graph with a cycle still gets a
// permutation, and that Order terminates on it.
func TestOrderCycle(t *testing.T) {
	g := &Graph{index: map[Key]int{}}
	for _, tk := range []*Task{
		optSum("x", 1, "y"), optSum("y", 1, "x"), optSum("a", 1), optSum("z", 1, "y", "a"), optSum("self", 1, "self"),
	} {
		optAppend(g, tk)
	}
	prio := Order(g)
	got := slices.Sorted(slices.Values(prio))
	for i, p := range got {
		if p != i {
			t.Fatalf("not a permutation: %v", prio)
		}
	}
}

func BenchmarkOrder(b *testing.B) {
	independent := make([]*Task, 100_000)
	for i := range independent {
		independent[i] = optSum(NewKey("task", "", i), int64(i))
	}
	reg := optTestRegistry()
	chains := optChainGraph(b, reg, 25_000, 4)
	cases := []struct {
		name string
		g    *Graph
	}{
		{"tree-100k", optGraphOf(b, nil, orderTree(50_000)...)},
		{"tree-100k-shuffled", optGraphOf(b, nil, orderShuffled(orderTree(50_000), 1)...)},
		{"independent-100k", optGraphOf(b, nil, independent...)},
		{"chains-100k", chains},
		{"two-reductions-100k", optGraphOf(b, nil, orderTwoReductions(25_000)...)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				Order(c.g)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(c.g.Len()), "ns/task")
		})
	}
}

func ExampleOrder() {
	g, _ := NewFromTasks(
		&Task{Key: "load-0", Op: "load"},
		&Task{Key: "load-1", Op: "load"},
		&Task{Key: "clean-0", Op: "clean", Deps: []Key{"load-0"}},
		&Task{Key: "clean-1", Op: "clean", Deps: []Key{"load-1"}},
		&Task{Key: "total", Op: "sum", Deps: []Key{"clean-0", "clean-1"}},
	)
	prio := Order(g)
	for i, t := range g.Tasks() {
		fmt.Println(prio[i], t.Key)
	}
	// Output:
	// 0 load-0
	// 2 load-1
	// 1 clean-0
	// 3 clean-1
	// 4 total
}
