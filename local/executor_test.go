package local

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/scheduler"
)

// testRegistry registers the ops the tests use in a child registry.
func testRegistry(t testing.TB) *graph.Registry {
	t.Helper()
	reg := graph.Default().Child()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	// "add": the sum of its int64 inputs plus the int64 in its params.
	must(reg.Register(graph.Op{Name: "test.add", Signature: "v1", Run: func(_ context.Context, in graph.OpInput) (any, error) {
		var s int64
		if len(in.Params) > 0 {
			v, err := in.Env.Registry.UnmarshalValue(in.Params)
			if err != nil {
				return nil, err
			}
			s = v.(int64)
		}
		for _, x := range in.Inputs {
			s += x.(int64)
		}
		return s, nil
	}}))
	must(reg.Register(graph.Op{Name: "test.noop", Signature: "v1", Run: func(context.Context, graph.OpInput) (any, error) {
		return nil, nil
	}}))
	must(reg.Register(graph.Op{Name: "test.fail", Signature: "v1", Run: func(context.Context, graph.OpInput) (any, error) {
		return nil, errors.New("bad input in row 7")
	}}))
	must(reg.Register(graph.Op{Name: "test.panic", Signature: "v1", Run: func(context.Context, graph.OpInput) (any, error) {
		var m map[string]int
		m["x"] = 1 // nil map write
		return nil, nil
	}}))
	// "big": a []float64 of n elements (n in params), filled with a value.
	must(reg.Register(graph.Op{Name: "test.big", Signature: "v1", Run: func(_ context.Context, in graph.OpInput) (any, error) {
		v, err := in.Env.Registry.UnmarshalValue(in.Params)
		if err != nil {
			return nil, err
		}
		n := v.(int64)
		out := make([]float64, n)
		for i := range out {
			out[i] = float64(n)
		}
		return out, nil
	}}))
	must(reg.Register(graph.Op{Name: "test.sumf", Signature: "v1", Run: func(_ context.Context, in graph.OpInput) (any, error) {
		var s float64
		for _, x := range in.Inputs {
			for _, f := range x.([]float64) {
				s += f
			}
		}
		return s, nil
	}}))
	return reg
}

func param(t testing.TB, reg *graph.Registry, v any) []byte {
	b, err := reg.MarshalValue(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// randomGraph builds a DAG of "test.add" tasks and returns it with the
// expected value of every task, computed directly.
func randomGraph(t testing.TB, reg *graph.Registry, r *rand.Rand, n int) (*graph.Graph, map[graph.Key]int64) {
	return randomGraphToken(t, reg, r, n, "")
}

func randomGraphToken(t testing.TB, reg *graph.Registry, r *rand.Rand, n int, token string) (*graph.Graph, map[graph.Key]int64) {
	g := graph.New()
	want := map[graph.Key]int64{}
	keys := make([]graph.Key, n)
	for i := range n {
		keys[i] = graph.NewKey("add", token, i)
		c := int64(r.IntN(100))
		task := &graph.Task{Key: keys[i], Op: "test.add", Params: param(t, reg, c)}
		sum := c
		if i > 0 {
			for range r.IntN(4) {
				d := keys[r.IntN(i)]
				if !slices.Contains(task.Deps, d) {
					task.Deps = append(task.Deps, d)
					sum += want[d]
				}
			}
		}
		want[keys[i]] = sum
		if err := g.Add(task); err != nil {
			t.Fatal(err)
		}
	}
	return g, want
}

func TestComputeRandomGraphs(t *testing.T) {
	reg := testRegistry(t)
	for _, threads := range []int{1, 2, 4} {
		for _, optimize := range []bool{true, false} {
			e := New(WithThreads(threads), WithRegistry(reg), WithOptimize(optimize))
			for seed := range 60 {
				r := rand.New(rand.NewPCG(uint64(seed), 3))
				g, want := randomGraph(t, reg, r, 1+r.IntN(60))
				var keys []graph.Key
				for _, k := range g.Keys() {
					if r.IntN(5) == 0 {
						keys = append(keys, k)
					}
				}
				keys = append(keys, g.Keys()[g.Len()-1])
				got, err := e.Compute(context.Background(), g, keys...)
				if err != nil {
					t.Fatalf("threads %d seed %d: %v", threads, seed, err)
				}
				for i, k := range keys {
					if got[i] != want[k] {
						t.Fatalf("threads %d optimize %v seed %d: %s = %v, want %d", threads, optimize, seed, k, got[i], want[k])
					}
				}
				if m := e.Memory(); m.Keys != 0 || m.Managed != 0 {
					t.Fatalf("results left after compute: %+v", m)
				}
			}
			// The decoded copy of a graph computes the same.
			r := rand.New(rand.NewPCG(99, 3))
			g, want := randomGraph(t, reg, r, 200)
			b, err := graph.Encode(g)
			if err != nil {
				t.Fatal(err)
			}
			g2, err := graph.Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			last := g.Keys()[g.Len()-1]
			got, err := e.Compute(context.Background(), g2, last)
			if err != nil || got[0] != want[last] {
				t.Fatalf("decoded graph: %v %v, want %d", got, err, want[last])
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

type fileStats struct {
	Lines int
	Bytes int
}

func TestDelayedLoadAndCombine(t *testing.T) {
	reg := testRegistry(t)
	dir := t.TempDir()
	var paths []string
	for i := range 5 {
		p := filepath.Join(dir, fmt.Sprintf("part-%d.txt", i))
		content := strings.Repeat("line\n", i+1)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	load, err := graph.RegisterFunc("test.load", func(_ context.Context, path string) (fileStats, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return fileStats{}, err
		}
		return fileStats{Lines: strings.Count(string(b), "\n"), Bytes: len(b)}, nil
	}, graph.InRegistry(reg))
	if err != nil {
		t.Fatal(err)
	}
	combine, err := graph.RegisterFunc("test.combine", func(_ context.Context, parts []fileStats) (fileStats, error) {
		var s fileStats
		for _, p := range parts {
			s.Lines += p.Lines
			s.Bytes += p.Bytes
		}
		return s, nil
	}, graph.InRegistry(reg))
	if err != nil {
		t.Fatal(err)
	}
	e := New(WithRegistry(reg))
	defer e.Close()
	var parts []any
	for _, p := range paths {
		parts = append(parts, load.Call(p))
	}
	total := combine.Call(graph.List(parts...))
	got, err := graph.Compute[fileStats](context.Background(), e, total)
	if err != nil {
		t.Fatal(err)
	}
	if got != (fileStats{Lines: 15, Bytes: 75}) {
		t.Errorf("got %+v", got)
	}
	// A missing file: the error names the task, the op and the file.
	bad := combine.Call(graph.List(load.Call(filepath.Join(dir, "missing.txt")), load.Call(paths[0])))
	_, err = graph.Compute[fileStats](context.Background(), e, bad)
	var te *graph.TaskError
	if !errors.As(err, &te) || te.RootOp != "test.load" || !errors.Is(err, os.ErrNotExist) ||
		!strings.Contains(err.Error(), "missing.txt") {
		t.Errorf("error %v", err)
	}
}

func TestTaskErrors(t *testing.T) {
	reg := testRegistry(t)
	e := New(WithRegistry(reg), WithThreads(2))
	defer e.Close()
	tests := []struct {
		name  string
		op    string
		check func(t *testing.T, err error)
	}{
		{"error", "test.fail", func(t *testing.T, err error) {
			if !strings.Contains(err.Error(), "bad input in row 7") {
				t.Errorf("error %v", err)
			}
		}},
		{"panic", "test.panic", func(t *testing.T, err error) {
			var pe *graph.PanicError
			if !errors.As(err, &pe) || !strings.Contains(pe.Stack, "local.testRegistry") {
				t.Errorf("error %v does not carry the panic's stack", err)
			}
		}},
		{"unknown op", "nobody.registered.this", func(t *testing.T, err error) {
			var ue *graph.UnknownOpError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), "RegisterFunc") {
				t.Errorf("error %v", err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, _ := graph.NewFromTasks(
				&graph.Task{Key: "root", Op: tc.op},
				&graph.Task{Key: "mid", Op: "test.add", Deps: []graph.Key{"root"}},
				&graph.Task{Key: "out", Op: "test.add", Deps: []graph.Key{"mid"}},
			)
			_, err := e.Compute(context.Background(), g, "out")
			var te *graph.TaskError
			if !errors.As(err, &te) || te.Key != "out" || te.Root != "root" || te.RootOp != tc.op {
				t.Fatalf("error %#v, want a TaskError blaming root", err)
			}
			tc.check(t, err)
			// The executor still works.
			ok, _ := graph.NewFromTasks(&graph.Task{Key: "fine", Op: "test.add", Params: param(t, reg, int64(4))})
			got, err := e.Compute(context.Background(), ok, "fine")
			if err != nil || got[0] != int64(4) {
				t.Fatalf("after a failure: %v %v", got, err)
			}
		})
	}
}

func TestRetries(t *testing.T) {
	reg := testRegistry(t)
	var calls atomic.Int32
	reg.Register(graph.Op{Name: "test.flaky", Signature: "v1", Run: func(context.Context, graph.OpInput) (any, error) {
		if calls.Add(1) < 3 {
			return nil, errors.New("flaky")
		}
		return int64(1), nil
	}})
	e := New(WithRegistry(reg))
	defer e.Close()
	g, _ := graph.NewFromTasks(&graph.Task{Key: "f", Op: "test.flaky", Annotations: graph.Annotations{Retries: 2}})
	got, err := e.Compute(context.Background(), g, "f")
	if err != nil || got[0] != int64(1) || calls.Load() != 3 {
		t.Fatalf("got %v %v after %d calls", got, err, calls.Load())
	}
}

func TestBadGraphs(t *testing.T) {
	reg := testRegistry(t)
	e := New(WithRegistry(reg))
	defer e.Close()
	cyc, _ := graph.NewFromTasks(
		&graph.Task{Key: "a", Op: "test.add", Deps: []graph.Key{"b"}},
		&graph.Task{Key: "b", Op: "test.add", Deps: []graph.Key{"a"}},
	)
	_, err := e.Compute(context.Background(), cyc, "a")
	var ce *graph.CycleError
	if !errors.As(err, &ce) {
		t.Errorf("cycle: %v", err)
	}
	miss, _ := graph.NewFromTasks(&graph.Task{Key: "a", Op: "test.add", Deps: []graph.Key{"ghost"}})
	_, err = e.Compute(context.Background(), miss, "a")
	var me *graph.MissingDependencyError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "ghost") {
		t.Errorf("missing dependency: %v", err)
	}
	_, err = e.Compute(context.Background(), miss, "nope")
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown key: %v", err)
	}
	gpu, _ := graph.NewFromTasks(&graph.Task{Key: "g", Op: "test.noop",
		Annotations: graph.Annotations{Resources: map[string]float64{"GPU": 1}}})
	_, err = e.Compute(context.Background(), gpu, "g")
	var ue *scheduler.UnrunnableError
	if !errors.As(err, &ue) {
		t.Errorf("unrunnable: %v", err)
	}
	e2 := New(WithRegistry(reg), WithResources(map[string]float64{"GPU": 1}))
	defer e2.Close()
	if _, err := e2.Compute(context.Background(), gpu, "g"); err != nil {
		t.Errorf("with a GPU: %v", err)
	}
}

// blockingOps registers an op that signals when it starts and then waits
// for its context.
func blockingOps(t testing.TB, reg *graph.Registry) (started chan graph.Key) {
	started = make(chan graph.Key, 100)
	err := reg.Register(graph.Op{Name: "test.block", Signature: "v1", Run: func(ctx context.Context, in graph.OpInput) (any, error) {
		started <- in.Key
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	if err != nil {
		t.Fatal(err)
	}
	return started
}

func TestCancel(t *testing.T) {
	reg := testRegistry(t)
	started := blockingOps(t, reg)
	e := New(WithRegistry(reg), WithThreads(2))
	defer e.Close()
	g := graph.New()
	var keys []graph.Key
	for i := range 50 {
		k := graph.NewKey("block", "", i)
		g.Add(&graph.Task{Key: k, Op: "test.block"})
		keys = append(keys, k)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := e.Compute(ctx, g, keys...)
		done <- err
	}()
	<-started
	<-started
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if len(started) != 0 {
		t.Errorf("%d queued tasks started after cancel", len(started))
	}
	// No goroutine of the computation outlives the call (the executor's
	// profiler runs until Close).
	goleak.VerifyNone(t, goleak.IgnoreTopFunction("github.com/shoal-data/shoal/diagnostics.(*processSampler).run"),
		goleak.IgnoreTopFunction("runtime/pprof.readProfile"))
	// Nothing is left running or held; the executor still works.
	if m := e.Memory(); m.Keys != 0 {
		t.Errorf("values held after cancel: %+v", m)
	}
	ok, _ := graph.NewFromTasks(&graph.Task{Key: "fine", Op: "test.add"})
	if _, err := e.Compute(context.Background(), ok, "fine"); err != nil {
		t.Fatal(err)
	}
	// An already cancelled context does nothing.
	if _, err := e.Compute(ctx, ok, "fine"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

func TestCloseWhileRunning(t *testing.T) {
	reg := testRegistry(t)
	started := blockingOps(t, reg)
	e := New(WithRegistry(reg), WithThreads(1))
	g, _ := graph.NewFromTasks(&graph.Task{Key: "b", Op: "test.block"})
	done := make(chan error)
	go func() {
		_, err := e.Compute(context.Background(), g, "b")
		done <- err
	}()
	<-started
	e.Close()
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Fatalf("error %v, want ErrClosed", err)
	}
	if _, err := e.Compute(context.Background(), g, "b"); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

func TestFailureStopsTheRest(t *testing.T) {
	reg := testRegistry(t)
	started := blockingOps(t, reg)
	e := New(WithRegistry(reg), WithThreads(2))
	defer e.Close()
	g, _ := graph.NewFromTasks(
		&graph.Task{Key: "slow", Op: "test.block"},
		&graph.Task{Key: "bad", Op: "test.fail", Deps: []graph.Key{}},
	)
	g2 := graph.New()
	g2.Merge(g)
	// "bad" can only fail once "slow" runs: make it depend on nothing but
	// start after slow by ordering; both run at once on two threads.
	_, err := e.Compute(context.Background(), g2, "slow", "bad")
	if err == nil || !strings.Contains(err.Error(), "row 7") {
		t.Fatalf("error %v", err)
	}
	<-started
}

func TestSubmitAndPersist(t *testing.T) {
	reg := testRegistry(t)
	e := New(WithRegistry(reg))
	defer e.Close()
	g, _ := graph.NewFromTasks(
		&graph.Task{Key: "a", Op: "test.add", Params: param(t, reg, int64(2))},
		&graph.Task{Key: "b", Op: "test.add", Params: param(t, reg, int64(3)), Deps: []graph.Key{"a"}},
	)
	fs, err := e.Submit(context.Background(), g, "b")
	if err != nil {
		t.Fatal(err)
	}
	<-fs[0].Done()
	v, err := fs[0].Result(context.Background())
	if err != nil || v != int64(5) {
		t.Fatalf("result %v %v", v, err)
	}
	// A later graph uses the held value.
	g2, _ := graph.NewFromTasks(&graph.Task{Key: "c", Op: "test.add", Params: param(t, reg, int64(10)), Deps: []graph.Key{"b"}})
	g2.AddExternal("b")
	got, err := e.Compute(context.Background(), g2, "c")
	if err != nil || got[0] != int64(15) {
		t.Fatalf("compute on persisted: %v %v", got, err)
	}
	if m := e.Memory(); m.Keys != 1 {
		t.Errorf("held: %+v, want just b", m)
	}
	fs[0].Release()
	fs[0].Release()
	if m := e.Memory(); m.Keys != 0 {
		t.Errorf("held after release: %+v", m)
	}
	if _, err := fs[0].Result(context.Background()); err == nil {
		t.Errorf("result of a released future")
	}
	if _, err := e.Compute(context.Background(), g2, "c"); err == nil || !strings.Contains(err.Error(), `"b"`) {
		t.Errorf("compute on a released key: %v", err)
	}
	// Delayed over a future's key.
	fs, err = graph.Submit(context.Background(), e, reg.Literal(int64(7)))
	if err != nil {
		t.Fatal(err)
	}
	add := graph.MustRegisterFunc("test.addone", func(_ context.Context, x int64) (int64, error) { return x + 1, nil }, graph.InRegistry(reg))
	x, err := graph.Compute[int64](context.Background(), e, add.Call(graph.FromKey(fs[0].Key())))
	if err != nil || x != 8 {
		t.Fatalf("delayed on future: %v %v", x, err)
	}
	fs[0].Release()
}

func TestSubmitCancel(t *testing.T) {
	reg := testRegistry(t)
	started := blockingOps(t, reg)
	e := New(WithRegistry(reg), WithThreads(1))
	defer e.Close()
	g, _ := graph.NewFromTasks(&graph.Task{Key: "b", Op: "test.block"})
	ctx, cancel := context.WithCancel(context.Background())
	fs, err := e.Submit(ctx, g, "b")
	if err != nil {
		t.Fatal(err)
	}
	<-started
	cancel()
	<-fs[0].Done()
	if _, err := fs[0].Result(context.Background()); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v", err)
	}
	fs[0].Release()
}

func TestConcurrentComputations(t *testing.T) {
	reg := testRegistry(t)
	e := New(WithRegistry(reg), WithThreads(3))
	defer e.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Graphs overlap: the same seed builds the same keys.
			r := rand.New(rand.NewPCG(uint64(w%3), 1))
			g, want := randomGraphToken(t, reg, r, 300, fmt.Sprintf("%08x", w%3))
			keys := g.Keys()[250:]
			got, err := e.Compute(context.Background(), g, keys...)
			if err != nil {
				errs <- err
				return
			}
			for i, k := range keys {
				if got[i] != want[k] {
					errs <- fmt.Errorf("%s = %v, want %d", k, got[i], want[k])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if m := e.Memory(); m.Keys != 0 {
		t.Errorf("held: %+v", m)
	}
}

func TestEventsAndProgress(t *testing.T) {
	reg := testRegistry(t)
	var out strings.Builder
	e := New(WithRegistry(reg), WithThreads(2), WithProgress(&out), WithOptimize(false))
	rec := diagnostics.NewRecorder()
	rec.Attach(e.Events())
	r := rand.New(rand.NewPCG(5, 5))
	g, _ := randomGraph(t, reg, r, 40)
	if _, err := e.Compute(context.Background(), g, g.Keys()[39]); err != nil {
		t.Fatal(err)
	}
	e.Close()
	rec.Close()
	evs := rec.Events()
	var started, finished, ran int
	for _, ev := range evs {
		switch ev.Kind {
		case diagnostics.ComputeStarted:
			started++
		case diagnostics.ComputeFinished:
			finished++
		case diagnostics.TaskTransition:
			if ev.To == "memory" {
				ran++
				if !strings.HasPrefix(ev.Worker, "local-") || ev.Start.IsZero() || ev.Compute == 0 {
					t.Errorf("finished task event %+v lacks where and when", ev)
				}
			}
		}
	}
	if started != 1 || finished != 1 || ran == 0 {
		t.Errorf("started %d finished %d ran %d", started, finished, ran)
	}
	if len(rec.TaskStream()) != ran {
		t.Errorf("task stream has %d rows, %d tasks ran", len(rec.TaskStream()), ran)
	}
	if !strings.Contains(out.String(), "add") {
		t.Errorf("progress output %q", out.String())
	}
	key := g.Keys()[39]
	story := e.Story(key)
	if len(story) == 0 {
		t.Errorf("no story")
	}
	// The story tells when the task ended, as the task stream does.
	for _, r := range rec.TaskStream() {
		if r.Key != key {
			continue
		}
		i := slices.IndexFunc(story, func(tr scheduler.Transition) bool { return tr.To == scheduler.Memory })
		if i < 0 || story[i].Time.Sub(r.Start.Add(r.Duration)).Abs() > time.Microsecond {
			t.Errorf("%s ran from %v for %v; its story: %+v", key, r.Start, r.Duration, story)
		}
	}
}

func TestDuplicateKeys(t *testing.T) {
	reg := testRegistry(t)
	e := New(WithRegistry(reg))
	defer e.Close()
	g, _ := graph.NewFromTasks(
		&graph.Task{Key: "a", Op: "test.add", Params: param(t, reg, int64(1))},
		&graph.Task{Key: "b", Op: "test.add", Params: param(t, reg, int64(2)), Deps: []graph.Key{"a"}},
	)
	got, err := e.Compute(context.Background(), g, "a", "b", "a", "b", "b")
	if err != nil {
		t.Fatal(err)
	}
	if want := []any{int64(1), int64(3), int64(1), int64(3), int64(3)}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	fs, err := e.Submit(context.Background(), g, "b", "b")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if v, err := f.Result(context.Background()); err != nil || v != int64(3) {
			t.Errorf("future %v: %v %v", f, v, err)
		}
	}
	fs[0].Release()
	if v, err := fs[1].Result(context.Background()); err != nil || v != int64(3) {
		t.Errorf("after releasing one of two futures of b: %v %v", v, err)
	}
	fs[1].Release()
	if m := e.Memory(); m.Keys != 0 {
		t.Errorf("held after releasing both: %+v", m)
	}
}

// TestEndWaitsForItsOwnTasks: a computation that fails at once returns
// while another computation's task still runs, and a task that computes
// a failing graph on its own executor gets the error instead of waiting
// for itself for ever.
func TestEndWaitsForItsOwnTasks(t *testing.T) {
	reg := testRegistry(t)
	started := blockingOps(t, reg)
	var e *Executor
	err := reg.Register(graph.Op{Name: "test.nested", Signature: "v1", Run: func(ctx context.Context, in graph.OpInput) (any, error) {
		inner, _ := graph.NewFromTasks(&graph.Task{Key: "inner-fail", Op: "test.fail"})
		_, err := e.Compute(ctx, inner, "inner-fail")
		if err == nil {
			return nil, errors.New("the inner graph did not fail")
		}
		return int64(len(err.Error())), nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	e = New(WithRegistry(reg), WithThreads(3)) // long, nested, inner
	defer e.Close()

	// A long task of another computation, which blocks until cancelled.
	ctx, cancel := context.WithCancel(context.Background())
	long, _ := graph.NewFromTasks(&graph.Task{Key: "long", Op: "test.block"})
	longDone := make(chan error, 1)
	go func() {
		_, err := e.Compute(ctx, long, "long")
		longDone <- err
	}()
	<-started
	tests := []struct {
		name string
		g    []*graph.Task
		key  graph.Key
		want func(any, error) bool
	}{
		{"fails at once", []*graph.Task{{Key: "f", Op: "test.fail"}}, "f",
			func(_ any, err error) bool { return err != nil && strings.Contains(err.Error(), "bad input in row 7") }},
		{"computes a failing graph inside", []*graph.Task{{Key: "n", Op: "test.nested"}}, "n",
			func(v any, err error) bool { return err == nil && v.(int64) > 0 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, _ := graph.NewFromTasks(tc.g...)
			tctx, tcancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer tcancel()
			vs, err := e.Compute(tctx, g, tc.key)
			if tctx.Err() != nil {
				t.Fatalf("Compute waited for an unrelated task: %v", err)
			}
			var v any
			if err == nil {
				v = vs[0]
			}
			if !tc.want(v, err) {
				t.Errorf("got %v, %v", v, err)
			}
		})
	}
	select {
	case err := <-longDone:
		t.Fatalf("the long computation ended: %v", err)
	default:
	}
	cancel()
	if err := <-longDone; !errors.Is(err, context.Canceled) {
		t.Errorf("long: %v", err)
	}
}
