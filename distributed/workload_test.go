package distributed_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/array"
	"github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/dataframe/dftest"
	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/local"
)

// writeTutorialCSV writes the tutorial's data: files of timestamped
// temperature readings, whose times are shuffled across files so that
// SetIndex has to shuffle rows between workers.
func writeTutorialCSV(t *testing.T, dir string, files, rows int) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for f := range files {
		var b strings.Builder
		b.WriteString("timestamp,station,temperature\n")
		for range rows {
			ts := start.Add(time.Duration(rng.IntN(365*24)) * time.Hour)
			fmt.Fprintf(&b, "%s,s%d,%.2f\n", ts.Format("2006-01-02 15:04:05"), rng.IntN(7),
				float64(rng.IntN(4000))/100-5)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("part-%02d.csv", f)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "*.csv")
}

// tutorial runs the tutorial workload with exec: read a glob of CSV files
// with a parsed timestamp, set the index to the timestamp (a range
// shuffle), take the mean temperature, then resample the deviation from
// it by calendar month and take its min and max.
func tutorial(t *testing.T, exec graph.Executor, glob string) (float64, arrow.Table, arrow.Table) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	df, err := dataframe.ReadCSV(ctx, glob, dataframe.CSVOptions{ParseDates: map[string]string{"timestamp": ""},
		BlockSize: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	idx, err := df.SetIndex(ctx, exec, "timestamp")
	if err != nil {
		t.Fatalf("SetIndex: %v", err)
	}
	mean, err := idx.Column("temperature").Mean().Float64(ctx, exec)
	if err != nil {
		t.Fatalf("mean: %v", err)
	}
	monthly, err := idx.WithColumn("dev", dataframe.Col("temperature").Sub(mean)).
		Resample("ME").Agg(dataframe.Min("dev").As("min"), dataframe.Max("dev").As("max")).
		Compute(ctx, exec)
	if err != nil {
		t.Fatalf("monthly: %v", err)
	}
	sorted, err := idx.Select("timestamp", "station", "temperature").Compute(ctx, exec)
	if err != nil {
		t.Fatalf("sorted: %v", err)
	}
	return mean, monthly, sorted
}

// TestTutorialProcesses runs the tutorial workload on two worker processes
// and on the in-process executor: the answers must be the same, the rows
// in the same order.
func TestTutorialProcesses(t *testing.T) {
	_, c := processCluster(t, distributed.LocalClusterOptions{})
	glob := writeTutorialCSV(t, t.TempDir(), 4, 2000)
	exec := local.New()
	defer exec.Close()
	wantMean, wantMonthly, wantSorted := tutorial(t, exec, glob)
	gotMean, gotMonthly, gotSorted := tutorial(t, c, glob)
	if gotMean != wantMean {
		t.Errorf("mean %v, want %v", gotMean, wantMean)
	}
	if gotMonthly.NumRows() != 12 {
		t.Errorf("%d months, want 12", gotMonthly.NumRows())
	}
	dftest.AssertEqual(t, gotMonthly, wantMonthly)
	if gotSorted.NumRows() != 8000 {
		t.Errorf("%d rows, want 8000", gotSorted.NumRows())
	}
	dftest.AssertEqual(t, gotSorted, wantSorted)
}

// TestArrayProcesses computes blocked linear algebra, a rechunk and
// reductions on two worker processes and on the in-process executor.
func TestArrayProcesses(t *testing.T) {
	_, c := processCluster(t, distributed.LocalClusterOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	x := array.Normal(7, []int{120, 80}, 0, 1, array.Chunks(30, 20))
	y := array.MatMul(x, x.T()).Rechunk(array.Chunks(40, 60)).Add(1).Sum(array.Axis(1)).Abs().Sqrt()
	exec := local.New()
	defer exec.Close()
	want, err := y.Compute(ctx, exec)
	if err != nil {
		t.Fatal(err)
	}
	got, err := y.Compute(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	wv, err := array.Values[float64](want)
	if err != nil {
		t.Fatal(err)
	}
	gv, err := array.Values[float64](got)
	if err != nil {
		t.Fatal(err)
	}
	if len(gv) != 120 || len(gv) != len(wv) {
		t.Fatalf("%d values, want %d", len(gv), len(wv))
	}
	for i := range gv {
		if d := gv[i] - wv[i]; d > 1e-9 || d < -1e-9 || gv[i] != gv[i] {
			t.Fatalf("value %d: %v, want %v", i, gv[i], wv[i])
		}
	}
}

// TestShuffleWorkerKilledProcesses kills a worker process while the
// tutorial's shuffle runs: the answer must be the same as without the kill
// (the lost parts are computed again), or a clear error; never a hang.
func TestShuffleWorkerKilledProcesses(t *testing.T) {
	lc, c := processCluster(t, distributed.LocalClusterOptions{Nanny: true})
	glob := writeTutorialCSV(t, t.TempDir(), 4, 2000)
	exec := local.New()
	defer exec.Close()
	_, wantMonthly, wantSorted := tutorial(t, exec, glob)

	killed := make(chan struct{})
	var once sync.Once
	sub := lc.Scheduler().Events().Subscribe(func(evs []diagnostics.Event) {
		for _, e := range evs {
			// Once a split has written its shards: the worker dies with
			// split outputs and collects under way.
			if e.Kind == diagnostics.TaskTransition && e.To == "memory" &&
				strings.HasPrefix(string(e.Key), "shuffle-split") {
				once.Do(func() {
					lc.WorkerProcesses()[0].Signal(syscall.SIGKILL)
					close(killed)
				})
			}
		}
	})
	defer sub.Close()
	_, gotMonthly, gotSorted := tutorial(t, c, glob)
	select {
	case <-killed:
	default:
		t.Fatal("no shuffle task ran: nothing was killed")
	}
	dftest.AssertEqual(t, gotMonthly, wantMonthly, dftest.IgnoreRowOrder())
	dftest.AssertEqual(t, gotSorted, wantSorted)
}
