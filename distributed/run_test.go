package distributed_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
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

	env, err := distributed.Environ(map[string]string{"SHOAL_TEST_PLUGIN_VAR": "set by the plugin"})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := c.RegisterWorkerPlugin(ctx, env); err != nil || len(st) != 2 {
		t.Fatalf("environ: %v %v", st, err)
	}
	vals, errs, err := c.Run(ctx, getenv.Name(), []any{"SHOAL_TEST_PLUGIN_VAR"})
	if err != nil || len(errs) != 0 {
		t.Fatal(err, errs)
	}
	for a, v := range vals {
		if v != "set by the plugin" {
			t.Errorf("worker %s: variable %q", a, v)
		}
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
