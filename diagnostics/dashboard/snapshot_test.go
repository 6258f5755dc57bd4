package dashboard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/internal/browsertest"
	"github.com/shoal-data/shoal/internal/reporttest"
)

func TestCapture(t *testing.T) {
	f := newFake()
	s := Capture(f, CaptureOptions{})
	if s.Status == nil || s.TaskWindow == nil || s.Workers == nil || s.System == nil || s.Groups == nil ||
		s.Logs == nil || s.Errors == nil || s.FineMetrics == nil || s.Bandwidth == nil || s.Shuffles == nil {
		t.Fatalf("a topic is missing: %+v", s)
	}
	if got := f.windows[len(f.windows)-1]; got != 15*time.Minute {
		t.Errorf("task window of %v, want the last 15 minutes", got)
	}
	var pages []string
	for _, p := range s.WorkerPages {
		pages = append(pages, p.Worker.Address)
	}
	if !slices.Equal(pages, []string{w1, w2, w3}) {
		t.Errorf("worker pages of %v", pages)
	}
	if q := f.logQueries[len(f.logQueries)-1]; q != (LogQuery{Limit: maxLogLimit}) {
		t.Errorf("logs asked with %+v, want every record kept", q)
	}
	if s.Profile == nil || len(s.PrefixProfiles) != 2 || len(s.WorkerProfiles) != 2 {
		t.Errorf("profiles: %v, of prefixes %v, of workers %v", s.Profile, s.PrefixProfiles, s.WorkerProfiles)
	}
	// The profiles of one prefix, and of one worker, are asked for as such.
	var one []string
	for _, q := range f.profiles {
		switch {
		case len(q.Prefixes) == 1 && len(q.Workers) == 0:
			one = append(one, "prefix "+q.Prefixes[0])
		case len(q.Workers) == 1 && len(q.Prefixes) == 0:
			one = append(one, "worker "+q.Workers[0])
		}
	}
	slices.Sort(one)
	if !slices.Equal(one, []string{"prefix fail", "prefix inc", "worker " + w1, "worker " + w2}) {
		t.Errorf("profiles asked of %v", one)
	}

	// A period leaves out what came before it.
	start := now(0).Add(-10 * time.Second)
	s = Capture(f, CaptureOptions{Start: start, Stop: now(0), MaxBars: 7})
	if got := f.windows[len(f.windows)-1]; got != 10*time.Second || f.bars[len(f.bars)-1] != 7 {
		t.Errorf("task window of %v in %d bars, want 10s in 7", got, f.bars[len(f.bars)-1])
	}
	for _, p := range s.WorkerPages {
		for _, h := range p.Worker.History {
			if h.Time.Before(start) {
				t.Errorf("worker %s: a sample of %v, before the period", p.Worker.Address, h.Time)
			}
		}
		if len(p.Worker.History) != 11 {
			t.Errorf("worker %s: %d samples in the period, want 11", p.Worker.Address, len(p.Worker.History))
		}
	}
	if len(s.Logs.Records) != 0 || len(s.Errors.Errors) != 0 || len(s.Errors.Failed) != 0 {
		t.Errorf("logs and errors of before the period: %+v %+v", s.Logs, s.Errors)
	}

	f.profileErr = errProfile
	if s := Capture(f, CaptureOptions{}); s.Profile != nil || s.ProfileError != errProfile.Error() {
		t.Errorf("profile %v, error %q; want none, and why", s.Profile, s.ProfileError)
	}
}

// TestPeriod records a period's events: its snapshot has the task
// stream, progress, computations and errors of the period alone, the fine
// metrics and bandwidth added in it, and its numbers.
func TestPeriod(t *testing.T) {
	hub := diagnostics.NewHub()
	defer hub.Close()
	f := newFake()
	p := NewPeriod()
	p.Start(hub, f)
	// The runs start with the period and end when they are published.
	start := p.start
	run := func(key string, to string, bytes int64, err string) []diagnostics.Event {
		return []diagnostics.Event{
			{Kind: diagnostics.TaskTransition, Compute: 2, Key: graph.Key(key), From: "released", To: "waiting"},
			{Kind: diagnostics.TaskTransition, Compute: 2, Key: graph.Key(key), From: "waiting", To: "processing"},
			{Kind: diagnostics.TaskTransition, Compute: 2, Key: graph.Key(key), From: "processing", To: to, Worker: w1,
				Start: start, Bytes: bytes, Err: err, Op: "op"},
		}
	}
	hub.Publish(diagnostics.Event{Kind: diagnostics.ComputeStarted, Compute: 2, Tasks: map[string]int{"inc": 2, "fail": 1},
		Caller: "/src/main.go:12"})
	hub.Publish(run("inc-0", "memory", 100, "")...)
	hub.Publish(run("inc-1", "memory", 23, "")...)
	hub.Publish(run("fail-0", "erred", 0, "boom")...)
	hub.Publish(diagnostics.Event{Kind: diagnostics.ComputeFinished, Compute: 2, Err: "boom"})
	f.advance() // the fine metrics and bandwidth move on
	s := p.Stop(f, 0, errors.New("the function failed"))

	r := s.Report
	if r.Tasks != 3 || r.Erred != 1 || r.Computations != 1 || r.BytesComputed != 123 || r.Error != "the function failed" {
		t.Errorf("summary %+v", r)
	}
	// The fake's workers: two connected of 2 threads, one gone whose
	// last sample is of 2025, before the period.
	if r.Workers != 2 || r.Threads != 4 {
		t.Errorf("%d workers of %d threads, want 2 of 4", r.Workers, r.Threads)
	}
	// groupby's compute went from 20 s to 21 s, w1 to w2 from 300 to 301
	// MiB; nothing else moved.
	if len(s.FineMetrics.Rows) != 1 || s.FineMetrics.Rows[0] != (FineMetricRow{Prefix: "groupby", Activity: "compute",
		Unit: "seconds", Value: 1}) {
		t.Errorf("fine metrics of the period: %+v", s.FineMetrics.Rows)
	}
	if len(s.Bandwidth.Pairs) != 1 || s.Bandwidth.Pairs[0].Bytes != 1<<20 || len(s.Bandwidth.Prefixes) != 1 ||
		s.Bandwidth.Prefixes[0].Prefix != "inc" || !slices.Equal(s.Bandwidth.Workers, []string{w1, w2}) {
		t.Errorf("bandwidth of the period: %+v", s.Bandwidth)
	}
	if s.TaskWindow.Count != 3 || len(s.TaskWindow.Runs) != 3 || s.TaskWindow.Workers[0].Threads != 2 {
		t.Errorf("task window: %+v", s.TaskWindow)
	}
	if len(s.Status.Computations) != 1 || s.Status.Computations[0].Caller != "/src/main.go:12" ||
		s.Status.Computations[0].State != "failed" {
		t.Errorf("computations: %+v", s.Status.Computations)
	}
	if s.Errors.Total != 1 || s.Errors.Errors[0].Key != "fail-0" || len(s.Errors.Failed) != 1 {
		t.Errorf("errors: %+v", s.Errors)
	}
	if s.Profile == nil || s.Profile.Timeline.Prefixes[0] != "inc" {
		t.Errorf("the profile's timeline is not the period's: %+v", s.Profile)
	}
}

// TestReportFile checks the HTML of a report: one file, every script and
// style in it, and the snapshot it carries read back whole.
func TestReportFile(t *testing.T) {
	snap := Capture(newFake(), CaptureOptions{})
	snap.Report = &ReportSummary{Tasks: 44, Erred: 1}
	var buf bytes.Buffer
	if err := WriteReport(&buf, snap); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, bad := range []string{` src=`, ` href="static/`, `<link `, "@import"} {
		if strings.Contains(html, bad) {
			t.Errorf("the report refers to something outside it: %q", bad)
		}
	}
	// The fake's values hold markup: in the data, it is escaped.
	if strings.Contains(html, "<script>alert(1)</script>") {
		t.Error("markup of the data made it into the report's HTML")
	}
	back, err := ReadReport(strings.NewReader(html))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(snap)
	b, _ := json.Marshal(back)
	if !bytes.Equal(a, b) {
		t.Error("the snapshot read back from the report differs")
	}
	if !strings.Contains(html, `<template id="tpl-report"`) || !strings.Contains(html, `<template id="tpl-worker"`) {
		t.Error("the report lacks its summary or a page")
	}
	// A snapshot of no period has no summary: its file starts with the
	// status page.
	buf.Reset()
	noReport := *snap
	noReport.Report = nil
	if err := WriteReport(&buf, &noReport); err != nil || strings.Contains(buf.String(), `<template id="tpl-report"`) {
		t.Errorf("a snapshot with no report: %v, summary page %v", err, strings.Contains(buf.String(), "tpl-report"))
	}
	if _, err := ReadReport(strings.NewReader("<html></html>")); err == nil {
		t.Error("read a report from a page with no data")
	}
	path := filepath.Join(t.TempDir(), "r.html")
	if err := SaveReport(path, snap); err != nil {
		t.Fatal(err)
	}
	if err := SaveReport(filepath.Join(t.TempDir(), "no", "such", "dir.html"), snap); err == nil {
		t.Error("saved a report in a directory that does not exist")
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("the report's file: %v, %v", fi, err)
	}
}

// TestBrowserFile shows every page of the dashboard from a snapshot, in a
// report opened from disk and served by FileHandler: each draws what the
// snapshot holds without an error, parameters that the file can answer
// work (a worker by name, logs filtered, the profile of one prefix), the
// others say why not, and nothing is asked of a scheduler.
func TestBrowserFile(t *testing.T) {
	b := browsertest.New(t)
	snap := Capture(newFake(), CaptureOptions{})
	snap.Report = &ReportSummary{Start: now(0).Add(-time.Minute), Stop: now(0), Seconds: 60, Tasks: 44, Erred: 1,
		Computations: 2, BytesComputed: 4 << 20, Workers: 3, Threads: 4, Error: "it failed"}
	checks := []struct {
		page, what, body string
		want             any
	}{
		{"status", "workers", `return text("#summary-workers")`, "2"},
		{"status", "bars", `return qa("#task-stream rect.run").length`, 43},
		{"status", "no window to choose", `return q("#stream-window").parentElement.hidden`, true},
		{"status", "where a computation was submitted", `return text("[data-computation='2'] .caller")`, "main.go:42"},
		{"workers", "rows", `return qa("#workers-table tbody tr").length`, 3},
		{"worker?name=" + w2Name, "the worker of that name", `return text("#worker-title")`, "Worker " + w2Name},
		{"worker?name=" + w2Name, "its runs", `return qa("#worker-runs tbody tr").length`, 20},
		{"worker?name=" + w2Name, "its profile", `return qa("#flame rect").length > 3`, true},
		{"worker?name=nobody", "no such worker", `return text("#worker-missing")`, `no worker "nobody" in this file`},
		{"system", "charts", `return qa("#system-charts figure").length > 0`, true},
		{"groups", "groups", `return qa("#groups-graph g.group").length`, 4},
		{"logs", "every record", `return qa("#log-table tbody tr").length`, 7},
		{"logs?level=ERROR", "errors only", `return qa("#log-table tbody tr").length`, 2},
		{"logs?source=" + w2Name, "of a worker by name", `return qa("#log-table tbody tr").length`, 1},
		{"logs?text=heartbeat", "by text in attributes", `return qa("#log-table tbody tr").length`, 1},
		{"errors", "errors", `return qa("#error-table tbody tr.erred").length`, 1},
		{"profile", "the flame graph", `return qa("#flame rect").length > 3`, true},
		{"profile?prefix=fail", "of one prefix", `return text("#flame-info") !== null && qa("#flame rect").length > 3`, true},
		{"profile?prefix=fail&prefix=inc", "of two prefixes: not in a file",
			`return text("#page-errors").includes("not of this choice")`, true},
		{"fine-metrics", "prefixes", `return qa("#fine-table tbody tr").length > 0`, true},
		{"bandwidth", "pairs", `return q("#bw-matrix").textContent.includes("MiB")`, true},
		{"shuffles", "the shuffle", `return qa("#shuffles [data-shuffle]").length`, 1},
	}

	t.Run("report", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "report.html")
		if err := SaveReport(path, snap); err != nil {
			t.Fatal(err)
		}
		p := reporttest.Open(t, b, path)
		want(p.Page, "task runs", `return q("[data-card=tasks]").dataset.value`, "44")
		want(p.Page, "the function's error", `return text("#report-error")`, "The function failed: it failed")
		want(p.Page, "the offline state", `return q("#connection").dataset.state`, "offline")
		for _, c := range checks {
			p.Show(c.page)
			wantAny(p.Page, c.page+": "+c.what, c.body, c.want)
		}
		// A link between pages changes the page shown, not the file.
		p.Show("workers")
		p.Run(`document.querySelector("#workers-table tbody a").click()`)
		waitJS(p.Page, "the worker's page", `return document.body.dataset.page === "worker" && Number(document.body.dataset.rendered) >= 1`)
		want(p.Page, "the worker's page", `return text("#worker-title")`, "Worker "+w1)
		p.Offline()
		p.NoErrors()
	})

	t.Run("handler", func(t *testing.T) {
		var api atomic.Int64
		h := FileHandler(snap)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/api/") {
				api.Add(1)
			}
			h.ServeHTTP(w, r)
		}))
		defer srv.Close()
		for _, c := range checks {
			p := b.NewPage(t)
			p.Navigate(srv.URL + "/" + c.page)
			p.WaitRendered(1)
			wantAny(p, c.page+": "+c.what, c.body, c.want)
			want(p, c.page+": the offline state", `return q("#connection").dataset.state`, "offline")
			p.NoErrors()
		}
		if n := api.Load(); n != 0 {
			t.Errorf("%d requests to a scheduler's API", n)
		}
	})
}

// wantAny is want for a value of any type: JSON's numbers are float64.
func wantAny(p *browsertest.Page, what, body string, want any) {
	if got := evalJS[any](p, body); fmt.Sprint(got) != fmt.Sprint(want) {
		p.Errorf("%s: %v, want %v", what, got, want)
	}
}

// TestBusiest picks the prefixes whose profiles a snapshot takes: those
// that ran the longest.
func TestBusiest(t *testing.T) {
	tl := Timeline{Prefixes: []string{"a", "c", "d"}, Busy: [][]float64{{1, 2}, {4, 0}, {0.5}}}
	if got := busiest([]string{"a", "b", "c", "d"}, tl, 2); !slices.Equal(got, []string{"c", "a"}) {
		t.Errorf("busiest 2: %v, want [c a]", got)
	}
	if got := busiest([]string{"x", "y"}, Timeline{}, 5); !slices.Equal(got, []string{"x", "y"}) {
		t.Errorf("with no timeline: %v, want the prefixes in order", got)
	}
}

// TestReportBounded records a period of many task runs: the report sums
// them in buckets, and its file stays small.
func TestReportBounded(t *testing.T) {
	hub := diagnostics.NewHub()
	defer hub.Close()
	p := NewPeriod()
	p.Start(hub, newFake())
	const runs = 50_000
	evs := make([]diagnostics.Event, 0, 1000)
	for i := range runs {
		k := graph.Key(fmt.Sprintf("inc-%d", i))
		evs = append(evs, diagnostics.Event{Kind: diagnostics.TaskTransition, Compute: 1, Key: k, From: "processing",
			To: "memory", Worker: []string{w1, w2}[i%2], Start: p.start, Bytes: 8})
		if len(evs) == cap(evs) {
			hub.Publish(evs...)
			evs = evs[:0]
		}
	}
	s := p.Stop(newFake(), 0, nil)
	if s.Report.Tasks != runs || !s.TaskWindow.Aggregated || len(s.TaskWindow.Runs) != 0 || s.TaskWindow.Count != runs {
		t.Errorf("%d tasks; window aggregated %v with %d runs, count %d", s.Report.Tasks, s.TaskWindow.Aggregated,
			len(s.TaskWindow.Runs), s.TaskWindow.Count)
	}
	var buf bytes.Buffer
	if err := WriteReport(&buf, s); err != nil {
		t.Fatal(err)
	}
	t.Logf("a report of %d task runs: %d bytes", runs, buf.Len())
	if buf.Len() > 2<<20 {
		t.Errorf("a report of %d task runs takes %d bytes, want at most 2 MiB", runs, buf.Len())
	}
}
