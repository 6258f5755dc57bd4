package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/shoal-data/shoal/diagnostics/dashboard"
	"github.com/shoal-data/shoal/diagnostics/dump"
)

// FuzzDumpFile reads arbitrary JSON as a cluster dump the way the shoal
// command does: dump inspect, dump story, dump tasks, and the pages and
// snapshot that dashboard --dump serves. Each ends with its output or an
// error, never a panic.
func FuzzDumpFile(f *testing.F) {
	zb, err := os.ReadFile(testDump(f))
	if err != nil {
		f.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(zb))
	if err != nil {
		f.Fatal(err)
	}
	js, err := io.ReadAll(zr)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(js)
	f.Add(js[:len(js)/2])
	path := filepath.Join(f.TempDir(), "d.json.gz")
	f.Fuzz(func(t *testing.T, js []byte) {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(js)
		zw.Close()
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"inspect", path}, {"story", path, "k", "fail-0"}, {"tasks", path}, {"tasks", path, "--state", "erred"},
		} {
			runDump(args, io.Discard, io.Discard)
		}
		d, err := dump.Read(path)
		if err != nil || d.Dashboard == nil {
			return
		}
		h := dashboard.FileHandler(d.Dashboard)
		for _, target := range []string{"/", "/snapshot.json", "/workers", "/tasks", "/static/offline.js"} {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
			if w.Code == http.StatusInternalServerError {
				t.Errorf("GET %s: %d %s", target, w.Code, w.Body)
			}
		}
	})
}
