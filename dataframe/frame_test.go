package dataframe_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	shoalarray "github.com/shoal-data/shoal/array"
	df "github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/dataframe/dftest"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/local"
)

func newExec(t testing.TB) *local.Executor {
	e := local.New(local.WithThreads(2))
	t.Cleanup(func() { e.Close() })
	return e
}

// people is a small frame in three partitions.
func people(t testing.TB) df.DataFrame {
	tbl := dftest.Table(t,
		dftest.Strings("name", "ann", "bob", "cid", "dee", nil, "fay", "gus"),
		dftest.Strings("city", "oslo", "rome", "oslo", "lima", "rome", "oslo", nil),
		dftest.Int64s("age", 31, 45, nil, 22, 38, 51, 29),
		dftest.Float64s("score", 7.5, 6.0, 8.25, nil, 5.5, 9.0, 4.0),
	)
	return df.FromTable(tbl, 3)
}

func compute(t *testing.T, d df.DataFrame) arrow.Table {
	t.Helper()
	tbl, err := d.Compute(context.Background(), newExec(t))
	if err != nil {
		t.Fatalf("compute: %v\nplan:\n%s", err, d.Explain())
	}
	t.Cleanup(tbl.Release)
	return tbl
}

func TestOperations(t *testing.T) {
	p := people(t)
	tests := []struct {
		name string
		got  df.DataFrame
		want []dftest.Column
		opts []dftest.Option
	}{
		{"select", p.Select("age", "name"), []dftest.Column{
			dftest.Int64s("age", 31, 45, nil, 22, 38, 51, 29),
			dftest.Strings("name", "ann", "bob", "cid", "dee", nil, "fay", "gus"),
		}, nil},
		{"select expr", p.Select(df.Col("age").Add(1).Alias("next"), "name"), []dftest.Column{
			dftest.Int64s("next", 32, 46, nil, 23, 39, 52, 30),
			dftest.Strings("name", "ann", "bob", "cid", "dee", nil, "fay", "gus"),
		}, nil},
		{"filter", p.Filter(df.Col("age").Gt(30)).Select("name"), []dftest.Column{
			dftest.Strings("name", "ann", "bob", nil, "fay"),
		}, nil},
		{"filter null predicate drops", p.Filter(df.Col("score").Gt(5)).Select("name"), []dftest.Column{
			dftest.Strings("name", "ann", "bob", "cid", nil, "fay"),
		}, nil},
		{"with columns", p.WithColumns(df.Col("score").Mul(2).Alias("score"), df.Col("age").Ge(40).Alias("old")).Select("score", "old"),
			[]dftest.Column{
				dftest.Float64s("score", 15.0, 12.0, 16.5, nil, 11.0, 18.0, 8.0),
				dftest.Bools("old", false, true, nil, false, false, true, false),
			}, nil},
		{"rename and drop", p.Rename(map[string]string{"city": "town"}).Drop("name", "score", "age"), []dftest.Column{
			dftest.Strings("town", "oslo", "rome", "oslo", "lima", "rome", "oslo", nil),
		}, nil},
		{"astype", p.Astype(map[string]arrow.DataType{"age": arrow.PrimitiveTypes.Float64}).Select("age"), []dftest.Column{
			dftest.Float64s("age", 31.0, 45.0, nil, 22.0, 38.0, 51.0, 29.0),
		}, nil},
		{"fill null", p.FillNull(map[string]any{"age": 0, "name": "?"}).Select("name", "age"), []dftest.Column{
			dftest.Strings("name", "ann", "bob", "cid", "dee", "?", "fay", "gus"),
			dftest.Int64s("age", 31, 45, 0, 22, 38, 51, 29),
		}, nil},
		{"drop null", p.DropNull("age", "score").Select("name"), []dftest.Column{
			dftest.Strings("name", "ann", "bob", nil, "fay", "gus"),
		}, nil},
		{"drop null all columns", p.DropNull().Select("name"), []dftest.Column{
			dftest.Strings("name", "ann", "bob", "fay"),
		}, nil},
		{"head", p.Head(4).Select("name"), []dftest.Column{
			dftest.Strings("name", "ann", "bob", "cid", "dee"),
		}, nil},
		{"head beyond", p.Head(100).Select("age"), []dftest.Column{
			dftest.Int64s("age", 31, 45, nil, 22, 38, 51, 29),
		}, nil},
		{"when", p.Select(df.When(df.Col("age").Lt(30)).Then("young").Otherwise("older").Alias("band")), []dftest.Column{
			// A null condition is not true: the row takes the Otherwise value.
			dftest.Strings("band", "older", "older", "older", "young", "older", "older", "young"),
		}, nil},
		{"strings", p.Filter(df.Col("city").Str().StartsWith("o")).Select(df.Col("name").Str().Upper()), []dftest.Column{
			dftest.Strings("name", "ANN", "CID", "FAY"),
		}, nil},
		{"concat", df.Concat(p.Select("name").Head(2), p.Select("name", "age").Filter(df.Col("age").Gt(50))), []dftest.Column{
			dftest.Strings("name", "ann", "bob", "fay"),
			dftest.Int64s("age", nil, nil, 51),
		}, nil},
		{"coalesce", p.Coalesce(2).Select("age"), []dftest.Column{
			dftest.Int64s("age", 31, 45, nil, 22, 38, 51, 29),
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.got.Err(); err != nil {
				t.Fatal(err)
			}
			want := dftest.Table(t, tc.want...)
			dftest.AssertEqual(t, compute(t, tc.got), want, tc.opts...)
			if !tc.got.Schema().Equal(want.Schema()) && len(tc.opts) == 0 {
				// Nullability may differ; names and types must not.
				for i, f := range tc.got.Schema().Fields() {
					w := want.Schema().Field(i)
					if f.Name != w.Name || !arrow.TypeEqual(f.Type, w.Type) {
						t.Errorf("schema %s, want %s", tc.got.Schema(), want.Schema())
					}
				}
			}
		})
	}
}

func TestBuildErrors(t *testing.T) {
	p := people(t)
	tests := []struct {
		name string
		d    df.DataFrame
		want []string
	}{
		{"unknown column", p.Select("agee"), []string{`"agee"`, `did you mean "age"`}},
		{"unknown in filter", p.Filter(df.Col("ciy").Eq("oslo")), []string{`"ciy"`}},
		{"string plus float", p.Select(df.Col("name").Add(df.Col("score"))), []string{"name", "score", "utf8", "float64"}},
		{"non-boolean filter", p.Filter(df.Col("age")), []string{"not boolean"}},
		{"duplicate output", p.Select("age", df.Col("score").Alias("age")), []string{`"age"`, "Alias"}},
		{"rename unknown", p.Rename(map[string]string{"nope": "x"}), []string{`"nope"`}},
		{"drop unknown", p.Drop("nope"), []string{`"nope"`}},
		{"group by unknown", p.GroupBy("town").Sum("age"), []string{`"town"`}},
		{"sum of strings", p.Agg(df.Sum("name")), []string{"name", "utf8"}},
		{"concat type clash", df.Concat(p.Select("age"), p.Select(df.Col("score").Alias("age"))), []string{"age", "int64", "float64"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.d.Err()
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %s", err, w)
				}
			}
			// Compute returns the same error, and later operations keep it.
			if _, cerr := tc.d.Select(tc.d.Columns()).Compute(context.Background(), newExec(t)); cerr == nil {
				t.Errorf("Compute did not fail")
			}
		})
	}
	var ce *df.ColumnError
	if !errors.As(p.Select("agee").Err(), &ce) || ce.Name != "agee" {
		t.Errorf("not a ColumnError: %v", p.Select("agee").Err())
	}
}

func TestReductions(t *testing.T) {
	p := people(t)
	got := compute(t, p.Agg(df.Sum("age"), df.Mean("score").As("avg"), df.Min("name"), df.Max("age").As("oldest"),
		df.Count("age").As("n_age"), df.Size(), df.NUnique("city").As("cities"), df.First("name").As("first"),
		df.Last("city").As("last")))
	want := dftest.Table(t,
		dftest.Int64s("age", 216),
		dftest.Float64s("avg", 40.25/6),
		dftest.Strings("name", "ann"),
		dftest.Int64s("oldest", 51),
		dftest.Int64s("n_age", 6),
		dftest.Int64s("size", 7),
		dftest.Int64s("cities", 3),
		dftest.Strings("first", "ann"),
		dftest.Strings("last", "oslo"),
	)
	dftest.AssertEqual(t, got, want)

	ctx := context.Background()
	e := newExec(t)
	n, err := p.Len().Int64(ctx, e)
	if err != nil || n != 7 {
		t.Errorf("Len %d %v", n, err)
	}
	std, err := p.Column("age").Std().Float64(ctx, e)
	if err != nil || !close(std, 10.770329614269007) {
		t.Errorf("std %v %v", std, err)
	}
	if _, err := p.Filter(df.Col("age").Gt(100)).Column("age").Mean().Float64(ctx, e); !errors.Is(err, df.ErrNull) {
		t.Errorf("mean of nothing: %v", err)
	}
}

func close(a, b float64) bool {
	d := a - b
	return d < 1e-9 && d > -1e-9
}

func TestGroupBy(t *testing.T) {
	p := people(t)
	want := dftest.Table(t,
		dftest.Strings("city", "lima", "oslo", "rome"),
		dftest.Int64s("age", 22, 82, 83),
		dftest.Float64s("score", nil, 24.75/3, 5.75),
		dftest.Int64s("size", 1, 3, 2),
	)
	for _, split := range []int{0, 2} {
		g := p.GroupBy("city")
		opts := []dftest.Option{}
		if split > 0 {
			g = g.SplitOut(split)
			opts = append(opts, dftest.IgnoreRowOrder())
		}
		got := compute(t, g.Agg(df.Sum("age"), df.Mean("score"), df.Size()))
		dftest.AssertEqual(t, got, want, opts...)
	}
	// Null keys form their own group when asked.
	got := compute(t, p.GroupBy("city").KeepNullKeys().Size())
	dftest.AssertEqual(t, got, dftest.Table(t,
		dftest.Strings("city", "lima", "oslo", "rome", nil),
		dftest.Int64s("size", 1, 3, 2, 1),
	), dftest.IgnoreRowOrder())
}

func TestExplainPushesDown(t *testing.T) {
	p := people(t)
	q := p.WithColumn("double", df.Col("score").Mul(2)).
		Filter(df.Col("city").Eq("oslo")).
		GroupBy("city").Agg(df.Sum("double"))
	plan := q.Explain()
	for _, want := range []string{"GroupBy city", `filter=col("city") == "oslo"`, "columns=[city, score]"} {
		if !strings.Contains(plan, want) {
			t.Errorf("plan lacks %q:\n%s", want, plan)
		}
	}
	got := compute(t, q)
	dftest.AssertEqual(t, got, dftest.Table(t, dftest.Strings("city", "oslo"), dftest.Float64s("double", 49.5)))
}

func TestSharedSubplanComputedOnce(t *testing.T) {
	p := people(t)
	scaled := p.WithColumn("s", df.Col("score").Mul(10))
	both := df.Concat(scaled.Filter(df.Col("s").Gt(60)).Select("s"), scaled.Filter(df.Col("s").Le(60)).Select("s"))
	g, keys, err := both.Graph()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 6 {
		t.Errorf("%d partitions, want 6", len(keys))
	}
	// The shared step is computed once per partition (3 tasks) and both
	// branches filter its partitions (3 tasks each).
	if g.Len() != 9 {
		t.Errorf("%d tasks, want 9:\n%s", g.Len(), both.Explain())
	}
	got := compute(t, both)
	if got.NumRows() != 6 {
		t.Errorf("%d rows, want 6", got.NumRows())
	}
}

type person struct {
	Name  *string `df:"name"`
	Age   *int64  `df:"age"`
	Score float64 `df:"score"`
}

func TestStructs(t *testing.T) {
	p := people(t)
	got := compute(t, p.Select("name", "age", "score").Head(3))
	rows, err := df.ToStructs[person](got)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || *rows[0].Name != "ann" || rows[2].Age != nil || rows[2].Score != 8.25 {
		t.Errorf("rows %+v", rows)
	}
	back := compute(t, df.FromStructs(rows))
	dftest.AssertEqual(t, back, dftest.Table(t,
		dftest.Strings("name", "ann", "bob", "cid"),
		dftest.Int64s("age", 31, 45, nil),
		dftest.Float64s("score", 7.5, 6.0, 8.25),
	))
	type event struct {
		At   time.Time
		Kind string
	}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ev := compute(t, df.FromStructs([]event{{at, "a"}}))
	evs, err := df.ToStructs[event](ev)
	if err != nil || !evs[0].At.Equal(at) || evs[0].Kind != "a" {
		t.Errorf("%+v %v", evs, err)
	}
}

// double doubles the first column, an int64 one.
var double = graph.MustRegisterFunc("dataframe_test.double", func(_ context.Context, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	ages := rec.Column(0).(*array.Int64)
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	for i := range ages.Len() {
		if ages.IsNull(i) {
			b.AppendNull()
		} else {
			b.Append(2 * ages.Value(i))
		}
	}
	col := b.NewArray()
	defer col.Release()
	return array.NewRecordBatch(rec.Schema(), []arrow.Array{col}, rec.NumRows()), nil
})

func TestMapPartitions(t *testing.T) {
	p := people(t).Select("age")
	got := compute(t, p.MapPartitions(double.Name(), nil))
	dftest.AssertEqual(t, got, dftest.Table(t, dftest.Int64s("age", 62, 90, nil, 44, 76, 102, 58)))
	if err := p.MapPartitions("no.such.func", nil).Err(); err == nil || !strings.Contains(err.Error(), "no.such.func") {
		t.Errorf("unknown function: %v", err)
	}
}

func TestPersist(t *testing.T) {
	ctx := context.Background()
	e := newExec(t)
	p, err := people(t).Filter(df.Col("age").Gt(30)).Persist(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	n, err := p.Len().Int64(ctx, e)
	if err != nil || n != 4 {
		t.Errorf("len %d %v", n, err)
	}
	s, err := p.Column("age").Sum().Int64(ctx, e)
	if err != nil || s != 165 {
		t.Errorf("sum %d %v", s, err)
	}
	// A filter on the held partitions applies.
	old, err := p.Filter(df.Col("age").Ge(45)).Select("name").Compute(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	dftest.AssertEqual(t, old, dftest.Table(t, dftest.Strings("name", "bob", "fay")))
}

func TestGraphCrossesProcessBoundary(t *testing.T) {
	p := people(t).Filter(df.Col("age").Gt(25)).GroupBy("city").Agg(df.Mean("score"))
	g, keys, err := p.Graph()
	if err != nil {
		t.Fatal(err)
	}
	b, err := graph.Encode(g)
	if err != nil {
		t.Fatal(err)
	}
	g2, err := graph.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := newExec(t).Compute(context.Background(), g2, keys...)
	if err != nil {
		t.Fatal(err)
	}
	rec := vals[0].(arrow.RecordBatch)
	want := compute(t, p)
	got := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
	defer got.Release()
	dftest.AssertEqual(t, got, want)
}

func TestDescribe(t *testing.T) {
	got := compute(t, people(t).Describe())
	dftest.AssertEqual(t, got, dftest.Table(t,
		dftest.Strings("statistic", "count", "null_count", "mean", "std", "min", "max"),
		dftest.Float64s("age", 6.0, 1.0, 36.0, 10.770329614269007, 22.0, 51.0),
		dftest.Float64s("score", 6.0, 1.0, 40.25/6, 1.8736105963264265, 4.0, 9.0),
	), dftest.Tolerance(1e-12, 0))
}

// TestConcurrentComputes computes one in-memory frame from several
// goroutines at once on one executor.
func TestConcurrentComputes(t *testing.T) {
	e := newExec(t)
	d, _ := randomFrame(t, 4, 3000, 4)
	q := d.GroupBy("name").Agg(df.Sum("v"), df.Size().As("n"))
	want := compute(t, q)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			got, err := q.Compute(context.Background(), e)
			if err != nil {
				errs[i] = err
				return
			}
			defer got.Release()
			if got.NumRows() != want.NumRows() {
				errs[i] = fmt.Errorf("%d rows, want %d", got.NumRows(), want.NumRows())
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// TestFromGraph builds a frame lazily on an array's chunks and checks it
// against the values.
func TestFromGraph(t *testing.T) {
	data := make([]float64, 0, 40)
	for i := range 20 {
		data = append(data, float64(i), float64(i*i))
	}
	arr := shoalarray.FromSlice(data, []int{20, 2}, shoalarray.Chunks(6, 2))
	g, keys, schema, err := arr.FrameParts([]string{"x", "y"})
	if err != nil {
		t.Fatal(err)
	}
	frame := df.FromGraph(g, keys, schema)
	if frame.NPartitions() != 4 {
		t.Errorf("%d partitions, want 4 (one per chunk of rows)", frame.NPartitions())
	}
	got := compute(t, frame.Filter(df.Col("x").Ge(10)).Agg(df.Sum("y"), df.Count("x")))
	var sum float64
	for i := 10; i < 20; i++ {
		sum += float64(i * i)
	}
	dftest.AssertEqual(t, got, dftest.Table(t, dftest.Float64s("y", sum), dftest.Int64s("x", 10)))
	if err := df.FromGraph(g, []graph.Key{"nope"}, schema).Err(); err == nil {
		t.Error("a key not in the graph: no error")
	}
}
