// Package jaegertest runs a real Jaeger for tests: the all-in-one binary,
// keeping traces in memory, with its OTLP receivers and its query API on
// free loopback ports, and reads traces back from the query API.
//
//	j := jaegertest.Start(t)          // skips the test when there is no Jaeger
//	... export spans to j.OTLPGRPC or j.OTLPHTTP ...
//	traces := j.WaitTraces(t, "my-service", func(ts []jaegertest.Trace) bool { return len(ts) > 0 })
//
// The binary is $SHOAL_JAEGER (Jaeger v1.76.0's cmd/jaeger; .ci/run builds
// it). Without it the test is skipped, unless SHOAL_REQUIRE_JAEGER=1 (as
// on CI): then it fails. Jaeger stops when the test that started it ends.
package jaegertest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// Environment variables read by Start.
const (
	// EnvJaeger is the path of the Jaeger binary.
	EnvJaeger = "SHOAL_JAEGER"
	// EnvRequire set to 1 makes a missing Jaeger fail the test instead of
	// skipping it.
	EnvRequire = "SHOAL_REQUIRE_JAEGER"
)

// Timeout bounds how long Start waits for Jaeger to answer, and
// WaitTraces for traces to show.
const Timeout = 60 * time.Second

// Jaeger is a running Jaeger.
type Jaeger struct {
	// OTLPGRPC and OTLPHTTP are the URLs of its OTLP receivers, such as
	// "http://127.0.0.1:41234".
	OTLPGRPC, OTLPHTTP string
	query              string
	out                *syncBuffer
}

// Start runs Jaeger until the test ends.
func Start(t testing.TB) *Jaeger {
	t.Helper()
	bin := os.Getenv(EnvJaeger)
	if bin == "" {
		missing(t, EnvJaeger+" is not set")
	}
	if _, err := os.Stat(bin); err != nil {
		missing(t, err.Error())
	}
	ports := freePorts(t, 4)
	cfg := fmt.Sprintf(config, ports[0], ports[1], ports[2], ports[3])
	path := filepath.Join(t.TempDir(), "jaeger.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatalf("jaegertest: %v", err)
	}
	j := &Jaeger{OTLPGRPC: fmt.Sprintf("http://127.0.0.1:%d", ports[2]),
		OTLPHTTP: fmt.Sprintf("http://127.0.0.1:%d", ports[3]), query: fmt.Sprintf("http://127.0.0.1:%d", ports[0]),
		out: &syncBuffer{}}
	cmd := exec.Command(bin, "--config", path)
	cmd.Stdout, cmd.Stderr = j.out, j.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("jaegertest: start %s: %v", bin, err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("jaeger's output:\n%s", j.out.String())
		}
	})
	deadline := time.Now().Add(Timeout)
	for {
		resp, err := http.Get(j.query + "/api/services")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return j
			}
		}
		select {
		case <-exited:
			t.Fatalf("jaegertest: %s exited:\n%s", bin, j.out.String())
		case <-time.After(50 * time.Millisecond): // nothing tells when it listens: poll
		}
		if time.Now().After(deadline) {
			t.Fatalf("jaegertest: no answer from %s after %v:\n%s", j.query, Timeout, j.out.String())
		}
	}
}

// config is Jaeger's: the query API's HTTP and gRPC ports, the OTLP
// receivers' gRPC and HTTP ports. It has no telemetry of its own, so that
// it listens on nothing else.
const config = `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: []
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: memory
    http:
      endpoint: 127.0.0.1:%d
    grpc:
      endpoint: 127.0.0.1:%d
  jaeger_storage:
    backends:
      memory:
        memory:
          max_traces: 100000
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
      http:
        endpoint: 127.0.0.1:%d
exporters:
  jaeger_storage_exporter:
    trace_storage: memory
`

func missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(EnvRequire) == "1" {
		t.Fatalf("jaegertest: no Jaeger (%s) and %s=1", why, EnvRequire)
	}
	t.Skipf("no Jaeger (%s): set %s to the binary of github.com/jaegertracing/jaeger/cmd/jaeger", why, EnvJaeger)
}

// freePorts returns n ports that were free a moment ago.
func freePorts(t testing.TB, n int) []int {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("jaegertest: %v", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// Trace is a trace as Jaeger's query API returns it.
type Trace struct {
	TraceID   string             `json:"traceID"`
	Spans     []Span             `json:"spans"`
	Processes map[string]Process `json:"processes"`
}

// Span is a span of a Trace. Times are in microseconds.
type Span struct {
	TraceID       string      `json:"traceID"`
	SpanID        string      `json:"spanID"`
	OperationName string      `json:"operationName"`
	References    []Reference `json:"references"`
	StartTime     int64       `json:"startTime"`
	Duration      int64       `json:"duration"`
	Tags          []Tag       `json:"tags"`
	Logs          []Log       `json:"logs"`
	ProcessID     string      `json:"processID"`
}

// Reference is a span's parent (RefType "CHILD_OF") or a link
// ("FOLLOWS_FROM").
type Reference struct {
	RefType string `json:"refType"`
	TraceID string `json:"traceID"`
	SpanID  string `json:"spanID"`
}

// Tag is an attribute.
type Tag struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// Log is a span event, such as an exception.
type Log struct {
	Timestamp int64 `json:"timestamp"`
	Fields    []Tag `json:"fields"`
}

// Process is the service that sent spans.
type Process struct {
	ServiceName string `json:"serviceName"`
	Tags        []Tag  `json:"tags"`
}

// Tag returns the value of the span's attribute key, as a string ("" if
// it has none).
func (s Span) Tag(key string) string {
	for _, t := range s.Tags {
		if t.Key == key {
			return fmt.Sprint(t.Value)
		}
	}
	return ""
}

// Parent returns the id of the span's parent, or "".
func (s Span) Parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

// Named returns the spans of the trace named name, in the order of their
// start.
func (tr Trace) Named(name string) []Span {
	var out []Span
	for _, s := range tr.Spans {
		if s.OperationName == name {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b Span) int { return cmp.Compare(a.StartTime, b.StartTime) })
	return out
}

// Service returns the name of the service that sent s.
func (tr Trace) Service(s Span) string { return tr.Processes[s.ProcessID].ServiceName }

// HasLog says whether the span has an event (a log) with the field
// event=name, such as "exception".
func (s Span) HasLog(name string) bool {
	for _, l := range s.Logs {
		for _, f := range l.Fields {
			if f.Key == "event" && fmt.Sprint(f.Value) == name {
				return true
			}
		}
	}
	return false
}

// Traces returns the traces of service that Jaeger has.
func (j *Jaeger) Traces(ctx context.Context, service string) ([]Trace, error) {
	u := j.query + "/api/traces?" + url.Values{"service": {service}, "limit": {"1000"}, "lookback": {"1h"}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("jaegertest: %w", err)
	}
	defer resp.Body.Close()
	var body struct {
		Data   []Trace `json:"data"`
		Errors []any   `json:"errors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("jaegertest: GET %s: status %s: %w", u, resp.Status, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("jaegertest: GET %s: status %s: %v", u, resp.Status, body.Errors)
	}
	return body.Data, nil
}

// WaitTraces polls Jaeger for the traces of service until ok accepts
// them (Jaeger stores spans some time after it receives them, and says
// nothing when it has), and returns them; after Timeout it fails the test
// with what it has.
func (j *Jaeger) WaitTraces(t testing.TB, service string, ok func([]Trace) bool) []Trace {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	var last []Trace
	var lastErr error
	for {
		ts, err := j.Traces(ctx, service)
		if err == nil {
			last = ts
			if ok(ts) {
				return ts
			}
		} else {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			b, _ := json.MarshalIndent(last, "", "  ")
			t.Fatalf("jaegertest: traces of %s not as expected after %v (last error %v):\n%s", service, Timeout,
				lastErr, b)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
