package diagnostics

import (
	"io"
	"sync"
	"time"

	"github.com/shoal-data/shoal/graph"
)

// DefaultRecorderLimit is how many events a Recorder keeps unless told
// otherwise.
const DefaultRecorderLimit = 100_000

// Recorder keeps the most recent events in memory so that they can be looked
// at after, or during, a run: as a list, as a task stream, or written out as
// JSON lines.
type Recorder struct {
	limit int

	mu      sync.Mutex
	ring    []Event // grows to limit, then wraps
	head    int     // index of the oldest event once the ring is full
	evicted uint64
	subs    []*Subscription
	fine    FineMetrics // the totals of every Metrics event, evicted or not
}

// RecorderOption configures a Recorder.
type RecorderOption func(*Recorder)

// RecorderLimit sets how many events the Recorder keeps
// (DefaultRecorderLimit unless set); older ones are forgotten first.
func RecorderLimit(n int) RecorderOption {
	return func(r *Recorder) {
		if n > 0 {
			r.limit = n
		}
	}
}

// NewRecorder returns an empty Recorder. Attach it to a hub to record the
// hub's events, or feed it with Record.
func NewRecorder(opts ...RecorderOption) *Recorder {
	r := &Recorder{limit: DefaultRecorderLimit}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Attach subscribes the Recorder to h. A Recorder may listen to several
// hubs; Close detaches it from all of them.
func (r *Recorder) Attach(h *Hub, opts ...SubscribeOption) {
	s := h.Subscribe(r.Record, opts...)
	r.mu.Lock()
	r.subs = append(r.subs, s)
	r.mu.Unlock()
}

// Record adds events to the Recorder, forgetting the oldest ones beyond its
// limit. It is the function Attach subscribes.
func (r *Recorder) Record(events []Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range events {
		if events[i].Kind == Metrics {
			r.fine.AddAll(events[i].Metrics)
		}
	}
	if extra := len(events) - r.limit; extra > 0 {
		r.evicted += uint64(extra)
		events = events[extra:]
	}
	for _, e := range events {
		if len(r.ring) < r.limit {
			r.ring = append(r.ring, e)
			continue
		}
		r.ring[r.head] = e
		r.head++
		if r.head == len(r.ring) {
			r.head = 0
		}
		r.evicted++
	}
}

// flush waits until the events published to the attached hubs before the
// call have been recorded.
func (r *Recorder) flush() {
	r.mu.Lock()
	subs := r.subs
	r.mu.Unlock()
	for _, s := range subs {
		s.Flush()
	}
}

// Events returns the recorded events, oldest first. Events published to an
// attached hub before the call are included.
func (r *Recorder) Events() []Event {
	r.flush()
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Event, 0, len(r.ring))
	out = append(out, r.ring[r.head:]...)
	return append(out, r.ring[:r.head]...)
}

// TaskStream returns one row per task run found in the recorded events; see
// the function TaskStream.
func (r *Recorder) TaskStream() []TaskRecord {
	return TaskStream(r.Events())
}

// WriteJSONLines writes the recorded events to w as JSON lines.
func (r *Recorder) WriteJSONLines(w io.Writer) error {
	return WriteJSONLines(w, r.Events())
}

// FineMetrics returns the totals of the fine performance metrics
// recorded (Metrics events, including those no longer kept), per worker,
// prefix, activity and unit; SumFineMetrics adds them up over workers.
func (r *Recorder) FineMetrics() []FineMetric {
	r.flush()
	return r.fine.Totals()
}

// Evicted returns how many events the Recorder has forgotten to stay within
// its limit.
func (r *Recorder) Evicted() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.evicted
}

// Dropped returns how many events the attached hubs dropped because the
// Recorder did not keep up.
func (r *Recorder) Dropped() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var n uint64
	for _, s := range r.subs {
		n += s.Dropped()
	}
	return n
}

// Close detaches the Recorder from its hubs, after recording what they had
// queued for it. The recorded events stay readable.
func (r *Recorder) Close() {
	r.mu.Lock()
	subs := r.subs
	r.mu.Unlock()
	for _, s := range subs {
		s.Close()
	}
}

// TaskRecord is one run of a task: a row of the task stream.
type TaskRecord struct {
	Compute  uint64        `json:"compute,omitempty"`
	Key      graph.Key     `json:"key"`
	Prefix   string        `json:"prefix"`
	Worker   string        `json:"worker,omitempty"`
	Start    time.Time     `json:"start,omitzero"`
	Stop     time.Time     `json:"stop,omitzero"`
	Duration time.Duration `json:"duration"`
	Bytes    int64         `json:"bytes,omitempty"`
	State    string        `json:"state"` // "memory", "erred" or "cancelled"
	Err      string        `json:"err,omitempty"`
}

// TaskStream turns events into the task stream: one row per task that
// stopped running, in the order they stopped. A row comes from each
// TaskTransition to "memory" or "erred", and to "cancelled" when the
// task had started (Start is set). Stop is Start+Duration when both are
// known, and the time of the event otherwise.
func TaskStream(events []Event) []TaskRecord {
	var rows []TaskRecord
	for i := range events {
		if row, ok := TaskRecordOf(&events[i]); ok {
			rows = append(rows, row)
		}
	}
	return rows
}

// TaskRecordOf returns the row of the task stream an event makes, if it
// makes one (see TaskStream).
func TaskRecordOf(e *Event) (TaskRecord, bool) {
	if e.Kind != TaskTransition {
		return TaskRecord{}, false
	}
	switch e.To {
	case StateMemory, StateErred:
	case StateCancelled:
		if e.Start.IsZero() {
			return TaskRecord{}, false
		}
	default:
		return TaskRecord{}, false
	}
	row := TaskRecord{
		Compute:  e.Compute,
		Key:      e.Key,
		Prefix:   e.Prefix,
		Worker:   e.Worker,
		Start:    e.Start,
		Stop:     e.Time,
		Duration: e.Duration,
		Bytes:    e.Bytes,
		State:    e.To,
		Err:      e.Err,
	}
	if row.Prefix == "" {
		row.Prefix = e.Key.Prefix()
	}
	switch {
	case !row.Start.IsZero() && row.Duration > 0:
		row.Stop = row.Start.Add(row.Duration)
	case !row.Start.IsZero() && !row.Stop.IsZero():
		row.Duration = row.Stop.Sub(row.Start)
	case row.Start.IsZero() && row.Duration > 0 && !row.Stop.IsZero():
		row.Start = row.Stop.Add(-row.Duration)
	}
	return row, true
}
