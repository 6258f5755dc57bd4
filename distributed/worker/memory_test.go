package worker

import (
	"strings"
	"testing"
	"time"

	"github.com/shoal-data/shoal/graph"
)

// TestMemoryPressure feeds a worker readings of its process memory: above
// the pause threshold it spills what it holds before it pauses; paused
// with nothing left to free and no task running, it fails the tasks
// waiting to start, saying why, instead of waiting for ever; below the
// threshold it resumes with its usual spill target.
func TestMemoryPressure(t *testing.T) {
	const limit = 100 << 20
	w, err := New(Config{Scheduler: "127.0.0.1:1", Threads: 1, InProcess: true, MemoryLimit: limit,
		PauseFraction: 0.8, TargetFraction: 0.6, MemoryInterval: time.Hour, LocalDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	above := w.pauseAbove()

	// Values held: 30 MiB, under the 60 MiB target.
	w.mu.Lock()
	for i := range 3 {
		w.store.put(graph.NewKey("v", "", i), make([]byte, 10<<20), 10<<20)
	}
	w.mu.Unlock()
	// The process is 20 MiB above the threshold: about 28 MiB of values
	// go to disk, and the worker pauses.
	w.checkMemory(above + 20<<20)
	deadline := time.Now().Add(30 * time.Second)
	for {
		w.mu.Lock()
		managed, spilling, paused := w.store.managed, w.spilling, w.state.Paused()
		w.mu.Unlock()
		if !spilling && managed <= 10<<20 {
			if !paused {
				t.Fatal("not paused above the threshold")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %d bytes in memory (spilling %v)", managed, spilling)
		}
		time.Sleep(5 * time.Millisecond) // the spill runs on its own goroutine
	}

	// Drop what is left, and queue two tasks: paused, they wait.
	w.mu.Lock()
	w.store.dropAll()
	w.handle(&RunTask{ID: 1, Task: &graph.Task{Key: "a", Op: "x"}}, &RunTask{ID: 2, Task: &graph.Task{Key: "b", Op: "x"}})
	w.outDone = nil
	w.mu.Unlock()
	for i := range stuckChecks {
		w.mu.Lock()
		n := len(w.outDone)
		w.mu.Unlock()
		if n != 0 {
			t.Fatalf("tasks failed after %d checks, want %d", i, stuckChecks)
		}
		w.checkMemory(above + 20<<20)
	}
	w.mu.Lock()
	done := w.outDone
	w.mu.Unlock()
	if len(done) != 2 {
		t.Fatalf("%d tasks reported, want the 2 waiting", len(done))
	}
	for _, d := range done {
		if d.Error == nil || !strings.Contains(d.Error.Message, "holds no value it could spill and runs no task") ||
			!strings.Contains(d.Error.Message, "raise the worker's memory limit") {
			t.Errorf("%s: %v", d.Key, d.Error)
		}
	}

	// Back under the threshold: it resumes, with its usual target.
	w.checkMemory(above / 2)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state.Paused() || w.store.limit != w.spillTarget {
		t.Errorf("paused %v, spill target %d, want %d", w.state.Paused(), w.store.limit, w.spillTarget)
	}
}
