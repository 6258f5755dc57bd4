package csv

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/internal/h2o"
	"github.com/shoal-data/shoal/io/storage"
)

var (
	benchOnce sync.Once
	benchPath string
	benchErr  error
)

// benchFile writes the H2O group-by table of SHOAL_BENCH_ROWS rows (default
// 1e6) once per run.
func benchFile(b testing.TB) (string, int64) {
	benchOnce.Do(func() {
		rows := 1_000_000
		if s := os.Getenv("SHOAL_BENCH_ROWS"); s != "" {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				benchErr = err
				return
			}
			rows = int(f)
		}
		dir, err := os.MkdirTemp("", "shoal-csv-bench")
		if err != nil {
			benchErr = err
			return
		}
		benchPath = filepath.Join(dir, "G1.csv")
		f, err := os.Create(benchPath)
		if err != nil {
			benchErr = err
			return
		}
		w := bufio.NewWriter(f)
		if benchErr = h2o.WriteCSV(w, rows, h2o.DefaultK, 1); benchErr == nil {
			benchErr = w.Flush()
		}
		f.Close()
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	st, err := os.Stat(benchPath)
	if err != nil {
		b.Fatal(err)
	}
	return benchPath, st.Size()
}

// readAll plans and reads every block with workers goroutines.
func readAll(ctx context.Context, path string, opts Options, ro ReadOptions, workers int) (int64, error) {
	plan, err := PlanRead(ctx, storage.Local{}, []string{path}, opts)
	if err != nil {
		return 0, err
	}
	var (
		mu    sync.Mutex
		rows  int64
		first error
		wg    sync.WaitGroup
		next  = make(chan int, len(plan.Blocks))
	)
	for i := range plan.Blocks {
		next <- i
	}
	close(next)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				rec, _, err := ReadBlock(ctx, storage.Local{}, plan, i, ro)
				mu.Lock()
				if err != nil && first == nil {
					first = err
				}
				if rec != nil {
					rows += rec.NumRows()
					rec.Release()
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return rows, first
}

func BenchmarkRead(b *testing.B) {
	path, size := benchFile(b)
	ctx := context.Background()
	cases := []struct {
		name string
		opts Options
		ro   ReadOptions
	}{
		{"all", Options{}, ReadOptions{}},
		{"all_recycled", Options{}, ReadOptions{Allocator: &poolAllocator{}}},
		{"dict_id1_id2", Options{Dictionary: []string{"id1", "id2"}}, ReadOptions{}},
		{"id1_v1", Options{}, ReadOptions{Columns: []string{"id1", "v1"}}},
		{"no_prescan", Options{NoNewlinesInQuotes: true}, ReadOptions{}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(size)
			cpu0 := cpuTime()
			for b.Loop() {
				if _, err := readAll(ctx, path, tc.opts, tc.ro, 2); err != nil {
					b.Fatal(err)
				}
			}
			// CPU time per byte does not depend on other processes' load as
			// much as elapsed time does.
			if cpu := cpuTime() - cpu0; cpu > 0 {
				b.ReportMetric(float64(size)*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
			}
		})
	}
}

func BenchmarkPlan(b *testing.B) {
	path, size := benchFile(b)
	ctx := context.Background()
	b.SetBytes(size)
	for b.Loop() {
		if _, err := PlanRead(ctx, storage.Local{}, []string{path}, Options{BlockSize: 16 << 20}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWrite(b *testing.B) {
	var recs []arrow.RecordBatch
	if err := h2o.Generate(1_000_000, h2o.DefaultK, 1, 65536, func(r arrow.RecordBatch) error {
		recs = append(recs, r)
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	var n countingWriter
	for b.Loop() {
		n = 0
		w := NewWriter(&n, h2o.Schema(), WriteOptions{})
		for _, r := range recs {
			if err := w.Write(r); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(n))
}

type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}
