package otelshoal

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/graph"
)

// runEvents are what an executor publishes for a computation of two
// tasks on two workers, one of which fails after getting its input from
// the other worker.
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

func TestOffWithoutProviders(t *testing.T) {
	hub := diagnostics.NewHub()
	defer hub.Close()
	ctx := context.Background()
	shutdown := 0
	nothing := WithSetup(func(context.Context, Signals) (Providers, error) {
		return Providers{Shutdown: func(context.Context) error { shutdown++; return nil }}, nil
	})
	for _, opts := range [][]Option{nil, {nothing}} {
		e, err := Start(ctx, hub, opts...)
		if err != nil || e != nil {
			t.Fatalf("Start = %v, %v; want nil, nil", e, err)
		}
		if hub.Active() {
			t.Error("the hub has a subscriber though nothing is exported")
		}
		if e.Tracing() || e.LogHandler() != nil || e.Shutdown(ctx) != nil {
			t.Error("a nil Exporter does something")
		}
	}
	if shutdown != 1 {
		t.Errorf("the setup's providers were shut down %d times, want once", shutdown)
	}
}

// TestSetup has a Setup make the providers of the signals given none, and
// shuts them down with the Exporter.
func TestSetup(t *testing.T) {
	mine := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(mine))
	defer tp.Shutdown(context.Background())
	tests := []struct {
		name string
		opts []Option
		need Signals
	}{
		{"every signal", nil, Signals{true, true, true}},
		{"all but the traces given", []Option{WithTracerProvider(tp)}, Signals{false, true, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hub := diagnostics.NewHub()
			defer hub.Close()
			ctx := context.Background()
			var need Signals
			reader := sdkmetric.NewManualReader()
			made := sdktrace.NewTracerProvider()
			shut := false
			setup := WithSetup(func(_ context.Context, n Signals) (Providers, error) {
				need = n
				return Providers{Tracer: made, Meter: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
					Shutdown: func(ctx context.Context) error { shut = true; return made.Shutdown(ctx) }}, nil
			})
			e, err := Start(ctx, hub, append(tt.opts, setup)...)
			if err != nil {
				t.Fatal(err)
			}
			if need != tt.need {
				t.Errorf("setup asked for %+v, want %+v", need, tt.need)
			}
			if !e.Tracing() || e.LogHandler() != nil {
				t.Errorf("tracing %v, log handler %v: want tracing, no logs", e.Tracing(), e.LogHandler())
			}
			if err := e.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			if !shut {
				t.Error("the setup's providers were not shut down")
			}
		})
	}
}

func TestSetupFails(t *testing.T) {
	hub := diagnostics.NewHub()
	defer hub.Close()
	_, err := Start(context.Background(), hub, WithSetup(func(context.Context, Signals) (Providers, error) {
		return Providers{}, fmt.Errorf("OTEL_TRACES_EXPORTER=%q", "zipkin")
	}))
	if err == nil || !strings.Contains(err.Error(), "zipkin") {
		t.Errorf("Start: %v, want the setup's error", err)
	}
	if hub.Active() {
		t.Error("a failed Start left a subscriber")
	}
}

// TestOwnProviders sends spans to a provider of the caller's, which
// Shutdown flushes but leaves running.
func TestOwnProviders(t *testing.T) {
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

func TestMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	hub := diagnostics.NewHub()
	defer hub.Close()
	ctx := context.Background()
	e, err := Start(ctx, hub, WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	hub.Publish(runEvents()...)
	if err := e.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			got[m.Name] = points(m.Data)
		}
	}
	want := map[string][]string{
		"shoal.tasks":            {"prefix=load state=memory worker=w1 1", "prefix=sum state=erred worker=w2 1"},
		"shoal.task.duration":    {"prefix=load state=memory n=1 sum=0.25", "prefix=sum state=erred n=1 sum=0.03"},
		"shoal.task.result.size": {"prefix=load 4096"},
		"shoal.transfer.size":    {"from=w1 worker=w2 4096"},
		"shoal.computations":     {"state=erred 1"},
		"shoal.spill.size":       {"direction=write worker=w1 4096"},
		"shoal.workers":          {"2"},
		"shoal.activity.time":    {"activity=compute prefix=load worker=w1 0.25"},
		"shoal.activity.size":    {"activity=transfer-in prefix=sum worker=w2 4096"},
		"shoal.activity.count":   nil, // no counts; "rows" is a unit of the tasks' own
	}
	for name, w := range want {
		if g := got[name]; !slices.Equal(g, w) {
			t.Errorf("%s: %q, want %q", name, g, w)
		}
	}
}

// points writes the data points of a metric as "attr=value ... value",
// sorted.
func points(data metricdata.Aggregation) []string {
	var out []string
	line := func(set attribute.Set, value string) {
		var parts []string
		for _, kv := range set.ToSlice() {
			parts = append(parts, strings.TrimPrefix(string(kv.Key), "shoal.")+"="+kv.Value.Emit())
		}
		out = append(out, strings.Join(append(parts, value), " "))
	}
	switch d := data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			line(p.Attributes, fmt.Sprint(p.Value))
		}
	case metricdata.Sum[float64]:
		for _, p := range d.DataPoints {
			line(p.Attributes, fmt.Sprint(p.Value))
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			line(p.Attributes, fmt.Sprintf("n=%d sum=%g", p.Count, float64(int(p.Sum*1000+0.5))/1000))
		}
	}
	slices.Sort(out)
	return out
}

// TestLogHandler sends records through LogHandler: those from Info up,
// with keys and other named strings as strings.
func TestLogHandler(t *testing.T) {
	sink := &logSink{}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(sink)))
	defer lp.Shutdown(context.Background())
	hub := diagnostics.NewHub()
	defer hub.Close()
	e, err := Start(context.Background(), hub, WithLoggerProvider(lp))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Shutdown(context.Background())
	if hub.Active() {
		t.Error("exporting logs only, the exporter subscribed to events")
	}
	l := slog.New(e.LogHandler())
	l.Debug("below Info: not exported")
	l.With("key", graph.NewKey("sum", "3fa2c1d0")).Warn("disk full", "worker", "w2",
		slog.Group("disk", "path", graph.Key("/data"), "free", 0))
	want := []string{`WARN disk full: disk={"free":0,"path":"/data"} key=sum-3fa2c1d0 worker=w2`}
	if got := sink.lines(); !slices.Equal(got, want) {
		t.Errorf("records %q, want %q", got, want)
	}
}

// logSink is a log exporter that keeps records as lines.
type logSink struct {
	mu   sync.Mutex
	recs []string
}

func (s *logSink) Export(_ context.Context, recs []sdklog.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range recs {
		attrs := map[string]string{}
		r.WalkAttributes(func(kv attribute.KeyValue) bool {
			attrs[string(kv.Key)] = kv.Value.Emit()
			return true
		})
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(attrs)) {
			parts = append(parts, k+"="+attrs[k])
		}
		s.recs = append(s.recs, fmt.Sprintf("%s %s: %s", r.SeverityText(), r.Body().Emit(), strings.Join(parts, " ")))
	}
	return nil
}

func (s *logSink) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.recs)
}

func (*logSink) Shutdown(context.Context) error   { return nil }
func (*logSink) ForceFlush(context.Context) error { return nil }
