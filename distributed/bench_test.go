package distributed_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/distributed/security"
	"github.com/shoal-data/shoal/distributed/server"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/local"
)

func benchCluster(b *testing.B, inProcess bool) (*distributed.LocalCluster, *distributed.Client) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sat, _ := strconv.ParseFloat(os.Getenv("SHOAL_BENCH_SATURATION"), 64)
	var sec *security.Config // the default: mutual TLS
	if os.Getenv("SHOAL_BENCH_INSECURE") != "" {
		sec = &security.Config{Insecure: true}
	}
	lc, err := distributed.NewLocalCluster(ctx, distributed.LocalClusterOptions{Workers: 2, ThreadsPerWorker: 1,
		InProcess: inProcess, Scheduler: server.Config{Saturation: sat}, Security: sec,
		LocalDir: b.TempDir(), NoArchive: os.Getenv("SHOAL_BENCH_NOARCHIVE") != ""})
	if err != nil {
		b.Fatal(err)
	}
	c, err := lc.Client(ctx)
	if err != nil {
		lc.Close()
		b.Fatal(err)
	}
	b.Cleanup(func() {
		c.Close()
		lc.Close()
	})
	return lc, c
}

// BenchmarkMapGather submits 10,000 no-op tasks with Map on a cluster of
// two worker processes and gathers their results.
func BenchmarkMapGather(b *testing.B) {
	_, c := benchCluster(b, os.Getenv("SHOAL_BENCH_INPROCESS") != "")
	ctx := context.Background()
	const n = 10_000
	inputs := make([]any, n)
	b.ResetTimer()
	for it := range b.N {
		for i := range inputs {
			inputs[i] = it*n + i
		}
		fs, err := c.Map(ctx, noop.Name(), inputs)
		if err != nil {
			b.Fatal(err)
		}
		vals, err := c.Gather(ctx, fs...)
		if err != nil {
			b.Fatal(err)
		}
		if len(vals) != n || vals[n-1].(int) != it*n+n-1 {
			b.Fatalf("bad values")
		}
		for _, f := range fs {
			f.Release()
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "tasks/s")
}

// BenchmarkGraph100k computes a graph of 100,000 tasks (a tree reduction
// of no-op tasks) on two worker processes and gathers the one result.
func BenchmarkGraph100k(b *testing.B) {
	_, c := benchCluster(b, false)
	ctx := context.Background()
	const n = 100_000
	b.ResetTimer()
	for it := range b.N {
		level := make([]graph.Delayed, 0, n/2)
		for i := range n / 2 {
			level = append(level, noop.Call(it*n+i))
		}
		tasks := len(level)
		for len(level) > 1 {
			var next []graph.Delayed
			for i := 0; i < len(level); i += 2 {
				j := min(i+2, len(level))
				items := make([]any, 0, 2)
				for _, d := range level[i:j] {
					items = append(items, d)
				}
				next = append(next, sum.Call(graph.List(items...)))
			}
			tasks += len(next)
			level = next
		}
		if _, err := graph.Compute[int](ctx, c, level[0]); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(tasks), "tasks")
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "tasks/s")
}

// BenchmarkRoundTrip submits one small task and waits for its result.
func BenchmarkRoundTrip(b *testing.B) {
	_, c := benchCluster(b, false)
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		f, err := c.SubmitCall(ctx, noop.Name(), []any{i})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.Result(ctx); err != nil {
			b.Fatal(err)
		}
		f.Release()
	}
}

// makeTable makes an Arrow table of about mib MiB of int64 columns.
var makeTable = graph.MustRegisterFunc("distributed_test.make_table", func(_ context.Context, mib int) (arrow.Table, error) {
	const cols = 4
	rows := mib << 20 / (8 * cols)
	schema := arrow.NewSchema(nil, nil)
	var fields []arrow.Field
	var arrs []arrow.Array
	for c := range cols {
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("c%d", c), Type: arrow.PrimitiveTypes.Int64})
		vals := make([]int64, rows)
		for i := range vals {
			vals[i] = int64(i * (c + 1))
		}
		arrs = append(arrs, array.NewInt64Data(array.NewData(arrow.PrimitiveTypes.Int64, rows,
			[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(vals))}, nil, 0, 0)))
	}
	schema = arrow.NewSchema(fields, nil)
	rec := array.NewRecordBatch(schema, arrs, int64(rows))
	// Chunks of 64 MiB, as a table read from files would have.
	step := int64(64 << 20 / (8 * cols))
	var recs []arrow.RecordBatch
	for off := int64(0); off < int64(rows); off += step {
		recs = append(recs, rec.NewSlice(off, min(off+step, int64(rows))))
	}
	return array.NewTableFromRecords(schema, recs), nil
})

// countRows returns the rows of a table.
var countRows = graph.MustRegisterFunc("distributed_test.count_rows", func(_ context.Context, t arrow.Table) (int64, error) {
	return t.NumRows(), nil
})

// BenchmarkTransfer1GB moves a 1 GiB Arrow table from one worker process to
// the other: the table is made on the first, then a task restricted to the
// second needs it, so the second fetches it over Flight.
func BenchmarkTransfer1GB(b *testing.B) {
	_, c := benchCluster(b, os.Getenv("SHOAL_BENCH_INPROCESS") != "")
	ctx := context.Background()
	info, err := c.Info(ctx)
	if err != nil {
		b.Fatal(err)
	}
	from, to := info.Workers[0].Address, info.Workers[1].Address
	const mib = 1024
	b.SetBytes(mib << 20)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		tf, err := c.SubmitCall(ctx, makeTable.Name(), []any{mib + i*0}, distributed.Workers(from))
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Wait(ctx, tf); err != nil || tf.Err() != nil {
			b.Fatal(err, tf.Err())
		}
		b.StartTimer()
		nf, err := c.SubmitCall(ctx, countRows.Name(), []any{tf}, distributed.Workers(to))
		if err != nil {
			b.Fatal(err)
		}
		n, err := nf.Result(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if n.(int64) != mib<<20/32 {
			b.Fatalf("%v rows", n)
		}
		b.StopTimer()
		nf.Release()
		tf.Release()
		b.StartTimer()
	}
}

// The same workloads on the in-process executor, for the ratios in the
// same run.

func BenchmarkMapGatherLocal(b *testing.B) {
	exec := local.New(local.WithThreads(2))
	defer exec.Close()
	ctx := context.Background()
	const n = 10_000
	b.ResetTimer()
	for it := range b.N {
		ds := make([]graph.Delayed, n)
		for i := range ds {
			ds[i] = noop.Call(it*n + i)
		}
		g, keys, err := graph.Collect(ds...)
		if err != nil {
			b.Fatal(err)
		}
		vals, err := exec.Compute(ctx, g, keys...)
		if err != nil || len(vals) != n || vals[n-1].(int) != it*n+n-1 {
			b.Fatalf("bad values: %v", err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "tasks/s")
}

func BenchmarkGraph100kLocal(b *testing.B) {
	exec := local.New(local.WithThreads(2))
	defer exec.Close()
	ctx := context.Background()
	const n = 100_000
	b.ResetTimer()
	for it := range b.N {
		level := make([]graph.Delayed, 0, n/2)
		for i := range n / 2 {
			level = append(level, noop.Call(it*n+i))
		}
		for len(level) > 1 {
			var next []graph.Delayed
			for i := 0; i < len(level); i += 2 {
				j := min(i+2, len(level))
				items := make([]any, 0, 2)
				for _, d := range level[i:j] {
					items = append(items, d)
				}
				next = append(next, sum.Call(graph.List(items...)))
			}
			level = next
		}
		if _, err := graph.Compute[int](ctx, exec, level[0]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "tasks/s")
}

func BenchmarkRoundTripLocal(b *testing.B) {
	exec := local.New(local.WithThreads(2))
	defer exec.Close()
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		if _, err := graph.Compute[int](ctx, exec, noop.Call(i)); err != nil {
			b.Fatal(err)
		}
	}
}
