package diagnostics

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/shoal-data/shoal/graph"
)

func TestRecorderKeepsTheLatestEvents(t *testing.T) {
	tests := []struct {
		name    string
		limit   int
		total   int
		batch   int
		evicted uint64
	}{
		{"under the limit", 10, 7, 3, 0},
		{"exactly the limit", 10, 10, 1, 0},
		{"wraps one by one", 10, 25, 1, 15},
		{"wraps in batches", 10, 25, 4, 15},
		{"batch larger than the limit", 10, 23, 23, 13},
		{"limit of one", 1, 5, 2, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRecorder(RecorderLimit(tt.limit))
			all := seq(0, tt.total)
			for i := 0; i < tt.total; i += tt.batch {
				r.Record(all[i:min(i+tt.batch, tt.total)])
			}
			got := r.Events()
			want := all[max(tt.total-tt.limit, 0):]
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Events() has ids %v, want %v", ids(got), ids(want))
			}
			if r.Evicted() != tt.evicted {
				t.Errorf("Evicted() = %d, want %d", r.Evicted(), tt.evicted)
			}
		})
	}
}

func ids(events []Event) []uint64 {
	out := make([]uint64, len(events))
	for i, e := range events {
		out[i] = e.Compute
	}
	return out
}

func TestRecorderSeesWhatWasPublished(t *testing.T) {
	h1, h2 := NewHub(), NewHub()
	defer h1.Close()
	defer h2.Close()
	r := NewRecorder()
	r.Attach(h1)
	r.Attach(h2)
	for i := range 20 {
		h1.Publish(seq(2*i, 1)...)
		h2.Publish(seq(2*i+1, 1)...)
		// No Close, no sleep: Events waits for what was published.
		if got := len(r.Events()); got != 2*i+2 {
			t.Fatalf("after %d events Events() has %d", 2*i+2, got)
		}
	}
	r.Close()
	r.Close()
	h1.Publish(seq(100, 1)...)
	if got := len(r.Events()); got != 40 {
		t.Errorf("closed recorder has %d events, want 40", got)
	}
	if r.Dropped() != 0 {
		t.Errorf("Dropped() = %d", r.Dropped())
	}
}

func TestRecorderWritesJSONLines(t *testing.T) {
	h := NewHub()
	defer h.Close()
	r := NewRecorder()
	r.Attach(h)
	defer r.Close()
	h.Publish(sampleEvents()...)
	var buf bytes.Buffer
	if err := r.WriteJSONLines(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSONLines(&buf)
	if err != nil {
		t.Fatal(err)
	}
	want := r.Events()
	if len(back) != len(want) {
		t.Fatalf("read back %d events, want %d", len(back), len(want))
	}
	for i := range back {
		if !sameEvent(back[i], want[i]) {
			t.Errorf("event %d: got %+v, want %+v", i, back[i], want[i])
		}
	}
	// The task stream of events read back is the recorder's.
	if got, want := TaskStream(back), r.TaskStream(); len(want) != 3 || !reflect.DeepEqual(got, want) {
		t.Errorf("task stream of read-back events:\n got %+v\nwant %+v", got, want)
	}
}

func TestTaskStream(t *testing.T) {
	ms := time.Millisecond
	tr := func(key, from, to string, at time.Duration) Event {
		return Event{Time: t0.Add(at), Kind: TaskTransition, Compute: 1, Key: graph.Key(key), From: from, To: to}
	}
	withRun := func(e Event, worker string, start, dur time.Duration, bytes int64) Event {
		e.Worker, e.Bytes = worker, bytes
		if start >= 0 {
			e.Start = t0.Add(start)
		}
		e.Duration = dur
		return e
	}
	tests := []struct {
		name   string
		events []Event
		want   []TaskRecord
	}{
		{"start and duration", []Event{
			tr("load-3fa2c1d0-0", "waiting", "processing", 1*ms),
			withRun(tr("load-3fa2c1d0-0", "processing", "memory", 12*ms), "local-0", 1*ms, 10*ms, 100),
		}, []TaskRecord{{Compute: 1, Key: "load-3fa2c1d0-0", Prefix: "load", Worker: "local-0",
			Start: t0.Add(1 * ms), Stop: t0.Add(11 * ms), Duration: 10 * ms, Bytes: 100, State: "memory"}}},
		{"start only", []Event{
			withRun(tr("sum-3fa2c1d0", "processing", "memory", 12*ms), "local-1", 2*ms, 0, 8),
		}, []TaskRecord{{Compute: 1, Key: "sum-3fa2c1d0", Prefix: "sum", Worker: "local-1",
			Start: t0.Add(2 * ms), Stop: t0.Add(12 * ms), Duration: 10 * ms, Bytes: 8, State: "memory"}}},
		{"duration only", []Event{
			withRun(tr("sum-3fa2c1d0", "processing", "memory", 12*ms), "local-1", -1, 4*ms, 8),
		}, []TaskRecord{{Compute: 1, Key: "sum-3fa2c1d0", Prefix: "sum", Worker: "local-1",
			Start: t0.Add(8 * ms), Stop: t0.Add(12 * ms), Duration: 4 * ms, Bytes: 8, State: "memory"}}},
		{"erred keeps its error", []Event{
			func() Event {
				e := withRun(tr("load-3fa2c1d0-1", "processing", "erred", 5*ms), "local-0", 1*ms, 3*ms, 0)
				e.Err = "boom"
				return e
			}(),
		}, []TaskRecord{{Compute: 1, Key: "load-3fa2c1d0-1", Prefix: "load", Worker: "local-0",
			Start: t0.Add(1 * ms), Stop: t0.Add(4 * ms), Duration: 3 * ms, State: "erred", Err: "boom"}}},
		{"cancelled while running", []Event{
			withRun(tr("load-3fa2c1d0-2", "processing", "cancelled", 5*ms), "local-0", 1*ms, 0, 0),
		}, []TaskRecord{{Compute: 1, Key: "load-3fa2c1d0-2", Prefix: "load", Worker: "local-0",
			Start: t0.Add(1 * ms), Stop: t0.Add(5 * ms), Duration: 4 * ms, State: "cancelled"}}},
		{"not rows", []Event{
			tr("load-3fa2c1d0-2", "waiting", "cancelled", 5*ms), // never ran
			tr("load-3fa2c1d0-0", "memory", "released", 6*ms),
			tr("load-3fa2c1d0-0", "released", "forgotten", 7*ms),
			{Time: t0, Kind: Spill, Key: "load-3fa2c1d0-0", Bytes: 5},
			{Time: t0, Kind: ComputeFinished, Compute: 1},
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TaskStream(tt.events)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("TaskStream:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
