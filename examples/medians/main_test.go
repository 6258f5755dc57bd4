package main

import "testing"

// TestRun runs the example on a small dataset with a tiny memory limit.
func TestRun(t *testing.T) {
	if err := run(200_000, 1<<20, t.TempDir()); err != nil {
		t.Fatal(err)
	}
}
