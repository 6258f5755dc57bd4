package diagnostics

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func TestKindNames(t *testing.T) {
	tests := []struct {
		kind Kind
		name string
	}{
		{TaskTransition, "task-transition"},
		{ComputeStarted, "compute-started"},
		{ComputeFinished, "compute-finished"},
		{Spill, "spill"},
		{Unspill, "unspill"},
		{WorkerAdded, "worker-added"},
		{WorkerRemoved, "worker-removed"},
		{AlertRaised, "alert-raised"},
		{AlertResolved, "alert-resolved"},
	}
	for _, tt := range tests {
		if got := tt.kind.String(); got != tt.name {
			t.Errorf("Kind(%d).String() = %q, want %q", tt.kind, got, tt.name)
		}
		b, err := json.Marshal(tt.kind)
		if err != nil || string(b) != `"`+tt.name+`"` {
			t.Errorf("json.Marshal(%v) = %s, %v", tt.kind, b, err)
		}
		var k Kind
		if err := json.Unmarshal(b, &k); err != nil || k != tt.kind {
			t.Errorf("json.Unmarshal(%s) = %v, %v", b, k, err)
		}
	}
	if got := Kind(200).String(); got != "kind(200)" {
		t.Errorf("Kind(200).String() = %q", got)
	}
	if _, err := json.Marshal(Kind(200)); err == nil {
		t.Error("json.Marshal(Kind(200)) succeeded")
	}
	var k Kind
	if err := json.Unmarshal([]byte(`"nope"`), &k); err == nil {
		t.Error(`json.Unmarshal("nope") into Kind succeeded`)
	}
}

func TestTotalTasks(t *testing.T) {
	e := Event{Kind: ComputeStarted, Tasks: map[string]int{"load": 3, "sum": 1}}
	if got := e.TotalTasks(); got != 4 {
		t.Errorf("TotalTasks() = %d, want 4", got)
	}
}

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func sampleEvents() []Event {
	return []Event{
		{Time: t0, Kind: ComputeStarted, Compute: 7, Tasks: map[string]int{"load": 2, "sum": 1},
			Trace: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
		{Time: t0.Add(time.Millisecond), Kind: WorkerAdded, Worker: "tcp://10.0.0.2:4000"},
		{Time: t0.Add(2 * time.Millisecond), Kind: TaskTransition, Compute: 7, Key: "load-3fa2c1d0-0",
			Prefix: "load", From: StateWaiting, To: StateProcessing, Worker: "local-0", Stimulus: "task-ready-12"},
		{Time: t0.Add(9 * time.Millisecond), Kind: TaskTransition, Compute: 7, Key: "load-3fa2c1d0-0",
			Prefix: "load", From: StateProcessing, To: StateMemory, Worker: "local-0",
			Start: t0.Add(2 * time.Millisecond), Duration: 7 * time.Millisecond, Bytes: 1 << 20},
		{Time: t0.Add(10 * time.Millisecond), Kind: Spill, Key: "load-3fa2c1d0-0", Bytes: 1 << 20,
			Path: "/tmp/shoal/spill/load-3fa2c1d0-0.arrow", Worker: "local-0"},
		{Time: t0.Add(11 * time.Millisecond), Kind: TaskTransition, Compute: 7, Key: "load-3fa2c1d0-1",
			Prefix: "load", From: StateProcessing, To: StateErred, Worker: "local-1",
			Err: "read data/2.csv line 3 column 2: \"x\" is not a number\n\tand \"quotes\" <html>"},
		{Time: t0.Add(12 * time.Millisecond), Kind: ComputeFinished, Compute: 7, Err: "task load-3fa2c1d0-1 failed"},
		{Kind: WorkerRemoved, Worker: "tcp://10.0.0.2:4000", Err: "connection lost"},
		{Time: t0.Add(13 * time.Millisecond), Kind: TaskTransition, Compute: 7, Key: "sum-9c1d-0", Prefix: "sum",
			From: StateProcessing, To: StateMemory, Worker: "tcp://10.0.0.2:4000", Start: t0.Add(12 * time.Millisecond),
			Duration: time.Millisecond, Bytes: 8, Inputs: []Transfer{{Key: "load-3fa2c1d0-0", From: "tcp://10.0.0.3:4000",
				Start: t0.Add(11 * time.Millisecond), Duration: time.Millisecond, Bytes: 4096},
				{From: "tcp://10.0.0.4:4000", Start: t0.Add(12 * time.Millisecond), Bytes: 10}}},
	}
}

func TestJSONLinesRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		events []Event
	}{
		{"none", nil},
		{"one", sampleEvents()[:1]},
		{"all kinds", sampleEvents()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteJSONLines(&buf, tt.events); err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(buf.String(), "\n"); n != len(tt.events) {
				t.Errorf("wrote %d lines for %d events", n, len(tt.events))
			}
			got, err := ReadJSONLines(&buf)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.events) {
				t.Fatalf("read %d events, want %d", len(got), len(tt.events))
			}
			for i := range got {
				if !sameEvent(got[i], tt.events[i]) {
					t.Errorf("event %d:\n got %+v\nwant %+v", i, got[i], tt.events[i])
				}
			}
		})
	}
}

func TestJSONLinesFormat(t *testing.T) {
	var buf bytes.Buffer
	e := sampleEvents()[3]
	if err := WriteJSONLines(&buf, []Event{e}); err != nil {
		t.Fatal(err)
	}
	want := `{"time":"2025-06-01T12:00:00.009Z","kind":"task-transition","compute":7,"key":"load-3fa2c1d0-0",` +
		`"prefix":"load","from":"processing","to":"memory","worker":"local-0","start":"2025-06-01T12:00:00.002Z",` +
		`"duration":7000000,"bytes":1048576}` + "\n"
	if buf.String() != want {
		t.Errorf("got  %s\nwant %s", buf.String(), want)
	}
}

func TestReadJSONLines(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		n       int
		wantErr string
	}{
		{"blank lines skipped", "\n{\"kind\":\"spill\"}\n\n  \n{\"kind\":\"unspill\"}", 2, ""},
		{"no final newline", `{"kind":"spill"}`, 1, ""},
		{"bad json", "{\"kind\":\"spill\"}\n{\"kind\":\n", 1, "line 2"},
		{"bad kind", "{\"kind\":\"spill\"}\n\n{\"kind\":\"explode\"}\n", 1, "line 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadJSONLines(strings.NewReader(tt.in))
			if len(got) != tt.n {
				t.Errorf("read %d events, want %d", len(got), tt.n)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("error %v, want one naming %q", err, tt.wantErr)
			}
		})
	}
}

func TestJSONLinesIOErrors(t *testing.T) {
	boom := errors.New("boom")
	if _, err := ReadJSONLines(iotest.ErrReader(boom)); !errors.Is(err, boom) {
		t.Errorf("ReadJSONLines error %v, want %v", err, boom)
	}
	if err := WriteJSONLines(failWriter{boom}, sampleEvents()); !errors.Is(err, boom) {
		t.Errorf("WriteJSONLines error %v, want %v", err, boom)
	}
}

type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

// sameEvent compares events the way JSON keeps them: times by instant.
func sameEvent(a, b Event) bool {
	if !a.Time.Equal(b.Time) || !a.Start.Equal(b.Start) {
		return false
	}
	a.Time, b.Time, a.Start, b.Start = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if len(a.Inputs) != len(b.Inputs) {
		return false
	}
	a.Inputs, b.Inputs = slices.Clone(a.Inputs), slices.Clone(b.Inputs)
	for i := range a.Inputs {
		if !a.Inputs[i].Start.Equal(b.Inputs[i].Start) {
			return false
		}
		a.Inputs[i].Start, b.Inputs[i].Start = time.Time{}, time.Time{}
	}
	return reflect.DeepEqual(a, b)
}
