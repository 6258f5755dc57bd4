package distributed_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/dataframe/dftest"
	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/local"
)

// slowDouble doubles after a pause, so that a computation is still running
// when a test kills a worker.
var slowDouble = graph.MustRegisterFunc("distributed_test.slow_double", func(ctx context.Context, x int) (int, error) {
	select {
	case <-time.After(20 * time.Millisecond):
		return 2 * x, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
})

// processCluster starts a scheduler and two worker processes and checks,
// when the test ends, that no worker process is left.
func processCluster(t *testing.T, opts distributed.LocalClusterOptions) (*distributed.LocalCluster, *distributed.Client) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts processes")
	}
	if opts.Workers == 0 {
		opts.Workers = 2
	}
	if opts.ThreadsPerWorker == 0 {
		opts.ThreadsPerWorker = 2
	}
	var procs []*os.Process
	t.Cleanup(func() { // runs after the cluster's own cleanup closed it
		for _, p := range procs {
			if err := p.Signal(syscall.Signal(0)); !errors.Is(err, os.ErrProcessDone) {
				t.Errorf("worker process %d still there after Close (%v)", p.Pid, err)
			}
		}
	})
	lc, c := newCluster(t, opts)
	procs = lc.WorkerProcesses()
	if len(procs) != opts.Workers {
		t.Fatalf("%d worker processes, want %d", len(procs), opts.Workers)
	}
	return lc, c
}

func writeParquet(t *testing.T, dir string) []string {
	t.Helper()
	const rows = 20_000
	keys := array.NewStringBuilder(memory.DefaultAllocator)
	vals := array.NewFloat64Builder(memory.DefaultAllocator)
	ns := array.NewInt64Builder(memory.DefaultAllocator)
	for i := range rows {
		keys.Append([]string{"oslo", "rome", "lima", "nuuk", "pune"}[i*7%5])
		vals.Append(float64(i%97) / 4)
		ns.Append(int64(i % 13))
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "city", Type: arrow.BinaryTypes.String},
		{Name: "temp", Type: arrow.PrimitiveTypes.Float64}, {Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{keys.NewArray(), vals.NewArray(), ns.NewArray()}, rows)
	tbl := array.NewTableFromRecords(schema, []arrow.RecordBatch{rec})
	exec := local.New()
	defer exec.Close()
	paths, err := dataframe.FromTable(tbl, 8).WriteParquet(context.Background(), exec, dir)
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

func TestGroupByParquetProcesses(t *testing.T) {
	_, c := processCluster(t, distributed.LocalClusterOptions{})
	ctx := context.Background()
	paths := writeParquet(t, t.TempDir())
	df, err := dataframe.ReadParquetFiles(ctx, paths)
	if err != nil {
		t.Fatal(err)
	}
	q := df.Filter(dataframe.Col("n").Gt(dataframe.Lit(2))).GroupBy("city").
		Agg(dataframe.Sum("temp"), dataframe.Mean("temp").As("mean"), dataframe.Size().As("rows"))
	exec := local.New()
	defer exec.Close()
	want, err := q.Compute(ctx, exec)
	if err != nil {
		t.Fatal(err)
	}
	got, err := q.Compute(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if got.NumRows() != 5 {
		t.Fatalf("%d groups, want 5", got.NumRows())
	}
	dftest.AssertEqual(t, got, want, dftest.IgnoreRowOrder())
}

func TestWorkerKilledProcesses(t *testing.T) {
	lc, c := processCluster(t, distributed.LocalClusterOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const n = 120
	var groups []any
	want := 0
	for g := range n / 10 {
		var parts []any
		for i := range 10 {
			parts = append(parts, slowDouble.Call(g*10+i))
			want += 2 * (g*10 + i)
		}
		groups = append(groups, sum.Call(graph.List(parts...)))
	}
	total := sum.Call(graph.List(groups...))
	done := make(chan error, 1)
	var got int
	go func() {
		var err error
		got, err = graph.Compute[int](ctx, c, total)
		done <- err
	}()
	// Kill a worker once results are held on both, mid-computation.
	eventually(t, "both workers hold results", func() bool {
		info, err := c.Info(ctx)
		if err != nil || len(info.Workers) != 2 {
			return false
		}
		return info.Tasks["memory"] >= 10 && info.Workers[0].Threads > 0
	})
	victim := lc.WorkerProcesses()[0]
	if err := victim.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("compute after a worker was killed: %v", err)
	}
	if got != want {
		t.Fatalf("got %d, want %d", got, want)
	}
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Workers) != 1 {
		t.Errorf("%d workers after the kill, want 1", len(info.Workers))
	}
}

func TestRegistryMismatchProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	lc, err := distributed.NewLocalCluster(ctx, distributed.LocalClusterOptions{Workers: 2, ThreadsPerWorker: 1,
		Env: []string{extraOpEnv + "=1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close()
	_, err = lc.Client(ctx)
	var re *distributed.RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("connect: %v, want a refusal", err)
	}
	if len(re.Differences) != 1 || !strings.Contains(re.Differences[0], "distributed_test.extra") {
		t.Fatalf("refusal lists %q, want the extra op", re.Differences)
	}
}
