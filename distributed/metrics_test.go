package distributed_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/graph"
)

// scrape reads the metrics served at addr.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/metrics: %s", addr, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse the metrics of %s: %v", addr, err)
	}
	return fams
}

// value returns the value of the series of family name whose labels
// include want, and whether there is one; counters and gauges only.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	total, found := 0.0, false
	for _, m := range f.Metric {
		ok := true
		for k, v := range want {
			has := false
			for _, l := range m.Label {
				has = has || (l.GetName() == k && l.GetValue() == v)
			}
			ok = ok && has
		}
		if !ok {
			continue
		}
		found = true
		switch {
		case m.Counter != nil:
			total += m.Counter.GetValue()
		case m.Gauge != nil:
			total += m.Gauge.GetValue()
		}
	}
	return total, found
}

// metricsWorkload runs tasks whose inputs are spread over both workers,
// so that values move between them.
func metricsWorkload(t *testing.T, c *distributed.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var parts []any
	for i := range 40 {
		parts = append(parts, double.Call(i))
	}
	if _, err := graph.Compute[int](ctx, c, sum.Call(graph.List(parts...))); err != nil {
		t.Fatal(err)
	}
}

func TestMetricsProcesses(t *testing.T) {
	_, c := processCluster(t, distributed.LocalClusterOptions{Metrics: true})
	metricsWorkload(t, c)
	ctx := context.Background()
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.MetricsAddress == "" || !strings.Contains(c.String(), "metrics:") {
		t.Fatalf("no scheduler metrics address in %v", c)
	}
	s := scrape(t, info.MetricsAddress)
	checks := []struct {
		name   string
		labels map[string]string
		ok     func(float64) bool
	}{
		{"shoal_scheduler_workers", map[string]string{"state": "running"}, func(v float64) bool { return v == 2 }},
		{"shoal_scheduler_tasks", map[string]string{"state": "memory"}, func(v float64) bool { return v >= 0 }},
		{"shoal_scheduler_clients", nil, func(v float64) bool { return v == 1 }},
		{"shoal_scheduler_tasks_finished_total", map[string]string{"prefix": double.Name(), "outcome": "memory"},
			func(v float64) bool { return v == 40 }},
		{"shoal_scheduler_task_compute_seconds_total", map[string]string{"prefix": double.Name()},
			func(v float64) bool { return v > 0 }},
		{"shoal_scheduler_worker_memory_bytes", map[string]string{"kind": "process"}, func(v float64) bool { return v >= 0 }},
		{"shoal_scheduler_worker_tasks", map[string]string{"state": "processing"}, func(v float64) bool { return v >= 0 }},
	}
	for _, ck := range checks {
		v, ok := value(s, ck.name, ck.labels)
		if !ok || !ck.ok(v) {
			t.Errorf("scheduler %s%v = %v (present %v)", ck.name, ck.labels, v, ok)
		}
	}
	if f := s["shoal_scheduler_tick_lateness_seconds"]; f == nil || f.GetType() != dto.MetricType_HISTOGRAM {
		t.Errorf("no scheduler lateness histogram")
	}
	var finished, in, out float64
	for _, w := range info.Workers {
		if w.Metrics == "" {
			t.Fatalf("worker %s serves no metrics", w.Address)
		}
		m := scrape(t, w.Metrics)
		v, _ := value(m, "shoal_worker_tasks_finished_total", map[string]string{"prefix": double.Name()})
		finished += v
		v, _ = value(m, "shoal_worker_transfer_bytes_total", map[string]string{"direction": "in"})
		in += v
		v, _ = value(m, "shoal_worker_transfer_bytes_total", map[string]string{"direction": "out"})
		out += v
		for _, name := range []string{"shoal_worker_tasks", "shoal_worker_memory_bytes", "shoal_worker_paused",
			"shoal_worker_spill_bytes_total", "shoal_worker_disk_used_bytes", "shoal_worker_disk_free_bytes",
			"shoal_worker_task_compute_seconds_total", "go_goroutines", "process_resident_memory_bytes"} {
			if _, ok := value(m, name, nil); !ok {
				t.Errorf("worker %s: no %s", w.Address, name)
			}
		}
		if free, _ := value(m, "shoal_worker_disk_free_bytes", map[string]string{"dir": "local"}); free <= 0 {
			t.Errorf("worker %s: disk free %v", w.Address, free)
		}
		// Every series says whose it is (but those of the HTTP handler
		// itself); the fine metrics are there.
		for name, f := range m {
			if strings.HasPrefix(name, "promhttp_") {
				continue
			}
			for _, x := range f.GetMetric() {
				found := false
				for _, l := range x.GetLabel() {
					found = found || l.GetName() == "worker" && l.GetValue() == w.Address
				}
				if !found {
					t.Fatalf("worker %s: series %s without its worker label", w.Address, name)
				}
			}
		}
		if v, ok := value(m, "shoal_worker_fine_seconds_total", map[string]string{"prefix": double.Name(),
			"activity": "compute"}); !ok || v <= 0 {
			t.Errorf("worker %s: fine seconds of compute of double %v (present %v)", w.Address, v, ok)
		}
		if v, ok := value(m, "shoal_worker_threads", nil); !ok || v != float64(w.Threads) {
			t.Errorf("worker %s: threads %v, want %d", w.Address, v, w.Threads)
		}
	}
	if finished != 40 {
		t.Errorf("workers finished %v doubles, want 40", finished)
	}
	if in <= 0 || out < in {
		t.Errorf("transfer bytes: in %v, out %v; want some values moved between the workers", in, out)
	}
}

// TestPrometheusScrapes starts a real Prometheus server that scrapes the
// scheduler and the workers, and asks it for the series.
func TestPrometheusScrapes(t *testing.T) {
	prometheusBinary(t)
	_, c := processCluster(t, distributed.LocalClusterOptions{Metrics: true})
	metricsWorkload(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	targets := []string{info.MetricsAddress}
	for _, w := range info.Workers {
		targets = append(targets, w.Metrics)
	}
	query := startPrometheus(t, targets).query
	eventually(t, "prometheus scraped the scheduler and both workers", func() bool {
		return len(query(`up{job="shoal"} == 1`)) == 3
	})
	for _, q := range []struct {
		expr string
		n    int
	}{
		{`shoal_scheduler_workers{state="running"} == 2`, 1},
		{`shoal_scheduler_tasks_finished_total{outcome="memory"}`, 2}, // double and sum
		{`shoal_worker_tasks_finished_total{prefix="` + double.Name() + `"}`, 2},
		{`shoal_worker_disk_free_bytes{dir="local"} > 0`, 2},
		{`shoal_worker_memory_bytes{kind="process"} > 0`, 2},
	} {
		if got := query(q.expr); len(got) != q.n {
			t.Errorf("%s: %d series, want %d: %v", q.expr, len(got), q.n, got)
		}
	}
}
