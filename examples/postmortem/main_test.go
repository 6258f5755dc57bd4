package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/shoal-data/shoal/distributed"
)

func TestMain(m *testing.M) {
	if distributed.ServeIfWorker() {
		return
	}
	os.Exit(m.Run())
}

// TestRun runs the example on a few files, and finds in what it read from
// the archive the medians, the failure and the worker's lines around it.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	var out bytes.Buffer
	if err := run(context.Background(), &out, t.TempDir(), 16); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"day 1: ", "rows, mean",
		`day 2 file 13 row`, `malformed number "12,5;7"`,
		"Median task durations", "postmortem.parse ", "postmortem.combine ",
		"Tasks that failed:", "task failed",
		`cannot read "12,5;7"`, "stdout",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
