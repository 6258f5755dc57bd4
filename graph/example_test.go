package graph_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/shoal-data/shoal/graph"
)

// Functions are registered by name at package level, so that every worker
// started from the same program can run them.
var (
	countWords = graph.MustRegisterFunc("example.count_words",
		func(_ context.Context, text string) (int, error) {
			return len(strings.Fields(text)), nil
		})
	total = graph.MustRegisterFunc("example.total",
		func(_ context.Context, counts []int) (int, error) {
			sum := 0
			for _, c := range counts {
				sum += c
			}
			return sum, nil
		})
)

func Example() {
	// Build the computation: nothing runs yet.
	var counts []any
	for _, text := range []string{"the cat sat", "on the mat", "the end"} {
		counts = append(counts, countWords.Call(text))
	}
	counts = append(counts, 100) // constants and lazy values mix in a List
	sum := total.Call(graph.List(counts...))

	g, _ := sum.Graph()
	fmt.Println("tasks:", g.Len())

	// Run it. Programs hand in the in-process pool or a cluster client;
	// here a one-at-a-time executor will do.
	n, err := graph.Compute[int](context.Background(), sequential{}, sum)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("words:", n)
	// Output:
	// tasks: 4
	// words: 108
}

// sequential is the simplest graph.Executor: it runs the tasks one at a
// time, each after its inputs.
type sequential struct{}

func (sequential) Compute(ctx context.Context, g *graph.Graph, keys ...graph.Key) ([]any, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	values := map[graph.Key]any{}
	var compute func(k graph.Key) (any, error)
	compute = func(k graph.Key) (any, error) {
		if v, ok := values[k]; ok {
			return v, nil
		}
		t, ok := g.Get(k)
		if !ok {
			return nil, fmt.Errorf("no task %q", k)
		}
		inputs := make([]any, len(t.Deps))
		for i, d := range t.Deps {
			v, err := compute(d)
			if err != nil {
				return nil, err
			}
			inputs[i] = v
		}
		v, err := graph.Default().RunTask(ctx, t, inputs, nil)
		if err != nil {
			return nil, &graph.TaskError{Key: k, Op: t.Op, Root: k, RootOp: t.Op, Err: err}
		}
		values[k] = v
		return v, nil
	}
	out := make([]any, len(keys))
	for i, k := range keys {
		v, err := compute(k)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func (sequential) Submit(context.Context, *graph.Graph, ...graph.Key) ([]graph.Future, error) {
	return nil, errors.New("not supported")
}
