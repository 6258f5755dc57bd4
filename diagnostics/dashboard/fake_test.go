package dashboard

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
)

// fakeSource is a cluster of three workers (the third gone) that ran a
// computation that failed and runs another. Everything it answers
// depends on its step, which advance moves on, and each topic also on its
// own revision, which bump moves on alone. It counts the calls of each
// method and keeps the parameters it was called with.
type fakeSource struct {
	mu   sync.Mutex
	step int
	rev  map[string]int // by topic

	aggregated bool  // TaskWindow sums the runs into buckets
	profileErr error // what Profile and ProfileData fail with

	calls      map[string]int
	since      []uint64
	limits     []int
	windows    []time.Duration
	bars       []int
	logQueries []LogQuery
	profiles   []ProfileQuery
}

func newFake() *fakeSource { return &fakeSource{rev: map[string]int{}, calls: map[string]int{}} }

// t0 is when the fake scheduler started.
var t0 = time.Date(2025, 1, 2, 15, 4, 5, 123456789, time.UTC)

const (
	w1, w2, w3 = "127.0.0.1:40001", "127.0.0.1:40002", "127.0.0.1:40003"
	w2Name     = "gpu-<b>1</b>" // markup, to be shown as text
	failError  = "fail-0: boom <script>alert(1)</script>"
)

func (f *fakeSource) advance() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.step++
}

func (f *fakeSource) bump(topic string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rev[topic]++
}

func (f *fakeSource) setAggregated(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.aggregated = on
}

func (f *fakeSource) called(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

// enter counts a call and returns the step and the topic's revision.
func (f *fakeSource) enter(method, topic string) (step, rev int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[method]++
	return f.step, f.rev[topic]
}

// now is the fake scheduler's clock: ten minutes after it started, and
// a second more each step.
func now(step int) time.Time { return t0.Add(10*time.Minute + time.Duration(step)*time.Second) }

func worker(addr string, step int) Worker {
	w := Worker{Address: addr, State: "running", Threads: 2, MemoryLimit: 1 << 30, Managed: int64(3+step) << 20,
		Unmanaged: 40 << 20, Processing: 1, InMemory: 2 + step, LastSeen: now(step).Add(-time.Second)}
	if addr == w2 {
		w.Name, w.State, w.Spilled, w.MemoryLimit = w2Name, "paused", 5<<20, 0
	}
	return w
}

func (f *fakeSource) Snapshot() *Status {
	step, rev := f.enter("Snapshot", "status")
	done := min(40, 20+5*step)
	inc := Progress{Prefix: "inc", Total: 40, Done: done, Memory: done - 5, Processing: min(4, 40-done)}
	failed := Progress{Prefix: "fail", Total: 1, Erred: 1}
	return &Status{
		Time: now(step).Add(time.Duration(rev) * time.Millisecond),
		Scheduler: Scheduler{ID: "scheduler-test", Address: "127.0.0.1:8786", Started: t0, Clients: 1,
			Metrics: "127.0.0.1:9100"},
		Workers:  []Worker{worker(w1, step), worker(w2, step)},
		Tasks:    map[string]int{"waiting": 40 - done - inc.Processing, "processing": inc.Processing, "memory": done, "erred": 1},
		Progress: []Progress{inc, failed},
		Logs: []LogRecord{
			{Time: t0, Level: "INFO", Message: "worker joined", Attrs: map[string]string{"worker": w1}},
			{Time: t0.Add(time.Second), Level: "WARN", Message: "<script>alert(1)</script>"},
			{Time: now(step), Level: "INFO", Message: fmt.Sprintf("step %d", step)},
		},
		StreamNext: uint64(3 + step),
		Computations: []Computation{
			{ID: 2, Started: t0.Add(5 * time.Minute), State: "running", Tasks: 40, Progress: []Progress{inc},
				Caller: "/src/etl/main.go:42"},
			{ID: 1, Started: t0.Add(time.Minute), Finished: t0.Add(2 * time.Minute), State: "failed", Error: failError,
				Tasks: 1, Progress: []Progress{failed}},
		},
		Erred:        1 + step,
		RecentErrors: f.errorRecords(step)[:1],
	}
}

func (f *fakeSource) TaskStream(since uint64, limit int) *TaskStream {
	f.mu.Lock()
	f.calls["TaskStream"]++
	f.since = append(f.since, since)
	f.limits = append(f.limits, limit)
	f.mu.Unlock()
	all := []TaskRun{
		{Seq: 1, Worker: w1, Key: "inc-0", Prefix: "inc", Start: t0, Stop: t0.Add(time.Second), State: "memory"},
		{Seq: 2, Worker: w2, Key: "inc-1", Prefix: "inc", Start: t0, Stop: t0.Add(2 * time.Second), State: "memory"},
		{Seq: 3, Worker: w1, Key: "fail-0", Prefix: "fail", Start: t0.Add(time.Second), Stop: t0.Add(3 * time.Second),
			State: "erred", Error: "boom"},
	}
	return &TaskStream{Tasks: all[min(since, 3):], Next: 3}
}

// runs are the task runs of the last minute of the fake: on each worker
// an inc every two seconds, two at a time, a fail that erred and a run
// cancelled.
func runs(step int) []TaskRun {
	end := now(step)
	var out []TaskRun
	seq := uint64(0)
	add := func(w, key, prefix, state string, start time.Time, d time.Duration) {
		seq++
		r := TaskRun{Seq: seq, Worker: w, Key: key, Prefix: prefix, Start: start, Stop: start.Add(d), State: state}
		if state == "erred" {
			r.Error = failError
		}
		out = append(out, r)
	}
	for i := range 20 + step {
		start := end.Add(-50*time.Second + time.Duration(i)*2*time.Second)
		add(w1, fmt.Sprintf("inc-%d", 2*i), "inc", "memory", start, 1500*time.Millisecond)
		add(w2, fmt.Sprintf("inc-%d", 2*i+1), "inc", "memory", start.Add(500*time.Millisecond), 3*time.Second)
	}
	add(w1, "fail-0", "fail", "erred", end.Add(-40*time.Second), 4*time.Second)
	add(w3, "sum-0", "sum", "cancelled", end.Add(-30*time.Second), 5*time.Second)
	add(w3, "read-csv-0", "read-csv", "memory", end.Add(-45*time.Second), 6*time.Second)
	return out
}

func (f *fakeSource) TaskWindow(window time.Duration, bars int) *TaskWindow {
	f.mu.Lock()
	f.calls["TaskWindow"]++
	f.windows = append(f.windows, window)
	f.bars = append(f.bars, bars)
	step, rev, agg := f.step, f.rev["task-window"], f.aggregated
	f.mu.Unlock()
	stop := now(step).Add(time.Duration(rev) * time.Millisecond)
	tw := &TaskWindow{Start: stop.Add(-window), Stop: stop,
		Workers:  []StreamWorker{{Address: w1, Threads: 2}, {Address: w2, Threads: 2}, {Address: w3}},
		Prefixes: []string{"read-csv", "inc", "fail", "sum"}}
	rs := runs(step)
	tw.Count = len(rs)
	for _, r := range rs {
		if r.State == "erred" {
			tw.Erred++
		}
	}
	if !agg {
		tw.Runs = rs
		return tw
	}
	// Buckets of 2 s over the window, summed from the runs.
	tw.Aggregated, tw.BucketSeconds = true, 2
	type cell struct{ b, w, p int }
	sums := map[cell]*[3]float64{}
	var order []cell
	for _, r := range rs {
		wi := slices.IndexFunc(tw.Workers, func(s StreamWorker) bool { return s.Address == r.Worker })
		pi := slices.Index(tw.Prefixes, r.Prefix)
		for t := r.Start; t.Before(r.Stop); {
			b := int(t.Sub(tw.Start) / (2 * time.Second))
			bEnd := tw.Start.Add(time.Duration(b+1) * 2 * time.Second)
			end := bEnd
			if r.Stop.Before(end) {
				end = r.Stop
			}
			seg := end.Sub(t)
			c := cell{b, wi, pi}
			if sums[c] == nil {
				sums[c] = &[3]float64{}
				order = append(order, c)
			}
			sums[c][0] += seg.Seconds()
			if !bEnd.Before(r.Stop) {
				sums[c][1]++
				if r.State == "erred" {
					sums[c][2]++
				}
			}
			t = bEnd
		}
	}
	for _, c := range order {
		s := sums[c]
		tw.Buckets = append(tw.Buckets, [6]float64{float64(c.b), float64(c.w), float64(c.p), s[0], s[1], s[2]})
	}
	return tw
}

func history(step int) []WorkerSample {
	var h []WorkerSample
	for i := range 30 {
		h = append(h, WorkerSample{Time: now(step).Add(time.Duration(i-29) * time.Second), CPU: float64(20 + (i*7+step*13)%80),
			RSS: int64(100+i+step) << 20, Managed: int64(20+i) << 20, Spilled: int64(i/10) << 20,
			NetIn: float64(1000 * (i + step)), NetOut: float64(500 * i), Executing: i % 3})
	}
	return h
}

func workerStats(addr string, step int) WorkerStats {
	ws := WorkerStats{Worker: worker(addr, step), CPU: float64(50 + step), RSS: int64(120+step) << 20,
		NetIn: float64(2048 * (1 + step)), NetOut: 1024, FDs: 40 + step,
		Disk: []Disk{{Name: "local", Path: "/tmp/shoal-" + addr, Used: 10 << 20, Free: 20 << 30, Size: 100 << 30},
			{Name: "scratch", Path: "/scratch", Used: int64(1+step) << 30, Free: 2 << 30, Size: 40 << 30}},
		Tasks:   map[string]int{"executing": 2, "ready": 1, "memory": 2 + step},
		History: history(step)}
	if addr == w3 {
		ws.Gone, ws.Reason, ws.State = true, "heartbeat missed for 30s", "closing"
		ws.Tasks = map[string]int{}
	}
	return ws
}

func (f *fakeSource) Workers() *Workers {
	step, rev := f.enter("Workers", "workers")
	return &Workers{Time: now(step).Add(time.Duration(rev) * time.Millisecond), Workers: []WorkerStats{workerStats(w1, step), workerStats(w2, step), workerStats(w3, step)}}
}

func (f *fakeSource) Worker(name string) *WorkerPage {
	step, _ := f.enter("Worker", "worker")
	addr := name
	if name == w2Name {
		addr = w2
	}
	if addr != w1 && addr != w2 && addr != w3 {
		return nil
	}
	var tasks []TaskRun
	for _, r := range runs(step) {
		if r.Worker == addr {
			tasks = append(tasks, r)
		}
	}
	return &WorkerPage{Worker: workerStats(addr, step), Logs: f.logEntries(step, addr), Tasks: tasks}
}

func (f *fakeSource) System() *System {
	step, _ := f.enter("System", "system")
	var h []SystemSample
	for i := range 60 {
		h = append(h, SystemSample{Time: now(step).Add(time.Duration(i-59) * time.Second), CPU: float64(5 + (i+step)%10),
			RSS: int64(200+i) << 20, HeapInUse: int64(80+i%7) << 20, Goroutines: 100 + i + step, FDs: 30 + i%5,
			Handle: float64(1+i%4) / 1e4, HandleMax: float64(3+i%6) / 1e3, Batches: int64(40 + i), Lateness: float64(i%3) / 1e4})
	}
	return &System{Now: h[len(h)-1], History: h}
}

func (f *fakeSource) Groups() *Groups {
	step, _ := f.enter("Groups", "groups")
	done := min(40, 20+5*step)
	g := &Groups{
		Groups: []Group{
			{Name: "read-csv-3fa2c1d0", Prefix: "read-csv", Computation: 2, Total: 40,
				States: map[string]int{"memory": 10, "released": 30}, Bytes: 40 << 20, Seconds: 12},
			{Name: "inc-9b1e", Prefix: "inc", Computation: 2, Total: 40,
				States: map[string]int{"memory": done, "processing": min(4, 40-done), "waiting": 40 - done - min(4, 40-done)},
				Bytes:  4 << 20, Seconds: 30},
			{Name: "sum-77aa", Prefix: "sum", Computation: 2, Total: 1, States: map[string]int{"waiting": 1}},
			{Name: "fail-d00d", Prefix: "fail", Computation: 1, Total: 1, States: map[string]int{"erred": 1}},
		},
		Edges: []GroupEdge{{From: "read-csv-3fa2c1d0", To: "inc-9b1e", Count: 40}, {From: "inc-9b1e", To: "sum-77aa", Count: 40},
			{From: "read-csv-3fa2c1d0", To: "sum-77aa", Count: 1}},
	}
	for i := range step {
		// Each step submits another small graph: more boxes.
		name := fmt.Sprintf("more-%d", i)
		g.Groups = append(g.Groups, Group{Name: name, Prefix: "more", Computation: uint64(3 + i), Total: 2,
			States: map[string]int{"memory": 2}})
		g.Edges = append(g.Edges, GroupEdge{From: "sum-77aa", To: name, Count: 1})
	}
	return g
}

// logEntries are the log records of the scheduler and the workers (only
// of source, when given), oldest first.
func (f *fakeSource) logEntries(step int, source string) []LogEntry {
	var out []LogEntry
	add := func(t time.Time, src, level, msg string, attrs map[string]string) {
		if source == "" || source == src {
			out = append(out, LogEntry{LogRecord: LogRecord{Time: t, Level: level, Message: msg, Attrs: attrs}, Source: src})
		}
	}
	add(t0, "scheduler", "INFO", "scheduler started", map[string]string{"address": "127.0.0.1:8786"})
	add(t0.Add(time.Second), "scheduler", "INFO", "worker joined", map[string]string{"worker": w1})
	add(t0.Add(2*time.Second), w1, "DEBUG", "task started", map[string]string{"key": "inc-0"})
	add(t0.Add(3*time.Second), w1, "ERROR", "task failed", map[string]string{"key": "fail-0", "error": failError})
	add(t0.Add(4*time.Second), w2, "WARN", "memory high: pausing", map[string]string{"rss": "900MiB"})
	add(t0.Add(5*time.Second), "scheduler", "WARN", "<b>not bold</b>", nil)
	add(t0.Add(6*time.Second), w3, "ERROR", "worker lost", map[string]string{"reason": "heartbeat missed"})
	for i := range step {
		add(now(i), w1, "INFO", fmt.Sprintf("step %d done", i+1), map[string]string{"key": fmt.Sprintf("inc-%d", i)})
	}
	return out
}

var levelRank = map[string]int{"DEBUG": 0, "INFO": 1, "WARN": 2, "ERROR": 3}

func (f *fakeSource) Logs(q LogQuery) *Logs {
	f.mu.Lock()
	f.calls["Logs"]++
	f.logQueries = append(f.logQueries, q)
	step := f.step
	f.mu.Unlock()
	var out []LogEntry
	for _, e := range f.logEntries(step, "") {
		if q.Level != "" && levelRank[e.Level] < levelRank[q.Level] || q.Source != "" && e.Source != q.Source ||
			q.Key != "" && e.Attrs["key"] != q.Key {
			continue
		}
		if q.Text != "" {
			text := strings.ToLower(q.Text)
			in := strings.Contains(strings.ToLower(e.Message), text)
			for _, v := range e.Attrs {
				in = in || strings.Contains(strings.ToLower(v), text)
			}
			if !in {
				continue
			}
		}
		out = append(out, e)
	}
	matched := len(out)
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[len(out)-q.Limit:]
	}
	return &Logs{Records: out, Matched: matched, Sources: []string{"scheduler", w1, w2, w3}}
}

const stack = "goroutine 7 [running]:\nmain.fail(0x1)\n\t/src/main.go:12 +0x1d\ngithub.com/shoal-data/shoal/graph.RunOp(...)\n\t/src/graph/run.go:80"

func (f *fakeSource) errorRecords(step int) []ErrorRecord {
	var out []ErrorRecord
	for i := step; i >= 0; i-- {
		out = append(out, ErrorRecord{Time: t0.Add(2*time.Minute + time.Duration(i)*time.Second), Key: fmt.Sprintf("fail-%d", i),
			Prefix: "fail", Op: "main.fail", Worker: w1, Computation: 1, Error: failError, Stack: stack})
	}
	return out
}

func (f *fakeSource) Errors() *Errors {
	step, _ := f.enter("Errors", "errors")
	return &Errors{Errors: f.errorRecords(step), Total: 1 + step,
		Failed: []Computation{{ID: 1, Started: t0.Add(time.Minute), Finished: t0.Add(2 * time.Minute), State: "failed",
			Error: failError, Tasks: 1, Progress: []Progress{{Prefix: "fail", Total: 1, Erred: 1}}}}}
}

func node(name string, self int64, children ...*FlameNode) *FlameNode {
	n := &FlameNode{Name: name, Self: self, Value: self, Children: children}
	for _, c := range children {
		n.Value += c.Value
	}
	return n
}

func (f *fakeSource) profile(q ProfileQuery, step int) *Profile {
	ms := int64(time.Millisecond)
	incWeight := int64(1)
	if len(q.Prefixes) == 1 && q.Prefixes[0] == "fail" {
		incWeight = 0
	}
	root := node("all", 0,
		node("runtime.goexit", 0,
			node("github.com/shoal-data/shoal/graph.RunOp", 5*ms,
				node("main.inc", incWeight*int64(800+100*step)*ms, node("runtime.mallocgc", incWeight*150*ms)),
				node("main.fail", 120*ms, node("runtime/debug.Stack", 30*ms))),
			node("runtime.gcBgMarkWorker", 0, node("runtime.gcDrain", 200*ms))),
	)
	start := q.Start
	if start.IsZero() {
		start = t0
	}
	tl := Timeline{Start: start, BucketSeconds: 10, Prefixes: []string{"inc", "fail"}}
	for p := range 2 {
		row := make([]float64, 30)
		for i := range row {
			row[i] = float64((i+p*7+step)%5) * float64(1+p)
		}
		tl.Busy = append(tl.Busy, row)
	}
	return &Profile{Start: start, Stop: now(step), Samples: root.Value / (10 * ms), Seconds: float64(root.Value) / 1e9,
		Prefixes: []string{"fail", "inc"}, Workers: []string{w1, w2}, Root: root, Timeline: tl}
}

func (f *fakeSource) Profile(q ProfileQuery) (*Profile, error) {
	f.mu.Lock()
	f.calls["Profile"]++
	f.profiles = append(f.profiles, q)
	step, err := f.step, f.profileErr
	f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return f.profile(q, step), nil
}

// profileData is what ProfileData answers: not a real profile.
var profileData = []byte("\x1f\x8b fake pprof")

func (f *fakeSource) ProfileData(q ProfileQuery) ([]byte, error) {
	f.mu.Lock()
	f.calls["ProfileData"]++
	f.profiles = append(f.profiles, q)
	err := f.profileErr
	f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return profileData, nil
}

func (f *fakeSource) FineMetrics() *FineMetrics {
	step, _ := f.enter("FineMetrics", "fine-metrics")
	s := float64(step)
	return &FineMetrics{
		Activities: []string{"compute", "cpu", "queued", "waiting", "transfer-in", "transfer-out", "spill-write",
			"spill-read", "disk-write", "disk-read", "encode", "decode", "idle"},
		Rows: []FineMetricRow{
			{Prefix: "groupby", Activity: "compute", Unit: "seconds", Value: 20 + s},
			{Prefix: "groupby", Activity: "cpu", Unit: "seconds", Value: 15},
			{Prefix: "groupby", Activity: "queued", Unit: "seconds", Value: 2},
			{Prefix: "groupby", Activity: "waiting", Unit: "seconds", Value: 8},
			{Prefix: "groupby", Activity: "transfer-in", Unit: "seconds", Value: 6},
			{Prefix: "groupby", Activity: "transfer-in", Unit: "bytes", Value: 3 << 30},
			{Prefix: "groupby", Activity: "spill-write", Unit: "seconds", Value: 3},
			{Prefix: "groupby", Activity: "spill-write", Unit: "bytes", Value: 1 << 30},
			{Prefix: "groupby", Activity: "decode", Unit: "seconds", Value: 1},
			{Prefix: "groupby", Activity: "compute", Unit: "count", Value: 64},
			{Prefix: "read-parquet", Activity: "compute", Unit: "seconds", Value: 12},
			{Prefix: "read-parquet", Activity: "cpu", Unit: "seconds", Value: 9},
			{Prefix: "read-parquet", Activity: "disk-read", Unit: "seconds", Value: 4},
			{Prefix: "", Activity: "idle", Unit: "seconds", Value: 5},
		},
	}
}

func (f *fakeSource) Bandwidth() *Bandwidth {
	step, _ := f.enter("Bandwidth", "bandwidth")
	b := int64(step)
	return &Bandwidth{Workers: []string{w1, w2, w3, "client"},
		Pairs: []Transfer{
			{From: w1, To: w2, Bytes: (300 + b) << 20, Seconds: 2, Count: 40},
			{From: w2, To: w1, Bytes: 20 << 20, Seconds: 0.5, Count: 10},
			{From: w3, To: w1, Bytes: 1 << 10, Seconds: 0.01, Count: 1},
			{From: w1, To: "client", Bytes: 5 << 10, Seconds: 0.01, Count: 1},
		},
		Prefixes: []PrefixTransfer{{Prefix: "inc", Bytes: (300 + b) << 20, Seconds: 2, Count: 40},
			{Prefix: "read-csv", Bytes: 20 << 20, Seconds: 0.5, Count: 12}}}
}

func (f *fakeSource) Shuffles() *Shuffles {
	step, _ := f.enter("Shuffles", "shuffles")
	return &Shuffles{Shuffles: []Shuffle{{ID: "shuffle-5e1f", Computation: 2, Started: t0.Add(5 * time.Minute), State: "running",
		Splits: 20, SplitsDone: min(20, 12+step), Collects: 8, CollectsDone: min(8, step),
		Workers: []ShuffleWorker{
			{Address: w1, BytesWritten: int64(100+step) << 20, BytesRead: 30 << 20, Disk: 70 << 20, Free: 2 << 30},
			{Address: w2, BytesWritten: 80 << 20, BytesRead: int64(10*step) << 20, Disk: 80 << 20, Free: 100 << 20},
		}}}}
}

var errProfile = errors.New("the profiler is off: start the workers with profiling on")

// Alerts makes the fake an AlertSource: a disk nearly full from the
// start, a straggler from step 1, and one resolved.
func (f *fakeSource) Alerts() *Alerts {
	step, _ := f.enter("Alerts", "alerts")
	out := &Alerts{Active: []diagnostics.Alert{{Name: "disk-full", Severity: "warning", Worker: w2, Path: "/scratch/<i>w2</i>",
		Value: 0.93, Threshold: 0.9, Start: t0.Add(9 * time.Minute),
		Message: "worker " + w2 + ": the file system of its local directory /scratch/<i>w2</i> is 93% full",
		Action:  "free space there"}},
		Recent: []diagnostics.Alert{{Name: "worker-slow", Severity: "warning", Worker: w1, Message: "worker " + w1 + " is slow",
			Action: "look at it", Start: t0.Add(time.Minute), End: t0.Add(2 * time.Minute)}}}
	if step > 0 {
		out.Active = append(out.Active, diagnostics.Alert{Name: "straggler", Severity: "critical", Worker: w1,
			Key: "inc-9b1e-7", Start: now(step), Message: "task inc-9b1e-7 has run for 1m0s on worker " + w1,
			Action: "look at the worker"})
	}
	return out
}
