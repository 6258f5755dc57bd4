// Quickstart: Shoal on a small dataset, on the in-process executor.
//
//	go run ./examples/quickstart
//
// The program writes its own data (eight CSV files of sensor readings) to a
// temporary directory, then:
//
//  1. reads them as a lazy DataFrame, filters, groups and aggregates, prints
//     the result and the optimized plan (Explain);
//  2. does a similar job with custom functions in a task graph of its own
//     (graph.RegisterFunc, Call, List), with a progress bar, and prints the
//     slowest tasks;
//
// and says where to look next.
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
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/local"
)

// Summary is what we learn from one file, or from many combined.
type Summary struct {
	Files int
	Rows  int
	Sum   float64
	Min   float64
	Max   float64
}

// Mean is the average reading.
func (s Summary) Mean() float64 { return s.Sum / float64(s.Rows) }

// Functions are registered by name, once, at package level: every process
// that runs the graph (here just this one) knows them by that name.
var (
	load    = graph.MustRegisterFunc("quickstart.load", loadFile)
	combine = graph.MustRegisterFunc("quickstart.combine", combineSummaries)
)

// loadFile reads one CSV file of "time,sensor,reading" rows.
func loadFile(ctx context.Context, path string) (Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return Summary{}, err
	}
	defer f.Close()
	s := Summary{Files: 1, Min: math.Inf(1), Max: math.Inf(-1)}
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		if line == 1 {
			continue // header
		}
		if line%100_000 == 0 && ctx.Err() != nil {
			return Summary{}, ctx.Err()
		}
		fields := strings.Split(sc.Text(), ",")
		if len(fields) != 3 {
			return Summary{}, fmt.Errorf("%s line %d: want 3 fields, got %d", path, line, len(fields))
		}
		v, err := strconv.ParseFloat(fields[2], 64)
		if err != nil {
			return Summary{}, fmt.Errorf("%s line %d column 3: %w", path, line, err)
		}
		s.Rows++
		s.Sum += v
		s.Min = min(s.Min, v)
		s.Max = max(s.Max, v)
	}
	return s, sc.Err()
}

func combineSummaries(_ context.Context, parts []Summary) (Summary, error) {
	s := Summary{Min: math.Inf(1), Max: math.Inf(-1)}
	for _, p := range parts {
		s.Files += p.Files
		s.Rows += p.Rows
		s.Sum += p.Sum
		s.Min = min(s.Min, p.Min)
		s.Max = max(s.Max, p.Max)
	}
	return s, nil
}

// makeData writes n files of rows readings each and returns their paths.
func makeData(dir string, n, rows int) ([]string, error) {
	r := rand.New(rand.NewPCG(42, 1))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var paths []string
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("readings-%d.csv", i))
		f, err := os.Create(p)
		if err != nil {
			return nil, err
		}
		w := bufio.NewWriter(f)
		fmt.Fprintln(w, "time,sensor,reading")
		for j := range rows {
			t := start.Add(time.Duration(i*rows+j) * time.Second)
			fmt.Fprintf(w, "%s,s%d,%.3f\n", t.Format(time.RFC3339), r.IntN(16), 20+5*r.NormFloat64())
		}
		if err := w.Flush(); err != nil {
			f.Close()
			return nil, err
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx := context.Background()
	logger := slog.New(diagnostics.NewConsoleHandler(os.Stderr, slog.LevelInfo))

	dir, err := os.MkdirTemp("", "shoal-quickstart-")
	if err != nil {
		return err
	}
	paths, err := makeData(dir, 8, 200_000)
	if err != nil {
		return err
	}
	logger.Info("wrote example data", "files", len(paths), "dir", dir)

	// One executor runs everything: a pool of goroutines in this process,
	// with a progress bar on stderr and a recorder that keeps every event.
	exec := local.New(local.WithLogger(logger), local.WithProgress(os.Stderr))
	rec := diagnostics.NewRecorder()
	rec.Attach(exec.Events())

	// 1. A DataFrame: read the CSV files lazily (types are inferred from a
	// sample; "time" is parsed as a timestamp), keep the warm readings,
	// aggregate per sensor. Nothing is read until Compute.
	readings, err := dataframe.ReadCSV(ctx, filepath.Join(dir, "readings-*.csv"),
		dataframe.CSVOptions{ParseDates: map[string]string{"time": ""}})
	if err != nil {
		return err
	}
	fmt.Printf("%s\n\n", readings)
	warm := readings.
		Filter(dataframe.Col("reading").Gt(25)).
		GroupBy("sensor").
		Agg(dataframe.Count("reading").As("n"), dataframe.Mean("reading").As("mean"),
			dataframe.Max("reading").As("max"), dataframe.Max("time").As("last_seen"))
	started := time.Now()
	table, err := warm.Compute(ctx, exec)
	if err != nil {
		return err
	}
	fmt.Printf("warm readings per sensor (%v):\n%s\n", time.Since(started).Round(time.Millisecond),
		dataframe.FormatTable(table, 8))
	table.Release()
	fmt.Printf("the plan (only the columns used are read; the filter runs while parsing):\n%s\n", warm.Explain())

	// 2. A task graph of your own functions: one load per file, then one
	// combine. Nothing runs yet.
	parts := make([]any, len(paths))
	for i, p := range paths {
		parts[i] = load.Call(p)
	}
	total := combine.Call(graph.List(parts...))

	// A picture of the graph, for Graphviz: dot -Tsvg graph.dot > graph.svg
	g, err := total.Graph()
	if err != nil {
		return err
	}
	dotPath := filepath.Join(dir, "graph.dot")
	if f, err := os.Create(dotPath); err == nil {
		graph.WriteDOT(f, g)
		f.Close()
	}
	started = time.Now()
	s, err := graph.Compute[Summary](ctx, exec, total)
	if err != nil {
		return err
	}
	elapsed := time.Since(started)
	exec.Close()
	rec.Close()

	fmt.Printf("%d files, %d readings in %v on %d threads\n", s.Files, s.Rows, elapsed.Round(time.Millisecond), exec.Threads())
	fmt.Printf("mean %.3f  min %.3f  max %.3f\n\n", s.Mean(), s.Min, s.Max)

	// The task stream: which task ran where, and for how long.
	stream := rec.TaskStream()
	slices.SortFunc(stream, func(a, b diagnostics.TaskRecord) int { return int(b.Duration - a.Duration) })
	fmt.Println("slowest tasks of both computations:")
	for _, t := range stream[:min(3, len(stream))] {
		fmt.Printf("  %-40s %-8s %8v  %d bytes\n", t.Key, t.Worker, t.Duration.Round(time.Microsecond), t.Bytes)
	}

	eventsPath := filepath.Join(dir, "events.jsonl")
	if f, err := os.Create(eventsPath); err == nil {
		diagnostics.WriteJSONLines(f, rec.Events())
		f.Close()
	}
	fmt.Printf("\nwhere to look next:\n")
	fmt.Printf("  the data and a picture of the graph:  %s (graph.dot)\n", dir)
	fmt.Printf("  every event of the run, as JSON lines: %s\n", eventsPath)
	fmt.Printf("  the API and more examples:             README.md, examples/etl, go doc github.com/shoal-data/shoal/dataframe\n")
	fmt.Printf("  (remove the data with: rm -r %s)\n", dir)
	return nil
}
