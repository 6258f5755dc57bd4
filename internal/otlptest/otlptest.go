// Package otlptest is an OTLP receiver for tests: it serves the OTLP
// collector services over gRPC and over HTTP (protobuf) on loopback, and
// keeps what exporters send it.
//
//	r := otlptest.New(t)              // stopped when the test ends
//	... export to r.GRPCEndpoint() or r.HTTPEndpoint() ...
//	for _, rm := range r.Metrics() { ... }
package otlptest

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"

	collogpb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logpb "go.opentelemetry.io/proto/otlp/logs/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// Receiver keeps what OTLP exporters send it.
type Receiver struct {
	grpcAddr, httpAddr string

	mu      sync.Mutex
	gate    chan struct{} // while not nil, exports wait until it is closed
	spans   []*tracepb.ResourceSpans
	metrics []*metricpb.ResourceMetrics
	logs    []*logpb.ResourceLogs
}

// New starts a receiver on free loopback ports; it stops when the test
// ends.
func New(t testing.TB) *Receiver {
	t.Helper()
	r := &Receiver{}
	gl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("otlptest: %v", err)
	}
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		gl.Close()
		t.Fatalf("otlptest: %v", err)
	}
	r.grpcAddr, r.httpAddr = gl.Addr().String(), hl.Addr().String()

	gs := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(gs, traceService{r: r})
	colmetricpb.RegisterMetricsServiceServer(gs, metricsService{r: r})
	collogpb.RegisterLogsServiceServer(gs, logsService{r: r})
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", handle(r, &coltracepb.ExportTraceServiceRequest{},
		&coltracepb.ExportTraceServiceResponse{}))
	mux.HandleFunc("POST /v1/metrics", handle(r, &colmetricpb.ExportMetricsServiceRequest{},
		&colmetricpb.ExportMetricsServiceResponse{}))
	mux.HandleFunc("POST /v1/logs", handle(r, &collogpb.ExportLogsServiceRequest{},
		&collogpb.ExportLogsServiceResponse{}))
	hs := &http.Server{Handler: mux}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		gs.Serve(gl)
	}()
	go func() {
		defer wg.Done()
		if err := hs.Serve(hl); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("otlptest: serve HTTP: %v", err)
		}
	}()
	t.Cleanup(func() {
		r.mu.Lock()
		if r.gate != nil {
			close(r.gate)
			r.gate = nil
		}
		r.mu.Unlock()
		gs.Stop()
		hs.Close()
		wg.Wait()
	})
	return r
}

// GRPCEndpoint is the URL of the gRPC receiver, such as
// "http://127.0.0.1:43171".
func (r *Receiver) GRPCEndpoint() string { return "http://" + r.grpcAddr }

// HTTPEndpoint is the base URL of the HTTP receiver (it serves /v1/traces,
// /v1/metrics and /v1/logs), such as "http://127.0.0.1:43172".
func (r *Receiver) HTTPEndpoint() string { return "http://" + r.httpAddr }

// Spans, Metrics and Logs return what was received so far.
func (r *Receiver) Spans() []*tracepb.ResourceSpans {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*tracepb.ResourceSpans(nil), r.spans...)
}

func (r *Receiver) Metrics() []*metricpb.ResourceMetrics {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*metricpb.ResourceMetrics(nil), r.metrics...)
}

func (r *Receiver) Logs() []*logpb.ResourceLogs {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*logpb.ResourceLogs(nil), r.logs...)
}

// Hold makes exports wait until release is called (or the test ends), as
// a slow collector would.
func (r *Receiver) Hold() (release func()) {
	gate := make(chan struct{})
	r.mu.Lock()
	r.gate = gate
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.gate == gate {
			close(gate)
			r.gate = nil
		}
	}
}

// add keeps an export request, once the receiver is not held.
func (r *Receiver) add(req proto.Message) {
	r.mu.Lock()
	gate := r.gate
	r.mu.Unlock()
	if gate != nil {
		<-gate
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch req := req.(type) {
	case *coltracepb.ExportTraceServiceRequest:
		r.spans = append(r.spans, req.ResourceSpans...)
	case *colmetricpb.ExportMetricsServiceRequest:
		r.metrics = append(r.metrics, req.ResourceMetrics...)
	case *collogpb.ExportLogsServiceRequest:
		r.logs = append(r.logs, req.ResourceLogs...)
	}
}

// handle serves OTLP over HTTP with protobuf bodies: req and resp are
// templates of the request and the response.
func handle(r *Receiver, req, resp proto.Message) http.HandlerFunc {
	return func(w http.ResponseWriter, hr *http.Request) {
		body, err := io.ReadAll(hr.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		m := req.ProtoReflect().New().Interface()
		if err := proto.Unmarshal(body, m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.add(m)
		out, err := proto.Marshal(resp)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}
}

type traceService struct {
	coltracepb.UnimplementedTraceServiceServer
	r *Receiver
}

func (s traceService) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	s.r.add(req)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

type metricsService struct {
	colmetricpb.UnimplementedMetricsServiceServer
	r *Receiver
}

func (s metricsService) Export(_ context.Context, req *colmetricpb.ExportMetricsServiceRequest) (*colmetricpb.ExportMetricsServiceResponse, error) {
	s.r.add(req)
	return &colmetricpb.ExportMetricsServiceResponse{}, nil
}

type logsService struct {
	collogpb.UnimplementedLogsServiceServer
	r *Receiver
}

func (s logsService) Export(_ context.Context, req *collogpb.ExportLogsServiceRequest) (*collogpb.ExportLogsServiceResponse, error) {
	s.r.add(req)
	return &collogpb.ExportLogsServiceResponse{}, nil
}

// Point is a data point of a metric, flattened: its attributes as
// strings, its value (of a sum or a gauge) or its count and sum (of a
// histogram).
type Point struct {
	Service string // the resource's service.name
	Attrs   map[string]string
	Value   float64
	Count   uint64 // histograms
	Sum     float64
}

// Points returns the data points of the metric named name, in the order
// received.
func Points(rms []*metricpb.ResourceMetrics, name string) []Point {
	var out []Point
	for _, rm := range rms {
		service := attrs(rm.GetResource().GetAttributes())["service.name"]
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if m.Name != name {
					continue
				}
				for _, p := range m.GetSum().GetDataPoints() {
					out = append(out, Point{Service: service, Attrs: attrs(p.Attributes), Value: number(p)})
				}
				for _, p := range m.GetGauge().GetDataPoints() {
					out = append(out, Point{Service: service, Attrs: attrs(p.Attributes), Value: number(p)})
				}
				for _, p := range m.GetHistogram().GetDataPoints() {
					out = append(out, Point{Service: service, Attrs: attrs(p.Attributes), Count: p.Count,
						Sum: p.GetSum()})
				}
			}
		}
	}
	return out
}

func number(p *metricpb.NumberDataPoint) float64 {
	if v, ok := p.Value.(*metricpb.NumberDataPoint_AsInt); ok {
		return float64(v.AsInt)
	}
	return p.GetAsDouble()
}

// Record is a log record, flattened.
type Record struct {
	Service  string // the resource's service.name
	Severity string
	Body     string
	Attrs    map[string]string
}

// Records returns the log records received, in order.
func Records(rls []*logpb.ResourceLogs) []Record {
	var out []Record
	for _, rl := range rls {
		service := attrs(rl.GetResource().GetAttributes())["service.name"]
		for _, sl := range rl.ScopeLogs {
			for _, lr := range sl.LogRecords {
				out = append(out, Record{Service: service, Severity: lr.SeverityText,
					Body: lr.GetBody().GetStringValue(), Attrs: attrs(lr.Attributes)})
			}
		}
	}
	return out
}

// attrs flattens attributes to strings (numbers in decimal).
func attrs(kvs []*commonpb.KeyValue) map[string]string {
	out := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		v := kv.GetValue()
		switch x := v.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			out[kv.Key] = x.StringValue
		case *commonpb.AnyValue_IntValue:
			out[kv.Key] = strconv.FormatInt(x.IntValue, 10)
		case *commonpb.AnyValue_DoubleValue:
			out[kv.Key] = strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
		case *commonpb.AnyValue_BoolValue:
			out[kv.Key] = strconv.FormatBool(x.BoolValue)
		default:
			out[kv.Key] = v.String()
		}
	}
	return out
}
