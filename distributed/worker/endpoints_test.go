package worker

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/shoal-data/shoal/distributed/internal/flightdata"
	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/graph"
)

func newWorker(t testing.TB) (*Worker, *grpc.ClientConn) {
	t.Helper()
	w, err := New(Config{Scheduler: "127.0.0.1:1", Threads: 1, InProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(w.Address(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		w.Close()
	})
	return w, conn
}

func alive(t testing.TB, conn *grpc.ClientConn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := wire.NewWorkerClient(conn).Info(ctx, &wire.InfoRequest{}); err != nil {
		t.Fatalf("worker no longer answers: %v", err)
	}
}

// putRaw sends raw Flight messages on DoPut and returns how it ended.
func putRaw(ctx context.Context, fc flight.FlightServiceClient, msgs ...*flight.FlightData) error {
	s, err := fc.DoPut(ctx)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if err := s.Send(m); err != nil {
			break
		}
	}
	s.CloseSend()
	for {
		if _, err := s.Recv(); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

func TestBadRequests(t *testing.T) {
	w, conn := newWorker(t)
	fc := flight.NewFlightServiceClient(conn)
	wc := wire.NewWorkerClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tests := []struct {
		name string
		call func() error
		code codes.Code
	}{
		{"get a key not held", func() error {
			_, err := flightdata.Get(ctx, fc, "nope", graph.Default())
			return err
		}, codes.NotFound},
		{"unknown action", func() error {
			s, err := fc.DoAction(ctx, &flight.Action{Type: "nope"})
			if err == nil {
				_, err = s.Recv()
			}
			return err
		}, codes.Unimplemented},
		{"garbage action body", func() error {
			s, err := fc.DoAction(ctx, &flight.Action{Type: flightdata.ActionGet, Body: []byte{0xff, 0xff, 0x01}})
			if err == nil {
				_, err = s.Recv()
			}
			return err
		}, codes.InvalidArgument},
		{"many keys not held", func() error {
			_, missing, err := flightdata.GetMany(ctx, fc, []string{"a", "", "b"}, graph.Default())
			if err == nil && len(missing) != 3 {
				t.Errorf("missing %v", missing)
			}
			return err
		}, codes.OK},
		{"garbage put", func() error {
			return putRaw(ctx, fc, &flight.FlightData{DataHeader: []byte{1, 2, 3}, DataBody: []byte{4}})
		}, codes.InvalidArgument},
		{"empty put", func() error { return putRaw(ctx, fc) }, codes.InvalidArgument},
		{"put without a key", func() error {
			return flightdata.Put(ctx, &nokey{fc}, "", 5, graph.Default())
		}, codes.InvalidArgument},
		{"run garbage", func() error {
			rep, err := wc.Run(ctx, &wire.RunRequest{Graph: []byte{0xff}, Key: "k"})
			if err == nil && rep.Error == nil {
				t.Errorf("garbage ran: %v", rep)
			}
			return err
		}, codes.OK},
		{"unknown plugin", func() error {
			st, err := wc.Plugin(ctx, &wire.PluginRequest{Name: "nope"})
			if err == nil && st.Error == "" {
				t.Errorf("unknown plugin set up")
			}
			return err
		}, codes.OK},
		{"plugin with a bad configuration", func() error {
			st, err := wc.Plugin(ctx, &wire.PluginRequest{Name: UploadFilePlugin, Config: []byte("{")})
			if err == nil && st.Error == "" {
				t.Errorf("bad configuration accepted")
			}
			return err
		}, codes.OK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := status.Code(tc.call()); got != tc.code {
				t.Errorf("got %v, want %v", got, tc.code)
			}
			alive(t, conn)
		})
	}
	if n := len(w.state.Held()); n != 0 {
		t.Errorf("worker holds %d values after garbage", n)
	}
}

// nokey puts without a descriptor.
type nokey struct{ flight.FlightServiceClient }

func (n *nokey) DoPut(ctx context.Context, opts ...grpc.CallOption) (flight.FlightService_DoPutClient, error) {
	s, err := n.FlightServiceClient.DoPut(ctx, opts...)
	return &stripDesc{s}, err
}

type stripDesc struct {
	flight.FlightService_DoPutClient
}

func (s *stripDesc) Send(d *flight.FlightData) error {
	d.FlightDescriptor = nil
	return s.FlightService_DoPutClient.Send(d)
}

// FuzzFlight sends arbitrary bytes as an action body and as a put: the
// worker answers with an error or ignores them, and keeps serving.
func FuzzFlight(f *testing.F) {
	f.Add([]byte{}, []byte{}, []byte{})
	f.Add([]byte{0x0a, 0x01, 0x61}, []byte{0xff, 0xff, 0xff, 0xff, 0x10, 0, 0, 0}, []byte{1})
	_, conn := newWorker(f)
	fc := flight.NewFlightServiceClient(conn)
	f.Fuzz(func(t *testing.T, body, header, data []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if s, err := fc.DoAction(ctx, &flight.Action{Type: flightdata.ActionGet, Body: body}); err == nil {
			for {
				if _, err := s.Recv(); err != nil {
					break
				}
			}
		}
		putRaw(ctx, fc, &flight.FlightData{FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorPATH,
			Path: []string{"k"}}, DataHeader: header, DataBody: data})
		alive(t, conn)
	})
}
