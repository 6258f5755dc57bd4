package otelshoal

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/internal/otlptest"
)

// runEvents are what an executor publishes for a computation of two
// tasks, one of which fails, on two workers.
func runEvents() []diagnostics.Event {
	load := graph.NewKey("load", "3fa2c1d0", 0)
	sum := graph.NewKey("sum", "3fa2c1d0")
	ok := ran(1, load, "w1", 1, 250, diagnostics.StateMemory)
	ok.Bytes = 4096
	bad := ran(1, sum, "w2", 260, 30, diagnostics.StateErred)
	bad.Err = "boom"
	bad.Inputs = []diagnostics.Transfer{{Key: load, From: "w1", Start: at(255), Duration: 4 * time.Millisecond,
		Bytes: 4096}}
	return []diagnostics.Event{
		{Time: at(0), Kind: diagnostics.WorkerAdded, Worker: "w1"},
		{Time: at(0), Kind: diagnostics.WorkerAdded, Worker: "w2"},
		started(1, 0), ok,
		{Time: at(252), Kind: diagnostics.Spill, Worker: "w1", Key: load, Bytes: 4096},
		bad, finished(1, 300, "task sum failed"),
		{Time: at(300), Kind: diagnostics.Metrics, Metrics: []diagnostics.FineMetric{
			{Worker: "w1", Prefix: "load", Activity: diagnostics.ActivityCompute, Unit: diagnostics.UnitSeconds, Value: 0.25},
			{Worker: "w2", Prefix: "sum", Activity: diagnostics.ActivityTransferIn, Unit: diagnostics.UnitBytes, Value: 4096},
			{Worker: "w2", Prefix: "sum", Activity: "rows", Unit: "rows", Value: 10}}},
	}
}

// TestOTLP exports spans, metrics and logs to an OTLP receiver, over both
// protocols, as WithOTLP and as the environment ask.
func TestOTLP(t *testing.T) {
	r := otlptest.New(t)
	tests := []struct {
		name    string
		env     map[string]string
		opts    []Option
		service string
		logs    bool
	}{
		{name: "WithOTLP over gRPC", opts: []Option{WithOTLP(r.GRPCEndpoint(), ProtocolGRPC), WithServiceName("a")},
			service: "a", logs: true},
		{name: "WithOTLP over HTTP", opts: []Option{WithOTLP(r.HTTPEndpoint(), ProtocolHTTP), WithServiceName("b")},
			service: "b", logs: true},
		{name: "the environment, gRPC, no logs",
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": r.GRPCEndpoint(), "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
				"OTEL_SERVICE_NAME": "c", "OTEL_LOGS_EXPORTER": "none"},
			service: "c"},
		{name: "the environment, HTTP, default name",
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": r.HTTPEndpoint()}, service: DefaultServiceName,
			logs: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			hub := diagnostics.NewHub()
			defer hub.Close()
			ctx := context.Background()
			e, err := Start(ctx, hub, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if !e.Tracing() {
				t.Fatal("not tracing")
			}
			hub.Publish(runEvents()...)
			h := e.LogHandler()
			if (h != nil) != tt.logs {
				t.Fatalf("LogHandler() = %v, want one: %v", h, tt.logs)
			}
			if h != nil {
				l := slog.New(h)
				l.Debug("below Info: not exported")
				l.With("key", graph.NewKey("sum", "3fa2c1d0")).Warn("disk full", "worker", "w2",
					slog.Group("disk", "path", graph.Key("/data")))
			}
			if err := e.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}

			// Spans: the computation, two runs, a transfer.
			names := map[string]int{}
			for _, rs := range r.Spans() {
				if service(rs.GetResource().GetAttributes()) != tt.service {
					continue
				}
				for _, ss := range rs.ScopeSpans {
					for _, s := range ss.Spans {
						names[s.Name]++
					}
				}
			}
			if want := map[string]int{"compute": 1, "task load": 1, "task sum": 1, "transfer": 1}; !equalMaps(names, want) {
				t.Errorf("spans %v, want %v", names, want)
			}

			// Metrics.
			ms := r.Metrics()
			want := map[string][]string{
				"shoal.tasks":            {"a/prefix=load state=memory worker=w1 1", "a/prefix=sum state=erred worker=w2 1"},
				"shoal.task.duration":    {"a/prefix=load state=memory n=1 sum=0.25", "a/prefix=sum state=erred n=1 sum=0.03"},
				"shoal.task.result.size": {"a/prefix=load 4096"},
				"shoal.transfer.size":    {"a/from=w1 worker=w2 4096"},
				"shoal.computations":     {"a/state=erred 1"},
				"shoal.spill.size":       {"a/direction=write worker=w1 4096"},
				"shoal.workers":          {"a/2"},
				"shoal.activity.time":    {"a/activity=compute prefix=load worker=w1 0.25"},
				"shoal.activity.size":    {"a/activity=transfer-in prefix=sum worker=w2 4096"},
			}
			for name, w := range want {
				var got []string
				for _, p := range otlptest.Points(ms, name) {
					if p.Service == tt.service {
						got = append(got, point(p))
					}
				}
				for i := range w {
					w[i] = tt.service + w[i][1:]
				}
				if !equalSets(got, w) {
					t.Errorf("%s: %q, want %q", name, got, w)
				}
			}

			// Logs.
			var logs []otlptest.Record
			for _, l := range otlptest.Records(r.Logs()) {
				if l.Service == tt.service {
					logs = append(logs, l)
				}
			}
			switch {
			case !tt.logs && len(logs) > 0:
				t.Errorf("logs exported: %+v", logs)
			case tt.logs && (len(logs) != 1 || logs[0].Body != "disk full" || logs[0].Severity != "WARN" ||
				logs[0].Attrs["worker"] != "w2" || logs[0].Attrs["key"] != "sum-3fa2c1d0" ||
				!strings.Contains(logs[0].Attrs["disk"], `"/data"`)):
				t.Errorf("logs %+v, want one WARN \"disk full\" with worker=w2, key=sum-3fa2c1d0, disk.path=/data", logs)
			}
		})
	}
}

// TestOwnProviders sends spans to a provider of the caller's, which
// Shutdown flushes but leaves running.
func TestOwnProviders(t *testing.T) {
	clearEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1") // not for traces: they have a provider
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
	t.Setenv("OTEL_LOGS_EXPORTER", "none")
	mem := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(mem, sdktrace.WithBatchTimeout(time.Hour)))
	defer tp.Shutdown(context.Background())
	hub := diagnostics.NewHub()
	defer hub.Close()
	ctx := context.Background()
	e, err := Start(ctx, hub, WithTracerProvider(tp))
	if err != nil {
		t.Fatal(err)
	}
	hub.Publish(runEvents()...)
	if err := e.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(mem.GetSpans()); n != 4 {
		t.Fatalf("%d spans flushed by Shutdown, want 4", n)
	}
	_, s := tp.Tracer("after").Start(ctx, "still running")
	s.End()
	if err := tp.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(mem.GetSpans()); n != 5 {
		t.Errorf("%d spans after Shutdown, want 5: the provider was shut down", n)
	}
}

func service(kvs []*commonpb.KeyValue) string {
	for _, kv := range kvs {
		if kv.Key == "service.name" {
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}

// point writes a data point as "service/attr=value ... value".
func point(p otlptest.Point) string {
	keys := slices.Sorted(maps.Keys(p.Attrs))
	var b strings.Builder
	b.WriteString(p.Service + "/")
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%s", strings.TrimPrefix(k, "shoal."), p.Attrs[k])
	}
	if len(keys) > 0 {
		b.WriteByte(' ')
	}
	if p.Count > 0 {
		fmt.Fprintf(&b, "n=%d sum=%g", p.Count, math.Round(p.Sum*1000)/1000)
	} else {
		fmt.Fprintf(&b, "%g", p.Value)
	}
	return b.String()
}

func equalMaps(a, b map[string]int) bool { return maps.Equal(a, b) }

func equalSets(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestBurstOfSpans ends many runs at once while the collector is slow:
// none of their spans is dropped.
func TestBurstOfSpans(t *testing.T) {
	clearEnv(t)
	r := otlptest.New(t)
	hub := diagnostics.NewHub()
	defer hub.Close()
	ctx := context.Background()
	e, err := Start(ctx, hub, WithOTLP(r.HTTPEndpoint(), ProtocolHTTP), WithServiceName("burst"))
	if err != nil {
		t.Fatal(err)
	}
	release := r.Hold()
	const runs = 10_000 // far more than the SDK's queue of 2048 spans
	evs := []diagnostics.Event{started(1, 0)}
	for i := range runs {
		evs = append(evs, ran(1, graph.NewKey("load", "3fa2c1d0", i), "w1", 1, 1, diagnostics.StateMemory))
	}
	hub.Publish(evs...)
	e.sub.Flush() // every span is made while the collector holds the first export
	release()
	if err := e.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, rs := range r.Spans() {
		for _, ss := range rs.ScopeSpans {
			n += len(ss.Spans)
		}
	}
	if n != runs+1 {
		t.Errorf("%d spans exported, want %d", n, runs+1)
	}
}
