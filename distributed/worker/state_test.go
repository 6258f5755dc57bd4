package worker

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/scheduler"
)

func task(key string, deps ...string) *graph.Task {
	t := &graph.Task{Key: graph.Key(key), Op: "op"}
	for _, d := range deps {
		t.Deps = append(t.Deps, graph.Key(d))
	}
	return t
}

// describe writes instructions compactly: "exec a", "fetch a<-w1",
// "store a", "drop a", "dropall", "abort a", "done a", "fail a: err",
// "missing a".
func describe(ins []Instruction) []string {
	var out []string
	for _, in := range ins {
		switch in := in.(type) {
		case *Execute:
			out = append(out, "exec "+string(in.Task.Key))
		case *StartFetch:
			out = append(out, fmt.Sprintf("fetch %s<-%s", in.Key, strings.Join(in.From, ",")))
		case *Store:
			out = append(out, "store "+string(in.Key))
		case *Drop:
			out = append(out, "drop "+string(in.Key))
		case *DropAll:
			out = append(out, "dropall")
		case *Abort:
			out = append(out, "abort "+string(in.Key))
		case *Report:
			if in.Err != nil {
				kind := "error"
				switch {
				case errors.Is(in.Err, scheduler.ErrMissingData):
					kind = "missing-data"
				case errors.Is(in.Err, context.Canceled):
					kind = "cancelled"
				}
				out = append(out, fmt.Sprintf("fail %s: %s", in.Key, kind))
			} else {
				out = append(out, "done "+string(in.Key))
			}
		case *ReportMissing:
			out = append(out, "missing "+string(in.Key))
		}
	}
	return out
}

// seqs remembers the Seq of each Execute and StartFetch, as the Worker does.
type harness struct {
	s    *State
	seqs map[graph.Key]uint64
}

func (h *harness) handle(evs ...Event) []string {
	for _, e := range evs {
		switch e := e.(type) {
		case *Executed:
			if e.Seq == 0 {
				e.Seq = h.seqs[e.Key]
			}
		case *Fetched:
			if e.Seq == 0 {
				e.Seq = h.seqs[e.Key]
			}
		}
	}
	ins := h.s.Handle(evs...)
	for _, in := range ins {
		switch in := in.(type) {
		case *Execute:
			h.seqs[in.Task.Key] = in.Seq
		case *StartFetch:
			h.seqs[in.Key] = in.Seq
		}
	}
	return describe(ins)
}

func TestState(t *testing.T) {
	boom := errors.New("boom")
	type step struct {
		evs  []Event
		want []string
	}
	tests := []struct {
		name    string
		threads int
		steps   []step
	}{
		{"run and finish", 1, []step{
			{[]Event{&RunTask{ID: 1, Task: task("a")}}, []string{"exec a"}},
			{[]Event{&Executed{Key: "a", Value: 1, Size: 8}}, []string{"store a", "done a"}},
			{[]Event{&ReleaseKey{Key: "a"}}, []string{"drop a"}},
		}},
		{"threads bound what runs", 1, []step{
			{[]Event{&RunTask{ID: 1, Task: task("a")}, &RunTask{ID: 2, Task: task("b")}}, []string{"exec a"}},
			{[]Event{&Executed{Key: "a", Value: 1}}, []string{"store a", "done a", "exec b"}},
		}},
		{"failure is reported", 2, []step{
			{[]Event{&RunTask{ID: 1, Task: task("a")}}, []string{"exec a"}},
			{[]Event{&Executed{Key: "a", Err: boom}}, []string{"fail a: error"}},
		}},
		{"local dependency", 1, []step{
			{[]Event{&RunTask{ID: 1, Task: task("a")}}, []string{"exec a"}},
			{[]Event{&Executed{Key: "a", Value: 1}}, []string{"store a", "done a"}},
			{[]Event{&RunTask{ID: 2, Task: task("b", "a")}}, []string{"exec b"}},
		}},
		{"fetch then run", 1, []step{
			{[]Event{&FetchKey{Key: "a", From: []string{"w1"}}, &RunTask{ID: 2, Task: task("b", "a", "a")}},
				[]string{"fetch a<-w1"}},
			{[]Event{&Fetched{Key: "a", Value: 1}}, []string{"store a", "exec b"}},
		}},
		{"failed fetch fails the task as missing data", 1, []step{
			{[]Event{&FetchKey{Key: "a", From: []string{"w1"}}, &RunTask{ID: 2, Task: task("b", "a")}},
				[]string{"fetch a<-w1"}},
			{[]Event{&Fetched{Key: "a", Err: boom}}, []string{"missing a", "fail b: missing-data"}},
		}},
		{"dependency neither held nor fetched", 1, []step{
			{[]Event{&RunTask{ID: 2, Task: task("b", "a")}}, []string{"fail b: missing-data"}},
		}},
		{"cancel before it runs", 1, []step{
			{[]Event{&RunTask{ID: 1, Task: task("a")}, &RunTask{ID: 2, Task: task("b")}}, []string{"exec a"}},
			{[]Event{&CancelTask{Key: "b"}}, []string{"fail b: cancelled"}},
			{[]Event{&Executed{Key: "a", Value: 1}}, []string{"store a", "done a"}},
		}},
		{"cancel while it runs", 1, []step{
			{[]Event{&RunTask{ID: 1, Task: task("a")}}, []string{"exec a"}},
			{[]Event{&CancelTask{Key: "a"}}, []string{"abort a"}},
			{[]Event{&CancelTask{Key: "a"}}, nil},
			{[]Event{&Executed{Key: "a", Err: context.Canceled}}, []string{"fail a: cancelled"}},
		}},
		{"reset drops everything and ignores stale ends", 1, []step{
			{[]Event{&RunTask{ID: 1, Task: task("a")}}, []string{"exec a"}},
			{[]Event{&Executed{Key: "a", Value: 1}}, []string{"store a", "done a"}},
			{[]Event{&RunTask{ID: 2, Task: task("b")}, &FetchKey{Key: "c", From: []string{"w1"}}},
				[]string{"fetch c<-w1", "exec b"}},
			{[]Event{&Reset{}}, []string{"abort b", "dropall"}},
			{[]Event{&Executed{Key: "b", Value: 2}, &Fetched{Key: "c", Value: 3}}, nil},
			{[]Event{&RunTask{ID: 2, Task: task("b")}}, []string{"exec b"}},
		}},
		{"release during fetch", 1, []step{
			{[]Event{&FetchKey{Key: "a", From: []string{"w1"}}}, []string{"fetch a<-w1"}},
			{[]Event{&ReleaseKey{Key: "a"}}, nil},
			{[]Event{&Fetched{Key: "a", Value: 1}}, nil},
			{[]Event{&RunTask{ID: 2, Task: task("b", "a")}}, []string{"fail b: missing-data"}},
		}},
		{"a stolen task not started is given up", 1, []step{
			{[]Event{&RunTask{ID: 1, Task: task("a")}, &RunTask{ID: 2, Task: task("b")}}, []string{"exec a"}},
			{[]Event{&CancelTask{Key: "b", Steal: true}}, []string{"fail b: cancelled"}},
			{[]Event{&Executed{Key: "a", Value: 1}}, []string{"store a", "done a"}},
		}},
		{"a stolen task that started finishes", 1, []step{
			{[]Event{&RunTask{ID: 1, Task: task("a")}}, []string{"exec a"}},
			{[]Event{&CancelTask{Key: "a", Steal: true}}, nil},
			{[]Event{&Executed{Key: "a", Value: 1}}, []string{"store a", "done a"}},
		}},
		{"paused starts nothing until resumed", 1, []step{
			{[]Event{&Pause{Paused: true}, &RunTask{ID: 1, Task: task("a")}}, nil},
			{[]Event{&FetchKey{Key: "c", From: []string{"w1"}}}, []string{"fetch c<-w1"}},
			{[]Event{&Pause{Paused: false}}, []string{"exec a"}},
		}},
		{"pause lets running tasks end", 1, []step{
			{[]Event{&RunTask{ID: 1, Task: task("a")}, &RunTask{ID: 2, Task: task("b")}}, []string{"exec a"}},
			{[]Event{&Pause{Paused: true}}, nil},
			{[]Event{&Executed{Key: "a", Value: 1}}, []string{"store a", "done a"}},
			{[]Event{&Pause{Paused: false}}, []string{"exec b"}},
		}},
		{"a scattered value answers its run at once", 1, []step{
			{[]Event{&Put{Key: "s", Value: 1, Size: 8}}, []string{"store s"}},
			{[]Event{&RunTask{ID: 1, Task: task("s")}}, []string{"done s"}},
			{[]Event{&RunTask{ID: 2, Task: task("b", "s")}}, []string{"exec b"}},
		}},
		{"already held is reported at once", 1, []step{
			{[]Event{&FetchKey{Key: "a", From: []string{"w1"}}}, []string{"fetch a<-w1"}},
			{[]Event{&Fetched{Key: "a", Value: 1, Size: 3}}, []string{"store a"}},
			{[]Event{&RunTask{ID: 1, Task: task("a")}}, []string{"done a"}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := &harness{s: NewState(tc.threads), seqs: map[graph.Key]uint64{}}
			for i, st := range tc.steps {
				got := h.handle(st.evs...)
				if !reflect.DeepEqual(got, st.want) {
					t.Fatalf("step %d: got %q, want %q", i, got, st.want)
				}
			}
		})
	}
}

// TestFetchLimits asks a worker to fetch more values than it may at once:
// MaxFetches start, the rest wait and start as others end; large values
// go a few at a time, a value larger than MaxFetchBytes alone.
func TestFetchLimits(t *testing.T) {
	starts := func(ins []Instruction) []*StartFetch {
		var out []*StartFetch
		for _, in := range ins {
			if f, ok := in.(*StartFetch); ok {
				out = append(out, f)
			}
		}
		return out
	}
	s := NewState(1)
	var evs []Event
	for i := range 40 {
		evs = append(evs, &FetchKey{Key: graph.NewKey("x", "", i), From: []string{"peer"}, Size: 10})
	}
	started := starts(s.Handle(evs...))
	if len(started) != MaxFetches {
		t.Fatalf("%d fetches started, want %d", len(started), MaxFetches)
	}
	if run, queued := s.FetchQueue(); run != MaxFetches || queued != 40-MaxFetches {
		t.Fatalf("running %d, queued %d", run, queued)
	}
	for done := 0; done < 40; {
		f := started[0]
		started = started[1:]
		started = append(started, starts(s.Handle(&Fetched{Key: f.Key, Seq: f.Seq, Value: 1, Size: 10}))...)
		done++
		if run, _ := s.FetchQueue(); run > MaxFetches || len(started) != run {
			t.Fatalf("after %d fetched: %d running, %d started", done, run, len(started))
		}
	}

	// By bytes: three of 100 MiB, then one of 1 GiB.
	s = NewState(1)
	big := []Event{}
	for i, size := range []int64{100 << 20, 100 << 20, 100 << 20, 1 << 30} {
		big = append(big, &FetchKey{Key: graph.NewKey("big", "", i), From: []string{"peer"}, Size: size})
	}
	started = starts(s.Handle(big...))
	for _, want := range []int{1, 1, 1, 1} {
		if len(started) != want {
			t.Fatalf("%d started at once, want %d", len(started), want)
		}
		f := started[0]
		started = starts(s.Handle(&Fetched{Key: f.Key, Seq: f.Seq, Value: 1, Size: f.Size}))
	}
	if run, queued := s.FetchQueue(); run != 0 || queued != 0 {
		t.Errorf("running %d, queued %d at the end", run, queued)
	}
}
