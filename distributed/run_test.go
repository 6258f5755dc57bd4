package distributed_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/graph"
)

var (
	// pid returns the process id of where it runs, plus x.
	pid = graph.MustRegisterFunc("distributed_test.pid", func(_ context.Context, x int) (int, error) {
		return os.Getpid() + x, nil
	})
	// getenv returns an environment variable of where it runs.
	getenv = graph.MustRegisterFunc("distributed_test.getenv", func(_ context.Context, name string) (string, error) {
		return os.Getenv(name), nil
	})
	// getenvAtStart returns an environment variable of where it runs, as
	// it was when the process started.
	getenvAtStart = graph.MustRegisterFunc("distributed_test.getenv_at_start", func(_ context.Context, name string) (string, error) {
		for _, kv := range environAtStart {
			if k, v, _ := strings.Cut(kv, "="); k == name {
				return v, nil
			}
		}
		return "", nil
	})
	environAtStart = os.Environ()
)

func TestRunOnWorkersProcesses(t *testing.T) {
	_, c := processCluster(t, distributed.LocalClusterOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		fn      string
		args    []any
		workers []string
		check   func(t *testing.T, vals map[string]any, errs map[string]error, err error)
	}{
		{"every worker, keyed by address", pid.Name(), []any{1000}, nil,
			func(t *testing.T, vals map[string]any, errs map[string]error, err error) {
				if err != nil || len(errs) != 0 {
					t.Fatalf("run: %v %v", err, errs)
				}
				if len(vals) != 2 {
					t.Fatalf("%d results, want 2", len(vals))
				}
				for _, w := range info.Workers {
					if vals[w.Address] != w.PID+1000 {
						t.Errorf("worker %s: %v, want its pid %d + 1000", w.Address, vals[w.Address], w.PID)
					}
				}
			}},
		{"named worker only", pid.Name(), []any{0}, []string{info.Workers[1].Address},
			func(t *testing.T, vals map[string]any, errs map[string]error, err error) {
				if err != nil || len(errs) != 0 || len(vals) != 1 || vals[info.Workers[1].Address] != info.Workers[1].PID {
					t.Fatalf("run: %v %v %v", vals, errs, err)
				}
			}},
		{"per-worker errors", fail.Name(), []any{7}, nil,
			func(t *testing.T, vals map[string]any, errs map[string]error, err error) {
				if err != nil || len(vals) != 0 || len(errs) != 2 {
					t.Fatalf("run: %v %v %v", vals, errs, err)
				}
				for a, e := range errs {
					var te *graph.TaskError
					if !errors.As(e, &te) || !strings.Contains(e.Error(), "failing on 7: boom") || te.Worker != a {
						t.Errorf("worker %s: error %v", a, e)
					}
				}
			}},
		{"unknown worker", pid.Name(), []any{0}, []string{"nowhere:1"},
			func(t *testing.T, vals map[string]any, errs map[string]error, err error) {
				if err == nil || !strings.Contains(err.Error(), `no worker "nowhere:1"`) {
					t.Fatalf("run: %v", err)
				}
			}},
		{"unknown function", "distributed_test.nope", []any{0}, nil,
			func(t *testing.T, vals map[string]any, errs map[string]error, err error) {
				if err == nil || !strings.Contains(err.Error(), "distributed_test.nope") {
					t.Fatalf("run: %v", err)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vals, errs, err := c.Run(ctx, tc.fn, tc.args, tc.workers...)
			tc.check(t, vals, errs, err)
		})
	}
	v, err := c.RunOnScheduler(ctx, pid.Name(), 0)
	if err != nil || v != os.Getpid() {
		t.Fatalf("run on the scheduler: %v, %v; want this process's pid %d", v, err, os.Getpid())
	}
}

func TestWorkerPluginsProcesses(t *testing.T) {
	_, c := processCluster(t, distributed.LocalClusterOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	src := filepath.Join(t.TempDir(), "helpers.txt")
	if err := os.WriteFile(src, []byte("shared helper data\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	up, err := distributed.UploadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.RegisterWorkerPlugin(ctx, up)
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 2 {
		t.Fatalf("statuses %v, want one per worker", st)
	}
	for _, w := range info.Workers {
		if e, ok := st[w.Address]; !ok || e != nil {
			t.Errorf("worker %s: status %v (present %v), want OK", w.Address, e, ok)
		}
		b, err := os.ReadFile(filepath.Join(w.LocalDir, "helpers.txt"))
		if err != nil || string(b) != "shared helper data\n" {
			t.Errorf("worker %s: uploaded file: %q, %v", w.Address, b, err)
		}
	}

	// Without a nanny, Environ sets the variables in the running worker
	// processes, which are not restarted.
	env, err := distributed.Environ(map[string]string{"SHOAL_TEST_PLUGIN_VAR": "set by the plugin"})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := c.RegisterWorkerPlugin(ctx, env); err != nil || len(st) != 2 || st[info.Workers[0].Address] != nil ||
		st[info.Workers[1].Address] != nil {
		t.Fatalf("environ: %v %v", st, err)
	}
	for _, fn := range []string{getenv.Name(), getenvAtStart.Name()} {
		vals, errs, err := c.Run(ctx, fn, []any{"SHOAL_TEST_PLUGIN_VAR"})
		if err != nil || len(errs) != 0 {
			t.Fatal(err, errs)
		}
		for _, w := range info.Workers {
			if want := map[string]string{getenv.Name(): "set by the plugin"}[fn]; vals[w.Address] != want {
				t.Errorf("worker %s: %s: %q, want %q", w.Address, fn, vals[w.Address], want)
			}
		}
	}
	if after, err := c.Info(ctx); err != nil || len(after.Workers) != 2 || after.Workers[0].PID != info.Workers[0].PID ||
		after.Workers[1].PID != info.Workers[1].PID {
		t.Fatalf("workers after environ without nannies: %v %v, want the same processes", after, err)
	}

	// A plugin that fails reports its error per worker.
	bad := distributed.PluginSpec{Name: "shoal.upload-file", Config: []byte(`{"name": "../escape", "data": ""}`)}
	st, err = c.RegisterWorkerPlugin(ctx, bad)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range info.Workers {
		if e := st[w.Address]; e == nil || !strings.Contains(e.Error(), "not a plain file name") {
			t.Errorf("worker %s: status %v, want the setup error", w.Address, e)
		}
	}
	st, err = c.RegisterWorkerPlugin(ctx, distributed.PluginSpec{Name: "no-such-plugin"})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range info.Workers {
		if e := st[w.Address]; e == nil || !strings.Contains(e.Error(), `no plugin "no-such-plugin"`) {
			t.Errorf("worker %s: status %v, want unknown plugin", w.Address, e)
		}
	}
}

// TestEnvironNannyProcesses registers the Environ plugin on a cluster
// whose workers have nannies: each nanny restarts its worker process with
// the variables, which hold from its start; registering the same again
// restarts nothing; a value a worker held before is computed again.
func TestEnvironNannyProcesses(t *testing.T) {
	lc, c := processCluster(t, distributed.LocalClusterOptions{Nanny: true, ThreadsPerWorker: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// A value held on a worker before the restarts: the pid of the process
	// that computed it.
	held, err := c.SubmitCall(ctx, pid.Name(), []any{0})
	if err != nil {
		t.Fatal(err)
	}
	first, err := held.Result(ctx)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name    string
		vars    map[string]string
		restart bool
		want    map[string]string // in every worker, now and at its start
		err     string            // in every status
	}{
		{"set: the nannies restart their workers", map[string]string{"SHOAL_TEST_ENVIRON": "one", "OMP_NUM_THREADS": "3"},
			true, map[string]string{"SHOAL_TEST_ENVIRON": "one", "OMP_NUM_THREADS": "3"}, ""},
		{"the same again: no restart", map[string]string{"OMP_NUM_THREADS": "3"},
			false, map[string]string{"SHOAL_TEST_ENVIRON": "one", "OMP_NUM_THREADS": "3"}, ""},
		{"a new value: restart, the others kept", map[string]string{"SHOAL_TEST_ENVIRON": "two"},
			true, map[string]string{"SHOAL_TEST_ENVIRON": "two", "OMP_NUM_THREADS": "3"}, ""},
		{"a bad name: an error, no restart", map[string]string{"BAD=NAME": "x"},
			false, map[string]string{"SHOAL_TEST_ENVIRON": "two", "OMP_NUM_THREADS": "3"}, `bad variable name "BAD=NAME"`},
		{"after a bad name, the next: restart", map[string]string{"SHOAL_TEST_ENVIRON": "three"},
			true, map[string]string{"SHOAL_TEST_ENVIRON": "three", "OMP_NUM_THREADS": "3"}, ""},
	}
	for _, tc := range steps {
		t.Run(tc.name, func(t *testing.T) {
			before, err := c.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			spec, err := distributed.Environ(tc.vars)
			if err != nil {
				t.Fatal(err)
			}
			st, err := c.RegisterWorkerPlugin(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			after, err := c.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(st) != 2 || len(after.Workers) != 2 {
				t.Fatalf("statuses %v, workers %v: want 2 of each", st, after.Workers)
			}
			// Statuses name the workers there now: the restarted ones.
			for _, w := range after.Workers {
				e, ok := st[w.Address]
				switch {
				case !ok:
					t.Errorf("no status for worker %s (statuses %v)", w.Address, st)
				case tc.err == "" && e != nil:
					t.Errorf("worker %s: %v, want OK", w.Address, e)
				case tc.err != "" && (e == nil || !strings.Contains(e.Error(), tc.err)):
					t.Errorf("worker %s: %v, want an error with %q", w.Address, e, tc.err)
				}
			}
			// Restarted: new processes, in the nannies' care.
			for i, w := range after.Workers {
				old := slices.ContainsFunc(before.Workers, func(b distributed.WorkerInfo) bool { return b.PID == w.PID })
				if old == tc.restart {
					t.Errorf("worker %s: process %d, restarted %v; want restarted %v (before: %v)", w.Address, w.PID,
						!old, tc.restart, before.Workers)
				}
				if w.Nanny == "" || w.Nanny == after.Workers[1-i].Nanny {
					t.Errorf("worker %s: nanny %q, want its own", w.Address, w.Nanny)
				}
			}
			pids := []int{lc.WorkerProcesses()[0].Pid, lc.WorkerProcesses()[1].Pid}
			for _, w := range after.Workers {
				if !slices.Contains(pids, w.PID) {
					t.Errorf("worker %s: process %d is not one the nannies run (%v)", w.Address, w.PID, pids)
				}
			}
			for name, want := range tc.want {
				for _, fn := range []string{getenv.Name(), getenvAtStart.Name()} {
					vals, errs, err := c.Run(ctx, fn, []any{name})
					if err != nil || len(errs) != 0 || len(vals) != 2 {
						t.Fatalf("run %s: %v %v %v", fn, vals, errs, err)
					}
					for a, v := range vals {
						if v != want {
							t.Errorf("worker %s: %s(%s) = %q, want %q", a, fn, name, v, want)
						}
					}
				}
			}
		})
	}
	// The value held before was computed again, on a restarted process.
	again, err := graph.Compute[int](ctx, c, noop.Call(held.Delayed()))
	if err != nil {
		t.Fatal(err)
	}
	if again == first {
		t.Errorf("value held before the restarts: %v, the same process's; want it computed again", again)
	}
	if !slices.Contains([]int{lc.WorkerProcesses()[0].Pid, lc.WorkerProcesses()[1].Pid}, again) {
		t.Errorf("value held before the restarts computed by process %d, not a worker's now", again)
	}
}
