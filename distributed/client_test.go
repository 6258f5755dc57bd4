package distributed_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/distributed/worker"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/scheduler"
)

// flaky fails the first time it runs for each input in a test process.
var (
	flakyRuns atomic.Int64
	flaky     = graph.MustRegisterFunc("distributed_test.flaky", func(_ context.Context, x int) (int, error) {
		if flakyRuns.Add(1) == 1 {
			return 0, errors.New("first run fails")
		}
		return x, nil
	})
)

func inProcess(t *testing.T) (*distributed.LocalCluster, *distributed.Client) {
	return newCluster(t, distributed.LocalClusterOptions{Workers: 2, ThreadsPerWorker: 2, InProcess: true})
}

// joiningWorker is the configuration of a worker that joins lc, with its
// security.
func joiningWorker(t *testing.T, lc *distributed.LocalCluster) worker.Config {
	t.Helper()
	sec := lc.Security()
	sopts, err := sec.ServerOptions()
	if err != nil {
		t.Fatal(err)
	}
	dopts, err := sec.DialOptions()
	if err != nil {
		t.Fatal(err)
	}
	return worker.Config{Scheduler: lc.Address(), Threads: 1, ServerOptions: sopts, DialOptions: dopts}
}

// runJoiningWorker starts a worker of one thread, with a directory of its
// own, that joins lc. stop stops and closes it; it may be called more than
// once, and is called at the end of the test.
func runJoiningWorker(t *testing.T, lc *distributed.LocalCluster) (w *worker.Worker, stop func()) {
	t.Helper()
	w, err := worker.New(joiningWorker(t, lc))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- w.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-ran
			w.Close()
		})
	}
	t.Cleanup(stop)
	return w, stop
}

// eventually polls cond until it holds or the deadline passes: for state
// on the other side of a connection, which no event announces.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestErrors(t *testing.T) {
	lc, c := inProcess(t)
	ctx := context.Background()
	tests := []struct {
		name  string
		d     graph.Delayed
		check func(t *testing.T, err error)
	}{
		{"task error names the task and the worker", fail.Call(3), func(t *testing.T, err error) {
			var te *graph.TaskError
			if !errors.As(err, &te) {
				t.Fatalf("error %T %v is not a *graph.TaskError", err, err)
			}
			if te.RootOp != fail.Name() || te.Worker == "" || !strings.Contains(te.Err.Error(), "failing on 3: boom") {
				t.Errorf("task error %+v", te)
			}
		}},
		{"dependent of a failed task", double.Call(fail.Call(4)), func(t *testing.T, err error) {
			var te *graph.TaskError
			if !errors.As(err, &te) || te.Root == te.Key || te.RootOp != fail.Name() {
				t.Fatalf("error %v", err)
			}
		}},
		{"panic carries its stack", panics.Call(5), func(t *testing.T, err error) {
			var pe *graph.PanicError
			if !errors.As(err, &pe) || !strings.Contains(pe.Stack, "goroutine") ||
				!strings.Contains(err.Error(), "panicking on 5") {
				t.Fatalf("error %v", err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := graph.Compute[int](ctx, c, tc.d)
			if err == nil {
				t.Fatal("no error")
			}
			tc.check(t, err)
		})
	}
	// The cluster still works, and forgot the failed computations.
	if got, err := graph.Compute[int](ctx, c, double.Call(21)); err != nil || got != 42 {
		t.Fatalf("after errors: %v %v", got, err)
	}
	eventually(t, "the scheduler forgets every task", func() bool { return lc.Scheduler().NumTasks() == 0 })
}

func TestUnknownOp(t *testing.T) {
	lc, _ := inProcess(t)
	g := graph.New()
	g.Add(&graph.Task{Key: "x-1", Op: "distributed_test.nope"})
	cl, err := lc.Client(context.Background(), distributed.WithOptimize(false))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	_, err = cl.Compute(context.Background(), g, "x-1")
	var uo *graph.UnknownOpError
	if !errors.As(err, &uo) || uo.Op != "distributed_test.nope" {
		t.Fatalf("error %v, want an unknown op error", err)
	}
}

func TestRetries(t *testing.T) {
	_, c := inProcess(t)
	ctx := context.Background()
	flakyRuns.Store(0)
	f, err := c.SubmitCall(ctx, flaky.Name(), []any{7}, distributed.Retries(1))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release()
	v, err := f.Result(ctx)
	if err != nil || v.(int) != 7 {
		t.Fatalf("got %v, %v", v, err)
	}
	if n := flakyRuns.Load(); n != 2 {
		t.Fatalf("ran %d times, want 2", n)
	}
}

func TestFutures(t *testing.T) {
	lc, c := inProcess(t)
	ctx := context.Background()
	inputs := []any{1, 2, 3, 4, 5}
	fs, err := c.Map(ctx, double.Name(), inputs)
	if err != nil {
		t.Fatal(err)
	}
	var seen []graph.Key
	for f := range c.AsCompleted(ctx, fs...) {
		seen = append(seen, f.Key())
	}
	if len(seen) != len(fs) {
		t.Fatalf("AsCompleted yielded %d of %d", len(seen), len(fs))
	}
	vals, err := c.Gather(ctx, fs...)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(vals, []any{2, 4, 6, 8, 10}) {
		t.Fatalf("gathered %v", vals)
	}
	// A persisted value feeds a later computation where it is.
	total, err := graph.Compute[int](ctx, c, sum.Call(graph.List(fs[0].Delayed(), fs[4].Delayed())))
	if err != nil || total != 12 {
		t.Fatalf("sum of futures: %v %v", total, err)
	}
	for _, f := range fs {
		if len(f.Workers()) == 0 {
			t.Errorf("future %s: no worker holds it", f.Key())
		}
		f.Release()
		f.Release()
	}
	eventually(t, "released values are forgotten", func() bool { return lc.Scheduler().NumTasks() == 0 })
}

func TestCancel(t *testing.T) {
	lc, c := inProcess(t)
	ctx := context.Background()
	fs, err := c.Map(ctx, sleep.Name(), []any{60_000, 60_001, 60_002, 60_003, 60_004, 60_005})
	if err != nil {
		t.Fatal(err)
	}
	c.Cancel(fs...)
	if err := c.Wait(ctx, fs...); err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if err := f.Err(); !errors.Is(err, context.Canceled) {
			t.Errorf("future %s: error %v, want cancelled", f.Key(), err)
		}
		f.Release()
	}
	eventually(t, "cancelled tasks are forgotten", func() bool { return lc.Scheduler().NumTasks() == 0 })

	// Cancelling the context of Compute stops it too.
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := graph.Compute[int](cctx, c, sleep.Call(60_010))
		done <- err
	}()
	eventually(t, "the task starts", func() bool { return lc.Scheduler().NumTasks() == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("compute returned %v, want context.Canceled", err)
	}
	eventually(t, "the cancelled computation is forgotten", func() bool { return lc.Scheduler().NumTasks() == 0 })
}

func TestDisconnectReleasesWork(t *testing.T) {
	lc, _ := inProcess(t)
	ctx := context.Background()
	c2, err := lc.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := c2.Map(ctx, sleep.Name(), []any{60_000, 60_001, 60_002})
	if err != nil {
		t.Fatal(err)
	}
	done, err := c2.SubmitCall(ctx, double.Name(), []any{1})
	if err != nil {
		t.Fatal(err)
	}
	c2.Wait(ctx, done)
	eventually(t, "the tasks are known", func() bool { return lc.Scheduler().NumTasks() == 4 })
	c2.Close()
	for _, f := range fs {
		<-f.Done()
		if !errors.Is(f.Err(), distributed.ErrClientClosed) {
			t.Errorf("future of a closed client: %v", f.Err())
		}
	}
	eventually(t, "a disconnected client's tasks are released", func() bool { return lc.Scheduler().NumTasks() == 0 })
}

func TestRegistryMismatchRefusesClient(t *testing.T) {
	reg := graph.Default().Child()
	graph.MustRegisterFunc("distributed_test.only_on_workers", func(_ context.Context, x int) (int, error) {
		return x, nil
	}, graph.InRegistry(reg))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lc, err := distributed.NewLocalCluster(ctx, distributed.LocalClusterOptions{Workers: 1, InProcess: true, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close()
	_, err = distributed.Connect(ctx, lc.Address(), distributed.WithSecurity(lc.Security()))
	var re *distributed.RefusedError
	if !errors.As(err, &re) || !errors.Is(err, distributed.ErrRefused) {
		t.Fatalf("connect: %v, want a refusal", err)
	}
	if len(re.Differences) != 1 || !strings.Contains(re.Differences[0], "distributed_test.only_on_workers") {
		t.Fatalf("differences %q", re.Differences)
	}
	// The same registry is welcome.
	c, err := distributed.Connect(ctx, lc.Address(), distributed.WithSecurity(lc.Security()),
		distributed.WithRegistry(reg))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

func TestRestrictionsAndResources(t *testing.T) {
	_, c := newCluster(t, distributed.LocalClusterOptions{Workers: 2, ThreadsPerWorker: 1, InProcess: true,
		Resources: map[string]float64{"GPU": 1}})
	ctx := context.Background()
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Workers) != 2 || info.Threads != 2 {
		t.Fatalf("info %+v", info)
	}
	target := info.Workers[1].Address
	fs, err := c.Map(ctx, double.Name(), []any{10, 11, 12, 13}, distributed.Workers(target),
		distributed.Resources(map[string]float64{"GPU": 1}), distributed.Priority(5))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(ctx, fs...); err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if f.Err() != nil || !slices.Equal(f.Workers(), []string{target}) {
			t.Errorf("future %s on %v (%v), want on %s", f.Key(), f.Workers(), f.Err(), target)
		}
		f.Release()
	}
}

func TestEvents(t *testing.T) {
	lc, _ := inProcess(t)
	ctx := context.Background()
	c, err := lc.Client(ctx, distributed.WithEvents())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rec := diagnostics.NewRecorder()
	sub := c.Events().Subscribe(rec.Record)
	if _, err := graph.Compute[int](ctx, c, sum.Call(graph.List(double.Call(1), double.Call(2)))); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the computation's end is published", func() bool {
		sub.Flush()
		for _, e := range rec.Events() {
			if e.Kind == diagnostics.ComputeFinished {
				return true
			}
		}
		return false
	})
	sub.Close()
	ran := 0
	for _, e := range rec.Events() {
		if e.Kind == diagnostics.TaskTransition && e.To == diagnostics.StateMemory {
			if e.Worker == "" || e.Duration <= 0 {
				t.Errorf("transition to memory without where or how long: %+v", e)
			}
			ran++
		}
	}
	if ran < 2 {
		t.Errorf("%d tasks reached memory, want at least 2", ran)
	}
	if story := lc.Scheduler().Story(); story != nil {
		t.Logf("%d transitions kept", len(story))
	}
	_ = scheduler.Memory
}

// ramp returns n int64s, about 8n bytes.
var ramp = graph.MustRegisterFunc("distributed_test.ramp", func(_ context.Context, n int) ([]int64, error) {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i)
	}
	return out, nil
})

func TestSpill(t *testing.T) {
	_, c := newCluster(t, distributed.LocalClusterOptions{Workers: 1, ThreadsPerWorker: 2, InProcess: true,
		MemoryLimit: 4 << 20, HeartbeatInterval: 20 * time.Millisecond})
	ctx := context.Background()
	sizes := []any{100_000, 100_001, 100_002, 100_003, 100_004, 100_005, 100_006, 100_007}
	fs, err := c.Map(ctx, ramp.Name(), sizes)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, f := range fs {
			f.Release()
		}
	}()
	if err := c.Wait(ctx, fs...); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the worker reports spilled results", func() bool {
		info, err := c.Info(ctx)
		return err == nil && len(info.Workers) == 1 && info.Workers[0].Spilled > 0
	})
	eventually(t, "the worker logged the spill with the numbers", func() bool {
		logs, err := c.WorkerLogs(ctx, 0)
		if err != nil {
			return false
		}
		for _, l := range logs {
			for _, r := range l.Records {
				if strings.HasPrefix(r.Message, "spilling: managed memory") &&
					strings.Contains(r.Message, "(0.60 of the 4.00 MiB limit)") && r.Attrs["target"] == "2516582" {
					return true
				}
			}
		}
		return false
	})
	vals, err := c.Gather(ctx, fs...)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vals {
		if got := v.([]int64); len(got) != sizes[i].(int) || got[len(got)-1] != int64(len(got)-1) {
			t.Errorf("value %d: %d elements", i, len(got))
		}
	}
}

func TestRegistryMismatchRefusesWorker(t *testing.T) {
	lc, c := newCluster(t, distributed.LocalClusterOptions{Workers: 1, InProcess: true})
	_ = c // a connected client with the default registry
	reg := graph.Default().Child()
	graph.MustRegisterFunc("distributed_test.only_on_new_worker", func(_ context.Context, x int) (int, error) {
		return x, nil
	}, graph.InRegistry(reg))
	cfg := joiningWorker(t, lc)
	cfg.Registry = reg
	w, err := worker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = w.Run(ctx)
	var re *worker.RefusedError
	if !errors.As(err, &re) || len(re.Differences) != 1 ||
		!strings.Contains(re.Differences[0], "distributed_test.only_on_new_worker") {
		t.Fatalf("run: %v, want a refusal naming the extra op", err)
	}
}
