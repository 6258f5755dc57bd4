package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/shoal-data/shoal/local"
)

// suiteFunc prepares a suite's data and returns its cases, a description of
// its data, and a function that frees what the suite holds.
type suiteFunc func(ctx context.Context, h *harness) (cases []*benchCase, data string, cleanup func(), err error)

var suites = map[string]suiteFunc{
	"io":        ioSuite,
	"groupby":   groupbySuite,
	"join":      joinSuite,
	"tutorial":  tutorialSuite,
	"scheduler": schedulerSuite,
	"array":     arraySuite,
}

// run runs the configured suites, printing each suite's table to stdout
// and progress to stderr, and writing the results files. It returns an error
// only when the benchmarks cannot run at all; failed cases are in the
// report.
func run(ctx context.Context, cfg config, stdout, stderr io.Writer) (*report, error) {
	d, err := openDuck(ctx, cfg.threads)
	if err != nil {
		return nil, err
	}
	defer d.close()
	exec := local.New(local.WithThreads(cfg.threads))
	defer exec.Close()
	h := &harness{cfg: cfg, duck: d, exec: exec, meter: newPeakMeter(), stderr: stderr}
	rep := &report{cfg: cfg, machine: describeMachine(), duckVersion: d.version, memMethod: h.meter.method()}
	h.logf("bench: %s; DuckDB %s", rep.machine, d.version)
	for _, name := range cfg.suites {
		sr, err := h.runSuite(ctx, name)
		if err != nil {
			return rep, fmt.Errorf("suite %s: %w", name, err)
		}
		if len(sr.results) == 0 {
			continue // -cases left out every case
		}
		rep.suites = append(rep.suites, sr)
		sr.writeText(stdout)
		files, err := sr.writeFiles(rep)
		if err != nil {
			return rep, fmt.Errorf("suite %s: %w", name, err)
		}
		for _, f := range files {
			h.logf("wrote %s", f)
		}
	}
	return rep, nil
}

func (h *harness) runSuite(ctx context.Context, name string) (*suiteReport, error) {
	sr := &suiteReport{name: name, started: time.Now(), loadStart: loadAverage()}
	cases, data, cleanup, err := suites[name](ctx, h)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	sr.data = data
	for _, c := range cases {
		if h.cfg.cases != nil && !h.cfg.cases.MatchString(c.fullName()) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		start := time.Now()
		res := h.runCase(ctx, c)
		h.logf("%-40s %-8s shoal %-8s %s %-8s (%s)", c.fullName(), res.check, fmtDuration(res.shoal.median()),
			orDash(c.peerName), fmtDuration(res.peer.median()), fmtDuration(time.Since(start)))
		if res.failed {
			h.logf("  %s", res.detail)
		}
		sr.results = append(sr.results, res)
	}
	sr.elapsed = time.Since(sr.started)
	sr.loadEnd = loadAverage()
	return sr, nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
