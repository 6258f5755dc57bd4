package dataframe_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	df "github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/internal/h2o"
	"github.com/shoal-data/shoal/local"
)

// benchRows is the size of the H2O table in benchmarks: SHOAL_BENCH_ROWS,
// default one million.
func benchRows(b *testing.B) int {
	if s := os.Getenv("SHOAL_BENCH_ROWS"); s != "" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			b.Fatalf("SHOAL_BENCH_ROWS=%q: %v", s, err)
		}
		return int(f)
	}
	return 1_000_000
}

var (
	h2oOnce sync.Once
	h2oPath string
	h2oErr  error
)

// h2oCSV writes the H2O groupby table once per run into a temporary file.
func h2oCSV(b *testing.B) string {
	rows := benchRows(b)
	h2oOnce.Do(func() {
		dir, err := os.MkdirTemp("", "shoal-bench-")
		if err != nil {
			h2oErr = err
			return
		}
		h2oPath = filepath.Join(dir, "G1.csv")
		f, err := os.Create(h2oPath)
		if err != nil {
			h2oErr = err
			return
		}
		w := bufio.NewWriterSize(f, 1<<20)
		if h2oErr = h2o.WriteCSV(w, rows, 100, 1); h2oErr == nil {
			h2oErr = w.Flush()
		}
		f.Close()
	})
	if h2oErr != nil {
		b.Fatal(h2oErr)
	}
	return h2oPath
}

// peakRSS resets the process's peak resident memory and returns a function
// that reports the peak since (Linux; 0 elsewhere).
func peakRSS() func() int64 {
	os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	return func() int64 {
		b, err := os.ReadFile("/proc/self/status")
		if err != nil {
			return 0
		}
		for _, line := range bytes.Split(b, []byte("\n")) {
			if f := strings.Fields(string(line)); len(f) >= 2 && f[0] == "VmHWM:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				return kb << 10
			}
		}
		return 0
	}
}

// BenchmarkCSVFilterGroupBy reads the H2O CSV, filters and groups: sum
// of v1 and mean of v3 by id1. It reports MB/s of CSV and the peak memory
// of the process against the Arrow size of the columns the query uses.
func BenchmarkCSVFilterGroupBy(b *testing.B) {
	path := h2oCSV(b)
	st, _ := os.Stat(path)
	ctx := context.Background()
	e := local.New()
	defer e.Close()
	rows := benchRows(b)
	// Arrow size of id1 (5 bytes + 4 offset), v1 and v3 (8 each).
	arrowBytes := float64(rows) * (5 + 4 + 8 + 8)
	b.SetBytes(st.Size())
	runtime.GC()
	peak := peakRSS()
	b.ResetTimer()
	for range b.N {
		d, err := df.ReadCSV(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		q := d.Filter(df.Col("v2").Gt(2)).GroupBy("id1").Agg(df.Sum("v1"), df.Mean("v3"))
		t, err := q.Compute(ctx, e)
		if err != nil {
			b.Fatal(err)
		}
		if t.NumRows() != 100 {
			b.Fatalf("%d groups", t.NumRows())
		}
		t.Release()
	}
	b.StopTimer()
	p := float64(peak())
	b.ReportMetric(p/(1<<20), "peak-MB")
	b.ReportMetric(p/arrowBytes, "peak/arrow-size")
}

// BenchmarkGroupByInMemory groups a persisted H2O table: sum(v1) by id1
// (100 string keys) and mean(v3) by id6 (rows/100 int keys).
func BenchmarkGroupByInMemory(b *testing.B) {
	rows := benchRows(b)
	ctx := context.Background()
	e := local.New()
	defer e.Close()
	var recs []arrow.RecordBatch
	per := (rows + 7) / 8
	if err := h2o.Generate(rows, 100, 1, per, func(r arrow.RecordBatch) error {
		r.Retain()
		recs = append(recs, r)
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	data, err := df.FromRecords(recs...).Persist(ctx, e)
	if err != nil {
		b.Fatal(err)
	}
	defer data.Release()
	cases := []struct {
		name string
		q    df.DataFrame
	}{
		{"sum-v1-by-id1", data.GroupBy("id1").Agg(df.Sum("v1"))},
		{"mean-v3-by-id6", data.GroupBy("id6").Agg(df.Mean("v3"))},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				t, err := c.q.Compute(ctx, e)
				if err != nil {
					b.Fatal(err)
				}
				t.Release()
			}
			b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
		})
	}
}

// h2oPersisted returns the H2O table in memory, in 8 partitions, held by e.
func h2oPersisted(b *testing.B, e *local.Executor) (df.DataFrame, int64) {
	rows := benchRows(b)
	var recs []arrow.RecordBatch
	var bytes int64
	per := (rows + 7) / 8
	if err := h2o.Generate(rows, 100, 1, per, func(r arrow.RecordBatch) error {
		r.Retain()
		recs = append(recs, r)
		for _, c := range r.Columns() {
			for _, buf := range c.Data().Buffers() {
				if buf != nil {
					bytes += int64(buf.Len())
				}
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	data, err := df.FromRecords(recs...).Persist(context.Background(), e)
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range recs {
		r.Release()
	}
	return data, bytes
}

// BenchmarkSortShuffle sorts the in-memory H2O table by an int column
// (SortValues: sample, range shuffle through the local directory, sorted
// collects), sets it as the index (the same, with divisions), and
// hash-shuffles it by a string column. MB/s is of the table's Arrow size.
func BenchmarkSortShuffle(b *testing.B) {
	ctx := context.Background()
	e := local.New(local.WithLocalDir(b.TempDir()))
	defer e.Close()
	data, size := h2oPersisted(b, e)
	defer data.Release()
	rows := benchRows(b)
	for _, c := range []struct {
		name string
		run  func() (df.DataFrame, error)
	}{
		{"SortValues-id6-v3", func() (df.DataFrame, error) { return data.SortValues("id6", df.Desc("v3")), nil }},
		{"SetIndex-id6", func() (df.DataFrame, error) { return data.SetIndex(ctx, e, "id6") }},
		{"Shuffle-id3", func() (df.DataFrame, error) { return data.Shuffle(8, "id3"), nil }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(size)
			for range b.N {
				q, err := c.run()
				if err != nil {
					b.Fatal(err)
				}
				// Count the values of every column, so that the whole
				// result is made (every column moved) but not gathered.
				t, err := q.Count().Compute(ctx, e)
				if err != nil {
					b.Fatal(err)
				}
				if n := t.Column(0).Data().Chunk(0).(*array.Int64).Value(0); n != int64(rows) {
					b.Fatalf("%d rows, want %d", n, rows)
				}
				t.Release()
			}
			b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
		})
	}
}
