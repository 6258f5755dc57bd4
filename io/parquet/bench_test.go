package parquet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/internal/h2o"
	"github.com/shoal-data/shoal/io/storage"
)

// The H2O group-by table, written once per test binary into a temporary
// directory: SHOAL_BENCH_ROWS rows (default 1e6), row groups of 2^18 rows.

var (
	benchOnce sync.Once
	benchDir  string
	benchFile string
	benchRows int
	benchErr  error
)

func benchData(b *testing.B) (string, int) {
	b.Helper()
	benchOnce.Do(func() {
		benchRows = 1_000_000
		if s := os.Getenv("SHOAL_BENCH_ROWS"); s != "" {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				benchErr = fmt.Errorf("SHOAL_BENCH_ROWS=%q: %w", s, err)
				return
			}
			benchRows = int(f)
		}
		benchDir, benchErr = os.MkdirTemp("", "shoal-parquet-bench-")
		if benchErr != nil {
			return
		}
		benchFile = filepath.Join(benchDir, "h2o.parquet")
		ctx := context.Background()
		w, err := NewWriter(ctx, storage.Local{}, benchFile, h2o.Schema(), WriteOptions{RowGroupRows: 1 << 18})
		if err != nil {
			benchErr = err
			return
		}
		start := time.Now()
		err = h2o.Generate(benchRows, h2o.DefaultK, 42, 1<<16, w.Write)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		benchErr = err
		if err == nil {
			st, _ := os.Stat(benchFile)
			fmt.Fprintf(os.Stderr, "h2o: %d rows written to %s (%d MB) in %s\n", benchRows, benchFile, st.Size()>>20, time.Since(start).Round(time.Millisecond))
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchFile, benchRows
}

func removeBenchData() {
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
}

// readAll reads every part of plan with workers goroutines and returns the
// bytes of the records.
func readAll(ctx context.Context, plan *Plan, workers int) (int64, error) {
	var (
		mu    sync.Mutex
		next  int
		bytes int64
		first error
		wg    sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				next++
				stop := i >= len(plan.Parts) || first != nil
				mu.Unlock()
				if stop {
					return
				}
				rec, err := ReadPart(ctx, storage.Local{}, plan, i, memory.DefaultAllocator)
				mu.Lock()
				if err != nil && first == nil {
					first = err
				}
				if rec != nil {
					bytes += recordBytes(rec)
					rec.Release()
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return bytes, first
}

func recordBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, c := range rec.Columns() {
		for _, buf := range c.Data().Buffers() {
			if buf != nil {
				n += int64(buf.Len())
			}
		}
		if c.DataType().ID() == arrow.DICTIONARY {
			for _, buf := range c.Data().Dictionary().Buffers() {
				if buf != nil {
					n += int64(buf.Len())
				}
			}
		}
	}
	return n
}

// BenchmarkReadH2O reads the H2O table on 2 goroutines, all columns and
// the projection (id1, v1) of "sum v1 group by id1". Metrics: rows/s,
// file MB/s (file bytes per second, whole file) and arrow-MB/s (bytes of
// the records made).
func BenchmarkReadH2O(b *testing.B) {
	file, rows := benchData(b)
	st, err := os.Stat(file)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		cols []string
	}{
		{"all", nil},
		{"id1,v1", []string{"id1", "v1"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			var arrowBytes int64
			start := time.Now()
			for b.Loop() {
				plan, err := PlanRead(ctx, storage.Local{}, []string{file}, Options{Columns: bc.cols, TargetBytes: -1})
				if err != nil {
					b.Fatal(err)
				}
				n, err := readAll(ctx, plan, 2)
				if err != nil {
					b.Fatal(err)
				}
				arrowBytes = n
			}
			sec := time.Since(start).Seconds() / float64(b.N)
			b.ReportMetric(float64(rows)/sec, "rows/s")
			b.ReportMetric(float64(st.Size())/sec/1e6, "file-MB/s")
			b.ReportMetric(float64(arrowBytes)/sec/1e6, "arrow-MB/s")
		})
	}
}

// BenchmarkWriteH2O writes the H2O table (generation included).
func BenchmarkWriteH2O(b *testing.B) {
	_, rows := benchData(b)
	dir := b.TempDir()
	ctx := context.Background()
	start := time.Now()
	for b.Loop() {
		w, err := NewWriter(ctx, storage.Local{}, filepath.Join(dir, "w.parquet"), h2o.Schema(), WriteOptions{RowGroupRows: 1 << 18})
		if err != nil {
			b.Fatal(err)
		}
		if err := h2o.Generate(rows, h2o.DefaultK, 42, 1<<16, w.Write); err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)/(time.Since(start).Seconds()/float64(b.N)), "rows/s")
}
