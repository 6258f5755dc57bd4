package scheduler

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/shoal-data/shoal/graph"
)

// randomGraph builds a DAG of n tasks; each depends on up to three earlier
// ones.
func randomGraph(r *rand.Rand, n int, prefix string) *graph.Graph {
	g := graph.New()
	keys := make([]graph.Key, n)
	for i := range n {
		keys[i] = graph.Key(fmt.Sprintf("%s%d", prefix, i))
		t := &graph.Task{Key: keys[i], Op: "op"}
		if i > 0 {
			for range r.IntN(4) {
				d := keys[r.IntN(i)]
				dup := false
				for _, x := range t.Deps {
					dup = dup || x == d
				}
				if !dup {
					t.Deps = append(t.Deps, d)
				}
			}
		}
		if r.IntN(8) == 0 {
			t.Retries = r.IntN(3)
		}
		if r.IntN(10) == 0 {
			t.Priority = r.IntN(3)
		}
		if r.IntN(15) == 0 {
			t.Resources = map[string]float64{"GPU": 1}
		}
		g.Add(t)
	}
	return g
}

// TestRandomScenarios drives the scheduler through random graphs, random
// failures, worker churn and cancellations, validating the state after
// every event; in the end every wanted key is answered, and once the
// clients release everything, nothing is left.
func TestRandomScenarios(t *testing.T) {
	seeds := 400
	if s := os.Getenv("SHOAL_SCHED_SEEDS"); s != "" {
		seeds, _ = strconv.Atoi(s)
	}
	if testing.Short() {
		seeds = 50
	}
	stealsSeen, givenUp := 0, 0
	defer func() {
		if seeds >= 8 && (stealsSeen == 0 || givenUp == 0) {
			t.Errorf("the stealing scenarios stole %d tasks, %d given up; want some of each", stealsSeen, givenUp)
		}
	}()
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(seed), 7))
			steal := seed%2 == 1
			sat := 1 + r.Float64()
			if steal {
				sat = 1 + 3*(sat-1) // more tasks wait on workers: more to steal
			}
			// Some runs let short tasks fill a backlog beyond saturation.
			backlog := time.Duration(r.IntN(3)) * time.Millisecond
			m := newSim(t, Config{Saturation: sat, AllowedFailures: 2 + r.IntN(2), Steal: steal, Backlog: backlog, MaxSaturation: 8})
			m.duration = time.Duration(r.IntN(400)) * time.Microsecond
			m.giveUp = steal && seed%4 == 1
			defer func() {
				for _, in := range m.log {
					if c, ok := in.(*CancelRun); ok && c.Steal {
						stealsSeen++
					}
				}
				givenUp += m.givenUp
			}()
			nw := 0
			addWorker := func() {
				nw++
				res := map[string]float64(nil)
				if r.IntN(2) == 0 {
					res = map[string]float64{"GPU": 1}
				}
				m.addWorker(fmt.Sprintf("w%d", nw), 1+r.IntN(3), res)
			}
			addWorker()
			// Make sure some worker offers the GPU.
			m.addWorker("gpu", 1, map[string]float64{"GPU": 2})
			type sub struct {
				client string
				keys   []graph.Key
			}
			var subs []sub
			shared := randomGraph(r, 5+r.IntN(30), "s")
			for c := range 1 + r.IntN(3) {
				g := shared.Clone()
				own := randomGraph(r, r.IntN(10), fmt.Sprintf("c%d-", c))
				g.Merge(own)
				var keys []graph.Key
				for _, k := range g.Keys() {
					if r.IntN(4) == 0 {
						keys = append(keys, k)
					}
				}
				if len(keys) == 0 {
					keys = []graph.Key{g.Keys()[g.Len()-1]}
				}
				client := fmt.Sprintf("client%d", c)
				m.submit(client, g, keys...)
				subs = append(subs, sub{client, keys})
			}
			cancelled := map[string]bool{}
			for step := 0; step < 5000; step++ {
				switch x := r.IntN(100); {
				case x < 70:
					if !m.finish() {
						step = 5000
					}
				case x < 77:
					m.fail(errBoom)
				case x < 80:
					// What one of its dependencies left beside its value
					// is gone: that one runs again, then the task.
					w, k, ok := m.next()
					if !ok {
						break
					}
					var err error = errBoom
					if t := m.s.tasks[k]; t != nil && len(t.deps) > 0 {
						err = &graph.LostInputsError{Keys: []graph.Key{t.deps[r.IntN(len(t.deps))].key}, Err: errBoom}
					}
					m.handle(&TaskFailed{Key: k, ID: m.ids[k], Worker: w, Err: err})
				case x < 83 && len(m.s.wlist) > 1:
					victim := m.s.wlist[r.IntN(len(m.s.wlist))].info.Name
					if victim != "gpu" {
						m.removeWorker(victim)
					}
				case x < 86:
					addWorker()
				case x < 88:
					s := subs[r.IntN(len(subs))]
					if !cancelled[s.client] {
						cancelled[s.client] = true
						m.handle(&Cancel{Client: s.client})
					}
				case x < 89:
					// A worker turns out not to hold a value it was
					// believed to hold.
					w := m.s.wlist[r.IntN(len(m.s.wlist))].info.Name
					var ks []graph.Key
					for k := range m.held[w] {
						ks = append(ks, k)
					}
					if len(ks) > 0 {
						slices.Sort(ks)
						k := ks[r.IntN(len(ks))]
						delete(m.held[w], k)
						m.handle(&DataMissing{Worker: w, Keys: []graph.Key{k}})
					}
				case x < 95:
					w := m.s.wlist[r.IntN(len(m.s.wlist))]
					m.handle(&WorkerMemory{Worker: w.info.Name, Process: int64(r.Float64() * float64(w.info.MemoryLimit))})
				default:
					for _, w := range m.s.wlist {
						m.handle(&WorkerMemory{Worker: w.info.Name, Process: 0})
					}
				}
			}
			// Unpause everyone and run to the end.
			for _, w := range m.s.wlist {
				m.handle(&WorkerMemory{Worker: w.info.Name, Process: 0})
			}
			m.runAll()
			for _, s := range subs {
				for _, k := range s.keys {
					res := m.results[s.client][k]
					err := m.errs[s.client][k]
					if res == 0 && err == nil {
						d, _ := m.s.Dump()
						t.Fatalf("%s: key %q never answered\n%s", s.client, k, d)
					}
					if err != nil && !cancelled[s.client] {
						var te *graph.TaskError
						if !errors.As(err, &te) {
							t.Fatalf("%s: key %q: error %v is not a TaskError", s.client, k, err)
						}
					}
				}
			}
			for _, s := range subs {
				m.handle(&KeysReleased{Client: s.client})
			}
			if n := m.s.NumTasks(); n != 0 {
				d, _ := m.s.Dump()
				t.Fatalf("%d tasks left after all clients released:\n%s", n, d)
			}
			for w, ks := range m.held {
				if len(ks) != 0 {
					t.Fatalf("worker %s still holds %v", w, ks)
				}
			}
		})
	}
}
