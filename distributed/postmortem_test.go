package distributed_test

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
	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/internal/browsertest"
	"github.com/shoal-data/shoal/internal/reporttest"
)

// TestPerformanceReport writes the report of a period in which the
// cluster spilled, moved blobs from one worker to the other, burned some
// CPU, logged from a task and failed a task; then opens it in Chromium
// offline. It loads nothing, every page draws without an error, and its
// numbers are the run's: the task runs and the failed one, the bytes of
// the results as the workers reported them (the futures' sizes), the
// bytes moved and spilled.
func TestPerformanceReport(t *testing.T) {
	_, c := newCluster(t, distributed.LocalClusterOptions{Workers: 2, ThreadsPerWorker: 2, InProcess: true,
		HeartbeatInterval: 100 * time.Millisecond, MemoryLimit: 8 << 20, TargetFraction: 0.5})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a, b := info.Workers[0].Address, info.Workers[1].Address
	path := filepath.Join(t.TempDir(), "report.html")

	var computed int64
	tasks := 0
	err = c.PerformanceReport(ctx, path, func(ctx context.Context) error {
		var ds []graph.Delayed
		var parts []any
		for i := range 8 {
			d := blob.Call(i).WithAnnotations(graph.Annotations{Workers: []string{a}, Priority: i})
			ds, parts = append(ds, d), append(parts, d)
		}
		ds = append(ds, total.Call(graph.List(parts...)).WithAnnotations(graph.Annotations{Workers: []string{b}}),
			chatty.Call(7))
		for i := range 4 {
			ds = append(ds, busy.Call(i))
		}
		fs, err := c.Persist(ctx, ds...)
		if err != nil {
			return err
		}
		if err := c.Wait(ctx, fs...); err != nil {
			return err
		}
		for _, f := range fs {
			if err := f.Err(); err != nil {
				return err
			}
			computed += f.Size()
		}
		tasks = len(fs) + 1
		if _, err := graph.Compute[int](ctx, c, fail.Call(99)); err == nil {
			t.Error("fail(99) did not fail")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	s := readReport(t, path)
	r := s.Report
	if r.Tasks != tasks || r.Erred != 1 || r.Computations != 2 || r.BytesComputed != computed || r.Workers != 2 ||
		r.Threads != 4 {
		t.Errorf("summary: %+v; want %d tasks, 1 erred, 2 computations, %d bytes computed, 2 workers of 4 threads",
			r, tasks, computed)
	}
	if r.BytesTransferred < 8<<20 || r.BytesSpilled < 1<<20 {
		t.Errorf("summary: %d bytes transferred, %d spilled; want the 8 MiB of blobs moved, and some spilled",
			r.BytesTransferred, r.BytesSpilled)
	}
	for _, cp := range s.Status.Computations {
		if !strings.Contains(cp.Caller, "postmortem_test.go:") {
			t.Errorf("computation %d was submitted from %q, want this file", cp.ID, cp.Caller)
		}
	}

	br := browsertest.New(t, browsertest.WithTimeout(30*time.Second))
	p := reporttest.Open(t, br, path)
	check := func(what, js, want string) {
		t.Helper()
		if got := browsertest.Eval[string](p.Page, js); got != want {
			p.Errorf("%s: %q, want %q", what, got, want)
		}
	}
	card := func(id string) string {
		return `document.querySelector("[data-card=` + id + `]").dataset.value`
	}
	check("task runs", card("tasks"), strconv.Itoa(tasks))
	check("erred", card("erred"), "1")
	check("bytes computed", card("computed"), strconv.FormatInt(computed, 10))
	check("bytes transferred", card("transferred"), strconv.FormatInt(r.BytesTransferred, 10))
	check("workers", card("workers"), "2")
	check("callers", `[...new Set([...document.querySelectorAll("#report-computations .caller span")].map((e) => e.textContent.split(":")[0]))].join()`,
		"postmortem_test.go")
	check("memory of both workers", `document.querySelectorAll("#report-memory [data-chart=managed] path.line").length + ""`, "2")
	pages := []struct{ page, what, js, want string }{
		{"status", "every run", `document.querySelector("#stream-info").textContent.startsWith("` + strconv.Itoa(tasks) + ` runs, 1 erred") + ""`, "true"},
		{"workers", "both", `document.querySelectorAll("#workers-table tbody tr").length + ""`, "2"},
		{"worker?name=" + b, "its runs", `(document.querySelectorAll("#worker-runs tbody tr").length > 0) + ""`, "true"},
		{"errors", "the failed task", `document.querySelector("#error-table .err").textContent.includes("failing on 99") + ""`, "true"},
		{"logs", "the task's record", `document.querySelector("#log-table").textContent.includes("hello from the task") + ""`, "true"},
		{"logs?text=hello", "filtered", `document.querySelectorAll("#log-table tbody tr").length + ""`, "1"},
		{"profile", "a flame graph", `(document.querySelectorAll("#flame rect").length > 1) + ""`, "true"},
		{"fine-metrics", "the blobs", `document.querySelector("#fine-table").textContent.includes("distributed_test.blob") + ""`, "true"},
		{"bandwidth", "a to b", `(document.querySelector("#bw-matrix").textContent.includes("MiB")) + ""`, "true"},
		{"groups", "the blobs' group", `(document.querySelector("[data-group='distributed_test.blob']") !== null) + ""`, "true"},
		{"system", "the scheduler", `(document.querySelectorAll("#system-charts figure").length > 0) + ""`, "true"},
		{"shuffles", "none", `document.querySelector("#shuffles").textContent`, "No shuffle yet."},
	}
	for _, pc := range pages {
		p.Show(pc.page)
		check(pc.page+": "+pc.what, pc.js, pc.want)
	}
	p.Offline()
	p.NoErrors()
}

// TestDumpAndStory fails a task and keeps a value, then asks for the
// story of the failed task (the scheduler's transitions and the worker's,
// with the error) and dumps the cluster: the dump holds both workers'
// state machines (the value among the data of one), their logs and
// reports, the scheduler's erred task, and tells the same story.
func TestDumpAndStory(t *testing.T) {
	_, c := newCluster(t, distributed.LocalClusterOptions{Workers: 2, ThreadsPerWorker: 1, InProcess: true,
		HeartbeatInterval: 100 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	kept, err := c.Persist(ctx, double.Call(21))
	if err != nil {
		t.Fatal(err)
	}
	failed, err := c.Persist(ctx, fail.Call(5))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(ctx, kept[0], failed[0]); err != nil {
		t.Fatal(err)
	}
	key := failed[0].Key()

	story, err := c.Story(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	checkStory := func(from string, story []dump.Transition) {
		t.Helper()
		var sched, onWorker *dump.Transition
		for i := range story {
			tr := &story[i]
			if i > 0 && tr.Time.Before(story[i-1].Time) {
				t.Errorf("%s: transition %d is older than the one before: %+v", from, i, story)
			}
			switch {
			case tr.Worker == "" && tr.To == "erred":
				sched = tr
			case tr.Worker != "" && tr.From == "executing" && tr.To == "error":
				onWorker = tr
			}
		}
		if sched == nil || !strings.Contains(sched.Error, "failing on 5") {
			t.Errorf("%s: no erred transition of the scheduler with the error: %+v", from, story)
		}
		if onWorker == nil || !strings.Contains(onWorker.Error, "failing on 5") || onWorker.Cause != "executed" {
			t.Errorf("%s: no transition executing -> error on the worker with the error: %+v", from, story)
		}
	}
	checkStory("Client.Story", story)

	// A worker's reports of its resources come with its heartbeats.
	path := filepath.Join(t.TempDir(), "cluster.json.gz")
	var f *dump.File
	eventually(t, "the dump has the reports of both workers", func() bool {
		if err := c.DumpClusterState(ctx, path); err != nil {
			t.Fatal(err)
		}
		if f, err = dump.Read(path); err != nil {
			t.Fatal(err)
		}
		for _, w := range f.Workers {
			if len(w.Metrics) == 0 {
				return false
			}
		}
		return true
	})
	if f.Version != dump.Version || f.Executor != "cluster" || len(f.Workers) != 2 || f.Dashboard == nil {
		t.Fatalf("dump: version %d, executor %q, %d workers, dashboard %v", f.Version, f.Executor, len(f.Workers),
			f.Dashboard != nil)
	}
	held := 0
	for _, w := range f.Workers {
		if w.State == nil {
			t.Fatalf("worker %s: no state: %s", w.Address, w.Error)
		}
		if _, ok := w.State.Data[string(kept[0].Key())]; ok {
			held++
		}
		if len(w.Logs) == 0 || len(w.FineMetrics) == 0 || len(w.State.Events) == 0 {
			t.Errorf("worker %s: %d log records, %d fine metrics, %d events", w.Address, len(w.Logs),
				len(w.FineMetrics), len(w.State.Events))
		}
	}
	if held != 1 {
		t.Errorf("%d workers hold %s", held, kept[0].Key())
	}
	var erred *dump.Task
	for i := range f.Scheduler.Tasks {
		if f.Scheduler.Tasks[i].Key == string(key) {
			erred = &f.Scheduler.Tasks[i]
		}
	}
	if erred == nil || erred.State != "erred" {
		t.Errorf("the failed task in the dump: %+v", erred)
	}
	checkStory("the dump's story", f.Story(string(key)))
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
