package distributed_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/graph"
)

var (
	// spin burns about ms milliseconds of CPU: a fixed amount of work,
	// so that on a loaded machine its share of the samples stays that of
	// the work.
	spin = graph.MustRegisterFunc("distributed_test.spin", func(_ context.Context, ms int) (uint64, error) {
		x := uint64(ms)
		for range ms * 1_000_000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
		return x, nil
	})
	// blob makes a value of a mebibyte; i tells the calls apart.
	blob = graph.MustRegisterFunc("distributed_test.blob", func(_ context.Context, i int) ([]byte, error) {
		b := make([]byte, 1<<20)
		for i := range b {
			b[i] = byte(i)
		}
		return b, nil
	})
	// total adds up the sizes of blobs.
	total = graph.MustRegisterFunc("distributed_test.total", func(_ context.Context, bs [][]byte) (int, error) {
		n := 0
		for _, b := range bs {
			n += len(b)
		}
		return n, nil
	})
	// chatty logs with the task's logger and returns x.
	chatty = graph.MustRegisterFunc("distributed_test.chatty", func(ctx context.Context, x int) (int, error) {
		graph.Logger(ctx).Info("hello from the task", "x", x)
		return x, nil
	})
	// printer writes to its process's standard output and error.
	printer = graph.MustRegisterFunc("distributed_test.printer", func(_ context.Context, x int) (int, error) {
		fmt.Printf("printed by task %d\n", x)
		fmt.Fprintf(os.Stderr, "complained by task %d\n", x)
		return x, nil
	})
)

// cpuByPrefix sums a profile's CPU seconds by task prefix; "" holds the
// samples of no task.
func cpuByPrefix(p *profile.Profile) map[string]float64 {
	out := diagnostics.CPUByPrefix(p)
	i := len(p.SampleType) - 1
	for _, s := range p.Sample {
		if len(s.Label[diagnostics.LabelPrefix]) == 0 {
			out[""] += float64(s.Value[i]) / 1e9
		}
	}
	return out
}

// TestClusterProfile runs tasks of which one kind burns the CPU: the
// cluster's profile gives that prefix most samples, with its labels, and
// filters by prefix and worker.
func TestClusterProfile(t *testing.T) {
	_, c := newCluster(t, distributed.LocalClusterOptions{Workers: 2, ThreadsPerWorker: 1, InProcess: true})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	var parts []graph.Delayed
	for i := range 4 {
		parts = append(parts, spin.Call(150+i), double.Call(i))
	}
	if _, err := graph.ComputeAll(ctx, c, parts...); err != nil {
		t.Fatal(err)
	}
	p, err := c.Profile(ctx, diagnostics.ProfileOptions{Start: start})
	if err != nil {
		t.Fatal(err)
	}
	cpu := cpuByPrefix(p)
	var all float64
	for _, s := range cpu {
		all += s
	}
	t.Logf("CPU by prefix: %v", cpu)
	if cpu["distributed_test.spin"] < 0.5*all || cpu["distributed_test.spin"] < 0.05 {
		t.Errorf("spin has %.2f s of %.2f s of CPU sampled, want most", cpu["distributed_test.spin"], all)
	}
	// The samples carry the task's key, its computation and its worker.
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var workers []string
	for _, w := range info.Workers {
		workers = append(workers, w.Address)
	}
	for _, s := range p.Sample {
		if pre := s.Label[diagnostics.LabelPrefix]; len(pre) > 0 && pre[0] == "distributed_test.spin" {
			key, comp, w := s.Label[diagnostics.LabelKey], s.Label[diagnostics.LabelComputation], s.Label[diagnostics.LabelWorker]
			if len(key) != 1 || graph.Key(key[0]).Prefix() != pre[0] || len(comp) != 1 || comp[0] == "" ||
				len(w) != 1 || !slices.Contains(workers, w[0]) {
				t.Fatalf("a sample of spin has labels %v", s.Label)
			}
		}
	}
	// go tool pprof reads what Write writes.
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if _, err := profile.Parse(&buf); err != nil {
		t.Fatalf("the profile does not parse back: %v", err)
	}
	only, err := c.Profile(ctx, diagnostics.ProfileOptions{Start: start, Prefixes: []string{"distributed_test.spin"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := cpuByPrefix(only); len(got) != 1 || got["distributed_test.spin"] == 0 {
		t.Errorf("profile of spin only: %v", got)
	}
	one, err := c.Profile(ctx, diagnostics.ProfileOptions{Start: start, Workers: workers[:1]})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range one.Sample {
		if w := s.Label[diagnostics.LabelWorker]; len(w) != 1 || w[0] != workers[0] {
			t.Fatalf("profile of %s has a sample of %v", workers[0], w)
		}
	}
	none, err := c.Profile(ctx, diagnostics.ProfileOptions{Start: time.Now().Add(time.Hour)})
	if err != nil || len(none.Sample) != 0 {
		t.Errorf("profile of the future: %d samples, %v", len(none.Sample), err)
	}
}

// TestClusterFineMetrics runs blobs on one worker past its memory limit,
// so that it spills, and adds them up on the other, which fetches them:
// the fine metrics show the spill, the transfer and the compute time.
func TestClusterFineMetrics(t *testing.T) {
	_, c := newCluster(t, distributed.LocalClusterOptions{Workers: 2, ThreadsPerWorker: 1, InProcess: true,
		MemoryLimit: 8 << 20, TargetFraction: 0.5})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a, b := info.Workers[0].Address, info.Workers[1].Address
	var parts []any
	for i := range 8 {
		parts = append(parts, blob.Call(i).WithAnnotations(graph.Annotations{Workers: []string{a}, Priority: i}))
	}
	sumAll := total.Call(graph.List(parts...)).WithAnnotations(graph.Annotations{Workers: []string{b}})
	n, err := graph.Compute[int](ctx, c, sumAll)
	if err != nil || n != 8<<20 {
		t.Fatalf("total %d, %v", n, err)
	}
	ms, err := c.FineMetrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	get := func(worker, prefix, activity, unit string) float64 {
		for _, m := range ms {
			if m.Worker == worker && m.Prefix == prefix && m.Activity == activity && m.Unit == unit {
				return m.Value
			}
		}
		return 0
	}
	const p = "distributed_test.blob"
	checks := []struct {
		worker, activity, unit string
		least                  float64
	}{
		{a, diagnostics.ActivityCompute, diagnostics.UnitSeconds, 1e-6},
		{a, diagnostics.ActivitySpillWrite, diagnostics.UnitBytes, 1 << 20},
		{a, diagnostics.ActivitySpillWrite, diagnostics.UnitCount, 1},
		{a, diagnostics.ActivityTransferOut, diagnostics.UnitBytes, 8 << 20},
		{b, diagnostics.ActivityTransferIn, diagnostics.UnitBytes, 8 << 20},
		{b, diagnostics.ActivityTransferIn, diagnostics.UnitCount, 8},
		{b, diagnostics.ActivityTransferIn, diagnostics.UnitSeconds, 1e-6},
	}
	for _, ch := range checks {
		if got := get(ch.worker, p, ch.activity, ch.unit); got < ch.least {
			t.Errorf("%s %s %s on %s: %v, want at least %v", p, ch.activity, ch.unit, ch.worker, got, ch.least)
		}
	}
	if got := get(b, "distributed_test.total", diagnostics.ActivityWaiting, diagnostics.UnitSeconds); got <= 0 {
		t.Errorf("total waited %v s for its inputs, want some", got)
	}
	if t.Failed() {
		t.Logf("fine metrics: %+v", ms)
	}
	// Summed over the workers, a's and b's bytes of blob make one total.
	var summed float64
	for _, m := range diagnostics.SumFineMetrics(ms) {
		if m.Worker != "" {
			t.Fatalf("a sum of a worker: %+v", m)
		}
		if m.Prefix == p && m.Activity == diagnostics.ActivityTransferIn && m.Unit == diagnostics.UnitBytes {
			summed = m.Value
		}
	}
	if want := get(a, p, diagnostics.ActivityTransferIn, diagnostics.UnitBytes) +
		get(b, p, diagnostics.ActivityTransferIn, diagnostics.UnitBytes); summed != want {
		t.Errorf("transfer-in bytes of blob summed over the workers: %v, want %v", summed, want)
	}
}

// TestTaskLogs has a task log with graph.Logger: the record reaches the
// scheduler with the task's key while the worker lives, before the result
// reaches the client.
func TestTaskLogs(t *testing.T) {
	_, c := newCluster(t, distributed.LocalClusterOptions{Workers: 1, ThreadsPerWorker: 1, InProcess: true})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d := chatty.Call(42)
	if got, err := graph.Compute[int](ctx, c, d); err != nil || got != 42 {
		t.Fatalf("chatty: %v, %v", got, err)
	}
	logs, err := c.WorkerLogs(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for addr, l := range logs {
		for _, r := range l.Records {
			if r.Message != "hello from the task" {
				continue
			}
			found = true
			if l.Gone || r.Attrs["key"] != string(d.Key()) || r.Attrs["prefix"] != "distributed_test.chatty" ||
				r.Attrs["worker"] != addr || r.Attrs["computation"] == "" || r.Attrs["x"] != "42" {
				t.Errorf("the task's record on %s (gone %v): %v", addr, l.Gone, r)
			}
		}
	}
	if !found {
		t.Errorf("no record of the task among the workers' logs %v", logs)
	}
}

// TestTaskOutput has a task in a worker process print to its standard
// output and error: both become records of the worker's log, on the
// scheduler, while it lives.
func TestTaskOutput(t *testing.T) {
	_, c := processCluster(t, distributed.LocalClusterOptions{Workers: 1, ThreadsPerWorker: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := graph.Compute[int](ctx, c, printer.Call(7)); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"stdout": "printed by task 7", "stderr": "complained by task 7"}
	// The nanny reads the process's output and passes it to the
	// scheduler, a moment after the task printed it.
	var seen map[string]bool
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		logs, err := c.WorkerLogs(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		seen = map[string]bool{}
		for addr, l := range logs {
			for _, r := range l.Records {
				if msg, ok := want[r.Attrs["stream"]]; ok && r.Message == msg && r.Attrs["worker"] == addr && !l.Gone {
					seen[r.Attrs["stream"]] = true
				}
			}
		}
		if len(seen) == 2 {
			return
		}
	}
	logs, _ := c.WorkerLogs(ctx, 0)
	var all []string
	for _, l := range logs {
		for _, r := range l.Records {
			all = append(all, r.String())
		}
	}
	t.Errorf("captured %v of stdout and stderr; the workers' logs:\n%s", seen, strings.Join(all, "\n"))
}
