package local

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/graph"
)

// telemetryRegistry has "test.spin", which burns about as many
// milliseconds of CPU as its params say, and "test.report", which logs with the
// task's logger and reports a metric of its own.
func telemetryRegistry(t *testing.T) *graph.Registry {
	reg := testRegistry(t)
	err := reg.Register(graph.Op{Name: "test.spin", Signature: "v1", Run: func(_ context.Context, in graph.OpInput) (any, error) {
		v, err := in.Env.Registry.UnmarshalValue(in.Params)
		if err != nil {
			return nil, err
		}
		// A fixed amount of work, about a millisecond of CPU per unit,
		// rather than of time: on a loaded machine the share of the
		// samples stays that of the work.
		x := uint64(v.(int64))
		for range v.(int64) * 1_000_000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
		return int64(x & 1), nil
	}})
	if err == nil {
		err = reg.Register(graph.Op{Name: "test.report", Signature: "v1", Run: func(ctx context.Context, in graph.OpInput) (any, error) {
			graph.Logger(ctx).Info("reporting", "n", 3)
			graph.AddMetric(ctx, diagnostics.ActivityDiskWrite, diagnostics.UnitBytes, 1234)
			return int64(3), nil
		}})
	}
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func int64Params(t *testing.T, reg *graph.Registry, v int64) []byte {
	b, err := reg.MarshalValue(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestProfile runs tasks of which one kind burns the CPU: the executor's
// profile gives that prefix most of the samples, labelled with the key
// and the computation.
func TestProfile(t *testing.T) {
	reg := telemetryRegistry(t)
	e := New(WithRegistry(reg), WithThreads(2))
	defer e.Close()
	g := graph.New()
	var keys []graph.Key
	for i := range 4 {
		k := graph.NewKey("spin", "0123456789abcdef", i)
		g.Add(&graph.Task{Key: k, Op: "test.spin", Params: int64Params(t, reg, 120)})
		a := graph.NewKey("add", "0123456789abcdef", i)
		g.Add(&graph.Task{Key: a, Op: "test.add", Params: int64Params(t, reg, 1)})
		keys = append(keys, k, a)
	}
	start := time.Now()
	if _, err := e.Compute(context.Background(), g, keys...); err != nil {
		t.Fatal(err)
	}
	p, err := e.Profile(context.Background(), diagnostics.ProfileOptions{Start: start})
	if err != nil {
		t.Fatal(err)
	}
	cpu := diagnostics.CPUByPrefix(p)
	var labelled, all float64
	for _, s := range p.Sample {
		v := float64(s.Value[len(s.Value)-1]) / 1e9
		all += v
		if len(s.Label[diagnostics.LabelPrefix]) > 0 {
			labelled += v
			if k := s.Label[diagnostics.LabelKey]; len(k) != 1 || s.Label[diagnostics.LabelComputation][0] != "1" ||
				s.Label[diagnostics.LabelWorker][0] != "local" {
				t.Fatalf("sample labels %v", s.Label)
			}
		}
	}
	t.Logf("CPU by prefix %v, %.2f s in all", cpu, all)
	if cpu["spin"] < 0.05 || cpu["spin"] < 0.5*all {
		t.Errorf("spin has %.2f s of %.2f s sampled, want most", cpu["spin"], all)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if _, err := profile.Parse(&buf); err != nil {
		t.Fatal(err)
	}

	off := New(WithRegistry(reg), WithProfiling(false))
	defer off.Close()
	if _, err := off.Profile(context.Background(), diagnostics.ProfileOptions{}); !errors.Is(err, diagnostics.ErrNoProfile) {
		t.Errorf("profile of an executor that does not profile: %v, want ErrNoProfile", err)
	}
}

// lines is a slog handler that keeps what it is given.
type lines struct {
	mu    sync.Mutex
	recs  []slog.Record
	attrs []slog.Attr
}

func (l *lines) Enabled(context.Context, slog.Level) bool { return true }
func (l *lines) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	r = r.Clone()
	r.AddAttrs(l.attrs...)
	l.recs = append(l.recs, r)
	return nil
}
func (l *lines) WithAttrs(as []slog.Attr) slog.Handler {
	return &sharedLines{l, as}
}
func (l *lines) WithGroup(string) slog.Handler { return l }

type sharedLines struct {
	l     *lines
	attrs []slog.Attr
}

func (s *sharedLines) Enabled(context.Context, slog.Level) bool { return true }
func (s *sharedLines) Handle(ctx context.Context, r slog.Record) error {
	r = r.Clone()
	r.AddAttrs(s.attrs...)
	return s.l.Handle(ctx, r)
}
func (s *sharedLines) WithAttrs(as []slog.Attr) slog.Handler {
	return &sharedLines{s.l, append(append([]slog.Attr(nil), s.attrs...), as...)}
}
func (s *sharedLines) WithGroup(string) slog.Handler { return s }

// TestTaskLoggerAndFineMetrics checks that a task's logger is tagged with
// the task and that the fine metrics have its compute time, its queue
// time, what it reported, spills and the idle threads.
func TestTaskLoggerAndFineMetrics(t *testing.T) {
	reg := telemetryRegistry(t)
	h := &lines{}
	e := New(WithRegistry(reg), WithThreads(2), WithLogger(slog.New(h)), WithMemoryLimit(1<<20), WithSpillFraction(0.5),
		WithLocalDir(t.TempDir()))
	defer e.Close()
	g := graph.New()
	g.Add(&graph.Task{Key: "report-1", Op: "test.report"})
	var keys []graph.Key
	for i := range 4 {
		k := graph.NewKey("big", "", i)
		g.Add(&graph.Task{Key: k, Op: "test.big", Params: int64Params(t, reg, 50_000)}) // 400 kB each: spills
		keys = append(keys, k)
	}
	g.Add(&graph.Task{Key: "spin-1", Op: "test.spin", Params: int64Params(t, reg, 50)})
	if _, err := e.Compute(context.Background(), g, append(keys, "report-1", "spin-1")...); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	var found bool
	for _, r := range h.recs {
		if r.Message != "reporting" {
			continue
		}
		found = true
		attrs := map[string]string{}
		r.Attrs(func(a slog.Attr) bool {
			attrs[a.Key] = a.Value.String()
			return true
		})
		if attrs["key"] != "report-1" || attrs["prefix"] != "report" || attrs["worker"] != "local" ||
			attrs["computation"] != "1" || attrs["n"] != "3" {
			t.Errorf("the task's record has %v", attrs)
		}
	}
	h.mu.Unlock()
	if !found {
		t.Error("the task's record was not logged")
	}
	ms, err := e.FineMetrics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	get := func(prefix, activity, unit string) float64 {
		for _, m := range ms {
			if m.Prefix == prefix && m.Activity == activity && m.Unit == unit && m.Worker == "local" {
				return m.Value
			}
		}
		return 0
	}
	checks := []struct {
		prefix, activity, unit string
		least                  float64
	}{
		{"spin", diagnostics.ActivityCompute, diagnostics.UnitSeconds, 0.04},
		{"big", diagnostics.ActivityCompute, diagnostics.UnitSeconds, 1e-6},
		{"big", diagnostics.ActivityQueued, diagnostics.UnitSeconds, 1e-9},
		{"big", diagnostics.ActivitySpillWrite, diagnostics.UnitBytes, 400_000},
		{"big", diagnostics.ActivitySpillWrite, diagnostics.UnitCount, 1},
		{"big", diagnostics.ActivityEncode, diagnostics.UnitSeconds, 1e-9},
		{"report", diagnostics.ActivityDiskWrite, diagnostics.UnitBytes, 1234},
		{"", diagnostics.ActivityIdle, diagnostics.UnitSeconds, 1e-6}, // spin ran alone at the end
	}
	for _, c := range checks {
		if got := get(c.prefix, c.activity, c.unit); got < c.least {
			t.Errorf("%s %s %s: %v, want at least %v", c.prefix, c.activity, c.unit, got, c.least)
		}
	}
	if t.Failed() {
		var b strings.Builder
		for _, m := range ms {
			b.WriteString(m.Prefix + " " + m.Activity + " " + m.Unit + "\n")
		}
		t.Logf("fine metrics:\n%s", b.String())
	}

	// Subscribers hear of them as Metrics events.
	rec := diagnostics.NewRecorder()
	rec.Attach(e.Events())
	defer rec.Close()
	if _, err := e.Compute(context.Background(), g, "spin-1"); err != nil {
		t.Fatal(err)
	}
	var fromEvents float64
	for _, m := range rec.FineMetrics() {
		if m.Prefix == "spin" && m.Activity == diagnostics.ActivityCompute {
			fromEvents += m.Value
		}
	}
	if fromEvents <= 0 {
		t.Errorf("no compute time of spin in the Metrics events: %+v", rec.FineMetrics())
	}
}
