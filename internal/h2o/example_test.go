package h2o_test

import (
	"fmt"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/shoal-data/shoal/internal/h2o"
)

func Example() {
	// Three rows of the group-by table as CSV.
	if err := h2o.WriteCSV(os.Stdout, 3, h2o.DefaultK, 1); err != nil {
		fmt.Println(err)
	}
	// The same rows as Arrow record batches.
	_ = h2o.Generate(3, h2o.DefaultK, 1, 2, func(rec arrow.RecordBatch) error {
		defer rec.Release()
		fmt.Println("batch of", rec.NumRows(), "rows, first id1:", rec.Column(0).ValueStr(0))
		return nil
	})
	// Output:
	// id1,id2,id3,id4,id5,id6,v1,v2,v3
	// id094,id073,id0000000001,89,71,1,5,11,84.51493
	// id039,id032,id0000000001,80,4,1,4,2,76.411129
	// id045,id001,id0000000001,79,62,1,2,8,56.341288
	// batch of 2 rows, first id1: id094
	// batch of 1 rows, first id1: id045
}
