package local

import (
	"context"
	"fmt"
	"testing"

	"github.com/shoal-data/shoal/graph"
)

func benchGraphs() []struct {
	name string
	g    *graph.Graph
	keys []graph.Key
} {
	// 100,000 independent no-op tasks, all wanted.
	ind := graph.New()
	var indKeys []graph.Key
	for i := range 100_000 {
		k := graph.NewKey("noop", "0123456789abcdef", i)
		ind.Add(&graph.Task{Key: k, Op: "test.noop"})
		indKeys = append(indKeys, k)
	}
	// A binary tree reduction of 50,000 leaves: 99,999 tasks.
	tree := graph.New()
	var level []graph.Key
	for i := range 50_000 {
		k := graph.NewKey("leaf", "0123456789abcdef", i)
		tree.Add(&graph.Task{Key: k, Op: "test.noop"})
		level = append(level, k)
	}
	for d := 1; len(level) > 1; d++ {
		var next []graph.Key
		for i := 0; i < len(level); i += 2 {
			k := graph.NewKey(fmt.Sprintf("sum%d", d), "0123456789abcdef", i/2)
			t := &graph.Task{Key: k, Op: "test.noop", Deps: level[i:min(i+2, len(level))]}
			tree.Add(t)
			next = append(next, k)
		}
		level = next
	}
	// A chain of 10,000 tasks.
	chain := graph.New()
	var prev graph.Key
	for i := range 10_000 {
		k := graph.NewKey("step", "0123456789abcdef", i)
		t := &graph.Task{Key: k, Op: "test.noop"}
		if prev != "" {
			t.Deps = []graph.Key{prev}
		}
		chain.Add(t)
		prev = k
	}
	return []struct {
		name string
		g    *graph.Graph
		keys []graph.Key
	}{
		{"independent-100k", ind, indKeys},
		{"tree-100k", tree, level},
		{"chain-10k", chain, []graph.Key{prev}},
	}
}

// BenchmarkThroughput measures tasks per second of no-op tasks, without
// graph optimization (which would fuse the chain into one task), with
// the CPU profiler on (the default) and off.
func BenchmarkThroughput(b *testing.B) {
	reg := testRegistry(b)
	for _, c := range benchGraphs() {
		for _, profiling := range []bool{true, false} {
			name := c.name
			if !profiling {
				name += "-unprofiled"
			}
			b.Run(name, func(b *testing.B) {
				benchThroughput(b, c.g, c.keys, WithRegistry(reg), WithOptimize(false), WithProfiling(profiling))
			})
		}
	}
}

func benchThroughput(b *testing.B, g *graph.Graph, keys []graph.Key, opts ...Option) {
	e := New(opts...)
	defer e.Close()
	b.ResetTimer()
	for range b.N {
		if _, err := e.Compute(context.Background(), g, keys...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(g.Len()*b.N)/b.Elapsed().Seconds(), "tasks/s")
}
