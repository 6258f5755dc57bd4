package worker

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/shoal-data/shoal/diagnostics/dump"
	"github.com/shoal-data/shoal/graph"
)

// TestStateLog checks the transitions the state machine logs, with the
// event that caused each and a task's error: the worker's side of a
// task's story.
func TestStateLog(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name    string
		threads int
		steps   [][]Event
		want    []string // "key from->to cause [error]"
	}{
		{"run and fail", 1, [][]Event{
			{&RunTask{ID: 1, Task: task("a")}},
			{&Executed{Key: "a", Err: boom}},
		}, []string{"a released->ready run-task", "a ready->executing thread-free", "a executing->error executed boom"}},
		{"run, finish, release", 1, [][]Event{
			{&RunTask{ID: 1, Task: task("a")}},
			{&Executed{Key: "a", Value: 1, Size: 8}},
			{&ReleaseKey{Key: "a"}},
		}, []string{"a released->ready run-task", "a ready->executing thread-free", "a executing->memory executed",
			"a memory->released release-key"}},
		{"an input fetched", 1, [][]Event{
			{&FetchKey{Key: "x", From: []string{"w1"}}, &RunTask{ID: 2, Task: task("b", "x")}},
			{&Fetched{Key: "x", Value: 1}},
		}, []string{"x released->fetching fetch-key", "b released->waiting run-task", "x fetching->memory fetched",
			"b waiting->ready fetched", "b ready->executing thread-free"}},
		{"an input missing", 1, [][]Event{
			{&FetchKey{Key: "x", From: []string{"w1"}}, &RunTask{ID: 2, Task: task("b", "x")}},
			{&Fetched{Key: "x", Err: boom}},
		}, []string{"x released->fetching fetch-key", "b released->waiting run-task", "x fetching->missing fetched boom",
			`b waiting->error fetched task "b": fetch dependency "x" from [w1]: boom (missing dependency data)`}},
		{"cancelled before it ran", 1, [][]Event{
			{&RunTask{ID: 1, Task: task("a")}, &RunTask{ID: 2, Task: task("b")}},
			{&CancelTask{Key: "b"}},
		}, []string{"a released->ready run-task", "b released->ready run-task", "a ready->executing thread-free",
			"b ready->cancelled cancel-task"}},
		{"reset", 1, [][]Event{
			{&RunTask{ID: 1, Task: task("a")}, &FetchKey{Key: "x", From: []string{"w1"}}},
			{&Reset{}},
		}, []string{"a released->ready run-task", "x released->fetching fetch-key", "a ready->executing thread-free",
			"a executing->released reset", "x fetching->released reset"}},
		{"a scattered value", 1, [][]Event{
			{&Put{Key: "s", Value: 1, Size: 8}},
		}, []string{"s released->memory put"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewState(tc.threads)
			t0 := time.Unix(1_700_000_000, 0)
			keys := map[graph.Key]bool{}
			seqs := map[graph.Key]uint64{} // of the Executes and StartFetches, as the Worker keeps them
			for i, evs := range tc.steps {
				for _, e := range evs {
					keys[eventKey(e)] = true
					switch e := e.(type) {
					case *Executed:
						e.Seq = seqs[e.Key]
					case *Fetched:
						e.Seq = seqs[e.Key]
					}
				}
				for _, in := range s.HandleAt(t0.Add(time.Duration(i)*time.Second), evs...) {
					switch in := in.(type) {
					case *Execute:
						seqs[in.Task.Key] = in.Seq
					case *StartFetch:
						seqs[in.Key] = in.Seq
					}
				}
			}
			var all []graph.Key
			for k := range keys {
				all = append(all, k)
			}
			var got []string
			for _, tr := range s.Story("w0", all...) {
				line := fmt.Sprintf("%s %s->%s %s", tr.Key, tr.From, tr.To, tr.Cause)
				if tr.Error != "" {
					line += " " + tr.Error
				}
				got = append(got, line)
				if tr.Worker != "w0" || tr.Time.Before(t0) {
					t.Errorf("transition %q of worker %q at %v", line, tr.Worker, tr.Time)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("transitions:\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func eventKey(e Event) graph.Key {
	switch e := e.(type) {
	case *RunTask:
		return e.Task.Key
	case *FetchKey:
		return e.Key
	case *Put:
		return e.Key
	}
	return ""
}

// TestStateDump checks what a worker's state machine says of itself: its
// tasks with when they came to their state and the inputs they wait for,
// its values and fetches, and the events it handled.
func TestStateDump(t *testing.T) {
	s := NewState(1)
	t0 := time.Unix(1_700_000_000, 0)
	s.HandleAt(t0, &RunTask{ID: 1, Task: task("a")}, &FetchKey{Key: "x", From: []string{"w1"}},
		&RunTask{ID: 2, Task: task("b", "x")}, &Put{Key: "s", Value: 1, Size: 8})
	s.HandleAt(t0.Add(time.Second), &Pause{Paused: true})
	d := s.Dump("w0")
	wantTasks := []dump.WorkerTask{
		{Key: "a", Op: "op", State: "executing", Since: t0},
		{Key: "b", Op: "op", State: "waiting", Since: t0, Missing: []string{"x"}},
	}
	if !reflect.DeepEqual(d.Tasks, wantTasks) {
		t.Errorf("tasks %+v, want %+v", d.Tasks, wantTasks)
	}
	if !reflect.DeepEqual(d.Data, map[string]int64{"s": 8}) || len(d.Fetching) != 1 || d.Fetching[0].Key != "x" ||
		!d.Paused || d.Threads != 1 {
		t.Errorf("data %v, fetching %+v, paused %v, threads %d", d.Data, d.Fetching, d.Paused, d.Threads)
	}
	var kinds []string
	for _, e := range d.Events {
		kinds = append(kinds, e.Kind+" "+e.Key+" "+e.Detail)
	}
	wantKinds := []string{"run-task a op", "fetch-key x from w1", "run-task b op", "put s ", "pause  "}
	if !reflect.DeepEqual(kinds, wantKinds) {
		t.Errorf("events %q, want %q", kinds, wantKinds)
	}
	if len(d.Transitions) != 5 || d.Transitions[4].Cause != "thread-free" {
		t.Errorf("%d transitions: %+v", len(d.Transitions), d.Transitions)
	}
}

// TestStateLogBound checks that the logs keep the last LogSize entries.
func TestStateLogBound(t *testing.T) {
	s := NewState(1)
	for i := range LogSize + 10 {
		s.Handle(&Put{Key: graph.Key(fmt.Sprintf("v-%d", i)), Value: i, Size: 8})
	}
	d := s.Dump("w0")
	if len(d.Transitions) != LogSize || len(d.Events) != LogSize {
		t.Fatalf("%d transitions and %d events kept, want %d", len(d.Transitions), len(d.Events), LogSize)
	}
	if first, last := d.Transitions[0].Key, d.Transitions[LogSize-1].Key; first != "v-10" ||
		last != fmt.Sprintf("v-%d", LogSize+9) {
		t.Errorf("kept the transitions of %s to %s, want the last ones", first, last)
	}
}
