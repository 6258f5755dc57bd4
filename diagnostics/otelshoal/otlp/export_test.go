package otlp

import (
	"context"
	"log/slog"
	"testing"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/diagnostics/otelshoal"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/internal/otlptest"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// events are those of a computation with n runs of tasks.
func events(n int) []diagnostics.Event {
	evs := []diagnostics.Event{{Time: t0, Kind: diagnostics.ComputeStarted, Compute: 1, Tasks: map[string]int{"load": n}}}
	for i := range n {
		k := graph.NewKey("load", "3fa2c1d0", i)
		evs = append(evs, diagnostics.Event{Time: t0.Add(2 * time.Millisecond), Kind: diagnostics.TaskTransition,
			Compute: 1, Key: k, Prefix: k.Prefix(), From: diagnostics.StateProcessing, To: diagnostics.StateMemory,
			Worker: "w1", Start: t0.Add(time.Millisecond), Duration: time.Millisecond, Bytes: 8})
	}
	return append(evs, diagnostics.Event{Time: t0.Add(3 * time.Millisecond), Kind: diagnostics.ComputeFinished,
		Compute: 1})
}

// TestOTLP exports spans, metrics and logs to an OTLP receiver, over both
// protocols, as WithEndpoint and as the environment ask.
func TestOTLP(t *testing.T) {
	r := otlptest.New(t)
	tests := []struct {
		name    string
		env     map[string]string
		opts    []Option
		service string
		logs    bool
	}{
		{name: "WithEndpoint over gRPC", opts: []Option{WithEndpoint(r.GRPCEndpoint(), ProtocolGRPC), WithServiceName("a")},
			service: "a", logs: true},
		{name: "WithEndpoint over HTTP", opts: []Option{WithEndpoint(r.HTTPEndpoint(), ProtocolHTTP), WithServiceName("b")},
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
			e, err := otelshoal.Start(ctx, hub, Export(tt.opts...))
			if err != nil {
				t.Fatal(err)
			}
			if !e.Tracing() {
				t.Fatal("not tracing")
			}
			hub.Publish(events(2)...)
			h := e.LogHandler()
			if (h != nil) != tt.logs {
				t.Fatalf("LogHandler() = %v, want one: %v", h, tt.logs)
			}
			if h != nil {
				slog.New(h).Warn("disk full", "worker", "w2")
			}
			if err := e.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}

			spans := 0
			for _, rs := range r.Spans() {
				if service(rs.GetResource().GetAttributes()) == tt.service {
					for _, ss := range rs.ScopeSpans {
						spans += len(ss.Spans)
					}
				}
			}
			if spans != 3 {
				t.Errorf("%d spans of %s, want 3: the computation and its two runs", spans, tt.service)
			}
			runs := 0.0
			for _, p := range otlptest.Points(r.Metrics(), "shoal.tasks") {
				if p.Service == tt.service {
					runs += p.Value
				}
			}
			if runs != 2 {
				t.Errorf("shoal.tasks of %s: %g, want 2", tt.service, runs)
			}
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
				logs[0].Attrs["worker"] != "w2"):
				t.Errorf("logs %+v, want one WARN \"disk full\" with worker=w2", logs)
			}
		})
	}
}

// TestBurstOfSpans ends many runs at once while the collector is slow:
// none of their spans is dropped.
func TestBurstOfSpans(t *testing.T) {
	clearEnv(t)
	r := otlptest.New(t)
	hub := diagnostics.NewHub()
	defer hub.Close()
	ctx := context.Background()
	e, err := otelshoal.Start(ctx, hub, Export(WithEndpoint(r.HTTPEndpoint(), ProtocolHTTP), WithServiceName("burst")))
	if err != nil {
		t.Fatal(err)
	}
	release := r.Hold()
	const runs = 10_000 // far more than the SDK's queue of 2048 spans
	hub.Publish(events(runs)...)
	e.Flush() // every span is made while the collector holds the first export
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

func service(kvs []*commonpb.KeyValue) string {
	for _, kv := range kvs {
		if kv.Key == "service.name" {
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}
