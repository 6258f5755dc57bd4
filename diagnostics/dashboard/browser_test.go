package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoal-data/shoal/internal/browsertest"
)

// The browser tests serve the dashboard of a fakeSource, open each page
// in Chromium, check what it drew, move the fake on and check that the
// page follows. The handler refreshes its streams every 20 ms, so that
// the pages follow fast; every wait polls the page.

// served is a dashboard served for a browser test, with a count of its
// event streams.
type served struct {
	url     string
	f       *fakeSource
	streams atomic.Int64 // open now
	opened  atomic.Int64 // ever
	ended   chan struct{}
}

func serve(t *testing.T, f *fakeSource, opts ...Option) *served {
	t.Helper()
	s := &served{f: f, ended: make(chan struct{}, 64)}
	h := Handler(f, append([]Option{WithInterval(20 * time.Millisecond)}, opts...)...)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/events" {
			h.ServeHTTP(w, r)
			return
		}
		s.streams.Add(1)
		s.opened.Add(1)
		defer func() {
			s.streams.Add(-1)
			s.ended <- struct{}{}
		}()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

// js wraps a check in a function with helpers: q(selector) is the first
// element, qa(selector) all of them, text(selector) the text of the first.
func js(body string) string {
	return `(() => {
	const q = (s) => document.querySelector(s);
	const qa = (s) => [...document.querySelectorAll(s)];
	const text = (s) => { const e = q(s); return e ? e.textContent.trim() : null; };
	` + body + `
})()`
}

func evalJS[T any](p *browsertest.Page, body string) T { return browsertest.Eval[T](p, js(body)) }

// waitJS waits until the body (returning a value) is truthy.
func waitJS(p *browsertest.Page, what, body string) { p.WaitFor(what, js(body)) }

// open opens a page of the dashboard and waits for its first render, and
// checks what every page has: the navigation, the connection shown live,
// one event stream (none for a page with no topic).
func open(t *testing.T, b *browsertest.Browser, s *served, path string) *browsertest.Page {
	t.Helper()
	p := b.NewPage(t)
	p.Navigate(s.url + "/" + path)
	p.WaitRendered(1)
	if n := evalJS[int](p, `return qa("header nav a").length`); n != 10 {
		p.Errorf("%s: %d links in the navigation, want 10", path, n)
	}
	waitJS(p, "the connection shown live", `return q("#connection").dataset.state === "live"`)
	if n := s.streams.Load(); n != 1 {
		p.Errorf("%s: %d event streams open, want 1", path, n)
	}
	return p
}

// want fails the test (with a screenshot) when the page's value of body
// is not want.
func want[T comparable](p *browsertest.Page, what, body string, want T) {
	if got := evalJS[T](p, body); got != want {
		p.Errorf("%s: %v, want %v", what, got, want)
	}
}

func TestBrowserStatus(t *testing.T) {
	b := browsertest.New(t)
	t.Run("runs", func(t *testing.T) {
		s := serve(t, newFake())
		p := open(t, b, s, "status")
		want(p, "workers", `return text("#summary-workers")`, "2")
		want(p, "threads", `return text("#summary-threads")`, "4")
		want(p, "worker rows", `return qa("#workers tbody tr").length`, 2)
		// Values of the scheduler are text, never markup.
		want(p, "a worker's name", `return text("#workers tbody tr:nth-child(2) td:nth-child(2)")`, w2Name)
		want(p, "elements made of the values", `return qa("#workers b, main script").length`, 0)
		want(p, "the log's markup as text", `return qa("#logs td").some((td) => td.textContent === "<script>alert(1)</script>")`, true)
		want(p, "links to the workers", `return q("#workers a").getAttribute("href")`, "worker?name=127.0.0.1%3A40001")
		// The task stream: a bar per run, erred and cancelled hatched.
		want(p, "the stream's mode", `return q("#task-stream").dataset.mode`, "runs")
		want(p, "bars", `return qa("#task-stream rect.run").length`, 43)
		want(p, "erred bars", `return qa("#task-stream rect.run[data-state=erred]").map((r) => r.getAttribute("fill")).join()`, "url(#hatch-erred)")
		want(p, "cancelled bars", `return qa("#task-stream rect.run[data-state=cancelled]").map((r) => r.getAttribute("fill")).join()`, "url(#hatch-cancelled)")
		want(p, "lanes of a worker running two at a time",
			`return new Set(qa("#task-stream rect.run").filter((r) => r.dataset.key.startsWith("inc-") && Number(r.dataset.key.slice(4)) % 2 === 1).map((r) => r.getAttribute("y"))).size`, 2)
		checkColours(p, `qa("#task-stream rect.run[data-state=memory]").map((r) => r.getAttribute("fill"))`)
		p.Run(js(`const r = q("#task-stream rect.run[data-state=erred]").getBoundingClientRect();
			q("#task-stream rect.run[data-state=erred]").dispatchEvent(new MouseEvent("mousemove", { bubbles: true, clientX: r.x + 1, clientY: r.y + 1 }));`))
		want(p, "the tooltip of the erred run", `return !q("#tip").hidden && q("#tip").textContent.split("\n").join("|")`,
			"fail-0|fail on "+w1+"|4.00 s, erred|"+failError)
		want(p, "the legend", `return qa("#stream-legend .legend-item").map((e) => e.dataset.label).join()`,
			"read-csv,inc,fail,sum,erred,cancelled")
		// The computations, the failed one with its rows and its error.
		want(p, "computations", `return qa("#computations .computation").map((c) => c.dataset.computation + " " + c.dataset.state).join()`,
			"2 running,1 failed")
		want(p, "the failed one's error", `return text("[data-computation='1'] .comp-error")`, failError)
		want(p, "the failed one's rows", `return qa("[data-computation='1'] .bar-row.failed").map((r) => r.dataset.prefix).join()`, "fail")
		want(p, "its erred segment", `return q("[data-computation='1'] rect[data-state=erred]").getAttribute("fill")`, "url(#hatch-erred)")
		want(p, "progress of inc", `return text("#progress [data-prefix=inc] .count")`, "20 / 40")
		want(p, "progress of fail", `return text("#progress [data-prefix=fail] .count")`, "0 / 1 · 1 erred")
		// The banner of the erred tasks.
		want(p, "the banner", `return !q("#errors-banner").hidden && text("#errors-count")`, "1 task erred")
		want(p, "its link", `return q("#errors-banner a[href=errors]") !== null`, true)
		want(p, "its error", `return text("#errors-banner li .err")`, failError)
		want(p, "memory rows", `return qa("#memory .bar-row").length`, 2)
		want(p, "log rows", `return qa("#logs tbody tr").length`, 3)
		want(p, "the scheduler", `return text("#scheduler-address")`, "127.0.0.1:8786")

		s.f.advance()
		waitJS(p, "inc's progress to move on", `return text("#progress [data-prefix=inc] .count") === "25 / 40"`)
		waitJS(p, "a new bar of each worker", `return qa("#task-stream rect.run").length === 45`)
		waitJS(p, "the banner to count two", `return text("#errors-count") === "2 tasks erred"`)

		// Summed runs when there are too many: the page follows.
		s.f.setAggregated(true)
		s.f.advance()
		waitJS(p, "the aggregated stream", `return q("#task-stream").dataset.mode === "aggregated"`)
		p.NoErrors()
	})
	t.Run("aggregated", func(t *testing.T) {
		f := newFake()
		f.setAggregated(true)
		s := serve(t, f)
		p := open(t, b, s, "status?window=5m")
		want(p, "the stream's mode", `return q("#task-stream").dataset.mode`, "aggregated")
		want(p, "the window chosen", `return q("#stream-window").value`, "5m")
		f.mu.Lock()
		windows := slices.Clone(f.windows)
		f.mu.Unlock()
		if !slices.Contains(windows, 5*time.Minute) {
			t.Errorf("windows asked: %v, want 5m", windows)
		}
		// A path per worker and prefix, coloured by prefix; the erred
		// share hatched.
		want(p, "paths of busy time", `return qa("#task-stream path.agg[data-prefix]").map((e) => e.dataset.worker.slice(-6) + " " + e.dataset.prefix).sort().join()`,
			":40001 fail,:40001 inc,:40002 inc,:40003 read-csv,:40003 sum")
		want(p, "erred paths", `return qa("#task-stream path.agg.erred").map((e) => e.getAttribute("fill") + " " + e.dataset.worker).join()`,
			"url(#hatch-erred) "+w1)
		checkColours(p, `qa("#task-stream path.agg[data-prefix]").map((r) => r.getAttribute("fill"))`)
		// A column is as high as the share of the threads busy: a worker
		// of two threads running one task at a time fills half its row.
		want(p, "a column of a worker busy on one of two threads",
			`const d = q("#task-stream path.agg[data-prefix=read-csv]").getAttribute("d");
			 return Math.round(Math.max(...[...d.matchAll(/v([\d.]+)/g)].map((m) => Number(m[1]))))`, 17)

		// Another window: the page asks again, on one stream.
		before := s.opened.Load()
		p.Run(`(() => { const s = document.getElementById("stream-window"); s.value = "15m"; s.dispatchEvent(new Event("change")); })()`)
		waitJS(p, "the window in the URL", `return location.search === "?window=15m"`)
		waitJS(p, "a render of the new window", `return q("#task-stream").dataset.mode === "aggregated" && Number(document.body.dataset.rendered) >= 2`)
		select {
		case <-s.ended:
		case <-time.After(10 * time.Second):
			p.Fatalf("the stream of the old window did not end")
		}
		if n, o := s.streams.Load(), s.opened.Load(); n != 1 || o != before+1 {
			p.Errorf("after a change of window: %d streams open, %d opened (%d before)", n, o, before)
		}
		f.mu.Lock()
		windows = slices.Clone(f.windows)
		f.mu.Unlock()
		if !slices.Contains(windows, 15*time.Minute) {
			t.Errorf("windows asked: %v, want 15m", windows)
		}
		p.NoErrors()
	})
}

// checkColours checks the colours of the prefixes: those of the palette,
// none of them red, orange-red, pink or grey, and none the erred colour.
func checkColours(p *browsertest.Page, fillsExpr string) {
	fills := evalJS[[]string](p, "return "+fillsExpr)
	palette := evalJS[[]string](p, "return Shoal.PALETTE")
	erred := evalJS[string](p, `return q("#hatch-erred rect").getAttribute("fill")`)
	if erred != "#d43d3d" || evalJS[string](p, "return Shoal.C.erred") != erred {
		p.Errorf("the erred hatch is %s, Shoal.C.erred %s", erred, evalJS[string](p, "return Shoal.C.erred"))
	}
	if len(fills) == 0 {
		p.Errorf("no prefix colours in %s", fillsExpr)
	}
	for _, f := range fills {
		if !slices.Contains(palette, f) || f == erred {
			p.Errorf("prefix colour %s: not of the palette %v, or erred", f, palette)
		}
	}
	grey := evalJS[string](p, "return Shoal.C.processing")
	for _, c := range palette {
		h, s, l := hsl(c)
		if h < 35 || h > 290 || s < 0.35 || l < 0.2 || l > 0.75 {
			p.Errorf("palette colour %s: hue %.0f, saturation %.2f, lightness %.2f: could pass for erred, pink or grey", c, h, s, l)
		}
		if d := rgbDistance(c, grey); d < 80 {
			p.Errorf("palette colour %s is %.0f from the processing grey %s", c, d, grey)
		}
		if d := rgbDistance(c, erred); d < 80 {
			p.Errorf("palette colour %s is %.0f from the erred colour %s", c, d, erred)
		}
	}
}

func rgb(hex string) (r, g, b float64) {
	v, _ := strconv.ParseUint(strings.TrimPrefix(hex, "#"), 16, 32)
	return float64(v >> 16 & 255), float64(v >> 8 & 255), float64(v & 255)
}

func rgbDistance(a, b string) float64 {
	r1, g1, b1 := rgb(a)
	r2, g2, b2 := rgb(b)
	return math.Sqrt((r1-r2)*(r1-r2) + (g1-g2)*(g1-g2) + (b1-b2)*(b1-b2))
}

// hsl is the hue (degrees), saturation and lightness of a colour #rrggbb.
func hsl(hex string) (h, s, l float64) {
	r, g, b := rgb(hex)
	r, g, b = r/255, g/255, b/255
	mx, mn := max(r, g, b), min(r, g, b)
	l = (mx + mn) / 2
	if mx == mn {
		return 0, 0, l
	}
	d := mx - mn
	if l > 0.5 {
		s = d / (2 - mx - mn)
	} else {
		s = d / (mx + mn)
	}
	switch mx {
	case r:
		h = math.Mod((g-b)/d+6, 6)
	case g:
		h = (b-r)/d + 2
	default:
		h = (r-g)/d + 4
	}
	return h * 60, s, l
}

func TestBrowserPages(t *testing.T) {
	b := browsertest.New(t)
	for _, tc := range []struct {
		path  string
		check func(t *testing.T, s *served, p *browsertest.Page)
	}{
		{"workers", func(t *testing.T, s *served, p *browsertest.Page) {
			want(p, "rows", `return qa("#workers-table tbody tr").length`, 3)
			want(p, "the gone worker", `return qa("#workers-table tr.gone").map((r) => r.dataset.worker + " " + r.querySelector(".state-cell").textContent).join()`,
				w3+" gone: heartbeat missed for 30s")
			want(p, "links", `return qa("#workers-table tbody tr td:first-child a").map((a) => a.getAttribute("href")).join()`,
				"worker?name=127.0.0.1%3A40001,worker?name=127.0.0.1%3A40002,worker?name=127.0.0.1%3A40003")
			want(p, "sparklines", `return qa("#workers-table svg.spark polyline").length`, 6)
			want(p, "directories", `return qa("#workers-table [data-disk]").length`, 6)
			want(p, "a directory", `return text("[data-worker='`+w1+`'] [data-disk=scratch]")`, "scratch 1.00 GiB · 2.00 GiB free")
			want(p, "tasks", `return text("[data-worker='`+w1+`'] .chips")`, "2 executing1 ready2 memory")
			want(p, "CPU", `return text("[data-worker='`+w1+`'] td:nth-child(3)")`, "50 %")
			want(p, "the name shown as text", `return text("[data-worker='`+w2+`'] td:first-child .sub")`, w2Name)
			s.f.advance()
			waitJS(p, "the CPU to move on", `return text("[data-worker='`+w1+`'] td:nth-child(3)") === "51 %"`)
		}},
		{"worker?name=" + url.QueryEscape(w1), func(t *testing.T, s *served, p *browsertest.Page) {
			want(p, "the title", `return text("#worker-title")`, "Worker "+w1)
			want(p, "its state", `return text("#worker-state")`, "running")
			want(p, "CPU", `return text("[data-card=cpu] .value")`, "50 %")
			want(p, "charts", `return qa("#worker-charts figure").map((f) => f.dataset.chart + ":" + f.querySelectorAll("path.line").length).join()`,
				"cpu:1,memory:3,network:2,executing:1")
			want(p, "runs", `return qa("#worker-runs tbody tr").length`, 21)
			want(p, "the erred run", `return text("#worker-runs tr.erred td:nth-child(6)")`, failError)
			want(p, "logs", `return qa("#worker-logs tbody tr").map((r) => r.dataset.level).join()`, "ERROR,DEBUG")
			want(p, "directories", `return qa("#worker-disk tbody tr").length`, 2)
			want(p, "the search of its logs", `return q("#worker-logs-link").getAttribute("href")`, "logs?source=127.0.0.1%3A40001")
			// Its profile, as a flame graph.
			s.f.mu.Lock()
			q := s.f.profiles[len(s.f.profiles)-1]
			s.f.mu.Unlock()
			if !slices.Equal(q.Workers, []string{w1}) || q.Start.IsZero() {
				t.Errorf("profile asked for %+v, want of the worker for the last minutes", q)
			}
			checkFlame(p)
			s.f.advance()
			waitJS(p, "a new run", `return qa("#worker-runs tbody tr").length === 22`)
		}},
		{"worker?name=nobody", func(t *testing.T, s *served, p *browsertest.Page) {
			want(p, "the message", `return !q("#worker-missing").hidden && text("#worker-missing")`, `no worker "nobody": the scheduler never knew it`)
		}},
		{"system", func(t *testing.T, s *served, p *browsertest.Page) {
			want(p, "charts", `return qa("#system-charts figure").map((f) => f.dataset.chart + ":" + f.querySelectorAll("path.line").length).join()`,
				"cpu:1,memory:2,goroutines:1,fds:1,handle:2,lateness:1")
			want(p, "goroutines", `return text("[data-card=goroutines] .value")`, "159")
			s.f.advance()
			waitJS(p, "goroutines to move on", `return text("[data-card=goroutines] .value") === "160"`)
		}},
		{"groups", func(t *testing.T, s *served, p *browsertest.Page) {
			want(p, "boxes", `return qa("#groups-graph g.group").map((g) => g.dataset.group).join()`, "read-csv-3fa2c1d0,inc-9b1e,sum-77aa,fail-d00d")
			want(p, "arrows", `return qa("#groups-graph path.edge").length`, 3)
			want(p, "the erred group", `return qa("g.group.erred").map((g) => g.dataset.group + " " + g.querySelector("rect[data-state=erred]").getAttribute("fill")).join()`,
				"fail-d00d url(#hatch-erred)")
			want(p, "the states of inc", `return qa("[data-group=inc-9b1e] rect[data-state]").map((r) => r.dataset.state).join()`, "memory,processing,waiting")
			// Columns by the longest path from the sources.
			want(p, "columns", `const x = (n) => q("[data-group='" + n + "']").getBoundingClientRect().left;
				return [x("read-csv-3fa2c1d0") === x("fail-d00d"), x("read-csv-3fa2c1d0") < x("inc-9b1e"), x("inc-9b1e") < x("sum-77aa")].join()`,
				"true,true,true")
			want(p, "a tooltip", `return q("[data-group=inc-9b1e] > title").textContent.split("\n").slice(0, 3).join("|")`,
				"inc-9b1e|prefix inc · computation 2|40 tasks")
			s.f.advance()
			waitJS(p, "a new group", `return qa("#groups-graph g.group").length === 5 && qa("#groups-graph path.edge").length === 4`)
			want(p, "the computations", `return qa("#groups-computation option").map((o) => o.value).join()`, ",3,2,1")
		}},
		{"logs", func(t *testing.T, s *served, p *browsertest.Page) {
			want(p, "rows, newest first", `return qa("#log-table tbody tr").map((r) => r.dataset.level).join()`, "ERROR,WARN,WARN,ERROR,DEBUG,INFO,INFO")
			want(p, "sources", `return qa("#log-source option").map((o) => o.value).join()`, ",scheduler,"+w1+","+w2+","+w3)
			want(p, "markup as text", `return qa("#log-table td.message").some((td) => td.textContent === "<b>not bold</b>")`, true)
			want(p, "attributes", `return text("#log-table tbody tr:nth-child(4) td.attrs")`, "error="+failError+"key=fail-0")
			want(p, "the colour of an error", `return getComputedStyle(q("#log-table tr.level-ERROR td.level")).color`, "rgb(212, 61, 61)")
			s.f.advance()
			waitJS(p, "a new record", `return qa("#log-table tbody tr").length === 8`)
			// Filters, applied by the server.
			p.Run(js(`const l = q("#log-level"); l.value = "ERROR"; l.dispatchEvent(new Event("change", { bubbles: true }));`))
			waitJS(p, "the errors only", `return qa("#log-table tbody tr").length === 2 && location.search === "?level=ERROR"`)
			p.Run(js(`const l = q("#log-source"); l.value = "` + w1 + `"; l.dispatchEvent(new Event("change", { bubbles: true }));`))
			waitJS(p, "the errors of a worker", `return qa("#log-table tbody tr").length === 1`)
			p.Run(js(`const l = q("#log-source"); l.value = ""; l.dispatchEvent(new Event("change", { bubbles: true }));
				const k = q("#log-text"); k.value = "heartbeat"; k.dispatchEvent(new Event("input", { bubbles: true }));`))
			waitJS(p, "the record of a text", `return qa("#log-table tbody tr").length === 1 && text("#log-table td.message") === "worker lost"`)
			s.f.mu.Lock()
			queries := slices.Clone(s.f.logQueries)
			s.f.mu.Unlock()
			if want := (LogQuery{Level: "ERROR", Text: "heartbeat", Limit: defaultLogLimit}); !slices.Contains(queries, want) {
				t.Errorf("log queries %+v, want one %+v", queries, want)
			}
			want(p, "the filters in the URL", `return location.search`, "?level=ERROR&text=heartbeat")
			want(p, "the count", `return text("#logs-info")`, "1 record matches")
		}},
		{"errors", func(t *testing.T, s *served, p *browsertest.Page) {
			want(p, "rows", `return qa("#error-table tbody tr").map((r) => r.dataset.key).join()`, "fail-0")
			want(p, "cells", `return qa("#error-table tbody tr td").slice(1, 5).map((td) => td.textContent).join("|")`, "fail-0|main.fail|"+w1+"|1")
			want(p, "the error", `return text("#error-table .err")`, failError)
			want(p, "the stack, folded", `return q("#error-table details.stack").open`, false)
			p.Run(js(`q("#error-table details.stack summary").click()`))
			want(p, "the stack, unfolded", `return q("#error-table details.stack").open && text("#error-table details.stack pre").startsWith("goroutine 7 [running]")`, true)
			want(p, "the failed computation", `return text("#failed [data-computation='1'] .comp-error")`, failError)
			s.f.advance()
			waitJS(p, "a new error", `return qa("#error-table tbody tr").length === 2`)
			want(p, "the stack unfolded stays so", `return qa("#error-table details.stack").map((d) => d.open).join()`, "false,true")
		}},
		{"profile", func(t *testing.T, s *served, p *browsertest.Page) {
			want(p, "the summary", `return text("#profile-info").split(",").slice(0, 2).join()`, "130 samples, 1.30 s of CPU")
			checkFlame(p)
			want(p, "prefixes to choose", `return qa("#profile-prefixes input").map((i) => i.value).join()`, "fail,inc")
			want(p, "workers to choose", `return qa("#profile-workers input").map((i) => i.value).join()`, w1+","+w2)
			want(p, "the download", `return q("#profile-download").getAttribute("href")`, "api/profile.pb.gz?last=5m")
			want(p, "the timeline", `return qa("#timeline path.area").map((a) => a.dataset.series + " " + (a.getAttribute("fill") === Shoal.color(a.dataset.series))).join()`,
				"inc true,fail true")
			s.f.advance()
			waitJS(p, "the profile to move on", `return text("#profile-info").startsWith("140 samples")`)
			// Filters.
			p.Run(js(`const i = q("#profile-prefixes input[value=fail]"); i.click();`))
			waitJS(p, "the profile of fail", `return location.search === "?prefix=fail" && q("g.frame[data-name='main.fail']") && !q("g.frame[data-name='main.inc']")`)
			want(p, "the download of fail", `return q("#profile-download").getAttribute("href")`, "api/profile.pb.gz?last=5m&prefix=fail")
			p.Run(js(`const s = q("#profile-window"); s.value = ""; s.dispatchEvent(new Event("change"));`))
			waitJS(p, "the whole profile of fail", `return location.search === "?prefix=fail&last=all" && q("#profile-download").getAttribute("href") === "api/profile.pb.gz?prefix=fail"`)
			s.f.mu.Lock()
			queries := slices.Clone(s.f.profiles)
			s.f.mu.Unlock()
			if !slices.ContainsFunc(queries, func(q ProfileQuery) bool {
				return q.Start.IsZero() && slices.Equal(q.Prefixes, []string{"fail"})
			}) {
				t.Errorf("profile queries %+v, want one of all of fail", queries)
			}
			// The download works.
			want(p, "the download's answer", `return fetch(q("#profile-download").href).then((r) => r.status + " " + r.headers.get("Content-Disposition"))`,
				"200 attachment; filename=shoal-profile.pb.gz")
		}},
		{"fine-metrics", func(t *testing.T, s *served, p *browsertest.Page) {
			want(p, "prefixes, largest first", `return qa(".fine-row[data-prefix]").map((r) => r.dataset.prefix).join()`, "groupby,read-parquet,")
			want(p, "the activities of groupby", `return qa("[data-prefix=groupby] rect.act").map((r) => r.dataset.activity).join()`,
				"compute,queued,waiting,transfer-in,spill-write,decode")
			want(p, "its CPU, a mark of its own", `return qa("[data-prefix=groupby] rect.cpu-mark").length + " " + text("[data-prefix=groupby] .cpu")`, "1 15.0 s · 75 %")
			want(p, "its total", `return text("[data-prefix=groupby] .total")`, "40.0 s")
			want(p, "the legend", `return qa("#fine-legend .legend-item").map((e) => e.dataset.label).join()`,
				"compute,queued,waiting,transfer-in,spill-write,disk-read,decode,idle,cpu (of compute)")
			want(p, "the table", `return qa("#fine-table tbody tr").length`, 14)
			want(p, "bytes", `return text("#fine-table tr[data-prefix=groupby][data-activity=spill-write] td.num")`, "1.00 GiB")
			s.f.advance()
			waitJS(p, "the total to move on", `return text("[data-prefix=groupby] .total") === "41.0 s"`)
		}},
		{"bandwidth", func(t *testing.T, s *served, p *browsertest.Page) {
			want(p, "cells", `return qa("#bw-matrix rect.cell").length`, 12)
			want(p, "columns", `return [...new Set(qa("#bw-matrix rect.cell").map((r) => r.dataset.to))].join()`, w1+","+w2+","+w3+",client")
			want(p, "a cell", `return q("rect.cell[data-from='`+w1+`'][data-to='`+w2+`']").dataset.bytes`, strconv.Itoa(300<<20))
			want(p, "prefixes", `return qa("#bw-prefixes tbody tr").map((r) => r.dataset.prefix).join()`, "inc,read-csv")
			s.f.advance()
			waitJS(p, "the cell to move on", `return q("rect.cell[data-from='`+w1+`'][data-to='`+w2+`']").dataset.bytes === "`+strconv.Itoa(301<<20)+`"`)
		}},
		{"shuffles", func(t *testing.T, s *served, p *browsertest.Page) {
			want(p, "shuffles", `return qa(".shuffle").map((s) => s.dataset.shuffle).join()`, "shuffle-5e1f")
			want(p, "progress", `return qa(".shuffle .bar-row .count").map((c) => c.textContent).join()`, "12 / 20,0 / 8")
			want(p, "workers", `return qa(".shuffle tbody tr").map((r) => r.dataset.worker).join()`, w1+","+w2)
			want(p, "disk", `return text(".shuffle tr[data-worker='`+w2+`'] td:last-child")`, "80.0 MiB / 100 MiB free")
			s.f.advance()
			waitJS(p, "the splits to move on", `return text(".shuffle .bar-row .count") === "13 / 20"`)
		}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			s := serve(t, newFake())
			p := open(t, b, s, tc.path)
			tc.check(t, s, p)
			p.NoErrors()
		})
	}
}

// TestBrowserAlerts checks the banner of the alerts that every page
// shows above its own content.
func TestBrowserAlerts(t *testing.T) {
	b := browsertest.New(t)
	for _, path := range []string{"status", "workers", "logs", "shuffles"} {
		t.Run(path, func(t *testing.T) {
			s := serve(t, newFake())
			p := open(t, b, s, path)
			want(p, "the banner", `return !q("#alerts-banner").hidden && text("#alerts-count")`, "1 alert")
			want(p, "the alert", `return qa("#alerts-banner li").map((li) => li.dataset.alert + " " + li.dataset.worker).join()`,
				"disk-full "+w2)
			want(p, "its message, as text", `return text("#alerts-banner li .alert-message")`,
				"worker "+w2+": the file system of its local directory /scratch/<i>w2</i> is 93% full")
			want(p, "what to do", `return text("#alerts-banner li .alert-action")`, "free space there")
			want(p, "the link to the worker", `return q("#alerts-banner li a").getAttribute("href")`, "worker?name=127.0.0.1%3A40002")
			want(p, "not critical", `return q("#alerts-banner").classList.contains("critical")`, false)
			s.f.advance()
			waitJS(p, "a second alert", `return qa("#alerts-banner li").length === 2`)
			want(p, "newest first", `return qa("#alerts-banner li").map((li) => li.dataset.alert).join()`, "straggler,disk-full")
			want(p, "critical", `return q("#alerts-banner").classList.contains("critical") && text("#alerts-count")`, "2 alerts")
			p.NoErrors()
		})
	}
}

// checkFlame checks the flame graph of the fake's profile: its frames,
// the tooltip of hovering one, and zooming to one by a click.
func checkFlame(p *browsertest.Page) {
	want(p, "frames", `return qa("#flame g.frame").map((g) => g.dataset.name).join()`,
		"all,runtime.goexit,github.com/shoal-data/shoal/graph.RunOp,main.fail,runtime/debug.Stack,main.inc,runtime.mallocgc,runtime.gcBgMarkWorker,runtime.gcDrain")
	p.Run(js(`q("#flame g.frame[data-name='main.inc']").dispatchEvent(new MouseEvent("mouseenter"))`))
	want(p, "hovering main.inc", `return text("#flame-info")`, "main.inc — total 950 ms (73 %) · self 800 ms (61 %)")
	p.Run(js(`q("#flame g.frame[data-name='main.inc']").dispatchEvent(new MouseEvent("click", { bubbles: true }))`))
	want(p, "zoomed to main.inc", `const w = (n) => Number(q("#flame g.frame[data-name='" + n + "'] rect").getAttribute("width"));
		return [w("main.inc") === w("all"), w("runtime.mallocgc") < w("main.inc"), q("g.frame[data-name='main.fail']") === null].join()`,
		"true,true,true")
	p.Run(js(`q("#flame g.frame[data-name='all']").dispatchEvent(new MouseEvent("click", { bubbles: true }))`))
	want(p, "zoomed out", `return q("g.frame[data-name='main.fail']") !== null`, true)
}

// TestBrowserReconnects checks that a page says when it lost the
// scheduler, and takes up again when it is back.
func TestBrowserReconnects(t *testing.T) {
	b := browsertest.New(t)
	f := newFake()
	var (
		mu     sync.Mutex
		h      http.Handler
		cancel context.CancelFunc
		down   bool
	)
	up := func() {
		mu.Lock()
		defer mu.Unlock()
		ctx, c := context.WithCancel(context.Background())
		h, cancel, down = Handler(f, WithInterval(20*time.Millisecond), WithContext(ctx), func(c *config) { c.retry = 50 * time.Millisecond }), c, false
	}
	up()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hh, d := h, down
		mu.Unlock()
		if d && r.URL.Path == "/api/events" {
			http.Error(w, "the scheduler is gone", http.StatusServiceUnavailable)
			return
		}
		hh.ServeHTTP(w, r)
	}))
	// The page, opened after, closes before the server: the server's
	// Close waits for the streams to end.
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		mu.Lock()
		cancel()
		mu.Unlock()
	})
	p := b.NewPage(t)
	p.Navigate(srv.URL + "/workers")
	p.WaitRendered(1)
	waitJS(p, "live", `return q("#connection").dataset.state === "live"`)
	mu.Lock()
	down = true
	cancel() // ends the streams
	mu.Unlock()
	waitJS(p, "reconnecting", `return q("#connection").dataset.state === "reconnecting"`)
	want(p, "the page as it was", `return qa("#workers-table tbody tr").length`, 3)
	f.advance()
	up()
	waitJS(p, "live again", `return q("#connection").dataset.state === "live"`)
	waitJS(p, "the page up to date", `return text("[data-worker='`+w1+`'] td:nth-child(3)") === "51 %"`)
	// The only problems: the scheduler's refusals while it was gone.
	for _, pr := range p.Problems() {
		if pr.Kind != "network" || !strings.HasPrefix(pr.Text, "503") || !strings.Contains(pr.URL, "/api/events?topics=workers") {
			p.Errorf("problem %v", pr)
		}
	}
}

// TestBrowserLive runs the dashboard at its default interval: a page
// gets its first data at once, without waiting for a refresh.
func TestBrowserLive(t *testing.T) {
	b := browsertest.New(t)
	f := newFake()
	srv := httptest.NewServer(Handler(f))
	t.Cleanup(srv.Close)
	p := b.NewPage(t)
	start := time.Now()
	p.Navigate(srv.URL + "/")
	p.WaitRendered(1)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("first render after %v", d)
	}
	want(p, "workers", `return text("#summary-workers")`, "2")
	want(p, "the title", `return document.title`, fmt.Sprintf("Shoal dashboard · %s", "127.0.0.1:8786"))
	p.NoErrors()
}

// TestBrowserOfflineData shows a page from data it carries, as a report
// will: a Shoal.data of its own, defined before the page's scripts, and
// not one request to the scheduler's API.
func TestBrowserOfflineData(t *testing.T) {
	b := browsertest.New(t)
	f := newFake()
	data, err := json.Marshal(map[string]any{"status": f.Snapshot(), "task-window": f.TaskWindow(time.Minute, defaultBars)})
	if err != nil {
		t.Fatal(err)
	}
	var api atomic.Int64
	h := Handler(f)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/") {
			api.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p := b.NewPage(t)
	p.BeforeScripts(`window.Shoal = { data: (() => {
		const DATA = ` + string(data) + `;
		return {
			get: (topic) => Promise.resolve(DATA[topic]),
			subscribe: (topics, params, onData) => {
				setTimeout(() => { for (const t of topics) onData(t, DATA[t]); }, 0);
				return { close() {} };
			},
			link: () => null,
			onState: (fn) => fn("offline", "from a file"),
		};
	})() };`)
	p.Navigate(srv.URL + "/status")
	p.WaitRendered(1)
	want(p, "workers", `return text("#summary-workers")`, "2")
	want(p, "bars", `return qa("#task-stream rect.run").length`, 43)
	want(p, "the connection", `return q("#connection").dataset.state + ": " + text("#connection")`, "offline: from a file")
	if n := api.Load(); n != 0 {
		t.Errorf("%d requests to the API", n)
	}
	p.NoErrors()
}

// TestBrowserHiddenTab hides the page's tab: it lets its event stream go
// (a browser keeps six connections to a server, and a user opens many
// tabs) and takes it up again, up to date, once the tab is seen again.
func TestBrowserHiddenTab(t *testing.T) {
	b := browsertest.New(t)
	s := serve(t, newFake())
	p := open(t, b, s, "workers")
	setHidden := func(hidden bool) {
		p.Run(fmt.Sprintf(`(() => {
			Object.defineProperty(document, "hidden", {value: %t, configurable: true});
			document.dispatchEvent(new Event("visibilitychange"));
		})()`, hidden))
	}
	setHidden(true)
	select {
	case <-s.ended:
	case <-time.After(10 * time.Second):
		p.Fatalf("the hidden page's stream is still open")
	}
	want(p, "the connection", `return q("#connection").dataset.state`, "paused")
	want(p, "the page as it was", `return qa("#workers-table tbody tr").length`, 3)
	s.f.advance()
	setHidden(false)
	waitJS(p, "live again", `return q("#connection").dataset.state === "live"`)
	waitJS(p, "the page up to date", `return text("[data-worker='`+w1+`'] td:nth-child(3)") === "51 %"`)
	if n, all := s.streams.Load(), s.opened.Load(); n != 1 || all != 2 {
		p.Errorf("%d streams open, %d opened, want 1 and 2", n, all)
	}
	p.NoErrors()
}
