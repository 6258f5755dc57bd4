//go:build unix

package dirlock

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSweepDirs: a worker removes the directories that killed workers
// left (their lock file is there, unlocked), and nothing else: not the
// directory of a running worker, not one without a lock file, not other
// files.
func TestSweepDirs(t *testing.T) {
	base := t.TempDir()
	mk := func(name string) string {
		d := filepath.Join(base, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "spilled"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		return d
	}
	killed := mk("shoal-worker-123-1")
	l, err := Lock(killed)
	if err != nil {
		t.Fatal(err)
	}
	l.Close() // as when the process ends
	running := mk("shoal-worker-124-2")
	held, err := Lock(running)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	old := mk("shoal-worker-125-3") // no lock file: not judged
	other := mk("shoal-local-126-4")
	if err := os.WriteFile(filepath.Join(other, Name), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if stale(running) {
		t.Fatal("the directory of a running worker is taken as stale")
	}
	removed, err := Sweep(filepath.Join(base, "shoal-worker-*-*"))
	if err != nil || !slices.Equal(removed, []string{killed}) {
		t.Fatalf("sweepDirs = %v, %v; want only %s", removed, err, killed)
	}
	for _, d := range []string{running, old, other} {
		if _, err := os.Stat(filepath.Join(d, "spilled")); err != nil {
			t.Errorf("%s: %v", d, err)
		}
	}
	if _, err := os.Stat(killed); !os.IsNotExist(err) {
		t.Errorf("%s is still there: %v", killed, err)
	}
}
