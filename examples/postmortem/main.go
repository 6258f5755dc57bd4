// Postmortem: find out why a computation failed on a cluster that no
// longer exists, from the telemetry it left behind.
//
//	go run ./examples/postmortem
//
// The program starts a cluster of two worker processes on this machine,
// which keeps its telemetry in an archive (a directory of Parquet files:
// every process's logs, one row per task run, transitions, events and
// metric samples). It runs two computations over its own data: the
// summaries of yesterday's files, which succeeds, and today's, where one
// file has a malformed row and its task fails. Then it closes the
// cluster, and with the cluster gone, reads the archive back with
// dataframe.ReadParquet to print:
//
//  1. the median duration of each kind of task (key prefix);
//  2. the task that failed, where, and why;
//  3. what the worker where it failed logged in the seconds around the
//     failure, with what the failing function printed on its standard
//     output.
//
// The archive is kept in a temporary directory, removed at the end,
// unless -archive names one: then it stays, and accumulates runs (the
// column cluster tells them apart).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/diagnostics/archive"
	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/local"
)

// Summary is what we learn from one file, or from many combined.
type Summary struct {
	Rows int
	Sum  float64
}

// Functions are registered by name at package level, so that the worker
// processes (this program started again) have them too.
var (
	parse   = graph.MustRegisterFunc("postmortem.parse", parseFile)
	combine = graph.MustRegisterFunc("postmortem.combine", combineSummaries)
)

// File names one file of a day: the day's seed and its number. The file
// numbered Bad on day Today holds a malformed row.
type File struct {
	Day, Number int
}

const (
	Today = 2
	Bad   = 13
)

// parseFile makes up the rows of a file and sums them up, slowly enough
// to take a few milliseconds.
func parseFile(ctx context.Context, f File) (Summary, error) {
	log := graph.Logger(ctx)
	r := rand.New(rand.NewPCG(uint64(f.Day), uint64(f.Number)))
	rows := 20_000 + r.IntN(20_000)
	var s Summary
	for i := range rows {
		if f.Day == Today && f.Number == Bad && i == rows/2 {
			// Code that prints instead of logging: the cluster keeps
			// that too.
			fmt.Printf("file %d: cannot read %q\n", f.Number, "12,5;7")
			return Summary{}, fmt.Errorf("day %d file %d row %d: malformed number %q", f.Day, f.Number, i, "12,5;7")
		}
		s.Sum += r.NormFloat64()
		s.Rows++
	}
	log.Info("file parsed", "day", f.Day, "file", f.Number, "rows", s.Rows)
	return s, nil
}

func combineSummaries(_ context.Context, parts []Summary) (Summary, error) {
	var s Summary
	for _, p := range parts {
		s.Rows += p.Rows
		s.Sum += p.Sum
	}
	return s, nil
}

func main() {
	if distributed.ServeIfWorker() {
		return
	}
	dir := flag.String("archive", "", "directory of the archive (default: a temporary one, removed at the end)")
	files := flag.Int("files", 40, "files per day")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *dir, *files); err != nil {
		fmt.Fprintln(os.Stderr, "postmortem:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer, dir string, files int) error {
	tmp, err := os.MkdirTemp("", "shoal-postmortem-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if dir == "" {
		dir = filepath.Join(tmp, "archive")
	}
	cluster, err := compute(ctx, out, tmp, dir, files)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nThe cluster is gone. Its archive, %s, says:\n\n", dir)
	return postmortem(ctx, out, dir, cluster)
}

// compute runs the two days' computations on a cluster that keeps its
// archive in dir, and returns the cluster's identity once it is closed.
func compute(ctx context.Context, out io.Writer, tmp, dir string, files int) (string, error) {
	lc, err := distributed.NewLocalCluster(ctx, distributed.LocalClusterOptions{Workers: 2, ThreadsPerWorker: 2,
		LocalDir: tmp, Archive: dir})
	if err != nil {
		return "", err
	}
	defer lc.Close()
	c, err := lc.Client(ctx)
	if err != nil {
		return "", err
	}
	defer c.Close()
	for day := Today - 1; day <= Today; day++ {
		var parts []any
		for i := range files {
			parts = append(parts, parse.Call(File{Day: day, Number: i}))
		}
		total, err := graph.Compute[Summary](ctx, c, combine.Call(graph.List(parts...)))
		if err != nil {
			fmt.Fprintf(out, "day %d: %v\n", day, err)
			continue
		}
		fmt.Fprintf(out, "day %d: %d rows, mean %.4f\n", day, total.Rows, total.Sum/float64(total.Rows))
	}
	cluster := lc.Scheduler().ID()
	c.Close()
	// Closing the cluster writes the last of the archive.
	if err := lc.Close(); err != nil {
		return "", err
	}
	return cluster, nil
}

// postmortem reads the archive of cluster in dir.
func postmortem(ctx context.Context, out io.Writer, dir, cluster string) error {
	exec := local.New()
	defer exec.Close()
	ours := dataframe.Col("cluster").Eq(cluster)

	tasks, err := dataframe.ReadParquet(ctx, archive.Glob(dir, archive.TableTasks))
	if err != nil {
		return err
	}
	medians, err := tasks.Filter(ours.And(dataframe.Col("outcome").Eq("memory"))).
		GroupBy("prefix").Median("duration_seconds").Compute(ctx, exec)
	if err != nil {
		return err
	}
	defer medians.Release()
	fmt.Fprintf(out, "Median task durations (seconds), by kind of task:\n%s\n", dataframe.FormatTable(medians, 20))

	// A task that failed on a worker; those that depend on it erred too,
	// without running.
	erred, err := tasks.Filter(ours.And(dataframe.Col("outcome").Eq("erred"))).
		SortValues("stop").Select("key", "worker", "stop", "error").Compute(ctx, exec)
	if err != nil {
		return err
	}
	defer erred.Release()
	fmt.Fprintf(out, "Tasks that failed:\n%s\n", dataframe.FormatTable(erred, 20))
	worker, stop, ok := firstRun(erred)
	if !ok {
		return errors.New("no task failed on a worker")
	}

	// What that worker logged and printed in the second before the failure
	// and the second after, and what the scheduler logged about it.
	logs, err := dataframe.ReadParquet(ctx, archive.Glob(dir, archive.TableLogs))
	if err != nil {
		return err
	}
	around, err := logs.Filter(ours.And(dataframe.Col("worker").Eq(worker)).
		And(dataframe.Col("time").Between(stop.Add(-time.Second), stop.Add(time.Second)))).
		SortValues("time").
		Select("time", "process", "level", "message", "stream", "key", "error").
		Compute(ctx, exec)
	if err != nil {
		return err
	}
	defer around.Release()
	fmt.Fprintf(out, "Worker %s around %s:\n%s", worker, stop.Format("15:04:05.000"),
		dataframe.FormatTable(around, 20))
	return nil
}

// firstRun returns the worker and the time of the first row of erred (key,
// worker, stop, error) that ran on a worker.
func firstRun(erred arrow.Table) (string, time.Time, bool) {
	r := array.NewTableReader(erred, 0)
	defer r.Release()
	for r.Next() {
		rec := r.RecordBatch()
		workers, stops := rec.Column(1), rec.Column(2).(*array.Timestamp)
		for i := range int(rec.NumRows()) {
			if w := text(workers, i); w != "" {
				return w, stops.Value(i).ToTime(arrow.Nanosecond), true
			}
		}
	}
	return "", time.Time{}, false
}

// text returns value i of a text column, dictionary-encoded or not.
func text(a arrow.Array, i int) string {
	if d, ok := a.(*array.Dictionary); ok {
		return d.Dictionary().(*array.String).Value(d.GetValueIndex(i))
	}
	return a.(*array.String).Value(i)
}
