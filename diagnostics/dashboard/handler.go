package dashboard

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed static
var static embed.FS

// DefaultInterval is how often the dashboard's streams refresh what they
// show by default; the topics that cost the scheduler more (groups,
// profile, fine metrics, bandwidth) are refreshed five times less often.
const DefaultInterval = time.Second

// Option configures a Handler.
type Option func(*config)

type config struct {
	interval time.Duration
	ctx      context.Context
	// For tests: the ticker of the streams' refreshes, what to call
	// after each refresh of them, the clock and the keep-alive period.
	ticker func(time.Duration) (<-chan time.Time, func())
	ticked func()
	now    func() time.Time
	alive  time.Duration
	retry  time.Duration
}

// WithInterval sets how often the streams of the pages refresh a topic
// (DefaultInterval by default), and so how often the dashboard calls the
// Source for each topic watched.
func WithInterval(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.interval = d
		}
	}
}

// WithContext ends the handler's event streams when ctx ends. An
// http.Server's Shutdown waits for requests to end, and a stream does not
// end of itself: cancel ctx before calling Shutdown (or serve with an
// http.Server.BaseContext that ends).
func WithContext(ctx context.Context) Option {
	return func(c *config) { c.ctx = ctx }
}

// Handler serves the dashboard of src: its pages and their JSON and event
// endpoints; see the package documentation.
func Handler(src Source, opts ...Option) http.Handler {
	return newHandler(src, opts...).root
}

type handler struct {
	src       Source
	hub       *hub
	keepAlive time.Duration
	retry     time.Duration
	done      <-chan struct{} // the end of the handler's context; nil: never
	root      http.Handler
}

func newHandler(src Source, opts ...Option) *handler {
	c := config{interval: DefaultInterval, alive: keepAlive, retry: retry}
	for _, o := range opts {
		o(&c)
	}
	h := &handler{src: src, hub: newHub(src, c.interval), keepAlive: c.alive, retry: c.retry}
	if c.ticker != nil {
		h.hub.ticker = c.ticker
	}
	h.hub.ticked = c.ticked
	if c.now != nil {
		h.hub.now = c.now
	}
	if c.ctx != nil {
		h.done = c.ctx.Done()
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", h.page("status"))
	for _, p := range pageList {
		mux.HandleFunc("GET /"+p.Name, h.page(p.Name))
	}
	for _, t := range topics {
		mux.HandleFunc("GET /api/"+t.name, h.topic(t))
	}
	mux.HandleFunc("GET /api/tasks", h.tasks)
	mux.HandleFunc("GET /api/profile.pb.gz", h.profileData)
	mux.HandleFunc("GET /api/events", h.events)
	mux.HandleFunc("GET /health", health)
	mux.HandleFunc("GET /static/", serveStatic)
	h.root = headers(mux)
	return h
}

// headers sets what every response of the dashboard carries: it loads
// nothing from elsewhere and may not be framed by other sites.
func headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}

// pageInfo is a page of the dashboard.
type pageInfo struct {
	Name  string // its path, without the slash
	Title string
	Nav   string // its entry in the navigation bar; "" for none
}

// pageList are the pages, in the order of the navigation bar.
var pageList = []pageInfo{
	{"status", "Status", "Status"},
	{"workers", "Workers", "Workers"},
	{"worker", "Worker", ""},
	{"system", "System", "System"},
	{"groups", "Task groups", "Groups"},
	{"logs", "Logs", "Logs"},
	{"errors", "Errors", "Errors"},
	{"profile", "Profile", "Profile"},
	{"fine-metrics", "Fine metrics", "Fine metrics"},
	{"bandwidth", "Bandwidth", "Bandwidth"},
	{"shuffles", "Shuffles", "Shuffles"},
}

// renderedPages are the pages as served, by name: built once from the
// templates under static/pages.
var renderedPages = sync.OnceValues(func() (map[string][]byte, error) { return renderPages(false) })

// renderPages builds the pages, which read the data of a file when
// offline (see FileHandler).
func renderPages(offline bool) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, p := range pageList {
		t, err := template.ParseFS(static, "static/pages/layout.html", "static/pages/defs.html",
			"static/pages/"+p.Name+".html")
		if err != nil {
			return nil, err
		}
		current := p.Name
		if p.Name == "worker" {
			current = "workers"
		}
		var b bytes.Buffer
		if err := t.ExecuteTemplate(&b, "layout.html", map[string]any{
			"Page": p, "Title": pageTitle(p), "Current": current, "Nav": pageList, "Offline": offline,
		}); err != nil {
			return nil, fmt.Errorf("page %s: %w", p.Name, err)
		}
		out[p.Name] = b.Bytes()
	}
	return out, nil
}

func pageTitle(p pageInfo) string {
	if p.Name == "status" {
		return "Shoal dashboard"
	}
	return p.Title + " · Shoal dashboard"
}

func (h *handler) page(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		pages, err := renderedPages()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(pages[name])
	}
}

// etags are the entity tags of the static files, by path: a hash of
// their content, which changes only with the program.
var etags = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	fs.WalkDir(static, "static", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := static.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		m[strings.TrimPrefix(path, "static/")] = `"` + hex.EncodeToString(sum[:8]) + `"`
		return nil
	})
	return m
})

var staticFiles = sync.OnceValue(func() http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return http.StripPrefix("/static/", http.FileServerFS(sub))
})

// serveStatic serves the scripts, styles and images of the pages (not
// the templates of the pages themselves).
func serveStatic(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/static/")
	tag, ok := etags()[name]
	if !ok || strings.HasPrefix(name, "pages/") {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("ETag", tag)
	w.Header().Set("Cache-Control", "no-cache")
	staticFiles().ServeHTTP(w, r)
}

// topic serves GET /api/<topic>.
func (h *handler) topic(t *topic) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q, err := t.parse(r.URL.Query())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		v, err := q.fetch(h.src, h.hub.now())
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, v)
	}
}

func writeError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	var nf *notFoundError
	switch {
	case isParamError(err):
		code = http.StatusBadRequest
	case errors.As(err, &nf):
		code = http.StatusNotFound
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Error(w, err.Error(), code)
}

func (h *handler) tasks(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var since uint64
	if s := q.Get("since"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			writeError(w, &paramError{"since", s, "the next of the previous answer, a number >= 0"})
			return
		}
		since = n
	}
	limit, err := intParam(q, "limit", defaultTaskLimit, maxTaskLimit)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, h.src.TaskStream(since, limit))
}

// profileData serves GET /api/profile.pb.gz: the profile of the same
// parameters as /api/profile, for go tool pprof.
func (h *handler) profileData(w http.ResponseWriter, r *http.Request) {
	p, err := readProfileParams(r.URL.Query())
	if err != nil {
		writeError(w, err)
		return
	}
	b, err := h.src.ProfileData(p.resolve(h.hub.now()))
	if err != nil {
		writeError(w, err)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "application/octet-stream")
	hd.Set("Content-Disposition", "attachment; filename=shoal-profile.pb.gz")
	hd.Set("Cache-Control", "no-store")
	hd.Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
}

func health(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprintln(w, "ok")
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b)
}
