package otelshoal_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/shoal-data/shoal/diagnostics/otelshoal"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/local"
)

var (
	square = graph.MustRegisterFunc("square", func(_ context.Context, x int) (int, error) { return x * x, nil })
	sum    = graph.MustRegisterFunc("sum", func(_ context.Context, xs []int) (int, error) {
		s := 0
		for _, x := range xs {
			s += x
		}
		return s, nil
	})
)

func Example() {
	// A service's tracer provider; this one keeps the spans in memory
	// where a real one would send them to a collector.
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	exec := local.New(local.WithOpenTelemetry(otelshoal.WithTracerProvider(tp)))

	// The service handles a request, and computes in it.
	ctx, span := tp.Tracer("my-service").Start(context.Background(), "handle request")
	total, err := graph.Compute[int](ctx, exec, sum.Call(graph.List(square.Call(3), square.Call(4))))
	span.End()
	exec.Close() // the last spans are out when Close returns
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("total:", total)

	// The computation's spans continue the request's trace.
	names := map[trace.SpanID]string{}
	for _, s := range spans.GetSpans() {
		names[s.SpanContext.SpanID()] = s.Name
	}
	for _, s := range spans.GetSpans() {
		if parent, ok := names[s.Parent.SpanID()]; ok {
			fmt.Printf("%s, in %s\n", s.Name, parent)
		}
	}
	// Unordered output:
	// total: 25
	// compute, in handle request
	// task square, in compute
	// task square, in compute
	// task sum, in compute
}
