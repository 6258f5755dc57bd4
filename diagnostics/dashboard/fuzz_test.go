package dashboard

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// fuzzPaths are the dashboard's endpoints that read parameters, and its
// pages; the fuzzer picks one by number.
var fuzzPaths = []string{"/api/tasks", "/api/task-window", "/api/worker", "/api/logs", "/api/profile",
	"/api/profile.pb.gz", "/api/events", "/api/status", "/api/alerts", "/", "/workers", "/static/"}

// FuzzHandler sends requests with arbitrary query strings (and paths) to
// the dashboard of a fake cluster: each is answered, with what was asked
// or with 400 naming the parameter at fault, never a panic or a 500 (the
// fake source fails nothing); what an endpoint answers with 200 is JSON.
func FuzzHandler(f *testing.F) {
	for i, q := range []string{"since=1&limit=50", "window=5m&bars=10", "name=" + w1, "level=WARN&limit=3&source=scheduler",
		"last=5m", "start=2025-01-02T15:00:00Z&stop=2025-01-02T15:30:00Z", "topics=status,task-window,worker&window=300&name=" + w1} {
		f.Add(uint8(i), q, "")
	}
	for _, target := range []string{"/api/tasks?since=-1", "/api/task-window?window=NaN", "/api/task-window?bars=many",
		"/api/logs?level=LOUD", "/api/profile?last=5m&start=2025-01-02T15:00:00Z", "/api/events?topics=status,nothing",
		"/api/events?topics=worker", "/api/profile?stop=2025-13-01T00:00:00Z"} {
		path, q, _ := strings.Cut(target, "?")
		for i, p := range fuzzPaths {
			if p == path {
				f.Add(uint8(i), q, "")
			}
		}
	}
	f.Add(uint8(11), "", "app.js")
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the event streams end after their first events
	f.Fuzz(func(t *testing.T, pick uint8, query, suffix string) {
		target := fuzzPaths[int(pick)%len(fuzzPaths)] + suffix
		u, err := url.Parse(target)
		if err != nil || u.Host != "" || u.Scheme != "" {
			return
		}
		u.RawQuery = query
		h := Handler(newFake(), withClock(fixedNow), WithContext(ctx))
		req := httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx)
		req.URL = u
		req.RequestURI = u.RequestURI()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		switch {
		case w.Code == http.StatusInternalServerError:
			t.Errorf("GET %s: %d %s", u, w.Code, w.Body)
		case w.Code == http.StatusBadRequest && strings.HasPrefix(u.Path, "/api/") && !strings.Contains(w.Body.String(), "="):
			t.Errorf("GET %s: 400 %q names no parameter", u, w.Body)
		case w.Code == http.StatusOK && strings.HasPrefix(u.Path, "/api/") && w.Header().Get("Content-Type") == "application/json" &&
			!json.Valid(w.Body.Bytes()):
			t.Errorf("GET %s: not JSON: %q", u, w.Body)
		}
	})
}
