package dataframe_test

import (
	"context"
	"fmt"
	"time"

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

func ExampleDataFrame_Merge() {
	ctx := context.Background()
	exec := local.New()
	defer exec.Close()

	orders := dataframe.FromColumns(
		"shop", []string{"oslo", "rome", "oslo", "paris"},
		"amount", []float64{12.5, 30, 7.5, 9},
	)
	shops := dataframe.FromColumns(
		"shop", []string{"oslo", "rome", "lima"},
		"country", []string{"NO", "IT", "PE"},
	)
	joined := orders.Merge(shops, dataframe.MergeOptions{How: "left", On: []string{"shop"}})
	table, err := joined.Compute(ctx, exec)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer table.Release()
	fmt.Print(dataframe.FormatTable(table, 10))
	// Output:
	// shop   amount  country
	// oslo     12.5  NO
	// rome       30  IT
	// oslo      7.5  NO
	// paris       9  null
	// [4 rows x 3 columns]
}

func ExampleDataFrame_Resample() {
	ctx := context.Background()
	exec := local.New()
	defer exec.Close()

	day := func(d, h int) time.Time { return time.Date(2024, 1, d, h, 0, 0, 0, time.UTC) }
	readings := dataframe.FromColumns(
		"time", []time.Time{day(1, 9), day(1, 17), day(3, 8), day(3, 20)},
		"temp", []float64{3.5, 6, -1, 0.5},
	)
	daily := readings.Resample("1D", dataframe.ResampleOptions{On: "time"}).
		Agg(dataframe.Min("temp").As("low"), dataframe.Max("temp").As("high"), dataframe.Count("temp").As("n"))
	table, err := daily.Compute(ctx, exec)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer table.Release()
	fmt.Print(dataframe.FormatTable(table, 10))
	// Output:
	// time                 low   high  n
	// 2024-01-01 00:00:00   3.5     6  2
	// 2024-01-02 00:00:00  null  null  0
	// 2024-01-03 00:00:00    -1   0.5  2
	// [3 rows x 4 columns]
}
