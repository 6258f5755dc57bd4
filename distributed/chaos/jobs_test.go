//go:build chaos

package chaos_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/dataframe/dftest"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/local"
)

// job is one of the computations of the loops: run computes it with
// exec and says how its result differs from the answer ("" when it is
// exact).
type job struct {
	name string
	run  func(ctx context.Context, exec graph.Executor, d *dataset) (diff string, err error)
	// deadline bounds the job (default jobDeadline).
	deadline time.Duration
}

// frameJob is a shuffle-heavy dataframe computation.
type frameJob struct {
	name    string
	compute func(ctx context.Context, exec graph.Executor, d *dataset) (arrow.Table, error)
	// unordered: the rows may come in any order.
	unordered bool
}

var frameJobs = []frameJob{
	{"sort", func(ctx context.Context, exec graph.Executor, d *dataset) (arrow.Table, error) {
		return d.frame().SortValues("id").Compute(ctx, exec)
	}, false},
	{"hash join", func(ctx context.Context, exec graph.Executor, d *dataset) (arrow.Table, error) {
		right := dataframe.FromTable(d.right, 2)
		return d.frame().Merge(right, dataframe.MergeOptions{On: []string{"k"}, BroadcastBytes: -1}).Compute(ctx, exec)
	}, true},
	{"group median", func(ctx context.Context, exec graph.Executor, d *dataset) (arrow.Table, error) {
		return d.frame().GroupBy("k").Median("v").Compute(ctx, exec)
	}, false},
	{"set-index resample", func(ctx context.Context, exec graph.Executor, d *dataset) (arrow.Table, error) {
		ix, err := d.frame().SetIndex(ctx, exec, "ts")
		if err != nil {
			return nil, err
		}
		return ix.Resample("1D").Agg(dataframe.Min("v").As("min"), dataframe.Max("v").As("max"),
			dataframe.Sum("v").As("sum"), dataframe.Count("v").As("count")).Compute(ctx, exec)
	}, false},
}

// jobs are the loops' jobs: the dataframe ones, each compared exactly,
// floats included, with the local executor's answer.
var jobs = func() []job {
	var out []job
	for _, fj := range frameJobs {
		out = append(out, job{name: fj.name, run: func(ctx context.Context, exec graph.Executor, d *dataset) (string, error) {
			got, err := fj.compute(ctx, exec, d)
			if err != nil {
				return "", err
			}
			defer got.Release()
			opts := []dftest.Option{dftest.Tolerance(0, 0)}
			if fj.unordered {
				opts = append(opts, dftest.IgnoreRowOrder())
			}
			return dftest.Diff(got, d.want[fj.name], opts...), nil
		}})
	}
	return out
}()

// dataset is the input of the jobs, and their answers as the local
// executor computes them.
type dataset struct {
	rows, parts int
	table       arrow.Table // id (unique), k (200 groups), v (whole numbers), ts
	right       arrow.Table // k, w: one row per group
	want        map[string]arrow.Table
}

func (d *dataset) frame() dataframe.DataFrame { return dataframe.FromTable(d.table, d.parts) }

func (d *dataset) String() string {
	if d == nil {
		return "no data"
	}
	return fmt.Sprintf("%d rows", d.rows)
}

var (
	datasetsMu sync.Mutex
	datasets   = map[int]*dataset{}
)

// data returns the dataset of rows rows in parts partitions, made (and
// its answers computed) once per test binary.
func data(t *testing.T, rows, parts int) *dataset {
	t.Helper()
	datasetsMu.Lock()
	defer datasetsMu.Unlock()
	if d := datasets[rows]; d != nil {
		return d
	}
	d := &dataset{rows: rows, parts: parts, want: map[string]arrow.Table{}}
	rng := rand.New(rand.NewSource(int64(rows)))
	mem := memory.NewGoAllocator()
	ids, ks, vs := array.NewInt64Builder(mem), array.NewInt64Builder(mem), array.NewFloat64Builder(mem)
	tsType := &arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"}
	ts := array.NewTimestampBuilder(mem, tsType)
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	for _, id := range rng.Perm(rows) {
		ids.Append(int64(id))
		ks.Append(rng.Int63n(200))
		vs.Append(float64(rng.Intn(10_000)))
		ts.Append(arrow.Timestamp(start + rng.Int63n(90*86400)))
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "k", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.PrimitiveTypes.Float64},
		{Name: "ts", Type: tsType}}, nil)
	d.table = tableOf(schema, ids, ks, vs, ts)
	rk, rw := array.NewInt64Builder(mem), array.NewFloat64Builder(mem)
	for k := range 200 {
		rk.Append(int64(k))
		rw.Append(float64(k * k))
	}
	d.right = tableOf(arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "w", Type: arrow.PrimitiveTypes.Float64}}, nil), rk, rw)
	dir, err := os.MkdirTemp("", "chaos-want-*")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ex := local.New(local.WithLocalDir(dir))
	defer ex.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, j := range frameJobs {
		want, err := j.compute(ctx, ex, d)
		if err != nil {
			t.Fatalf("%s of %v on the local executor: %v", j.name, d, err)
		}
		d.want[j.name] = want
	}
	datasets[rows] = d
	return d
}

func tableOf(schema *arrow.Schema, bs ...array.Builder) arrow.Table {
	cols := make([]arrow.Array, len(bs))
	for i, b := range bs {
		cols[i] = b.NewArray()
		b.Release()
	}
	rec := array.NewRecordBatch(schema, cols, int64(cols[0].Len()))
	for _, c := range cols {
		c.Release()
	}
	defer rec.Release()
	return array.NewTableFromRecords(schema, []arrow.RecordBatch{rec})
}
