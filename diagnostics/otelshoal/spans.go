package otelshoal

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/graph"
)

// The attributes of Shoal's spans and metrics.
const (
	AttrComputation = attribute.Key("shoal.computation") // the computation's number
	AttrTasks       = attribute.Key("shoal.tasks")       // tasks of a computation
	AttrKey         = attribute.Key("shoal.key")         // a task's key, or a transferred value's
	AttrPrefix      = attribute.Key("shoal.prefix")      // the key's prefix: the kind of task
	AttrWorker      = attribute.Key("shoal.worker")      // where the task ran, or where data went
	AttrFrom        = attribute.Key("shoal.from")        // where transferred data came from
	AttrBytes       = attribute.Key("shoal.bytes")       // size of a result or of a transfer
	AttrState       = attribute.Key("shoal.state")       // how a run or a computation ended
	AttrOp          = attribute.Key("shoal.op")          // the op of an erred task
	AttrActivity    = attribute.Key("shoal.activity")    // an activity of the fine metrics
	AttrDirection   = attribute.Key("shoal.direction")   // of a spill: "write" or "read"
)

// Span names.
const (
	spanCompute  = "compute"
	spanTask     = "task " // + the key's prefix
	spanTransfer = "transfer"
)

// Outcomes of a computation, as AttrState says them.
const (
	stateFinished = "finished"
	stateErred    = diagnostics.StateErred
)

// maxEnded is how many ended computations are remembered, for the tasks
// that end after their computation (cancelled while running).
const maxEnded = 256

// spanMaker turns the events of an executor into spans: one per
// computation, from ComputeStarted to ComputeFinished, child of the span
// of the caller when the event carries its trace context; one per run of
// a task, child of its computation's, over the run's time; and one per
// transfer of an input from another worker, child of the span of the
// first run that needed it, linked from the spans of the other runs on
// the same worker that used it. Spans are made from the times in the
// events, so that they say when things happened, not when the events
// were handled.
//
// It is driven from one goroutine: the subscription's.
type spanMaker struct {
	tracer trace.Tracer
	comps  map[uint64]*compSpan // under way, and the last maxEnded ended
	ended  []uint64             // ended computations, oldest first
}

type compSpan struct {
	span      trace.Span
	ctx       context.Context // carries span
	ended     bool
	transfers map[transferID]trace.SpanContext // values transferred for its tasks
}

// transferID tells a transfer of a value apart from others.
type transferID struct {
	key          graph.Key
	worker, from string
	start        int64 // Unix nanoseconds
}

func newSpanMaker(t trace.Tracer) *spanMaker {
	return &spanMaker{tracer: t, comps: map[uint64]*compSpan{}}
}

func (m *spanMaker) handle(evs []diagnostics.Event) {
	for i := range evs {
		ev := &evs[i]
		switch ev.Kind {
		case diagnostics.ComputeStarted:
			m.started(ev)
		case diagnostics.ComputeFinished:
			m.finished(ev)
		case diagnostics.TaskTransition:
			if ranAndEnded(ev) {
				m.ran(ev)
			}
		}
	}
}

// ranAndEnded says whether a transition ends a run of a task, which the
// event then describes.
func ranAndEnded(ev *diagnostics.Event) bool {
	return ev.Worker != "" && !ev.Start.IsZero() &&
		(ev.From == diagnostics.StateProcessing || ev.From == diagnostics.StateCancelled)
}

// runState is how a run ended: "memory", "erred" or "cancelled".
func runState(ev *diagnostics.Event) string {
	if ev.From == diagnostics.StateCancelled {
		return diagnostics.StateCancelled
	}
	return ev.To
}

func (m *spanMaker) started(ev *diagnostics.Event) {
	if c := m.comps[ev.Compute]; c != nil && !c.ended {
		c.span.End(trace.WithTimestamp(ev.Time)) // numbered again: a new executor
	}
	parent := context.Background()
	if ev.Trace != "" {
		parent = propagation.TraceContext{}.Extract(parent, propagation.MapCarrier{"traceparent": ev.Trace})
	}
	ctx, span := m.tracer.Start(parent, spanCompute, trace.WithTimestamp(ev.Time),
		trace.WithAttributes(AttrComputation.Int64(int64(ev.Compute)), AttrTasks.Int(ev.TotalTasks())))
	m.comps[ev.Compute] = &compSpan{span: span, ctx: ctx}
}

func (m *spanMaker) finished(ev *diagnostics.Event) {
	c := m.comps[ev.Compute]
	if c == nil || c.ended {
		return
	}
	state := stateFinished
	if ev.Err != "" {
		state = stateErred
		c.span.RecordError(errors.New(ev.Err), trace.WithTimestamp(ev.Time))
		c.span.SetStatus(codes.Error, ev.Err)
	}
	c.span.SetAttributes(AttrState.String(state))
	c.span.End(trace.WithTimestamp(ev.Time))
	c.ended = true
	m.ended = append(m.ended, ev.Compute)
	if len(m.ended) > maxEnded {
		if old := m.comps[m.ended[0]]; old != nil && old.ended {
			delete(m.comps, m.ended[0])
		}
		m.ended = m.ended[1:]
	}
}

func (m *spanMaker) ran(ev *diagnostics.Event) {
	c := m.comps[ev.Compute]
	parent := context.Background()
	if c != nil {
		parent = c.ctx
	}
	state := runState(ev)
	attrs := []attribute.KeyValue{AttrKey.String(string(ev.Key)), AttrPrefix.String(ev.Prefix),
		AttrWorker.String(ev.Worker), AttrComputation.Int64(int64(ev.Compute)), AttrState.String(state)}
	if state == diagnostics.StateMemory {
		attrs = append(attrs, AttrBytes.Int64(ev.Bytes))
	}
	if ev.Op != "" {
		attrs = append(attrs, AttrOp.String(ev.Op))
	}
	// A value transferred once serves every task on the worker that
	// needs it: the first run's span is its parent, the others link to
	// it.
	var links []trace.Link
	fresh := make([]*diagnostics.Transfer, 0, len(ev.Inputs))
	for i := range ev.Inputs {
		in := &ev.Inputs[i]
		if c != nil && in.Key != "" {
			if sc, ok := c.transfers[idOf(ev, in)]; ok {
				links = append(links, trace.Link{SpanContext: sc})
				continue
			}
		}
		fresh = append(fresh, in)
	}
	ctx, span := m.tracer.Start(parent, spanTask+ev.Prefix, trace.WithTimestamp(ev.Start),
		trace.WithAttributes(attrs...), trace.WithLinks(links...))
	for _, in := range fresh {
		attrs := []attribute.KeyValue{AttrFrom.String(in.From), AttrWorker.String(ev.Worker),
			AttrBytes.Int64(in.Bytes)}
		if in.Key != "" {
			attrs = append(attrs, AttrKey.String(string(in.Key)), AttrPrefix.String(in.Key.Prefix()))
		}
		_, ts := m.tracer.Start(ctx, spanTransfer, trace.WithTimestamp(in.Start), trace.WithAttributes(attrs...))
		ts.End(trace.WithTimestamp(in.Start.Add(in.Duration)))
		if c != nil && in.Key != "" {
			if c.transfers == nil {
				c.transfers = map[transferID]trace.SpanContext{}
			}
			c.transfers[idOf(ev, in)] = ts.SpanContext()
		}
	}
	end := ev.Start.Add(ev.Duration)
	if state == diagnostics.StateErred {
		span.RecordError(errors.New(ev.Err), trace.WithTimestamp(end))
		span.SetStatus(codes.Error, ev.Err)
	}
	span.End(trace.WithTimestamp(end))
}

func idOf(ev *diagnostics.Event, in *diagnostics.Transfer) transferID {
	return transferID{key: in.Key, worker: ev.Worker, from: in.From, start: in.Start.UnixNano()}
}

// close ends the spans of the computations still under way, at now.
func (m *spanMaker) close(now time.Time) {
	for _, c := range m.comps {
		if !c.ended {
			c.span.SetAttributes(AttrState.String("unfinished"))
			c.span.End(trace.WithTimestamp(now))
			c.ended = true
		}
	}
}
