package otelshoal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"time"

	"go.opentelemetry.io/contrib/bridges/otelslog"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/shoal-data/shoal/diagnostics"
)

// scope is the instrumentation scope of Shoal's spans, metrics and logs.
const scope = "github.com/shoal-data/shoal"

// Exporter turns the events an executor publishes on its hub into
// OpenTelemetry spans and metrics, and gives a slog.Handler that turns log
// records into OpenTelemetry logs. Make one with Start; Shutdown ends it.
type Exporter struct {
	cfg    *config
	own    *providers
	sub    *diagnostics.Subscription
	spans  *spanMaker // nil when spans are not exported
	meters *meters    // nil when metrics are not exported
	logs   slog.Handler
}

// Start starts exporting what hub's executor does: the signals given a
// provider (WithTracerProvider, WithMeterProvider, WithLoggerProvider) go
// to it, and the others over OTLP when WithOTLP or the OTEL_* environment
// variables ask for it (see the package documentation). When nothing is
// to be exported, Start returns a nil *Exporter, whose methods do nothing:
// by default, nothing is exported and nothing is dialled.
func Start(ctx context.Context, hub *diagnostics.Hub, opts ...Option) (*Exporter, error) {
	c := newConfig(opts)
	own, err := c.build(ctx)
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry: %w", err)
	}
	if c.tracer == nil && c.meter == nil && c.logger == nil {
		return nil, nil
	}
	e := &Exporter{cfg: c, own: own}
	if c.tracer != nil {
		e.spans = newSpanMaker(c.tracer.Tracer(scope))
	}
	if c.meter != nil {
		if e.meters, err = newMeters(c.meter.Meter(scope)); err != nil {
			own.shutdown(ctx)
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
// ends the spans of computations still under way, and flushes what was
// exported: it shuts down the providers Start made, and flushes those it
// was given (when they have a ForceFlush method, as the SDK's do) without
// shutting them down. It waits until ctx is done at most.
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
	for _, p := range []any{e.cfg.tracer, e.cfg.meter, e.cfg.logger} {
		if f, ok := p.(flusher); ok && !e.owns(p) {
			errs = append(errs, f.ForceFlush(ctx))
		}
	}
	errs = append(errs, e.own.shutdown(ctx))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("OpenTelemetry: %w", err)
	}
	return nil
}

// owns says whether p is a provider Start made.
func (e *Exporter) owns(p any) bool {
	o := e.own
	return o.tracer != nil && p == any(o.tracer) || o.meter != nil && p == any(o.meter) ||
		o.logger != nil && p == any(o.logger)
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
