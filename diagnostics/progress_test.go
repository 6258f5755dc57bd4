package diagnostics

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shoal-data/shoal/graph"
)

// run publishes the events of a computation with the given tasks per
// prefix; finish says how it ends ("" for not at all).
type progressRun struct {
	compute uint64
	tasks   map[string]int
	done    []string // keys reaching a done state, in order, as "to key"
	finish  string   // "ok", an error, or "" for not finished
}

func (r progressRun) events() []Event {
	at := t0
	tick := func() time.Time { at = at.Add(100 * time.Millisecond); return at }
	ev := []Event{{Time: at, Kind: ComputeStarted, Compute: r.compute, Tasks: r.tasks}}
	for _, d := range r.done {
		to, key, _ := strings.Cut(d, " ")
		k := graph.Key(key)
		ev = append(ev,
			Event{Time: tick(), Kind: TaskTransition, Compute: r.compute, Key: k, Prefix: k.Prefix(),
				From: StateWaiting, To: StateProcessing},
			Event{Time: tick(), Kind: TaskTransition, Compute: r.compute, Key: k, Prefix: k.Prefix(),
				From: StateProcessing, To: to},
			Event{Time: tick(), Kind: TaskTransition, Compute: r.compute, Key: k, Prefix: k.Prefix(),
				From: to, To: StateForgotten})
	}
	switch r.finish {
	case "":
	case "ok":
		ev = append(ev, Event{Time: tick(), Kind: ComputeFinished, Compute: r.compute})
	default:
		ev = append(ev, Event{Time: tick(), Kind: ComputeFinished, Compute: r.compute, Err: r.finish})
	}
	return ev
}

func TestProgress(t *testing.T) {
	loadAll := []string{"memory load-3fa2c1d0-0", "memory load-3fa2c1d0-1", "memory load-3fa2c1d0-2"}
	tests := []struct {
		name    string
		runs    []progressRun
		opts    []ProgressOption
		lines   []string // regexps the output must have
		absent  []string // regexps it must not have
		summary string
	}{{
		name: "all done",
		runs: []progressRun{{compute: 1, tasks: map[string]int{"load": 3, "sum": 1},
			done: append(loadAll, "memory sum-3fa2c1d0"), finish: "ok"}},
		lines: []string{`load\s+3/3 \[`, `sum\s+1/1 \[`, `total\s+4/4 \[.*\] +1\.[23]s`},
		summary: "compute 1: 4/4 tasks, finished in 1.3s\n" +
			"  load  3/3\n" +
			"  sum   1/1\n",
	}, {
		name: "repeated transitions count once",
		runs: []progressRun{{compute: 1, tasks: map[string]int{"load": 3},
			done:   append(loadAll, "memory load-3fa2c1d0-0", "cancelled load-3fa2c1d0-1", "erred load-3fa2c1d0-2"),
			finish: "ok"}},
		lines: []string{`load\s+3/3 \[`, `total\s+3/3 \[`},
		summary: "compute 1: 3/3 tasks, finished in 1.9s\n" +
			"  load  3/3\n",
	}, {
		name: "failed",
		runs: []progressRun{{compute: 2, tasks: map[string]int{"load": 3, "sum": 1},
			done:   []string{"memory load-3fa2c1d0-0", "erred load-3fa2c1d0-1"},
			finish: "task load-3fa2c1d0-1 failed"}},
		lines: []string{`load\s+2/3 \[.*\] +1 erred`, `sum\s+0/1 \[`, `total\s+2/4 \[.*\] +1 erred +0\.7s failed`},
		summary: "compute 2: 2/4 tasks, 1 erred, failed after 0.7s: task load-3fa2c1d0-1 failed\n" +
			"  load  2/3  1 erred\n" +
			"  sum   0/1\n",
	}, {
		name: "only the chosen computation",
		runs: []progressRun{
			{compute: 1, tasks: map[string]int{"load": 3}, done: loadAll, finish: "ok"},
			{compute: 2, tasks: map[string]int{"parse": 2}, done: []string{"memory parse-3fa2c1d0-0"}, finish: "ok"},
		},
		opts:    []ProgressOption{ForCompute(2), Width(60)},
		lines:   []string{`parse\s+1/2 \[`, `total\s+1/2 \[`},
		absent:  []string{`load`},
		summary: "compute 2: 1/2 tasks, finished in 0.4s\n  parse  1/2\n",
	}, {
		name: "two computations",
		runs: []progressRun{
			{compute: 1, tasks: map[string]int{"load": 3}, done: loadAll, finish: "ok"},
			{compute: 2, tasks: map[string]int{"parse": 2}, done: []string{"memory parse-3fa2c1d0-0"}, finish: "ok"},
		},
		lines: []string{`load\s+3/3 \[`, `parse\s+1/2 \[`, `total\s+3/3 \[`, `total\s+1/2 \[`},
		summary: "compute 1: 3/3 tasks, finished in 1s\n  load  3/3\n" +
			"compute 2: 1/2 tasks, finished in 0.4s\n  parse  1/2\n",
	}, {
		name: "unannounced tasks and empty computations",
		runs: []progressRun{
			{compute: 1, tasks: map[string]int{"load": 1}, done: []string{"memory load-3fa2c1d0-0", "memory other-3fa2c1d0"}, finish: "ok"},
			{compute: 2, tasks: map[string]int{}, finish: "ok"},
		},
		lines:   []string{`load\s+1/1 \[`},
		absent:  []string{`other`},
		summary: "compute 1: 1/1 tasks, finished in 0.7s\n  load  1/1\ncompute 2: 0/0 tasks, finished in 0.1s\n",
	}, {
		name: "closed while running",
		runs: []progressRun{{compute: 3, tasks: map[string]int{"load": 3},
			done: []string{"memory load-3fa2c1d0-0"}}},
		lines: []string{`load\s+1/3 \[`, `total\s+1/3 \[`},
	}, {
		name: "frequent frames",
		runs: []progressRun{{compute: 1, tasks: map[string]int{"load": 3, "sum": 1},
			done: append(loadAll, "memory sum-3fa2c1d0"), finish: "ok"}},
		opts:  []ProgressOption{RefreshRate(time.Nanosecond)},
		lines: []string{`load\s+3/3 \[`, `sum\s+1/1 \[`, `total\s+4/4 \[`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHub()
			defer h.Close()
			var out bytes.Buffer
			p := ShowProgress(h, &out, tt.opts...)
			for _, r := range tt.runs {
				for _, e := range r.events() {
					h.Publish(e) // one at a time, as they would come
				}
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			text := out.String()
			if strings.Contains(text, "\x1b[") {
				t.Errorf("escape codes written to a non-terminal:\n%q", text)
			}
			for _, re := range tt.lines {
				if !regexp.MustCompile(`(?m)^` + re).MatchString(text) {
					t.Errorf("output has no line matching %q:\n%s", re, text)
				}
			}
			for _, re := range tt.absent {
				if regexp.MustCompile(re).MatchString(text) {
					t.Errorf("output has %q:\n%s", re, text)
				}
			}
			if tt.summary != "" {
				if got := p.Summary(); got != tt.summary {
					t.Errorf("Summary():\n%s\nwant:\n%s", got, tt.summary)
				}
			}
		})
	}
}

func TestProgressFinalLinesOnce(t *testing.T) {
	h := NewHub()
	defer h.Close()
	var out bytes.Buffer
	p := ShowProgress(h, &out)
	h.Publish(progressRun{compute: 1, tasks: map[string]int{"load": 2, "sum": 1},
		done:   []string{"memory load-3fa2c1d0-0", "memory load-3fa2c1d0-1", "memory sum-3fa2c1d0"},
		finish: "ok"}.events()...)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"load", "sum", "total"} {
		if n := regexp.MustCompile(`(?m)^`+name+` `).FindAllStringIndex(out.String(), -1); len(n) != 1 {
			t.Errorf("%d lines for %s, want 1:\n%s", len(n), name, out.String())
		}
	}
}

func TestProgressWriteError(t *testing.T) {
	h := NewHub()
	defer h.Close()
	boom := errors.New("disk full")
	p := ShowProgress(h, failWriter{boom})
	h.Publish(progressRun{compute: 1, tasks: map[string]int{"load": 1},
		done: []string{"memory load-3fa2c1d0-0"}, finish: "ok"}.events()...)
	if err := p.Close(); !errors.Is(err, boom) {
		t.Errorf("Close() = %v, want %v", err, boom)
	}
}

func TestProgressAttachAfterClose(t *testing.T) {
	h := NewHub()
	defer h.Close()
	p := NewProgress(&bytes.Buffer{})
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	p.Attach(h)
	if h.Active() {
		t.Error("closed Progress subscribed")
	}
}

// TestProgressTerminalMode draws as on a terminal (redrawn every tick,
// finished bars popped above the running ones) into a buffer, to check that
// it ends cleanly, without leaks.
func TestProgressTerminalMode(t *testing.T) {
	h := NewHub()
	defer h.Close()
	var out bytes.Buffer
	p := ShowProgress(h, &out, func(c *progressConfig) { c.tty = 1 }, RefreshRate(time.Millisecond))
	for _, r := range []progressRun{
		{compute: 1, tasks: map[string]int{"load": 3, "sum": 1},
			done: []string{"memory load-3fa2c1d0-0", "memory load-3fa2c1d0-1", "memory load-3fa2c1d0-2", "memory sum-3fa2c1d0"}, finish: "ok"},
		{compute: 2, tasks: map[string]int{"load": 3}, done: []string{"erred load-3fa2c1d0-0"}, finish: "boom"},
		{compute: 3, tasks: map[string]int{"parse": 2}, done: []string{"memory parse-3fa2c1d0-0"}},
	} {
		h.Publish(r.events()...)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	for _, re := range []string{`load\s+3/3 \[`, `load\s+1/3 \[.*\] 1 erred`, `total\s+1/3 .* failed`, `parse\s+1/2 \[`} {
		if !regexp.MustCompile(`(?m)^` + re).MatchString(out.String()) {
			t.Errorf("output has no line matching %q:\n%s", re, out.String())
		}
	}
}
