package server

import (
	"context"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/shoal-data/shoal/diagnostics/dashboard"
	"github.com/shoal-data/shoal/distributed/wire"
)

// TestWorkerTelemetry feeds the scheduler what two workers report of
// themselves and reads it back as the dashboard does: their use of
// resources with rates, the transfers between them, the output of a task,
// filtered logs, fine metrics and shuffles.
func TestWorkerTelemetry(t *testing.T) {
	s, _ := newServer(t, Config{DashboardListen: "127.0.0.1:0", HeartbeatTimeout: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wconn, err := grpc.NewClient(s.Address(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer wconn.Close()
	done := make(chan error, 2)
	for i := range 2 {
		go func() { done <- fakeWorker(ctx, wconn, i) }()
	}
	defer func() {
		cancel()
		for range 2 {
			<-done
		}
	}()
	if err := s.WaitForWorkers(ctx, 2); err != nil {
		t.Fatal(err)
	}
	a, b := "127.0.0.2:20000", "127.0.0.2:20001"

	// Two heartbeats of a, a second apart by its clock: 50 % of a core.
	s.workerTelemetry(a, &wire.WorkerBatch{Memory: &wire.Memory{Managed: 10}, Stats: &wire.WorkerStats{CpuSeconds: 1,
		Rss: 100, Fds: 9, NetIn: 0, NetOut: 0, Tasks: map[string]int32{"executing": 1}}})
	s.tel.mu.Lock()
	s.tel.workers[a].at = s.tel.workers[a].at.Add(-time.Second)
	s.tel.mu.Unlock()
	s.workerTelemetry(a, &wire.WorkerBatch{Memory: &wire.Memory{Managed: 20}, Stats: &wire.WorkerStats{CpuSeconds: 1.5,
		Rss: 200, Fds: 10, NetIn: 1000, NetOut: 0, Tasks: map[string]int32{"executing": 2},
		Disks:    []*wire.DiskUsage{{Name: "scratch", Path: "/tmp/s", Used: 5, Free: 1 << 30, Size: 2 << 30}},
		Shuffles: []*wire.ShuffleDisk{{Id: "0123456789abcdef", Bytes: 4096}}},
		Transfers: []*wire.TransferStat{{Peer: b, Prefix: "load", Bytes: 1000, Seconds: 0.5, Count: 2},
			{Peer: "client", Prefix: "sum", Out: true, Bytes: 8, Seconds: 0.01, Count: 1}},
		Metrics: []*wire.FineMetric{{Prefix: "load", Activity: "transfer-in", Unit: "bytes", Value: 1000},
			{Prefix: "load", Activity: "compute", Unit: "seconds", Value: 2}},
		ShuffleIo: []*wire.ShuffleIO{{Group: "shuffle-split-0123456789abcdef", Written: 300}}})
	s.workerTelemetry(b, &wire.WorkerBatch{Metrics: []*wire.FineMetric{{Prefix: "load", Activity: "compute",
		Unit: "seconds", Value: 3}}})

	ws := s.Workers()
	if len(ws.Workers) != 2 || ws.Workers[0].Address != a {
		t.Fatalf("workers %+v", ws.Workers)
	}
	w := ws.Workers[0]
	if w.CPU < 49 || w.CPU > 51 || w.RSS != 200 || w.FDs != 10 || w.NetIn < 990 || w.NetIn > 1010 ||
		w.Tasks["executing"] != 2 || len(w.Disk) != 1 || w.Disk[0].Free != 1<<30 || len(w.History) != 2 ||
		w.History[1].Managed != 20 {
		t.Errorf("worker a: %+v", w)
	}
	bw := dashSource{s}.Bandwidth()
	want := []dashboard.Transfer{{From: a, To: "client", Bytes: 8, Seconds: 0.01, Count: 1},
		{From: b, To: a, Bytes: 1000, Seconds: 0.5, Count: 2}}
	if !slices.Equal(bw.Pairs, want) || !slices.Equal(bw.Workers, []string{a, b, "client"}) || len(bw.Prefixes) != 2 ||
		bw.Prefixes[0].Prefix != "load" {
		t.Errorf("bandwidth %+v", bw)
	}
	fm := dashSource{s}.FineMetrics()
	var compute float64
	for _, r := range fm.Rows {
		if r.Prefix == "load" && r.Activity == "compute" {
			compute = r.Value
		}
	}
	if compute != 5 {
		t.Errorf("compute of load over the workers: %v, want 5; rows %+v", compute, fm.Rows)
	}
	if ms := s.tel.fine.Totals(); len(ms) != 3 {
		t.Errorf("fine metrics per worker: %+v", ms)
	}

	// What a task printed, as the nanny read it, joins the worker's log.
	s.WorkerOutput("", 100000, []*wire.LogRecord{{TimeUnixNano: time.Now().UnixNano(), Level: 0,
		Message: "printed by a task", Attrs: map[string]string{"stream": "stdout"}}})
	page := s.Worker(a)
	if page == nil || len(page.Logs) == 0 || page.Logs[len(page.Logs)-1].Message != "printed by a task" ||
		page.Logs[len(page.Logs)-1].Attrs["worker"] != a || len(page.Worker.History) != 2 {
		t.Fatalf("worker page %+v", page)
	}
	if s.Worker("nobody") != nil {
		t.Error("a page for a worker that never was")
	}
	tests := []struct {
		q    dashboard.LogQuery
		want string // a message that must be there
		none string // one that must not
	}{
		{dashboard.LogQuery{Source: a}, "printed by a task", "scheduler started"},
		{dashboard.LogQuery{Source: "scheduler"}, "scheduler started", "printed by a task"},
		{dashboard.LogQuery{Text: "PRINTED"}, "printed by a task", "scheduler started"},
		{dashboard.LogQuery{Level: "WARN"}, "", "printed by a task"},
		{dashboard.LogQuery{Key: "nope"}, "", "printed by a task"},
		{dashboard.LogQuery{}, "worker joined", ""},
	}
	for _, tc := range tests {
		l := s.Logs(tc.q)
		var msgs []string
		for _, r := range l.Records {
			msgs = append(msgs, r.Message)
		}
		if tc.want != "" && !slices.Contains(msgs, tc.want) || tc.none != "" && slices.Contains(msgs, tc.none) ||
			l.Matched != len(l.Records) || !slices.Equal(l.Sources, []string{"scheduler", a, b}) {
			t.Errorf("logs %+v: %q (sources %v)", tc.q, msgs, l.Sources)
		}
	}
	if l := s.Logs(dashboard.LogQuery{Limit: 1}); len(l.Records) != 1 || l.Matched < 2 {
		t.Errorf("one log record of %d: %d", l.Matched, len(l.Records))
	}

	// A shuffle, seen by the Recorder, gets what the workers wrote.
	split, collect := "shuffle-split-0123456789abcdef", "agg-partial-fedcba9876543210"
	s.dash.AddGraph(7, map[string]int{split: 1, collect: 1}, map[[2]string]int{{split, collect}: 1})
	sh := s.Shuffles().Shuffles
	if len(sh) != 1 || sh[0].ID != "0123456789abcdef" || !slices.Equal(sh[0].CollectGroups, []string{collect}) || len(sh[0].Workers) != 1 || sh[0].Workers[0].BytesWritten != 300 ||
		sh[0].Workers[0].Disk != 4096 || sh[0].Workers[0].Free != 1<<30 {
		t.Errorf("shuffles %+v", sh)
	}
}
