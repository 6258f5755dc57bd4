// Package otlp exports what Shoal does over OTLP with the OpenTelemetry
// SDK, configured by the standard OTEL_* environment variables or by
// options: Export is an option of package otelshoal (and so of
// local.WithOpenTelemetry and server.Config.OpenTelemetry) that makes
// the SDK's providers for the signals given no provider of their own.
//
// A signal is exported when WithEndpoint says where, when
// OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER or OTEL_LOGS_EXPORTER is
// "otlp", or when it is unset and an endpoint is set
// (OTEL_EXPORTER_OTLP_ENDPOINT, or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and
// the like); "none" turns one off, and OTEL_SDK_DISABLED=true all of them.
// Nothing is exported, and nothing dialled, when they say nothing.
// OTEL_EXPORTER_OTLP_PROTOCOL chooses "grpc" or "http/protobuf" (the
// default); OTEL_SERVICE_NAME names the service (default "shoal"),
// OTEL_RESOURCE_ATTRIBUTES describes it, and the SDK reads the rest
// (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _CERTIFICATE,
// OTEL_TRACES_SAMPLER, OTEL_BSP_*, OTEL_METRIC_EXPORT_INTERVAL...). Errors
// of the exporters go to OpenTelemetry's error handler
// (otel.SetErrorHandler).
//
// The scheduler of a cluster exports as Export says without being told;
// the in-process executor when given it:
//
//	exec := local.New(local.WithOpenTelemetry(otlp.Export()))
package otlp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/shoal-data/shoal/diagnostics/otelshoal"
)

// DefaultServiceName is the service.name of what is exported when neither
// WithServiceName nor OTEL_SERVICE_NAME names one.
const DefaultServiceName = "shoal"

// SpanQueueSize is how many spans wait for export before new ones are
// dropped, unless OTEL_BSP_MAX_QUEUE_SIZE says otherwise: more than the
// SDK's default (2048), since the runs of a large graph end in bursts of
// many thousand spans.
const SpanQueueSize = 1 << 15

// The OTLP protocols, as OTEL_EXPORTER_OTLP_PROTOCOL names them.
const (
	ProtocolGRPC = "grpc"
	ProtocolHTTP = "http/protobuf"
)

// Option configures Export.
type Option func(*config)

type config struct {
	endpoint string // WithEndpoint's
	protocol string
	service  string
	getenv   func(string) string
}

// WithEndpoint exports every signal over OTLP to endpoint, whatever the
// OTEL_*_EXPORTER variables say. endpoint is a URL such as
// "http://collector:4318" ("https" for TLS), as in
// OTEL_EXPORTER_OTLP_ENDPOINT: over HTTP the signal's path (/v1/traces,
// /v1/metrics, /v1/logs) is added to it. protocol is ProtocolGRPC or
// ProtocolHTTP; empty, OTEL_EXPORTER_OTLP_PROTOCOL decides, and HTTP when
// it is not set. The other OTEL_EXPORTER_OTLP_* variables (headers,
// timeout, compression, certificates) still apply.
func WithEndpoint(endpoint, protocol string) Option {
	return func(c *config) { c.endpoint, c.protocol = endpoint, protocol }
}

// WithServiceName sets the service.name of what is exported (by default
// OTEL_SERVICE_NAME's, or DefaultServiceName).
func WithServiceName(name string) Option {
	return func(c *config) { c.service = name }
}

// Export returns an option of otelshoal.Start that exports the signals
// given no provider of their own over OTLP, as opts and the OTEL_*
// variables say (see the package documentation), with providers of the
// SDK that the Exporter shuts down. The variables are read when the
// Exporter starts.
func Export(opts ...Option) otelshoal.Option {
	c := &config{getenv: os.Getenv}
	for _, o := range opts {
		o(c)
	}
	return otelshoal.WithSetup(c.build)
}

// The signals, as the OTEL_* variables name them.
type signal struct {
	name     string // "traces"
	exporter string // OTEL_TRACES_EXPORTER
	endpoint string // OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
	protocol string // OTEL_EXPORTER_OTLP_TRACES_PROTOCOL
	path     string // "/v1/traces"
}

func newSignal(name string) signal {
	up := strings.ToUpper(name)
	return signal{name: name, exporter: "OTEL_" + up + "_EXPORTER", endpoint: "OTEL_EXPORTER_OTLP_" + up + "_ENDPOINT",
		protocol: "OTEL_EXPORTER_OTLP_" + up + "_PROTOCOL", path: "/v1/" + name}
}

var (
	tracesSignal  = newSignal("traces")
	metricsSignal = newSignal("metrics")
	logsSignal    = newSignal("logs")
)

// exported says whether a signal is exported, and with which protocol.
// Without WithEndpoint, the environment decides as the OpenTelemetry
// specification says, except that nothing is exported when it says
// nothing: a signal is exported when OTEL_<SIGNAL>_EXPORTER is "otlp", or
// when it is unset and an OTLP endpoint is (OTEL_EXPORTER_OTLP_ENDPOINT or
// the signal's own); never when OTEL_SDK_DISABLED is true.
func (c *config) exported(s signal) (protocol string, on bool, err error) {
	protocol = c.protocol
	if protocol == "" {
		protocol = c.getenv(s.protocol)
	}
	if protocol == "" {
		protocol = c.getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if protocol == "" {
		protocol = ProtocolHTTP
	}
	if protocol != ProtocolGRPC && protocol != ProtocolHTTP {
		return "", false, fmt.Errorf("OTLP protocol %q for %s: want %q or %q", protocol, s.name, ProtocolGRPC,
			ProtocolHTTP)
	}
	if c.endpoint != "" {
		return protocol, true, nil
	}
	if strings.EqualFold(strings.TrimSpace(c.getenv("OTEL_SDK_DISABLED")), "true") {
		return "", false, nil
	}
	switch name := strings.TrimSpace(c.getenv(s.exporter)); name {
	case "none":
		return "", false, nil
	case "otlp":
		return protocol, true, nil
	case "":
		on := c.getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || c.getenv(s.endpoint) != ""
		return protocol, on, nil
	default:
		return "", false, fmt.Errorf("%s=%q: Shoal exports %s with \"otlp\" or \"none\"", s.exporter, name, s.name)
	}
}

// signalURL returns WithEndpoint's endpoint for a signal, with the
// signal's path added for HTTP; "" without WithEndpoint.
func (c *config) signalURL(s signal, protocol string) (string, error) {
	if c.endpoint == "" {
		return "", nil
	}
	u, err := url.Parse(c.endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("OTLP endpoint %q: want a URL such as http://localhost:4318", c.endpoint)
	}
	if protocol == ProtocolHTTP {
		u.Path = strings.TrimSuffix(u.Path, "/") + s.path
	}
	return u.String(), nil
}

// providers are the SDK providers build made.
type providers struct {
	tracer *sdktrace.TracerProvider
	meter  *sdkmetric.MeterProvider
	logger *sdklog.LoggerProvider
}

// shutdown flushes and stops the providers.
func (p *providers) shutdown(ctx context.Context) error {
	var errs []error
	if p.tracer != nil {
		errs = append(errs, p.tracer.Shutdown(ctx))
	}
	if p.meter != nil {
		errs = append(errs, p.meter.Shutdown(ctx))
	}
	if p.logger != nil {
		errs = append(errs, p.logger.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// build makes an SDK provider exporting over OTLP for each signal that
// otelshoal.Start needs one for and that the options or the environment
// ask to export.
func (c *config) build(ctx context.Context, need otelshoal.Signals) (otelshoal.Providers, error) {
	p := &providers{}
	var res *resource.Resource
	describe := func() (*resource.Resource, error) {
		if res != nil {
			return res, nil
		}
		// Later sources win: the default name, the environment's
		// (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES), WithServiceName.
		opts := []resource.Option{resource.WithTelemetrySDK(),
			resource.WithAttributes(semconv.ServiceName(DefaultServiceName)), resource.WithFromEnv()}
		if c.service != "" {
			opts = append(opts, resource.WithAttributes(semconv.ServiceName(c.service)))
		}
		r, err := resource.New(ctx, opts...)
		if err != nil {
			return nil, fmt.Errorf("describe the service: %w", err)
		}
		res = r
		return r, nil
	}
	var out otelshoal.Providers
	var errs []error
	if need.Traces {
		exp, r, err := newExporter(ctx, c, tracesSignal, c.spanExporter, describe)
		errs = append(errs, err)
		if r != nil {
			var bsp []sdktrace.BatchSpanProcessorOption
			if c.getenv("OTEL_BSP_MAX_QUEUE_SIZE") == "" {
				bsp = append(bsp, sdktrace.WithMaxQueueSize(SpanQueueSize))
			}
			p.tracer = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, bsp...), sdktrace.WithResource(r))
			out.Tracer = p.tracer
		}
	}
	if need.Metrics {
		exp, r, err := newExporter(ctx, c, metricsSignal, c.metricExporter, describe)
		errs = append(errs, err)
		if r != nil {
			p.meter = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)),
				sdkmetric.WithResource(r))
			out.Meter = p.meter
		}
	}
	if need.Logs {
		exp, r, err := newExporter(ctx, c, logsSignal, c.logExporter, describe)
		errs = append(errs, err)
		if r != nil {
			p.logger = sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)),
				sdklog.WithResource(r))
			out.Logger = p.logger
		}
	}
	if err := errors.Join(errs...); err != nil {
		p.shutdown(ctx)
		return otelshoal.Providers{}, err
	}
	out.Shutdown = p.shutdown
	return out, nil
}

// newExporter makes the OTLP exporter of a signal and describes the
// service, when the signal is to be exported; otherwise it returns a nil
// resource.
func newExporter[E any](ctx context.Context, c *config, s signal, newExp func(context.Context, string) (E, error),
	describe func() (*resource.Resource, error)) (E, *resource.Resource, error) {
	var none E
	protocol, on, err := c.exported(s)
	if err != nil || !on {
		return none, nil, err
	}
	r, err := describe()
	if err != nil {
		return none, nil, err
	}
	exp, err := newExp(ctx, protocol)
	if err != nil {
		return none, nil, fmt.Errorf("export %s over OTLP: %w", s.name, err)
	}
	return exp, r, nil
}

func (c *config) spanExporter(ctx context.Context, protocol string) (sdktrace.SpanExporter, error) {
	u, err := c.signalURL(tracesSignal, protocol)
	switch {
	case err != nil:
		return nil, err
	case protocol == ProtocolGRPC && u != "":
		return otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(u))
	case protocol == ProtocolGRPC:
		return otlptracegrpc.New(ctx)
	case u != "":
		return otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(u))
	default:
		return otlptracehttp.New(ctx)
	}
}

func (c *config) metricExporter(ctx context.Context, protocol string) (sdkmetric.Exporter, error) {
	u, err := c.signalURL(metricsSignal, protocol)
	switch {
	case err != nil:
		return nil, err
	case protocol == ProtocolGRPC && u != "":
		return otlpmetricgrpc.New(ctx, otlpmetricgrpc.WithEndpointURL(u))
	case protocol == ProtocolGRPC:
		return otlpmetricgrpc.New(ctx)
	case u != "":
		return otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(u))
	default:
		return otlpmetrichttp.New(ctx)
	}
}

func (c *config) logExporter(ctx context.Context, protocol string) (sdklog.Exporter, error) {
	u, err := c.signalURL(logsSignal, protocol)
	switch {
	case err != nil:
		return nil, err
	case protocol == ProtocolGRPC && u != "":
		return otlploggrpc.New(ctx, otlploggrpc.WithEndpointURL(u))
	case protocol == ProtocolGRPC:
		return otlploggrpc.New(ctx)
	case u != "":
		return otlploghttp.New(ctx, otlploghttp.WithEndpointURL(u))
	default:
		return otlploghttp.New(ctx)
	}
}
