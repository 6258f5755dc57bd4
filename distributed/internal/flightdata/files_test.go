package flightdata

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// fileServer serves the two file actions from dir.
type fileServer struct {
	flight.BaseFlightServer
	dir string
}

func (s *fileServer) DoAction(a *flight.Action, stream flight.FlightService_DoActionServer) error {
	switch a.GetType() {
	case ActionReadFile:
		return ServeReadFile(a, stream, s.dir)
	case ActionRemoveDirs:
		return ServeRemoveDirs(a, stream, s.dir)
	}
	return status.Errorf(codes.Unimplemented, "%s", a.GetType())
}

func serveFiles(t *testing.T, dir string) flight.FlightServiceClient {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(ServerOptions()...)
	flight.RegisterFlightServiceServer(srv, &fileServer{dir: dir})
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), append(DialOptions(), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return flight.NewFlightServiceClient(conn)
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, fileChunk*2+12345)
	for i := range data {
		data[i] = byte(i * 7)
	}
	if err := os.MkdirAll(filepath.Join(dir, "shuffle-a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "shuffle-a", "in-1.arrows"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secret"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := serveFiles(t, dir)
	ctx := context.Background()
	tests := []struct {
		name string
		r    FileRange
		code codes.Code // codes.OK: the bytes must match
	}{
		{"whole", FileRange{"shuffle-a/in-1.arrows", 0, int64(len(data))}, codes.OK},
		{"middle, across chunks", FileRange{"shuffle-a/in-1.arrows", 100, fileChunk + 7}, codes.OK},
		{"empty", FileRange{"shuffle-a/in-1.arrows", 5, 0}, codes.OK},
		{"past the end", FileRange{"shuffle-a/in-1.arrows", int64(len(data)) - 3, 10}, codes.OutOfRange},
		{"missing", FileRange{"shuffle-a/nope", 0, 1}, codes.NotFound},
		{"outside the served directories", FileRange{"secret", 0, 1}, codes.InvalidArgument},
		{"parent", FileRange{"shuffle-a/../../etc/passwd", 0, 1}, codes.InvalidArgument},
		{"absolute", FileRange{"/etc/passwd", 0, 1}, codes.InvalidArgument},
		{"negative", FileRange{"shuffle-a/in-1.arrows", -1, 1}, codes.InvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rc, err := ReadFile(ctx, c, tc.r)
			var got []byte
			if err == nil {
				got, err = io.ReadAll(rc)
				rc.Close()
			}
			if tc.code != codes.OK {
				if status.Code(err) != tc.code {
					t.Fatalf("error %v, want code %v", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := data[tc.r.Offset : tc.r.Offset+tc.r.Length]; !bytes.Equal(got, want) {
				t.Fatalf("got %d bytes, want %d (or different bytes)", len(got), len(want))
			}
		})
	}
}

func TestRemoveDirs(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"shuffle-a", "shuffle-b", "keep"} {
		if err := os.MkdirAll(filepath.Join(dir, d, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c := serveFiles(t, dir)
	ctx := context.Background()
	if err := RemoveDirs(ctx, c, []string{"shuffle-a", "shuffle-missing"}); err != nil {
		t.Fatal(err)
	}
	if err := RemoveDirs(ctx, c, []string{"keep"}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("removing a directory that is not a shuffle's: %v", err)
	}
	for d, want := range map[string]bool{"shuffle-a": false, "shuffle-b": true, "keep": true} {
		if _, err := os.Stat(filepath.Join(dir, d)); (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", d, err == nil, want)
		}
	}
}
