package ipc_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/dftest"
	"github.com/shoal-data/shoal/io/ipc"
	"github.com/shoal-data/shoal/io/storage"
)

func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "ipc-example")
	defer os.RemoveAll(dir)
	fsys := storage.Local{}

	// Write two files, one in each format.
	for i, city := range []string{"Lima", "Oslo"} {
		rec, _ := dftest.NewRecord(
			dftest.Strings("city", city, city),
			dftest.Int64s("day", 1, 2),
			dftest.Float64s("temp", 19.5+float64(i), 20.25-float64(i)),
		)
		write := ipc.WriteFile
		if i == 1 {
			write = ipc.WriteStream
		}
		path := filepath.Join(dir, fmt.Sprintf("part-%d.arrow", i))
		if err := write(ctx, fsys, path, []arrow.RecordBatch{rec}, ipc.WriteOptions{Compression: "zstd"}); err != nil {
			fmt.Println(err)
		}
		rec.Release()
	}

	// Plan, then read each part (in a real program: in parallel tasks).
	plan, err := ipc.PlanRead(ctx, fsys, []string{filepath.Join(dir, "*.arrow")},
		ipc.Options{Columns: []string{"temp", "city"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("columns:", plan.Schema.Field(0).Name, plan.Schema.Field(1).Name)
	for i, part := range plan.Parts {
		rec, err := ipc.ReadPart(ctx, fsys, plan, i, memory.DefaultAllocator)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(filepath.Base(part.Path), part.Format, rec.NumRows(), "rows:", rec.Column(0), rec.Column(1))
		rec.Release()
	}

	// Asking for a column that is not there says what there is.
	_, err = ipc.PlanRead(ctx, fsys, []string{filepath.Join(dir, "part-0.arrow")}, ipc.Options{Columns: []string{"tmp"}})
	fmt.Println(err != nil, errors.Is(err, ipc.ErrUnknownColumn))
	// Output:
	// columns: temp city
	// part-0.arrow file 2 rows: [19.5 20.25] ["Lima" "Lima"]
	// part-1.arrow stream 2 rows: [20.5 19.25] ["Oslo" "Oslo"]
	// true true
}
