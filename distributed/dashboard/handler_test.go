package dashboard

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeSource is a cluster of two workers that ran three tasks.
type fakeSource struct {
	since []uint64 // the since of each TaskStream call
	limit []int
}

var t0 = time.Date(2025, 1, 2, 15, 4, 5, 123456789, time.UTC)

func (f *fakeSource) Snapshot() *Status {
	return &Status{
		Time: t0.Add(10 * time.Second),
		Scheduler: Scheduler{ID: "scheduler-test", Address: "127.0.0.1:8786", Started: t0.Add(-time.Hour),
			Clients: 1},
		Workers: []Worker{
			{Address: "127.0.0.1:40001", State: "running", Threads: 2, MemoryLimit: 1 << 30, Managed: 3 << 20,
				Unmanaged: 40 << 20, Processing: 1, InMemory: 2, LastSeen: t0.Add(9 * time.Second)},
			{Address: "127.0.0.1:40002", Name: "gpu-<b>1</b>", State: "paused", Threads: 2, Managed: 1 << 20,
				Unmanaged: 30 << 20, Spilled: 5 << 20, InMemory: 1, LastSeen: t0.Add(8 * time.Second)},
		},
		Tasks: map[string]int{"waiting": 1, "processing": 1, "memory": 3, "erred": 1},
		Progress: []Progress{{Prefix: "inc", Total: 4, Done: 3, Memory: 3, Processing: 1},
			{Prefix: "fail", Total: 1, Erred: 1}},
		Logs: []LogRecord{{Time: t0, Level: "INFO", Message: "worker joined",
			Attrs: map[string]string{"worker": "127.0.0.1:40001"}},
			{Time: t0.Add(time.Second), Level: "WARN", Message: "<script>alert(1)</script>"}},
		StreamNext: 3,
	}
}

func (f *fakeSource) TaskStream(since uint64, limit int) *TaskStream {
	f.since = append(f.since, since)
	f.limit = append(f.limit, limit)
	all := []TaskRun{
		{Seq: 1, Worker: "127.0.0.1:40001", Key: "inc-0", Prefix: "inc", Start: t0, Stop: t0.Add(time.Second), State: "memory"},
		{Seq: 2, Worker: "127.0.0.1:40002", Key: "inc-1", Prefix: "inc", Start: t0, Stop: t0.Add(2 * time.Second), State: "memory"},
		{Seq: 3, Worker: "127.0.0.1:40001", Key: "fail-0", Prefix: "fail", Start: t0.Add(time.Second),
			Stop: t0.Add(3 * time.Second), State: "erred", Error: "boom"},
	}
	return &TaskStream{Tasks: all[min(since, 3):], Next: 3}
}

func get(t *testing.T, h http.Handler, method, target string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(method, target, nil))
	return w
}

func TestHandlerPages(t *testing.T) {
	h := Handler(&fakeSource{})
	for _, path := range []string{"/", "/status"} {
		w := get(t, h, "GET", path)
		if w.Code != http.StatusOK || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
			t.Fatalf("GET %s: %d %s", path, w.Code, w.Header().Get("Content-Type"))
		}
		body := w.Body.String()
		for _, want := range []string{`id="workers"`, `id="progress"`, `id="memory"`, `id="task-stream"`,
			`id="task-counts"`, `id="logs"`, `src="static/status.js"`, `href="static/status.css"`} {
			if !strings.Contains(body, want) {
				t.Errorf("GET %s: no %s in the page", path, want)
			}
		}
		if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("GET %s: Content-Security-Policy %q", path, csp)
		}
	}
	for path, ctype := range map[string]string{"/static/status.js": "text/javascript",
		"/static/status.css": "text/css"} {
		w := get(t, h, "GET", path)
		if w.Code != http.StatusOK || !strings.HasPrefix(w.Header().Get("Content-Type"), ctype) || w.Body.Len() == 0 {
			t.Errorf("GET %s: %d %q, %d bytes; want 200 %s", path, w.Code, w.Header().Get("Content-Type"),
				w.Body.Len(), ctype)
		}
	}
	for target, code := range map[string]int{"/nothing": 404, "/static/nothing.js": 404, "/api/nothing": 404} {
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
	if w := get(t, h, "GET", "/health"); w.Code != http.StatusOK || w.Body.String() != "ok\n" {
		t.Errorf("GET /health: %d %q", w.Code, w.Body.String())
	}
}

// TestPageElements checks that every element the script looks up by id is
// in the page.
func TestPageElements(t *testing.T) {
	page, err := static.ReadFile("static/status.html")
	if err != nil {
		t.Fatal(err)
	}
	js, err := static.ReadFile("static/status.js")
	if err != nil {
		t.Fatal(err)
	}
	ids := regexp.MustCompile(`\$\("([a-z-]+)"\)`).FindAllStringSubmatch(string(js), -1)
	if len(ids) < 10 {
		t.Fatalf("found %d element ids in the script", len(ids))
	}
	for _, m := range ids {
		if !strings.Contains(string(page), `id="`+m[1]+`"`) {
			t.Errorf("the script uses #%s, which the page lacks", m[1])
		}
	}
}

func TestHandlerStatusJSON(t *testing.T) {
	h := Handler(&fakeSource{})
	w := get(t, h, "GET", "/api/status")
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("GET /api/status: %d %s", w.Code, w.Header().Get("Content-Type"))
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(w.Body.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if got, want := strings.Join(keys, " "), "logs progress scheduler stream_next tasks time workers"; got != want {
		t.Errorf("fields: %s, want %s", got, want)
	}
	var workers []map[string]any
	if err := json.Unmarshal(raw["workers"], &workers); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"address", "state", "threads", "memory_limit", "managed", "unmanaged", "spilled",
		"processing", "in_memory", "last_seen"} {
		if _, ok := workers[0][f]; !ok {
			t.Errorf("worker has no field %q: %v", f, workers[0])
		}
	}
	var st Status
	if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	want := (&fakeSource{}).Snapshot()
	if st.Workers[1].Name != want.Workers[1].Name || !st.Time.Equal(want.Time) || st.Progress[1] != want.Progress[1] ||
		st.Tasks["memory"] != 3 || st.Logs[1].Message != want.Logs[1].Message {
		t.Errorf("decoded %+v\nwant %+v", st, want)
	}
}

func TestHandlerTasks(t *testing.T) {
	src := &fakeSource{}
	h := Handler(src)
	var ts TaskStream
	w := get(t, h, "GET", "/api/tasks?since=1&limit=50")
	if w.Code != http.StatusOK {
		t.Fatalf("GET /api/tasks: %d %s", w.Code, w.Body)
	}
	if err := json.Unmarshal(w.Body.Bytes(), &ts); err != nil {
		t.Fatal(err)
	}
	if len(ts.Tasks) != 2 || ts.Tasks[0].Key != "inc-1" || ts.Next != 3 || ts.Tasks[1].Error != "boom" {
		t.Errorf("since=1: %+v", ts)
	}
	get(t, h, "GET", "/api/tasks")
	get(t, h, "GET", "/api/tasks?limit=1000000")
	if want := []uint64{1, 0, 0}; !slices.Equal(src.since, want) {
		t.Errorf("since passed: %v, want %v", src.since, want)
	}
	if want := []int{50, defaultTaskLimit, maxTaskLimit}; !slices.Equal(src.limit, want) {
		t.Errorf("limits passed: %v, want %v", src.limit, want)
	}
	for _, q := range []string{"since=-1", "since=x", "limit=0", "limit=x"} {
		if w := get(t, h, "GET", "/api/tasks?"+q); w.Code != http.StatusBadRequest ||
			!strings.Contains(w.Body.String(), strings.Split(q, "=")[0]) {
			t.Errorf("GET /api/tasks?%s: %d %q, want 400 naming the parameter", q, w.Code, w.Body)
		}
	}
}

// TestPageRenders runs the page's script in Node with a small stand-in
// for the browser's DOM, against a served dashboard, and checks what it
// drew. A browser test would be better; this one needs only Node.
func TestPageRenders(t *testing.T) {
	node := lookNode(t)
	srv := httptest.NewServer(Handler(&fakeSource{}))
	defer srv.Close()
	out := runNode(t, node, "testdata/dom.js", srv.URL+"/status")
	for _, want := range []string{
		"#scheduler-address: 127.0.0.1:8786",
		"#summary-workers: 2",
		"#summary-threads: 4",
		"127.0.0.1:40001", "127.0.0.1:40002",
		"gpu-<b>1</b>",              // as text, not markup
		"<script>alert(1)</script>", // as text
		"data-prefix=inc", "data-prefix=fail",
		"3 / 4", "0 / 1 · 1 erred",
		"rect fail-0", // a bar of the task stream, titled with its key
		"#connection: live",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("rendered page lacks %q", want)
		}
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("rendered:\n%s", out)
	}
}

// TestPageDisconnected checks that the page says when the scheduler is
// gone.
func TestPageDisconnected(t *testing.T) {
	node := lookNode(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/") {
			http.Error(w, "gone", http.StatusBadGateway)
			return
		}
		Handler(&fakeSource{}).ServeHTTP(w, r)
	}))
	defer srv.Close()
	out := runNode(t, node, "testdata/dom.js", srv.URL+"/")
	if !strings.Contains(out, "#connection: disconnected") {
		t.Errorf("rendered:\n%s\nwant the connection shown as disconnected", out)
	}
}

func lookNode(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"node", "nodejs"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("node is not installed: the page's script is not run")
	return ""
}

func runNode(t *testing.T, node, script, url string) string {
	t.Helper()
	cmd := exec.Command(node, script, url)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s %s: %v\n%s", script, url, err, out)
	}
	return string(out)
}
