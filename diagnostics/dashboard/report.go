package dashboard

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
)

// reportPage is the summary of a report, first of its pages.
var reportPage = pageInfo{"report", "Performance report", "Report"}

// reportScripts are the scripts of every page, in the order the pages
// load them; offline.js reads the data the file carries.
var reportScripts = []string{"util.js", "offline.js", "data.js", "app.js", "charts.js", "flame.js"}

// WriteReport writes snap as a performance report: one HTML file that
// shows the pages of the dashboard (and a summary of the report's period
// first, when snap has one) from the data it carries, with its styles and
// scripts, and loads nothing, so that it opens from disk, offline, and
// can be mailed. See Snapshot for what the pages show of it.
func WriteReport(w io.Writer, snap *Snapshot) error {
	data, err := json.Marshal(snap) // escapes <, > and &: safe in a <script>
	if err != nil {
		return fmt.Errorf("report: encode its data: %w", err)
	}
	t, err := template.ParseFS(static, "static/pages/file.html", "static/pages/defs.html")
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	css, err := static.ReadFile("static/dashboard.css")
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	type page struct {
		Name, Title string
		Content     template.HTML
	}
	pages := []pageInfo{reportPage}
	if snap.Report == nil {
		pages = nil
	}
	pages = append(pages, pageList...)
	var (
		nav     []pageInfo
		content []page
		scripts []template.JS
	)
	for _, f := range reportScripts {
		b, err := static.ReadFile("static/" + f)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		scripts = append(scripts, template.JS(b))
	}
	var js bytes.Buffer
	js.WriteString("Shoal.pageScripts = {};\n")
	for _, p := range pages {
		if p.Nav != "" {
			nav = append(nav, p)
		}
		pt, err := template.ParseFS(static, "static/pages/"+p.Name+".html")
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		var b bytes.Buffer
		if err := pt.ExecuteTemplate(&b, "content", nil); err != nil {
			return fmt.Errorf("report: page %s: %w", p.Name, err)
		}
		title := pageTitle(p)
		if p == reportPage {
			title = p.Title + " · Shoal"
		}
		content = append(content, page{Name: p.Name, Title: title, Content: template.HTML(b.String())})
		src, err := static.ReadFile("static/" + p.Name + ".js")
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		fmt.Fprintf(&js, "Shoal.pageScripts[%q] = function () {\n%s\n};\n", p.Name, src)
	}
	scripts = append(scripts, template.JS(js.String()))
	router, err := static.ReadFile("static/file.js")
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	scripts = append(scripts, template.JS(router))
	err = t.ExecuteTemplate(w, "file.html", map[string]any{
		"Title": "Shoal performance report", "CSS": template.CSS(css), "Nav": nav, "Pages": content,
		"Data": template.JS(data), "Scripts": scripts,
	})
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// SaveReport writes the report of snap (see WriteReport) to the file
// path, whole or not at all: a file of that name is replaced once the
// report is written.
func SaveReport(path string, snap *Snapshot) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("report %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	w := bufio.NewWriter(f)
	if err := WriteReport(w, snap); err != nil {
		return fmt.Errorf("report %s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("report %s: %w", path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("report %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("report %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("report %s: %w", path, err)
	}
	return nil
}

// offlinePages are the pages of FileHandler, by name.
var offlinePages = sync.OnceValues(func() (map[string][]byte, error) { return renderPages(true) })

// FileHandler serves the pages of the dashboard from snap, for the
// post-mortem of a cluster that is gone (shoal dashboard --dump): the
// same pages as Handler's, which read snap's JSON at /snapshot.json
// instead of the scheduler's endpoints (see Snapshot for what they show
// of it). It answers GET only.
func FileHandler(snap *Snapshot) http.Handler {
	data, err := json.Marshal(snap)
	mux := http.NewServeMux()
	page := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			pages, err := offlinePages()
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write(pages[name])
		}
	}
	mux.HandleFunc("GET /{$}", page("status"))
	for _, p := range pageList {
		mux.HandleFunc("GET /"+p.Name, page(p.Name))
	}
	mux.HandleFunc("GET /snapshot.json", func(w http.ResponseWriter, r *http.Request) {
		if err != nil {
			http.Error(w, "encode the snapshot: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(data)
	})
	mux.HandleFunc("GET /static/", serveStatic)
	mux.HandleFunc("GET /health", health)
	return headers(mux)
}

// ReadReport reads back the snapshot a report written by WriteReport
// carries.
func ReadReport(r io.Reader) (*Snapshot, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read a report: %w", err)
	}
	const open = `<script type="application/json" id="shoal-snapshot">`
	_, rest, ok := bytes.Cut(b, []byte(open))
	if !ok {
		return nil, errors.New("read a report: no data in it: not a Shoal performance report")
	}
	data, _, ok := bytes.Cut(rest, []byte("</script>"))
	if !ok {
		return nil, errors.New("read a report: its data does not end")
	}
	var s Snapshot
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("read a report: %w", err)
	}
	return &s, nil
}
