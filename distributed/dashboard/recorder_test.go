package dashboard

import (
	"fmt"
	"testing"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/graph"
)

// tr is a transition of key from one state to another.
func tr(key, from, to string) diagnostics.Event {
	k := graph.Key(key)
	return diagnostics.Event{Kind: diagnostics.TaskTransition, Key: k, Prefix: k.Prefix(), From: from, To: to}
}

// ran is the transition of a task that ran on worker for d from start.
func ran(key, to, worker string, start time.Time, d time.Duration) diagnostics.Event {
	e := tr(key, diagnostics.StateProcessing, to)
	e.Worker, e.Start, e.Duration, e.Time = worker, start, d, start.Add(d)
	return e
}

func started(tasks map[string]int) diagnostics.Event {
	return diagnostics.Event{Kind: diagnostics.ComputeStarted, Tasks: tasks}
}

func progressOf(r *Recorder) map[string]Progress {
	m := map[string]Progress{}
	for _, p := range r.Progress() {
		m[p.Prefix] = p
	}
	return m
}

func TestRecorderProgress(t *testing.T) {
	r := NewRecorder(0)
	t0 := time.Unix(1000, 0)
	var evs []diagnostics.Event
	evs = append(evs, started(map[string]int{"inc": 3, "sum": 1}))
	for i := range 3 {
		k := fmt.Sprintf("inc-%d", i)
		evs = append(evs, tr(k, "released", "waiting"), tr(k, "waiting", "processing"))
	}
	evs = append(evs, tr("sum-0", "released", "waiting"))
	r.Record(evs)
	if got, want := progressOf(r)["inc"], (Progress{Prefix: "inc", Total: 3, Processing: 3}); got != want {
		t.Fatalf("inc while running: %+v, want %+v", got, want)
	}

	r.Record([]diagnostics.Event{
		ran("inc-0", "memory", "w1", t0, time.Second),
		ran("inc-1", "erred", "w2", t0, 2*time.Second),
		ran("inc-2", "memory", "w1", t0.Add(time.Second), time.Second),
	})
	want := map[string]Progress{
		"inc": {Prefix: "inc", Total: 3, Done: 2, Memory: 2, Erred: 1},
		"sum": {Prefix: "sum", Total: 1},
	}
	if got := progressOf(r); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after the runs: %v, want %v", got, want)
	}
	// The results are released, then every task is forgotten: the bars
	// stay as they were until the next computation starts.
	r.Record([]diagnostics.Event{tr("inc-0", "memory", "released"), tr("sum-0", "waiting", "released")})
	if got := progressOf(r)["inc"]; got.Done != 2 || got.Memory != 1 {
		t.Fatalf("after a release: %+v, want 2 done of which 1 in memory", got)
	}
	r.Record([]diagnostics.Event{tr("inc-0", "released", "forgotten"), tr("inc-1", "erred", "forgotten"),
		tr("inc-2", "memory", "forgotten"), tr("sum-0", "released", "forgotten")})
	want = map[string]Progress{"inc": {Prefix: "inc", Total: 3, Done: 2, Erred: 1}}
	if got := progressOf(r); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after forgetting: %v, want %v (sum never ran: it goes)", got, want)
	}
	r.Record([]diagnostics.Event{started(map[string]int{"dec": 1}), tr("dec-0", "released", "waiting")})
	want = map[string]Progress{"dec": {Prefix: "dec", Total: 1}}
	if got := progressOf(r); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("next computation: %v, want %v", got, want)
	}
	// A computation that starts while another runs keeps the other's bars.
	r.Record([]diagnostics.Event{started(map[string]int{"neg": 1}), tr("neg-0", "released", "waiting")})
	if got := progressOf(r); len(got) != 2 {
		t.Fatalf("two computations at once: %v, want dec and neg", got)
	}
}

func TestRecorderRecomputed(t *testing.T) {
	r := NewRecorder(0)
	r.Record([]diagnostics.Event{tr("a-0", "released", "waiting"), tr("a-0", "waiting", "processing"),
		tr("a-0", "processing", "memory")})
	if p := progressOf(r)["a"]; p.Done != 1 {
		t.Fatalf("%+v: want done", p)
	}
	// Its worker died: it runs again, and is not done until it ends.
	r.Record([]diagnostics.Event{tr("a-0", "memory", "released"), tr("a-0", "released", "waiting")})
	if p := progressOf(r)["a"]; p.Done != 0 || p.Total != 1 {
		t.Fatalf("%+v: want 0 done of 1", p)
	}
	// Events dropped: the recorder trusts the state it recorded, not From.
	r.Record([]diagnostics.Event{tr("a-0", "queued", "memory")})
	if p := progressOf(r)["a"]; p.Done != 1 || p.Memory != 1 || p.Total != 1 {
		t.Fatalf("%+v: want 1 done in memory of 1", p)
	}
}

func TestRecorderTaskStream(t *testing.T) {
	r := NewRecorder(4)
	t0 := time.Unix(1000, 0)
	var evs []diagnostics.Event
	for i := range 6 {
		k := fmt.Sprintf("inc-%d", i)
		evs = append(evs, tr(k, "waiting", "processing"), ran(k, "memory", "w1", t0.Add(time.Duration(i)*time.Second), time.Second))
	}
	evs = append(evs, tr("inc-9", "waiting", "erred")) // erred without running: no run
	r.Record(evs)
	if n := r.Count(); n != 6 {
		t.Fatalf("Count: %d, want 6", n)
	}
	seqs := func(ts *TaskStream) []uint64 {
		var s []uint64
		for _, r := range ts.Tasks {
			s = append(s, r.Seq)
		}
		return s
	}
	tests := []struct {
		since  uint64
		limit  int
		want   string
		next   uint64
		missed uint64
	}{
		{0, 0, "[3 4 5 6]", 6, 2},
		{4, 0, "[5 6]", 6, 0},
		{6, 0, "[]", 6, 0},
		{0, 1, "[6]", 6, 5},
		{99, 0, "[3 4 5 6]", 6, 2}, // from another scheduler
	}
	for _, tc := range tests {
		ts := r.TaskStream(tc.since, tc.limit)
		if got := fmt.Sprint(seqs(ts)); got != tc.want || ts.Next != tc.next || ts.Missed != tc.missed {
			t.Errorf("TaskStream(%d, %d): %s next %d missed %d, want %s next %d missed %d", tc.since, tc.limit,
				got, ts.Next, ts.Missed, tc.want, tc.next, tc.missed)
		}
	}
	run := r.TaskStream(5, 0).Tasks[0]
	want := TaskRun{Seq: 6, Worker: "w1", Key: "inc-5", Prefix: "inc", Start: t0.Add(5 * time.Second),
		Stop: t0.Add(6 * time.Second), State: "memory"}
	if run != want {
		t.Errorf("run: %+v, want %+v", run, want)
	}
}

func TestRecorderOnHub(t *testing.T) {
	h := diagnostics.NewHub()
	r := NewRecorder(0)
	sub := h.Subscribe(r.Record)
	h.Publish(tr("x-1", "released", "waiting"), ran("x-1", "memory", "w", time.Now(), time.Millisecond))
	sub.Flush()
	if n := r.Count(); n != 1 {
		t.Errorf("Count: %d, want 1", n)
	}
	h.Close()
}

// BenchmarkRecorder records the events of tasks that each go from
// released to waiting, processing, memory, released and forgotten, in
// batches of a hub's size.
func BenchmarkRecorder(b *testing.B) {
	r := NewRecorder(0)
	const tasks = 1 << 16
	keys := make([]string, tasks)
	for i := range keys {
		keys[i] = fmt.Sprintf("inc-%08x-%d", i, i%100)
	}
	t0 := time.Now()
	var batch []diagnostics.Event
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		k := keys[i%tasks]
		batch = append(batch, tr(k, "released", "waiting"), tr(k, "waiting", "processing"),
			ran(k, "memory", "w1", t0, time.Millisecond), tr(k, "memory", "released"), tr(k, "released", "forgotten"))
		if len(batch) >= 250 {
			r.Record(batch)
			batch = batch[:0]
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
}
