package archive

import (
	"encoding/json"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
)

// Attach records the events published to h (see Record) until Close,
// which records what the subscription had queued before it stops it.
func (w *Writer) Attach(h *diagnostics.Hub, opts ...diagnostics.SubscribeOption) {
	s := h.Subscribe(w.Record, opts...)
	w.mu.Lock()
	if w.detached {
		w.mu.Unlock()
		s.Close()
		return
	}
	w.subs = append(w.subs, s)
	w.mu.Unlock()
}

// Record queues the rows that executors' events make: a row of the
// transitions table per task transition, a row of the tasks table per run
// of a task that ended (diagnostics.TaskRecordOf), and a row of the events
// table per other event, except fine performance metrics, which are left
// out.
func (w *Writer) Record(evs []diagnostics.Event) {
	now := time.Now()
	var ntr, ntask, nev int
	w.mu.Lock()
	for i := range evs {
		e := &evs[i]
		switch e.Kind {
		case diagnostics.Metrics:
		case diagnostics.TaskTransition:
			if queue(w, w.transitions, Transition{Time: e.Time, Computation: int64(e.Compute), Key: string(e.Key),
				Prefix: prefixOf(e), From: e.From, To: e.To, Worker: e.Worker, Stimulus: e.Stimulus}) {
				ntr++
			}
			r, ok := diagnostics.TaskRecordOf(e)
			if !ok {
				continue
			}
			if r.Start.IsZero() {
				r.Start = r.Stop // it did not run, or not where the scheduler saw it end
			}
			if queue(w, w.tasks, Task{Computation: int64(r.Compute), Key: string(r.Key), Prefix: r.Prefix,
				Group: r.Key.Group(), Op: e.Op, Worker: r.Worker, Start: r.Start, Stop: r.Stop,
				DurationSeconds: r.Duration.Seconds(), Bytes: r.Bytes, Outcome: r.State, Error: r.Err}) {
				ntask++
			}
		default:
			ev := Event{Time: e.Time, Kind: e.Kind.String(), Computation: int64(e.Compute), Key: string(e.Key),
				Worker: e.Worker, Bytes: e.Bytes, Path: e.Path, Error: e.Err}
			if len(e.Tasks) > 0 {
				ev.Tasks = int64(e.TotalTasks())
				// A map of ints always marshals.
				b, _ := json.Marshal(e.Tasks)
				ev.Message = string(b)
			}
			if queue(w, w.events, ev) {
				nev++
			}
		}
	}
	wake := w.queued(transitionsTable, ntr, now)
	wake = w.queued(tasksTable, ntask, now) || wake
	wake = w.queued(eventsTable, nev, now) || wake
	w.mu.Unlock()
	if wake {
		w.signal()
	}
}

func prefixOf(e *diagnostics.Event) string {
	if e.Prefix != "" {
		return e.Prefix
	}
	return e.Key.Prefix()
}
