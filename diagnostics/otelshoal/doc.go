// Package otelshoal exports what Shoal computations do to OpenTelemetry:
// traces, metrics and logs, to providers you give or over OTLP to a
// collector (Jaeger, Tempo, the OpenTelemetry Collector...).
//
// The in-process executor takes it as local.WithOpenTelemetry, a cluster's
// scheduler as server.Config.OpenTelemetry, `shoal scheduler` as the
// --otlp-endpoint flag; each exports what it runs. With a tracer
// provider of your own, Shoal's spans join your traces:
//
//	exec := local.New(local.WithOpenTelemetry(otelshoal.WithTracerProvider(tp)))
//
// # Traces
//
// A computation (a Compute or Submit) is a span named "compute", from its
// submission to its end. When the context given to Compute or Submit
// carries a span, the computation's span is its child, on a cluster too,
// so that a service's trace goes on into Shoal. Each run of a task is a
// span named "task " and the key's prefix (such as "task read-csv"),
// child of its computation's, with the attributes shoal.key, shoal.prefix,
// shoal.worker, shoal.computation, shoal.state ("memory", "erred" or
// "cancelled") and, for a result, shoal.bytes; a run that failed has the
// status Error, its error as an exception event, and shoal.op. On a
// cluster, each input a worker got from another worker for a run is a
// span named "transfer" (shoal.from, shoal.worker, shoal.bytes, and
// shoal.key for a value; without it, what the task read of the other
// worker's shuffle files), child of the run that needed it; other runs on
// that worker that used the same value link to it. Spans carry the times
// the executor measured, not those at which they were exported.
//
// # Metrics
//
// shoal.tasks (runs ended, by prefix, worker and state), shoal.task.duration
// (a histogram, by prefix and state), shoal.task.result.size,
// shoal.transfer.size, shoal.computations, shoal.spill.size, shoal.workers,
// and the fine performance metrics as shoal.activity.time,
// shoal.activity.size and shoal.activity.count (by worker, prefix and
// activity).
//
// # Logs
//
// Exporter.LogHandler turns slog records into OpenTelemetry logs: the
// executor's and, on a cluster, the scheduler's and the workers' (with a
// worker attribute).
//
// # Configuration
//
// A signal given a provider (WithTracerProvider, WithMeterProvider,
// WithLoggerProvider) goes there. The others are exported over OTLP with
// the OpenTelemetry SDK when WithOTLP asks for it, or when the standard
// environment variables do; by default nothing is exported and nothing is
// dialled. A signal is exported when OTEL_TRACES_EXPORTER,
// OTEL_METRICS_EXPORTER or OTEL_LOGS_EXPORTER is "otlp", or when it is
// unset and an endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT, or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and the like); "none" turns one off,
// and OTEL_SDK_DISABLED=true all of them. OTEL_EXPORTER_OTLP_PROTOCOL
// chooses "grpc" or "http/protobuf" (the default); OTEL_SERVICE_NAME names
// the service (default "shoal"), OTEL_RESOURCE_ATTRIBUTES describes it,
// and the SDK reads the rest (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT,
// _CERTIFICATE, OTEL_TRACES_SAMPLER, OTEL_BSP_*, OTEL_METRIC_EXPORT_INTERVAL...).
// Errors of the exporters go to OpenTelemetry's error handler
// (otel.SetErrorHandler).
package otelshoal
