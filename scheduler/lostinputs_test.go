package scheduler

import (
	"errors"
	"strings"
	"testing"

	"github.com/shoal-data/shoal/graph"
)

// TestLostInputs fails a collect of a shuffle-like graph because the files
// a split left are gone: the split runs again, the collect after it, and
// the result comes, unless that happens more than AllowedFailures times
// or the error names a key that is not a dependency.
func TestLostInputs(t *testing.T) {
	tests := []struct {
		name      string
		keys      []graph.Key
		losses    int // failures of collects with the error
		wantErr   bool
		wantSplit int // runs of s1
	}{
		{"lost once", []graph.Key{"s1"}, 1, false, 2},
		{"lost both", []graph.Key{"s0", "s1"}, 1, false, 2},
		{"lost three times", []graph.Key{"s1"}, 3, false, 4},
		{"lost too often", []graph.Key{"s1"}, 4, true, 4},
		{"not a dependency", []graph.Key{"x"}, 1, true, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newSim(t, Config{})
			m.addWorker("w1", 1, nil)
			m.addWorker("w2", 1, nil)
			m.submit("c", gb(t, "s0", "s1", "c0:s0,s1", "c1:s0,s1", "out:c0,c1"), "out")
			splitRuns := 0
			losses := 0
			for {
				w, k, ok := m.next()
				if !ok {
					break
				}
				if k == "s1" {
					splitRuns++
				}
				if strings.HasPrefix(string(k), "c") && losses < tc.losses {
					losses++
					m.handle(&TaskFailed{Key: k, ID: m.ids[k], Worker: w,
						Err: &graph.LostInputsError{Keys: tc.keys, Err: errors.New("shard gone")}})
					continue
				}
				m.hold(w, k)
				m.handle(&TaskFinished{Key: k, ID: m.ids[k], Worker: w, Size: 100})
			}
			err := m.errs["c"]["out"]
			var le *graph.LostInputsError
			switch {
			case tc.wantErr && !errors.As(err, &le):
				t.Errorf("error %v, want the LostInputsError", err)
			case !tc.wantErr && (err != nil || m.results["c"]["out"] != 1):
				t.Errorf("error %v, results %v; want out", err, m.results["c"])
			}
			if splitRuns != tc.wantSplit {
				t.Errorf("s1 ran %d times, want %d", splitRuns, tc.wantSplit)
			}
			if err := m.s.Validate(); err != nil {
				t.Fatal(err)
			}
			m.handle(&KeysReleased{Client: "c"})
			if n := m.s.NumTasks(); n != 0 {
				t.Errorf("%d tasks left after release", n)
			}
			for w, held := range m.held {
				if len(held) > 0 {
					t.Errorf("values left on %s: %v", w, held)
				}
			}
		})
	}
}
