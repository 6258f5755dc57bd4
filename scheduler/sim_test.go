package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/shoal-data/shoal/graph"
)

// sim plays the part of the workers and clients around a State: it carries
// out instructions in memory, checks the scheduler's promises (a task runs
// only where its inputs are) and validates the state after every event.
type sim struct {
	t       testing.TB
	s       *State
	now     time.Time
	running map[string][]graph.Key         // per worker, in order of Run
	held    map[string]map[graph.Key]bool  // per worker
	results map[string]map[graph.Key]int   // per client: result reports
	errs    map[string]map[graph.Key]error // per client: error reports
	log     []Instruction
	ids     map[graph.Key]int32      // from Run, passed back as executors do
	asked   map[string][][]graph.Key // per client: the Keys of each submission
	noCheck bool
	// duration is the compute time finished tasks report.
	duration time.Duration
	// giveUp makes workers give up the tasks stolen from them (CancelRun
	// with Steal) that they have not started: they are reported cancelled
	// by the next finish. Otherwise they run them.
	giveUp  bool
	given   []stolen
	givenUp int
}

type stolen struct {
	worker string
	key    graph.Key
}

func newSim(t testing.TB, cfg Config) *sim {
	return &sim{t: t, s: New(cfg), now: time.Unix(1_700_000_000, 0),
		running: map[string][]graph.Key{}, held: map[string]map[graph.Key]bool{},
		results: map[string]map[graph.Key]int{}, errs: map[string]map[graph.Key]error{},
		ids: map[graph.Key]int32{}, asked: map[string][][]graph.Key{}}
}

func (m *sim) handle(evs ...Event) []Instruction {
	m.t.Helper()
	for _, e := range evs {
		m.now = m.now.Add(time.Millisecond)
		e.meta().Time = m.now
		if gs, ok := e.(*GraphSubmitted); ok {
			m.asked[gs.Client] = append(m.asked[gs.Client], gs.Keys)
		}
	}
	ins := m.s.Handle(evs...)
	if !m.noCheck {
		if err := m.s.Validate(); err != nil {
			dump, _ := m.s.Dump()
			m.t.Fatalf("invalid state after %T: %v\n%s", evs[0], err, dump)
		}
	}
	out := make([]Instruction, len(ins))
	for i, in := range ins {
		out[i] = copyInstruction(in)
	}
	for _, in := range out {
		m.apply(in)
	}
	m.log = append(m.log, out...)
	return out
}

func (m *sim) apply(in Instruction) {
	switch in := in.(type) {
	case *Run:
		for _, d := range in.Task.Deps {
			if !m.held[in.Worker][d] {
				m.t.Fatalf("run %q on %s: input %q is not there", in.Task.Key, in.Worker, d)
			}
		}
		m.running[in.Worker] = append(m.running[in.Worker], in.Task.Key)
		if len(in.DepIDs) != len(in.Task.Deps) || in.ID <= 0 {
			m.t.Fatalf("run %q: id %d, %d dep ids for %d deps", in.Task.Key, in.ID, len(in.DepIDs), len(in.Task.Deps))
		}
		m.ids[in.Task.Key] = in.ID
	case *Fetch:
		found := false
		for _, w := range in.From {
			found = found || m.held[w][in.Key]
		}
		if !found {
			m.t.Fatalf("fetch %q from %v: nobody holds it", in.Key, in.From)
		}
		m.hold(in.To, in.Key)
	case *Release:
		for _, w := range in.Workers {
			delete(m.held[w], in.Key)
		}
	case *CancelRun:
		// A task not first in its worker's list has not started.
		ks := m.running[in.Worker]
		if in.Steal && m.giveUp && len(ks) > 1 {
			for i, k := range ks[1:] {
				if k == in.Key {
					m.running[in.Worker] = append(ks[:i+1:i+1], ks[i+2:]...)
					m.given = append(m.given, stolen{in.Worker, k})
					m.givenUp++
					break
				}
			}
		}
	case *ReportResult:
		m.checkIndex(in.Client, in.Key, in.Index)
		if m.results[in.Client] == nil {
			m.results[in.Client] = map[graph.Key]int{}
		}
		m.results[in.Client][in.Key]++
	case *ReportError:
		if m.errs[in.Client] == nil {
			m.errs[in.Client] = map[graph.Key]error{}
		}
		m.errs[in.Client][in.Key] = in.Err
	}
}

func (m *sim) hold(w string, k graph.Key) {
	if m.held[w] == nil {
		m.held[w] = map[graph.Key]bool{}
	}
	m.held[w][k] = true
}

func (m *sim) addWorker(name string, threads int, res map[string]float64) {
	m.handle(&WorkerAdded{Worker: WorkerInfo{Name: name, Threads: threads, MemoryLimit: 1 << 30, Resources: res}})
}

func (m *sim) submit(client string, g *graph.Graph, keys ...graph.Key) []Instruction {
	return m.handle(&GraphSubmitted{Client: client, Graph: g, Keys: keys})
}

// next pops the oldest running task of a worker (workers in name order).
func (m *sim) next() (string, graph.Key, bool) {
	ws := make([]string, 0, len(m.running))
	for w, ks := range m.running {
		if len(ks) > 0 {
			ws = append(ws, w)
		}
	}
	if len(ws) == 0 {
		return "", "", false
	}
	sort.Strings(ws)
	w := ws[0]
	k := m.running[w][0]
	m.running[w] = m.running[w][1:]
	return w, k, true
}

// finish completes the oldest running task; it returns false when none runs.
// Tasks given up to a steal are reported first.
func (m *sim) finish() bool {
	if len(m.given) > 0 {
		g := m.given[0]
		m.given = m.given[1:]
		m.handle(&TaskFailed{Key: g.key, ID: m.ids[g.key], Worker: g.worker,
			Err: fmt.Errorf("given up: %w", context.Canceled)})
		return true
	}
	w, k, ok := m.next()
	if !ok {
		return false
	}
	m.hold(w, k)
	m.handle(&TaskFinished{Key: k, ID: m.ids[k], Worker: w, Size: 100, Duration: m.duration})
	return true
}

// fail fails the oldest running task with err.
func (m *sim) fail(err error) (graph.Key, bool) {
	w, k, ok := m.next()
	if !ok {
		return "", false
	}
	m.handle(&TaskFailed{Key: k, ID: m.ids[k], Worker: w, Err: err})
	return k, true
}

func (m *sim) runAll() {
	for m.finish() {
	}
}

func (m *sim) removeWorker(name string) {
	delete(m.running, name)
	delete(m.held, name)
	m.handle(&WorkerRemoved{Worker: name, Reason: "test"})
}

func (m *sim) runs() []string {
	var out []string
	for _, in := range m.log {
		if r, ok := in.(*Run); ok {
			out = append(out, fmt.Sprintf("%s@%s", r.Task.Key, r.Worker))
		}
	}
	return out
}

// gb builds graphs tersely: gb("a", "b:a", "c:a,b") is a, b depending on a,
// and c depending on a and b.
func gb(t testing.TB, specs ...string) *graph.Graph {
	t.Helper()
	g := graph.New()
	for _, s := range specs {
		key, deps, _ := cut(s, ':')
		task := &graph.Task{Key: graph.Key(key), Op: "op"}
		if deps != "" {
			for _, d := range splitComma(deps) {
				task.Deps = append(task.Deps, graph.Key(d))
			}
		}
		if err := g.Add(task); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

func cut(s string, sep byte) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == sep {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func splitComma(s string) []string {
	var out []string
	for {
		a, b, ok := cut(s, ',')
		out = append(out, a)
		if !ok {
			return out
		}
		s = b
	}
}

var errBoom = errors.New("boom")

// checkIndex checks that a report's Index points at its key in one of the
// client's submissions.
func (m *sim) checkIndex(client string, k graph.Key, idx int) {
	for _, keys := range m.asked[client] {
		if idx >= 0 && idx < len(keys) && keys[idx] == k {
			return
		}
	}
	m.t.Fatalf("report of %q to %s has index %d, which is not where it asked for it", k, client, idx)
}

// copyInstruction copies an instruction out of the scheduler's reused
// memory.
func copyInstruction(in Instruction) Instruction {
	switch in := in.(type) {
	case *Run:
		c := *in
		return &c
	case *Release:
		c := *in
		return &c
	case *ReportResult:
		c := *in
		return &c
	}
	return in
}
