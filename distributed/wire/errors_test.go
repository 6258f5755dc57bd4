package wire

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/scheduler"
)

func TestErrorRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		err   error
		check func(error) bool
	}{
		{"missing data", fmt.Errorf("fetch: %w", scheduler.ErrMissingData),
			func(e error) bool { return errors.Is(e, scheduler.ErrMissingData) }},
		{"cancelled", fmt.Errorf("stop: %w", context.Canceled), func(e error) bool { return errors.Is(e, context.Canceled) }},
		{"deadline", context.DeadlineExceeded, func(e error) bool { return errors.Is(e, context.DeadlineExceeded) }},
		{"panic", &graph.PanicError{Value: "oops", Stack: "goroutine 1"}, func(e error) bool {
			var pe *graph.PanicError
			return errors.As(e, &pe) && pe.Stack == "goroutine 1" && pe.Value == "oops"
		}},
		{"unknown op", &graph.UnknownOpError{Op: "x", Key: "k"}, func(e error) bool {
			var u *graph.UnknownOpError
			return errors.As(e, &u) && u.Op == "x" && u.Key == "k"
		}},
		{"killed worker", &scheduler.KilledWorkerError{Key: "k", Workers: []string{"a", "b"},
			Causes: []string{"exit code 3", "signal killed"}}, func(e error) bool {
			var k *scheduler.KilledWorkerError
			return errors.As(e, &k) && len(k.Workers) == 2 && len(k.Causes) == 2 && k.Causes[1] == "signal killed" &&
				strings.Contains(e.Error(), "last cause: signal killed")
		}},
		{"task error around a panic", &graph.TaskError{Key: "a", Op: "f", Root: "b", RootOp: "g", Worker: "w",
			Err: &graph.PanicError{Value: 1}}, func(e error) bool {
			var te *graph.TaskError
			var pe *graph.PanicError
			return errors.As(e, &te) && te.Root == "b" && te.Worker == "w" && errors.As(e, &pe)
		}},
		{"inner task", &graph.InnerTaskError{Key: "i", Op: "o", Err: errors.New("bad")}, func(e error) bool {
			var in *graph.InnerTaskError
			return errors.As(e, &in) && in.Key == "i" && in.Err.Error() == "bad"
		}},
		{"plain", errors.New("plain"), func(e error) bool { return e.Error() == "plain" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := proto.Marshal(EncodeError(tc.err))
			if err != nil {
				t.Fatal(err)
			}
			var e Error
			if err := proto.Unmarshal(b, &e); err != nil {
				t.Fatal(err)
			}
			got := DecodeError(&e)
			if !tc.check(got) {
				t.Fatalf("decoded %T %v from %v", got, got, tc.err)
			}
		})
	}
	if EncodeError(nil) != nil || DecodeError(nil) != nil {
		t.Fatal("nil error does not stay nil")
	}
}

// FuzzDecode decodes arbitrary bytes as every message the scheduler and
// the workers receive, and decodes the errors in them: no panics.
func FuzzDecode(f *testing.F) {
	seed, _ := proto.Marshal(&WorkerBatch{Done: []*TaskDone{{Key: "a", Error: EncodeError(&graph.TaskError{
		Err: &graph.InnerTaskError{Err: errors.New("x")}})}}})
	f.Add(seed)
	f.Add([]byte{0x0a, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		msgs := []proto.Message{&WorkerUp{}, &WorkerDown{}, &ClientUp{}, &ClientDown{}, &WorkerBatch{},
			&WorkerInstructions{}, &GetValues{}, &Value{}, &Error{}}
		for _, m := range msgs {
			if proto.Unmarshal(b, m) != nil {
				continue
			}
			switch m := m.(type) {
			case *Error:
				_ = DecodeError(m)
			case *WorkerBatch:
				for _, d := range m.Done {
					_ = DecodeError(d.Error)
				}
			case *ClientDown:
				for _, e := range m.GetBatch().GetErrors() {
					if err := DecodeError(e.Error); err != nil {
						_ = err.Error()
					}
				}
			}
		}
	})
}
