package dumpstate

import (
	"errors"
	"testing"
	"time"

	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/scheduler"
)

// TestScheduler turns a core that ran a task and failed another into a
// dump's scheduler: its tasks, worker, client, counts and transitions.
func TestScheduler(t *testing.T) {
	st := scheduler.New(scheduler.Config{})
	t0 := time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC)
	g := graph.New()
	a, b, c := graph.Key("a-0"), graph.Key("b-0"), graph.Key("c-0")
	g.Add(&graph.Task{Key: a, Op: "a"})
	g.Add(&graph.Task{Key: b, Op: "b"})
	g.Add(&graph.Task{Key: c, Op: "c", Deps: []graph.Key{a}})
	st.Handle(&scheduler.WorkerAdded{Meta: scheduler.Meta{Time: t0}, Worker: scheduler.WorkerInfo{Name: "w1", Threads: 4,
		MemoryLimit: 1 << 30}})
	st.Handle(&scheduler.GraphSubmitted{Meta: scheduler.Meta{Time: t0, Stimulus: "client-1/1"}, Client: "client-1/1",
		Graph: g, Keys: []graph.Key{b, c}})
	st.Handle(&scheduler.TaskFinished{Meta: scheduler.Meta{Time: t0.Add(time.Second)}, Key: a, Worker: "w1", Size: 8})
	st.Handle(&scheduler.TaskFailed{Meta: scheduler.Meta{Time: t0.Add(2 * time.Second)}, Key: b, Worker: "w1",
		Err: errors.New("boom")})

	d := Scheduler(st)
	if !d.Clock.Equal(t0.Add(2 * time.Second)) {
		t.Errorf("clock %v", d.Clock)
	}
	states := map[string]string{}
	for _, tk := range d.Tasks {
		states[tk.Key] = tk.State
		switch tk.Key {
		case "b-0":
			if tk.Error == "" || tk.Op != "b" {
				t.Errorf("the failed task: %+v", tk)
			}
		case "c-0":
			if tk.ProcessingOn != "w1" || len(tk.Deps) != 1 || tk.Deps[0] != "a-0" {
				t.Errorf("the task running: %+v", tk)
			}
		}
	}
	if states["a-0"] != "memory" || states["b-0"] != "erred" || states["c-0"] != "processing" {
		t.Errorf("states %v", states)
	}
	if len(d.Workers) != 1 || d.Workers[0].Address != "w1" || d.Workers[0].Threads != 4 || d.Workers[0].State != "running" {
		t.Errorf("workers %+v", d.Workers)
	}
	if len(d.Clients["client-1/1"]) != 2 || d.Counts["erred"] != 1 {
		t.Errorf("clients %v, counts %v", d.Clients, d.Counts)
	}
	want := st.Transitions()
	if len(d.Transitions) != len(want) || len(want) == 0 {
		t.Fatalf("%d transitions, want %d", len(d.Transitions), len(want))
	}
	for i, tr := range d.Transitions {
		w := want[i]
		if tr.Key != string(w.Key) || tr.From != w.From.String() || tr.To != w.To.String() || tr.Cause != w.Cause ||
			tr.Seq != w.Seq || !tr.Time.Equal(w.Time) || tr.Stimulus != w.Stimulus {
			t.Errorf("transition %d: %+v, want %+v", i, tr, w)
		}
	}
}
