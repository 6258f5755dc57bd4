package local_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/shoal-data/shoal/diagnostics/otelshoal"
	"github.com/shoal-data/shoal/diagnostics/otelshoal/otlp"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/internal/jaegertest"
	"github.com/shoal-data/shoal/internal/otlptest"
	"github.com/shoal-data/shoal/local"
)

var (
	otelSquare = graph.MustRegisterFunc("otel_test.square", func(_ context.Context, x int) (int, error) {
		return x * x, nil
	})
	otelSum = graph.MustRegisterFunc("otel_test.sum", func(_ context.Context, xs []int) (int, error) {
		s := 0
		for _, x := range xs {
			s += x
		}
		return s, nil
	})
	otelFail = graph.MustRegisterFunc("otel_test.fail", func(_ context.Context, x int) (int, error) {
		return 0, fmt.Errorf("no good: %d", x)
	})
)

// TestTracesInJaeger traces two computations, one of which fails, into
// a tracer provider of the caller's that exports to a real Jaeger, and
// reads them back from Jaeger's API.
func TestTracesInJaeger(t *testing.T) {
	j := jaegertest.Start(t)
	ctx := context.Background()
	const service = "shoal-local-test"
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(j.OTLPGRPC))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName(service))))
	defer tp.Shutdown(ctx)
	e := local.New(local.WithThreads(2), local.WithOptimize(false), local.WithProfiling(false),
		local.WithOpenTelemetry(otelshoal.WithTracerProvider(tp)))

	rctx, root := tp.Tracer("test").Start(ctx, "handle request")
	n, err := graph.Compute[int](rctx, e, otelSum.Call(graph.List(otelSquare.Call(3), otelSquare.Call(4))))
	if err != nil || n != 25 {
		t.Fatalf("Compute = %d, %v; want 25", n, err)
	}
	if _, err := graph.Compute[int](rctx, e, otelSquare.Call(otelFail.Call(7))); err == nil {
		t.Fatal("a failing computation succeeded")
	}
	root.End()
	if err := e.Close(); err != nil { // flushes tp
		t.Fatal(err)
	}

	traces := j.WaitTraces(t, service, func(ts []jaegertest.Trace) bool { return len(ts) == 1 && len(ts[0].Spans) >= 7 })
	tr := traces[0]
	names := map[string]int{}
	for _, s := range tr.Spans {
		names[s.OperationName]++
	}
	want := map[string]int{"handle request": 1, "compute": 2, "task otel_test.square": 2, "task otel_test.sum": 1,
		"task otel_test.fail": 1}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Fatalf("spans %v, want %v", names, want)
	}
	req := tr.Named("handle request")[0]
	comps := tr.Named("compute")
	for i, c := range comps {
		if c.Parent() != req.SpanID {
			t.Errorf("compute span %d: parent %q, want the caller's span %q", i, c.Parent(), req.SpanID)
		}
	}
	ok, failed := comps[0], comps[1]
	if ok.Tag("shoal.state") != "finished" || ok.Tag("error") != "" {
		t.Errorf("first computation: tags %v, want state finished and no error", ok.Tags)
	}
	if failed.Tag("shoal.state") != "erred" || failed.Tag("error") != "true" {
		t.Errorf("failed computation: tags %v, want state erred and error", failed.Tags)
	}
	for _, s := range append(tr.Named("task otel_test.square"), tr.Named("task otel_test.sum")...) {
		checkTask(t, s, ok, "memory")
		if b, _ := strconv.Atoi(s.Tag("shoal.bytes")); b <= 0 {
			t.Errorf("%s: shoal.bytes %q, want the result's size", s.OperationName, s.Tag("shoal.bytes"))
		}
	}
	bad := tr.Named("task otel_test.fail")[0]
	checkTask(t, bad, failed, "erred")
	if bad.Tag("error") != "true" || bad.Tag("otel.status_code") != "ERROR" ||
		!strings.Contains(bad.Tag("otel.status_description"), "no good: 7") || !bad.HasLog("exception") {
		t.Errorf("erred task: tags %v, logs %v; want error status \"no good: 7\" and an exception", bad.Tags, bad.Logs)
	}
}

// checkTask checks the span of a task's run: its parent and attributes.
func checkTask(t *testing.T, s, comp jaegertest.Span, state string) {
	t.Helper()
	prefix := strings.TrimPrefix(s.OperationName, "task ")
	if s.Parent() != comp.SpanID {
		t.Errorf("%s: parent %q, want its computation's span %q", s.OperationName, s.Parent(), comp.SpanID)
	}
	if s.Tag("shoal.prefix") != prefix || !strings.HasPrefix(s.Tag("shoal.key"), prefix+"-") ||
		!strings.HasPrefix(s.Tag("shoal.worker"), "local-") || s.Tag("shoal.state") != state ||
		s.Tag("shoal.computation") != comp.Tag("shoal.computation") || s.Duration <= 0 {
		t.Errorf("%s: duration %dµs, tags %v; want prefix %s, a key, a local worker, state %s, computation %s",
			s.OperationName, s.Duration, s.Tags, prefix, state, comp.Tag("shoal.computation"))
	}
}

// TestOpenTelemetryFromEnvironment exports metrics and logs where the
// OTEL_* variables say, to an OTLP receiver, when asked to.
func TestOpenTelemetryFromEnvironment(t *testing.T) {
	r := otlptest.New(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", r.HTTPEndpoint())
	t.Setenv("OTEL_SERVICE_NAME", "shoal-local-env")
	ctx := context.Background()
	for _, opts := range [][]local.Option{nil, {local.WithOpenTelemetry(otlp.Export())}} {
		// Without otlp.Export, the executor exports nothing.
		e := local.New(append(opts, local.WithThreads(1), local.WithOptimize(false), local.WithProfiling(false))...)
		if _, err := graph.Compute[int](ctx, e, otelFail.Call(3)); err == nil {
			t.Fatal("a failing computation succeeded")
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
	}
	var tasks []string
	for _, p := range otlptest.Points(r.Metrics(), "shoal.tasks") {
		tasks = append(tasks, fmt.Sprintf("%s %s %s %s %g", p.Service, p.Attrs["shoal.prefix"], p.Attrs["shoal.worker"],
			p.Attrs["shoal.state"], p.Value))
	}
	if want := "shoal-local-env otel_test.fail local-0 erred 1"; fmt.Sprint(tasks) != "["+want+"]" {
		t.Errorf("shoal.tasks: %q, want [%q]", tasks, want)
	}
	found := false
	for _, l := range otlptest.Records(r.Logs()) {
		if l.Service == "shoal-local-env" && l.Body == "task failed" && l.Severity == "WARN" &&
			strings.HasPrefix(l.Attrs["key"], "otel_test.fail-") && strings.Contains(l.Attrs["exception.message"], "no good: 3") {
			found = true
		}
	}
	if !found {
		t.Errorf("no WARN \"task failed\" record of the failed task among the logs exported: %+v",
			otlptest.Records(r.Logs()))
	}
	spans := 0
	for _, rs := range r.Spans() {
		for _, ss := range rs.ScopeSpans {
			spans += len(ss.Spans)
		}
	}
	if spans != 2 {
		t.Errorf("%d spans exported, want 2 (the computation and its task)", spans)
	}
}
