package otelshoal

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/metric"

	"github.com/shoal-data/shoal/diagnostics"
)

// meters records the events of an executor as metrics:
//
//	shoal.tasks               {task}        runs of tasks ended, by prefix, worker and state
//	shoal.task.duration       s             how long runs took, by prefix and state
//	shoal.task.result.size    By            bytes of the results computed, by prefix
//	shoal.transfer.size       By            bytes workers got from other workers for their runs
//	shoal.computations        {computation} computations ended, by state (finished, erred)
//	shoal.spill.size          By            bytes spilled to disk and read back, by worker and direction
//	shoal.workers             {worker}      workers joined minus workers gone
//	shoal.activity.time       s             fine metrics: time per worker, prefix and activity
//	shoal.activity.size       By            fine metrics: bytes per worker, prefix and activity
//	shoal.activity.count      {operation}   fine metrics: counts per worker, prefix and activity
//
// It is driven from one goroutine: the subscription's.
type meters struct {
	tasks, resultSize, transferSize, computations, spillSize metric.Int64Counter
	duration                                                 metric.Float64Histogram
	workers                                                  metric.Int64UpDownCounter
	activity                                                 map[string]metric.Float64Counter // by unit
}

// durationBuckets are the bounds of the histogram of task durations, in
// seconds: tasks take from microseconds to minutes.
var durationBuckets = []float64{0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300}

func newMeters(m metric.Meter) (*meters, error) {
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	activity := func(name, unit, desc string) metric.Float64Counter {
		c, err := m.Float64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	ms := &meters{
		tasks:        counter("shoal.tasks", "{task}", "Runs of tasks ended, by prefix, worker and state."),
		resultSize:   counter("shoal.task.result.size", "By", "Bytes of the results of tasks, by prefix."),
		transferSize: counter("shoal.transfer.size", "By", "Bytes workers got from other workers for their tasks."),
		computations: counter("shoal.computations", "{computation}", "Computations ended, by state."),
		spillSize:    counter("shoal.spill.size", "By", "Bytes of results spilled to disk (write) and read back (read)."),
		activity: map[string]metric.Float64Counter{
			diagnostics.UnitSeconds: activity("shoal.activity.time", "s",
				"Time workers spent on each activity for the tasks of a prefix."),
			diagnostics.UnitBytes: activity("shoal.activity.size", "By",
				"Bytes workers moved in each activity for the tasks of a prefix."),
			diagnostics.UnitCount: activity("shoal.activity.count", "{operation}",
				"Operations of each activity for the tasks of a prefix."),
		},
	}
	var err error
	ms.duration, err = m.Float64Histogram("shoal.task.duration", metric.WithUnit("s"),
		metric.WithDescription("How long runs of tasks took, by prefix and state."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	errs = append(errs, err)
	ms.workers, err = m.Int64UpDownCounter("shoal.workers", metric.WithUnit("{worker}"),
		metric.WithDescription("Workers connected."))
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return ms, nil
}

func (ms *meters) handle(evs []diagnostics.Event) {
	ctx := context.Background()
	for i := range evs {
		ev := &evs[i]
		switch ev.Kind {
		case diagnostics.TaskTransition:
			if !ranAndEnded(ev) {
				continue
			}
			state := runState(ev)
			prefix := AttrPrefix.String(ev.Prefix)
			ms.tasks.Add(ctx, 1, metric.WithAttributes(prefix, AttrWorker.String(ev.Worker), AttrState.String(state)))
			ms.duration.Record(ctx, ev.Duration.Seconds(), metric.WithAttributes(prefix, AttrState.String(state)))
			if state == diagnostics.StateMemory {
				ms.resultSize.Add(ctx, ev.Bytes, metric.WithAttributes(prefix))
			}
			for _, in := range ev.Inputs {
				ms.transferSize.Add(ctx, in.Bytes, metric.WithAttributes(AttrWorker.String(ev.Worker),
					AttrFrom.String(in.From)))
			}
		case diagnostics.ComputeFinished:
			state := stateFinished
			if ev.Err != "" {
				state = stateErred
			}
			ms.computations.Add(ctx, 1, metric.WithAttributes(AttrState.String(state)))
		case diagnostics.Spill, diagnostics.Unspill:
			dir := "write"
			if ev.Kind == diagnostics.Unspill {
				dir = "read"
			}
			ms.spillSize.Add(ctx, ev.Bytes, metric.WithAttributes(AttrWorker.String(ev.Worker),
				AttrDirection.String(dir)))
		case diagnostics.WorkerAdded:
			ms.workers.Add(ctx, 1)
		case diagnostics.WorkerRemoved:
			ms.workers.Add(ctx, -1)
		case diagnostics.Metrics:
			for _, m := range ev.Metrics {
				c := ms.activity[m.Unit]
				if c == nil || m.Value < 0 {
					continue // a unit of the tasks' own
				}
				c.Add(ctx, m.Value, metric.WithAttributes(AttrWorker.String(m.Worker), AttrPrefix.String(m.Prefix),
					AttrActivity.String(m.Activity)))
			}
		}
	}
}
