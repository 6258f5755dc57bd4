package agg_test

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/internal/agg"
)

// Two partitions aggregated as a tree: Partial on each, Merge, Finalize.
func Example() {
	ctx := context.Background()
	mem := memory.DefaultAllocator
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "city", Type: arrow.BinaryTypes.String},
		{Name: "temp", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	partition := func(cities []string, temps []float64, valid []bool) arrow.RecordBatch {
		b := array.NewRecordBuilder(mem, schema)
		defer b.Release()
		b.Field(0).(*array.StringBuilder).AppendValues(cities, nil)
		b.Field(1).(*array.Float64Builder).AppendValues(temps, valid)
		return b.NewRecordBatch()
	}
	p1 := partition([]string{"Oslo", "Lima", "Oslo"}, []float64{3, 19, 5}, nil)
	p2 := partition([]string{"Lima", "Oslo", "Pune"}, []float64{21, 0, 0}, []bool{true, true, false})
	defer p1.Release()
	defer p2.Release()

	keys := []string{"city"}
	specs := []agg.Spec{
		{Func: agg.Mean, Column: "temp", Name: "mean"},
		{Func: agg.Max, Column: "temp", Name: "max"},
		{Func: agg.Size, Name: "rows"},
	}
	opts := agg.Options{Sort: true}

	var states []arrow.RecordBatch
	for _, p := range []arrow.RecordBatch{p1, p2} {
		st, err := agg.Partial(ctx, p, keys, specs, opts, mem)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer st.Release()
		states = append(states, st)
	}
	merged, err := agg.Merge(ctx, states, keys, specs, opts, mem)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer merged.Release()
	out, err := agg.Finalize(ctx, merged, keys, specs, opts, mem)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer out.Release()
	for i := range int(out.NumRows()) {
		fmt.Println(out.Column(0).ValueStr(i), out.Column(1).ValueStr(i), out.Column(2).ValueStr(i), out.Column(3).ValueStr(i))
	}

	_, err = agg.ResultSchema(schema, keys, []agg.Spec{{Func: agg.Sum, Column: "city"}})
	fmt.Println(err)
	// Output:
	// Lima 20 21 2
	// Oslo 2.6666666666666665 5 3
	// Pune (null) (null) 1
	// agg: sum(city) as city: cannot take the sum of column "city" of type utf8 (want a number or boolean)
}
