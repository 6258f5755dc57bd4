// Command bench runs Shoal's macro benchmarks side by side with a peer in one
// process: DuckDB (in-process, through duckdb-go) for the dataframe suites,
// gonum for arrays. Every case checks that Shoal's answer equals the peer's
// before its time counts, and the results are printed as a table and written
// as markdown and CSV files.
//
//	cd bench && go run . -suite groupby -rows 1e7 -runs 3
//	cd bench && go run . -short      # every suite on tiny data, a smoke test
//
// See README.md for the suites, the data and how the figures are measured.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/shoal-data/shoal/distributed"
)

// allSuites lists the suites in the order they run.
var allSuites = []string{"io", "groupby", "join", "tutorial", "scheduler", "array"}

// config is what the command line asks for.
type config struct {
	suites     []string
	rows       int
	runs       int
	short      bool
	dataDir    string
	outDir     string // "" writes no files
	seed       uint64
	threads    int
	cases      *regexp.Regexp // nil runs every case
	formats    []string       // csv, parquet, memory
	cpuprofile string         // directory for per-case profiles of Shoal's runs; "" for none
	arrayN     int
	tasks      int
	verbose    bool
	command    string // the command line, for the results' header
}

func main() {
	if distributed.ServeIfWorker() { // started again as a worker of a local cluster
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		if err == flag.ErrHelp {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	rep, err := run(ctx, cfg, os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	if n := rep.failures(); n > 0 {
		fmt.Fprintf(os.Stderr, "bench: %d case(s) failed\n", n)
		os.Exit(1)
	}
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	suites := fs.String("suite", "all", "comma-separated suites: "+strings.Join(allSuites, ",")+", or all")
	rows := fs.String("rows", "1e7", "rows of the H2O tables (1e5, 1e7, 2.5e6, 1000000...)")
	runs := fs.Int("runs", 3, "timed runs per case, after one warm-up run")
	short := fs.Bool("short", false, "smoke test: every suite (unless -suite is given) on 1e5 rows, 1 run, small arrays")
	dataDir := fs.String("data", "data", "directory of the generated data (made once, reused)")
	outDir := fs.String("out", "results", "directory for <suite>-<rows>.md and .csv; empty for none")
	seed := fs.Uint64("seed", 1, "seed of the data generators")
	threads := fs.Int("threads", runtime.GOMAXPROCS(0), "threads of both engines (Shoal's pool and DuckDB's threads)")
	cases := fs.String("cases", "", "regular expression: run only the cases whose \"suite/case\" name matches")
	formats := fs.String("formats", "csv,parquet,memory", "sources of the groupby suite: csv, parquet, memory")
	cpuprofile := fs.String("cpuprofile", "", "directory: write a CPU profile of Shoal's timed runs of each case")
	arrayN := fs.Int("array-n", 2000, "side of the square matrices of the array suite")
	tasks := fs.Int("tasks", 100_000, "tasks per graph of the scheduler suite")
	verbose := fs.Bool("v", false, "log every run and check to stderr")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	cfg := config{runs: *runs, short: *short, dataDir: *dataDir, outDir: *outDir, seed: *seed,
		threads: *threads, cpuprofile: *cpuprofile, arrayN: *arrayN, tasks: *tasks, verbose: *verbose,
		command: "go run . " + strings.Join(args, " ")}
	n, err := parseRows(*rows)
	if err != nil {
		return config{}, err
	}
	cfg.rows = n
	if cfg.short {
		if !set["rows"] {
			cfg.rows = 100_000
		}
		if !set["runs"] {
			cfg.runs = 1
		}
		if !set["array-n"] {
			cfg.arrayN = 200
		}
		if !set["tasks"] {
			cfg.tasks = 10_000
		}
	}
	if *suites == "all" {
		cfg.suites = allSuites
	} else {
		for s := range strings.SplitSeq(*suites, ",") {
			s = strings.TrimSpace(s)
			if !slices.Contains(allSuites, s) {
				return config{}, fmt.Errorf("unknown suite %q (have %s)", s, strings.Join(allSuites, ", "))
			}
			if !slices.Contains(cfg.suites, s) {
				cfg.suites = append(cfg.suites, s)
			}
		}
	}
	for f := range strings.SplitSeq(*formats, ",") {
		f = strings.TrimSpace(f)
		if f != "csv" && f != "parquet" && f != "memory" {
			return config{}, fmt.Errorf("unknown format %q (have csv, parquet, memory)", f)
		}
		cfg.formats = append(cfg.formats, f)
	}
	if *cases != "" {
		re, err := regexp.Compile(*cases)
		if err != nil {
			return config{}, fmt.Errorf("-cases: %w", err)
		}
		cfg.cases = re
	}
	if cfg.runs < 1 {
		return config{}, fmt.Errorf("-runs %d: want at least 1", cfg.runs)
	}
	if cfg.threads < 1 {
		return config{}, fmt.Errorf("-threads %d: want at least 1", cfg.threads)
	}
	if cfg.arrayN < 2 || cfg.tasks < 1 {
		return config{}, fmt.Errorf("-array-n %d, -tasks %d: too small", cfg.arrayN, cfg.tasks)
	}
	return cfg, nil
}

// parseRows reads a row count written as an integer or in scientific
// notation ("1e7", "2.5e6").
func parseRows(s string) (int, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 1 || f > 1e10 || f != float64(int64(f)) {
		return 0, fmt.Errorf("-rows %q: want a whole number of rows between 1 and 1e10", s)
	}
	return int(f), nil
}

// rowsName writes a row count the way the H2O benchmark names its tables:
// 1e7, 2.5e6, and plain digits when that is shorter.
func rowsName(n int) string {
	s := strconv.FormatFloat(float64(n), 'e', -1, 64) // "1e+07", "2.5e+06"
	mant, exp, _ := strings.Cut(s, "e")
	e, _ := strconv.Atoi(exp)
	sci := mant + "e" + strconv.Itoa(e)
	if plain := strconv.Itoa(n); len(plain) <= len(sci) {
		return plain
	}
	return sci
}
