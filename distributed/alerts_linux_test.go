package distributed_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/diagnostics/alert"
	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/internal/testutil"
)

// fill writes a file of mib MiB in dir.
func fill(t *testing.T, dir, name string, mib int) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), make([]byte, mib<<20), 0o644); err != nil {
		t.Fatalf("fill %s: %v", dir, err)
	}
}

// TestDiskAlert makes a 16 MiB tmpfs the directory of a worker, fills it,
// and watches a real Prometheus, with Shoal's rules, fire ShoalDiskFull
// for that worker's directory, and the scheduler raise its own alert: an
// event and a log record at WARN naming the worker and the path, resolved
// once the space is freed.
func TestDiskAlert(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prometheus")
	}
	prometheusBinary(t)
	mnt := testutil.Tmpfs(t, 16<<20)
	lc, c := newCluster(t, distributed.LocalClusterOptions{Workers: 1, ThreadsPerWorker: 1, InProcess: true,
		Metrics: true, LocalDir: mnt})
	raised := make(chan diagnostics.Alert, 64)
	resolved := make(chan diagnostics.Alert, 64)
	sub := lc.Scheduler().Events().Subscribe(func(evs []diagnostics.Event) {
		for _, e := range evs {
			ch := raised
			if e.Kind == diagnostics.AlertResolved {
				ch = resolved
			}
			if e.Alert == nil || e.Alert.Name != alert.DiskFull {
				continue
			}
			select {
			case ch <- *e.Alert:
			default:
				t.Errorf("too many disk alerts: %+v", e.Alert)
			}
		}
	})
	defer sub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	worker := info.Workers[0].Address
	prom := startPrometheus(t, []string{info.MetricsAddress, info.Workers[0].Metrics},
		"../deploy/prometheus/shoal-rules.yml")
	poll(t, "Prometheus scraped the scheduler and the worker", func() bool {
		return len(prom.query(`up{job="shoal"} == 1`)) == 2
	})

	// Half full: no alert.
	fill(t, mnt, "fill-1", 8)
	poll(t, "Prometheus saw the directory half full", func() bool {
		return len(prom.query(`shoal_worker_disk_free_bytes{dir="local"} < 9 * 1024 * 1024`)) == 1
	})
	for _, a := range prom.alerts() {
		if a.Labels["alertname"] == "ShoalDiskFull" {
			t.Errorf("ShoalDiskFull %s with the directory half full: %v", a.State, a.Labels)
		}
	}

	// Nearly full: Prometheus fires the alert, for the worker's
	// directories on the tmpfs.
	fill(t, mnt, "fill-2", 7)
	var fired promAlert
	poll(t, "Prometheus to fire ShoalDiskFull", func() bool {
		for _, a := range prom.alerts() {
			if a.Labels["alertname"] == "ShoalDiskFull" && a.State == "firing" && a.Labels["dir"] == "local" {
				fired = a
				return true
			}
		}
		return false
	})
	if fired.Labels["worker"] != worker || fired.Labels["severity"] != "warning" ||
		!strings.Contains(fired.Annotations["summary"], worker) {
		t.Errorf("ShoalDiskFull: labels %v, annotations %v; want worker %s", fired.Labels, fired.Annotations, worker)
	}

	// The scheduler's own alert: an event, a record at WARN, the alert of
	// Client.Alerts, a series of its /metrics.
	var a diagnostics.Alert
	select {
	case a = <-raised:
	case <-ctx.Done():
		t.Fatal("the scheduler raised no disk-full alert")
	}
	if a.Worker != worker || !strings.HasPrefix(a.Path, mnt) || !strings.Contains(a.Message, a.Path) ||
		!strings.Contains(a.Message, worker) || a.Action == "" || a.Value <= 0.9 {
		t.Errorf("alert %+v: want worker %s and a directory in %s", a, worker, mnt)
	}
	logs, err := c.SchedulerLogs(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(logs, func(r distributed.LogRecord) bool {
		return r.Level == slog.LevelWarn && r.Attrs["alert"] == alert.DiskFull && r.Attrs["worker"] == worker &&
			r.Attrs["path"] == a.Path && r.Message == a.Message && r.Attrs["action"] == a.Action
	}) {
		t.Errorf("no record at WARN of the alert in the scheduler's log:\n%v", logs)
	}
	active, _, err := c.Alerts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(active, func(x diagnostics.Alert) bool { return x.ID() == a.ID() }) {
		t.Errorf("Client.Alerts: %+v, want %s", active, a.ID())
	}
	poll(t, "Prometheus to scrape the scheduler's series of it", func() bool {
		return len(prom.query(`shoal_scheduler_alert_active{alert="disk-full",worker="`+worker+`",path="`+a.Path+`"} == 1`)) == 1
	})

	// Space freed: the scheduler resolves its alerts.
	for _, name := range []string{"fill-1", "fill-2"} {
		if err := os.Remove(filepath.Join(mnt, name)); err != nil {
			t.Fatal(err)
		}
	}
	for open := map[string]bool{a.ID(): true}; len(open) > 0; {
		select {
		case r := <-resolved:
			delete(open, r.ID())
		case x := <-raised:
			open[x.ID()] = true // the other directory on the tmpfs
		case <-ctx.Done():
			t.Fatalf("alerts not resolved once the space was freed: %v", open)
		}
	}
}
