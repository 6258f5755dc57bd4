// Tutorial: the time-series workload of the Dask tutorial, on the
// in-process executor.
//
//	go run ./examples/tutorial
//
// The program writes nine CSV files, data/0.part to data/8.part (a year of
// minute readings: timestamp, id, name, x, y, temperature), then:
//
//  1. reads them as one lazy DataFrame with timestamp parsed;
//  2. sets the index to timestamp (the files are in time order, so Shoal
//     checks that and does not shuffle);
//  3. takes the mean temperature;
//  4. resamples (temperature - mean) by calendar month and takes the
//     minimum and maximum of each month;
//
// and prints the table. The same answer, computed by another engine, is in
// testdata/expected.csv; `go test ./examples/tutorial` compares them.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/internal/tsdata"
	"github.com/shoal-data/shoal/local"
)

func main() {
	dir := flag.String("data", "data", "where to write the nine CSV files")
	seed := flag.Uint64("seed", 1, "seed of the generated data")
	flag.Parse()
	if err := run(*dir, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "tutorial:", err)
		os.Exit(1)
	}
}

func run(dir string, seed uint64) error {
	ctx := context.Background()
	paths, err := tsdata.Write(dir, seed)
	if err != nil {
		return err
	}
	fmt.Printf("wrote %d files (%d rows) to %s\n\n", len(paths), tsdata.Rows(), dir)

	exec := local.New()
	defer exec.Close()
	monthly, explain, err := tutorial(ctx, exec, dir)
	if err != nil {
		return err
	}
	defer monthly.Release()
	fmt.Println("monthly min and max of (temperature - mean temperature):")
	fmt.Println(dataframe.FormatTable(monthly, 20))
	fmt.Println("plan of the last step:")
	fmt.Println(explain)
	return nil
}

// tutorial runs the workload on the files in dir and returns the monthly
// table and the plan of the resampling.
func tutorial(ctx context.Context, exec graph.Executor, dir string) (arrow.Table, string, error) {
	df, err := dataframe.ReadCSV(ctx, filepath.Join(dir, "*.part"), dataframe.CSVOptions{
		ParseDates: map[string]string{"timestamp": tsdata.TimestampLayout},
	})
	if err != nil {
		return nil, "", err
	}
	df, err = df.SetIndex(ctx, exec, "timestamp")
	if err != nil {
		return nil, "", err
	}
	mean, err := df.Column("temperature").Mean().Float64(ctx, exec)
	if err != nil {
		return nil, "", err
	}
	monthly := df.
		WithColumn("deviation", dataframe.Col("temperature").Sub(mean)).
		Resample("ME").
		Agg(dataframe.Min("deviation").As("min"), dataframe.Max("deviation").As("max"))
	t, err := monthly.Compute(ctx, exec)
	return t, monthly.Explain(), err
}
