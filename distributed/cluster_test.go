package distributed_test

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/graph"
)

func newCluster(t *testing.T, opts distributed.LocalClusterOptions) (*distributed.LocalCluster, *distributed.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if os.Getenv("SHOAL_TEST_LOG") != "" && opts.Logger == nil {
		opts.Logger = slog.New(diagnostics.NewConsoleHandler(os.Stderr, slog.LevelInfo))
	}
	lc, err := distributed.NewLocalCluster(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	c, err := lc.Client(ctx)
	if err != nil {
		lc.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		if err := lc.Close(); err != nil {
			t.Errorf("close cluster: %v", err)
		}
	})
	return lc, c
}

func TestDelayedInProcess(t *testing.T) {
	_, c := newCluster(t, distributed.LocalClusterOptions{Workers: 2, ThreadsPerWorker: 2, InProcess: true})
	ctx := context.Background()
	var parts []any
	want := 0
	for i := range 20 {
		parts = append(parts, double.Call(i))
		want += 2 * i
	}
	got, err := graph.Compute[int](ctx, c, sum.Call(graph.List(parts...)))
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("got %d, want %d", got, want)
	}
	t.Log(c.String())
}

func TestDelayedProcesses(t *testing.T) {
	_, c := newCluster(t, distributed.LocalClusterOptions{Workers: 2, ThreadsPerWorker: 2})
	ctx := context.Background()
	var parts []any
	want := 0
	for i := range 50 {
		parts = append(parts, double.Call(i))
		want += 2 * i
	}
	got, err := graph.Compute[int](ctx, c, sum.Call(graph.List(parts...)))
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("got %d, want %d", got, want)
	}
}
