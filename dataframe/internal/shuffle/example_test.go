package shuffle_test

import (
	"context"
	"fmt"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/internal/shuffle"
)

// A shuffle of two inputs into two outputs by hash of a key: two split
// tasks, then two collect tasks, then the cleanup.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "shuffle-example")
	defer os.RemoveAll(dir)
	st := shuffle.LocalStorage(dir) // the executor's local directory
	schema := arrow.NewSchema([]arrow.Field{{Name: "city", Type: arrow.BinaryTypes.String}, {Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil)
	batch := func(cities []string, ns []int64) arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer b.Release()
		b.Field(0).(*array.StringBuilder).AppendValues(cities, nil)
		b.Field(1).(*array.Int64Builder).AppendValues(ns, nil)
		return b.NewRecordBatch()
	}
	inputs := []arrow.RecordBatch{
		batch([]string{"Oslo", "Lima", "Pune", "Oslo"}, []int64{1, 2, 3, 4}),
		batch([]string{"Lima", "Oslo", "Pune"}, []int64{5, 6, 7}),
	}
	defer shuffle.Cleanup(ctx, st, "example") // on success, failure or cancellation

	var manifests []*shuffle.Manifest
	for i, in := range inputs {
		man, err := shuffle.Split(ctx, st, "example", i, in, shuffle.HashPartitioner("city"), 2, shuffle.Options{})
		if err != nil {
			fmt.Println(err)
			return
		}
		manifests = append(manifests, man)
	}
	for j := range 2 {
		out, err := shuffle.CollectSorted(ctx, st, "example", j, manifests, schema, []shuffle.SortKey{{Column: "city"}, {Column: "n"}}, shuffle.Options{})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("output", j, out.Column(0), out.Column(1))
		out.Release()
	}
	// Output:
	// output 0 ["Oslo" "Oslo" "Oslo"] [1 4 6]
	// output 1 ["Lima" "Lima" "Pune" "Pune"] [2 5 3 7]
}
