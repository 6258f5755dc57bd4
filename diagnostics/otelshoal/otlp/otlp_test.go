package otlp

import (
	"context"
	"strings"
	"testing"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/diagnostics/otelshoal"
)

func TestExportedSignals(t *testing.T) {
	const endpoint = "http://collector:4318"
	tests := []struct {
		name    string
		env     map[string]string
		opts    []Option
		want    [3]string // traces, metrics, logs: the protocol, or "" when not exported
		wantErr string
	}{
		{name: "nothing said: nothing exported"},
		{name: "an endpoint: every signal over HTTP",
			env:  map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint},
			want: [3]string{ProtocolHTTP, ProtocolHTTP, ProtocolHTTP}},
		{name: "a signal's endpoint: that signal",
			env:  map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": endpoint + "/v1/traces"},
			want: [3]string{ProtocolHTTP, "", ""}},
		{name: "an exporter named: that signal",
			env:  map[string]string{"OTEL_TRACES_EXPORTER": "otlp"},
			want: [3]string{ProtocolHTTP, "", ""}},
		{name: "none turns a signal off",
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_METRICS_EXPORTER": "none",
				"OTEL_LOGS_EXPORTER": " none "},
			want: [3]string{ProtocolHTTP, "", ""}},
		{name: "the SDK disabled",
			env:  map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_SDK_DISABLED": "TRUE"},
			want: [3]string{"", "", ""}},
		{name: "gRPC, and a signal's own protocol",
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
				"OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": "http/protobuf"},
			want: [3]string{ProtocolGRPC, ProtocolGRPC, ProtocolHTTP}},
		{name: "WithEndpoint wins over the environment",
			env:  map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			opts: []Option{WithEndpoint(endpoint, ProtocolHTTP)},
			want: [3]string{ProtocolHTTP, ProtocolHTTP, ProtocolHTTP}},
		{name: "WithEndpoint takes the environment's protocol",
			env:  map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			opts: []Option{WithEndpoint(endpoint, "")},
			want: [3]string{ProtocolGRPC, ProtocolGRPC, ProtocolGRPC}},
		{name: "an exporter Shoal does not have",
			env:     map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"},
			wantErr: `OTEL_TRACES_EXPORTER="zipkin"`},
		{name: "an unknown protocol",
			env:     map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
			wantErr: `OTLP protocol "http/json"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &config{getenv: func(k string) string { return tt.env[k] }}
			for _, o := range tt.opts {
				o(c)
			}
			var got [3]string
			var errs []string
			for i, s := range []signal{tracesSignal, metricsSignal, logsSignal} {
				protocol, on, err := c.exported(s)
				if err != nil {
					errs = append(errs, err.Error())
				}
				if on {
					got[i] = protocol
				}
			}
			switch {
			case tt.wantErr == "" && len(errs) > 0:
				t.Fatalf("errors %q", errs)
			case tt.wantErr != "" && (len(errs) == 0 || !strings.Contains(errs[0], tt.wantErr)):
				t.Fatalf("errors %q, want one with %q", errs, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("exported (traces, metrics, logs) = %q, want %q", got, tt.want)
			}
		})
	}
}

// clearEnv unsets the OTEL_* variables these tests read.
func clearEnv(t *testing.T) {
	for _, k := range []string{"OTEL_SDK_DISABLED", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL",
		"OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES"} {
		t.Setenv(k, "")
	}
	for _, s := range []signal{tracesSignal, metricsSignal, logsSignal} {
		t.Setenv(s.exporter, "")
		t.Setenv(s.endpoint, "")
		t.Setenv(s.protocol, "")
	}
}

func TestOffByDefault(t *testing.T) {
	clearEnv(t)
	hub := diagnostics.NewHub()
	defer hub.Close()
	e, err := otelshoal.Start(context.Background(), hub, Export(WithServiceName("named but not exported")))
	if err != nil || e != nil {
		t.Fatalf("Start = %v, %v; want nil, nil", e, err)
	}
	if hub.Active() {
		t.Error("the hub has a subscriber though nothing is exported")
	}
}

func TestBadEndpoint(t *testing.T) {
	clearEnv(t)
	hub := diagnostics.NewHub()
	defer hub.Close()
	for _, endpoint := range []string{"localhost:4317", "ftp://collector", "http://"} {
		if _, err := otelshoal.Start(context.Background(), hub, Export(WithEndpoint(endpoint, ProtocolGRPC))); err == nil ||
			!strings.Contains(err.Error(), endpoint) {
			t.Errorf("Start with endpoint %q: error %v, want one naming it", endpoint, err)
		}
	}
	if hub.Active() {
		t.Error("a failed Start left a subscriber")
	}
}
