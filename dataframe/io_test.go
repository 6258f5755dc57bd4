package dataframe_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	df "github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/dataframe/dftest"
	"github.com/shoal-data/shoal/io/parquet"
	"github.com/shoal-data/shoal/io/storage"
)

// writeFiles writes files into a new temporary directory.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestReadCSV(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"a.csv": "day,city,temp,ok\n2026-01-01,oslo,-3.5,true\n2026-01-02,rome,12,false\n2026-01-03,oslo,,true\n",
		"b.csv": "day,city,temp,ok\n2026-01-04,lima,22.25,true\n2026-01-05,rome,14,true\n",
	})
	ctx := context.Background()
	d, err := df.ReadCSV(ctx, filepath.Join(dir, "*.csv"))
	if err != nil {
		t.Fatal(err)
	}
	wantTypes := map[string]arrow.Type{"day": arrow.DATE32, "city": arrow.STRING, "temp": arrow.FLOAT64, "ok": arrow.BOOL}
	for _, f := range d.Schema().Fields() {
		if f.Type.ID() != wantTypes[f.Name] {
			t.Errorf("column %s is %s", f.Name, f.Type)
		}
	}
	q := d.Filter(df.Col("ok")).GroupBy("city").Agg(df.Mean("temp"), df.Count("temp").As("n"))
	if plan := q.Explain(); !strings.Contains(plan, "columns=[city, temp, ok]") || !strings.Contains(plan, "filter=") {
		t.Errorf("plan does not push the filter and the columns into the read:\n%s", plan)
	}
	got := compute(t, q)
	dftest.AssertEqual(t, got, dftest.Table(t,
		dftest.Strings("city", "lima", "oslo", "rome"),
		dftest.Float64s("temp", 22.25, -3.5, 14.0),
		dftest.Int64s("n", 1, 1, 1),
	))
}

func TestReadCSVErrors(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"bad.csv":   "id,value\n1,2.5\n2,3.5\n3,oops\n",
		"short.csv": "id,value\n1,2.5\n2\n",
		"dates.csv": "id,day\n1,2026-01-31\n2,2026-02-30\n",
	})
	ctx := context.Background()
	e := newExec(t)
	tests := []struct {
		name, path string
		opts       df.CSVOptions
		want       []string
	}{
		{"unparsable value", "bad.csv", df.CSVOptions{Types: map[string]arrow.DataType{"value": arrow.PrimitiveTypes.Float64}},
			[]string{"bad.csv", "line 4", "value", "oops"}},
		{"wrong field count", "short.csv", df.CSVOptions{}, []string{"short.csv", "line 3"}},
		{"unparsable date", "dates.csv", df.CSVOptions{ParseDates: map[string]string{"day": "2006-01-02"}},
			[]string{"dates.csv", "line 3", "day", "2026-02-30"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := df.ReadCSV(ctx, filepath.Join(dir, tc.path), tc.opts)
			if err == nil {
				_, err = d.Compute(ctx, e)
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	if _, err := df.ReadCSV(ctx, filepath.Join(dir, "missing.csv")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := df.ReadCSV(ctx, filepath.Join(dir, "*.tsv")); !errors.Is(err, storage.ErrNoMatch) {
		t.Errorf("glob matching nothing: %v", err)
	}
	// Skipping bad rows keeps the good ones.
	d, err := df.ReadCSV(ctx, filepath.Join(dir, "bad.csv"), df.CSVOptions{
		Types: map[string]arrow.DataType{"value": arrow.PrimitiveTypes.Float64}, BadRows: 1})
	if err != nil {
		t.Fatal(err)
	}
	dftest.AssertEqual(t, compute(t, d), dftest.Table(t, dftest.Int64s("id", 1, 2), dftest.Float64s("value", 2.5, 3.5)))

	// The skipped rows can be read as a frame of their own.
	for _, tc := range []struct {
		file string
		opts df.CSVOptions
		want arrow.Table
	}{
		{"bad.csv", df.CSVOptions{Types: map[string]arrow.DataType{"value": arrow.PrimitiveTypes.Float64}}, dftest.Table(t,
			dftest.Strings("path", filepath.Join(dir, "bad.csv")), dftest.Int64s("line", 4), dftest.Int64s("column", 2),
			dftest.Strings("text", "oops"), dftest.Strings("reason", "bad value: not a number"))},
		{"short.csv", df.CSVOptions{}, dftest.Table(t,
			dftest.Strings("path", filepath.Join(dir, "short.csv")), dftest.Int64s("line", 3), dftest.Int64s("column", 0),
			dftest.Strings("text", "2"), dftest.Strings("reason", "wrong number of fields: 1 field, want 2"))},
	} {
		bad, err := df.ReadCSVBadRows(ctx, filepath.Join(dir, tc.file), tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		dftest.AssertEqual(t, compute(t, bad), tc.want)
	}
}

func TestParquetRoundTrip(t *testing.T) {
	ctx := context.Background()
	e := newExec(t)
	p := people(t).DropNull("city")
	dir := t.TempDir()
	paths, err := p.WriteParquet(ctx, e, dir, df.WriteOptions{Options: parquet.WriteOptions{PartitionOn: []string{"city"}, Compression: "zstd"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 || !strings.Contains(paths[0], "city=") {
		t.Fatalf("paths %v", paths)
	}
	back, err := df.ReadParquet(ctx, filepath.Join(dir, "**", "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	got := compute(t, back.Select("name", "city", "age", "score"))
	dftest.AssertEqual(t, got, compute(t, p), dftest.IgnoreRowOrder(), dftest.CheckTypes(false))

	// Statistics let a filter skip row groups.
	flat := t.TempDir()
	if _, err := p.WriteParquet(ctx, e, flat); err != nil {
		t.Fatal(err)
	}
	d, err := df.ReadParquet(ctx, filepath.Join(flat, "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	q := d.Filter(df.Col("age").Gt(50)).Select("name")
	if plan := q.Explain(); !strings.Contains(plan, "statistics skip") {
		t.Errorf("plan:\n%s", plan)
	}
	dftest.AssertEqual(t, compute(t, q), dftest.Table(t, dftest.Strings("name", "fay")), dftest.CheckTypes(false))
}

func TestIPCAndCSVRoundTrip(t *testing.T) {
	ctx := context.Background()
	e := newExec(t)
	p := people(t)
	for _, format := range []string{"ipc", "csv", "json"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			var paths []string
			var err error
			var back df.DataFrame
			switch format {
			case "ipc":
				paths, err = p.WriteIPC(ctx, e, dir)
				if err == nil {
					back, err = df.ReadIPC(ctx, filepath.Join(dir, "*.arrow"))
				}
			case "json":
				paths, err = p.WriteJSON(ctx, e, dir)
				if err == nil {
					back, err = df.ReadJSON(ctx, filepath.Join(dir, "*.jsonl"))
				}
			default:
				paths, err = p.WriteCSV(ctx, e, dir)
				if err == nil {
					back, err = df.ReadCSV(ctx, filepath.Join(dir, "*.csv"))
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(paths) != 3 {
				t.Errorf("%d files for 3 partitions: %v", len(paths), paths)
			}
			dftest.AssertEqual(t, compute(t, back), compute(t, p))
		})
	}
}

func TestCorruptParquet(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := people(t).WriteParquet(ctx, newExec(t), dir); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
	b, _ := os.ReadFile(files[0])
	bad := filepath.Join(dir, "truncated.parquet")
	os.WriteFile(bad, b[:len(b)/2], 0o644)
	_, err := df.ReadParquet(ctx, bad)
	if err == nil || !strings.Contains(err.Error(), "truncated.parquet") {
		t.Errorf("truncated file: %v", err)
	}
	notParquet := filepath.Join(dir, "text.parquet")
	os.WriteFile(notParquet, []byte(fmt.Sprint("hello, world")), 0o644)
	if _, err := df.ReadParquet(ctx, notParquet); err == nil {
		t.Errorf("a text file read as Parquet")
	}
}
