// Package browsertest runs web pages in a real headless Chromium for
// tests: it finds and starts the browser, opens pages in tabs, collects
// what went wrong in them (console errors, uncaught exceptions, failed
// requests), waits for a page to be drawn by polling in the page (never
// by sleeping), evaluates JavaScript, and saves a full-page screenshot
// when a check fails.
//
// A test starts one browser and opens a page per check:
//
//	b := browsertest.New(t)          // skips the test when there is no Chromium
//	p := b.NewPage(t)
//	p.Navigate(srv.URL + "/status")
//	p.WaitRendered(1)                // body[data-rendered] >= 1
//	n := browsertest.Eval[int](p, `document.querySelectorAll("#workers tbody tr").length`)
//	if n != 2 {
//		p.Errorf("%d workers", n)   // and a screenshot in $SHOAL_TEST_ARTIFACTS
//	}
//	p.NoErrors()
//
// Chromium is $CHROMIUM, /usr/bin/chromium or the first of chromium,
// chromium-browser, google-chrome and headless-shell on $PATH. Without one
// the test is skipped, unless SHOAL_REQUIRE_CHROMIUM=1 (as on CI): then it
// fails. The browser runs headless with a user data directory of its own
// and without any of its background network traffic, and it stops, with
// every goroutine of the harness, when the test that started it ends.
package browsertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Environment variables read by the harness.
const (
	// EnvChromium names the browser to run.
	EnvChromium = "CHROMIUM"
	// EnvRequire set to 1 makes a missing browser fail the test instead
	// of skipping it.
	EnvRequire = "SHOAL_REQUIRE_CHROMIUM"
	// EnvArtifacts is the directory of the screenshots of failed checks;
	// by default shoal-test-artifacts under os.TempDir().
	EnvArtifacts = "SHOAL_TEST_ARTIFACTS"
)

// DefaultTimeout is how long a navigation or a wait may take by default.
const DefaultTimeout = 20 * time.Second

// Browser is a headless Chromium, running until the test that started it
// ends.
type Browser struct {
	ctx     context.Context // the browser's chromedp context
	timeout time.Duration
	width   int
	height  int
	shots   atomic.Int64 // screenshots taken, to number their files
}

// Option configures a Browser.
type Option func(*Browser)

// WithTimeout sets how long a navigation or a wait may take
// (DefaultTimeout by default).
func WithTimeout(d time.Duration) Option { return func(b *Browser) { b.timeout = d } }

// WithWindowSize sets the size of the browser's window (1400x1000 by
// default): the viewport of every page and so the width pages lay out in.
func WithWindowSize(width, height int) Option {
	return func(b *Browser) { b.width, b.height = width, height }
}

// Find returns the path of the Chromium to run, or why there is none.
func Find() (string, error) {
	if p := os.Getenv(EnvChromium); p != "" {
		path, err := exec.LookPath(p)
		if err != nil {
			return "", fmt.Errorf("$%s=%s: %w", EnvChromium, p, err)
		}
		return path, nil
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium", nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Chromium: not at /usr/bin/chromium, none on $PATH and $" + EnvChromium + " not set")
}

// New starts a headless Chromium for the test t and stops it when t ends.
// When there is no Chromium it skips t, or fails it when
// SHOAL_REQUIRE_CHROMIUM=1.
func New(t testing.TB, opts ...Option) *Browser {
	t.Helper()
	path, err := Find()
	if err != nil {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("browsertest: %v (and %s=1)", err, EnvRequire)
		}
		t.Skipf("browsertest: %v; set %s=1 to fail instead", err, EnvRequire)
	}
	b := &Browser{timeout: DefaultTimeout, width: 1400, height: 1000}
	for _, o := range opts {
		o(b)
	}
	dir := t.TempDir() // removed after the browser stopped: cleanups run last in, first out
	flags := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(dir),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.WindowSize(b.width, b.height),
		// No traffic of the browser's own: on a closed network it floods
		// the log with refused connections, and a test must not depend
		// on the network.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-pings", true),
	)
	actx, acancel := chromedp.NewExecAllocator(context.Background(), flags...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithErrorf(func(format string, args ...any) {
		t.Logf("browsertest: chromedp: "+format, args...)
	}))
	t.Cleanup(func() {
		cancel()  // closes the browser and waits for it
		acancel() // and for the allocator's goroutines
	})
	// The first Run starts the browser, with the lifetime of ctx: no
	// timeout on it, or the timeout would stop the browser.
	start := time.Now()
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("browsertest: start %s: %v", path, err)
	}
	t.Logf("browsertest: %s started in %v", path, time.Since(start).Round(time.Millisecond))
	b.ctx = ctx
	return b
}

// Problem is something that went wrong in a page: an error written to the
// console, an exception nothing caught, an error of the browser's (such
// as a script or style the page's Content-Security-Policy refused), or a
// request that failed or was answered with a status >= 400. Requests the
// page cancelled (it went elsewhere, or closed a stream) and the browser's
// own request for /favicon.ico are none.
type Problem struct {
	Kind string // "console", "exception", "log" (the browser's own, as a refused script) or "network"
	Text string
	URL  string // where, when known
}

func (p Problem) String() string {
	if p.URL == "" {
		return p.Kind + ": " + p.Text
	}
	return p.Kind + ": " + p.Text + " (" + p.URL + ")"
}

// Page is a tab of the browser, open until the test that opened it ends.
type Page struct {
	t       testing.TB
	b       *Browser
	ctx     context.Context
	timeout time.Duration

	mu       sync.Mutex
	problems []Problem
	requests map[network.RequestID]string // URL of each request, for the failures
	urls     []string                     // of every request, in order
	shot     bool                         // a screenshot was taken for a failure
}

// NewPage opens a tab for the test t (which may be a subtest of the
// browser's) and closes it when t ends; if t failed without a screenshot
// of the page, one is taken first.
func (b *Browser) NewPage(t testing.TB) *Page {
	t.Helper()
	p := &Page{t: t, b: b, timeout: b.timeout, requests: map[network.RequestID]string{}}
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithListener(p.listen))
	p.ctx = ctx
	t.Cleanup(func() {
		if t.Failed() && !p.shot {
			p.screenshot("failed")
		}
		cancel()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("browsertest: open a tab: %v", err)
	}
	return p
}

// listen collects the problems of the page. It runs on chromedp's reading
// goroutine: it must be quick.
func (p *Page) listen(ev any) {
	var pr Problem
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if e.Type != runtime.ConsoleAPICalledTypeError && e.Type != runtime.ConsoleAPICalledTypeAssert {
			return
		}
		var parts []string
		for _, a := range e.Args {
			parts = append(parts, remoteText(a))
		}
		pr = Problem{Kind: "console", Text: strings.Join(parts, " ")}
		if st := e.StackTrace; st != nil && len(st.CallFrames) > 0 {
			f := st.CallFrames[0]
			pr.URL = fmt.Sprintf("%s:%d:%d", f.URL, f.LineNumber+1, f.ColumnNumber+1)
		}
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		text := d.Text
		if d.Exception != nil {
			desc, _, _ := strings.Cut(remoteText(d.Exception), "\n    at ")
			text += " " + desc
		}
		pr = Problem{Kind: "exception", Text: text, URL: fmt.Sprintf("%s:%d:%d", d.URL, d.LineNumber+1, d.ColumnNumber+1)}
	case *log.EventEntryAdded:
		// The network's entries say again what the network events
		// below say.
		if e.Entry.Level != log.EntryLevelError || e.Entry.Source == log.EntrySourceNetwork {
			return
		}
		pr = Problem{Kind: "log", Text: string(e.Entry.Source) + ": " + e.Entry.Text, URL: e.Entry.URL}
	case *network.EventRequestWillBeSent:
		p.mu.Lock()
		p.requests[e.RequestID] = e.Request.URL
		p.urls = append(p.urls, e.Request.URL)
		p.mu.Unlock()
		return
	case *network.EventResponseReceived:
		if e.Response.Status < 400 || isFavicon(e.Response.URL) {
			return
		}
		pr = Problem{Kind: "network", Text: fmt.Sprintf("%d %s", e.Response.Status, e.Response.StatusText),
			URL: e.Response.URL}
	case *network.EventLoadingFailed:
		if e.Canceled {
			return // the page went elsewhere, or closed a stream it no longer needs
		}
		p.mu.Lock()
		url := p.requests[e.RequestID]
		p.mu.Unlock()
		if isFavicon(url) {
			return
		}
		text := e.ErrorText
		if e.BlockedReason != "" {
			text += " (blocked: " + string(e.BlockedReason) + ")"
		}
		pr = Problem{Kind: "network", Text: text, URL: url}
	default:
		return
	}
	p.mu.Lock()
	p.problems = append(p.problems, pr)
	p.mu.Unlock()
}

// isFavicon says whether url is the icon a browser asks every site for,
// whether its pages name one or not: no page's problem.
func isFavicon(url string) bool {
	url, _, _ = strings.Cut(url, "?")
	return strings.HasSuffix(url, "/favicon.ico")
}

// remoteText is the text of a value the page logged.
func remoteText(o *runtime.RemoteObject) string {
	if o == nil {
		return "null"
	}
	if o.Type == runtime.RemoteObjectTypeString {
		var s string
		if err := json.Unmarshal([]byte(o.Value), &s); err == nil {
			return s
		}
	}
	if o.Description != "" {
		return o.Description
	}
	if o.UnserializableValue != "" {
		return string(o.UnserializableValue)
	}
	return string(o.Value)
}

// Problems returns what went wrong in the page so far.
func (p *Page) Problems() []Problem {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Problem(nil), p.problems...)
}

// Requests returns the URL of every request the page made so far (and
// of the document itself), in order: a page that must load nothing from
// elsewhere, such as a file opened from disk, is checked with it.
func (p *Page) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.urls...)
}

// NoErrors fails the test for every problem of the page so far, with a
// screenshot when there is one.
func (p *Page) NoErrors() {
	p.t.Helper()
	probs := p.Problems()
	if len(probs) == 0 {
		return
	}
	var b strings.Builder
	for _, pr := range probs {
		b.WriteString("\n\t" + pr.String())
	}
	p.Errorf("%d problems in the page:%s", len(probs), b.String())
}

// Context is the page's chromedp context, to run any chromedp action on
// the page.
func (p *Page) Context() context.Context { return p.ctx }

// BeforeScripts has the page run the JavaScript source in every document
// it loads from now on, before the document's own scripts (and whatever
// its Content-Security-Policy says): to stand in for something a page
// expects, or to watch it.
func (p *Page) BeforeScripts(source string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, p.timeout)
	defer cancel()
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: source})
		return err
	}))
	if err != nil {
		p.Fatalf("add a script to the page: %v", err)
	}
}

// Navigate loads url in the page and waits for its load event.
func (p *Page) Navigate(url string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, p.timeout)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		p.Fatalf("navigate to %s: %v", url, err)
	}
}

// WaitFor waits until the JavaScript expression is truthy in the page,
// polling it at every animation frame; on timeout it fails the test with
// a screenshot. what says what is awaited, for the message.
func (p *Page) WaitFor(what, expr string) {
	p.t.Helper()
	if err := p.Poll(expr); err != nil {
		p.Fatalf("waiting for %s (%s): %v", what, expr, err)
	}
}

// Poll waits until the JavaScript expression is truthy in the page and
// returns an error when it did not become so in time.
func (p *Page) Poll(expr string) error {
	ctx, cancel := context.WithTimeout(p.ctx, p.timeout+time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(p.timeout)))
	return err
}

// WaitRendered waits until the page says it rendered at least n times:
// document.body.dataset.rendered >= n. Pages under test set the counter
// after each time they draw what they got.
func (p *Page) WaitRendered(n int) {
	p.t.Helper()
	p.WaitFor(fmt.Sprintf("render %d", n), fmt.Sprintf("Number(document.body && document.body.dataset.rendered) >= %d", n))
}

// Rendered returns the page's render counter.
func (p *Page) Rendered() int {
	p.t.Helper()
	return Eval[int](p, "Number(document.body && document.body.dataset.rendered) || 0")
}

// Eval evaluates the JavaScript expression in the page and decodes its
// value (JSON) into a T; an error fails the test.
func Eval[T any](p *Page, expr string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, p.timeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		p.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// Run evaluates the JavaScript expression for its effects; an error fails
// the test.
func (p *Page) Run(expr string) {
	p.t.Helper()
	Eval[chromedp.Void](p, expr)
}

// Errorf fails the test with a screenshot of the page.
func (p *Page) Errorf(format string, args ...any) {
	p.t.Helper()
	p.t.Errorf(format+"%s", append(args, p.shotNote())...)
}

// Fatalf fails the test with a screenshot of the page and stops it.
func (p *Page) Fatalf(format string, args ...any) {
	p.t.Helper()
	p.t.Fatalf(format+"%s", append(args, p.shotNote())...)
}

func (p *Page) shotNote() string {
	path := p.screenshot("failed")
	if path == "" {
		return ""
	}
	return "\n\tscreenshot: " + path
}

// Screenshot saves a full-page PNG of the page into the artifacts
// directory and returns its path ("" when it could not: the test log says
// why).
func (p *Page) Screenshot(name string) string {
	p.t.Helper()
	return p.screenshot(name)
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func (p *Page) screenshot(name string) string {
	p.mu.Lock()
	p.shot = true
	p.mu.Unlock()
	dir := os.Getenv(EnvArtifacts)
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "shoal-test-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		p.t.Logf("browsertest: no screenshot: %v", err)
		return ""
	}
	ctx, cancel := context.WithTimeout(p.ctx, p.timeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Logf("browsertest: no screenshot: %v", err)
		return ""
	}
	file := fmt.Sprintf("%s-%s-%d.png", unsafeName.ReplaceAllString(p.t.Name(), "_"),
		unsafeName.ReplaceAllString(name, "_"), p.b.shots.Add(1))
	path := filepath.Join(dir, file)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Logf("browsertest: no screenshot: %v", err)
		return ""
	}
	p.t.Logf("browsertest: screenshot of %s: %s", p.location(), path)
	return path
}

func (p *Page) location() string {
	ctx, cancel := context.WithTimeout(p.ctx, 2*time.Second)
	defer cancel()
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		return "the page"
	}
	return loc
}
