package diagnostics_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/graph"
)

func Example() {
	hub := diagnostics.NewHub()
	defer hub.Close()

	rec := diagnostics.NewRecorder()
	rec.Attach(hub)
	defer rec.Close()

	// An executor publishes what happens to the tasks of a computation.
	t0 := time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC)
	load := graph.NewKey("load", "3fa2c1d0", 0)
	sum := graph.NewKey("sum", "3fa2c1d0")
	hub.Publish(
		diagnostics.Event{Time: t0, Kind: diagnostics.ComputeStarted, Compute: 1,
			Tasks: map[string]int{"load": 1, "sum": 1}},
		diagnostics.Event{Time: t0.Add(250 * time.Millisecond), Kind: diagnostics.TaskTransition,
			Compute: 1, Key: load, Prefix: load.Prefix(), From: "processing", To: "memory",
			Worker: "local-0", Start: t0.Add(50 * time.Millisecond), Duration: 200 * time.Millisecond, Bytes: 4096},
		diagnostics.Event{Time: t0.Add(300 * time.Millisecond), Kind: diagnostics.TaskTransition,
			Compute: 1, Key: sum, Prefix: sum.Prefix(), From: "processing", To: "memory",
			Worker: "local-1", Start: t0.Add(260 * time.Millisecond), Duration: 30 * time.Millisecond, Bytes: 8},
		diagnostics.Event{Time: t0.Add(310 * time.Millisecond), Kind: diagnostics.ComputeFinished, Compute: 1},
	)

	// The task stream: one row per task run.
	for _, t := range rec.TaskStream() {
		fmt.Printf("%-6s %-8s %s  %-5s %5d bytes  %s\n",
			t.Prefix, t.Worker, t.Start.Format("15:04:05.000"), t.Duration, t.Bytes, t.State)
	}
	// Output:
	// load   local-0  15:04:05.050  200ms  4096 bytes  memory
	// sum    local-1  15:04:05.260  30ms      8 bytes  memory
}

func ExampleShowProgress() {
	hub := diagnostics.NewHub()
	defer hub.Close()

	// out could be os.Stderr; on a terminal the bars are redrawn in place.
	var out strings.Builder
	progress := diagnostics.ShowProgress(hub, &out, diagnostics.Width(40))

	t0 := time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC)
	hub.Publish(diagnostics.Event{Time: t0, Kind: diagnostics.ComputeStarted, Compute: 1,
		Tasks: map[string]int{"load": 3, "sum": 1}})
	keys := []graph.Key{
		graph.NewKey("load", "3fa2c1d0", 0), graph.NewKey("load", "3fa2c1d0", 1),
		graph.NewKey("load", "3fa2c1d0", 2), graph.NewKey("sum", "3fa2c1d0"),
	}
	for i, k := range keys {
		hub.Publish(diagnostics.Event{Time: t0.Add(time.Duration(i+1) * 300 * time.Millisecond),
			Kind: diagnostics.TaskTransition, Compute: 1, Key: k, Prefix: k.Prefix(),
			From: "processing", To: "memory"})
	}
	hub.Publish(diagnostics.Event{Time: t0.Add(1200 * time.Millisecond),
		Kind: diagnostics.ComputeFinished, Compute: 1})

	if err := progress.Close(); err != nil {
		fmt.Println(err)
	}
	fmt.Print(out.String())
	fmt.Print(progress.Summary())
	// Output:
	// load  3/3 [============================]
	// sum   1/1 [============================]
	// total 4/4 [=======================] 1.2s
	// compute 1: 4/4 tasks, finished in 1.2s
	//   load  3/3
	//   sum   1/1
}
