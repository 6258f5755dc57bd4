package main

import (
	"context"
	"io"
	"os"
	"testing"

	"github.com/shoal-data/shoal/distributed"
)

func TestMain(m *testing.M) {
	if distributed.ServeIfWorker() { // the scheduler suite's local cluster
		return
	}
	os.Exit(m.Run())
}

// TestShort runs every suite in -short mode (tiny data, one timed run) and
// fails if a case fails: a Shoal answer that differs from DuckDB's, or an
// error. It is the smoke test of .ci/run.

func TestShort(t *testing.T) {
	cfg, err := parseFlags([]string{"-short", "-data", t.TempDir(), "-out", ""}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var out io.Writer = io.Discard
	if testing.Verbose() {
		out = os.Stdout
	}
	rep, err := run(context.Background(), cfg, out, out)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.suites {
		for _, c := range s.results {
			if c.failed {
				t.Errorf("%s/%s: %s: %s", s.name, c.name, c.check, c.detail)
			}
		}
	}
	if len(rep.suites) != len(allSuites) {
		t.Errorf("%d suites ran, want %d", len(rep.suites), len(allSuites))
	}
}
