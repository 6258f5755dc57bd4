package rows_test

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/dftest"
	"github.com/shoal-data/shoal/dataframe/internal/distinct/rows"
)

// Ids of the distinct keys of one batch, looked up from another, and the
// rows of the first gathered by them.
func ExampleEncoder() {
	ctx := context.Background()
	build, _ := dftest.NewRecord(dftest.Strings("city", "Oslo", "Lima", "Oslo", nil))
	probe, _ := dftest.NewRecord(dftest.Strings("city", "Lima", "Rome", "Oslo"))
	defer build.Release()
	defer probe.Release()

	enc, _ := rows.NewEncoder([]arrow.DataType{arrow.BinaryTypes.String}, false) // nulls never match
	ids, _ := enc.Insert(ctx, []arrow.Array{build.Column(0)})
	found, _ := enc.Lookup(ctx, []arrow.Array{probe.Column(0)})
	fmt.Println(ids[:3], ids[3] == rows.NoID, found[0], found[1] == rows.NoID, found[2])

	firsts, _ := rows.Take(ctx, memory.DefaultAllocator, build.Column(0), rows.FirstRows(ids, enc.Len()))
	defer firsts.Release()
	fmt.Println(firsts)
	// Output:
	// [0 1 0] true 1 true 0
	// ["Oslo" "Lima"]
}
