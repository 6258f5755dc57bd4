package diagnostics

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

func TestConsoleHandler(t *testing.T) {
	tests := []struct {
		name  string
		level slog.Leveler
		log   func(*slog.Logger)
		want  []string
		empty bool
	}{
		{"info with attributes", nil, func(l *slog.Logger) {
			l.Info("task erred", "key", "load-3fa2c1d0-1", "worker", "local-0")
		}, []string{"INF", "task erred", "key=load-3fa2c1d0-1", "worker=local-0"}, false},
		{"below the level", slog.LevelWarn, func(l *slog.Logger) { l.Info("quiet") }, nil, true},
		{"debug enabled", slog.LevelDebug, func(l *slog.Logger) {
			l.With("compute", 3).WithGroup("spill").Debug("wrote", "bytes", 10)
		}, []string{"DBG", "wrote", "compute=3", "spill.bytes=10"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			tt.log(slog.New(NewConsoleHandler(&buf, tt.level)))
			out := buf.String()
			if tt.empty != (out == "") {
				t.Fatalf("output %q", out)
			}
			if strings.Contains(out, "\x1b[") {
				t.Errorf("colour codes written to a non-terminal: %q", out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output %q lacks %q", out, w)
				}
			}
		})
	}
}

func TestJSONHandler(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(NewJSONHandler(&buf, slog.LevelInfo))
	l.Debug("hidden")
	l.Warn("disk almost full", "worker", "tcp://10.0.0.2:4000", "used", 0.93)
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("%v in %q", err, buf.String())
	}
	if rec["level"] != "WARN" || rec["msg"] != "disk almost full" || rec["worker"] != "tcp://10.0.0.2:4000" {
		t.Errorf("record %v", rec)
	}
}

func TestDiscardLogger(t *testing.T) {
	l := DiscardLogger()
	if l.Enabled(context.Background(), slog.LevelError) {
		t.Error("discard logger enabled")
	}
	l.Error("nothing happens")
}
