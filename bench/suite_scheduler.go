package main

import (
	"context"
	"fmt"
	"time"

	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/local"
)

// The no-op of the scheduler suite is registered in the default registry,
// so that the worker processes of a local cluster (this program started
// again) have it too.
func init() {
	if err := graph.Default().Register(graph.Op{Name: "bench.noop", Signature: "v1", Run: func(context.Context, graph.OpInput) (any, error) {
		return nil, nil
	}}); err != nil {
		panic(err)
	}
}

// schedulerSuite measures the task throughput of Shoal's executors on
// graphs of no-op tasks, without graph optimization (which would fuse or
// inline them), so that every task is scheduled: the local executor, and a
// local cluster of two worker processes (one thread each) through its
// client. There is no peer.
func schedulerSuite(_ context.Context, h *harness) ([]*benchCase, string, func(), error) {
	reg := graph.Default()
	n := h.cfg.tasks
	var cases []*benchCase
	for _, shape := range []string{"independent", "tree"} {
		g, keys := noopGraph(shape, n)
		rate := func(d time.Duration) string {
			if d <= 0 {
				return ""
			}
			return fmt.Sprintf("%s tasks/s", siCount(float64(g.Len())/d.Seconds()))
		}
		var exec *local.Executor
		cases = append(cases, &benchCase{suite: "scheduler", name: fmt.Sprintf("local %s %s", shape, siCount(float64(n))),
			note: fmt.Sprintf("%s no-op tasks", itoa(g.Len())), rate: rate,
			shoal: &engine{
				setup: func(context.Context) error {
					exec = local.New(local.WithRegistry(reg), local.WithOptimize(false), local.WithThreads(h.cfg.threads))
					return nil
				},
				run: func(ctx context.Context) (any, error) { return exec.Compute(ctx, g, keys...) },
				answer: func(_ context.Context, v any) (*table, error) {
					if got := len(v.([]any)); got != len(keys) {
						return nil, fmt.Errorf("%d values for %d keys", got, len(keys))
					}
					return nil, nil
				},
				teardown: func() { exec.Close() },
			}})
	}
	g, keys := noopGraph("independent", n)
	var cluster *distributed.LocalCluster
	var client *distributed.Client
	cases = append(cases, &benchCase{suite: "scheduler", name: fmt.Sprintf("cluster independent %s", siCount(float64(n))),
		note: fmt.Sprintf("%s no-op tasks on 2 worker processes", itoa(g.Len())),
		rate: func(d time.Duration) string {
			if d <= 0 {
				return ""
			}
			return fmt.Sprintf("%s tasks/s", siCount(float64(g.Len())/d.Seconds()))
		},
		shoal: &engine{
			setup: func(ctx context.Context) error {
				var err error
				cluster, err = distributed.NewLocalCluster(ctx, distributed.LocalClusterOptions{Workers: 2, ThreadsPerWorker: 1})
				if err != nil {
					return err
				}
				client, err = cluster.Client(ctx)
				return err
			},
			run: func(ctx context.Context) (any, error) { return client.Compute(ctx, g, keys...) },
			answer: func(_ context.Context, v any) (*table, error) {
				if got := len(v.([]any)); got != len(keys) {
					return nil, fmt.Errorf("%d values for %d keys", got, len(keys))
				}
				return nil, nil
			},
			teardown: func() {
				if client != nil {
					client.Close()
				}
				if cluster != nil {
					cluster.Close()
				}
			},
		}})
	return cases, fmt.Sprintf("graphs of %s tasks", itoa(n)), func() {}, nil
}

// noopGraph is n independent tasks, or a binary tree reduction with n/2
// leaves (n-1 tasks).
func noopGraph(shape string, n int) (*graph.Graph, []graph.Key) {
	g := graph.New()
	const token = "0123456789abcdef"
	if shape == "independent" {
		keys := make([]graph.Key, n)
		for i := range n {
			keys[i] = graph.NewKey("noop", token, i)
			g.Add(&graph.Task{Key: keys[i], Op: "bench.noop"})
		}
		return g, keys
	}
	var level []graph.Key
	for i := range max(n/2, 1) {
		k := graph.NewKey("leaf", token, i)
		g.Add(&graph.Task{Key: k, Op: "bench.noop"})
		level = append(level, k)
	}
	for d := 1; len(level) > 1; d++ {
		var next []graph.Key
		for i := 0; i < len(level); i += 2 {
			k := graph.NewKey(fmt.Sprintf("sum%d", d), token, i/2)
			g.Add(&graph.Task{Key: k, Op: "bench.noop", Deps: level[i:min(i+2, len(level))]})
			next = append(next, k)
		}
		level = next
	}
	return g, level
}

// siCount writes a count with a k or M suffix and three significant digits.
func siCount(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3gk", v/1e3)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}
