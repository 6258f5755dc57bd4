package dataframe_test

import (
	"compress/gzip"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	df "github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/dataframe/dftest"
	"github.com/shoal-data/shoal/internal/h2o"
)

// TestH2OAgainstDuckDB answers the H2O group-by questions on a seeded
// 100,000-row table read from CSV in several blocks, and compares with the
// answers DuckDB gave on the same table, committed in testdata/h2o
// (regenerate with: cd bench && go run ./h2oexpected -out
// ../dataframe/testdata/h2o).
func TestH2OAgainstDuckDB(t *testing.T) {
	const rows, k, seed = 100_000, 100, 42 // as bench/h2oexpected
	path := filepath.Join(t.TempDir(), "x.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := h2o.WriteCSV(f, rows, k, seed); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	x, err := df.ReadCSV(context.Background(), path, df.CSVOptions{BlockSize: 512 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if x.NPartitions() < 4 {
		t.Fatalf("%d partitions; the test wants several", x.NPartitions())
	}
	for _, tc := range []struct {
		name  string
		kinds string // of the answer's columns: s(tring), i(nt), f(loat)
		q     df.DataFrame
	}{
		{"q1", "si", x.GroupBy("id1").Sum("v1")},
		{"q2", "ssi", x.GroupBy("id1", "id2").Sum("v1")},
		{"q3", "sif", x.GroupBy("id3").Agg(df.Sum("v1"), df.Mean("v3"))},
		{"q4", "ifff", x.GroupBy("id4").Mean("v1", "v2", "v3")},
		{"q5", "iiif", x.GroupBy("id6").Sum("v1", "v2", "v3")},
		{"q6", "iiff", x.GroupBy("id4", "id5").Median("v3").Rename(map[string]string{"v3": "median_v3"}).
			Merge(x.GroupBy("id4", "id5").Agg(df.Std("v3").As("sd_v3")), df.MergeOptions{On: []string{"id4", "id5"}})},
		{"q8", "if", x.GroupBy("id6").NLargest(2, "v3").Select("id6", df.Col("v3").Alias("largest2_v3"))},
		{"q7", "si", x.GroupBy("id3").Agg(df.Max("v1").As("max_v1"), df.Min("v2").As("min_v2")).
			Select("id3", df.Col("max_v1").Sub(df.Col("min_v2")).Alias("range_v1_v2"))},
		{"q10", "sssiiifi", x.GroupBy("id1", "id2", "id3", "id4", "id5", "id6").Agg(df.Sum("v3"), df.Size().As("count"))},
		{"filter", "sifif", x.Filter(df.Col("v1").Ge(3).And(df.Col("id4").Lt(50)).And(df.Col("v3").Gt(20.5))).
			GroupBy("id1").Agg(df.Size().As("n"), df.Sum("v3"), df.Min("v2").As("v2_min"), df.Max("v3").As("v3_max"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := readExpected(t, filepath.Join("testdata", "h2o", tc.name+".csv.gz"), tc.kinds)
			dftest.AssertEqual(t, compute(t, tc.q), want, dftest.IgnoreRowOrder(), dftest.Tolerance(1e-9, 1e-9))
		})
	}
}

// readExpected reads a gzipped CSV answer into a table, each column of
// the kind kinds gives.
func readExpected(t *testing.T, path, kinds string) arrow.Table {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(z).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header := recs[0]
	if len(header) != len(kinds) {
		t.Fatalf("%s has %d columns, the test says %d", path, len(header), len(kinds))
	}
	vals := make([][]any, len(header))
	for _, r := range recs[1:] {
		for j, s := range r {
			var v any
			switch {
			case s == "":
			case kinds[j] == 's':
				v = s
			case kinds[j] == 'i':
				n, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				v = n
			default:
				x, err := strconv.ParseFloat(s, 64)
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				v = x
			}
			vals[j] = append(vals[j], v)
		}
	}
	cols := make([]dftest.Column, len(header))
	for j, name := range header {
		switch kinds[j] {
		case 's':
			cols[j] = dftest.Strings(name, vals[j]...)
		case 'i':
			cols[j] = dftest.Int64s(name, vals[j]...)
		default:
			cols[j] = dftest.Float64s(name, vals[j]...)
		}
	}
	return dftest.Table(t, cols...)
}
