package main

import (
	"context"
	"encoding/csv"
	"os"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/dataframe/dftest"
	"github.com/shoal-data/shoal/internal/tsdata"
	"github.com/shoal-data/shoal/local"
)

// TestTutorialMatchesDuckDB compares the example's table with
// testdata/expected.csv, which DuckDB computed from the same files
// (regenerate with: cd bench && go run ./tutorialexpected -out
// ../examples/tutorial/testdata/expected.csv).
func TestTutorialMatchesDuckDB(t *testing.T) {
	dir := t.TempDir()
	if _, err := tsdata.Write(dir, 1); err != nil {
		t.Fatal(err)
	}
	exec := local.New()
	defer exec.Close()
	got, _, err := tutorial(context.Background(), exec, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()

	f, err := os.Open("testdata/expected.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var ts, lo, hi []any
	for _, r := range rows[1:] {
		ts = append(ts, r[0])
		for i, dst := range []*[]any{&lo, &hi} {
			v, err := strconv.ParseFloat(r[i+1], 64)
			if err != nil {
				t.Fatal(err)
			}
			*dst = append(*dst, v)
		}
	}
	want := dftest.Table(t, dftest.Timestamps("timestamp", ts...).As(got.Schema().Field(0).Type),
		dftest.Float64s("min", lo...), dftest.Float64s("max", hi...))
	if got.Schema().Field(0).Type.ID() != arrow.TIMESTAMP {
		t.Fatalf("timestamp column is %s", got.Schema().Field(0).Type)
	}
	dftest.AssertEqual(t, got, want, dftest.Tolerance(0, 1e-9))
}
