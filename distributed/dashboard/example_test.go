package dashboard_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/distributed/dashboard"
)

// hubSource shows what a Recorder made of a hub's events. A scheduler
// adds its workers, task counts and logs.
type hubSource struct{ rec *dashboard.Recorder }

func (s hubSource) Snapshot() *dashboard.Status {
	return &dashboard.Status{Time: time.Now(), Progress: s.rec.Progress(), StreamNext: s.rec.Count()}
}

func (s hubSource) TaskStream(since uint64, limit int) *dashboard.TaskStream {
	return s.rec.TaskStream(since, limit)
}

// The dashboard of the events of a diagnostics.Hub: a task ran on a
// worker, and the task stream shows it.
func ExampleHandler() {
	hub := diagnostics.NewHub()
	defer hub.Close()
	rec := dashboard.NewRecorder(0)
	sub := hub.Subscribe(rec.Record)

	start := time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC)
	hub.Publish(
		diagnostics.Event{Kind: diagnostics.TaskTransition, Key: "inc-1", From: "released", To: "waiting"},
		diagnostics.Event{Kind: diagnostics.TaskTransition, Key: "inc-1", From: "waiting", To: "processing"},
		diagnostics.Event{Kind: diagnostics.TaskTransition, Key: "inc-1", From: "processing", To: "memory",
			Worker: "127.0.0.1:40001", Start: start, Duration: 250 * time.Millisecond},
	)
	sub.Flush()

	srv := httptest.NewServer(dashboard.Handler(hubSource{rec}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/tasks?since=0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(string(body))
	fmt.Printf("%+v\n", rec.Progress())
	// Output:
	// {"tasks":[{"seq":1,"worker":"127.0.0.1:40001","key":"inc-1","prefix":"inc","start":"2025-01-02T15:04:05Z","stop":"2025-01-02T15:04:05.25Z","state":"memory"}],"next":1,"missed":0}
	// [{Prefix:inc Total:1 Done:1 Memory:1 Erred:0 Processing:0}]
}
