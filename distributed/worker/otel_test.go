package worker

import (
	"fmt"
	"testing"
	"time"

	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/graph"
)

func TestRunInputs(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	task := &graph.Task{Key: "sum-3fa2c1d0", Deps: []graph.Key{"a-3fa2c1d0-0", "a-3fa2c1d0-1", "a-3fa2c1d0-2"}}
	show := func(ins []*wire.OtelTransfer) string {
		s := ""
		for _, in := range ins {
			s += fmt.Sprintf("[%s from %s at %dms for %dms: %d]", in.Key, in.From,
				time.Duration(in.StartUnixNano-t0.UnixNano()).Milliseconds(), time.Duration(in.DurationNanos).Milliseconds(),
				in.Bytes)
		}
		return s
	}
	tests := []struct {
		name string
		on   bool
		run  func(r *runInputs)
		want string
	}{{
		name: "off: nothing recorded",
		run: func(r *runInputs) {
			r.fetchedValue("a-3fa2c1d0-1", "w2", t0, ms(1), 10)
			r.started(task)
		},
	}, {
		name: "the inputs fetched, and the files read from each peer added up",
		on:   true,
		run: func(r *runInputs) {
			r.fetchedValue("a-3fa2c1d0-1", "w2", t0, ms(2), 10)
			r.fetchedValue("other-3fa2c1d0", "w3", t0, ms(2), 99) // not an input
			r.started(task)
			r.readFile(task.Key, "w3", t0.Add(ms(5)), ms(1), 100)
			r.readFile(task.Key, "w4", t0.Add(ms(6)), ms(1), 7)
			r.readFile(task.Key, "w3", t0.Add(ms(4)), ms(3), 50)
			r.readFile("not-running-3fa2c1d0", "w3", t0, ms(1), 1)
		},
		want: "[a-3fa2c1d0-1 from w2 at 0ms for 2ms: 10][ from w3 at 4ms for 4ms: 150][ from w4 at 6ms for 1ms: 7]",
	}, {
		name: "a value dropped is no longer an input",
		on:   true,
		run: func(r *runInputs) {
			r.fetchedValue("a-3fa2c1d0-1", "w2", t0, ms(2), 10)
			r.drop("a-3fa2c1d0-1")
			r.started(task)
		},
	}, {
		name: "a reset forgets the runs",
		on:   true,
		run: func(r *runInputs) {
			r.fetchedValue("a-3fa2c1d0-1", "w2", t0, ms(2), 10)
			r.started(task)
			r.reset()
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r runInputs
			r.setOn(tt.on)
			tt.run(&r)
			if got := show(r.take(task.Key)); got != tt.want {
				t.Errorf("inputs %s, want %s", got, tt.want)
			}
			if got := show(r.take(task.Key)); got != "" {
				t.Errorf("taken twice: %s", got)
			}
		})
	}
}
