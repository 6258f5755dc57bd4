package runcall

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/graph"
)

var (
	repeat = graph.MustRegisterFunc2("runcall_test.repeat", func(_ context.Context, s string, n int) (string, error) {
		if n < 0 || n > 100 {
			return "", errors.New("n out of range")
		}
		return strings.Repeat(s, n), nil
	})
	count = graph.MustRegisterFunc("runcall_test.count", func(_ context.Context, s string) (int, error) { return len(s), nil })
)

func TestServe(t *testing.T) {
	reg := graph.Default()
	env := &graph.Env{Registry: reg, Logger: slog.New(slog.DiscardHandler), Worker: "w"}
	req, err := Request(reg, "runcall_test.repeat", []any{"ab", 3})
	if err != nil {
		t.Fatal(err)
	}
	v, err := Decode(reg, Serve(context.Background(), reg, env, req))
	if err != nil || v != "ababab" {
		t.Errorf("repeat: %#v, %v", v, err)
	}
	req, err = Request(reg, "runcall_test.repeat", []any{"ab", -1})
	if err != nil {
		t.Fatal(err)
	}
	var te *graph.TaskError
	if _, err := Decode(reg, Serve(context.Background(), reg, env, req)); !errors.As(err, &te) ||
		!strings.Contains(err.Error(), "n out of range") {
		t.Errorf("a failing call: %v", err)
	}
}

// FuzzServe runs arbitrary calls, as a worker or the scheduler gets them
// from a client, and decodes the replies as the client does: a reply
// holds a value that decodes, or an error; never a panic.
func FuzzServe(f *testing.F) {
	reg := graph.Default()
	env := &graph.Env{Registry: reg, Logger: slog.New(slog.DiscardHandler), Worker: "w"}
	for _, call := range []struct {
		fn   string
		args []any
	}{{"runcall_test.repeat", []any{"ab", 3}}, {"runcall_test.repeat", []any{"x", 1000}},
		{"runcall_test.count", []any{repeat.Call("a", 2)}}} {
		req, err := Request(reg, call.fn, call.args)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(req.Graph, req.Key)
		f.Add(req.Graph[:len(req.Graph)/2], req.Key)
	}
	_ = count
	f.Fuzz(func(t *testing.T, g []byte, key string) {
		rep := Serve(context.Background(), reg, env, &wire.RunRequest{Graph: g, Key: key})
		if (rep.Error == nil) == (rep.Value == nil) && rep.Error != nil {
			t.Fatalf("a reply with a value and an error: %v", rep)
		}
		b, err := proto.Marshal(rep)
		if err != nil {
			return // a key or message that is not UTF-8 does not cross the wire
		}
		var back wire.RunReply
		if err := proto.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		v, err := Decode(reg, &back)
		switch {
		case back.Error == nil && err != nil:
			t.Fatalf("a value served does not decode: %v", err)
		case back.Error != nil && err == nil:
			t.Fatalf("an error served decodes to the value %#v", v)
		case err != nil:
			_ = err.Error()
		}
	})
}
