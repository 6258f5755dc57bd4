package archive_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"time"

	"github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/diagnostics/archive"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/local"
)

func Example() {
	dir, err := os.MkdirTemp("", "archive")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// What an executor does: its events and its logs go to the archive.
	w, err := archive.Open(dir, archive.WithCluster("example"))
	if err != nil {
		log.Fatal(err)
	}
	hub := diagnostics.NewHub()
	w.Attach(hub)
	logger := slog.New(w.LogHandler(nil, archive.ProcessWorker, "10.0.0.7:4000"))
	t0 := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	for i, ms := range []int{120, 80, 100} {
		key := graph.NewKey("load", "3fa2c1d0", i)
		hub.Publish(diagnostics.Event{Time: t0, Kind: diagnostics.TaskTransition, Compute: 1, Key: key,
			From: "processing", To: "memory", Worker: "10.0.0.7:4000", Start: t0,
			Duration: time.Duration(ms) * time.Millisecond})
	}
	sum := graph.NewKey("sum", "9be01f2a")
	logger.Error("task failed", "key", sum, "error", "no space left on device")
	hub.Publish(diagnostics.Event{Time: t0, Kind: diagnostics.TaskTransition, Compute: 1, Key: sum,
		From: "processing", To: "erred", Worker: "10.0.0.7:4000", Start: t0, Duration: 2 * time.Second,
		Err: "no space left on device"})
	hub.Close()
	if err := w.Close(); err != nil { // writes what is left
		log.Fatal(err)
	}

	// After the run: read the tables back with Shoal.
	ctx := context.Background()
	exec := local.New()
	defer exec.Close()
	tasks, err := dataframe.ReadParquet(ctx, archive.Glob(dir, archive.TableTasks))
	if err != nil {
		log.Fatal(err)
	}
	medians, err := tasks.GroupBy("prefix").Median("duration_seconds").Compute(ctx, exec)
	if err != nil {
		log.Fatal(err)
	}
	defer medians.Release()
	fmt.Print(dataframe.FormatTable(medians, 10))

	logs, err := dataframe.ReadParquet(ctx, archive.Glob(dir, archive.TableLogs))
	if err != nil {
		log.Fatal(err)
	}
	errs, err := logs.Filter(dataframe.Col("level").Eq("ERROR")).
		Select(dataframe.Col("worker"), dataframe.Col("key"), dataframe.Col("error")).Compute(ctx, exec)
	if err != nil {
		log.Fatal(err)
	}
	defer errs.Release()
	fmt.Print(dataframe.FormatTable(errs, 10))
	// Output:
	// prefix  duration_seconds
	// load                 0.1
	// sum                    2
	// [2 rows x 2 columns]
	// worker         key           error
	// 10.0.0.7:4000  sum-9be01f2a  no space left on device
	// [1 rows x 3 columns]
}
