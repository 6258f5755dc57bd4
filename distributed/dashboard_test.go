package distributed_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shoal-data/shoal/diagnostics/dashboard"
	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/graph"
)

// getDashboard reads path from the dashboard at base (http://host:port).
func getDashboard(t *testing.T, base, path string) []byte {
	t.Helper()
	resp, err := http.Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", path, resp.Status, b)
	}
	return b
}

// TestDashboard runs computations on a local cluster and reads them back
// from the scheduler's dashboard: its workers, task counts, progress, task
// stream and page.
func TestDashboard(t *testing.T) {
	lc, c := newCluster(t, distributed.LocalClusterOptions{Workers: 2, ThreadsPerWorker: 2, InProcess: true})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	url := lc.DashboardURL()
	if url == "" || info.DashboardURL() != url || !strings.Contains(info.String(), "dashboard:   "+url) {
		t.Fatalf("LocalCluster.DashboardURL %q, Info.DashboardURL %q; Info:\n%s", url, info.DashboardURL(), info)
	}
	base := strings.TrimSuffix(url, "/status")

	var parts []any
	for i := range 20 {
		parts = append(parts, double.Call(i))
	}
	if _, err := graph.Compute[int](ctx, c, sum.Call(graph.List(parts...))); err != nil {
		t.Fatal(err)
	}

	// The dashboard learns of the runs from the scheduler's events, a
	// moment after they happen.
	var st dashboard.Status
	var doubles dashboard.Progress
	for deadline := time.Now().Add(10 * time.Second); ; {
		st = dashboard.Status{}
		if err := json.Unmarshal(getDashboard(t, base, "/api/status"), &st); err != nil {
			t.Fatal(err)
		}
		settled := len(st.Progress) > 0
		for _, p := range st.Progress {
			if strings.Contains(p.Prefix, "double") {
				doubles = p
			}
			settled = settled && p.Processing == 0 && p.Done+p.Erred == p.Total
		}
		// Until every run has been seen: the sum's may come after the
		// doubles'.
		if settled && doubles.Done == 20 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if doubles.Total != 20 || doubles.Done != 20 || doubles.Erred != 0 || doubles.Processing != 0 {
		t.Errorf("progress of the doubles: %+v; all: %+v", doubles, st.Progress)
	}
	if len(st.Workers) != 2 {
		t.Fatalf("workers: %+v", st.Workers)
	}
	for i, w := range st.Workers {
		if w.Address != info.Workers[i].Address || w.Threads != 2 || w.State != "running" || w.LastSeen.IsZero() {
			t.Errorf("worker %d: %+v; Info has %+v", i, w, info.Workers[i])
		}
	}
	if st.Scheduler.Address != lc.Address() || st.Scheduler.Clients != 1 {
		t.Errorf("scheduler: %+v", st.Scheduler)
	}
	for state, n := range st.Tasks {
		if n < 0 || (state != "memory" && state != "released" && n != 0) {
			t.Errorf("tasks by state: %v, want none waiting or running", st.Tasks)
		}
	}

	var ts dashboard.TaskStream
	for deadline := time.Now().Add(10 * time.Second); len(ts.Tasks) < 21 && time.Now().Before(deadline); {
		ts = dashboard.TaskStream{}
		if err := json.Unmarshal(getDashboard(t, base, "/api/tasks?since=0"), &ts); err != nil {
			t.Fatal(err)
		}
		if len(ts.Tasks) < 21 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	ran := map[string]int{}
	for _, r := range ts.Tasks {
		ran[r.Worker]++
		if r.State != "memory" || r.Stop.Before(r.Start) || r.Start.IsZero() {
			t.Errorf("run %+v", r)
		}
	}
	if n := ran[st.Workers[0].Address] + ran[st.Workers[1].Address]; n != len(ts.Tasks) || n < 21 ||
		ts.Next != uint64(n) {
		t.Errorf("task stream of %d runs (next %d), by worker %v; want the 20 doubles and their sum", len(ts.Tasks),
			ts.Next, ran)
	}

	// A failure shows as erred in the progress and the task stream.
	if _, err := graph.Compute[int](ctx, c, fail.Call(1)); err == nil {
		t.Fatal("the failing task did not fail")
	}
	var erred []dashboard.TaskRun
	for deadline := time.Now().Add(10 * time.Second); len(erred) == 0 && time.Now().Before(deadline); {
		since := ts.Next
		ts = dashboard.TaskStream{}
		if err := json.Unmarshal(getDashboard(t, base, fmt.Sprintf("/api/tasks?since=%d", since)), &ts); err != nil {
			t.Fatal(err)
		}
		for _, r := range ts.Tasks {
			if r.State == "erred" {
				erred = append(erred, r)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(erred) != 1 || !strings.Contains(erred[0].Error, "failing on 1") {
		t.Errorf("erred runs: %+v", erred)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		st = dashboard.Status{}
		if err := json.Unmarshal(getDashboard(t, base, "/api/status"), &st); err != nil {
			t.Fatal(err)
		}
		if len(st.Progress) == 1 && st.Progress[0].Erred == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(st.Progress) != 1 || st.Progress[0].Erred != 1 || st.Progress[0].Total != 1 {
		t.Errorf("progress after the failure: %+v, want only the failed task's prefix", st.Progress)
	}

	// The page, and Prometheus metrics beside it without any option
	// (TestDashboardInBrowser draws the pages).
	page := string(getDashboard(t, base, "/"))
	for _, want := range []string{`id="workers"`, `id="task-stream"`, `id="progress"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page has no %s", want)
		}
	}
	metrics := string(getDashboard(t, base, "/metrics"))
	for _, want := range []string{"shoal_scheduler_tasks{", "shoal_scheduler_worker_threads{worker=",
		`shoal_scheduler_prefix_state_totals_total{prefix="distributed_test.double",state="memory"} 20`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics beside the dashboard has no %s", want)
		}
	}
	if info.MetricsAddress != strings.TrimPrefix(base, "http://") {
		t.Errorf("Info.MetricsAddress %q, want the dashboard's %q", info.MetricsAddress, base)
	}
}
