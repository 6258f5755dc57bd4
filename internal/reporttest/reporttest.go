// Package reporttest opens performance reports (files written by
// dashboard.WriteReport) in a headless Chromium for tests: it shows
// their pages one by one and checks that they loaded nothing but the
// file itself. (dashboard.ReadReport reads back the data of one.)
package reporttest

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/shoal-data/shoal/internal/browsertest"
)

// Report is a report open in a page of the browser.
type Report struct {
	*browsertest.Page
	url string
}

// Open opens the report in the file path (absolute) in a new page of b
// and waits for its summary to be drawn.
func Open(t testing.TB, b *browsertest.Browser, path string) *Report {
	t.Helper()
	u := (&url.URL{Scheme: "file", Path: path}).String()
	r := &Report{Page: b.NewPage(t), url: u}
	r.Navigate(u)
	r.WaitFor("the report's summary", `document.body.dataset.page === "report" && Number(document.body.dataset.rendered) >= 1`)
	return r
}

// Show shows the page of the report named by fragment (such as
// "status", or "worker?name=..."), as a link to it would, and waits for
// it to be drawn.
func (r *Report) Show(fragment string) {
	name, _, _ := strings.Cut(fragment, "?")
	r.Run(fmt.Sprintf(`window.location.hash = %q`, "#"+fragment))
	err := r.Poll(fmt.Sprintf(`document.body.dataset.page === %q && Number(document.body.dataset.rendered) >= 1`, name))
	if err != nil {
		r.Fatalf("page %s not drawn: %v; the page's problems: %v", fragment, err, r.Problems())
	}
}

// Offline fails the test for every request the page made but for the
// report's own file.
func (r *Report) Offline() {
	for _, u := range r.Requests() {
		if base, _, _ := strings.Cut(u, "#"); base != r.url {
			r.Errorf("the report asked for %s", u)
		}
	}
}
