package distributed_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/diagnostics/archive"
	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/distributed/server"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/local"
)

// shout prints its argument on the standard output of the worker that
// runs it.
var shout = graph.MustRegisterFunc("distributed_test.shout", func(_ context.Context, s string) (string, error) {
	fmt.Println(s)
	return s, nil
})

// readArchive reads the rows of a table of the archive in dir that the
// cluster wrote, with Shoal, and returns them as a table.
func readArchive(t *testing.T, dir, table, cluster string, cols ...string) arrow.Table {
	t.Helper()
	ctx := context.Background()
	df, err := dataframe.ReadParquet(ctx, archive.Glob(dir, table))
	if err != nil {
		t.Fatalf("read table %s: %v", table, err)
	}
	exprs := make([]any, len(cols))
	for i, c := range cols {
		exprs[i] = c
	}
	exec := local.New()
	defer exec.Close()
	out, err := df.Filter(dataframe.Col("cluster").Eq(cluster)).Select(exprs...).Compute(ctx, exec)
	if err != nil {
		t.Fatalf("read table %s: %v", table, err)
	}
	t.Cleanup(out.Release)
	return out
}

// archiveRows returns the values of a table's text and integer columns as
// strings, row by row.
func archiveRows(tb arrow.Table) [][]string {
	out := make([][]string, tb.NumRows())
	for c := range int(tb.NumCols()) {
		r := 0
		for _, chunk := range tb.Column(c).Data().Chunks() {
			for i := range chunk.Len() {
				var v string
				switch a := chunk.(type) {
				case *array.Dictionary:
					v = a.Dictionary().(*array.String).Value(a.GetValueIndex(i))
				default:
					v = a.ValueStr(i)
				}
				out[r] = append(out[r], v)
				r++
			}
		}
	}
	return out
}

// TestLocalClusterArchive runs a computation that fails on a cluster of
// worker processes, closes the cluster, and reads its archive back with
// dataframe.ReadParquet: the task runs, the workers' log records and
// output, and samples of each worker are there.
func TestLocalClusterArchive(t *testing.T) {
	base := t.TempDir()
	lc, c := processCluster(t, distributed.LocalClusterOptions{LocalDir: base, HeartbeatInterval: 50 * time.Millisecond,
		Scheduler: server.Config{ArchiveOptions: []archive.Option{archive.WithSampleInterval(50 * time.Millisecond)}}})
	dir := lc.ArchiveDir()
	if want := filepath.Join(base, "shoal-archive"); dir != want {
		t.Errorf("ArchiveDir = %q, want %q", dir, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var parts []any
	for i := range 10 {
		parts = append(parts, double.Call(i))
	}
	if _, err := graph.Compute[int](ctx, c, sum.Call(graph.List(parts...))); err != nil {
		t.Fatal(err)
	}
	if _, err := graph.Compute[string](ctx, c, shout.Call("hello from a task")); err != nil {
		t.Fatal(err)
	}
	failed := fail.Call(7)
	if _, err := graph.Compute[int](ctx, c, failed); err == nil {
		t.Fatal("the failing task did not fail")
	}
	// Both workers are sampled: the scheduler's sampler has its own clock.
	workers := lc.Scheduler().Info().Workers
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := lc.Scheduler().FlushArchive(ctx); err != nil {
			t.Fatal(err)
		}
		sampled := map[string]bool{}
		for _, r := range archiveRows(readArchive(t, dir, archive.TableMetrics, lc.Scheduler().ID(), "worker", "name")) {
			if r[1] == "memory_managed_bytes" {
				sampled[r[0]] = true
			}
		}
		if len(sampled) == len(workers) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("workers sampled: %v, want %d", sampled, len(workers))
		}
		time.Sleep(20 * time.Millisecond)
	}
	cluster := lc.Scheduler().ID()
	c.Close()
	if err := lc.Close(); err != nil {
		t.Fatal(err)
	}

	var memory, erred int
	for _, r := range archiveRows(readArchive(t, dir, archive.TableTasks, cluster, "key", "prefix", "worker", "outcome", "error")) {
		switch {
		case r[3] == "memory":
			memory++
		case r[3] == "erred" && r[0] == string(failed.Key()) && strings.Contains(r[4], "boom") && r[2] != "":
			erred++
		default:
			t.Errorf("task row %q", r)
		}
	}
	if memory != 12 || erred != 1 {
		t.Errorf("task rows: %d in memory, %d erred; want 12 and 1", memory, erred)
	}

	var failedLogged, printed, joined bool
	for _, r := range archiveRows(readArchive(t, dir, archive.TableLogs, cluster, "process", "worker", "message", "stream", "key")) {
		switch {
		case r[0] == "worker" && r[2] == "task failed" && r[4] == string(failed.Key()) && r[1] != "":
			failedLogged = true
		case r[0] == "worker" && r[2] == "hello from a task" && r[3] == "stdout" && r[1] != "":
			printed = true
		case r[0] == "scheduler" && r[2] == "worker joined":
			joined = true
		}
	}
	if !failedLogged || !printed || !joined {
		t.Errorf("in the logs: the worker's record of the failure %v, the task's output %v, the scheduler's record %v",
			failedLogged, printed, joined)
	}
	if n := readArchive(t, dir, archive.TableTransitions, cluster, "key").NumRows(); n < 13*3 {
		t.Errorf("%d transitions, want at least 3 per task", n)
	}
}

func TestLocalClusterArchiveOptions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mine")
	lc, _ := newCluster(t, distributed.LocalClusterOptions{Workers: 1, InProcess: true, Archive: dir})
	if lc.ArchiveDir() != dir {
		t.Errorf("ArchiveDir = %q, want %q", lc.ArchiveDir(), dir)
	}
	lc, _ = newCluster(t, distributed.LocalClusterOptions{Workers: 1, InProcess: true, NoArchive: true})
	if lc.ArchiveDir() != "" {
		t.Errorf("with NoArchive, ArchiveDir = %q", lc.ArchiveDir())
	}
}
