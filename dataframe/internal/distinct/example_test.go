package distinct_test

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/dftest"
	"github.com/shoal-data/shoal/dataframe/internal/distinct"
)

func Example() {
	ctx := context.Background()
	mem := memory.DefaultAllocator
	rec, _ := dftest.NewRecord(
		dftest.Strings("city", "Oslo", "Lima", "Oslo", "Oslo", "Lima"),
		dftest.Float64s("temp", 4, 19, 7, nil, 21))
	defer rec.Release()

	med, _ := distinct.Median(ctx, rec.Column(1))
	fmt.Println("median:", med)

	q, _ := distinct.GroupQuantiles(ctx, rec, []string{"city"},
		[]distinct.QuantileSpec{{Column: "temp", Q: 0.5, Name: "median"}}, distinct.Linear, distinct.GroupOptions{Sort: true}, mem)
	defer q.Release()
	for i := range int(q.NumRows()) {
		fmt.Println(q.Column(0).ValueStr(i), q.Column(1).ValueStr(i))
	}

	top, _ := distinct.NLargest(ctx, rec, 2, []string{"temp"}, distinct.KeepFirst, mem)
	defer top.Release()
	fmt.Println("warmest:", top.Column(0).ValueStr(0), top.Column(1).ValueStr(0))

	firsts, _ := distinct.DropDuplicates(ctx, rec, []string{"city"}, distinct.KeepFirst, mem)
	defer firsts.Release()
	fmt.Println("rows:", firsts.NumRows())
	// Output:
	// median: 13
	// Lima 20
	// Oslo 5.5
	// warmest: Lima 21
	// rows: 2
}
