package scheduler_test

import (
	"fmt"
	"time"

	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/scheduler"
)

// Driving the state machine by hand, as an executor does.
func Example() {
	s := scheduler.New(scheduler.Config{})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) scheduler.Meta { return scheduler.Meta{Time: now.Add(d)} }

	s.Handle(&scheduler.WorkerAdded{Meta: at(0), Worker: scheduler.WorkerInfo{Name: "w1", Threads: 1}})

	g, _ := graph.NewFromTasks(
		&graph.Task{Key: "load", Op: "myapp.load"},
		&graph.Task{Key: "clean", Op: "myapp.clean", Deps: []graph.Key{"load"}},
	)
	show := func(ins []scheduler.Instruction) {
		for _, in := range ins {
			switch in := in.(type) {
			case *scheduler.Run:
				fmt.Printf("run %s on %s\n", in.Task.Key, in.Worker)
			case *scheduler.Release:
				fmt.Printf("release %s on %v\n", in.Key, in.Workers)
			case *scheduler.ReportResult:
				fmt.Printf("tell %s: %s is ready\n", in.Client, in.Key)
			}
		}
	}
	show(s.Handle(&scheduler.GraphSubmitted{Meta: at(1), Client: "c", Graph: g, Keys: []graph.Key{"clean"}}))
	show(s.Handle(&scheduler.TaskFinished{Meta: at(2), Key: "load", Worker: "w1", Size: 1 << 20}))
	show(s.Handle(&scheduler.TaskFinished{Meta: at(3), Key: "clean", Worker: "w1", Size: 1 << 10}))

	for _, t := range s.Story("load") {
		fmt.Printf("%s: %s -> %s (%s)\n", t.Key, t.From, t.To, t.Cause)
	}
	// Output:
	// run load on w1
	// run clean on w1
	// tell c: clean is ready
	// release load on [w1]
	// load: released -> waiting (graph-submitted)
	// load: waiting -> queued (graph-submitted)
	// load: queued -> processing (graph-submitted)
	// load: processing -> memory (task-finished)
	// load: memory -> released (task-finished)
}
