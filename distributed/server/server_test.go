package server

import (
	"context"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/graph"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(dashCostEnv); mode != "" {
		runDashCostScheduler(mode)
		return
	}
	goleak.VerifyTestMain(m)
}

// rawCodec sends bytes as they are, so that tests can send the server
// anything; it calls itself "proto" so that the server decodes with its
// protobuf codec.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*(v.(*[]byte)) = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

func newServer(t testing.TB, cfg Config) (*Server, *grpc.ClientConn) {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(s.Address(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Close(ctx)
	})
	return s, conn
}

var (
	workerDesc = &grpc.StreamDesc{StreamName: "WorkerStream", ServerStreams: true, ClientStreams: true}
	clientDesc = &grpc.StreamDesc{StreamName: "ClientStream", ServerStreams: true, ClientStreams: true}
)

// exchange opens a stream on method, sends msgs as raw bytes and returns
// the messages received until the stream ends, and how it ended.
func exchange(t testing.TB, conn *grpc.ClientConn, desc *grpc.StreamDesc, msgs ...[]byte) ([][]byte, error) {
	return exchangeN(t, conn, desc, 0, msgs...)
}

// exchangeN is exchange that waits for n messages before it closes its
// side of the stream.
func exchangeN(t testing.TB, conn *grpc.ClientConn, desc *grpc.StreamDesc, n int, msgs ...[]byte) ([][]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := conn.NewStream(ctx, desc, "/shoal.distributed.v1.Scheduler/"+desc.StreamName, grpc.ForceCodec(rawCodec{}))
	if err != nil {
		return nil, err
	}
	for _, m := range msgs {
		if err := st.SendMsg(&m); err != nil {
			break
		}
	}
	var got [][]byte
	for len(got) < n {
		var b []byte
		if err := st.RecvMsg(&b); err != nil {
			return got, err
		}
		got = append(got, b)
	}
	st.CloseSend()
	for {
		var b []byte
		if err := st.RecvMsg(&b); err != nil {
			if errors.Is(err, io.EOF) {
				return got, nil
			}
			return got, err
		}
		got = append(got, b)
	}
}

func marshal(t testing.TB, m proto.Message) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func registry() *wire.Registry {
	r := graph.Default()
	return &wire.Registry{Fingerprint: r.Fingerprint(), Signatures: r.Signatures()}
}

// checkAlive checks that the server still serves.
func checkAlive(t testing.TB, s *Server, conn *grpc.ClientConn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := wire.NewSchedulerClient(conn).Info(ctx, &wire.InfoRequest{}); err != nil {
		t.Fatalf("server no longer answers: %v", err)
	}
	if n := s.NumTasks(); n != 0 {
		t.Fatalf("server holds %d tasks after garbage", n)
	}
}

func TestBadMessages(t *testing.T) {
	s, conn := newServer(t, Config{MaxMessageBytes: 1 << 20})
	reg := registry()
	goodClient := marshal(t, &wire.ClientUp{Msg: &wire.ClientUp_Register{Register: &wire.RegisterClient{Registry: reg}}})
	tests := []struct {
		name string
		desc *grpc.StreamDesc
		msgs [][]byte
		code codes.Code // of the stream's end; OK when it ends normally
	}{
		{"worker: not protobuf", workerDesc, [][]byte{{0xff, 0xff, 0xff, 0x01}}, codes.Internal},
		{"worker: batch before registering", workerDesc,
			[][]byte{marshal(t, &wire.WorkerUp{Msg: &wire.WorkerUp_Batch{Batch: &wire.WorkerBatch{}}})}, codes.InvalidArgument},
		{"worker: no address", workerDesc, [][]byte{marshal(t, &wire.WorkerUp{Msg: &wire.WorkerUp_Register{
			Register: &wire.RegisterWorker{Threads: 1, Registry: reg}}})}, codes.InvalidArgument},
		{"worker: no threads", workerDesc, [][]byte{marshal(t, &wire.WorkerUp{Msg: &wire.WorkerUp_Register{
			Register: &wire.RegisterWorker{Address: "127.0.0.1:1", Registry: reg}}})}, codes.InvalidArgument},
		{"worker: empty", workerDesc, [][]byte{{}}, codes.InvalidArgument},
		{"worker: reports about unknown tasks", workerDesc, [][]byte{
			marshal(t, &wire.WorkerUp{Msg: &wire.WorkerUp_Register{Register: &wire.RegisterWorker{
				Address: "127.0.0.1:1", Threads: 1, Registry: reg}}}),
			marshal(t, &wire.WorkerUp{Msg: &wire.WorkerUp_Batch{Batch: &wire.WorkerBatch{
				Done:        []*wire.TaskDone{{Key: "nope", Id: 1 << 30}, {Key: "", Id: -5, Error: &wire.Error{Kind: 99}}},
				MissingFrom: []*wire.MissingKey{{Key: "x", From: []string{"127.0.0.1:9", ""}}, {}},
				Memory:      &wire.Memory{Managed: -1, Process: -1}}}}),
		}, codes.OK},
		{"worker: registry differs", workerDesc, [][]byte{marshal(t, &wire.WorkerUp{Msg: &wire.WorkerUp_Register{
			Register: &wire.RegisterWorker{Address: "127.0.0.1:2", Threads: 1, Registry: &wire.Registry{}}}})}, codes.OK},
		{"client: not protobuf", clientDesc, [][]byte{{0x0a, 0xff, 0xff}}, codes.Internal},
		{"client: no registry", clientDesc, [][]byte{marshal(t, &wire.ClientUp{Msg: &wire.ClientUp_Register{
			Register: &wire.RegisterClient{}}})}, codes.InvalidArgument},
		{"client: garbage graph", clientDesc, [][]byte{goodClient, marshal(t, &wire.ClientUp{Msg: &wire.ClientUp_Batch{
			Batch: &wire.ClientBatch{Submit: []*wire.Submit{{Computation: "1", Graph: []byte{1, 2, 3}, Keys: []string{"a"}}}}}})},
			codes.OK},
		{"client: unnamed computation", clientDesc, [][]byte{goodClient, marshal(t, &wire.ClientUp{Msg: &wire.ClientUp_Batch{
			Batch: &wire.ClientBatch{Submit: []*wire.Submit{{Keys: []string{"a"}}}}}})}, codes.InvalidArgument},
		{"client: release and cancel of unknown computations", clientDesc, [][]byte{goodClient,
			marshal(t, &wire.ClientUp{Msg: &wire.ClientUp_Batch{Batch: &wire.ClientBatch{
				Release: []*wire.Release{{Computation: "x"}}, Cancel: []*wire.Cancel{{Computation: "y", Keys: []string{"z"}}}}}})},
			codes.OK},
		{"client: oversized", clientDesc, [][]byte{goodClient, make([]byte, 2<<20)}, codes.ResourceExhausted},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := exchange(t, conn, tc.desc, tc.msgs...)
			if got := status.Code(err); got != tc.code {
				t.Errorf("stream ended with %v (%v), want %v", got, err, tc.code)
			}
			checkAlive(t, s, conn)
		})
	}
}

func TestGarbageGraphIsAnError(t *testing.T) {
	_, conn := newServer(t, Config{})
	reg := registry()
	got, err := exchangeN(t, conn, clientDesc, 2,
		marshal(t, &wire.ClientUp{Msg: &wire.ClientUp_Register{Register: &wire.RegisterClient{Registry: reg}}}),
		marshal(t, &wire.ClientUp{Msg: &wire.ClientUp_Batch{Batch: &wire.ClientBatch{Submit: []*wire.Submit{
			{Computation: "1", Graph: []byte{0xff}, Keys: []string{"a", "b"}}}}}}))
	if err != nil {
		t.Fatal(err)
	}
	var errs int
	for _, b := range got {
		var m wire.ClientDown
		if err := proto.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		for _, e := range m.GetBatch().GetErrors() {
			errs++
			if e.Error.GetKind() != wire.Error_TASK {
				t.Errorf("error %v", e.Error)
			}
		}
	}
	if errs != 2 {
		t.Fatalf("%d key errors, want 2", errs)
	}
}

// FuzzStreams sends arbitrary bytes as messages on both streams: the
// server must answer with an error or ignore them, and keep serving.
func FuzzStreams(f *testing.F) {
	reg := registry()
	f.Add([]byte{}, []byte{})
	f.Add(marshal(f, &wire.WorkerUp{Msg: &wire.WorkerUp_Register{Register: &wire.RegisterWorker{
		Address: "127.0.0.1:3", Threads: 2, Registry: reg}}}), marshal(f, &wire.WorkerUp{Msg: &wire.WorkerUp_Batch{
		Batch: &wire.WorkerBatch{Done: []*wire.TaskDone{{Key: "a", Error: &wire.Error{Kind: wire.Error_MISSING_DATA,
			MissingKeys: []string{"b"}}}}}}}))
	f.Add(marshal(f, &wire.ClientUp{Msg: &wire.ClientUp_Register{Register: &wire.RegisterClient{Registry: reg}}}),
		marshal(f, &wire.ClientUp{Msg: &wire.ClientUp_Batch{Batch: &wire.ClientBatch{Submit: []*wire.Submit{
			{Computation: "c", Graph: []byte{0x0a, 0x02, 0x0a, 0x00}, Keys: []string{"", "k"}}}}}}))
	s, conn := newServer(f, Config{})
	f.Fuzz(func(t *testing.T, first, second []byte) {
		for _, desc := range []*grpc.StreamDesc{workerDesc, clientDesc} {
			exchange(t, conn, desc, first, second)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := wire.NewSchedulerClient(conn).Info(ctx, &wire.InfoRequest{}); err != nil {
			t.Fatalf("server no longer answers: %v", err)
		}
		_ = s
	})
}
