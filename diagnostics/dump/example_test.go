package dump_test

import (
	"bytes"
	"fmt"
	"time"

	"github.com/shoal-data/shoal/diagnostics/dump"
)

// A dump is read back whole: here, the story of a task that failed on a
// worker, told by the scheduler and by the worker, and the tasks that
// look stuck.
func Example() {
	t0 := time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC)
	f := &dump.File{Version: dump.Version, Time: t0, Executor: "cluster",
		Scheduler: dump.Scheduler{
			Tasks: []dump.Task{{Key: "parse-3", Op: "parse", State: "erred", Error: "line 7: bad date"}},
			Transitions: []dump.Transition{
				{Time: t0, Key: "parse-3", From: "waiting", To: "processing", Cause: "graph-submitted"},
				{Time: t0.Add(3 * time.Millisecond), Key: "parse-3", From: "processing", To: "erred", Cause: "task-failed"},
			}},
		Workers: []dump.Worker{{Address: "10.0.0.7:4001", State: &dump.WorkerState{Time: t0, Transitions: []dump.Transition{
			{Time: t0.Add(time.Millisecond), Key: "parse-3", From: "ready", To: "executing", Cause: "thread-free",
				Worker: "10.0.0.7:4001"},
			{Time: t0.Add(2 * time.Millisecond), Key: "parse-3", From: "executing", To: "error", Cause: "executed",
				Worker: "10.0.0.7:4001", Error: "line 7: bad date"},
		}}}},
	}
	var buf bytes.Buffer // a file, written by Client.DumpClusterState
	if err := dump.Write(&buf, f); err != nil {
		panic(err)
	}
	back, err := dump.Decode(&buf)
	if err != nil {
		panic(err)
	}
	for _, t := range back.Story("parse-3") {
		where := t.Worker
		if where == "" {
			where = "scheduler"
		}
		fmt.Printf("%s %-13s %s -> %s (%s)", t.Time.Format("05.000"), where, t.From, t.To, t.Cause)
		if t.Error != "" {
			fmt.Print(": ", t.Error)
		}
		fmt.Println()
	}
	fmt.Println(len(back.Stuck(time.Minute)), "stuck")
	// Output:
	// 05.000 scheduler     waiting -> processing (graph-submitted)
	// 05.001 10.0.0.7:4001 ready -> executing (thread-free)
	// 05.002 10.0.0.7:4001 executing -> error (executed): line 7: bad date
	// 05.003 scheduler     processing -> erred (task-failed): line 7: bad date
	// 0 stuck
}
