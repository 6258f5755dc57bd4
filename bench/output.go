package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// suiteReport is the results of one suite.
type suiteReport struct {
	name      string
	results   []caseResult
	started   time.Time
	elapsed   time.Duration
	loadStart string
	loadEnd   string
	data      string // what data the suite read
}

// report is the results of one command.
type report struct {
	cfg         config
	machine     machine
	duckVersion string
	memMethod   string
	suites      []*suiteReport
}

func (r *report) failures() int {
	n := 0
	for _, s := range r.suites {
		for _, c := range s.results {
			if c.failed {
				n++
			}
		}
	}
	return n
}

// fmtDuration writes a duration with three significant digits.
func fmtDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < time.Millisecond:
		return fmt.Sprintf("%.3gµs", float64(d)/float64(time.Microsecond))
	case d < time.Second:
		return fmt.Sprintf("%.3gms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.3gs", d.Seconds())
	}
}

func fmtBytes(b int64) string {
	switch {
	case b < 0:
		return "-"
	case b < 1<<20:
		return fmt.Sprintf("%.0f KiB", float64(b)/(1<<10))
	case b < 1<<30:
		return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
	default:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	}
}

func fmtRange(t timing) string {
	if len(t) == 0 {
		return "-"
	}
	return fmtDuration(t.min()) + " – " + fmtDuration(t.max())
}

func ratio(c caseResult) (float64, bool) {
	if len(c.shoal) == 0 || len(c.peer) == 0 {
		return 0, false
	}
	return float64(c.shoal.median()) / float64(c.peer.median()), true
}

func fmtRatio(c caseResult) string {
	r, ok := ratio(c)
	if !ok {
		return "-"
	}
	if r >= 10 {
		return fmt.Sprintf("%.0f×", r)
	}
	return fmt.Sprintf("%.2f×", r)
}

var header = []string{"case", "shoal median", "shoal min – max", "peer", "peer median", "peer min – max", "shoal/peer", "shoal peak mem", "check", "note"}

func (c caseResult) cells() []string {
	shoalMed, peerMed := "-", "-"
	if len(c.shoal) > 0 {
		shoalMed = fmtDuration(c.shoal.median())
	}
	if len(c.peer) > 0 {
		peerMed = fmtDuration(c.peer.median())
	}
	peer := c.peerName
	if peer == "" {
		peer = "-"
	}
	return []string{c.name, shoalMed, fmtRange(c.shoal), peer, peerMed, fmtRange(c.peer), fmtRatio(c), fmtBytes(c.peakMem), c.check, c.note}
}

// writeText writes the suite's results as an aligned table.
func (s *suiteReport) writeText(w io.Writer) {
	rows := [][]string{header}
	for _, c := range s.results {
		rows = append(rows, c.cells())
	}
	widths := make([]int, len(header))
	for _, r := range rows {
		for i, cell := range r {
			widths[i] = max(widths[i], len([]rune(cell)))
		}
	}
	fmt.Fprintf(w, "\n== %s (%s, %s)\n", s.name, s.data, fmtDuration(s.elapsed))
	for ri, r := range rows {
		var b strings.Builder
		for i, cell := range r {
			pad := widths[i] - len([]rune(cell))
			if i > 0 {
				b.WriteString("  ")
			}
			if i == 0 || i >= len(r)-2 || i == 3 { // text columns left-aligned
				b.WriteString(cell)
				if i < len(r)-1 {
					b.WriteString(strings.Repeat(" ", pad))
				}
			} else {
				b.WriteString(strings.Repeat(" ", pad))
				b.WriteString(cell)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
		if ri == 0 {
			total := 0
			for _, wd := range widths {
				total += wd + 2
			}
			fmt.Fprintln(w, strings.Repeat("-", total-2))
		}
	}
	for _, c := range s.results {
		if c.failed {
			fmt.Fprintf(w, "\n%s/%s: %s: %s\n", s.name, c.name, c.check, c.detail)
		}
	}
}

// writeMarkdown writes the suite's results with the machine and the
// command in a header.
func (s *suiteReport) writeMarkdown(w io.Writer, r *report) {
	fmt.Fprintf(w, "# Shoal benchmarks: %s, %s rows\n\n", s.name, rowsName(r.cfg.rows))
	fmt.Fprintf(w, "- date: %s\n", s.started.UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(w, "- machine: %s\n", r.machine)
	if s.loadStart != "" {
		fmt.Fprintf(w, "- load average (1, 5, 15 min) at start: %s, at end: %s\n", s.loadStart, s.loadEnd)
	}
	fmt.Fprintf(w, "- command: `cd bench && %s`\n", r.cfg.command)
	fmt.Fprintf(w, "- data: %s\n", s.data)
	fmt.Fprintf(w, "- peers: DuckDB %s (duckdb-go, in-process, %d threads); Shoal's local executor with %d threads\n",
		r.duckVersion, r.cfg.threads, r.cfg.threads)
	runs := "1 timed run"
	if r.cfg.runs > 1 {
		runs = fmt.Sprintf("%d timed runs", r.cfg.runs)
	}
	fmt.Fprintf(w, "- timing: one warm-up run, then %s per engine and case, each after a GC; wall-clock times, from reading the files to the answer in memory (an Arrow table for Shoal, a temporary table for DuckDB)\n", runs)
	fmt.Fprintf(w, "- shoal peak mem: %s\n", r.memMethod)
	fmt.Fprintf(w, "- check: ok = Shoal's answer equals the peer's (sorted by all columns; integers and strings exactly, floats within %g relative), for the warm-up and every timed run\n\n", floatTolerance)
	fmt.Fprintln(w, "| "+strings.Join(header, " | ")+" |")
	seps := make([]string, len(header))
	for i := range seps {
		seps[i] = "---"
		if i >= 1 && i <= 7 && i != 3 {
			seps[i] = "---:"
		}
	}
	fmt.Fprintln(w, "|"+strings.Join(seps, "|")+"|")
	for _, c := range s.results {
		cells := c.cells()
		for i := range cells {
			cells[i] = strings.ReplaceAll(cells[i], "|", `\|`)
		}
		fmt.Fprintln(w, "| "+strings.Join(cells, " | ")+" |")
	}
	first := true
	for _, c := range s.results {
		if !c.failed {
			continue
		}
		if first {
			fmt.Fprintf(w, "\n## Failures\n")
			first = false
		}
		fmt.Fprintf(w, "\n### %s\n\n```\n%s: %s\n```\n", c.name, c.check, c.detail)
	}
}

// writeCSV writes the suite's results in seconds and bytes.
func (s *suiteReport) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	secs := func(t timing, f func(timing) time.Duration) string {
		if len(t) == 0 {
			return ""
		}
		return strconv.FormatFloat(f(t).Seconds(), 'f', 6, 64)
	}
	med := func(t timing) time.Duration { return t.median() }
	lo := func(t timing) time.Duration { return t.min() }
	hi := func(t timing) time.Duration { return t.max() }
	_ = cw.Write([]string{"suite", "case", "shoal_median_s", "shoal_min_s", "shoal_max_s", "peer",
		"peer_median_s", "peer_min_s", "peer_max_s", "ratio", "shoal_peak_mem_bytes", "check", "note"})
	for _, c := range s.results {
		rat := ""
		if r, ok := ratio(c); ok {
			rat = strconv.FormatFloat(r, 'f', 4, 64)
		}
		mem := ""
		if c.peakMem >= 0 {
			mem = strconv.FormatInt(c.peakMem, 10)
		}
		_ = cw.Write([]string{s.name, c.name, secs(c.shoal, med), secs(c.shoal, lo), secs(c.shoal, hi), c.peerName,
			secs(c.peer, med), secs(c.peer, lo), secs(c.peer, hi), rat, mem, c.check, c.note})
	}
	cw.Flush()
	return cw.Error()
}

// writeFiles writes <out>/<suite>-<rows>.md and .csv.
func (s *suiteReport) writeFiles(r *report) ([]string, error) {
	if r.cfg.outDir == "" {
		return nil, nil
	}
	if err := os.MkdirAll(r.cfg.outDir, 0o755); err != nil {
		return nil, err
	}
	base := filepath.Join(r.cfg.outDir, fmt.Sprintf("%s-%s", s.name, rowsName(r.cfg.rows)))
	var md strings.Builder
	s.writeMarkdown(&md, r)
	if err := os.WriteFile(base+".md", []byte(md.String()), 0o644); err != nil {
		return nil, err
	}
	var c strings.Builder
	if err := s.writeCSV(&c); err != nil {
		return nil, err
	}
	if err := os.WriteFile(base+".csv", []byte(c.String()), 0o644); err != nil {
		return nil, err
	}
	return []string{base + ".md", base + ".csv"}, nil
}
