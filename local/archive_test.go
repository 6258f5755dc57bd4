package local

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/diagnostics/archive"
	"github.com/shoal-data/shoal/graph"
)

// column returns the values of a text column of an archive's table, read
// with Shoal, in the rows where column where equals is.
func column(t *testing.T, dir, table, col, where, is string) []string {
	t.Helper()
	ctx := context.Background()
	df, err := dataframe.ReadParquet(ctx, archive.Glob(dir, table))
	if err != nil {
		t.Fatal(err)
	}
	e := New()
	defer e.Close()
	tb, err := df.Filter(dataframe.Col(where).Eq(is)).Select(col).Compute(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Release()
	var out []string
	for _, c := range tb.Column(0).Data().Chunks() {
		for i := range c.Len() {
			switch a := c.(type) {
			case *array.Dictionary:
				out = append(out, a.Dictionary().(*array.String).Value(a.GetValueIndex(i)))
			case *array.String:
				out = append(out, a.Value(i))
			default:
				t.Fatalf("column %s of %s is a %T", col, table, c)
			}
		}
	}
	return out
}

// TestArchive runs a computation with a failing task and a task that
// logs on an executor with an archive, and reads the archive back once the
// executor is closed.
func TestArchive(t *testing.T) {
	reg := telemetryRegistry(t)
	dir := t.TempDir()
	e := New(WithRegistry(reg), WithArchive(dir))
	if e.ArchiveDir() != dir {
		t.Errorf("ArchiveDir = %q, want %q", e.ArchiveDir(), dir)
	}
	g := graph.New()
	report := graph.NewKey("report", "0123456789abcdef")
	failed := graph.NewKey("fail", "0123456789abcdef")
	g.Add(&graph.Task{Key: report, Op: "test.report"})
	g.Add(&graph.Task{Key: failed, Op: "test.fail"})
	if _, err := e.Compute(context.Background(), g, report); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Compute(context.Background(), g, failed); err == nil {
		t.Fatal("the failing task did not fail")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	if got := column(t, dir, archive.TableTasks, "outcome", "key", string(report)); !slices.Equal(got, []string{"memory"}) {
		t.Errorf("outcome of %s: %q", report, got)
	}
	if got := column(t, dir, archive.TableTasks, "op", "key", string(failed)); !slices.Equal(got, []string{"test.fail"}) {
		t.Errorf("op of %s: %q", failed, got)
	}
	if got := column(t, dir, archive.TableLogs, "message", "key", string(report)); !slices.Equal(got, []string{"reporting"}) {
		t.Errorf("records of %s: %q", report, got)
	}
	if got := column(t, dir, archive.TableLogs, "message", "level", "WARN"); !slices.Contains(got, "task failed") {
		t.Errorf("warnings: %q", got)
	}
	if got := column(t, dir, archive.TableEvents, "kind", "error", ""); !slices.Contains(got, "compute-started") {
		t.Errorf("events %q", got)
	}
}

func TestArchiveSamples(t *testing.T) {
	e := New(WithArchive(t.TempDir()))
	defer e.Close()
	var g goSampler
	now := time.Now()
	first := e.archiveSamples(now, &g)
	second := e.archiveSamples(now.Add(time.Second), &g)
	names := func(ss []archive.Sample) []string {
		var out []string
		for _, s := range ss {
			out = append(out, s.Name)
			if s.Process != archive.ProcessLocal || s.Worker != workerName {
				t.Errorf("sample %+v", s)
			}
		}
		slices.Sort(out)
		return out
	}
	want := []string{"go_memory_bytes", "goroutines", "memory_managed_bytes", "memory_spilled_bytes",
		"tasks_executing", "tasks_ready"}
	if got := names(first); !slices.Equal(got, want) {
		t.Errorf("first samples %q, want %q", got, want)
	}
	// From the second on, the CPU used since the one before.
	want = append([]string{"cpu_percent"}, want...)
	if got := names(second); !slices.Equal(got, want) {
		t.Errorf("second samples %q, want %q", got, want)
	}
}

func TestArchiveUnusable(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	e := New(WithArchive(filepath.Join(f, "archive")))
	defer e.Close()
	if e.ArchiveDir() != "" {
		t.Errorf("ArchiveDir = %q for a directory that cannot be made", e.ArchiveDir())
	}
}
