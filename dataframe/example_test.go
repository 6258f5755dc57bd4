package dataframe_test

import (
	"context"
	"fmt"

	"github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/local"
)

func Example() {
	ctx := context.Background()
	exec := local.New()
	defer exec.Close()

	sales := dataframe.FromColumns(
		"shop", []string{"oslo", "rome", "oslo", "lima", "rome"},
		"amount", []float64{12.5, 30, 7.5, 20, 10},
		"paid", []bool{true, true, false, true, true},
	)
	perShop := sales.
		Filter(dataframe.Col("paid")).
		GroupBy("shop").
		Agg(dataframe.Sum("amount").As("revenue"), dataframe.Size().As("orders"))

	table, err := perShop.Compute(ctx, exec)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer table.Release()
	fmt.Print(dataframe.FormatTable(table, 10))

	// A mistake is reported when the expression is built.
	fmt.Println(sales.Select(dataframe.Col("ammount").Mul(2)).Err())
	// Output:
	// shop  revenue  orders
	// lima       20       1
	// oslo     12.5       1
	// rome       40       2
	// [3 rows x 3 columns]
	// Select: column "ammount" not found in col("ammount") * 2; did you mean "amount"? (columns: "shop", "amount", "paid")
}
