package scheduler

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-data/shoal/graph"
)

func TestComputeAndRelease(t *testing.T) {
	tests := []struct {
		name  string
		specs []string
		want  []graph.Key
	}{
		{"single", []string{"a"}, []graph.Key{"a"}},
		{"chain", []string{"a", "b:a", "c:b", "d:c"}, []graph.Key{"d"}},
		{"diamond", []string{"a", "b:a", "c:a", "d:b,c"}, []graph.Key{"d"}},
		{"two outputs", []string{"a", "b:a", "c:a"}, []graph.Key{"b", "c"}},
		{"output is input", []string{"a", "b:a"}, []graph.Key{"a", "b"}},
		{"unneeded task", []string{"a", "b:a", "x"}, []graph.Key{"b"}},
	}
	for _, tc := range tests {
		for _, threads := range []int{1, 2, 8} {
			t.Run(tc.name, func(t *testing.T) {
				m := newSim(t, Config{})
				m.addWorker("w1", threads, nil)
				m.submit("c", gb(t, tc.specs...), tc.want...)
				m.runAll()
				for _, k := range tc.want {
					if m.results["c"][k] != 1 {
						t.Errorf("key %q reported %d times", k, m.results["c"][k])
					}
				}
				// Only the wanted values are still held.
				held := m.held["w1"]
				for k := range held {
					if !slices.Contains(tc.want, k) {
						t.Errorf("intermediate %q still held", k)
					}
				}
				if slices.Contains(tc.specs, "x") && slices.Contains(m.runs(), "x@w1") {
					t.Errorf("unneeded task ran")
				}
				m.handle(&KeysReleased{Client: "c"})
				if n := m.s.NumTasks(); n != 0 {
					t.Errorf("%d tasks left after release", n)
				}
				if len(m.held["w1"]) != 0 {
					t.Errorf("values left on the worker: %v", m.held["w1"])
				}
			})
		}
	}
}

func TestSaturationQueuesRootTasks(t *testing.T) {
	m := newSim(t, Config{})
	m.addWorker("w1", 2, nil)
	specs := []string{}
	var keys []graph.Key
	for _, k := range []string{"r0", "r1", "r2", "r3", "r4", "r5"} {
		specs = append(specs, k)
		keys = append(keys, graph.Key(k))
	}
	ins := m.submit("c", gb(t, specs...), keys...)
	if n := countRuns(ins); n != 2 {
		t.Fatalf("%d tasks started on a 2-thread worker, want 2", n)
	}
	if got := m.s.Counts()[Queued]; got != 4 {
		t.Fatalf("%d queued, want 4", got)
	}
	ins = m.handle(&TaskFinished{Key: m.running["w1"][0], Worker: "w1", Size: 1})
	m.hold("w1", m.running["w1"][0])
	m.running["w1"] = m.running["w1"][1:]
	if n := countRuns(ins); n != 1 {
		t.Fatalf("a finished task started %d new ones, want 1", n)
	}
	m.runAll()
	if len(m.results["c"]) != 6 {
		t.Fatalf("results: %v", m.results["c"])
	}
	// Static order: r0..r5 were started in graph order.
	want := []string{"r0@w1", "r1@w1", "r2@w1", "r3@w1", "r4@w1", "r5@w1"}
	if got := m.runs(); !slices.Equal(got, want) {
		t.Errorf("run order %v, want %v", got, want)
	}
}

func countRuns(ins []Instruction) int {
	n := 0
	for _, in := range ins {
		if _, ok := in.(*Run); ok {
			n++
		}
	}
	return n
}

func TestSaturationFactor(t *testing.T) {
	tests := []struct {
		threads int
		sat     float64
		want    int
	}{{1, 1, 1}, {2, 1, 2}, {2, 1.1, 3}, {4, 1.5, 6}, {1, 0.1, 1}}
	for _, tc := range tests {
		m := newSim(t, Config{Saturation: tc.sat})
		m.addWorker("w", tc.threads, nil)
		var specs []string
		var keys []graph.Key
		for i := range 20 {
			k := string(graph.NewKey("r", "", i))
			specs = append(specs, k)
			keys = append(keys, graph.Key(k))
		}
		if n := countRuns(m.submit("c", gb(t, specs...), keys...)); n != tc.want {
			t.Errorf("threads %d saturation %g: %d started, want %d", tc.threads, tc.sat, n, tc.want)
		}
	}
}

// TestBacklog: short tasks fill a worker beyond its saturation, as many as
// take Config.Backlog by their prefix's mean duration, capped by
// MaxSaturation; tasks of unknown duration keep to the saturation limit.
func TestBacklog(t *testing.T) {
	tests := []struct {
		name     string
		backlog  time.Duration
		duration time.Duration
		threads  int
		want     int // tasks running after the first one finished
	}{
		{"off", 0, time.Millisecond, 1, 1},
		{"10 per thread", 10 * time.Millisecond, time.Millisecond, 1, 10},
		{"two threads", 10 * time.Millisecond, time.Millisecond, 2, 20},
		{"long tasks", 10 * time.Millisecond, 50 * time.Millisecond, 1, 1},
		{"capped", 10 * time.Millisecond, time.Microsecond, 2, 2 * 16},
		{"unknown duration", 10 * time.Millisecond, 0, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newSim(t, Config{Saturation: 1, Backlog: tc.backlog, MaxSaturation: 16})
			m.duration = tc.duration
			m.addWorker("w", tc.threads, nil)
			var specs []string
			var keys []graph.Key
			for i := range 100 {
				k := string(graph.NewKey("r", "", i))
				specs = append(specs, k)
				keys = append(keys, graph.Key(k))
			}
			m.submit("c", gb(t, specs...), keys...)
			m.finish()
			if got := len(m.running["w"]); got != tc.want {
				t.Errorf("%d tasks on the worker, want %d", got, tc.want)
			}
			// Another prefix, never run yet, waits for a saturation slot.
			m.submit("c", gb(t, "s-0"), "s-0")
			for _, k := range m.running["w"] {
				if k == "s-0" && tc.want > tc.threads {
					t.Errorf("a task of unknown duration went to a worker beyond its saturation")
				}
			}
			m.runAll()
			if len(m.results["c"]) != 101 {
				t.Errorf("%d results, want 101", len(m.results["c"]))
			}
		})
	}
}

func TestPriorityAnnotation(t *testing.T) {
	m := newSim(t, Config{})
	m.addWorker("w1", 1, nil)
	g := gb(t, "a", "b", "c")
	hi, _ := g.Get("c")
	hi.Priority = 10
	m.submit("c", g, "a", "b", "c")
	m.runAll()
	if got := m.runs(); got[0] != "c@w1" {
		t.Errorf("run order %v: the high-priority task should run first", got)
	}
}

func TestLocality(t *testing.T) {
	m := newSim(t, Config{})
	m.addWorker("w1", 1, nil)
	m.addWorker("w2", 1, nil)
	m.submit("c", gb(t, "a", "b"), "a", "b")
	// a runs on w1, b on w2 (least loaded).
	if got := m.runs(); !slices.Equal(got, []string{"a@w1", "b@w2"}) {
		t.Fatalf("roots placed %v", got)
	}
	m.finish() // a on w1
	m.finish() // b on w2
	// c depends on b only: it must run on w2, where b is.
	m.submit("c2", gb(t, "a", "b", "c:b"), "c")
	runs := m.runs()
	if runs[len(runs)-1] != "c@w2" {
		t.Errorf("c placed %v, want on w2 next to its input", runs[len(runs)-1])
	}
	// d depends on a and b: needs a fetch.
	ins := m.submit("c3", gb(t, "a", "b", "d:a,b"), "d")
	fetches := 0
	for _, in := range ins {
		if f, ok := in.(*Fetch); ok {
			fetches++
			if f.To == f.From[0] {
				t.Errorf("fetch from a worker to itself: %+v", f)
			}
		}
	}
	if fetches != 1 {
		t.Errorf("%d fetches, want 1", fetches)
	}
}

func TestResourcesAndRestrictions(t *testing.T) {
	m := newSim(t, Config{})
	m.addWorker("cpu", 4, nil)
	m.addWorker("gpu", 4, map[string]float64{"GPU": 1})
	g := graph.New()
	for _, k := range []graph.Key{"g1", "g2", "g3"} {
		g.Add(&graph.Task{Key: k, Op: "op", Annotations: graph.Annotations{Resources: map[string]float64{"GPU": 1}}})
	}
	g.Add(&graph.Task{Key: "pinned", Op: "op", Annotations: graph.Annotations{Workers: []string{"cpu"}}})
	g.Add(&graph.Task{Key: "loose", Op: "op", Annotations: graph.Annotations{Workers: []string{"nobody"}, LooseRestrictions: true}})
	ins := m.submit("c", g, "g1", "g2", "g3", "pinned", "loose")
	gpuRuns := 0
	for _, in := range ins {
		if r, ok := in.(*Run); ok {
			switch r.Task.Key {
			case "g1", "g2", "g3":
				gpuRuns++
				if r.Worker != "gpu" {
					t.Errorf("%s ran on %s", r.Task.Key, r.Worker)
				}
			case "pinned":
				if r.Worker != "cpu" {
					t.Errorf("pinned ran on %s", r.Worker)
				}
			}
		}
	}
	if gpuRuns != 1 {
		t.Errorf("%d GPU tasks at once on one GPU", gpuRuns)
	}
	m.runAll()
	if len(m.results["c"]) != 5 {
		t.Errorf("results %v", m.results["c"])
	}
}

func TestUnrunnable(t *testing.T) {
	for _, fail := range []bool{false, true} {
		m := newSim(t, Config{FailUnrunnable: fail})
		m.addWorker("w", 1, nil)
		g := graph.New()
		g.Add(&graph.Task{Key: "x", Op: "op", Annotations: graph.Annotations{Resources: map[string]float64{"GPU": 1}}})
		g.Add(&graph.Task{Key: "y", Op: "op", Deps: []graph.Key{"x"}})
		m.submit("c", g, "y")
		if !fail {
			if m.s.Counts()[Queued] != 1 {
				t.Errorf("without FailUnrunnable the task waits in the queue: %v", m.s.Counts())
			}
			m.addWorker("gpu", 1, map[string]float64{"GPU": 2})
			m.runAll()
			if m.results["c"]["y"] != 1 {
				t.Errorf("not computed after a GPU worker joined")
			}
			continue
		}
		err := m.errs["c"]["y"]
		var ue *UnrunnableError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "GPU=1") {
			t.Errorf("error %v, want an UnrunnableError naming GPU=1", err)
		}
	}
}

func TestFailureBlamesRoot(t *testing.T) {
	m := newSim(t, Config{})
	m.addWorker("w1", 1, nil)
	g := gb(t, "a", "b:a", "c:b", "other")
	m.submit("c", g, "c", "other")
	if k, _ := m.fail(errBoom); k != "a" {
		t.Fatalf("first task %q", k)
	}
	m.runAll()
	var te *graph.TaskError
	err := m.errs["c"]["c"]
	if !errors.As(err, &te) {
		t.Fatalf("error %v is not a TaskError", err)
	}
	if te.Key != "c" || te.Root != "a" || te.RootOp != "op" || te.Worker != "w1" || !errors.Is(err, errBoom) {
		t.Errorf("error %+v", te)
	}
	if !strings.Contains(err.Error(), `dependency "a"`) {
		t.Errorf("message %q does not name the root", err)
	}
	if m.results["c"]["other"] != 1 {
		t.Errorf("independent task not computed")
	}
	m.handle(&KeysReleased{Client: "c"})
	if m.s.NumTasks() != 0 {
		d, _ := m.s.Dump()
		t.Errorf("tasks left: %s", d)
	}
}

func TestRetries(t *testing.T) {
	tests := []struct {
		retries, failures int
		ok                bool
	}{{0, 1, false}, {2, 2, true}, {2, 3, false}, {5, 1, true}}
	for _, tc := range tests {
		m := newSim(t, Config{})
		m.addWorker("w", 1, nil)
		g := graph.New()
		g.Add(&graph.Task{Key: "a", Op: "op", Annotations: graph.Annotations{Retries: tc.retries}})
		g.Add(&graph.Task{Key: "b", Op: "op", Deps: []graph.Key{"a"}})
		m.submit("c", g, "b")
		for range tc.failures {
			if _, ok := m.fail(errBoom); !ok {
				break
			}
		}
		m.runAll()
		if got := m.results["c"]["b"] == 1; got != tc.ok {
			t.Errorf("retries %d failures %d: computed %v, errors %v", tc.retries, tc.failures, got, m.errs)
		}
	}
}

func TestMissingDataIsNotAFailure(t *testing.T) {
	m := newSim(t, Config{})
	m.addWorker("w", 1, nil)
	m.submit("c", gb(t, "a", "b:a"), "b")
	m.finish()
	m.fail(errors.Join(ErrMissingData, errors.New("fetch a: connection refused")))
	m.runAll()
	if m.results["c"]["b"] != 1 {
		t.Fatalf("b not computed: %v", m.errs)
	}
}

func TestWorkerLost(t *testing.T) {
	m := newSim(t, Config{})
	m.addWorker("w1", 1, nil)
	m.addWorker("w2", 1, nil)
	m.submit("c", gb(t, "a", "b", "c:a,b"), "c")
	m.finish() // a on w1
	// b runs on w2; w2 dies.
	m.removeWorker("w2")
	m.runAll()
	if m.results["c"]["c"] != 1 {
		t.Fatalf("c not computed after losing a worker")
	}
	// Lose the result itself: it is computed again when still wanted.
	m.submit("d", gb(t, "a", "b", "c:a,b", "x:c"), "x")
	m.addWorker("w3", 1, nil)
	m.removeWorker("w1")
	m.runAll()
	if m.results["d"]["x"] != 1 {
		t.Fatalf("x not computed after losing its inputs: %v", m.errs)
	}
}

func TestKilledWorker(t *testing.T) {
	m := newSim(t, Config{AllowedFailures: 2})
	g := gb(t, "bad")
	m.addWorker("w1", 1, nil)
	m.submit("c", g, "bad")
	m.addWorker("w2", 1, nil)
	m.removeWorker("w1")
	m.removeWorker("w2")
	var kw *KilledWorkerError
	if !errors.As(m.errs["c"]["bad"], &kw) || len(kw.Workers) != 2 {
		t.Fatalf("error %v, want KilledWorkerError", m.errs["c"]["bad"])
	}
}

// TestWorkerRemovedSafe: workers stopped on purpose (restarted by their
// nanny) do not count towards a task's AllowedFailures; those that die do.
func TestWorkerRemovedSafe(t *testing.T) {
	tests := []struct {
		name   string
		safe   []bool // how each worker that runs the task is removed
		killed bool
	}{
		{"died twice: killed", []bool{false, false}, true},
		{"restarted twice: runs again", []bool{true, true}, false},
		{"restarted then died: runs again", []bool{true, false}, false},
		{"restarted three times, died twice: killed", []bool{true, false, true, false}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newSim(t, Config{AllowedFailures: 2})
			m.addWorker("w0", 1, nil)
			m.submit("c", gb(t, "bad"), "bad")
			for i, safe := range tc.safe {
				next := fmt.Sprintf("w%d", i+1)
				m.addWorker(next, 1, nil)
				prev := fmt.Sprintf("w%d", i)
				delete(m.running, prev)
				delete(m.held, prev)
				m.handle(&WorkerRemoved{Worker: prev, Reason: "test", Safe: safe})
			}
			var kw *KilledWorkerError
			if killed := errors.As(m.errs["c"]["bad"], &kw); killed != tc.killed {
				t.Fatalf("error %v, want killed %v", m.errs["c"]["bad"], tc.killed)
			}
			if tc.killed {
				return
			}
			m.runAll()
			if m.results["c"]["bad"] != 1 {
				t.Fatalf("not computed after the restarts: %v", m.errs)
			}
		})
	}
}

func TestCancel(t *testing.T) {
	m := newSim(t, Config{})
	m.addWorker("w", 1, nil)
	m.submit("c", gb(t, "a", "b:a", "x", "y:x"), "b", "y")
	m.finish() // a
	// b runs now, x and y wait.
	reason := errors.New("context canceled")
	ins := m.handle(&Cancel{Client: "c", Reason: reason})
	var cancelled []graph.Key
	for _, in := range ins {
		if c, ok := in.(*CancelRun); ok {
			cancelled = append(cancelled, c.Key)
		}
	}
	if len(cancelled) != 1 {
		t.Fatalf("cancelled runs %v", cancelled)
	}
	if !errors.Is(m.errs["c"]["b"], reason) || !errors.Is(m.errs["c"]["y"], reason) {
		t.Errorf("errors %v", m.errs["c"])
	}
	// The running task reports back: its value is dropped and the state empties.
	m.runAll()
	if n := m.s.NumTasks(); n != 0 {
		d, _ := m.s.Dump()
		t.Fatalf("%d tasks left after cancel:\n%s", n, d)
	}
	for _, in := range m.log {
		if r, ok := in.(*Run); ok && (r.Task.Key == "x" || r.Task.Key == "y") {
			t.Errorf("%s started after cancel", r.Task.Key)
		}
	}
}

func TestCancelledTaskNeededAgain(t *testing.T) {
	m := newSim(t, Config{})
	m.addWorker("w", 1, nil)
	m.submit("c1", gb(t, "a"), "a")
	m.handle(&Cancel{Client: "c1"})
	m.submit("c2", gb(t, "a", "b:a"), "b")
	m.runAll()
	if m.results["c2"]["b"] != 1 {
		t.Fatalf("b not computed: %v %v", m.results, m.errs)
	}
	if n := len(m.runs()); n != 2 {
		t.Errorf("runs %v: the cancelled but still running task should be reused", m.runs())
	}
}

func TestSharedKeysBetweenClients(t *testing.T) {
	m := newSim(t, Config{})
	m.addWorker("w", 2, nil)
	m.submit("c1", gb(t, "a", "b:a"), "b")
	m.submit("c2", gb(t, "a", "b:a", "c:b"), "c", "b")
	m.runAll()
	if m.results["c1"]["b"] != 1 || m.results["c2"]["c"] != 1 || m.results["c2"]["b"] != 1 {
		t.Fatalf("results %v", m.results)
	}
	runsOfA := 0
	for _, r := range m.runs() {
		if r == "a@w" {
			runsOfA++
		}
	}
	if runsOfA != 1 {
		t.Errorf("a ran %d times", runsOfA)
	}
	m.handle(&KeysReleased{Client: "c1"})
	if ti, ok := m.s.Task("b"); !ok || ti.State != Memory {
		t.Fatalf("b released while c2 holds it")
	}
	// A third client asks for a held key: reported at once.
	m.submit("c3", gb(t, "a", "b:a"), "b")
	if m.results["c3"]["b"] != 1 {
		t.Errorf("held key not reported at once")
	}
	m.handle(&KeysReleased{Client: "c2"}, &KeysReleased{Client: "c3"})
	if m.s.NumTasks() != 0 {
		t.Errorf("tasks left")
	}
}

func TestExternalKeys(t *testing.T) {
	m := newSim(t, Config{})
	m.addWorker("w", 1, nil)
	m.submit("persist", gb(t, "p"), "p")
	m.runAll()
	g := gb(t, "q")
	q, _ := g.Get("q")
	q.Deps = []graph.Key{"p"}
	g.AddExternal("p")
	m.submit("c", g, "q")
	m.runAll()
	if m.results["c"]["q"] != 1 {
		t.Fatalf("q not computed from persisted p")
	}
	g2 := gb(t, "r")
	r, _ := g2.Get("r")
	r.Deps = []graph.Key{"gone"}
	g2.AddExternal("gone")
	m.submit("c", g2, "r")
	var mk *MissingKeyError
	if !errors.As(m.errs["c"]["r"], &mk) || mk.Key != "gone" {
		t.Fatalf("error %v, want MissingKeyError", m.errs["c"]["r"])
	}
	m.submit("c", graph.New(), "nowhere")
	if m.errs["c"]["nowhere"] == nil {
		t.Errorf("no error for a key in no graph")
	}
	m.handle(&KeysReleased{Client: "c"}, &KeysReleased{Client: "persist"})
	if m.s.NumTasks() != 0 {
		d, _ := m.s.Dump()
		t.Errorf("tasks left: %s", d)
	}
}

func TestPause(t *testing.T) {
	m := newSim(t, Config{})
	m.addWorker("w", 1, nil)
	m.handle(&WorkerMemory{Worker: "w", Process: 900 << 20})
	if m.s.Workers()[0].State != WorkerPaused {
		t.Fatalf("worker at 88%% of its limit not paused")
	}
	if n := countRuns(m.submit("c", gb(t, "a"), "a")); n != 0 {
		t.Fatalf("paused worker got %d tasks", n)
	}
	if n := countRuns(m.handle(&WorkerMemory{Worker: "w", Process: 100 << 20})); n != 1 {
		t.Fatalf("resumed worker got %d tasks", n)
	}
	m.runAll()
	m.handle(&WorkerRetiring{Worker: "w"})
	if n := countRuns(m.submit("c", gb(t, "b"), "b")); n != 0 {
		t.Fatalf("retiring worker got %d tasks", n)
	}
}

func TestStoryAndDump(t *testing.T) {
	m := newSim(t, Config{})
	m.addWorker("w", 1, nil)
	m.handle(&GraphSubmitted{Meta: Meta{Stimulus: "submit-1"}, Client: "c", Graph: gb(t, "a", "b:a"), Keys: []graph.Key{"b"}})
	m.runAll()
	var path []string
	for _, tr := range m.s.Story("a") {
		path = append(path, tr.From.String()+">"+tr.To.String())
	}
	want := []string{"released>waiting", "waiting>queued", "queued>processing", "processing>memory", "memory>released"}
	if !slices.Equal(path, want) {
		t.Errorf("story of a: %v, want %v", path, want)
	}
	if st := m.s.Story("a")[0]; st.Stimulus != "submit-1" || st.Cause != "graph-submitted" || st.Time.IsZero() {
		t.Errorf("first transition %+v", st)
	}
	b, err := m.s.Dump()
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"state": "memory"`) || !strings.Contains(string(b), `"to": "processing"`) {
		t.Errorf("dump lacks states:\n%s", b)
	}
}

func TestTransitionLogBound(t *testing.T) {
	m := newSim(t, Config{LogSize: 10})
	m.addWorker("w", 1, nil)
	var specs []string
	var keys []graph.Key
	for i := range 20 {
		specs = append(specs, string(graph.NewKey("t", "", i)))
		keys = append(keys, graph.NewKey("t", "", i))
	}
	m.submit("c", gb(t, specs...), keys...)
	m.runAll()
	all := m.s.Transitions()
	if len(all) != 10 {
		t.Fatalf("%d transitions kept, want 10", len(all))
	}
	total := m.s.TransitionCount()
	since := m.s.TransitionsSince(total-3, nil)
	if len(since) != 3 || since[2] != all[9] || since[0] != all[7] {
		t.Errorf("TransitionsSince: %v", since)
	}
	if got := m.s.TransitionsSince(0, nil); len(got) != 10 || got[0] != all[0] {
		t.Errorf("TransitionsSince(0) gave %d", len(got))
	}
	if got := m.s.TransitionsSince(total, nil); len(got) != 0 {
		t.Errorf("nothing new expected")
	}
}

func TestStaleResult(t *testing.T) {
	m := newSim(t, Config{})
	m.addWorker("w", 1, nil)
	ins := m.handle(&TaskFinished{Key: "ghost", Worker: "w"})
	if len(ins) != 1 {
		t.Fatalf("instructions %v", ins)
	}
	if r, ok := ins[0].(*Release); !ok || r.Key != "ghost" {
		t.Errorf("want a release of the stray value, got %#v", ins[0])
	}
	// Events for unknown workers are ignored.
	m.handle(&TaskFailed{Key: "ghost", Worker: "nobody", Err: errBoom}, &WorkerRemoved{Worker: "nobody"},
		&WorkerMemory{Worker: "nobody"}, &KeysReleased{Client: "nobody"})
}

func TestHeldCounts(t *testing.T) {
	s := New(Config{})
	s.Handle(&WorkerAdded{Worker: WorkerInfo{Name: "w1", Threads: 1}}, &WorkerAdded{Worker: WorkerInfo{Name: "w2", Threads: 1}})
	g := graph.New()
	g.Add(&graph.Task{Key: "a", Op: "op"})
	ins := s.Handle(&GraphSubmitted{Client: "c", Graph: g, Keys: []graph.Key{"a"}})
	var run *Run
	for _, in := range ins {
		if r, ok := in.(*Run); ok {
			c := *r // instructions are reused by the next Handle
			run = &c
		}
	}
	if run == nil {
		t.Fatal("no Run")
	}
	s.Handle(&TaskFinished{Key: "a", ID: run.ID, Worker: run.Worker, Size: 8})
	got := s.HeldCounts()
	other := "w1"
	if run.Worker == "w1" {
		other = "w2"
	}
	if len(got) != 2 || got[run.Worker] != 1 || got[other] != 0 {
		t.Fatalf("HeldCounts = %v, want 1 on %s and 0 on %s", got, run.Worker, other)
	}
}
