package alert

import (
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/graph"
)

var t0 = time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC)

// step is what a test hands the machine at t0+at, and the alerts it
// wants back, written by brief: "+name worker [what]" for a raised one,
// "-name worker [what]" for a resolved one, what being its path, key or
// shuffle.
type step struct {
	at     time.Duration
	inputs []Input
	want   []string
	// messages are words every alert returned must have in its message.
	messages []string
}

func brief(a diagnostics.Alert) string {
	sign := "+"
	if !a.Active() {
		sign = "-"
	}
	s := sign + a.Name + " " + a.Worker
	for _, what := range []string{a.Path, string(a.Key), a.Shuffle} {
		if what != "" {
			s += " " + what
		}
	}
	return s
}

const mib = 1 << 20

func disk(path string, free, size int64) Disk {
	return Disk{Name: "local", Path: path, Free: free, Size: size}
}

func ended(key graph.Key, worker string, d time.Duration) *TaskEnded {
	return &TaskEnded{Key: key, Worker: worker, Duration: d}
}

func TestMachine(t *testing.T) {
	split := func(i int) graph.Key { return graph.NewKey("shuffle-split", "3fa2c1d0", i) }
	collect := func(i int) graph.Key { return graph.NewKey("shuffle-collect", "3fa2c1d0", i) }
	shuffle := &ShuffleStarted{ID: "3fa2c1d0", Computation: 7, SplitGroup: "shuffle-split-3fa2c1d0", Splits: 4,
		Readers: []string{"shuffle-collect-3fa2c1d0", "median-5ee1d0c4"}}
	scratch := func(free int64, shuffled int64) *WorkerReport {
		return &WorkerReport{Worker: "w1", Disks: []Disk{{Name: "scratch", Path: "/s", Free: free,
			Shuffles: map[string]int64{"3fa2c1d0": shuffled}}}}
	}
	loads := func(n int, d time.Duration) []Input {
		var in []Input
		for i := range n {
			in = append(in, ended(graph.NewKey("load", "0badf00d", i), "w2", d))
		}
		return in
	}
	running := func(start time.Duration, keys ...graph.Key) *WorkerReport {
		r := &WorkerReport{Worker: "w1"}
		for _, k := range keys {
			r.Running = append(r.Running, Running{Key: k, Start: t0.Add(start)})
		}
		return r
	}
	read := func(key graph.Key, worker string, bytes int64) *TaskEnded {
		return &TaskEnded{Key: key, Worker: worker, Duration: time.Second, Read: bytes}
	}
	tests := []struct {
		name  string
		cfg   Config
		steps []step
	}{
		{"disk full: raised once, kept in the hysteresis band, resolved below it", Config{}, []step{
			{0, []Input{&WorkerReport{Worker: "w1", Disks: []Disk{disk("/a", 100*mib, 1000*mib)}}}, nil, nil},
			{time.Second, []Input{&WorkerReport{Worker: "w1", Disks: []Disk{disk("/a", 50*mib, 1000*mib)}}},
				[]string{"+disk-full w1 /a"}, []string{"worker w1", "/a", "95% full", "50.00 MiB free"}},
			{2 * time.Second, []Input{&WorkerReport{Worker: "w1", Disks: []Disk{disk("/a", 10*mib, 1000*mib)}}}, nil, nil},
			{3 * time.Second, []Input{&WorkerReport{Worker: "w1", Disks: []Disk{disk("/a", 130*mib, 1000*mib)}}}, nil, nil},
			{4 * time.Second, []Input{&WorkerReport{Worker: "w1", Disks: []Disk{disk("/a", 200*mib, 1000*mib)}}},
				[]string{"-disk-full w1 /a"}, nil},
		}},
		{"disk full: a report without disks keeps the last, one without the path resolves it", Config{}, []step{
			{0, []Input{&WorkerReport{Worker: "w1", Disks: []Disk{disk("/a", 1*mib, 100*mib), disk("/b", 50*mib, 100*mib)}}},
				[]string{"+disk-full w1 /a"}, nil},
			{time.Second, []Input{&WorkerReport{Worker: "w1"}}, nil, nil},
			{2 * time.Second, []Input{&WorkerReport{Worker: "w1", Disks: []Disk{disk("/b", 50*mib, 100*mib)}}},
				[]string{"-disk-full w1 /a"}, nil},
			{3 * time.Second, []Input{&WorkerReport{Worker: "w1", Disks: []Disk{disk("/c", 1, 0)}}}, nil, nil},
		}},
		{"disk of a shuffle: what the splits left to run will write does not fit", Config{}, []step{
			{0, []Input{shuffle, scratch(250*mib, 0)}, nil, nil},
			{time.Second, []Input{ended(split(0), "w1", time.Second), scratch(250*mib, 100*mib)},
				[]string{"+disk-shuffle w1 /s 3fa2c1d0"},
				[]string{"worker w1", "shuffle 3fa2c1d0", "300.00 MiB more", "/s", "1 of 4 splits", "250.00 MiB is free"}},
			{2 * time.Second, []Input{ended(split(1), "w1", time.Second), scratch(150*mib, 200*mib)}, nil, nil},
			{3 * time.Second, []Input{ended(split(2), "w1", time.Second), scratch(140*mib, 300*mib)},
				[]string{"-disk-shuffle w1 /s 3fa2c1d0"}, nil},
			{4 * time.Second, []Input{ended(split(3), "w1", time.Second), scratch(0, 400*mib)}, nil, nil},
		}},
		{"disk of a shuffle: resolved when all its splits ended or its computation did", Config{}, []step{
			{0, []Input{shuffle, ended(split(0), "w1", time.Second), scratch(10*mib, 100*mib)},
				[]string{"+disk-shuffle w1 /s 3fa2c1d0"}, nil},
			{time.Second, []Input{&ComputationEnded{Computation: 6}}, nil, nil},
			{2 * time.Second, []Input{&ComputationEnded{Computation: 7}}, []string{"-disk-shuffle w1 /s 3fa2c1d0"}, nil},
			{3 * time.Second, []Input{scratch(10*mib, 100*mib)}, nil, nil},
			{4 * time.Second, []Input{shuffle, ended(split(0), "w1", time.Second), scratch(10*mib, 100*mib)},
				[]string{"+disk-shuffle w1 /s 3fa2c1d0"}, nil},
			{5 * time.Second, []Input{ended(split(1), "w1", time.Second), ended(split(2), "w1", time.Second),
				ended(split(3), "w1", time.Second)}, []string{"-disk-shuffle w1 /s 3fa2c1d0"}, nil},
		}},
		{"memory: unmanaged high, then near the terminate threshold", Config{}, []step{
			{0, []Input{&WorkerReport{Worker: "w1", MemoryLimit: 1000 * mib, Managed: 100 * mib, Process: 400 * mib}}, nil, nil},
			{time.Second, []Input{&WorkerReport{Worker: "w1", MemoryLimit: 1000 * mib, Managed: 100 * mib, Process: 700 * mib}},
				[]string{"+memory-unmanaged w1"}, []string{"worker w1", "unmanaged memory 600.00 MiB", "60%"}},
			{2 * time.Second, []Input{&WorkerReport{Worker: "w1", MemoryLimit: 1000 * mib, Managed: 300 * mib, Process: 920 * mib}},
				[]string{"+memory-terminate w1"}, nil},
			{3 * time.Second, []Input{&WorkerReport{Worker: "w1", MemoryLimit: 1000 * mib, Managed: 300 * mib, Process: 500 * mib}},
				[]string{"-memory-unmanaged w1", "-memory-terminate w1"}, nil},
		}},
		{"memory: no limit, no alert", Config{}, []step{
			{0, []Input{&WorkerReport{Worker: "w1", Managed: 100 * mib, Process: 64 << 30}}, nil, nil},
		}},
		{"silent worker: raised after HeartbeatLate, resolved by its next report or when it goes", Config{}, []step{
			{0, []Input{&WorkerReport{Worker: "w1"}, &WorkerReport{Worker: "w2"}}, nil, nil},
			{4 * time.Second, []Input{&Tick{}}, nil, nil},
			{5 * time.Second, []Input{&WorkerReport{Worker: "w2"}}, nil, nil},
			{6 * time.Second, []Input{&Tick{}}, []string{"+worker-silent w1"}, []string{"worker w1 sent nothing for 6s"}},
			{7 * time.Second, []Input{&Tick{}}, nil, nil},
			{8 * time.Second, []Input{&WorkerReport{Worker: "w1"}}, []string{"-worker-silent w1"}, nil},
			{11 * time.Second, []Input{&Tick{}}, []string{"+worker-silent w2"}, nil},
			{12 * time.Second, []Input{&WorkerGone{Worker: "w2"}}, []string{"-worker-silent w2"}, nil},
			{30 * time.Second, []Input{&WorkerGone{Worker: "w1"}, &Tick{}}, nil, nil},
		}},
		{"silent worker: names the tasks it ran, or was sent", Config{}, []step{
			{0, []Input{running(0, "a-1", "a-2")}, nil, nil},
			{3 * time.Second, []Input{&WorkerReport{Worker: "w2"}}, nil, nil},
			{6 * time.Second, []Input{&Tick{}}, []string{"+worker-silent w1"}, []string{"while it ran task a-1 and 1 more"}},
			{9 * time.Second, []Input{&Tick{Sent: map[string][]graph.Key{"w2": {"b-1"}}}},
				[]string{"+worker-silent w2"}, []string{"while it ran task b-1"}},
		}},
		{"slow worker", Config{Latency: 200 * time.Millisecond}, []step{
			{0, []Input{&WorkerReport{Worker: "w1", Latency: 150 * time.Millisecond}}, nil, nil},
			{time.Second, []Input{&WorkerReport{Worker: "w1", Latency: 450 * time.Millisecond}},
				[]string{"+worker-slow w1"}, []string{"450ms"}},
			{2 * time.Second, []Input{&WorkerReport{Worker: "w1"}}, nil, nil},
			{3 * time.Second, []Input{&WorkerReport{Worker: "w1", Latency: 100 * time.Millisecond}},
				[]string{"-worker-slow w1"}, nil},
		}},
		{"straggler: raised past the median of its prefix, resolved when it ends", Config{Off: []string{WorkerSilent}}, []step{
			{0, append(loads(4, 3*time.Second), running(0, "load-0badf00d-8")), nil, nil},
			{20 * time.Second, []Input{&Tick{}}, nil, nil}, // 4 ended: too few to tell
			{21 * time.Second, loads(5, 3*time.Second)[4:], nil, nil},
			{22 * time.Second, []Input{&Tick{}}, []string{"+straggler w1 load-0badf00d-8"},
				[]string{"task load-0badf00d-8", "22s", "worker w1", "7 times the median 3s of the 5 load tasks"}},
			{23 * time.Second, []Input{running(0, "load-0badf00d-8")}, nil, nil},
			{24 * time.Second, []Input{ended("load-0badf00d-8", "w1", 24*time.Second)}, []string{"-straggler w1 load-0badf00d-8"}, nil},
			{25 * time.Second, []Input{&Tick{}}, nil, nil},
		}},
		{"straggler: short tasks must run StragglerMin, and one no longer running is resolved", Config{Off: []string{WorkerSilent}}, []step{
			{0, append(loads(5, 100*time.Millisecond), running(0, "load-0badf00d-8", "load-0badf00d-9")), nil, nil},
			{9 * time.Second, []Input{&Tick{}}, nil, nil},
			{11 * time.Second, []Input{&Tick{}}, []string{"+straggler w1 load-0badf00d-8", "+straggler w1 load-0badf00d-9"}, nil},
			{12 * time.Second, []Input{running(0, "load-0badf00d-9")}, []string{"-straggler w1 load-0badf00d-8"}, nil},
		}},
		{"skewed partition: raised once enough partitions were read, resolved with the computation", Config{}, []step{
			{0, []Input{shuffle, read(collect(0), "w1", 400*mib), read(collect(1), "w2", 30*mib)}, nil, nil},
			{time.Second, []Input{read(collect(2), "w2", 20*mib), read("median-5ee1d0c4-3", "w1", 25*mib)},
				[]string{"+shuffle-skew w1 shuffle-collect-3fa2c1d0-0 3fa2c1d0"},
				[]string{"shuffle 3fa2c1d0", "task shuffle-collect-3fa2c1d0-0", "worker w1", "read 400.00 MiB", "13 times the median 30.00 MiB of the 4 partitions"}},
			{2 * time.Second, []Input{read(collect(4), "w2", 10*mib), read(collect(5), "w2", 19*mib)}, nil, nil},
			{3 * time.Second, []Input{read(collect(6), "w2", 200*mib)}, []string{"+shuffle-skew w2 shuffle-collect-3fa2c1d0-6 3fa2c1d0"}, nil},
			{4 * time.Second, []Input{&ComputationEnded{Computation: 7}},
				[]string{"-shuffle-skew w1 shuffle-collect-3fa2c1d0-0 3fa2c1d0", "-shuffle-skew w2 shuffle-collect-3fa2c1d0-6 3fa2c1d0"}, nil},
			{5 * time.Second, []Input{read(collect(7), "w2", 900*mib)}, nil, nil},
		}},
		{"skewed partition: small shuffles are left alone, and results stand for unknown reads", Config{}, []step{
			{0, []Input{shuffle, read(collect(0), "w1", 8*mib), read(collect(1), "w2", 1*mib), read(collect(2), "w2", 1*mib),
				read(collect(3), "w2", 1*mib)}, nil, nil},
			{time.Second, []Input{&TaskEnded{Key: collect(4), Worker: "w1", Bytes: 100 * mib}},
				[]string{"+shuffle-skew w1 shuffle-collect-3fa2c1d0-4 3fa2c1d0"}, nil},
		}},
		{"heavy spilling", Config{SpillRate: 10 * mib, SpillWindow: 10 * time.Second}, []step{
			{0, []Input{&WorkerReport{Worker: "w1", SpillWrite: 60 * mib}}, nil, nil},
			{time.Second, []Input{&WorkerReport{Worker: "w1", SpillWrite: 60 * mib}}, []string{"+spilling w1"},
				[]string{"worker w1 wrote 120.00 MiB", "last 10s", "12.00 MiB/s"}},
			{9 * time.Second, []Input{&WorkerReport{Worker: "w1"}}, nil, nil},
			{11 * time.Second, []Input{&WorkerReport{Worker: "w1"}}, []string{"-spilling w1"}, nil},
		}},
		{"rules turned off", Config{Off: []string{DiskFull, WorkerSilent}}, []step{
			{0, []Input{&WorkerReport{Worker: "w1", Disks: []Disk{disk("/a", 0, 100)}}}, nil, nil},
			{time.Minute, []Input{&Tick{}}, nil, nil},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(tt.cfg)
			for i, s := range tt.steps {
				got := m.Handle(t0.Add(s.at), s.inputs...)
				var briefs []string
				for _, a := range got {
					briefs = append(briefs, brief(a))
					if a.Action == "" || a.Severity == "" {
						t.Errorf("step %d: %s has no action or severity: %+v", i, brief(a), a)
					}
					if a.Active() && !a.Start.Equal(t0.Add(s.at)) || !a.Active() && !a.End.Equal(t0.Add(s.at)) {
						t.Errorf("step %d: %s started %v, ended %v", i, brief(a), a.Start, a.End)
					}
					for _, word := range s.messages {
						if !strings.Contains(a.Message, word) {
							t.Errorf("step %d: message %q does not say %q", i, a.Message, word)
						}
					}
				}
				if !slices.Equal(briefs, s.want) {
					t.Fatalf("step %d (t0+%v): got %q, want %q", i, s.at, briefs, s.want)
				}
			}
		})
	}
}

func TestActiveAndRecent(t *testing.T) {
	m := New(Config{})
	full := func(w string) *WorkerReport {
		return &WorkerReport{Worker: w, Disks: []Disk{disk("/d", 0, 100)}}
	}
	m.Handle(t0, full("w2"))
	m.Handle(t0.Add(time.Second), full("w1"))
	m.Handle(t0.Add(time.Second), full("w0"))
	var active []string
	for _, a := range m.Active() {
		active = append(active, a.Worker)
	}
	if want := []string{"w2", "w0", "w1"}; !slices.Equal(active, want) {
		t.Errorf("active: %q, want %q (oldest first, then by ID)", active, want)
	}
	// A raised alert is refreshed in place: what Active returns is now.
	m.Handle(t0.Add(2*time.Second), &WorkerReport{Worker: "w2", Disks: []Disk{disk("/d", 5, 100)}})
	if a := m.Active()[0]; a.Value != 0.95 || !a.Start.Equal(t0) {
		t.Errorf("w2's alert after a new report: value %v, start %v", a.Value, a.Start)
	}
	for i := range recentSize + 5 {
		w := fmt.Sprintf("v%d", i)
		m.Handle(t0.Add(time.Duration(i)*time.Second), full(w), &WorkerGone{Worker: w})
	}
	recent := m.Recent()
	if len(recent) != recentSize || recent[0].Worker != "v5" || recent[recentSize-1].Worker != fmt.Sprintf("v%d", recentSize+4) {
		t.Errorf("recent: %d alerts, from %s to %s", len(recent), recent[0].Worker, recent[len(recent)-1].Worker)
	}
	if len(m.Active()) != 3 {
		t.Errorf("%d active, want 3", len(m.Active()))
	}
}

func TestConfigDefaults(t *testing.T) {
	if got := New(Config{}).Config(); !reflect.DeepEqual(got, DefaultConfig()) {
		t.Errorf("zero config: %+v, want the defaults %+v", got, DefaultConfig())
	}
	c := Config{DiskFull: 0.5, StragglerMin: time.Minute, Off: []string{Spilling}}
	got := New(c).Config()
	if got.DiskFull != 0.5 || got.StragglerMin != time.Minute || got.NearTerminate != 0.9 || !slices.Equal(got.Off, c.Off) {
		t.Errorf("config %+v", got)
	}
}

func TestShuffles(t *testing.T) {
	g := graph.New()
	add := func(k graph.Key, deps ...graph.Key) {
		if err := g.Add(&graph.Task{Key: k, Op: "noop", Deps: deps}); err != nil {
			t.Fatal(err)
		}
	}
	var inputs, splits []graph.Key
	for i := range 3 {
		in := graph.NewKey("read-parquet", "f00d", i)
		add(in)
		inputs = append(inputs, in)
		s := graph.NewKey("shuffle-split", "3fa2c1d0", i)
		add(s, in)
		splits = append(splits, s)
	}
	add(graph.NewKey("shuffle-collect", "3fa2c1d0", 0), splits...)
	add(graph.NewKey("median", "5ee1d0c4", 1), splits...) // a collect fused into what reads it
	add(graph.NewKey("shuffle-split", "cafe0123", 0), inputs[0])
	add(graph.NewKey("sum", "beef"), inputs...)
	got := Shuffles(g, 3)
	want := []*ShuffleStarted{
		{ID: "3fa2c1d0", Computation: 3, SplitGroup: "shuffle-split-3fa2c1d0", Splits: 3, Readers: []string{"median-5ee1d0c4", "shuffle-collect-3fa2c1d0"}},
		{ID: "cafe0123", Computation: 3, SplitGroup: "shuffle-split-cafe0123", Splits: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Shuffles:\n got %+v\nwant %+v", got, want)
	}
}

type meterFunc func(task graph.Key, activity, unit string, value float64)

func (f meterFunc) AddMetric(task graph.Key, activity, unit string, value float64) {
	f(task, activity, unit, value)
}

func TestReads(t *testing.T) {
	passed := 0
	r := NewReads(meterFunc(func(graph.Key, string, string, float64) { passed++ }))
	r.AddMetric("a", diagnostics.ActivityDiskRead, diagnostics.UnitBytes, 100)
	r.AddMetric("a", diagnostics.ActivityTransferIn, diagnostics.UnitBytes, 20)
	r.AddMetric("a", diagnostics.ActivityDiskRead, diagnostics.UnitSeconds, 3)
	r.AddMetric("a", diagnostics.ActivityDiskWrite, diagnostics.UnitBytes, 1000)
	r.AddMetric("b", diagnostics.ActivityDiskRead, diagnostics.UnitBytes, 7)
	if passed != 5 {
		t.Errorf("%d metrics passed on, want 5", passed)
	}
	if a, again := r.Take("a"), r.Take("a"); a != 120 || again != 0 {
		t.Errorf("Take(a) = %d then %d, want 120 then 0", a, again)
	}
	r.Forget()
	if b := r.Take("b"); b != 0 {
		t.Errorf("Take(b) after Forget = %d", b)
	}
}

func TestLogAndEvent(t *testing.T) {
	var buf strings.Builder
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
	a := diagnostics.Alert{Name: DiskFull, Severity: Warning, Worker: "w1", Path: "/d", Message: "worker w1: /d is full",
		Action: "free space", Start: t0}
	Log(logger, &a)
	if e := Event(t0, &a); e.Kind != diagnostics.AlertRaised || e.Worker != "w1" || e.Path != "/d" || e.Alert != &a {
		t.Errorf("event of a raised alert: %+v", e)
	}
	a.End = t0.Add(90 * time.Second)
	Log(logger, &a)
	if e := Event(a.End, &a); e.Kind != diagnostics.AlertResolved || !e.Time.Equal(a.End) {
		t.Errorf("event of a resolved alert: %+v", e)
	}
	want := `level=WARN msg="worker w1: /d is full" alert=disk-full severity=warning worker=w1 path=/d action="free space"
level=INFO msg="resolved: worker w1: /d is full" alert=disk-full severity=warning worker=w1 path=/d after=1m30s
`
	if buf.String() != want {
		t.Errorf("log:\n%s\nwant:\n%s", buf.String(), want)
	}
}
