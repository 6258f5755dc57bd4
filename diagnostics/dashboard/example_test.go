package dashboard_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/diagnostics/dashboard"
)

// A Recorder turns the events of a diagnostics.Hub into what the
// dashboard shows: a task ran on a worker, and the task stream, its
// window and the progress show it.
func ExampleRecorder() {
	hub := diagnostics.NewHub()
	defer hub.Close()
	rec := dashboard.NewRecorder(0)
	sub := hub.Subscribe(rec.Record)

	start := time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC)
	hub.Publish(
		diagnostics.Event{Kind: diagnostics.ComputeStarted, Compute: 1, Tasks: map[string]int{"inc": 1}},
		diagnostics.Event{Kind: diagnostics.TaskTransition, Compute: 1, Key: "inc-1", From: "released", To: "waiting"},
		diagnostics.Event{Kind: diagnostics.TaskTransition, Compute: 1, Key: "inc-1", From: "waiting", To: "processing"},
		diagnostics.Event{Kind: diagnostics.TaskTransition, Compute: 1, Key: "inc-1", From: "processing", To: "memory",
			Worker: "127.0.0.1:40001", Start: start, Duration: 250 * time.Millisecond},
		diagnostics.Event{Kind: diagnostics.ComputeFinished, Compute: 1, Time: start.Add(time.Second)},
	)
	sub.Flush()

	b, _ := json.Marshal(rec.TaskStream(0, 0))
	fmt.Println(string(b))
	fmt.Printf("%+v\n", rec.Progress())
	w := rec.TaskWindow(start.Add(time.Minute), time.Minute, 100)
	fmt.Println(len(w.Runs), "run in the last minute, on", w.Workers[0].Address)
	c := rec.Computations()[0]
	fmt.Println("computation", c.ID, c.State, c.Progress[0].Done, "of", c.Progress[0].Total)
	// Output:
	// {"tasks":[{"seq":1,"worker":"127.0.0.1:40001","key":"inc-1","prefix":"inc","start":"2025-01-02T15:04:05Z","stop":"2025-01-02T15:04:05.25Z","state":"memory"}],"next":1,"missed":0}
	// [{Prefix:inc Total:1 Done:1 Memory:1 Erred:0 Processing:0}]
	// 1 run in the last minute, on 127.0.0.1:40001
	// computation 1 done 1 of 1
}
