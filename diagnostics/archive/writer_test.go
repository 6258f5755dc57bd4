package archive_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	pq "github.com/parquet-go/parquet-go"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/diagnostics/archive"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/io/parquet"
	"github.com/shoal-data/shoal/io/storage"
)

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// files returns the names of a table's files, oldest first.
func files(t *testing.T, dir, table string) []string {
	t.Helper()
	paths, err := filepath.Glob(archive.Glob(dir, table))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(paths)
	return paths
}

// readTable reads every row of a table, file by file, oldest first.
func readTable[T any](t *testing.T, dir, table string) []T {
	t.Helper()
	var out []T
	for _, p := range files(t, dir, table) {
		rows, err := pq.ReadFile[T](p)
		if err != nil {
			t.Fatalf("read %s: %v", p, err)
		}
		out = append(out, rows...)
	}
	return out
}

// waitFor polls cond until it holds; nothing else tells when the writer's
// own clock has run out.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func open(t *testing.T, dir string, opts ...archive.Option) *archive.Writer {
	t.Helper()
	w, err := archive.Open(dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func TestWriterWritesEveryTable(t *testing.T) {
	dir := t.TempDir()
	w := open(t, dir, archive.WithCluster("cluster-1"), archive.WithFlushInterval(time.Hour))
	load := graph.NewKey("load", "3fa2c1d0", 0)
	w.AddLogs(archive.Log{Time: t0, Process: archive.ProcessWorker, Worker: "w1", Level: "INFO", Message: "hello"})
	w.AddEvents(archive.Event{Time: t0, Kind: "topic", Topic: "mine", Message: "note"})
	w.Record([]diagnostics.Event{{Time: t0.Add(time.Second), Kind: diagnostics.TaskTransition, Compute: 1,
		Key: load, From: "processing", To: "memory", Worker: "w1", Start: t0, Duration: time.Second, Bytes: 10}})
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, table := range archive.Tables {
		if table == archive.TableMetrics {
			continue
		}
		if n := len(files(t, dir, table)); n != 1 {
			t.Errorf("table %s: %d files, want 1", table, n)
		}
	}
	if n := len(files(t, dir, archive.TableMetrics)); n != 0 {
		t.Errorf("table metrics had no rows, but %d files", n)
	}
	// Only their owner reads them: logs may tell of the data.
	for _, p := range append(files(t, dir, archive.TableLogs), filepath.Join(dir, archive.TableLogs)) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("%s: mode %v, readable by others", p, perm)
		}
	}
	logs := readTable[archive.Log](t, dir, archive.TableLogs)
	if len(logs) != 1 || logs[0].Message != "hello" || logs[0].Cluster != "cluster-1" || !logs[0].Time.Equal(t0) {
		t.Errorf("logs = %+v", logs)
	}
	events := readTable[archive.Event](t, dir, archive.TableEvents)
	if len(events) != 1 || events[0].Topic != "mine" || events[0].Cluster != "cluster-1" {
		t.Errorf("events = %+v", events)
	}
	tasks := readTable[archive.Task](t, dir, archive.TableTasks)
	if len(tasks) != 1 || tasks[0].Key != string(load) || tasks[0].DurationSeconds != 1 || tasks[0].Bytes != 10 ||
		tasks[0].Group != load.Group() || !tasks[0].Stop.Equal(t0.Add(time.Second)) {
		t.Errorf("tasks = %+v", tasks)
	}
	// Shoal's own reader reads every table: one schema across the files.
	for _, table := range []string{archive.TableLogs, archive.TableEvents, archive.TableTasks, archive.TableTransitions} {
		plan, err := parquet.PlanRead(context.Background(), storage.Local{}, []string{archive.Glob(dir, table)},
			parquet.Options{})
		if err != nil {
			t.Errorf("table %s: %v", table, err)
			continue
		}
		if plan.Schema.NumFields() == 0 || plan.Rows() != 1 {
			t.Errorf("table %s: %d columns, %d rows", table, plan.Schema.NumFields(), plan.Rows())
		}
	}
}

func TestWriterFlushInterval(t *testing.T) {
	dir := t.TempDir()
	w := open(t, dir, archive.WithFlushInterval(20*time.Millisecond))
	w.AddLogs(archive.Log{Time: t0, Message: "first"})
	waitFor(t, "the row is in a file", func() bool { return len(files(t, dir, archive.TableLogs)) == 1 })
	w.AddLogs(archive.Log{Time: t0, Message: "second"})
	waitFor(t, "the next row is in another file", func() bool { return len(files(t, dir, archive.TableLogs)) == 2 })
	if logs := readTable[archive.Log](t, dir, archive.TableLogs); len(logs) != 2 || logs[1].Message != "second" {
		t.Errorf("logs = %+v", logs)
	}
}

func TestWriterMaxRows(t *testing.T) {
	dir := t.TempDir()
	w := open(t, dir, archive.WithFlushInterval(time.Hour), archive.WithMaxRows(3))
	w.AddLogs(archive.Log{Message: "1"}, archive.Log{Message: "2"})
	w.AddLogs(archive.Log{Message: "3"})
	waitFor(t, "three rows make a file", func() bool { return len(files(t, dir, archive.TableLogs)) == 1 })
	if logs := readTable[archive.Log](t, dir, archive.TableLogs); len(logs) != 3 {
		t.Errorf("%d rows in the file, want 3", len(logs))
	}
}

func TestWriterDropsWhatItCannotHold(t *testing.T) {
	dir := t.TempDir()
	w := open(t, dir, archive.WithFlushInterval(time.Hour), archive.WithMaxRows(2))
	w.AddLogs(make([]archive.Log, 100)...) // holds 4 files' worth: 8 rows
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := w.Dropped(); got != 92 {
		t.Errorf("Dropped = %d, want 92", got)
	}
	if n := len(readTable[archive.Log](t, dir, archive.TableLogs)); n != 8 {
		t.Errorf("%d rows written, want 8", n)
	}
}

func TestWriterSizeBound(t *testing.T) {
	// The size of a file of one row.
	probe := t.TempDir()
	pw := open(t, probe)
	pw.AddLogs(archive.Log{Time: t0, Message: "row"})
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(files(t, probe, archive.TableLogs)[0])
	if err != nil {
		t.Fatal(err)
	}
	size := fi.Size()

	dir := t.TempDir()
	bound := 2*size + size/2
	w := open(t, dir, archive.WithMaxBytes(bound))
	var written []string
	for range 5 {
		w.AddLogs(archive.Log{Time: t0, Message: "row"})
		if err := w.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		fs := files(t, dir, archive.TableLogs)
		written = append(written, fs[len(fs)-1])
	}
	left := files(t, dir, archive.TableLogs)
	if !slices.Equal(left, written[3:]) {
		t.Errorf("files left: %v; want the two newest, %v", left, written[3:])
	}
	var total int64
	for _, p := range left {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		total += fi.Size()
	}
	if total > bound {
		t.Errorf("files take %d bytes, over the bound %d", total, bound)
	}
}

func TestOpenTrimsAndCleans(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, archive.TableLogs)
	tasks := filepath.Join(dir, archive.TableTasks)
	for _, d := range []string{logs, tasks} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path string, size int, age time.Duration) {
		t.Helper()
		if err := os.WriteFile(path, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
		mt := time.Now().Add(-age)
		if err := os.Chtimes(path, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	oldest := filepath.Join(tasks, "20260101T000000.000000000Z-a-000001.parquet")
	middle := filepath.Join(logs, "20260102T000000.000000000Z-b-000001.parquet")
	newest := filepath.Join(tasks, "20260103T000000.000000000Z-a-000002.parquet")
	staleTmp := filepath.Join(logs, ".20260102T000000.000000000Z-b-000002.parquet.tmp")
	freshTmp := filepath.Join(logs, ".20260103T000000.000000000Z-c-000001.parquet.tmp")
	notes := filepath.Join(logs, "notes.parquet")
	write(oldest, 100, 0)
	write(middle, 100, 0)
	write(newest, 100, 0)
	write(staleTmp, 100, time.Hour)
	write(freshTmp, 100, 0)
	write(notes, 1000, 0)

	open(t, dir, archive.WithMaxBytes(250))
	for path, want := range map[string]bool{oldest: false, middle: true, newest: true, staleTmp: false,
		freshTmp: true, notes: true} {
		_, err := os.Stat(path)
		if got := err == nil; got != want {
			t.Errorf("%s: exists %v, want %v", filepath.Base(path), got, want)
		}
	}
}

func TestWriterClose(t *testing.T) {
	dir := t.TempDir()
	w, err := archive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	w.AddLogs(archive.Log{Message: "kept"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	w.AddLogs(archive.Log{Message: "late"})
	if w.Dropped() != 1 {
		t.Errorf("Dropped = %d after a row added after Close, want 1", w.Dropped())
	}
	if err := w.Flush(context.Background()); err == nil {
		t.Error("Flush after Close did not fail")
	}
	if logs := readTable[archive.Log](t, dir, archive.TableLogs); len(logs) != 1 || logs[0].Message != "kept" {
		t.Errorf("logs = %+v", logs)
	}
	// No temporary file is left.
	entries, err := os.ReadDir(filepath.Join(dir, archive.TableLogs))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left", e.Name())
		}
	}
}

func TestOpenFails(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := archive.Open(f); err == nil || !strings.Contains(err.Error(), f) {
		t.Errorf("Open on a file: %v, want an error naming it", err)
	}
}

func TestRecord(t *testing.T) {
	dir := t.TempDir()
	w := open(t, dir, archive.WithCluster("c"))
	hub := diagnostics.NewHub()
	defer hub.Close()
	w.Attach(hub)
	load := graph.NewKey("load", "3fa2c1d0", 0)
	sum := graph.NewKey("sum", "9be01f2a")
	total := graph.NewKey("total", "77aa01bc")
	hub.Publish(
		diagnostics.Event{Time: t0, Kind: diagnostics.ComputeStarted, Compute: 3, Tasks: map[string]int{"load": 2, "sum": 1}},
		diagnostics.Event{Time: t0, Kind: diagnostics.TaskTransition, Compute: 3, Key: load, From: "waiting",
			To: "processing", Stimulus: "s1"},
		diagnostics.Event{Time: t0.Add(2 * time.Second), Kind: diagnostics.TaskTransition, Compute: 3, Key: load,
			From: "processing", To: "memory", Worker: "w1", Start: t0, Duration: 2 * time.Second, Bytes: 64},
		diagnostics.Event{Time: t0.Add(3 * time.Second), Kind: diagnostics.TaskTransition, Compute: 3, Key: sum,
			From: "processing", To: "erred", Worker: "w2", Start: t0.Add(2 * time.Second), Duration: time.Second,
			Err: "boom", Op: "sum-op"},
		diagnostics.Event{Time: t0.Add(3 * time.Second), Kind: diagnostics.Metrics, Worker: "w1",
			Metrics: []diagnostics.FineMetric{{Worker: "w1", Prefix: "load", Activity: "compute", Unit: "seconds", Value: 2}}},
		diagnostics.Event{Time: t0.Add(4 * time.Second), Kind: diagnostics.Spill, Key: load, Bytes: 64, Path: "/s/1",
			Worker: "w1"},
		diagnostics.Event{Time: t0.Add(5 * time.Second), Kind: diagnostics.WorkerRemoved, Worker: "w2", Err: "killed"},
		diagnostics.Event{Time: t0.Add(6 * time.Second), Kind: diagnostics.TaskTransition, Compute: 3, Key: total,
			From: "waiting", To: "erred", Err: "its dependency failed"},
		diagnostics.Event{Time: t0.Add(6 * time.Second), Kind: diagnostics.ComputeFinished, Compute: 3, Err: "boom"},
	)
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}

	trs := readTable[archive.Transition](t, dir, archive.TableTransitions)
	wantTrs := []archive.Transition{
		{Time: t0, Cluster: "c", Computation: 3, Key: string(load), Prefix: "load", From: "waiting", To: "processing",
			Stimulus: "s1"},
		{Time: t0.Add(2 * time.Second), Cluster: "c", Computation: 3, Key: string(load), Prefix: "load",
			From: "processing", To: "memory", Worker: "w1"},
		{Time: t0.Add(3 * time.Second), Cluster: "c", Computation: 3, Key: string(sum), Prefix: "sum",
			From: "processing", To: "erred", Worker: "w2"},
		{Time: t0.Add(6 * time.Second), Cluster: "c", Computation: 3, Key: string(total), Prefix: "total",
			From: "waiting", To: "erred"},
	}
	if !slices.EqualFunc(trs, wantTrs, func(a, b archive.Transition) bool { return a.Time.Equal(b.Time) && sameTime(a, b) }) {
		t.Errorf("transitions:\n got %+v\nwant %+v", trs, wantTrs)
	}

	tasks := readTable[archive.Task](t, dir, archive.TableTasks)
	if len(tasks) != 3 {
		t.Fatalf("tasks = %+v, want 3", tasks)
	}
	if tk := tasks[0]; tk.Outcome != "memory" || tk.Worker != "w1" || tk.Bytes != 64 || tk.DurationSeconds != 2 ||
		tk.Prefix != "load" || tk.Computation != 3 || !tk.Start.Equal(t0) {
		t.Errorf("task 0 = %+v", tk)
	}
	if tk := tasks[1]; tk.Outcome != "erred" || tk.Error != "boom" || tk.Op != "sum-op" || tk.Group != sum.Group() {
		t.Errorf("task 1 = %+v", tk)
	}
	// A task that did not run: no worker, no duration.
	if tk := tasks[2]; tk.Outcome != "erred" || tk.Worker != "" || !tk.Start.Equal(t0.Add(6*time.Second)) ||
		!tk.Stop.Equal(tk.Start) || tk.DurationSeconds != 0 {
		t.Errorf("task 2 = %+v", tk)
	}

	events := readTable[archive.Event](t, dir, archive.TableEvents)
	var kinds []string
	for _, e := range events {
		kinds = append(kinds, e.Kind)
	}
	if want := []string{"compute-started", "spill", "worker-removed", "compute-finished"}; !slices.Equal(kinds, want) {
		t.Fatalf("event kinds %v, want %v", kinds, want)
	}
	if e := events[0]; e.Tasks != 3 || e.Message != `{"load":2,"sum":1}` || e.Computation != 3 {
		t.Errorf("compute-started = %+v", e)
	}
	if e := events[1]; e.Path != "/s/1" || e.Bytes != 64 || e.Key != string(load) {
		t.Errorf("spill = %+v", e)
	}
	if e := events[2]; e.Worker != "w2" || e.Error != "killed" {
		t.Errorf("worker-removed = %+v", e)
	}
}

// sameTime compares transitions but for their times, which Equal compares.
func sameTime(a, b archive.Transition) bool {
	a.Time, b.Time = time.Time{}, time.Time{}
	return a == b
}

func TestLogHandler(t *testing.T) {
	dir := t.TempDir()
	w := open(t, dir)
	var next bytes.Buffer
	logger := slog.New(w.LogHandler(slog.NewTextHandler(&next, &slog.HandlerOptions{Level: slog.LevelDebug}),
		archive.ProcessWorker, "10.0.0.1:4000"))
	logger.Debug("not kept")
	logger.With("key", "sum-1").Warn("task failed", "error", "disk full", slog.Group("io", "path", "/x", "n", 3))
	logger.WithGroup("g").Info("grouped", "a", 1)
	sched := slog.New(w.LogHandler(nil, archive.ProcessScheduler, ""))
	sched.Info("worker lost", "worker", "10.0.0.2:4000")
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(next.String(), "\n"); n != 3 {
		t.Errorf("the next handler got %d records, want 3:\n%s", n, next.String())
	}
	logs := readTable[archive.Log](t, dir, archive.TableLogs)
	if len(logs) != 3 {
		t.Fatalf("logs = %+v, want 3 rows", logs)
	}
	l := logs[0]
	if l.Level != "WARN" || l.Message != "task failed" || l.Key != "sum-1" || l.Error != "disk full" ||
		l.Process != "worker" || l.Worker != "10.0.0.1:4000" || l.Pid != int64(os.Getpid()) ||
		l.Attrs != `{"error":"disk full","io.n":"3","io.path":"/x","key":"sum-1"}` {
		t.Errorf("row 0 = %+v", l)
	}
	if l := logs[1]; l.Attrs != `{"g.a":"1"}` {
		t.Errorf("row 1 = %+v", l)
	}
	if l := logs[2]; l.Process != "scheduler" || l.Worker != "10.0.0.2:4000" {
		t.Errorf("row 2 = %+v", l)
	}
}

func TestSampler(t *testing.T) {
	dir := t.TempDir()
	calls := make(chan struct{}, 100)
	w := open(t, dir, archive.WithSampleInterval(time.Millisecond), archive.WithSampler(func(now time.Time) []archive.Sample {
		select {
		case calls <- struct{}{}:
		default:
		}
		return []archive.Sample{{Time: now, Process: archive.ProcessLocal, Name: "goroutines", Value: 7}}
	}))
	// The second call starts after the first one's samples were queued.
	<-calls
	<-calls
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	samples := readTable[archive.Sample](t, dir, archive.TableMetrics)
	if len(samples) < 1 || samples[0].Name != "goroutines" || samples[0].Value != 7 || samples[0].Cluster != w.Cluster() {
		t.Errorf("samples = %+v", samples)
	}
}
