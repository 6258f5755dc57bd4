package local

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoal-data/shoal/diagnostics/dashboard"
	"github.com/shoal-data/shoal/diagnostics/dump"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/internal/browsertest"
	"github.com/shoal-data/shoal/internal/reporttest"
)

// reportRegistry adds to the tests' ops "test.burn", which uses the CPU
// for the milliseconds of its params and returns a []float64 of as many
// elements.
func reportRegistry(t *testing.T) *graph.Registry {
	reg := testRegistry(t)
	err := reg.Register(graph.Op{Name: "test.burn", Signature: "v1", Run: func(_ context.Context, in graph.OpInput) (any, error) {
		v, err := in.Env.Registry.UnmarshalValue(in.Params)
		if err != nil {
			return nil, err
		}
		ms := v.(int64)
		x := uint64(ms)
		for end := time.Now().Add(time.Duration(ms) * time.Millisecond); time.Now().Before(end); {
			for range 10_000 {
				x = x*6364136223846793005 + 1442695040888963407
			}
		}
		return make([]float64, ms+int64(x&1)), nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// reportGraph is six burns and their sum.
func reportGraph(t *testing.T, reg *graph.Registry) *graph.Graph {
	g := graph.New()
	sum := &graph.Task{Key: graph.NewKey("sumf", "r", 0), Op: "test.sumf"}
	for i := range 6 {
		k := graph.NewKey("burn", "r", i)
		if err := g.Add(&graph.Task{Key: k, Op: "test.burn", Params: param(t, reg, int64(60+i))}); err != nil {
			t.Fatal(err)
		}
		sum.Deps = append(sum.Deps, k)
	}
	if err := g.Add(sum); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestPerformanceReport writes the report of a computation that
// succeeds and one that fails, and opens it in Chromium offline: it
// loads nothing, every page draws without an error, and it shows what
// ran: the task runs, the erred task with its error, the bytes
// computed, where the test asked for the computations, the profile, the
// fine metrics of the burns and the executor's log.
func TestPerformanceReport(t *testing.T) {
	reg := reportRegistry(t)
	e := New(WithThreads(2), WithRegistry(reg), WithOptimize(false), WithProfileWindow(100*time.Millisecond))
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	path := filepath.Join(t.TempDir(), "report.html")

	var want int64
	err := e.PerformanceReport(ctx, path, func(ctx context.Context) error {
		g := reportGraph(t, reg)
		vals, err := e.Compute(ctx, g, g.Keys()...)
		if err != nil {
			return err
		}
		for _, v := range vals {
			want += graph.SizeOf(v) // every task's value, as each key is asked for
		}
		bad := graph.New()
		bad.Add(&graph.Task{Key: graph.NewKey("fail", "r", 0), Op: "test.fail"})
		_, err = e.Compute(ctx, bad, bad.Keys()...)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "bad input in row 7") {
		t.Fatalf("PerformanceReport returned %v, want the failure of fn", err)
	}

	s := readReport(t, path)
	r := s.Report
	if r == nil {
		t.Fatal("the report has no summary")
	}
	if r.Tasks != 8 || r.Erred != 1 || r.Computations != 2 || r.BytesComputed != want || r.Workers != 1 || r.Threads != 2 {
		t.Errorf("summary: %+v; want 8 tasks, 1 erred, 2 computations, %d bytes computed, 1 worker of 2 threads", r, want)
	}
	if !strings.Contains(r.Error, "bad input in row 7") {
		t.Errorf("summary's error %q", r.Error)
	}
	if n := len(s.Status.Computations); n != 2 {
		t.Fatalf("%d computations", n)
	}
	for _, c := range s.Status.Computations {
		if !strings.Contains(c.Caller, "report_test.go:") {
			t.Errorf("computation %d was submitted from %q, want this file", c.ID, c.Caller)
		}
	}
	if s.Profile == nil || s.Profile.Samples == 0 || s.PrefixProfiles["burn-r"] == nil {
		t.Errorf("no profile of the burns: %v (%s)", s.Profile, s.ProfileError)
	}

	b := browsertest.New(t)
	p := reporttest.Open(t, b, path)
	check := func(what, js, want string) {
		t.Helper()
		if got := browsertest.Eval[string](p.Page, js); got != want {
			p.Errorf("%s: %q, want %q", what, got, want)
		}
	}
	card := func(id string) string {
		return `document.querySelector("[data-card=` + id + `]").dataset.value`
	}
	check("task runs", card("tasks"), "8")
	check("erred", card("erred"), "1")
	check("bytes computed", card("computed"), strconv.FormatInt(want, 10))
	check("the error of fn", `document.querySelector("#report-error").textContent.includes("bad input in row 7") + ""`, "true")
	check("callers", `[...document.querySelectorAll("#report-computations .caller span")].map((e) => e.textContent.split(":")[0]).join()`,
		"report_test.go,report_test.go")
	check("memory charts", `document.querySelectorAll("#report-memory figure").length + ""`, "3")

	pages := []struct{ page, what, js, want string }{
		{"status", "task runs drawn", `document.querySelectorAll("#task-stream rect.run").length + ""`, "8"},
		{"status", "erred banner", `document.querySelector("#errors-count").textContent`, "1 task erred"},
		{"workers", "the executor", `document.querySelectorAll("#workers-table tbody tr").length + ""`, "1"},
		{"worker?name=local", "its runs", `document.querySelectorAll("#worker-runs tbody tr").length + ""`, "8"},
		{"system", "charts", `(document.querySelectorAll("#system-charts figure").length > 0) + ""`, "true"},
		{"groups", "the burns' group", `(document.querySelector("[data-group='burn-r']") !== null) + ""`, "true"},
		{"logs", "the failed task's record", `document.querySelector("#log-table tbody").textContent.includes("task failed") + ""`, "true"},
		{"errors", "the failed task", `document.querySelector("#error-table tbody tr[data-key]").dataset.key`, "fail-r-0"},
		{"errors", "its error", `document.querySelector("#error-table .err").textContent.includes("bad input in row 7") + ""`, "true"},
		{"profile", "a flame graph", `(document.querySelectorAll("#flame rect").length > 1) + ""`, "true"},
		{"profile?prefix=burn-r", "the burns alone", `(document.querySelectorAll("#flame rect").length > 1) + ""`, "true"},
		{"fine-metrics", "the burns' time", `(document.querySelector("#fine-table").textContent.includes("burn")) + ""`, "true"},
		{"bandwidth", "nothing moved", `document.querySelector("#bw-matrix").textContent`, "Nothing moved yet."},
		{"shuffles", "none", `document.querySelector("#shuffles").textContent`, "No shuffle yet."},
	}
	for _, pc := range pages {
		p.Show(pc.page)
		check(pc.page+": "+pc.what, pc.js, pc.want)
	}
	p.Offline()
	p.NoErrors()
}

// TestDumpClusterState dumps the executor after a computation failed:
// the dump holds the scheduler's tasks and transitions, the executor as
// its worker, and what the dashboard shows.
func TestDumpClusterState(t *testing.T) {
	reg := testRegistry(t)
	e := New(WithThreads(2), WithRegistry(reg))
	defer e.Close()
	ctx := context.Background()
	g := graph.New()
	k := graph.NewKey("fail", "d", 0)
	g.Add(&graph.Task{Key: k, Op: "test.fail"})
	fs, err := e.Submit(ctx, g, k)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fs[0].Result(ctx); err == nil {
		t.Fatal("the task did not fail")
	}
	path := filepath.Join(t.TempDir(), "dump.json.gz")
	if err := e.DumpClusterState(ctx, path); err != nil {
		t.Fatal(err)
	}
	f, err := dump.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != dump.Version || f.Executor != "local" || len(f.Workers) != 1 || f.Workers[0].Address != "local" {
		t.Errorf("dump: version %d, executor %q, workers %+v", f.Version, f.Executor, f.Workers)
	}
	var erred *dump.Task
	for i := range f.Scheduler.Tasks {
		if f.Scheduler.Tasks[i].Key == string(k) {
			erred = &f.Scheduler.Tasks[i]
		}
	}
	if erred == nil || erred.State != "erred" || !strings.Contains(erred.Error, "bad input in row 7") {
		t.Fatalf("the failed task in the dump: %+v", erred)
	}
	story := f.Story(string(k))
	if n := len(story); n == 0 || story[n-1].To != "erred" || !strings.Contains(story[n-1].Error, "bad input") {
		t.Errorf("story: %+v", story)
	}
	if f.Dashboard == nil || len(f.Dashboard.Workers.Workers) != 1 {
		t.Errorf("the dump's dashboard: %+v", f.Dashboard)
	}
}

// readReport reads back the data of the report in the file path.
func readReport(t *testing.T, path string) *dashboard.Snapshot {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := dashboard.ReadReport(f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
