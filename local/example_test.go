package local_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/local"
)

// Functions are registered once, by name, at package level.
var (
	countWords = graph.MustRegisterFunc("example.countWords", func(_ context.Context, text string) (int, error) {
		return len(strings.Fields(text)), nil
	})
	total = graph.MustRegisterFunc("example.total", func(_ context.Context, counts []int) (int, error) {
		s := 0
		for _, c := range counts {
			s += c
		}
		return s, nil
	})
)

func Example() {
	exec := local.New()
	defer exec.Close()

	// One task per text, then one that adds up their results.
	var counts []any
	for _, text := range []string{"a shoal of fish", "moves as one", "and splits apart"} {
		counts = append(counts, countWords.Call(text))
	}
	sum := total.Call(graph.List(counts...))

	n, err := graph.Compute[int](context.Background(), exec, sum)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(n, "words")
	// Output: 10 words
}
