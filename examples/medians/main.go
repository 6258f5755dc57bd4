// Medians: group-by medians over a Parquet dataset larger than the memory
// the executor may use, on the in-process executor.
//
//	go run ./examples/medians                  # 4 million rows, a 16 MiB limit
//	go run ./examples/medians -rows 2e7 -limit 64
//
// The program writes a Parquet dataset (the H2O group-by table: string and
// integer keys, integer and float values) in several files, then, with the
// executor's memory limited far below the size of the data:
//
//  1. groups by id4 and aggregates (count, sum, mean): a partial
//     aggregation per row group and a tree of merges, little memory;
//  2. computes exact medians of v1, v2 and v3 per id4: the rows are
//     shuffled by id4 through files on disk, then each group's values are
//     sorted where they land;
//  3. joins the two results and prints them, with the peak memory that
//     results held and the peak size of the shuffle's files on disk.
//
// The rows pass through disk in the shuffle, so memory stays bounded by
// the shuffle's budget, not by the data; results that do not fit in the
// limit are spilled to disk and read back. The files are removed at the
// end.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/internal/h2o"
	"github.com/shoal-data/shoal/io/parquet"
	"github.com/shoal-data/shoal/local"
)

func main() {
	rows := flag.Float64("rows", 4e6, "rows of the dataset")
	limitMiB := flag.Int64("limit", 16, "memory limit of the executor, MiB")
	dir := flag.String("data", "", "directory of the dataset (default: a temporary directory, removed at the end)")
	flag.Parse()
	if err := run(int(*rows), *limitMiB<<20, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "medians:", err)
		os.Exit(1)
	}
}

func run(rows int, limit int64, dir string) error {
	ctx := context.Background()
	if dir == "" {
		tmp, err := os.MkdirTemp("", "shoal-medians")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	scratch, err := os.MkdirTemp("", "shoal-medians-spill")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)

	exec := local.New(local.WithMemoryLimit(limit), local.WithLocalDir(scratch))
	defer exec.Close()
	var spilled, spills atomic.Int64
	sub := exec.Events().Subscribe(func(evs []diagnostics.Event) {
		for _, e := range evs {
			if e.Kind == diagnostics.Spill {
				spills.Add(1)
				spilled.Add(e.Bytes)
			}
		}
	})
	defer sub.Close()

	start := time.Now()
	size, err := writeDataset(ctx, exec, dir, rows)
	if err != nil {
		return err
	}
	fmt.Printf("wrote %d rows (%.0f MiB in memory as Arrow) as Parquet to %s in %s\n",
		rows, float64(size)/(1<<20), dir, time.Since(start).Round(time.Millisecond))
	fmt.Printf("executor memory limit: %.0f MiB\n\n", float64(limit)/(1<<20))

	// Watch the disk and the memory while computing.
	watch := newWatcher(exec, scratch)
	start = time.Now()
	x, err := dataframe.ReadParquet(ctx, filepath.Join(dir, "*.parquet"))
	if err != nil {
		return err
	}
	summary := x.GroupBy("id4").Agg(dataframe.Size().As("rows"), dataframe.Sum("v1").As("sum_v1"), dataframe.Mean("v3").As("mean_v3"))
	medians := x.GroupBy("id4").Median("v1", "v2", "v3").
		Rename(map[string]string{"v1": "median_v1", "v2": "median_v2", "v3": "median_v3"})
	result := summary.Merge(medians, dataframe.MergeOptions{On: []string{"id4"}}).SortValues("id4")
	table, err := result.Compute(ctx, exec)
	diskPeak, memPeak := watch.stop()
	if err != nil {
		return err
	}
	defer table.Release()
	sub.Flush()
	fmt.Println(dataframe.FormatTable(table, 12))
	fmt.Printf("\ncomputed in %s\n", time.Since(start).Round(time.Millisecond))
	fmt.Printf("peak memory held by results: %.1f MiB (limit %.0f MiB); results spilled: %d (%.1f MiB)\n",
		float64(memPeak)/(1<<20), float64(limit)/(1<<20), spills.Load(), float64(spilled.Load())/(1<<20))
	fmt.Printf("peak size of the shuffle's files on disk: %.1f MiB (removed at the end)\n", float64(diskPeak)/(1<<20))
	fmt.Println("\nplan:")
	fmt.Println(result.Explain())
	return nil
}

// watcher samples the bytes under a directory and the memory the
// executor's results hold, for the report.
type watcher struct {
	quit chan struct{}
	done chan struct{}
	disk int64
	mem  int64
}

func newWatcher(exec *local.Executor, dir string) *watcher {
	w := &watcher{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			var n int64
			filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					if info, err := d.Info(); err == nil {
						n += info.Size()
					}
				}
				return nil
			})
			w.disk = max(w.disk, n)
			w.mem = max(w.mem, exec.Memory().Managed)
			select {
			case <-w.quit:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// stop ends the sampling and returns the peaks.
func (w *watcher) stop() (disk, mem int64) {
	close(w.quit)
	<-w.done
	return w.disk, w.mem
}

// writeDataset writes rows of the H2O table as Parquet files into dir and
// returns their size as Arrow data.
func writeDataset(ctx context.Context, exec *local.Executor, dir string, rows int) (int64, error) {
	var recs []arrow.RecordBatch
	var size int64
	err := h2o.Generate(rows, 100, 1, 500_000, func(r arrow.RecordBatch) error {
		r.Retain()
		recs = append(recs, r)
		for _, c := range r.Columns() {
			for _, b := range c.Data().Buffers() {
				if b != nil {
					size += int64(b.Len())
				}
			}
		}
		return nil
	})
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	if err != nil {
		return 0, err
	}
	_, err = dataframe.FromRecords(recs...).WriteParquet(ctx, exec, dir, dataframe.WriteOptions{
		Options: parquet.WriteOptions{Compression: "zstd", RowGroupRows: 250_000},
	})
	return size, err
}
