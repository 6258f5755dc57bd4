package expr_test

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/expr"
)

func Example() {
	// A small table: product names, prices and quantities.
	mem := memory.DefaultAllocator
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "name", Type: arrow.BinaryTypes.String},
		{Name: "price", Type: arrow.PrimitiveTypes.Float64},
		{Name: "qty", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues([]string{"apple", "pear", "fig"}, nil)
	b.Field(1).(*array.Float64Builder).AppendValues([]float64{0.5, 0.75, 2}, nil)
	b.Field(2).(*array.Int64Builder).AppendValues([]int64{10, 0, 3}, []bool{true, false, true})
	rec := b.NewRecordBatch()
	defer rec.Release()

	total := expr.Col("price").Mul(expr.Col("qty")).Alias("total")
	label := expr.When(total.Gt(5)).Then("big").Otherwise("small").Alias("size")

	// Type checks against the schema without reading data.
	t, _ := total.Type(schema)
	fmt.Println(total, "is", t)
	_, err := expr.Col("prices").Type(schema)
	fmt.Println(err)

	ctx := context.Background()
	ev := expr.NewEvaluator(rec, mem)
	defer ev.Release()
	for _, e := range []expr.Expr{total, label, expr.Col("name").Str().Upper()} {
		arr, err := ev.Eval(ctx, e)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(e.Name(), arr)
		arr.Release()
	}

	kept, err := expr.Filter(ctx, rec, expr.Col("qty").Gt(1).And(expr.Col("name").Str().Contains("p")), mem)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer kept.Release()
	fmt.Println("filtered:", kept.Column(0))
	// Output:
	// (col("price") * col("qty")).alias("total") is float64
	// column "prices" not found; did you mean "price"? (columns: "name", "price", "qty")
	// total [5 (null) 6]
	// size ["small" "small" "big"]
	// name ["APPLE" "PEAR" "FIG"]
	// filtered: ["apple"]
}
