// Package otelshoal exports what Shoal computations do to OpenTelemetry:
// traces, metrics and logs, to the providers you give it. It needs only
// OpenTelemetry's API; its subpackage otlp makes the SDK's providers,
// exporting over OTLP to a collector (Jaeger, Tempo, the OpenTelemetry
// Collector...) as the standard OTEL_* environment variables say.
//
// The in-process executor takes its options as local.WithOpenTelemetry,
// a cluster's scheduler as server.Config.OpenTelemetry; each exports what
// it runs. With a tracer provider of your own, Shoal's spans join your
// traces:
//
//	exec := local.New(local.WithOpenTelemetry(otelshoal.WithTracerProvider(tp)))
//
// The scheduler exports over OTLP as the OTEL_* variables say without
// being told (`shoal scheduler --otlp-endpoint` says where too); the
// in-process executor when given otlp.Export(). Nothing is exported by
// default.
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
package otelshoal
