package worker

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/graph"
)

// TestProfilerStopsWithWorker checks that a worker's profiler runs while
// it lives, that its Telemetry call answers, and that nothing of it is
// left once it is closed.
func TestProfilerStopsWithWorker(t *testing.T) {
	w, err := New(Config{Scheduler: "127.0.0.1:1", Threads: 1, InProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	if w.tel.profiler == nil {
		t.Fatal("the worker does not profile")
	}
	// A task's metrics, reported the way ops do, go out with the next
	// batch.
	ctx := graph.TaskContext(context.Background(), &graph.Task{Key: "shuffle-split-0123456789abcdef-3"}, w.env, "1",
		w.tel.meter)
	graph.AddMetric(ctx, "disk-write", "bytes", 100)
	b, err := (&infoServer{w: w}).Telemetry(context.Background(), &wire.InfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got float64
	for _, m := range b.Metrics {
		if m.Prefix == "shuffle-split" && m.Activity == "disk-write" && m.Unit == "bytes" {
			got += m.Value
		}
	}
	if got != 100 || len(b.ShuffleIo) != 1 || b.ShuffleIo[0].Group != "shuffle-split-0123456789abcdef" ||
		b.ShuffleIo[0].Written != 100 {
		t.Errorf("telemetry %v, want the 100 bytes written by the split", b)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	goleak.VerifyNone(t)
}
