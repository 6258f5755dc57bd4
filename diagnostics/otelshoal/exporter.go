package otelshoal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
		e.logs = otelslog.NewHandler(scope, otelslog.WithLoggerProvider(c.logger))
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

// LogHandler returns a handler that exports the records it is given as
// OpenTelemetry logs, or nil when logs are not exported. Its records keep
// their attributes; slog levels become OpenTelemetry severities.
func (e *Exporter) LogHandler() slog.Handler {
	if e == nil || e.logs == nil {
		return nil
	}
	return e.logs
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
