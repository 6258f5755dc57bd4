package scheduler

import (
	"fmt"
	"slices"
	"testing"

	"github.com/shoal-data/shoal/graph"
)

// TestDataMissing has a worker fail to fetch a value from the worker that
// computed it: the scheduler forgets the copies the fetch was to make and
// the ones the peer could not serve, computes the value again only when
// no copy is left, and the task that needed it runs again.
func TestDataMissing(t *testing.T) {
	tests := []struct {
		name     string
		missing  []string // workers reported not to hold a
		wantRuns int      // runs of a
	}{
		{"the peer lost it", []string{"w2", "w1"}, 2},
		{"only the fetch failed", []string{"w2"}, 1},
		{"and a worker that never held it", []string{"w2", "w3"}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newSim(t, Config{})
			m.addWorker("w1", 1, nil)
			m.addWorker("w2", 1, nil)
			m.addWorker("w3", 1, nil)
			g := graph.New()
			g.Add(&graph.Task{Key: "a", Op: "op", Annotations: graph.Annotations{Workers: []string{"w1"}}})
			g.Add(&graph.Task{Key: "b", Op: "op", Deps: []graph.Key{"a"}, Annotations: graph.Annotations{Workers: []string{"w2"}}})
			m.submit("c", g, "b")
			runsOfA := 0
			for step := 0; ; step++ {
				w, k, ok := m.next()
				if !ok {
					break
				}
				if k == "a" {
					runsOfA++
				}
				if k == "b" && step == 1 {
					// w2 was told to hold a (by the fetch) but could not
					// get it.
					delete(m.held["w2"], "a")
					for _, x := range tc.missing {
						if x == "w1" {
							delete(m.held["w1"], "a")
						}
						m.handle(&DataMissing{Worker: x, Keys: []graph.Key{"a"}})
					}
					m.handle(&TaskFailed{Key: k, ID: m.ids[k], Worker: w, Err: fmt.Errorf("fetch a: %w", ErrMissingData)})
					continue
				}
				m.hold(w, k)
				m.handle(&TaskFinished{Key: k, ID: m.ids[k], Worker: w, Size: 100})
			}
			if err := m.errs["c"]["b"]; err != nil || m.results["c"]["b"] != 1 {
				t.Fatalf("error %v, results %v", err, m.results["c"])
			}
			if runsOfA != tc.wantRuns {
				t.Errorf("a ran %d times, want %d: %+v", runsOfA, tc.wantRuns, m.s.Story("a", "b"))
			}
			if ti, ok := m.s.Task("a"); ok && slices.Contains(ti.Who, "w3") {
				t.Errorf("a held by %v", ti.Who)
			}
			if err := m.s.Validate(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
