// ETL: CSV files in, cleaned and typed, Parquet out partitioned by a
// column, read back and checked.
//
//	go run ./examples/etl
//
// The program writes its own messy input (order exports from several
// shops: country codes in mixed case with stray spaces, amounts with
// missing values, a malformed line), then:
//
//  1. reads the CSV files with an explicit type for the amount and the
//     order date parsed, skipping malformed lines (they are logged);
//  2. cleans: trims and upper-cases the country, drops orders without an
//     amount, adds a net amount, keeps the valid statuses;
//  3. writes Parquet (zstd), one directory per country (country=NO/...);
//  4. reads the Parquet files back and checks that rows and totals per
//     country match what was written.
package main

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/io/parquet"
	"github.com/shoal-data/shoal/local"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "etl:", err)
		os.Exit(1)
	}
}

// makeInput writes one CSV export per shop.
func makeInput(dir string) error {
	r := rand.New(rand.NewPCG(7, 7))
	countries := []string{"no", " NO", "se", "SE ", "dk", "fi", "Fi"}
	statuses := []string{"paid", "paid", "paid", "refunded", "test"}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for shop := range 6 {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("orders-shop%d.csv", shop)))
		if err != nil {
			return err
		}
		w := bufio.NewWriter(f)
		fmt.Fprintln(w, "order_id,shop,country,amount,vat_rate,ordered,status")
		for i := range 50_000 {
			amount := fmt.Sprintf("%.2f", 5+r.ExpFloat64()*40)
			if r.IntN(50) == 0 {
				amount = "" // missing
			}
			day := start.AddDate(0, 0, r.IntN(180))
			fmt.Fprintf(w, "%d,shop%d,%q,%s,%.2f,%s,%s\n", shop*1_000_000+i, shop, countries[r.IntN(len(countries))],
				amount, []float64{0.25, 0.25, 0.12}[r.IntN(3)], day.Format("2006-01-02"), statuses[r.IntN(len(statuses))])
			if shop == 3 && i == 1234 {
				fmt.Fprintln(w, "this line, is, broken") // malformed: wrong number of fields
			}
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

func run() error {
	ctx := context.Background()
	logger := slog.New(diagnostics.NewConsoleHandler(os.Stderr, slog.LevelInfo))
	dir, err := os.MkdirTemp("", "shoal-etl-")
	if err != nil {
		return err
	}
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	os.MkdirAll(in, 0o755)
	if err := makeInput(in); err != nil {
		return err
	}
	exec := local.New(local.WithLogger(logger))
	defer exec.Close()

	// 1. Read: explicit types where inference could guess wrong, dates
	// parsed, malformed lines skipped (and logged) instead of failing.
	orders, err := dataframe.ReadCSV(ctx, filepath.Join(in, "orders-*.csv"), dataframe.CSVOptions{
		Types:      map[string]arrow.DataType{"amount": arrow.PrimitiveTypes.Float64, "order_id": arrow.PrimitiveTypes.Int64},
		ParseDates: map[string]string{"ordered": "2006-01-02"},
		BadRows:    1, // skip
	})
	if err != nil {
		return err
	}

	// 2. Clean.
	clean := orders.
		WithColumns(
			dataframe.Col("country").Str().Strip().Str().Upper().Alias("country"),
			dataframe.Col("amount").Mul(dataframe.Lit(1.0).Sub(dataframe.Col("vat_rate"))).Alias("net"),
		).
		DropNull("amount").
		Filter(dataframe.Col("status").IsIn("paid", "refunded")).
		Drop("vat_rate")
	fmt.Printf("cleaning plan:\n%s\n", clean.Explain())

	// 3. Write Parquet, one directory per country.
	started := time.Now()
	paths, err := clean.WriteParquet(ctx, exec, out, dataframe.WriteOptions{
		Options: parquet.WriteOptions{Compression: "zstd", PartitionOn: []string{"country"}},
	})
	if err != nil {
		return err
	}
	fmt.Printf("wrote %d Parquet files in %v, for example %s\n\n", len(paths), time.Since(started).Round(time.Millisecond),
		paths[0])

	// 4. Read back and check: rows and totals per country.
	back, err := dataframe.ReadParquet(ctx, filepath.Join(out, "**", "*.parquet"))
	if err != nil {
		return err
	}
	perCountry := func(d dataframe.DataFrame) (arrow.Table, error) {
		return d.GroupBy("country").Agg(dataframe.Size().As("orders"), dataframe.Sum("net").As("net")).Compute(ctx, exec)
	}
	want, err := perCountry(clean)
	if err != nil {
		return err
	}
	defer want.Release()
	got, err := perCountry(back)
	if err != nil {
		return err
	}
	defer got.Release()
	fmt.Printf("per country, read back from Parquet:\n%s\n", dataframe.FormatTable(got, 10))
	type row struct {
		Country string  `df:"country"`
		Orders  int64   `df:"orders"`
		Net     float64 `df:"net"`
	}
	w, err := dataframe.ToStructs[row](want)
	if err != nil {
		return err
	}
	g, err := dataframe.ToStructs[row](got)
	if err != nil {
		return err
	}
	if len(w) != len(g) {
		return fmt.Errorf("check failed: %d countries written, %d read back", len(w), len(g))
	}
	for i := range w {
		if w[i].Country != g[i].Country || w[i].Orders != g[i].Orders || math.Abs(w[i].Net-g[i].Net) > 1e-6*math.Abs(w[i].Net) {
			return fmt.Errorf("check failed for %s: wrote %d orders (net %.2f), read back %d (net %.2f)",
				w[i].Country, w[i].Orders, w[i].Net, g[i].Orders, g[i].Net)
		}
	}
	fmt.Printf("check passed: rows and totals of %d countries match\n", len(w))
	fmt.Printf("files: %s (remove with: rm -r %s)\n", out, dir)
	return nil
}
