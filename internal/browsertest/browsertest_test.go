package browsertest_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/shoal-data/shoal/internal/browsertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// pages are what the test server serves: each a page with one kind of
// problem, or none.
var pages = map[string]string{
	"/ok": `<!doctype html><title>ok</title><body><p id="p">hello</p>
<script src="count.js"></script>`,
	"/count.js": `setTimeout(() => { document.body.dataset.rendered = 1; }, 10);
setTimeout(() => { document.body.dataset.rendered = 2; }, 50);`,
	"/console":    `<!doctype html><body><script src="console.js"></script>`,
	"/console.js": `console.error("something", "bad", 42);`,
	"/throw":      `<!doctype html><body><script src="throw.js"></script>`,
	"/throw.js":   `throw new TypeError("no such thing");`,
	"/missing":    `<!doctype html><body><img src="nothing.png" alt=""></body>`,
	"/inline":     `<!doctype html><body><script>document.title = "inline";</script></body>`,
}

func server(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Security-Policy", "default-src 'self'")
		if strings.HasSuffix(r.URL.Path, ".js") {
			w.Header().Set("Content-Type", "text/javascript")
		} else {
			w.Header().Set("Content-Type", "text/html")
		}
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestProblems(t *testing.T) {
	srv := server(t)
	b := browsertest.New(t)
	for _, tc := range []struct {
		path, kind, text string
	}{
		{"/ok", "", ""},
		{"/console", "console", "something bad 42"},
		{"/throw", "exception", "TypeError: no such thing"},
		{"/missing", "network", "404"},
		{"/inline", "log", "Content Security Policy"},
	} {
		t.Run(tc.path[1:], func(t *testing.T) {
			p := b.NewPage(t)
			p.Navigate(srv.URL + tc.path)
			if tc.kind == "" {
				p.WaitRendered(2)
				if got := browsertest.Eval[string](p, `document.getElementById("p").textContent`); got != "hello" {
					t.Errorf("text %q", got)
				}
				p.NoErrors()
				return
			}
			// The problems of these pages come before their load
			// event, which Navigate waited for.
			found := false
			for _, pr := range p.Problems() {
				if pr.Kind == tc.kind && strings.Contains(pr.Text, tc.text) {
					found = true
				}
			}
			if !found {
				t.Errorf("problems %v, want a %s problem with %q", p.Problems(), tc.kind, tc.text)
			}
		})
	}
}

func TestScreenshot(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(browsertest.EnvArtifacts, dir)
	srv := server(t)
	b := browsertest.New(t)
	p := b.NewPage(t)
	p.Navigate(srv.URL + "/ok")
	path := p.Screenshot("check")
	if filepath.Dir(path) != dir {
		t.Fatalf("screenshot at %q, want in %s", path, dir)
	}
	png, err := os.ReadFile(path)
	if err != nil || !strings.HasPrefix(string(png), "\x89PNG") {
		t.Fatalf("screenshot %s: %v, %d bytes", path, err, len(png))
	}
}

func TestMissingBrowser(t *testing.T) {
	t.Setenv(browsertest.EnvChromium, "/nonexistent/chromium")
	t.Setenv(browsertest.EnvRequire, "")
	if _, err := browsertest.Find(); err == nil || !strings.Contains(err.Error(), "/nonexistent/chromium") {
		t.Errorf("Find with $CHROMIUM missing: %v", err)
	}
}

func TestBeforeScripts(t *testing.T) {
	srv := server(t)
	b := browsertest.New(t)
	p := b.NewPage(t)
	p.BeforeScripts(`window.before = document.scripts.length;`)
	p.Navigate(srv.URL + "/ok")
	p.WaitRendered(2)
	if n := browsertest.Eval[int](p, `window.before`); n != 0 {
		t.Errorf("the script ran after %d of the page's", n)
	}
	p.NoErrors()
}
