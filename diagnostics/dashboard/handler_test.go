package dashboard

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func get(t *testing.T, h http.Handler, method, target string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(method, target, nil))
	return w
}

// pagePaths are the paths of the pages and the page each serves.
var pagePaths = map[string]string{"/": "status"}

func init() {
	for _, p := range pageList {
		pagePaths["/"+p.Name] = p.Name
	}
}

var navRE = regexp.MustCompile(`(?s)<nav aria-label="pages">.*?</nav>`)

func TestHandlerPages(t *testing.T) {
	h := Handler(newFake())
	var firstNav string
	for path, name := range pagePaths {
		w := get(t, h, "GET", path)
		if w.Code != http.StatusOK || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
			t.Fatalf("GET %s: %d %s", path, w.Code, w.Header().Get("Content-Type"))
		}
		body := w.Body.String()
		for _, want := range []string{`<body data-page="` + name + `">`, `src="static/` + name + `.js"`,
			`src="static/data.js"`, `href="static/dashboard.css"`, `id="connection"`, `id="page-errors"`} {
			if !strings.Contains(body, want) {
				t.Errorf("GET %s: no %s in the page", path, want)
			}
		}
		// Every URL relative, so that the dashboard can be served under a
		// path by a proxy.
		if m := regexp.MustCompile(`(?:href|src|action)="(/|https?:)[^"]*"`).FindString(body); m != "" {
			t.Errorf("GET %s: an absolute URL: %s", path, m)
		}
		// No inline script or style: the CSP refuses them.
		if m := regexp.MustCompile(`<script>|<style|style="| on[a-z]+="`).FindString(body); m != "" {
			t.Errorf("GET %s: inline %s", path, m)
		}
		// The same navigation everywhere, less the page marked current.
		nav := strings.NewReplacer(` class="active" aria-current="page"`, "").Replace(navRE.FindString(body))
		if firstNav == "" {
			firstNav = nav
		} else if nav != firstNav {
			t.Errorf("GET %s: navigation\n%s\nwant\n%s", path, nav, firstNav)
		}
		for _, p := range pageList {
			if p.Nav != "" && !strings.Contains(nav, `href="`+p.Name+`"`) {
				t.Errorf("GET %s: no link to %s in the navigation", path, p.Name)
			}
		}
		if cur := regexp.MustCompile(`href="([a-z-]+)" class="active"`).FindStringSubmatch(body); name != "worker" &&
			(cur == nil || cur[1] != name) {
			t.Errorf("GET %s: current page in the navigation %v, want %s", path, cur, name)
		}
		hd := w.Header()
		if csp := hd.Get("Content-Security-Policy"); csp != "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'" {
			t.Errorf("GET %s: Content-Security-Policy %q", path, csp)
		}
		if hd.Get("X-Content-Type-Options") != "nosniff" || hd.Get("Referrer-Policy") != "no-referrer" ||
			hd.Get("Cache-Control") != "no-store" {
			t.Errorf("GET %s: headers %v", path, hd)
		}
	}
	if body := get(t, h, "GET", "/").Body.String(); !strings.Contains(body, "<title>Shoal dashboard</title>") {
		t.Errorf("the status page's title is not Shoal dashboard")
	}
}

func TestHandlerStatic(t *testing.T) {
	h := Handler(newFake())
	files, err := static.ReadDir("static")
	if err != nil {
		t.Fatal(err)
	}
	ctypes := map[string]string{".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}
	for _, f := range files {
		if f.IsDir() {
			continue
		}
		path := "/static/" + f.Name()
		w := get(t, h, "GET", path)
		ext := f.Name()[strings.LastIndex(f.Name(), "."):]
		if w.Code != http.StatusOK || !strings.HasPrefix(w.Header().Get("Content-Type"), ctypes[ext]) || w.Body.Len() == 0 {
			t.Errorf("GET %s: %d %q, %d bytes", path, w.Code, w.Header().Get("Content-Type"), w.Body.Len())
			continue
		}
		tag := w.Header().Get("ETag")
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("If-None-Match", tag)
		rw := httptest.NewRecorder()
		h.ServeHTTP(rw, req)
		if tag == "" || rw.Code != http.StatusNotModified {
			t.Errorf("GET %s with If-None-Match %s: %d, want 304", path, tag, rw.Code)
		}
	}
	for target, code := range map[string]int{"/nothing": 404, "/static/nothing.js": 404, "/api/nothing": 404,
		"/static/pages/layout.html": 404, "/static/pages/": 404, "/static/": 404, "/status/x": 404} {
		if w := get(t, h, "GET", target); w.Code != code {
			t.Errorf("GET %s: %d, want %d", target, w.Code, code)
		}
	}
	if w := get(t, h, "POST", "/api/status"); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /api/status: %d, want 405", w.Code)
	}
	if w := get(t, h, "HEAD", "/health"); w.Code != http.StatusOK {
		t.Errorf("HEAD /health: %d, want 200", w.Code)
	}
	if w := get(t, h, "GET", "/health"); w.Code != http.StatusOK || w.Body.String() != "ok\n" ||
		w.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("GET /health: %d %q %v", w.Code, w.Body.String(), w.Header())
	}
}

// TestPageElements checks that every element a page's scripts look up by
// id is in the page.
func TestPageElements(t *testing.T) {
	pages, err := renderedPages()
	if err != nil {
		t.Fatal(err)
	}
	idRE := regexp.MustCompile(`S\.\$\("([a-z-]+)"\)`)
	common := ""
	for _, f := range []string{"util.js", "data.js", "app.js", "charts.js", "flame.js"} {
		b, err := static.ReadFile("static/" + f)
		if err != nil {
			t.Fatal(err)
		}
		common += string(b)
	}
	for _, p := range pageList {
		js, err := static.ReadFile("static/" + p.Name + ".js")
		if err != nil {
			t.Fatal(err)
		}
		ids := idRE.FindAllStringSubmatch(common+string(js), -1)
		if len(ids) < 3 {
			t.Errorf("page %s: found %d element ids in its scripts", p.Name, len(ids))
		}
		for _, m := range ids {
			made := strings.Contains(common+string(js), `{ id: "`+m[1]+`"`) // the script makes it
			if !made && !strings.Contains(string(pages[p.Name]), `id="`+m[1]+`"`) {
				t.Errorf("page %s: the script uses #%s, which the page lacks", p.Name, m[1])
			}
		}
		// Pages get their data through Shoal.data only.
		if strings.Contains(string(js), "fetch(") || strings.Contains(string(js), "EventSource") {
			t.Errorf("page %s: its script reads the server itself, not through Shoal.data", p.Name)
		}
		if strings.Contains(string(js), "innerHTML") || strings.Contains(string(js), "outerHTML") ||
			strings.Contains(string(js), "insertAdjacentHTML") || strings.Contains(string(js), "setAttribute(\"style\"") {
			t.Errorf("page %s: its script writes HTML or a style attribute", p.Name)
		}
	}
}

// decode decodes a response's JSON.
func decode[T any](t *testing.T, w *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		t.Fatalf("decode %T: %v\n%s", v, err, w.Body)
	}
	return v
}

func TestHandlerEndpoints(t *testing.T) {
	for _, tc := range []struct {
		target string
		check  func(t *testing.T, f *fakeSource, w *httptest.ResponseRecorder)
	}{
		{"/api/status", func(t *testing.T, f *fakeSource, w *httptest.ResponseRecorder) {
			st := decode[Status](t, w)
			if len(st.Workers) != 2 || st.Workers[1].Name != w2Name || st.Erred != 1 || len(st.Computations) != 2 ||
				st.Computations[1].Error != failError || len(st.RecentErrors) != 1 || !st.Time.Equal(now(0)) {
				t.Errorf("status %+v", st)
			}
		}},
		{"/api/tasks?since=1&limit=50", func(t *testing.T, f *fakeSource, w *httptest.ResponseRecorder) {
			ts := decode[TaskStream](t, w)
			if len(ts.Tasks) != 2 || ts.Tasks[0].Key != "inc-1" || ts.Next != 3 || ts.Tasks[1].Error != "boom" {
				t.Errorf("tasks %+v", ts)
			}
			if !slices.Equal(f.since, []uint64{1}) || !slices.Equal(f.limits, []int{50}) {
				t.Errorf("since %v limit %v", f.since, f.limits)
			}
		}},
		{"/api/tasks", func(t *testing.T, f *fakeSource, w *httptest.ResponseRecorder) {
			if !slices.Equal(f.since, []uint64{0}) || !slices.Equal(f.limits, []int{defaultTaskLimit}) {
				t.Errorf("since %v limit %v", f.since, f.limits)
			}
		}},
		{"/api/tasks?limit=1000000", func(t *testing.T, f *fakeSource, w *httptest.ResponseRecorder) {
			if !slices.Equal(f.limits, []int{maxTaskLimit}) {
				t.Errorf("limit %v", f.limits)
			}
		}},
		{"/api/task-window", func(t *testing.T, f *fakeSource, w *httptest.ResponseRecorder) {
			tw := decode[TaskWindow](t, w)
			if tw.Aggregated || len(tw.Runs) != tw.Count || tw.Erred != 1 || len(tw.Workers) != 3 {
				t.Errorf("task window: %d runs, count %d, erred %d", len(tw.Runs), tw.Count, tw.Erred)
			}
			if !slices.Equal(f.windows, []time.Duration{time.Minute}) || !slices.Equal(f.bars, []int{defaultBars}) {
				t.Errorf("windows %v bars %v", f.windows, f.bars)
			}
		}},
		{"/api/task-window?window=5m&bars=100", func(t *testing.T, f *fakeSource, w *httptest.ResponseRecorder) {
			if !slices.Equal(f.windows, []time.Duration{5 * time.Minute}) || !slices.Equal(f.bars, []int{100}) {
				t.Errorf("windows %v bars %v", f.windows, f.bars)
			}
		}},
		{"/api/task-window?window=90&bars=1000000", func(t *testing.T, f *fakeSource, w *httptest.ResponseRecorder) {
			if !slices.Equal(f.windows, []time.Duration{90 * time.Second}) || !slices.Equal(f.bars, []int{maxBars}) {
				t.Errorf("windows %v bars %v", f.windows, f.bars)
			}
		}},
		{"/api/task-window?window=3h", func(t *testing.T, f *fakeSource, w *httptest.ResponseRecorder) {
			if !slices.Equal(f.windows, []time.Duration{time.Hour}) {
				t.Errorf("windows %v", f.windows)
			}
		}},
		{"/api/workers", func(t *testing.T, f *fakeSource, w *httptest.ResponseRecorder) {
			ws := decode[Workers](t, w)
			if len(ws.Workers) != 3 || !ws.Workers[2].Gone || len(ws.Workers[0].History) != 30 || len(ws.Workers[0].Disk) != 2 {
				t.Errorf("workers %+v", ws)
			}
		}},
		{"/api/worker?name=" + w1, func(t *testing.T, f *fakeSource, w *httptest.ResponseRecorder) {
			wp := decode[WorkerPage](t, w)
			if wp.Worker.Address != w1 || len(wp.Logs) == 0 || len(wp.Tasks) == 0 {
				t.Errorf("worker %+v", wp)
			}
		}},
		{"/api/system", func(t *testing.T, f *fakeSource, w *httptest.ResponseRecorder) {
			if s := decode[System](t, w); len(s.History) != 60 || s.Now.Goroutines == 0 {
				t.Errorf("system %+v", s)
			}
		}},
		{"/api/groups", func(t *testing.T, f *fakeSource, w *httptest.ResponseRecorder) {
			if g := decode[Groups](t, w); len(g.Groups) != 4 || len(g.Edges) != 3 {
				t.Errorf("groups %+v", g)
			}
		}},
		{"/api/logs", func(t *testing.T, f *fakeSource, w *httptest.ResponseRecorder) {
			if l := decode[Logs](t, w); len(l.Records) != 7 || len(l.Sources) != 4 {
				t.Errorf("logs %+v", l)
			}
			if want := []LogQuery{{Limit: defaultLogLimit}}; !slices.Equal(f.logQueries, want) {
				t.Errorf("log queries %+v, want %+v", f.logQueries, want)
			}
		}},
		{"/api/logs?level=warn&source=" + w1 + "&key=fail-0&text=Boom&limit=20000", func(t *testing.T, f *fakeSource, w *httptest.ResponseRecorder) {
			if l := decode[Logs](t, w); len(l.Records) != 1 || l.Records[0].Message != "task failed" {
				t.Errorf("logs %+v", l)
			}
			if want := []LogQuery{{Level: "WARN", Source: w1, Key: "fail-0", Text: "Boom", Limit: maxLogLimit}}; !slices.Equal(f.logQueries, want) {
				t.Errorf("log queries %+v, want %+v", f.logQueries, want)
			}
		}},
		{"/api/errors", func(t *testing.T, f *fakeSource, w *httptest.ResponseRecorder) {
			if e := decode[Errors](t, w); len(e.Errors) != 1 || e.Errors[0].Stack == "" || len(e.Failed) != 1 || e.Total != 1 {
				t.Errorf("errors %+v", e)
			}
		}},
		{"/api/profile", func(t *testing.T, f *fakeSource, w *httptest.ResponseRecorder) {
			p := decode[Profile](t, w)
			if p.Root == nil || p.Root.Name != "all" || p.Root.Value == 0 || len(p.Timeline.Busy) != 2 {
				t.Errorf("profile %+v", p)
			}
			if len(f.profiles) != 1 || !f.profiles[0].Start.IsZero() || !f.profiles[0].Stop.IsZero() ||
				f.profiles[0].Prefixes != nil || f.profiles[0].Workers != nil {
				t.Errorf("profile queries %+v", f.profiles)
			}
		}},
		{"/api/profile?last=5m&prefix=inc&prefix=fail&prefix=inc&worker=" + w2, func(t *testing.T, f *fakeSource, w *httptest.ResponseRecorder) {
			q := f.profiles[0]
			if !q.Start.Equal(fixedNow.Add(-5*time.Minute)) || !q.Stop.IsZero() ||
				!slices.Equal(q.Prefixes, []string{"fail", "inc"}) || !slices.Equal(q.Workers, []string{w2}) {
				t.Errorf("profile query %+v", q)
			}
		}},
		{"/api/profile?start=2025-01-02T15:00:00Z&stop=2025-01-02T16:00:00.5%2B01:00", func(t *testing.T, f *fakeSource, w *httptest.ResponseRecorder) {
			q := f.profiles[0]
			if !q.Start.Equal(time.Date(2025, 1, 2, 15, 0, 0, 0, time.UTC)) ||
				!q.Stop.Equal(time.Date(2025, 1, 2, 15, 0, 0, 5e8, time.UTC)) {
				t.Errorf("profile query %+v", q)
			}
		}},
		{"/api/profile.pb.gz?last=60&worker=" + w1, func(t *testing.T, f *fakeSource, w *httptest.ResponseRecorder) {
			hd := w.Header()
			if w.Body.String() != string(profileData) || hd.Get("Content-Type") != "application/octet-stream" ||
				hd.Get("Content-Disposition") != "attachment; filename=shoal-profile.pb.gz" {
				t.Errorf("profile data %q, headers %v", w.Body, hd)
			}
			if q := f.profiles[0]; !q.Start.Equal(fixedNow.Add(-time.Minute)) || !slices.Equal(q.Workers, []string{w1}) {
				t.Errorf("profile query %+v", q)
			}
		}},
		{"/api/fine-metrics", func(t *testing.T, f *fakeSource, w *httptest.ResponseRecorder) {
			if m := decode[FineMetrics](t, w); len(m.Rows) == 0 || len(m.Activities) != 13 {
				t.Errorf("fine metrics %+v", m)
			}
		}},
		{"/api/bandwidth", func(t *testing.T, f *fakeSource, w *httptest.ResponseRecorder) {
			if b := decode[Bandwidth](t, w); len(b.Pairs) != 4 || len(b.Prefixes) != 2 {
				t.Errorf("bandwidth %+v", b)
			}
		}},
		{"/api/shuffles", func(t *testing.T, f *fakeSource, w *httptest.ResponseRecorder) {
			if s := decode[Shuffles](t, w); len(s.Shuffles) != 1 || len(s.Shuffles[0].Workers) != 2 {
				t.Errorf("shuffles %+v", s)
			}
		}},
		{"/api/alerts", func(t *testing.T, f *fakeSource, w *httptest.ResponseRecorder) {
			a := decode[Alerts](t, w)
			if len(a.Active) != 1 || a.Active[0].Name != "disk-full" || a.Active[0].Worker != w2 || len(a.Recent) != 1 ||
				a.Recent[0].End.IsZero() {
				t.Errorf("alerts %+v", a)
			}
		}},
	} {
		t.Run(tc.target, func(t *testing.T) {
			f := newFake()
			h := Handler(f, withClock(fixedNow))
			w := get(t, h, "GET", tc.target)
			if w.Code != http.StatusOK {
				t.Fatalf("GET %s: %d %s", tc.target, w.Code, w.Body)
			}
			if ct := w.Header().Get("Content-Type"); !strings.Contains(tc.target, ".pb.gz") && ct != "application/json" {
				t.Errorf("GET %s: Content-Type %s", tc.target, ct)
			}
			if cc := w.Header().Get("Cache-Control"); cc != "no-store" {
				t.Errorf("GET %s: Cache-Control %q", tc.target, cc)
			}
			tc.check(t, f, w)
		})
	}
}

// fixedNow is the clock of the handlers under test: the end of a window
// "the last d".
var fixedNow = time.Date(2025, 1, 2, 16, 0, 0, 0, time.UTC)

func withClock(t time.Time) Option {
	return func(c *config) { c.now = func() time.Time { return t } }
}

func TestHandlerBadParameters(t *testing.T) {
	h := Handler(newFake())
	for _, tc := range []struct{ target, param string }{
		{"/api/tasks?since=-1", "since"},
		{"/api/tasks?since=x", "since"},
		{"/api/tasks?limit=0", "limit"},
		{"/api/tasks?limit=x", "limit"},
		{"/api/task-window?window=0", "window"},
		{"/api/task-window?window=-5m", "window"},
		{"/api/task-window?window=soon", "window"},
		{"/api/task-window?window=NaN", "window"},
		{"/api/task-window?bars=0", "bars"},
		{"/api/task-window?bars=many", "bars"},
		{"/api/worker", "name"},
		{"/api/logs?level=LOUD", "level"},
		{"/api/logs?limit=-3", "limit"},
		{"/api/profile?last=forever", "last"},
		{"/api/profile?last=0", "last"},
		{"/api/profile?start=yesterday", "start"},
		{"/api/profile?stop=2025-13-01T00:00:00Z", "stop"},
		{"/api/profile?last=5m&start=2025-01-02T15:00:00Z", "start"},
		{"/api/profile?start=2025-01-02T15:00:00Z&stop=2025-01-02T14:00:00Z", "stop"},
		{"/api/profile.pb.gz?last=x", "last"},
		{"/api/events", "topics"},
		{"/api/events?topics=", "topics"},
		{"/api/events?topics=status,nothing", "topics"},
		{"/api/events?topics=status,task-window&window=never", "window"},
		{"/api/events?topics=worker", "name"},
	} {
		w := get(t, h, "GET", tc.target)
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), tc.param+"=") ||
			!strings.Contains(w.Body.String(), "want") {
			t.Errorf("GET %s: %d %q, want 400 naming %s and what is wanted", tc.target, w.Code, w.Body, tc.param)
		}
	}
}

func TestHandlerErrors(t *testing.T) {
	f := newFake()
	h := Handler(f)
	w := get(t, h, "GET", "/api/worker?name=nobody:1")
	if w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), `"nobody:1"`) {
		t.Errorf("GET /api/worker?name=nobody:1: %d %q, want 404 naming the worker", w.Code, w.Body)
	}
	if w := get(t, h, "GET", "/api/worker?name="+w2Name); w.Code != http.StatusOK {
		t.Errorf("GET /api/worker by name: %d %q", w.Code, w.Body)
	}
	f.profileErr = errProfile
	for _, path := range []string{"/api/profile", "/api/profile.pb.gz"} {
		w := get(t, h, "GET", path)
		if w.Code != http.StatusInternalServerError || !strings.Contains(w.Body.String(), errProfile.Error()) {
			t.Errorf("GET %s: %d %q, want 500 with the Source's error", path, w.Code, w.Body)
		}
	}
}

// noAlerts is a Source that raises no alerts.
type noAlerts struct{ Source }

func TestHandlerNoAlerts(t *testing.T) {
	h := Handler(noAlerts{newFake()})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/api/alerts", nil))
	if body := strings.TrimSpace(w.Body.String()); w.Code != 200 || body != `{"active":[],"recent":[]}` {
		t.Errorf("alerts of a Source that raises none: %d %s", w.Code, body)
	}
}
