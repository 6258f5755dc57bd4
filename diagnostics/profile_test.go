package diagnostics

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"runtime/pprof"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// burn spends CPU until d has passed.
func burn(d time.Duration) uint64 {
	var x uint64 = 1
	for end := time.Now().Add(d); time.Now().Before(end); {
		for i := 0; i < 10_000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	return x
}

var sinkBurn uint64

// collect gathers a profiler's windows.
type collect struct {
	mu sync.Mutex
	ws []*ProfileWindow
}

func (c *collect) add(w *ProfileWindow) {
	c.mu.Lock()
	c.ws = append(c.ws, w)
	c.mu.Unlock()
}

func (c *collect) cpu() (byPrefix map[string]float64, unlabelled float64, workers []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	byPrefix = map[string]float64{}
	for _, w := range c.ws {
		for p, s := range CPUByPrefix(w.Profile) {
			byPrefix[p] += s
		}
		i := cpuIndex(w.Profile)
		for _, sm := range w.Profile.Sample {
			if _, ok := sm.Label[LabelPrefix]; !ok {
				unlabelled += float64(sm.Value[i]) / 1e9
			}
			if _, ok := sm.Label[labelOwner]; ok {
				panic("a window still has the owner label")
			}
			for _, wk := range sm.Label[LabelWorker] {
				if !slices.Contains(workers, wk) {
					workers = append(workers, wk)
				}
			}
		}
	}
	return byPrefix, unlabelled, workers
}

// TestProfilerAttributes checks that the samples of a task that burns
// CPU carry its labels, and that two profilers of one process each get
// their own tasks' samples.
func TestProfilerAttributes(t *testing.T) {
	var a, b collect
	pa := StartProfiler(ProfilerOptions{Worker: "wa", Window: time.Hour, OnWindow: a.add})
	pb := StartProfiler(ProfilerOptions{Worker: "wb", Window: time.Hour, OnWindow: b.add})
	ctx := context.Background()
	pa.Do(ctx, "burn-1", "burn", "7", func(ctx context.Context) {
		// Goroutines the task starts are labelled too.
		var wg sync.WaitGroup
		var other uint64
		wg.Add(1)
		go func() {
			defer wg.Done()
			other = burn(200 * time.Millisecond)
		}()
		sinkBurn += burn(200 * time.Millisecond)
		wg.Wait()
		sinkBurn += other
		if l, _ := pprof.Label(ctx, LabelKey); l != "burn-1" {
			t.Errorf("the task's context has key label %q", l)
		}
	})
	lctx := pb.Begin(ctx, "other-1", "other", "8")
	sinkBurn += burn(150 * time.Millisecond)
	pb.End(ctx)
	sinkBurn += burn(50 * time.Millisecond) // no task
	if err := pa.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := pprof.Label(lctx, LabelPrefix); !ok {
		t.Error("Begin's context has no prefix label")
	}
	pb.Stop()
	pa.Stop()

	ca, ua, wa := a.cpu()
	cb, ub, wb := b.cpu()
	t.Logf("a: %v (no task %.2fs, workers %v); b: %v (no task %.2fs, workers %v)", ca, ua, wa, cb, ub, wb)
	// 0.4 s of CPU burnt by the task when the machine is idle; less when
	// it is loaded, but some.
	if ca["burn"] < 0.02 || ca["other"] != 0 || len(ca) != 1 {
		t.Errorf("profiler a has CPU %v: want burn's (about 0.4 s), nothing of other", ca)
	}
	if cb["other"] < 0.01 || cb["burn"] != 0 || ub != 0 {
		t.Errorf("profiler b has CPU %v and %.2f s of no task: want other's only", cb, ub)
	}
	if !slices.Equal(wa, []string{"wa"}) || !slices.Equal(wb, []string{"wb"}) {
		t.Errorf("worker labels %v and %v, want [wa] and [wb]", wa, wb)
	}
	for _, w := range a.ws {
		if w.Worker != "wa" || !w.Stop.After(w.Start) || w.Profile.TimeNanos != w.Start.UnixNano() {
			t.Errorf("window %+v", w)
		}
	}
}

// TestProfilerWindows checks that windows are cut at the window's length
// and that Flush cuts one at once.
func TestProfilerWindows(t *testing.T) {
	var c collect
	p := StartProfiler(ProfilerOptions{Worker: "w", Window: 100 * time.Millisecond, OnWindow: c.add})
	defer p.Stop()
	p.Do(context.Background(), "spin-1", "spin", "", func(context.Context) { sinkBurn += burn(450 * time.Millisecond) })
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	n := len(c.ws)
	for i := 1; i < n; i++ {
		if c.ws[i].Start.Before(c.ws[i-1].Stop.Add(-time.Millisecond)) {
			t.Errorf("window %d starts at %v, before the previous stopped (%v)", i, c.ws[i].Start, c.ws[i-1].Stop)
		}
	}
	c.mu.Unlock()
	if n < 2 {
		t.Errorf("%d windows of samples in 450 ms of 100 ms windows, want several", n)
	}
}

// cpuProfile makes a CPU profile of samples: each a stack of function
// names (outermost first), labels and nanoseconds.
func cpuProfile(samples ...testSample) *profile.Profile {
	p := emptyCPUProfile(time.Unix(0, 0), time.Unix(1, 0))
	funcs := map[string]*profile.Function{}
	locs := map[string]*profile.Location{}
	for _, s := range samples {
		var ls []*profile.Location
		for i := len(s.stack) - 1; i >= 0; i-- {
			name := s.stack[i]
			l := locs[name]
			if l == nil {
				f := &profile.Function{ID: uint64(len(funcs) + 1), Name: name}
				funcs[name] = f
				p.Function = append(p.Function, f)
				l = &profile.Location{ID: uint64(len(locs) + 1), Line: []profile.Line{{Function: f}}}
				locs[name] = l
				p.Location = append(p.Location, l)
			}
			ls = append(ls, l)
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: ls, Value: []int64{s.ns / 1e7, s.ns}, Label: s.labels})
	}
	return p
}

type testSample struct {
	stack  []string
	labels map[string][]string
	ns     int64
}

func labels(prefix, worker string) map[string][]string {
	m := map[string][]string{LabelWorker: {worker}}
	if prefix != "" {
		m[LabelPrefix] = []string{prefix}
	}
	return m
}

func window(worker string, start time.Time, d time.Duration, samples ...testSample) *ProfileWindow {
	p := cpuProfile(samples...)
	p.TimeNanos, p.DurationNanos = start.UnixNano(), int64(d)
	return &ProfileWindow{Worker: worker, Start: start, Stop: start.Add(d), Profile: p}
}

func totalCPU(p *profile.Profile) (ns int64) {
	for _, s := range p.Sample {
		ns += s.Value[1]
	}
	return ns
}

func TestProfileStore(t *testing.T) {
	t0 := time.Unix(1_000_200, 0) // on a boundary of 5 minutes
	s := NewProfileStore(0)
	// Two workers, a window every 5 seconds for 20 minutes: 10 ms of
	// "read" on w1 and 20 ms of "sum" on w2 in each.
	for i := range 240 {
		at := t0.Add(time.Duration(i) * 5 * time.Second)
		s.Add(window("w1", at, 5*time.Second, testSample{[]string{"main", "read"}, labels("read", "w1"), 1e7}))
		s.Add(window("w2", at, 5*time.Second, testSample{[]string{"main", "sum"}, labels("sum", "w2"), 2e7},
			testSample{[]string{"runtime.gc"}, labels("", "w2"), 1e7}))
	}
	end := t0.Add(20 * time.Minute)
	tests := []struct {
		name string
		opts ProfileOptions
		want int64 // ns
	}{
		{"all", ProfileOptions{}, 240 * 4e7},
		{"w1", ProfileOptions{Workers: []string{"w1"}}, 240 * 1e7},
		{"sum", ProfileOptions{Prefixes: []string{"sum"}}, 240 * 2e7},
		{"read and sum", ProfileOptions{Prefixes: []string{"read", "sum"}}, 240 * 3e7},
		{"last 30s", ProfileOptions{Start: end.Add(-30 * time.Second)}, 7 * 4e7}, // as they came; the one that ends at Start counts
		{"after the end", ProfileOptions{Start: end.Add(time.Minute)}, 0},        // nothing
		{"w9", ProfileOptions{Workers: []string{"w9"}}, 0},                       // no such worker
		{"first 2 minutes", ProfileOptions{Stop: t0.Add(2 * time.Minute)}, 0},    // merged into 5 minutes: counted below
	}
	for _, tc := range tests {
		p, err := s.Profile(tc.opts)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if tc.name == "first 2 minutes" {
			// Windows older than a minute were merged into minutes, and
			// minutes older than a quarter of an hour into five: the
			// first four minutes (the fifth ended a quarter of an hour
			// ago to the second) come whole.
			tc.want = 48 * 4e7
		}
		if got := totalCPU(p); got != tc.want {
			t.Errorf("%s: %d ns of CPU, want %d", tc.name, got, tc.want)
		}
		var buf bytes.Buffer
		if err := p.Write(&buf); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if _, err := profile.Parse(&buf); err != nil {
			t.Errorf("%s: the merged profile does not parse: %v", tc.name, err)
		}
	}
	s.mu.Lock()
	n := len(s.windows["w1"])
	s.mu.Unlock()
	// 20 minutes: the first 5 in one window of 5 minutes (older than 15
	// minutes), the next 14 in minutes, the last minute as they came.
	if n < 15 || n > 40 {
		t.Errorf("w1 has %d windows after compaction, want about 1 + 14 + 12", n)
	}
	prefixes, workers := s.Labels()
	if !slices.Equal(prefixes, []string{"read", "sum"}) || !slices.Equal(workers, []string{"w1", "w2"}) {
		t.Errorf("labels: %v %v", prefixes, workers)
	}
	p, _ := s.Profile(ProfileOptions{})
	if got := time.Unix(0, p.TimeNanos); !got.Equal(t0) || time.Duration(p.DurationNanos) != 20*time.Minute {
		t.Errorf("merged profile spans %v for %v, want %v for 20m", got, time.Duration(p.DurationNanos), t0)
	}
}

func TestProfileStoreBound(t *testing.T) {
	t0 := time.Unix(2_000_000, 0)
	w := window("w1", t0, time.Second, testSample{[]string{"main", "f"}, labels("f", "w1"), 1e7})
	s := NewProfileStore(5 * w.Size())
	for i := range 20 {
		s.Add(window("w1", t0.Add(time.Duration(i)*time.Second), time.Second,
			testSample{[]string{"main", "f"}, labels("f", "w1"), 1e7}))
	}
	if s.Bytes() > 5*w.Size() {
		t.Errorf("%d bytes kept, bound %d", s.Bytes(), 5*w.Size())
	}
	p, _ := s.Profile(ProfileOptions{})
	if got := totalCPU(p); got == 0 || got > 5e7 {
		t.Errorf("%d ns kept, want the newest windows only", got)
	}
	if d := s.Dropped(); d.IsZero() || d.After(t0.Add(20*time.Second)) {
		t.Errorf("Dropped %v", d)
	}
}

func TestFlameGraph(t *testing.T) {
	p := cpuProfile(
		testSample{[]string{"main", "read", "decode"}, nil, 60},
		testSample{[]string{"main", "read"}, nil, 20},
		testSample{[]string{"main", "sum"}, nil, 19},
		testSample{[]string{"main", "tiny"}, nil, 1},
	)
	root := FlameGraph(p, 0.05)
	show := func(n *FlameNode) string {
		var f func(n *FlameNode) string
		f = func(n *FlameNode) string {
			s := fmt.Sprintf("%s:%d/%d", n.Name, n.Value, n.Self)
			if len(n.Children) > 0 {
				s += "("
				for i, c := range n.Children {
					if i > 0 {
						s += " "
					}
					s += f(c)
				}
				s += ")"
			}
			return s
		}
		return f(n)
	}
	want := "all:100/0(main:100/0(read:80/20(decode:60/60) sum:19/19))" // tiny is below 5 %
	if got := show(root); got != want {
		t.Errorf("flame graph %s\nwant        %s", got, want)
	}
	if got := show(FlameGraph(nil, 0)); got != "all:0/0" {
		t.Errorf("flame graph of nothing: %s", got)
	}
	if cpu := CPUByPrefix(cpuProfile(testSample{[]string{"f"}, labels("p", "w"), 3e9})); math.Abs(cpu["p"]-3) > 1e-9 {
		t.Errorf("CPUByPrefix: %v", cpu)
	}
}

func TestFineMetrics(t *testing.T) {
	var f FineMetrics
	f.Add("w1", "sum", ActivityCompute, UnitSeconds, 2)
	f.Add("w2", "sum", ActivityCompute, UnitSeconds, 3)
	f.Add("w1", "sum", ActivityTransferIn, UnitBytes, 100)
	f.Add("w1", "", ActivityIdle, UnitSeconds, 1)
	f.Add("w1", "sum", "custom", UnitSeconds, 0) // nothing
	m := f.Meter("w1")
	m.AddMetric("sum-0123456789abcdef-3", ActivityDiskWrite, UnitBytes, 50)
	d := f.Drain()
	if len(d) != 5 || d[0].Activity != ActivityIdle || d[1] != (FineMetric{Worker: "w1", Prefix: "sum",
		Activity: ActivityCompute, Unit: UnitSeconds, Value: 2}) {
		t.Fatalf("drained %+v", d)
	}
	if d := f.Drain(); len(d) != 0 {
		t.Errorf("drained twice: %+v", d)
	}
	f.Add("w1", "sum", ActivityCompute, UnitSeconds, 1)
	if d := f.Drain(); len(d) != 1 || d[0].Value != 1 {
		t.Errorf("drained after one more: %+v", d)
	}
	sum := SumFineMetrics(f.Totals())
	want := []FineMetric{
		{Activity: ActivityIdle, Unit: UnitSeconds, Value: 1},
		{Prefix: "sum", Activity: ActivityCompute, Unit: UnitSeconds, Value: 6},
		{Prefix: "sum", Activity: ActivityTransferIn, Unit: UnitBytes, Value: 100},
		{Prefix: "sum", Activity: ActivityDiskWrite, Unit: UnitBytes, Value: 50},
	}
	if !slices.Equal(sum, want) {
		t.Errorf("sum %+v\nwant %+v", sum, want)
	}
}

// TestFineMetricsConcurrent adds and drains from several goroutines; run
// with -race. What is drained adds up to what was added.
func TestFineMetricsConcurrent(t *testing.T) {
	var f FineMetrics
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				f.Add(fmt.Sprint("w", w), "p", ActivityCompute, UnitSeconds, 1)
				if i%100 == 0 {
					f.Totals()
				}
			}
		}()
	}
	var drained float64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			for _, m := range f.Drain() {
				drained += m.Value
			}
		}
	}()
	wg.Wait()
	<-done
	for _, m := range f.Drain() {
		drained += m.Value
	}
	if drained != 4000 {
		t.Errorf("drained %v, want 4000", drained)
	}
}
