package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shoal-data/shoal/diagnostics/otelshoal"
	"github.com/shoal-data/shoal/diagnostics/otelshoal/otlp"
)

// TestOpenTelemetryMisconfigured starts schedulers with OTEL_* variables
// that Shoal cannot follow, which it reports and runs without, and with
// options that are wrong, which fail.
func TestOpenTelemetryMisconfigured(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "console")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := New(Config{})
	if err != nil {
		t.Fatalf("a scheduler with OTEL_TRACES_EXPORTER=console: %v", err)
	}
	defer s.Close(ctx)
	found := false
	for _, r := range s.SchedulerLogs(0) {
		if strings.HasPrefix(r.Message, "not exporting to OpenTelemetry") && strings.Contains(r.Attrs["reason"], "console") {
			found = true
		}
	}
	if !found {
		t.Errorf("no warning naming the variable among the scheduler's logs: %v", s.SchedulerLogs(0))
	}

	_, err = New(Config{OpenTelemetry: []otelshoal.Option{otlp.Export(otlp.WithEndpoint("collector:4318", ""))}})
	if err == nil || !strings.Contains(err.Error(), "collector:4318") {
		t.Errorf("a scheduler with a bad OTLP endpoint: %v, want an error naming it", err)
	}
}
