package scheduler

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shoal-data/shoal/graph"
)

// runs returns the Run instructions, copied (instructions are reused).
func runs(ins []Instruction) []Run {
	var out []Run
	for _, in := range ins {
		if r, ok := in.(*Run); ok {
			out = append(out, *r)
		}
	}
	return out
}

func steals(ins []Instruction) []CancelRun {
	var out []CancelRun
	for _, in := range ins {
		if c, ok := in.(*CancelRun); ok && c.Steal {
			out = append(out, *c)
		}
	}
	return out
}

func TestSteal(t *testing.T) {
	canceled := fmt.Errorf("moved before it ran: %w", context.Canceled)
	tests := []struct {
		name     string
		steal    bool
		duration time.Duration // of the tasks that end first
		// outcome of the steal: the busy worker gave the task up (true) or
		// had started it and finished it (false)
		givenUp   bool
		wantSteal bool
	}{
		{"long tasks move to the idle worker", true, 10 * time.Millisecond, true, true},
		{"a started task is finished where it is", true, 10 * time.Millisecond, false, true},
		{"tasks shorter than a move stay", true, time.Microsecond, true, false},
		{"no stealing unless configured", false, 10 * time.Millisecond, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Config{Saturation: 4, Steal: tc.steal})
			s.Handle(&WorkerAdded{Worker: WorkerInfo{Name: "w1", Threads: 1}},
				&WorkerAdded{Worker: WorkerInfo{Name: "w2", Threads: 1}})
			g := graph.New()
			var keys []graph.Key
			for i := range 4 {
				k := graph.Key(fmt.Sprintf("a-%d", i))
				g.Add(&graph.Task{Key: k, Op: "op"})
				keys = append(keys, k)
			}
			rs := runs(s.Handle(&GraphSubmitted{Client: "c", Graph: g, Keys: keys}))
			if len(rs) != 4 {
				t.Fatalf("%d runs, want 4", len(rs))
			}
			on := map[string][]Run{}
			for _, r := range rs {
				on[r.Worker] = append(on[r.Worker], r)
			}
			if len(on["w1"]) != 2 || len(on["w2"]) != 2 {
				t.Fatalf("placement %v", on)
			}
			// w1 ends both its tasks; w2 is still on its first.
			var got []CancelRun
			for _, r := range on["w1"] {
				got = append(got, steals(s.Handle(&TaskFinished{Key: r.Task.Key, ID: r.ID, Worker: "w1",
					Duration: tc.duration, Size: 1}))...)
				if err := s.Validate(); err != nil {
					t.Fatal(err)
				}
			}
			if !tc.wantSteal {
				if len(got) != 0 {
					t.Fatalf("steals %v, want none", got)
				}
				return
			}
			if len(got) != 1 || got[0].Worker != "w2" || got[0].Key != on["w2"][1].Task.Key {
				t.Fatalf("steals %v, want the last task of w2 (%s)", got, on["w2"][1].Task.Key)
			}
			victim := on["w2"][1]
			var ins []Instruction
			if tc.givenUp {
				ins = s.Handle(&TaskFailed{Key: victim.Task.Key, ID: victim.ID, Worker: "w2", Err: canceled})
				rr := runs(ins)
				if len(rr) != 1 || rr[0].Worker != "w1" || rr[0].Task.Key != victim.Task.Key {
					t.Fatalf("after the steal: runs %v, want %s on w1", rr, victim.Task.Key)
				}
				s.Handle(&TaskFinished{Key: victim.Task.Key, ID: rr[0].ID, Worker: "w1", Size: 1})
			} else {
				ins = s.Handle(&TaskFinished{Key: victim.Task.Key, ID: victim.ID, Worker: "w2", Size: 1})
				if len(runs(ins)) != 0 {
					t.Fatalf("a task finished where it was runs again: %v", runs(ins))
				}
			}
			s.Handle(&TaskFinished{Key: on["w2"][0].Task.Key, ID: on["w2"][0].ID, Worker: "w2", Size: 1})
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			if n := s.Counts()[Memory]; n != 4 {
				t.Fatalf("%d tasks in memory, want 4", n)
			}
			for _, w := range s.wlist {
				if w.incoming != 0 || w.outgoing != 0 || w.processing != 0 || len(w.procs) != 0 {
					t.Errorf("worker %s: incoming %d outgoing %d processing %d", w.info.Name, w.incoming, w.outgoing, w.processing)
				}
			}
		})
	}
}

// TestStealTargetLeaves removes the idle worker while a task is being
// stolen for it: the task finishes where it was.
func TestStealTargetLeaves(t *testing.T) {
	s := New(Config{Saturation: 4, Steal: true})
	s.Handle(&WorkerAdded{Worker: WorkerInfo{Name: "w1", Threads: 1}}, &WorkerAdded{Worker: WorkerInfo{Name: "w2", Threads: 1}})
	g := graph.New()
	g.Add(&graph.Task{Key: "a-0", Op: "op"})
	g.Add(&graph.Task{Key: "a-1", Op: "op"})
	g.Add(&graph.Task{Key: "a-2", Op: "op"})
	rs := runs(s.Handle(&GraphSubmitted{Client: "c", Graph: g, Keys: []graph.Key{"a-0", "a-1", "a-2"}}))
	var w1 []Run
	var w2 []Run
	for _, r := range rs {
		if r.Worker == "w1" {
			w1 = append(w1, r)
		} else {
			w2 = append(w2, r)
		}
	}
	busy, idle, busyRuns, idleRuns := "w1", "w2", w1, w2
	if len(w2) > len(w1) {
		busy, idle, busyRuns, idleRuns = "w2", "w1", w2, w1
	}
	st := steals(s.Handle(&TaskFinished{Key: idleRuns[0].Task.Key, ID: idleRuns[0].ID, Worker: idle, Size: 1,
		Duration: time.Second}))
	if len(st) != 1 || st[0].Worker != busy {
		t.Fatalf("steals %v", st)
	}
	s.Handle(&WorkerRemoved{Worker: idle, Reason: "gone"})
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, r := range busyRuns {
		s.Handle(&TaskFinished{Key: r.Task.Key, ID: r.ID, Worker: busy, Size: 1})
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	info, _ := s.Task(st[0].Key)
	if info.State != Memory {
		t.Fatalf("stolen task %s: %v", st[0].Key, info.State)
	}
}

// TestStealTargetLeavesGivenUp removes the idle worker while a task is
// being stolen for it, and the busy worker then gives the task up, as it
// was asked: the task runs again where it can, it does not fail.
func TestStealTargetLeavesGivenUp(t *testing.T) {
	s := New(Config{Saturation: 4, Steal: true})
	s.Handle(&WorkerAdded{Worker: WorkerInfo{Name: "w1", Threads: 1}}, &WorkerAdded{Worker: WorkerInfo{Name: "w2", Threads: 1}})
	g := graph.New()
	for _, k := range []graph.Key{"a-0", "a-1", "a-2"} {
		g.Add(&graph.Task{Key: k, Op: "op"})
	}
	rs := runs(s.Handle(&GraphSubmitted{Client: "c", Graph: g, Keys: []graph.Key{"a-0", "a-1", "a-2"}}))
	byWorker := map[string][]Run{}
	for _, r := range rs {
		byWorker[r.Worker] = append(byWorker[r.Worker], r)
	}
	busy, idle := "w1", "w2"
	if len(byWorker["w2"]) > len(byWorker["w1"]) {
		busy, idle = "w2", "w1"
	}
	r := byWorker[idle][0]
	st := steals(s.Handle(&TaskFinished{Key: r.Task.Key, ID: r.ID, Worker: idle, Size: 1, Duration: time.Second}))
	if len(st) != 1 || st[0].Worker != busy {
		t.Fatalf("steals %v", st)
	}
	s.Handle(&WorkerRemoved{Worker: idle, Reason: "gone"})
	var victim Run
	for _, r := range byWorker[busy] {
		if r.Task.Key == st[0].Key {
			victim = r
		}
	}
	again := runs(s.Handle(&TaskFailed{Key: victim.Task.Key, ID: victim.ID, Worker: busy,
		Err: fmt.Errorf("moved to another worker before it ran: %w", context.Canceled)}))
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if info, _ := s.Task(victim.Task.Key); info.State == Erred {
		t.Fatalf("the task given up for a worker that left erred: %s", info.Error)
	}
	if len(again) != 1 || again[0].Worker != busy || again[0].Task.Key != victim.Task.Key {
		t.Fatalf("after it was given up: runs %v, want %s on %s again", again, victim.Task.Key, busy)
	}
}
