package distributed_test

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-data/shoal/distributed"
)

// The files of deploy/: Prometheus alerting rules (which promtool checks
// and tests in CI) and a Grafana dashboard.
const (
	rulesFile     = "../deploy/prometheus/shoal-rules.yml"
	dashboardFile = "../deploy/grafana/shoal.json"
)

var seriesName = regexp.MustCompile(`\bshoal_[a-z0-9_]+`)

// documentedSeries returns the series of the README's table of metrics.
// A row may shorten the names after its first to their ends, as in
// "`shoal_worker_spill_bytes_total`, `_seconds_total`": the end replaces
// as many parts of the first name.
func documentedSeries(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	cell := regexp.MustCompile("`([a-z0-9_]+)`")
	for line := range strings.Lines(string(b)) {
		if !strings.HasPrefix(line, "| `shoal_") {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " |")
		var full string
		for _, m := range cell.FindAllStringSubmatch(first, -1) {
			name := m[1]
			if strings.HasPrefix(name, "_") {
				parts := strings.Split(full, "_")
				name = strings.Join(parts[:len(parts)-strings.Count(name, "_")], "_") + name
			} else {
				full = name
			}
			names[name] = true
		}
	}
	return names
}

// TestDeployUsesDocumentedSeries checks that the rules and the dashboard
// use only series Shoal documents, and that the dashboard is whole.
func TestDeployUsesDocumentedSeries(t *testing.T) {
	documented := documentedSeries(t)
	if !documented["shoal_scheduler_alert_active"] || !documented["shoal_worker_spill_count_total"] {
		t.Fatalf("the README's table of series was not read: %v", documented)
	}
	for _, f := range []string{rulesFile, dashboardFile} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		used := seriesName.FindAllString(string(b), -1)
		if len(used) == 0 {
			t.Errorf("%s uses no series of Shoal", f)
		}
		for _, name := range used {
			name = strings.TrimSuffix(name, "_bucket") // of a histogram
			if !documented[name] {
				t.Errorf("%s uses %s, which the README's table of series does not have", f, name)
			}
		}
	}
	d := readDashboard(t)
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel %q: id %d taken", p.Title, p.ID)
		}
		ids[p.ID] = true
		g := p.GridPos
		if g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 {
			t.Errorf("panel %q: grid position %+v", p.Title, g)
		}
		if p.Type == "row" {
			continue
		}
		if p.Datasource.UID != "${datasource}" || len(p.Targets) == 0 || p.Description == "" {
			t.Errorf("panel %q: datasource %+v, %d queries, description %q", p.Title, p.Datasource, len(p.Targets),
				p.Description)
		}
	}
}

type grafanaDashboard struct {
	Panels []struct {
		ID          int    `json:"id"`
		Type        string `json:"type"`
		Title       string `json:"title"`
		Description string `json:"description"`
		Datasource  struct {
			UID string `json:"uid"`
		} `json:"datasource"`
		GridPos struct{ X, Y, W, H int } `json:"gridPos"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
	Annotations struct {
		List []struct {
			Expr string `json:"expr"`
		} `json:"list"`
	} `json:"annotations"`
}

func readDashboard(t *testing.T) *grafanaDashboard {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return &d
}

// TestDeployQueries loads the rules into a real Prometheus that scrapes a
// cluster, and has it evaluate every query of the dashboard: each must be
// valid PromQL, and every rule must evaluate without error.
func TestDeployQueries(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prometheus")
	}
	prometheusBinary(t)
	_, c := newCluster(t, distributed.LocalClusterOptions{Workers: 2, ThreadsPerWorker: 1, InProcess: true,
		Metrics: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	targets := []string{info.MetricsAddress}
	for _, w := range info.Workers {
		targets = append(targets, w.Metrics)
	}
	prom := startPrometheus(t, targets, rulesFile)
	type rule struct {
		Name           string `json:"name"`
		Health         string `json:"health"`
		LastError      string `json:"lastError"`
		LastEvaluation string `json:"lastEvaluation"`
	}
	var rules []rule
	poll(t, "Prometheus to scrape the cluster and evaluate every rule", func() bool {
		var data struct {
			Groups []struct {
				Rules []rule `json:"rules"`
			} `json:"groups"`
		}
		if len(prom.query(`up{job="shoal"} == 1`)) != 3 || prom.get("/api/v1/rules", &data) != nil ||
			len(data.Groups) == 0 {
			return false
		}
		rules = data.Groups[0].Rules
		return !slices.ContainsFunc(rules, func(r rule) bool { return strings.HasPrefix(r.LastEvaluation, "0001-") })
	})
	for _, r := range rules {
		if r.Health != "ok" {
			t.Errorf("rule %s: %s %s", r.Name, r.Health, r.LastError)
		}
	}
	d := readDashboard(t)
	var exprs []string
	for _, p := range d.Panels {
		for _, q := range p.Targets {
			exprs = append(exprs, q.Expr)
		}
	}
	for _, a := range d.Annotations.List {
		if a.Expr != "" {
			exprs = append(exprs, a.Expr)
		}
	}
	vars := strings.NewReplacer("$worker", ".*", "$__rate_interval", "1m")
	for _, e := range exprs {
		var data any
		if err := prom.get("/api/v1/query?query="+url.QueryEscape(vars.Replace(e)), &data); err != nil {
			t.Errorf("dashboard query %s: %v", e, err)
		}
	}
	if len(exprs) < 15 {
		t.Errorf("%d queries in the dashboard", len(exprs))
	}
}
