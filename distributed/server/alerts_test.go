package server

import (
	"reflect"
	"testing"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/diagnostics/alert"
	"github.com/shoal-data/shoal/distributed/wire"
)

// TestAlertInputs checks what the scheduler makes of a worker's
// heartbeat and finished tasks for the alert rules.
func TestAlertInputs(t *testing.T) {
	start := time.Unix(1735830245, 0)
	wc := &workerConn{addr: "127.0.0.1:4000", info: &wire.RegisterWorker{MemoryLimit: 1 << 30},
		latency: 3 * time.Millisecond}
	b := &wire.WorkerBatch{
		Memory: &wire.Memory{Managed: 100, Process: 900},
		Metrics: []*wire.FineMetric{
			{Prefix: "a", Activity: diagnostics.ActivitySpillWrite, Unit: diagnostics.UnitBytes, Value: 1000},
			{Prefix: "b", Activity: diagnostics.ActivitySpillWrite, Unit: diagnostics.UnitBytes, Value: 24},
			{Prefix: "a", Activity: diagnostics.ActivitySpillWrite, Unit: diagnostics.UnitSeconds, Value: 2},
		},
		Stats: &wire.WorkerStats{
			Disks: []*wire.DiskUsage{{Name: "local", Path: "/w", Used: 1, Free: 2, Size: 3},
				{Name: "scratch", Path: "/s", Used: 4, Free: 5, Size: 6}},
			Shuffles: []*wire.ShuffleDisk{{Id: "3fa2c1d0", Bytes: 7}},
			Running:  []*wire.AlertRunning{{Key: "load-0badf00d-1", StartUnixNano: start.UnixNano()}},
		},
	}
	want := &alert.WorkerReport{Worker: wc.addr, MemoryLimit: 1 << 30, Managed: 100, Process: 900, SpillWrite: 1024,
		Latency: 3 * time.Millisecond,
		Disks: []alert.Disk{{Name: "local", Path: "/w", Free: 2, Size: 3},
			{Name: "scratch", Path: "/s", Free: 5, Size: 6, Shuffles: map[string]int64{"3fa2c1d0": 7}}},
		Running: []alert.Running{{Key: "load-0badf00d-1", Start: start}}}
	if got := alertReport(wc, b); !reflect.DeepEqual(got, want) {
		t.Errorf("report:\n got %+v\nwant %+v", got, want)
	}
	// A worker with one directory keeps its shuffles there.
	b.Stats.Disks = b.Stats.Disks[:1]
	if got := alertReport(wc, b); got.Disks[0].Shuffles["3fa2c1d0"] != 7 {
		t.Errorf("one directory: %+v", got.Disks)
	}

	for _, tc := range []struct {
		done *wire.TaskDone
		want *alert.TaskEnded
	}{
		{&wire.TaskDone{Key: "x-1", DurationNanos: 5, Size: 6, ReadBytes: 7},
			&alert.TaskEnded{Key: "x-1", Worker: wc.addr, Duration: 5, Bytes: 6, Read: 7}},
		{&wire.TaskDone{Key: "x-2", DurationNanos: 5, Error: &wire.Error{Message: "boom"}},
			&alert.TaskEnded{Key: "x-2", Worker: wc.addr, Duration: 5, Failed: true}},
		{&wire.TaskDone{Key: "x-3", Error: &wire.Error{Kind: wire.Error_CANCELED}}, nil},
		{&wire.TaskDone{Key: "x-4", Error: &wire.Error{Kind: wire.Error_MISSING_DATA}}, nil},
	} {
		if got := alertEnded(wc.addr, tc.done); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.done.Key, got, tc.want)
		}
	}
}

// TestAlertConfig checks that a worker is late after five missed
// heartbeats, at most half the time after which it is removed.
func TestAlertConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want time.Duration
	}{
		{Config{HeartbeatInterval: time.Second, HeartbeatTimeout: 10 * time.Second}, 5 * time.Second},
		{Config{HeartbeatInterval: 100 * time.Millisecond, HeartbeatTimeout: 10 * time.Second}, 500 * time.Millisecond},
		{Config{HeartbeatInterval: 3 * time.Second, HeartbeatTimeout: 10 * time.Second}, 5 * time.Second},
		{Config{HeartbeatInterval: time.Second, HeartbeatTimeout: time.Minute,
			Alerts: alert.Config{HeartbeatLate: 2 * time.Second}}, 2 * time.Second},
	} {
		if got := alertConfig(tc.cfg).HeartbeatLate; got != tc.want {
			t.Errorf("%+v: late after %v, want %v", tc.cfg, got, tc.want)
		}
	}
}
