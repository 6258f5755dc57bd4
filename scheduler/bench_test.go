package scheduler

import (
	"fmt"
	"testing"
	"time"

	"github.com/shoal-data/shoal/graph"
)

func independentGraph(n int) (*graph.Graph, []graph.Key) {
	g := graph.New()
	keys := make([]graph.Key, n)
	for i := range n {
		keys[i] = graph.NewKey("noop", "0123456789abcdef", i)
		g.Add(&graph.Task{Key: keys[i], Op: "noop"})
	}
	return g, keys
}

// treeGraph is a binary tree reduction over n/2 leaves (about n tasks).
func treeGraph(n int) (*graph.Graph, []graph.Key) {
	g := graph.New()
	var level []graph.Key
	for i := range n / 2 {
		k := graph.NewKey("leaf", "0123456789abcdef", i)
		g.Add(&graph.Task{Key: k, Op: "noop"})
		level = append(level, k)
	}
	depth := 0
	for len(level) > 1 {
		depth++
		var next []graph.Key
		for i := 0; i < len(level); i += 2 {
			k := graph.NewKey(fmt.Sprintf("sum%d", depth), "0123456789abcdef", i/2)
			t := &graph.Task{Key: k, Op: "noop", Deps: []graph.Key{level[i]}}
			if i+1 < len(level) {
				t.Deps = append(t.Deps, level[i+1])
			}
			g.Add(t)
			next = append(next, k)
		}
		level = next
	}
	return g, level
}

func chainGraph(n int) (*graph.Graph, []graph.Key) {
	g := graph.New()
	var prev graph.Key
	for i := range n {
		k := graph.NewKey("step", "0123456789abcdef", i)
		t := &graph.Task{Key: k, Op: "noop"}
		if prev != "" {
			t.Deps = []graph.Key{prev}
		}
		g.Add(t)
		prev = k
	}
	return g, []graph.Key{prev}
}

// BenchmarkCore measures the scheduler's cost per task from submission to
// release, with a worker that finishes tasks at once, in batches as an
// executor would report them.
func BenchmarkCore(b *testing.B) {
	cases := []struct {
		name string
		make func(int) (*graph.Graph, []graph.Key)
		n    int
	}{
		{"independent", independentGraph, 100_000},
		{"tree", treeGraph, 100_000},
		{"chain", chainGraph, 10_000},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			g, keys := c.make(c.n)
			s := New(Config{})
			now := time.Unix(0, 0)
			s.Handle(&WorkerAdded{Worker: WorkerInfo{Name: "local", Threads: 2}})
			b.ResetTimer()
			for range b.N {
				ins := s.Handle(&GraphSubmitted{Meta: Meta{Time: now}, Client: "c", Graph: g, Keys: keys})
				var pending []Event
				var fin []TaskFinished
				for {
					fin = fin[:0]
					for _, in := range ins {
						if r, ok := in.(*Run); ok {
							fin = append(fin, TaskFinished{Key: r.Task.Key, ID: r.ID, Worker: r.Worker, Size: 8})
						}
					}
					if len(fin) == 0 {
						break
					}
					pending = pending[:0]
					for i := range fin {
						pending = append(pending, &fin[i])
					}
					ins = s.Handle(pending...)
				}
				s.Handle(&KeysReleased{Client: "c"})
				if s.NumTasks() != 0 {
					b.Fatalf("%d tasks left", s.NumTasks())
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*g.Len()), "ns/task")
		})
	}
}
