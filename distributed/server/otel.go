package server

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/graph"
)

// What the scheduler adds to the events for OpenTelemetry (see
// Config.OpenTelemetry): the inputs of runs, and the workers' logs.

// runInputs returns what a worker got from other workers for a run.
func runInputs(d *wire.TaskDone) []diagnostics.Transfer {
	if len(d.OtelInputs) == 0 {
		return nil
	}
	out := make([]diagnostics.Transfer, len(d.OtelInputs))
	for i, x := range d.OtelInputs {
		out[i] = diagnostics.Transfer{Key: graph.Key(x.Key), From: x.From, Start: time.Unix(0, x.StartUnixNano),
			Duration: time.Duration(x.DurationNanos), Bytes: x.Bytes}
	}
	return out
}

// exportWorkerLogs exports a worker's log records, with its address as
// attribute worker, when logs are exported. It is called without s.mu.
func (s *Server) exportWorkerLogs(addr string, logs []*wire.LogRecord) {
	h := s.otel.LogHandler()
	if h == nil || len(logs) == 0 {
		return
	}
	h = h.WithAttrs([]slog.Attr{slog.String("worker", addr)})
	ctx := context.Background()
	for _, l := range logs {
		level := slog.Level(l.Level)
		if !h.Enabled(ctx, level) {
			continue
		}
		r := slog.NewRecord(time.Unix(0, l.TimeUnixNano), level, l.Message, 0)
		for _, k := range slices.Sorted(maps.Keys(l.Attrs)) {
			if k != "worker" {
				r.AddAttrs(slog.String(k, l.Attrs[k]))
			}
		}
		h.Handle(ctx, r)
	}
}
