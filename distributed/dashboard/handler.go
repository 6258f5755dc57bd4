package dashboard

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"strconv"
)

//go:embed static
var static embed.FS

// The limits of GET /api/tasks.
const (
	defaultTaskLimit = 2000
	maxTaskLimit     = 20_000
)

// Handler serves the dashboard of src; see the package documentation for
// its pages.
func Handler(src Source) http.Handler {
	files, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	h := &handler{src: src, files: http.FileServerFS(files)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", h.page)
	mux.HandleFunc("GET /status", h.page)
	mux.HandleFunc("GET /api/status", h.status)
	mux.HandleFunc("GET /api/tasks", h.tasks)
	mux.HandleFunc("GET /health", h.health)
	mux.Handle("GET /static/", http.StripPrefix("/static/", h.files))
	return headers(mux)
}

type handler struct {
	src   Source
	files http.Handler
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

func (h *handler) page(w http.ResponseWriter, r *http.Request) {
	b, err := static.ReadFile("static/status.html")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(b)
}

func (h *handler) status(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, h.src.Snapshot())
}

func (h *handler) tasks(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var since uint64
	if s := q.Get("since"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			http.Error(w, fmt.Sprintf("since=%q: want the next of the previous answer, a number >= 0", s),
				http.StatusBadRequest)
			return
		}
		since = n
	}
	limit := defaultTaskLimit
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			http.Error(w, fmt.Sprintf("limit=%q: want a number > 0", s), http.StatusBadRequest)
			return
		}
		limit = min(n, maxTaskLimit)
	}
	writeJSON(w, h.src.TaskStream(since, limit))
}

func (h *handler) health(w http.ResponseWriter, r *http.Request) {
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
