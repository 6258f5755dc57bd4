package sortk_test

import (
	"context"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/internal/sortk"
)

// Sort by city, then by temperature descending with nulls first; NaN sits
// next to the nulls.
func ExampleSort() {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "city", Type: arrow.BinaryTypes.String},
		{Name: "temp", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues([]string{"Pune", "Oslo", "Pune", "Oslo", "Pune", "Oslo"}, nil)
	b.Field(1).(*array.Float64Builder).AppendValues([]float64{31, -2, 0, 4, math.NaN(), 0}, []bool{true, true, true, true, true, false})
	rec := b.NewRecordBatch()
	defer rec.Release()

	keys := []sortk.SortKey{{Column: "city"}, {Column: "temp", Descending: true, NullsFirst: true}}
	sorted, err := sortk.Sort(context.Background(), rec, keys, memory.DefaultAllocator)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sorted.Release()
	fmt.Println(sorted.Column(0))
	fmt.Println(sorted.Column(1))
	// Output:
	// ["Oslo" "Oslo" "Oslo" "Pune" "Pune" "Pune"]
	// [(null) 4 -2 NaN 31 0]
}

// Boundaries for 3 ranges from a sample, and the range of some rows: a
// row equal to a boundary goes to the range above it.
func ExampleDivisions() {
	ctx := context.Background()
	ints := func(vals ...int64) arrow.RecordBatch {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		defer b.Release()
		b.AppendValues(vals, nil)
		a := b.NewArray()
		defer a.Release()
		return array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "k", Type: a.DataType()}}, nil), []arrow.Array{a}, int64(a.Len()))
	}
	sample := ints(9, 1, 8, 2, 7, 3, 6, 4, 5)
	defer sample.Release()
	keys := []sortk.SortKey{{Column: "k"}}
	div, err := sortk.Divisions(ctx, sample, keys, 3, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer div.Release()
	rows := ints(0, 4, 5, 7, 100)
	defer rows.Release()
	parts, err := sortk.SearchDivisions(ctx, rows, div, keys)
	fmt.Println(div.Column(0), parts, err)
	// Output:
	// [4 7] [0 1 1 2 2] <nil>
}
