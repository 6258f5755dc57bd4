package array

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	arrowarray "github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/graph"
)

// fakeFrame is a Frame whose partitions are records made by a registered
// function, one task per partition.
type fakeFrame struct {
	parts  [][]float64 // column "x"; "n" is the row number
	schema *arrow.Schema
}

var makeRecord = graph.MustRegisterFunc("arraytest.record", func(_ context.Context, xs []float64) (arrow.RecordBatch, error) {
	mem := memory.DefaultAllocator
	xb := arrowarray.NewFloat64Builder(mem)
	defer xb.Release()
	nb := arrowarray.NewInt32Builder(mem)
	defer nb.Release()
	for i, x := range xs {
		if math.IsNaN(x) {
			xb.AppendNull()
		} else {
			xb.Append(x)
		}
		nb.Append(int32(i))
	}
	x, n := xb.NewArray(), nb.NewArray()
	defer x.Release()
	defer n.Release()
	return arrowarray.NewRecordBatch(fakeSchema, []arrow.Array{x, n}, int64(len(xs))), nil
})

var fakeSchema = arrow.NewSchema([]arrow.Field{
	{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "n", Type: arrow.PrimitiveTypes.Int32},
}, nil)

func (f fakeFrame) Schema() *arrow.Schema { return f.schema }

func (f fakeFrame) Graph() (*graph.Graph, []graph.Key, error) {
	g := graph.New()
	var keys []graph.Key
	for _, p := range f.parts {
		d := makeRecord.Call(p)
		pg, err := d.Graph()
		if err != nil {
			return nil, nil, err
		}
		if err := g.Merge(pg); err != nil {
			return nil, nil, err
		}
		keys = append(keys, d.Key())
	}
	return g, keys, nil
}

func TestFromFrame(t *testing.T) {
	f := fakeFrame{parts: [][]float64{{1, 2}, {}, {3, math.NaN(), 5}}, schema: fakeSchema}
	x := FromFrame(f, "x")
	if x.NDim() != 1 || x.Shape()[0] != -1 || len(x.Chunks()[0]) != 3 || x.DType() != Float64 {
		t.Fatalf("x: %v", x)
	}
	assertClose(t, compute(t, x), []int{5}, []float64{1, 2, 3, math.NaN(), 5}, 0)
	if v, _ := compute(t, x.NanMean()).At(); v != 11.0/4 {
		t.Fatalf("nanmean %v", v)
	}
	both := FromFrame(f)
	if both.NDim() != 2 || both.DType() != Float64 {
		t.Fatalf("both: %v", both)
	}
	assertClose(t, compute(t, both), []int{5, 2}, []float64{1, 0, 2, 1, 3, 0, math.NaN(), 1, 5, 2}, 0)
	n := FromFrame(f, "n")
	if n.DType() != Int64 {
		t.Fatalf("n dtype %v", n.DType())
	}
	known, err := n.ComputeChunkSizes(ctxB, newExec(t))
	if err != nil {
		t.Fatal(err)
	}
	if c := known.Chunks()[0]; len(c) != 3 || c[0] != 2 || c[1] != 0 || c[2] != 3 {
		t.Fatalf("chunks %v", c)
	}
	mustErr(t, FromFrame(f, "y").Err(), "column \"y\" not found", "\"x\"")
	strs := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	mustErr(t, FromFrame(fakeFrame{schema: strs}, "s").Err(), "column \"s\"", "utf8", "not a number")
	bad := errFrame{}
	mustErr(t, FromFrame(bad, "x").Err(), "no graph")
}

type errFrame struct{}

func (errFrame) Schema() *arrow.Schema { return fakeSchema }
func (errFrame) Graph() (*graph.Graph, []graph.Key, error) {
	return nil, nil, errors.New("no graph")
}

// The real DataFrame is a Frame, and FrameParts goes back.
func TestDataFrameBridge(t *testing.T) {
	df := dataframe.Concat(
		dataframe.FromColumns("a", []float64{1, 2, 3}, "b", []int64{10, 20, 30}, "ok", []bool{true, false, true}),
		dataframe.FromColumns("a", []float64{4}, "b", []int64{40}, "ok", []bool{false}),
	)
	x := FromFrame(df, "a", "b")
	assertClose(t, compute(t, x), []int{4, 2}, []float64{1, 10, 2, 20, 3, 30, 4, 40}, 0)
	ok := FromFrame(df, "ok")
	if ok.DType() != Bool {
		t.Fatalf("ok dtype %v", ok.DType())
	}
	if v, _ := compute(t, x.Mask(ok).Sum()).At(); v != 44 {
		t.Fatalf("sum of masked rows %v", v)
	}
	withNull := dataframe.FromColumns("v", []*int64{ptr[int64](1), nil})
	mustErr(t, computeErr(t, FromFrame(withNull, "v")), "column \"v\" is null at row 1", "int64")

	// Back: one record per chunk of rows.
	g, keys, schema, err := Arange(0, 8, 1, Chunks(3)).Reshape(4, 2).Rechunk(Chunks(3, 1)).FrameParts([]string{"p", "q"})
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || schema.NumFields() != 2 || schema.Field(1).Name != "q" {
		t.Fatalf("keys %v schema %v", keys, schema)
	}
	b, err := graph.Encode(g)
	if err != nil {
		t.Fatal(err)
	}
	g2, err := graph.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := newExec(t).Compute(ctxB, g2, keys...)
	if err != nil {
		t.Fatal(err)
	}
	recs := make([]arrow.RecordBatch, len(vals))
	for i, v := range vals {
		recs[i] = v.(arrow.RecordBatch)
	}
	back := dataframe.FromRecords(recs...)
	tbl, err := back.Compute(ctxB, newExec(t))
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	if tbl.NumRows() != 4 {
		t.Fatalf("%d rows", tbl.NumRows())
	}
	q := tbl.Column(1).Data().Chunk(0).(*arrowarray.Float64)
	if q.Value(0) != 1 || q.Value(2) != 5 {
		t.Fatalf("column q %v", q)
	}
	// ToRecords computes the parts; rows picked by a mask (chunks of
	// unknown length) go back to a DataFrame and come out the same.
	src := Arange(0, 12, 1, Chunks(5)).Reshape(6, 2).Rechunk(Chunks(4, 1))
	kept := src.Mask(src.Index(All(), At(0)).Gt(3))
	recs, err = kept.ToRecords(ctxB, newExec(t), "x", "y")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("%d records, want one per chunk of rows (2)", len(recs))
	}
	df2 := dataframe.FromRecords(recs...)
	for _, r := range recs {
		r.Release()
	}
	again := compute(t, FromFrame(df2, "x", "y"))
	assertClose(t, again, []int{4, 2}, []float64{4, 5, 6, 7, 8, 9, 10, 11}, 0)
	ints, err := FromSlice([]int64{1, 2, 3}, []int{3}, Chunks(2)).ToRecords(ctxB, newExec(t), "n")
	if err != nil {
		t.Fatal(err)
	}
	if len(ints) != 2 || ints[0].Schema().Field(0).Type.ID() != arrow.INT64 || ints[1].NumRows() != 1 {
		t.Fatalf("int64 records %v", ints)
	}
	for _, r := range ints {
		r.Release()
	}
	_, err = Zeros([]int{2, 3}).ToRecords(ctxB, newExec(t), "a")
	mustErr(t, err, "1 names", "3 columns")
	_, err = Zeros([]int{2}).ToRecords(ctxB, nil, "a")
	mustErr(t, err, "needs an executor")
	_, _, _, err = Zeros([]int{2, 2, 2}).FrameParts([]string{"a"})
	mustErr(t, err, "1-D or 2-D", "(2, 2, 2)")
	_, _, _, err = Zeros([]int{2, 3}).FrameParts([]string{"a", "b"})
	mustErr(t, err, "2 names", "3 columns")
	_, _, _, err = Zeros([]int{2, 2}).FrameParts([]string{"a", "a"})
	mustErr(t, err, "\"a\" repeats")
}

func ptr[T any](v T) *T { return &v }
