package otelshoal

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/graph"
)

// BenchmarkSpans measures what turning the events of one task run into
// its span costs the exporter's goroutine (not the executor's), with the
// SDK's batching span processor; ns/op is per run.
func BenchmarkSpans(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	defer tp.Shutdown(context.Background())
	m := newSpanMaker(tp.Tracer(scope))
	const batch = 256 // events a subscription hands over at once
	evs := make([]diagnostics.Event, batch)
	for i := range evs {
		evs[i] = ran(1, graph.NewKey("load", "3fa2c1d0", i), "w1", i, 1, diagnostics.StateMemory)
		evs[i].Bytes = 4096
	}
	m.handle([]diagnostics.Event{started(1, 0)})
	b.ResetTimer()
	for i := 0; i < b.N; i += batch {
		m.handle(evs[:min(batch, b.N-i)])
	}
	b.StopTimer()
	m.handle([]diagnostics.Event{finished(1, int(time.Second/time.Millisecond), "")})
}
