package otelshoal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"time"

	"go.opentelemetry.io/contrib/bridges/otelslog"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/shoal-data/shoal/diagnostics"
)

// scope is the instrumentation scope of Shoal's spans, metrics and logs.
const scope = "github.com/shoal-data/shoal"

// Option configures an Exporter.
type Option func(*config)

type config struct {
	tracer trace.TracerProvider
	meter  metric.MeterProvider
	logger log.LoggerProvider
	setup  Setup
}

// WithTracerProvider sends the spans to tp. The Exporter flushes tp in
// Shutdown, and does not shut it down.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tracer = tp }
}

// WithMeterProvider records the metrics with mp. The Exporter flushes mp
// in Shutdown, and does not shut it down.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.meter = mp }
}

// WithLoggerProvider sends the log records to lp. The Exporter flushes lp
// in Shutdown, and does not shut it down.
func WithLoggerProvider(lp log.LoggerProvider) Option {
	return func(c *config) { c.logger = lp }
}

// Signals names the signals of OpenTelemetry.
type Signals struct {
	Traces, Metrics, Logs bool
}

// Providers are the providers a Setup made. A nil one is a signal not
// exported.
type Providers struct {
	Tracer trace.TracerProvider
	Meter  metric.MeterProvider
	Logger log.LoggerProvider
	// Shutdown flushes and stops them; the Exporter calls it in its own
	// Shutdown.
	Shutdown func(context.Context) error
}

// Setup makes providers, when Start begins, for the signals that need
// one: those not given one by WithTracerProvider, WithMeterProvider or
// WithLoggerProvider. Package otlp's Export is one.
type Setup func(ctx context.Context, need Signals) (Providers, error)

// WithSetup has setup make the providers of the signals given none (the
// last WithSetup wins).
func WithSetup(setup Setup) Option {
	return func(c *config) { c.setup = setup }
}

// Exporter turns the events an executor publishes on its hub into
// OpenTelemetry spans and metrics, and gives a slog.Handler that turns log
// records into OpenTelemetry logs. Make one with Start; Shutdown ends it.
type Exporter struct {
	given  []any                       // the providers given, which Shutdown flushes
	own    func(context.Context) error // shuts down the providers of the Setup, or nil
	sub    *diagnostics.Subscription
	spans  *spanMaker // nil when spans are not exported
	meters *meters    // nil when metrics are not exported
	logs   slog.Handler
}

// Start starts exporting what hub's executor does to the providers
// given, and to those WithSetup makes for the other signals. When no
// signal has a provider, Start returns a nil *Exporter, whose methods do
// nothing: without options, nothing is exported.
func Start(ctx context.Context, hub *diagnostics.Hub, opts ...Option) (*Exporter, error) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	given := []any{c.tracer, c.meter, c.logger}
	var own func(context.Context) error
	if need := (Signals{Traces: c.tracer == nil, Metrics: c.meter == nil, Logs: c.logger == nil}); c.setup != nil &&
		(need.Traces || need.Metrics || need.Logs) {
		p, err := c.setup(ctx, need)
		if err != nil {
			return nil, fmt.Errorf("OpenTelemetry: %w", err)
		}
		own = p.Shutdown
		if need.Traces {
			c.tracer = p.Tracer
		}
		if need.Metrics {
			c.meter = p.Meter
		}
		if need.Logs {
			c.logger = p.Logger
		}
	}
	if c.tracer == nil && c.meter == nil && c.logger == nil {
		if own != nil {
			own(ctx)
		}
		return nil, nil
	}
	e := &Exporter{given: given, own: own}
	if c.tracer != nil {
		e.spans = newSpanMaker(c.tracer.Tracer(scope))
	}
	if c.meter != nil {
		var err error
		if e.meters, err = newMeters(c.meter.Meter(scope)); err != nil {
			if own != nil {
				own(ctx)
			}
			return nil, fmt.Errorf("OpenTelemetry: make the metrics: %w", err)
		}
	}
	if c.logger != nil {
		e.logs = logHandler{otelslog.NewHandler(scope, otelslog.WithLoggerProvider(c.logger)), slog.LevelInfo}
	}
	if e.spans != nil || e.meters != nil {
		e.sub = hub.Subscribe(e.handle)
	}
	return e, nil
}

func (e *Exporter) handle(evs []diagnostics.Event) {
	if e.spans != nil {
		e.spans.handle(evs)
	}
	if e.meters != nil {
		e.meters.handle(evs)
	}
}

// Flush waits until the events published on the hub before the call are
// spans and metrics. They are not exported yet: the providers send them
// in batches (Shutdown flushes them).
func (e *Exporter) Flush() {
	if e != nil && e.sub != nil {
		e.sub.Flush()
	}
}

// Tracing reports whether spans are exported.
func (e *Exporter) Tracing() bool { return e != nil && e.spans != nil }

// LogHandler returns a handler that exports the records it is given at
// level Info and above as OpenTelemetry logs, or nil when logs are not
// exported. Its records keep their attributes; slog levels become
// OpenTelemetry severities.
func (e *Exporter) LogHandler() slog.Handler {
	if e == nil || e.logs == nil {
		return nil
	}
	return e.logs
}

// logHandler passes records at level min and above to the bridge to
// OpenTelemetry, with values of named string types (such as graph.Key)
// and fmt.Stringers as strings, which the bridge would write as
// "unhandled: (type) value".
type logHandler struct {
	slog.Handler
	min slog.Level
}

func (h logHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h logHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < h.min {
		return nil
	}
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(plain(a))
		return true
	})
	return h.Handler.Handle(ctx, out)
}

func (h logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	plains := make([]slog.Attr, len(as))
	for i, a := range as {
		plains[i] = plain(a)
	}
	return logHandler{h.Handler.WithAttrs(plains), h.min}
}

func (h logHandler) WithGroup(name string) slog.Handler {
	return logHandler{h.Handler.WithGroup(name), h.min}
}

// plain turns values of named string types and fmt.Stringers into
// strings, in groups too.
func plain(a slog.Attr) slog.Attr {
	switch a.Value.Kind() {
	case slog.KindGroup:
		g := a.Value.Group()
		out := make([]any, len(g))
		for i, x := range g {
			out[i] = plain(x)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		switch v := a.Value.Any().(type) {
		case error, []byte:
		case fmt.Stringer:
			return slog.String(a.Key, v.String())
		default:
			if rv := reflect.ValueOf(v); rv.Kind() == reflect.String {
				return slog.String(a.Key, rv.String())
			}
		}
	}
	return a
}

// Shutdown turns the events published until now into spans and metrics,
// ends the spans of computations still under way, flushes the providers
// given (those that have a ForceFlush method, as the SDK's do) and shuts
// down those of the Setup. It waits until ctx is done at most.
func (e *Exporter) Shutdown(ctx context.Context) error {
	if e == nil {
		return nil
	}
	if e.sub != nil {
		e.sub.Close()
	}
	if e.spans != nil {
		e.spans.close(time.Now())
	}
	type flusher interface{ ForceFlush(context.Context) error }
	var errs []error
	for _, p := range e.given {
		if f, ok := p.(flusher); ok {
			errs = append(errs, f.ForceFlush(ctx))
		}
	}
	if e.own != nil {
		errs = append(errs, e.own(ctx))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("OpenTelemetry: %w", err)
	}
	return nil
}

// Traceparent returns the W3C traceparent of the span in ctx, or "" when
// ctx has none. Executors put it in the ComputeStarted event of a
// computation, so that its span is a child of the caller's.
func Traceparent(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c.Get("traceparent")
}
