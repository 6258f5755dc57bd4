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

func TestRecorderTaskWindow(t *testing.T) {
	r := NewRecorder(100)
	t0 := time.Unix(100_000, 0)
	// 300 runs of 0.5 s each, two workers, two prefixes, one a second.
	var evs []diagnostics.Event
	for i := range 300 {
		p := []string{"load", "sum"}[i%2]
		w := []string{"w1", "w2"}[i%2]
		k := fmt.Sprintf("%s-%d", p, i)
		state := "memory"
		if i == 299 {
			state = "erred"
		}
		evs = append(evs, ran(k, state, w, t0.Add(time.Duration(i)*time.Second), 500*time.Millisecond))
	}
	r.Record(evs)
	end := t0.Add(300 * time.Second)

	tests := []struct {
		window     time.Duration
		bars       int
		aggregated bool
		count      int
	}{
		{10 * time.Second, 100, false, 10}, // kept and few: bars
		{10 * time.Second, 5, true, 10},    // too many bars
		{5 * time.Minute, 1000, true, 300}, // more than the 100 runs kept: aggregated, all of them
		{2 * time.Hour, 1000, true, 300},   // cut to an hour
	}
	for _, tc := range tests {
		w := r.TaskWindow(end, tc.window, tc.bars)
		if w.Aggregated != tc.aggregated || w.Count != tc.count {
			t.Errorf("window %v bars %d: aggregated %v count %d, want %v %d", tc.window, tc.bars, w.Aggregated,
				w.Count, tc.aggregated, tc.count)
			continue
		}
		if w.Erred != 1 {
			t.Errorf("window %v: %d erred, want 1", tc.window, w.Erred)
		}
		if len(w.Workers) != 2 || len(w.Prefixes) != 2 {
			t.Errorf("window %v: workers %v prefixes %v", tc.window, w.Workers, w.Prefixes)
		}
		if !tc.aggregated {
			if len(w.Runs) != tc.count || w.Runs[0].Seq >= w.Runs[len(w.Runs)-1].Seq {
				t.Errorf("window %v: %d runs, want %d, oldest first", tc.window, len(w.Runs), tc.count)
			}
			continue
		}
		// Every run's busy time and end are in the buckets.
		var busy, count, erred float64
		for _, b := range w.Buckets {
			busy += b[3]
			count += b[4]
			erred += b[5]
			if int(b[1]) >= len(w.Workers) || int(b[2]) >= len(w.Prefixes) || b[0] < 0 ||
				b[0]*w.BucketSeconds >= tc.window.Seconds()+w.BucketSeconds {
				t.Fatalf("window %v: bucket %v out of range", tc.window, b)
			}
		}
		if count != float64(tc.count) || erred != 1 || busy < 0.5*float64(tc.count)-0.51 ||
			busy > 0.5*float64(tc.count)+1e-6 {
			t.Errorf("window %v: buckets sum to busy %.2f count %v erred %v, want %.1f %d 1", tc.window, busy, count,
				erred, 0.5*float64(tc.count), tc.count)
		}
	}

	tl := r.Timeline(t0, end, 30)
	var total float64
	for _, row := range tl.Busy {
		if len(row) != 28 { // 301 seconds in buckets of 11
			t.Errorf("timeline row of %d buckets, want 28", len(row))
		}
		for _, v := range row {
			total += v
		}
	}
	if len(tl.Prefixes) != 2 || total < 149.9 || total > 150.1 || tl.BucketSeconds != 11 {
		t.Errorf("timeline: prefixes %v, busy %.2f s in buckets of %v s, want 2 prefixes, 150 s in 11 s", tl.Prefixes,
			total, tl.BucketSeconds)
	}
}

func TestRecorderComputations(t *testing.T) {
	r := NewRecorder(0)
	t0 := time.Unix(1000, 0)
	comp := func(id uint64, e diagnostics.Event) diagnostics.Event { e.Compute = id; return e }
	r.Record([]diagnostics.Event{
		{Kind: diagnostics.ComputeStarted, Compute: 1, Time: t0, Tasks: map[string]int{"a": 2}},
		comp(1, tr("a-0", "released", "waiting")), comp(1, tr("a-1", "released", "waiting")),
		comp(1, ran("a-0", "memory", "w1", t0, time.Second)),
		comp(1, ran("a-1", "erred", "w1", t0, time.Second)),
		{Kind: diagnostics.ComputeFinished, Compute: 1, Time: t0.Add(2 * time.Second), Err: "task a-1 failed"},
		{Kind: diagnostics.ComputeStarted, Compute: 2, Time: t0.Add(3 * time.Second), Tasks: map[string]int{"b": 1}},
		comp(2, tr("b-0", "released", "waiting")), comp(2, tr("b-0", "waiting", "processing")),
		// The first computation's tasks go; its bars stay.
		tr("a-0", "memory", "forgotten"), tr("a-1", "erred", "forgotten"),
	})
	cs := r.Computations()
	if len(cs) != 2 || cs[0].ID != 2 || cs[1].ID != 1 {
		t.Fatalf("computations %+v, want 2 then 1", cs)
	}
	if c := cs[1]; c.State != "failed" || c.Error != "task a-1 failed" || len(c.Progress) != 1 ||
		c.Progress[0] != (Progress{Prefix: "a", Total: 2, Done: 1, Erred: 1}) || !c.Finished.Equal(t0.Add(2*time.Second)) {
		t.Errorf("failed computation: %+v", c)
	}
	if c := cs[0]; c.State != "running" || c.Progress[0] != (Progress{Prefix: "b", Total: 1, Processing: 1}) {
		t.Errorf("running computation: %+v", c)
	}
	for i := range 30 {
		r.Record([]diagnostics.Event{{Kind: diagnostics.ComputeStarted, Compute: uint64(10 + i)},
			{Kind: diagnostics.ComputeFinished, Compute: uint64(10 + i)}})
	}
	cs = r.Computations()
	if len(cs) != maxComputations || cs[len(cs)-1].ID != 1 || cs[len(cs)-2].ID != 2 {
		t.Errorf("after 30 more: %d kept, the oldest %d and %d; want %d, the failed (1) and the running (2) kept",
			len(cs), cs[len(cs)-1].ID, cs[len(cs)-2].ID, maxComputations)
	}
}

func TestRecorderErrors(t *testing.T) {
	r := NewRecorder(0)
	t0 := time.Unix(1000, 0)
	e := ran("boom-1", "erred", "w1", t0, time.Second)
	e.Op, e.Err, e.Compute = "myapp.boom", "task boom-1 (myapp.boom): panic: oops\ngoroutine 7 [running]:\nmain.boom()", 3
	dep := tr("sum-1", "waiting", "erred") // a dependent: it never ran
	dep.Err = e.Err
	r.Record([]diagnostics.Event{e, dep})
	errs, total := r.Errors(0)
	if total != 1 || len(errs) != 1 {
		t.Fatalf("%d errors of %d, want the one task that ran", len(errs), total)
	}
	want := ErrorRecord{Time: t0.Add(time.Second), Key: "boom-1", Prefix: "boom", Op: "myapp.boom", Worker: "w1",
		Computation: 3, Error: "task boom-1 (myapp.boom): panic: oops", Stack: "goroutine 7 [running]:\nmain.boom()"}
	if errs[0] != want {
		t.Errorf("error %+v\nwant %+v", errs[0], want)
	}
	for i := range maxErrors + 10 {
		r.Record([]diagnostics.Event{ran(fmt.Sprintf("x-%d", i), "erred", "w1", t0, time.Second)})
	}
	errs, total = r.Errors(5)
	if total != maxErrors+11 || len(errs) != 5 || errs[0].Key != fmt.Sprintf("x-%d", maxErrors+9) {
		t.Errorf("after many: %d of %d, newest %q", len(errs), total, errs[0].Key)
	}
	if all, _ := r.Errors(0); len(all) != maxErrors {
		t.Errorf("kept %d errors, want %d", len(all), maxErrors)
	}
}

func TestRecorderGroupsAndShuffles(t *testing.T) {
	r := NewRecorder(0)
	t0 := time.Unix(1000, 0)
	split, collect := "shuffle-split-0123456789abcdef", "shuffle-collect-0123456789abcdef"
	r.Record([]diagnostics.Event{{Kind: diagnostics.ComputeStarted, Compute: 1, Time: t0,
		Tasks: map[string]int{"shuffle-split": 2, "shuffle-collect": 2}}})
	r.AddGraph(1, map[string]int{split: 2, collect: 2}, map[[2]string]int{{split, collect}: 4})
	var evs []diagnostics.Event
	for i := range 2 {
		k := fmt.Sprintf("%s-%d", split, i)
		evs = append(evs, tr(k, "released", "waiting"), ran(k, "memory", "w1", t0, time.Second))
		c := fmt.Sprintf("%s-%d", collect, i)
		evs = append(evs, tr(c, "released", "waiting"))
	}
	evs = append(evs, tr(split+"-0", "memory", "released"))
	r.Record(evs)
	g := r.Groups()
	if len(g.Groups) != 2 || len(g.Edges) != 1 || g.Edges[0] != (GroupEdge{From: split, To: collect, Count: 4}) {
		t.Fatalf("groups %+v", g)
	}
	byName := map[string]Group{}
	for _, x := range g.Groups {
		byName[x.Name] = x
	}
	if s := byName[split]; s.Name != split || s.Prefix != "shuffle-split" || s.Total != 2 ||
		s.States["memory"] != 1 || s.States["released"] != 1 || s.Seconds != 2 {
		t.Errorf("split group %+v", s)
	}
	sh := r.Shuffles()
	if len(sh) != 1 || sh[0].ID != "0123456789abcdef" || sh[0].Splits != 2 || sh[0].SplitsDone != 2 ||
		sh[0].Collects != 2 || sh[0].CollectsDone != 0 || sh[0].State != "running" || !sh[0].Started.Equal(t0) {
		t.Errorf("shuffles %+v", sh)
	}
	r.Record([]diagnostics.Event{ran(collect+"-0", "memory", "w2", t0, time.Second),
		ran(collect+"-1", "erred", "w2", t0, time.Second)})
	if sh := r.Shuffles(); sh[0].CollectsDone != 1 || sh[0].Erred != 1 || sh[0].State != "erred" {
		t.Errorf("after the collects: %+v", sh[0])
	}
}

// BenchmarkRecorderWaves records the events of a graph of 100,000 tasks as
// a scheduler publishes them: every task waits, then they run and end
// one after the other, then are released and forgotten; the keys of one
// batch are all different, as on a busy scheduler.
func BenchmarkRecorderWaves(b *testing.B) {
	const tasks = 100_000
	keys := make([]string, tasks)
	for i := range keys {
		keys[i] = fmt.Sprintf("inc-%016x-%d", i/1000, i%1000)
	}
	t0 := time.Now()
	var waves [][]diagnostics.Event
	wave := func(f func(k string) diagnostics.Event) {
		var evs []diagnostics.Event
		for _, k := range keys {
			evs = append(evs, f(k))
		}
		waves = append(waves, evs)
	}
	wave(func(k string) diagnostics.Event { return tr(k, "released", "waiting") })
	wave(func(k string) diagnostics.Event { return tr(k, "waiting", "processing") })
	wave(func(k string) diagnostics.Event { return ran(k, "memory", "w1", t0, time.Millisecond) })
	wave(func(k string) diagnostics.Event { return tr(k, "memory", "released") })
	wave(func(k string) diagnostics.Event { return tr(k, "released", "forgotten") })
	r := NewRecorder(0)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for _, evs := range waves {
			for i := 0; i < len(evs); i += 256 {
				r.Record(evs[i:min(i+256, len(evs))])
			}
		}
	}
	b.ReportMetric(float64(b.N*tasks*5)/b.Elapsed().Seconds(), "events/s")
}
