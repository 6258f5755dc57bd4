package otelshoal

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/graph"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// ran is the event of a run of key on worker from ms to ms+dur that ended
// in state to.
func ran(comp uint64, key graph.Key, worker string, ms, dur int, to string) diagnostics.Event {
	return diagnostics.Event{Time: at(ms + dur), Kind: diagnostics.TaskTransition, Compute: comp, Key: key,
		Prefix: key.Prefix(), From: diagnostics.StateProcessing, To: to, Worker: worker, Start: at(ms),
		Duration: time.Duration(dur) * time.Millisecond}
}

func started(comp uint64, ms int) diagnostics.Event {
	return diagnostics.Event{Time: at(ms), Kind: diagnostics.ComputeStarted, Compute: comp,
		Tasks: map[string]int{"load": 2, "sum": 1}}
}

func finished(comp uint64, ms int, err string) diagnostics.Event {
	return diagnostics.Event{Time: at(ms), Kind: diagnostics.ComputeFinished, Compute: comp, Err: err}
}

// The caller of Compute, whose span a computation's continues.
var caller = trace.NewSpanContext(trace.SpanContextConfig{
	TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
	SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
	TraceFlags: trace.FlagsSampled,
})

const callerTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestSpans(t *testing.T) {
	load0, load1 := graph.Key("load-3fa2c1d0-0"), graph.Key("load-3fa2c1d0-1")
	sum := graph.Key("sum-9c1d5e6f")
	memory, erred := diagnostics.StateMemory, diagnostics.StateErred
	withBytes := func(ev diagnostics.Event, n int64) diagnostics.Event { ev.Bytes = n; return ev }
	withInputs := func(ev diagnostics.Event, in ...diagnostics.Transfer) diagnostics.Event {
		ev.Inputs = in
		return ev
	}
	tests := []struct {
		name   string
		events []diagnostics.Event
		want   []string // describe's lines, sorted
	}{{
		name: "a computation and its tasks",
		events: []diagnostics.Event{started(1, 0), withBytes(ran(1, load0, "w1", 1, 5, memory), 4096),
			withBytes(ran(1, load1, "w2", 1, 6, memory), 2048), withBytes(ran(1, sum, "w1", 8, 1, memory), 8),
			finished(1, 10, "")},
		want: []string{
			"compute 0-10ms parent=- computation=1 tasks=3 state=finished",
			"task load 1-6ms parent=compute key=load-3fa2c1d0-0 prefix=load worker=w1 computation=1 state=memory bytes=4096",
			"task load 1-7ms parent=compute key=load-3fa2c1d0-1 prefix=load worker=w2 computation=1 state=memory bytes=2048",
			"task sum 8-9ms parent=compute key=sum-9c1d5e6f prefix=sum worker=w1 computation=1 state=memory bytes=8",
		},
	}, {
		name: "an erred task and its computation",
		events: []diagnostics.Event{started(2, 0), func() diagnostics.Event {
			ev := ran(2, load0, "w1", 1, 2, erred)
			ev.Err, ev.Op = "read a.csv line 3: bad number", "read-csv"
			return ev
		}(), finished(2, 4, "task load-3fa2c1d0-0 failed")},
		want: []string{
			"compute 0-4ms parent=- computation=2 tasks=3 state=erred status=Error:task load-3fa2c1d0-0 failed events=exception",
			"task load 1-3ms parent=compute key=load-3fa2c1d0-0 prefix=load worker=w1 computation=2 state=erred op=read-csv " +
				"status=Error:read a.csv line 3: bad number events=exception",
		},
	}, {
		name: "the caller's span is the computation's parent",
		events: func() []diagnostics.Event {
			ev := started(3, 0)
			ev.Trace = callerTraceparent
			return []diagnostics.Event{ev, ran(3, load0, "w1", 1, 1, memory), finished(3, 3, "")}
		}(),
		want: []string{
			"compute 0-3ms parent=caller computation=3 tasks=3 state=finished",
			"task load 1-2ms parent=compute key=load-3fa2c1d0-0 prefix=load worker=w1 computation=3 state=memory bytes=0",
		},
	}, {
		name: "transfers are children of the first run that needed them, linked from the others",
		events: []diagnostics.Event{started(4, 0),
			withInputs(ran(4, sum, "w1", 5, 1, memory),
				diagnostics.Transfer{Key: load1, From: "w2", Start: at(3), Duration: 2 * time.Millisecond, Bytes: 2048},
				diagnostics.Transfer{From: "w3", Start: at(5), Duration: time.Millisecond, Bytes: 100}),
			withInputs(ran(4, "sum-9c1d5e6f5e6f-1", "w1", 7, 1, memory),
				diagnostics.Transfer{Key: load1, From: "w2", Start: at(3), Duration: 2 * time.Millisecond, Bytes: 2048},
				diagnostics.Transfer{From: "w3", Start: at(7), Duration: time.Millisecond, Bytes: 50}),
			finished(4, 9, "")},
		want: []string{
			"compute 0-9ms parent=- computation=4 tasks=3 state=finished",
			"task sum 5-6ms parent=compute key=sum-9c1d5e6f prefix=sum worker=w1 computation=4 state=memory bytes=0",
			"task sum 7-8ms parent=compute key=sum-9c1d5e6f5e6f-1 prefix=sum worker=w1 computation=4 state=memory bytes=0 " +
				"links=transfer<-task sum 5-6ms",
			"transfer 3-5ms parent=task sum 5-6ms key=load-3fa2c1d0-1 prefix=load worker=w1 from=w2 bytes=2048",
			"transfer 5-6ms parent=task sum 5-6ms worker=w1 from=w3 bytes=100",
			"transfer 7-8ms parent=task sum 7-8ms worker=w1 from=w3 bytes=50",
		},
	}, {
		name: "a run cancelled, and one that ends after its computation",
		events: func() []diagnostics.Event {
			c := ran(5, load0, "w1", 1, 1, diagnostics.StateReleased)
			c.From = diagnostics.StateCancelled
			late := ran(5, load1, "w2", 1, 9, memory)
			return []diagnostics.Event{started(5, 0), c, finished(5, 3, "cancelled"), late}
		}(),
		want: []string{
			"compute 0-3ms parent=- computation=5 tasks=3 state=erred status=Error:cancelled events=exception",
			"task load 1-10ms parent=compute key=load-3fa2c1d0-1 prefix=load worker=w2 computation=5 state=memory bytes=0",
			"task load 1-2ms parent=compute key=load-3fa2c1d0-0 prefix=load worker=w1 computation=5 state=cancelled",
		},
	}, {
		name: "transitions that end no run make no span",
		events: []diagnostics.Event{started(6, 0),
			{Time: at(1), Kind: diagnostics.TaskTransition, Compute: 6, Key: load0, Prefix: "load",
				From: diagnostics.StateWaiting, To: diagnostics.StateProcessing},
			{Time: at(2), Kind: diagnostics.TaskTransition, Compute: 6, Key: sum, Prefix: "sum",
				From: diagnostics.StateWaiting, To: erred, Err: "a dependency failed"},
			finished(6, 3, "")},
		want: []string{"compute 0-3ms parent=- computation=6 tasks=3 state=finished"},
	}, {
		name:   "a computation under way is ended when the exporter stops",
		events: []diagnostics.Event{started(7, 0)},
		want:   []string{"compute 0-50ms parent=- computation=7 tasks=3 state=unfinished"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := makeSpans(tt.events)
			if !slices.Equal(got, tt.want) {
				t.Errorf("spans:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// makeSpans feeds events to a spanMaker, stops it at 50ms, and describes
// the spans it made, sorted.
func makeSpans(events []diagnostics.Event) []string {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	m := newSpanMaker(tp.Tracer(scope))
	// One event at a time and all at once must give the same spans.
	for i := range events {
		m.handle(events[i : i+1])
	}
	m.close(at(50))
	return describe(exp.GetSpans())
}

// describe writes each span on a line: its name, its times in ms after
// t0, its parent, its attributes, status, events and links.
func describe(spans tracetest.SpanStubs) []string {
	label := map[trace.SpanID]string{caller.SpanID(): "caller"}
	for _, s := range spans {
		label[s.SpanContext.SpanID()] = fmt.Sprintf("%s %d-%dms", s.Name, s.StartTime.Sub(t0).Milliseconds(),
			s.EndTime.Sub(t0).Milliseconds())
	}
	var out []string
	for _, s := range spans {
		var b strings.Builder
		b.WriteString(label[s.SpanContext.SpanID()])
		switch {
		case !s.Parent.IsValid():
			b.WriteString(" parent=-")
		case s.Parent.TraceID() != s.SpanContext.TraceID():
			b.WriteString(" parent=another trace")
		default:
			p := label[s.Parent.SpanID()]
			if p != "caller" {
				p = strings.Fields(p)[0]
				if p == "task" { // the task's full label: there may be several
					p = label[s.Parent.SpanID()]
				}
			}
			b.WriteString(" parent=" + p)
		}
		for _, k := range []string{"shoal.key", "shoal.prefix", "shoal.worker", "shoal.from", "shoal.computation",
			"shoal.tasks", "shoal.state", "shoal.op", "shoal.bytes"} {
			for _, a := range s.Attributes {
				if string(a.Key) == k {
					fmt.Fprintf(&b, " %s=%s", strings.TrimPrefix(k, "shoal."), a.Value.Emit())
				}
			}
		}
		if s.Status.Code != 0 {
			fmt.Fprintf(&b, " status=%s:%s", s.Status.Code, s.Status.Description)
		}
		for i, e := range s.Events {
			b.WriteString(map[bool]string{true: " events=", false: ","}[i == 0] + e.Name)
		}
		for i, l := range s.Links {
			b.WriteString(map[bool]string{true: " links=", false: ","}[i == 0] + strings.Fields(label[l.SpanContext.SpanID()])[0] +
				"<-" + label[parentOf(spans, l.SpanContext.SpanID())])
		}
		out = append(out, b.String())
	}
	slices.Sort(out)
	return out
}

func parentOf(spans tracetest.SpanStubs, id trace.SpanID) trace.SpanID {
	for _, s := range spans {
		if s.SpanContext.SpanID() == id {
			return s.Parent.SpanID()
		}
	}
	return trace.SpanID{}
}

func TestSpansContinueTheCallersTrace(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	ctx := trace.ContextWithSpanContext(context.Background(), caller)
	if got := Traceparent(ctx); got != callerTraceparent {
		t.Fatalf("Traceparent = %q, want %q", got, callerTraceparent)
	}
	if got := Traceparent(context.Background()); got != "" {
		t.Errorf("Traceparent of a context without a span = %q, want \"\"", got)
	}
	ev := started(1, 0)
	ev.Trace = Traceparent(ctx)
	m := newSpanMaker(tp.Tracer(scope))
	m.handle([]diagnostics.Event{ev, finished(1, 1, "")})
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	if s := spans[0]; s.SpanContext.TraceID() != caller.TraceID() || s.Parent.SpanID() != caller.SpanID() {
		t.Errorf("compute span in trace %s with parent %s, want trace %s and parent %s", s.SpanContext.TraceID(),
			s.Parent.SpanID(), caller.TraceID(), caller.SpanID())
	}
}
