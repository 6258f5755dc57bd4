package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/io/csv"
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
		{"path error around an errno, wrapped", &graph.TaskError{Key: "k", Op: "f", Root: "k", RootOp: "f",
			Err: fmt.Errorf("save: %w", &fs.PathError{Op: "write", Path: "/d/x", Err: syscall.ENOSPC})}, func(e error) bool {
			var pe *fs.PathError
			return errors.Is(e, syscall.ENOSPC) && errors.As(e, &pe) && pe.Path == "/d/x" &&
				e.Error() == `task "k" (op f) failed: save: write /d/x: no space left on device`
		}},
		{"csv parse error", fmt.Errorf("read: %w", &csv.ParseError{Path: "a.csv", Line: 7, Column: 2, Name: "v",
			Text: "x", Err: csv.ErrValue}), func(e error) bool {
			var pe *csv.ParseError
			return errors.As(e, &pe) && pe.Line == 7 && pe.Name == "v" && errors.Is(e, csv.ErrValue)
		}},
		{"registered value", fmt.Errorf("short: %w", io.ErrUnexpectedEOF), func(e error) bool {
			return errors.Is(e, io.ErrUnexpectedEOF) && e.Error() == "short: unexpected EOF"
		}},
		{"joined", errors.Join(errors.New("a"), fmt.Errorf("b: %w", fs.ErrPermission), context.Canceled), func(e error) bool {
			return errors.Is(e, fs.ErrPermission) && errors.Is(e, context.Canceled) && e.Error() == "a\nb: permission denied\ncontext canceled"
		}},
		{"missing data inside", fmt.Errorf("fetch: %w", &MissingDataError{Keys: []string{"x"}}), func(e error) bool {
			var md *MissingDataError
			return errors.As(e, &md) && md.Keys[0] == "x" && errors.Is(e, scheduler.ErrMissingData)
		}},
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

// TestErrorOfUnknownType decodes an error whose type the other side
// registered and this one did not: its message and causes stay.
func TestErrorOfUnknownType(t *testing.T) {
	e := &Error{Message: "quota: no space", Codec: "elsewhere.QuotaError", Fields: []byte(`{"Tenant":"a"}`),
		Cause: EncodeError(syscall.ENOSPC)}
	err := DecodeError(e)
	var re *graph.RemoteError
	if !errors.As(err, &re) || re.Message != "quota: no space" || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("decoded %T %v", err, err)
	}
	if f := EncodeError(fmt.Errorf("x: %w", &MissingDataError{Keys: []string{"k"}})).Find(Error_MISSING_DATA); f == nil || f.MissingKeys[0] != "k" {
		t.Errorf("Find: %v", f)
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
