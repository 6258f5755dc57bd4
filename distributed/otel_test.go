package distributed_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/shoal-data/shoal/diagnostics/otelshoal"
	"github.com/shoal-data/shoal/diagnostics/otelshoal/otlp"
	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/internal/jaegertest"
	"github.com/shoal-data/shoal/internal/otlptest"
)

// otelCluster starts a cluster of two in-process workers, one thread
// each, and a client. Close them both before reading what was exported:
// the scheduler flushes it as it closes.
func otelCluster(t *testing.T, ctx context.Context, sched otelshoal.Option) (*distributed.LocalCluster, *distributed.Client) {
	t.Helper()
	opts := distributed.LocalClusterOptions{Workers: 2, ThreadsPerWorker: 1, InProcess: true, NoDashboard: true}
	if sched != nil {
		opts.Scheduler.OpenTelemetry = []otelshoal.Option{sched}
	}
	lc, err := distributed.NewLocalCluster(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	c, err := lc.Client(ctx, distributed.WithOptimize(false))
	if err != nil {
		lc.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		lc.Close()
	})
	return lc, c
}

// TestTracesInJaegerFromCluster traces computations on a cluster whose
// scheduler exports to a real Jaeger as the OTEL_* variables say, from a
// client whose context carries a span of a service of its own, and reads
// the trace back from Jaeger's API: the computations continue the
// client's trace, the runs of tasks are their children with the worker
// that ran them, an input moved between workers is a span of the run
// that needed it, and a failed run has the error status.
func TestTracesInJaegerFromCluster(t *testing.T) {
	j := jaegertest.Start(t)
	const service, clientService = "shoal-cluster-test", "shoal-cluster-client"
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", j.OTLPHTTP)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_SERVICE_NAME", service)
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
	t.Setenv("OTEL_LOGS_EXPORTER", "none")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// The client's service, with a tracer provider of its own.
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(j.OTLPHTTP+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName(clientService))))
	defer tp.Shutdown(ctx)

	lc, c := otelCluster(t, ctx, nil)
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a, b := info.Workers[0].Address, info.Workers[1].Address

	rctx, root := tp.Tracer("test").Start(ctx, "handle request")
	fa, err := c.SubmitCall(rctx, double.Name(), []any{1}, distributed.Workers(a))
	if err != nil {
		t.Fatal(err)
	}
	fb, err := c.SubmitCall(rctx, double.Name(), []any{2}, distributed.Workers(b))
	if err != nil {
		t.Fatal(err)
	}
	// The sum runs on a, with the value of fb from b.
	fs, err := c.SubmitCall(rctx, sum.Name(), []any{graph.List(fa.Delayed(), fb.Delayed())}, distributed.Workers(a))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := fs.Result(ctx); err != nil || v != 6 {
		t.Fatalf("sum = %v, %v; want 6", v, err)
	}
	ff, err := c.SubmitCall(rctx, fail.Name(), []any{5})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ff.Result(ctx); err == nil {
		t.Fatal("a failing task succeeded")
	}
	root.End()
	if err := tp.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := lc.Close(); err != nil { // flushes the scheduler's spans
		t.Fatal(err)
	}

	const (
		opDouble = "task distributed_test.double"
		opSum    = "task distributed_test.sum"
		opFail   = "task distributed_test.fail"
	)
	want := map[string]int{"handle request": 1, "compute": 4, opDouble: 2, opSum: 1, opFail: 1, "transfer": 1}
	traces := j.WaitTraces(t, service, func(ts []jaegertest.Trace) bool {
		return len(ts) == 1 && len(ts[0].Spans) >= 10
	})
	tr := traces[0]
	names := map[string]int{}
	for _, s := range tr.Spans {
		names[s.OperationName]++
	}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Fatalf("spans %v, want %v", names, want)
	}
	req := tr.Named("handle request")[0]
	if got := tr.Service(req); got != clientService {
		t.Errorf("the request's span is of service %q, want %q", got, clientService)
	}
	comps := map[string]jaegertest.Span{} // by shoal.computation
	for _, s := range tr.Named("compute") {
		comps[s.Tag("shoal.computation")] = s
		if s.Parent() != req.SpanID || tr.Service(s) != service {
			t.Errorf("compute span of service %q with parent %q, want service %q and the client's span %q",
				tr.Service(s), s.Parent(), service, req.SpanID)
		}
	}
	run := func(op, worker, state string) jaegertest.Span {
		t.Helper()
		for _, s := range tr.Named(op) {
			if worker == "" || s.Tag("shoal.worker") == worker {
				comp, ok := comps[s.Tag("shoal.computation")]
				prefix := strings.TrimPrefix(op, "task ")
				if !ok || s.Parent() != comp.SpanID || s.Tag("shoal.prefix") != prefix ||
					!strings.HasPrefix(s.Tag("shoal.key"), prefix+"-") || s.Tag("shoal.state") != state {
					t.Errorf("%s on %s: parent %q, tags %v; want its computation's span, prefix %s, a key, state %s",
						op, worker, s.Parent(), s.Tags, prefix, state)
				}
				return s
			}
		}
		t.Fatalf("no span %s on %s", op, worker)
		return jaegertest.Span{}
	}
	run(opDouble, a, "memory")
	fromB := run(opDouble, b, "memory")
	total := run(opSum, a, "memory")
	if n, _ := strconv.Atoi(total.Tag("shoal.bytes")); n <= 0 {
		t.Errorf("sum: shoal.bytes %q, want the result's size", total.Tag("shoal.bytes"))
	}
	tf := tr.Named("transfer")[0]
	if tf.Parent() != total.SpanID || tf.Tag("shoal.from") != b || tf.Tag("shoal.worker") != a ||
		tf.Tag("shoal.key") != fromB.Tag("shoal.key") || tf.Tag("shoal.bytes") == "0" {
		t.Errorf("transfer: parent %q, tags %v; want the sum's span %q, from %s to %s, key %s, its bytes",
			tf.Parent(), tf.Tags, total.SpanID, b, a, fromB.Tag("shoal.key"))
	}
	bad := run(opFail, "", "erred")
	if bad.Tag("error") != "true" || bad.Tag("otel.status_code") != "ERROR" ||
		!strings.Contains(bad.Tag("otel.status_description"), "failing on 5") || !bad.HasLog("exception") {
		t.Errorf("erred task: tags %v; want the error status \"failing on 5\" and an exception", bad.Tags)
	}
	if s := comps[bad.Tag("shoal.computation")]; s.Tag("shoal.state") != "erred" || s.Tag("error") != "true" {
		t.Errorf("the failed computation: tags %v, want state erred and error", s.Tags)
	}
}

// TestClusterMetricsAndLogsOverOTLP exports a cluster's metrics and the
// workers' logs, through the scheduler, to an OTLP receiver.
func TestClusterMetricsAndLogsOverOTLP(t *testing.T) {
	r := otlptest.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lc, c := otelCluster(t, ctx, otlp.Export(otlp.WithEndpoint(r.GRPCEndpoint(), otlp.ProtocolGRPC)))
	f, err := c.SubmitCall(ctx, fail.Name(), []any{9})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Result(ctx); err == nil {
		t.Fatal("a failing task succeeded")
	}
	c.Close()
	if err := lc.Close(); err != nil {
		t.Fatal(err)
	}
	var worker string
	for _, p := range otlptest.Points(r.Metrics(), "shoal.tasks") {
		if p.Attrs["shoal.prefix"] == "distributed_test.fail" && p.Attrs["shoal.state"] == "erred" && p.Value == 1 {
			worker = p.Attrs["shoal.worker"]
		}
	}
	if worker == "" {
		t.Fatalf("no erred run of distributed_test.fail in shoal.tasks: %+v", otlptest.Points(r.Metrics(), "shoal.tasks"))
	}
	var logs []string
	found := false
	for _, l := range otlptest.Records(r.Logs()) {
		logs = append(logs, fmt.Sprintf("%s %s %v", l.Severity, l.Body, l.Attrs))
		if l.Body == "task failed" && l.Attrs["worker"] == worker && strings.Contains(l.Attrs["error"], "failing on 9") {
			found = true
		}
	}
	if !found {
		t.Errorf("no \"task failed\" record of worker %s among the logs exported:\n%s", worker, strings.Join(logs, "\n"))
	}
}
