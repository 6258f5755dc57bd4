package server

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	pq "github.com/parquet-go/parquet-go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/shoal-data/shoal/diagnostics/archive"
	"github.com/shoal-data/shoal/distributed/wire"
)

// readArchive reads every row of a table of the archive in dir.
func readArchive[T any](t *testing.T, dir, table string) []T {
	t.Helper()
	paths, err := filepath.Glob(archive.Glob(dir, table))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(paths)
	var out []T
	for _, p := range paths {
		rows, err := pq.ReadFile[T](p)
		if err != nil {
			t.Fatalf("read %s: %v", p, err)
		}
		out = append(out, rows...)
	}
	return out
}

// TestArchive feeds a scheduler that keeps an archive what workers send
// and checks that the archive has it once the scheduler is closed: its own
// logs, the workers' logs and output, events, and samples of the
// scheduler and the workers.
func TestArchive(t *testing.T) {
	dir := t.TempDir()
	s, err := New(Config{HeartbeatTimeout: time.Minute, Archive: dir,
		ArchiveOptions: []archive.Option{archive.WithFlushInterval(time.Hour)}})
	if err != nil {
		t.Fatal(err)
	}
	if s.ArchiveDir() != dir {
		t.Errorf("ArchiveDir = %q, want %q", s.ArchiveDir(), dir)
	}
	ctx, cancel := context.WithCancel(context.Background())
	wconn, err := grpc.NewClient(s.Address(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer wconn.Close()
	done := make(chan error, 2)
	for i := range 2 {
		go func() { done <- fakeWorker(ctx, wconn, i) }()
	}
	if err := s.WaitForWorkers(ctx, 2); err != nil {
		t.Fatal(err)
	}
	a, b := "127.0.0.2:20000", "127.0.0.2:20001"

	now := time.Now()
	s.workerTelemetry(a, &wire.WorkerBatch{Memory: &wire.Memory{Managed: 10, Process: 100}, Stats: &wire.WorkerStats{
		CpuSeconds: 1, Rss: 100, Fds: 9, Tasks: map[string]int32{"executing": 1}}})
	s.tel.mu.Lock()
	s.tel.workers[a].at = s.tel.workers[a].at.Add(-time.Second)
	s.tel.mu.Unlock()
	s.mu.Lock()
	wa := s.workers[a]
	s.mu.Unlock()
	s.workerBatch(wa, &wire.WorkerBatch{Memory: &wire.Memory{Managed: 30, Process: 200, Spilled: 5},
		Stats: &wire.WorkerStats{CpuSeconds: 1.5, Rss: 200, Fds: 10, Tasks: map[string]int32{"executing": 2},
			Disks: []*wire.DiskUsage{{Name: "scratch", Path: "/tmp/s", Used: 5, Free: 1 << 30, Size: 2 << 30}}},
		Logs: []*wire.LogRecord{{TimeUnixNano: now.UnixNano(), Level: 8, Message: "task failed",
			Attrs: map[string]string{"key": "sum-1", "error": "no space left on device"}}}})
	s.WorkerOutput("", 100001, []*wire.LogRecord{{TimeUnixNano: now.UnixNano(), Message: "printed by a task",
		Attrs: map[string]string{"stream": "stdout"}}})
	s.WorkerOutput("", 4242, []*wire.LogRecord{{TimeUnixNano: now.UnixNano(), Message: "before joining",
		Attrs: map[string]string{"stream": "stderr"}}})
	s.LogEvent("deploys", "v2 is out", "client-1", now)

	samples := s.archiveSamples(now.Add(time.Second))
	got := map[[3]string]float64{}
	for _, m := range samples {
		got[[3]string{m.Worker, m.Name, m.Path}] = m.Value
		if m.Process == "" || !m.Time.Equal(now.Add(time.Second)) {
			t.Errorf("sample %+v", m)
		}
	}
	for k, want := range map[[3]string]float64{
		{a, "memory_managed_bytes", ""}: 30, {a, "memory_unmanaged_bytes", ""}: 170, {a, "memory_spilled_bytes", ""}: 5,
		{a, "rss_bytes", ""}: 200, {a, "cpu_percent", ""}: 50, {a, "open_files", ""}: 10, {a, "tasks_executing", ""}: 2,
		{a, "disk_free_bytes", "/tmp/s"}: 1 << 30, {a, "disk_used_bytes", "/tmp/s"}: 5, {"", "workers", ""}: 2,
	} {
		if v, ok := got[k]; !ok || (k[1] == "cpu_percent" && (v < 49 || v > 51)) || (k[1] != "cpu_percent" && v != want) {
			t.Errorf("sample %v = %v (present %v), want %v", k, v, ok, want)
		}
	}
	if _, ok := got[[3]string{b, "rss_bytes", ""}]; ok {
		t.Errorf("a sample of %s, which reported nothing", b)
	}
	if _, ok := got[[3]string{"", "rss_bytes", ""}]; !ok {
		t.Error("no sample of the scheduler's memory")
	}
	// The next samples leave out a worker that reported nothing since.
	for _, m := range s.archiveSamples(now.Add(2 * time.Second)) {
		if m.Worker == a {
			t.Errorf("sample %+v of a worker silent since the last samples", m)
		}
	}

	cancel()
	for range 2 {
		<-done
	}
	cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer ccancel()
	if err := s.Close(cctx); err != nil {
		t.Fatal(err)
	}

	logs := readArchive[archive.Log](t, dir, archive.TableLogs)
	find := func(msg string) *archive.Log {
		for i := range logs {
			if logs[i].Message == msg {
				return &logs[i]
			}
		}
		t.Errorf("no log record %q in the archive", msg)
		return &archive.Log{}
	}
	if l := find("scheduler started"); l.Process != archive.ProcessScheduler || l.Cluster != s.ID() {
		t.Errorf("scheduler's record: %+v", l)
	}
	if l := find("worker joined"); l.Worker != a && l.Worker != b {
		t.Errorf("a record about a worker does not name it: %+v", l)
	}
	if l := find("task failed"); l.Process != archive.ProcessWorker || l.Worker != a || l.Pid != 100000 ||
		l.Level != "ERROR" || l.Key != "sum-1" || l.Error != "no space left on device" {
		t.Errorf("worker's record: %+v", l)
	}
	if l := find("printed by a task"); l.Worker != b || l.Stream != "stdout" || l.Pid != 100001 {
		t.Errorf("worker's output: %+v", l)
	}
	if l := find("before joining"); l.Worker != "" || l.Pid != 4242 || l.Stream != "stderr" {
		t.Errorf("output of a process that did not join: %+v", l)
	}
	find("scheduler closed")

	var kinds []string
	for _, e := range readArchive[archive.Event](t, dir, archive.TableEvents) {
		kinds = append(kinds, e.Kind)
		if e.Kind == "topic" && (e.Topic != "deploys" || e.Message != "v2 is out") {
			t.Errorf("topic event %+v", e)
		}
	}
	for _, k := range []string{"worker-added", "worker-removed", "topic"} {
		if !slices.Contains(kinds, k) {
			t.Errorf("no %s event in the archive: %v", k, kinds)
		}
	}
}

func TestArchiveDirUnusable(t *testing.T) {
	_, err := New(Config{Archive: "/dev/null/archive"})
	if err == nil {
		t.Fatal("a scheduler started with an archive it cannot create")
	}
}
