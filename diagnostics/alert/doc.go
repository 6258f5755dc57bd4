// Package alert holds the rules that turn what a Shoal cluster (or the
// in-process executor) observes into alerts: a worker's disk nearly full,
// or too small for a running shuffle; a worker's unmanaged memory high,
// or its process near the memory at which it is killed; a worker that
// stops answering, or answers slowly; a straggler task; a skewed shuffle
// partition; heavy spilling. Each alert names the worker (and the task,
// directory or shuffle) and says what to do.
//
// The rules are a Machine: inputs in (workers' reports, tasks that
// ended, shuffles started, the passing of time) with the time given,
// alerts raised and resolved out. It starts no goroutine and reads no
// clock, so that what it decides depends on its inputs alone. An alert is
// raised once, when its rule first holds, and resolved once, when it no
// longer does (or its worker leaves, or the computation of its shuffle
// ends); the thresholds are in Config, with their defaults.
//
// Executors feed a Machine and carry out what it returns: a cluster's
// scheduler publishes each alert as a diagnostics event, logs it at WARN,
// shows it on every page of its dashboard and exports it to Prometheus.
package alert
