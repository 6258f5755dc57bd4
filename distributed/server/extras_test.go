package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/shoal-data/shoal/distributed/security"
	"github.com/shoal-data/shoal/distributed/wire"
)

// TestBadRequests sends malformed requests to every unary endpoint: each
// answers an error (or an error in its reply) and the server goes on.
func TestBadRequests(t *testing.T) {
	s, conn := newServer(t, Config{MaxMessageBytes: 1 << 20})
	c := wire.NewSchedulerClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tests := []struct {
		name string
		call func() error
		code codes.Code
	}{
		{"exit without address or pid", func() error {
			_, err := c.WorkerExited(ctx, &wire.WorkerExit{Cause: "x"})
			return err
		}, codes.InvalidArgument},
		{"exit of an unknown worker", func() error {
			_, err := c.WorkerExited(ctx, &wire.WorkerExit{Pid: 1 << 30, Cause: "x"})
			return err
		}, codes.OK},
		{"event without topic", func() error {
			_, err := c.LogEvent(ctx, &wire.TopicEvent{Message: "x"})
			return err
		}, codes.InvalidArgument},
		{"publish without name", func() error {
			_, err := c.Publish(ctx, &wire.PublishRequest{Keys: []string{"a"}})
			return err
		}, codes.InvalidArgument},
		{"publish unknown keys", func() error {
			_, err := c.Publish(ctx, &wire.PublishRequest{Name: "d", Keys: []string{"nope", ""}})
			return err
		}, codes.InvalidArgument},
		{"unpublish unknown", func() error {
			_, err := c.Unpublish(ctx, &wire.DatasetRequest{Name: "d"})
			return err
		}, codes.InvalidArgument},
		{"get unknown dataset", func() error {
			_, err := c.GetDataset(ctx, &wire.DatasetRequest{Name: "d"})
			return err
		}, codes.InvalidArgument},
		{"plugin without name", func() error {
			_, err := c.RegisterWorkerPlugin(ctx, &wire.PluginRequest{})
			return err
		}, codes.InvalidArgument},
		{"logs of unknown workers", func() error {
			r, err := c.Logs(ctx, &wire.LogsRequest{Workers: true, Names: []string{"nope"}, N: -3})
			if err == nil && len(r.Workers) != 0 {
				t.Errorf("logs of unknown workers: %v", r.Workers)
			}
			return err
		}, codes.OK},
		{"oversized event", func() error {
			_, err := c.LogEvent(ctx, &wire.TopicEvent{Topic: "t", Message: string(make([]byte, 2<<20))})
			return err
		}, codes.ResourceExhausted},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := status.Code(tc.call()); got != tc.code {
				t.Errorf("got %v, want %v", got, tc.code)
			}
			checkAlive(t, s, conn)
		})
	}
}

// FuzzRun sends arbitrary graphs to Run on the scheduler: the reply holds
// an error, and the server goes on.
func FuzzRun(f *testing.F) {
	f.Add([]byte{}, "k")
	f.Add([]byte{0x0a, 0x02, 0x0a, 0x00}, "")
	f.Add([]byte{0xff, 0x01}, "a")
	s, conn := newServer(f, Config{})
	c := wire.NewSchedulerClient(conn)
	f.Fuzz(func(t *testing.T, g []byte, key string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		rep, err := c.Run(ctx, &wire.RunRequest{Graph: g, Key: key})
		if err != nil {
			if status.Code(err) != codes.Internal { // invalid UTF-8 in key
				t.Fatalf("run: %v", err)
			}
		} else if rep.Error == nil && len(g) == 0 {
			t.Fatalf("an empty graph ran: %v", rep)
		}
		checkAlive(t, s, conn)
	})
}

func TestPlaintextBeyondLoopback(t *testing.T) {
	if _, err := New(Config{Listen: "0.0.0.0:0"}); !errors.Is(err, security.ErrPlaintext) {
		t.Fatalf("plaintext on every interface: %v", err)
	}
	s, err := New(Config{Listen: "0.0.0.0:0", Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.Close(ctx)
}
