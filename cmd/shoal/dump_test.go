package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-data/shoal/diagnostics/dashboard"
	"github.com/shoal-data/shoal/diagnostics/dump"
)

const (
	dw1, dw2, dw3 = "127.0.0.1:40001", "127.0.0.1:40002", "127.0.0.1:40003"
)

// testDump writes a dump of a cluster of three workers, the third gone:
// a task erred on the first, a value is held there, a task executes
// there for five minutes, and the scheduler thinks the second runs a
// task it does not know.
func testDump(t testing.TB) string {
	t0 := time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	f := &dump.File{Version: dump.Version, Time: t0, Executor: "cluster",
		Scheduler: dump.Scheduler{Address: "127.0.0.1:8786", ID: "scheduler-test", Started: t0.Add(-time.Hour),
			Counts: map[string]int{"erred": 1, "memory": 1, "processing": 2},
			Tasks: []dump.Task{
				{Key: "fail-0", Op: "fail", State: "erred", Error: "failing on 0: boom"},
				{Key: "inc-1", Op: "inc", State: "memory", WhoHas: []string{dw1}, Bytes: 8},
				{Key: "lost-3", Op: "lost", State: "processing", ProcessingOn: dw2},
				{Key: "slow-2", Op: "slow", State: "processing", ProcessingOn: dw1},
			},
			Workers: []dump.SchedulerWorker{
				{Address: dw1, Threads: 2, MemoryLimit: 1 << 30, State: "running", Processing: 1,
					Memory: dump.Memory{Managed: 3 << 20, Process: 200 << 20}},
				{Address: dw2, Threads: 2, State: "paused", Processing: 1, Memory: dump.Memory{Spilled: 5 << 20}},
			},
			Transitions: []dump.Transition{
				{Time: at(0), Key: "fail-0", From: "released", To: "waiting", Cause: "graph-submitted", Seq: 1},
				{Time: at(1), Key: "fail-0", From: "waiting", To: "processing", Cause: "graph-submitted", Seq: 1},
				{Time: at(9), Key: "fail-0", From: "processing", To: "erred", Cause: "task-failed", Seq: 2},
				{Time: at(9), Key: "inc-1", From: "processing", To: "memory", Cause: "task-finished", Seq: 3},
			},
		},
		Workers: []dump.Worker{
			{Address: dw1, Name: "alpha", State: &dump.WorkerState{Time: t0, Threads: 2,
				Tasks: []dump.WorkerTask{{Key: "slow-2", Op: "slow", State: "executing", Since: t0.Add(-5 * time.Minute)}},
				Data:  map[string]int64{"inc-1": 8},
				Transitions: []dump.Transition{
					{Time: at(2), Key: "fail-0", From: "released", To: "ready", Cause: "run-task", Worker: dw1},
					{Time: at(3), Key: "fail-0", From: "ready", To: "executing", Cause: "thread-free", Worker: dw1},
					{Time: at(8), Key: "fail-0", From: "executing", To: "error", Cause: "executed", Worker: dw1,
						Error: "failing on 0: boom"},
				}}},
			{Address: dw2, State: &dump.WorkerState{Time: t0, Threads: 2, Paused: true, Data: map[string]int64{}}},
			{Address: dw3, Gone: true, Reason: "process ended: signal killed"},
		},
		Dashboard: dashboard.Capture(emptySource{}, dashboard.CaptureOptions{Stop: t0}),
	}
	path := filepath.Join(t.TempDir(), "cluster.json.gz")
	if err := dump.Save(path, f); err != nil {
		t.Fatal(err)
	}
	return path
}

// emptySource is a cluster of one worker, dw1, that did nothing.
type emptySource struct{}

func (emptySource) Snapshot() *dashboard.Status {
	return &dashboard.Status{Workers: []dashboard.Worker{{Address: dw1, State: "running", Threads: 2}},
		Tasks: map[string]int{}, Progress: []dashboard.Progress{}, Logs: []dashboard.LogRecord{},
		Computations: []dashboard.Computation{}, RecentErrors: []dashboard.ErrorRecord{}}
}
func (emptySource) TaskStream(uint64, int) *dashboard.TaskStream {
	return &dashboard.TaskStream{Tasks: []dashboard.TaskRun{}}
}
func (emptySource) TaskWindow(time.Duration, int) *dashboard.TaskWindow {
	return &dashboard.TaskWindow{Workers: []dashboard.StreamWorker{}, Prefixes: []string{}, Runs: []dashboard.TaskRun{}}
}
func (emptySource) Workers() *dashboard.Workers {
	return &dashboard.Workers{Workers: []dashboard.WorkerStats{{Worker: dashboard.Worker{Address: dw1, State: "running"},
		Disk: []dashboard.Disk{}, Tasks: map[string]int{}, History: []dashboard.WorkerSample{}}}}
}
func (s emptySource) Worker(name string) *dashboard.WorkerPage {
	return &dashboard.WorkerPage{Worker: s.Workers().Workers[0], Logs: []dashboard.LogEntry{}, Tasks: []dashboard.TaskRun{}}
}
func (emptySource) System() *dashboard.System {
	return &dashboard.System{History: []dashboard.SystemSample{}}
}
func (emptySource) Groups() *dashboard.Groups {
	return &dashboard.Groups{Groups: []dashboard.Group{}, Edges: []dashboard.GroupEdge{}}
}
func (emptySource) Logs(dashboard.LogQuery) *dashboard.Logs {
	return &dashboard.Logs{Records: []dashboard.LogEntry{}, Sources: []string{"scheduler"}}
}
func (emptySource) Errors() *dashboard.Errors {
	return &dashboard.Errors{Errors: []dashboard.ErrorRecord{{Key: "fail-0", Worker: dw1, Error: "failing on 0: boom"}},
		Failed: []dashboard.Computation{}}
}
func (emptySource) Profile(dashboard.ProfileQuery) (*dashboard.Profile, error) {
	return nil, io.ErrUnexpectedEOF
}
func (emptySource) ProfileData(dashboard.ProfileQuery) ([]byte, error) {
	return nil, io.ErrUnexpectedEOF
}
func (emptySource) FineMetrics() *dashboard.FineMetrics {
	return &dashboard.FineMetrics{Activities: []string{}, Rows: []dashboard.FineMetricRow{}}
}
func (emptySource) Bandwidth() *dashboard.Bandwidth {
	return &dashboard.Bandwidth{Workers: []string{}, Pairs: []dashboard.Transfer{}, Prefixes: []dashboard.PrefixTransfer{}}
}
func (emptySource) Shuffles() *dashboard.Shuffles {
	return &dashboard.Shuffles{Shuffles: []dashboard.Shuffle{}}
}

// runCmd runs shoal dump with args and returns its output and error.
func runCmd(args ...string) (string, string, error) {
	var out, errOut bytes.Buffer
	err := runDump(args, &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestDumpInspect(t *testing.T) {
	path := testDump(t)
	out, _, err := runCmd("inspect", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"cluster dump of 2025-01-02T15:04:05Z (format version 1, cluster)",
		"scheduler 127.0.0.1:8786 (scheduler-test)",
		"tasks: 2 processing, 1 erred, 1 memory",
		"erred tasks: 1\n  fail-0 (op fail) on " + dw1 + "\n      failing on 0: boom",
		"stuck tasks: 2",
		"lost-3 (processing on " + dw2 + "): its worker does not know it",
		"slow-2 (executing on " + dw1 + "): executing for 5m0s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect: no %q in\n%s", want, out)
		}
	}
	rows := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			rows[f[0]] = strings.Join(f, " ")
		}
	}
	for addr, want := range map[string]string{
		dw1: dw1 + " alpha running 2 3.0 MiB 200.0 MiB 0 B 1.0 GiB 1",
		dw2: dw2 + " paused 2 0 B 0 B 5.0 MiB none 1 paused: memory above the pause threshold",
		dw3: dw3 + " gone 0 0 B 0 B 0 B none 0 process ended: signal killed",
	} {
		if rows[addr] != want {
			t.Errorf("inspect: worker %s: %q, want %q", addr, rows[addr], want)
		}
	}
	// A task runs for five minutes: stuck after a minute, not after ten.
	out, _, err = runCmd("inspect", path, "--stuck-after", "10m")
	if err != nil || !strings.Contains(out, "stuck tasks: 1\n") {
		t.Errorf("inspect --stuck-after 10m: %v\n%s", err, out)
	}
}

func TestDumpStory(t *testing.T) {
	out, _, err := runCmd("story", testDump(t), "fail-0")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"TIME WHERE KEY FROM TO CAUSE ERROR",
		"15:04:05.000000 scheduler fail-0 released waiting graph-submitted",
		"15:04:05.001000 scheduler fail-0 waiting processing graph-submitted",
		"15:04:05.002000 " + dw1 + " fail-0 released ready run-task",
		"15:04:05.003000 " + dw1 + " fail-0 ready executing thread-free",
		"15:04:05.008000 " + dw1 + " fail-0 executing error executed failing on 0: boom",
		"15:04:05.009000 scheduler fail-0 processing erred task-failed failing on 0: boom",
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(want) {
		t.Fatalf("story: %d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i, line := range lines {
		if got := strings.Join(strings.Fields(line), " "); got != want[i] {
			t.Errorf("story line %d: %q, want %q", i, got, want[i])
		}
	}
	if strings.Contains(out, "inc-1") {
		t.Errorf("story of fail-0 tells of inc-1:\n%s", out)
	}
	if _, _, err := runCmd("story", testDump(t), "nothing-0"); err == nil || !strings.Contains(err.Error(), "no transition of nothing-0") {
		t.Errorf("story of an unknown key: %v", err)
	}
}

func TestDumpTasks(t *testing.T) {
	path := testDump(t)
	tests := []struct {
		args    []string
		keys    []string
		wantErr string
	}{
		{[]string{"tasks", path, "--state", "erred"}, []string{"fail-0"}, ""},
		{[]string{"tasks", "--state", "processing", path}, []string{"lost-3", "slow-2"}, ""},
		{[]string{"tasks", path, "--worker", dw1}, []string{"inc-1", "slow-2"}, ""},
		{[]string{"tasks", path, "--prefix", "inc"}, []string{"inc-1"}, ""},
		{[]string{"tasks", path}, []string{"fail-0", "inc-1", "lost-3", "slow-2"}, ""},
		{[]string{"tasks", path, "--state", "bogus"}, nil, `--state "bogus": want one of released, waiting`},
		{[]string{"tasks", path, "--state", "queued"}, nil, "no task matches"},
		{[]string{"tasks", filepath.Join(t.TempDir(), "none")}, nil, "no such file"},
	}
	for _, tc := range tests {
		out, _, err := runCmd(tc.args...)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: error %v, want %q", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		var keys []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
			keys = append(keys, strings.Fields(line)[0])
		}
		if strings.Join(keys, " ") != strings.Join(tc.keys, " ") {
			t.Errorf("%q: keys %v, want %v\n%s", tc.args, keys, tc.keys, out)
		}
	}
	if out, _, _ := runCmd("tasks", path, "--state", "erred"); !strings.Contains(out, "failing on 0: boom") {
		t.Errorf("the erred task without its error:\n%s", out)
	}
}

func TestDumpUsage(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"dump"}, 2, "shoal dump inspect FILE"},
		{[]string{"dump", "bogus"}, 2, `unknown command "bogus"`},
		{[]string{"dump", "inspect"}, 2, "Usage: shoal dump inspect FILE"},
		{[]string{"dump", "story", "file"}, 2, "Usage: shoal dump story FILE KEY..."},
		{[]string{"help", "dump"}, 0, "shoal dump tasks FILE"},
		{[]string{"help", "dashboard"}, 0, "-dump"},
		{[]string{"dashboard"}, 2, "Usage: shoal dashboard --dump FILE"},
		{[]string{"help"}, 0, "shoal dashboard --dump FILE"},
	}
	for _, tc := range tests {
		var out bytes.Buffer
		if code := run(tc.args, &out); code != tc.code || !strings.Contains(out.String(), tc.want) {
			t.Errorf("shoal %q: exit %d, output %q; want %d and %q", tc.args, code, out.String(), tc.code, tc.want)
		}
	}
}

// TestDashboardDump serves the pages of a dump: they read the dump's
// snapshot beside them.
func TestDashboardDump(t *testing.T) {
	path := testDump(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := runDashboard(ctx, []string{"--dump", path, "--listen", "127.0.0.1:0"}, pw)
		pw.Close()
		done <- err
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	i := strings.Index(line, "http://")
	if i < 0 {
		t.Fatalf("no address in %q", line)
	}
	url := strings.TrimSpace(line[i:])
	base := strings.TrimSuffix(url, "/status")
	get := func(path string) []byte {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d, %v", path, resp.StatusCode, err)
		}
		return b
	}
	if page := string(get("/status")); !strings.Contains(page, `src="static/offline.js" data-snapshot="snapshot.json"`) {
		t.Errorf("the status page does not read the dump's snapshot:\n%s", page)
	}
	var snap dashboard.Snapshot
	if err := json.Unmarshal(get("/snapshot.json"), &snap); err != nil {
		t.Fatal(err)
	}
	if len(snap.Workers.Workers) != 1 || snap.Workers.Workers[0].Address != dw1 || len(snap.Errors.Errors) != 1 {
		t.Errorf("the snapshot served: %+v", snap)
	}
	get("/static/offline.js")
	cancel()
	if err := <-done; err != nil {
		t.Errorf("shoal dashboard ended with %v", err)
	}
}
