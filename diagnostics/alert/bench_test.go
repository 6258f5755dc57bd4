package alert

import (
	"testing"
	"time"

	"github.com/shoal-data/shoal/graph"
)

// BenchmarkTaskEnded measures what the rules cost per task that ends, in
// batches of 1024 as the in-process executor hands them over.
func BenchmarkTaskEnded(b *testing.B) {
	m := New(Config{})
	in := make([]Input, 1024)
	ended := make([]TaskEnded, len(in))
	for i := range ended {
		ended[i] = TaskEnded{Key: graph.NewKey("add", "3fa2c1d0", i), Worker: "local", Duration: time.Millisecond}
		in[i] = &ended[i]
	}
	m.Handle(t0, &WorkerReport{Worker: "local"})
	b.ResetTimer()
	for range b.N / len(in) {
		m.Handle(t0, in...)
	}
}
