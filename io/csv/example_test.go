package csv_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/io/csv"
	"github.com/shoal-data/shoal/io/storage"
)

func Example() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "jan.csv"), []byte("day,city,temp\n2024-01-01,Oslo,-3.5\n2024-01-02,Rome,NA\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "feb.csv"), []byte("day,city,temp\n2024-02-01,\"Paris, FR\",7\n"), 0o644)

	ctx := context.Background()
	fsys := storage.Local{}
	plan, err := csv.PlanRead(ctx, fsys, []string{filepath.Join(dir, "*.csv")}, csv.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(plan.Schema)
	// Each block could be read by another goroutine or process.
	for i := range plan.Blocks {
		rec, _, err := csv.ReadBlock(ctx, fsys, plan, i, csv.ReadOptions{Columns: []string{"city", "temp"}})
		if err != nil {
			fmt.Println(err)
			return
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			fmt.Println(rec.Column(0).ValueStr(r), rec.Column(1).ValueStr(r))
		}
		rec.Release()
	}

	// A value that does not fit its column's type names its place.
	os.WriteFile(filepath.Join(dir, "bad.csv"), []byte("id,n\n1,2\n2,x3\n"), 0o644)
	opts := csv.Options{Types: map[string]arrow.DataType{"n": arrow.PrimitiveTypes.Int64}}
	plan, _ = csv.PlanRead(ctx, fsys, []string{filepath.Join(dir, "bad.csv")}, opts)
	_, _, err = csv.ReadBlock(ctx, fsys, plan, 0, csv.ReadOptions{})
	var perr *csv.ParseError
	if errors.As(err, &perr) {
		fmt.Printf("line %d, column %q: %q: %v\n", perr.Line, perr.Name, perr.Text, perr.Err)
	}

	// Output:
	// schema:
	//   fields: 3
	//     - day: type=date32, nullable
	//     - city: type=utf8, nullable
	//     - temp: type=float64, nullable
	// Paris, FR 7
	// Oslo -3.5
	// Rome (null)
	// line 3, column "n": "x3": bad value: not an integer
}
