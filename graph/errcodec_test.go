package graph_test

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/shoal-data/shoal/graph"
)

// quotaError is an error type of a user's package.
type quotaError struct {
	Tenant string
	Used   int64
	Err    error
}

func (e *quotaError) Error() string {
	return fmt.Sprintf("tenant %s (%d used): %v", e.Tenant, e.Used, e.Err)
}
func (e *quotaError) Unwrap() error { return e.Err }

var errNoQuota = errors.New("no quota left")

func init() {
	graph.RegisterError[quotaError]("graph_test.quotaError")
	graph.RegisterErrorValue("graph_test.errNoQuota", errNoQuota)
}

// roundTrip sends err link by link as an executor would, and makes it
// again.
func roundTrip(t *testing.T, err error) error {
	t.Helper()
	link, e := graph.EncodeErrorLink(err)
	if e != nil {
		t.Fatal(e)
	}
	var causes []error
	if link.Cause != nil {
		causes = append(causes, roundTrip(t, link.Cause))
	}
	for _, w := range link.Wraps {
		causes = append(causes, roundTrip(t, w))
	}
	got, ok := graph.DecodeErrorLink(link.Name, link.Fields, err.Error(), causes)
	if !ok {
		t.Fatalf("%q is not registered", link.Name)
	}
	return got
}

func TestErrorCodecs(t *testing.T) {
	tests := []struct {
		name  string
		err   error
		check func(error) bool
	}{
		{"registered type and value", &quotaError{Tenant: "a", Used: 7, Err: errNoQuota}, func(e error) bool {
			var q *quotaError
			return errors.As(e, &q) && q.Tenant == "a" && q.Used == 7 && errors.Is(e, errNoQuota)
		}},
		{"the original is not changed", &quotaError{Tenant: "b", Err: syscall.EDQUOT}, func(e error) bool {
			return errors.Is(e, syscall.EDQUOT)
		}},
		{"path error", &fs.PathError{Op: "open", Path: "/x", Err: syscall.ENOENT}, func(e error) bool {
			var pe *fs.PathError
			return errors.As(e, &pe) && pe.Path == "/x" && errors.Is(e, fs.ErrNotExist)
		}},
		{"a wrapper of no registered type", fmt.Errorf("load %s: %w", "y", errNoQuota), func(e error) bool {
			var re *graph.RemoteError
			return errors.As(e, &re) && errors.Is(e, errNoQuota) && e.Error() == "load y: no quota left"
		}},
		{"nothing known", errors.New("just text"), func(e error) bool {
			var re *graph.RemoteError
			return errors.As(e, &re) && re.Message == "just text" && len(re.Causes) == 0
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.err.Error()
			got := roundTrip(t, tc.err)
			if !tc.check(got) || got.Error() != before || tc.err.Error() != before {
				t.Errorf("%q came back as %T %q", before, got, got)
			}
		})
	}
	q := &quotaError{Tenant: "b", Err: syscall.EDQUOT}
	roundTrip(t, q)
	if q.Err != syscall.EDQUOT {
		t.Errorf("encoding changed the cause of the original to %v", q.Err)
	}
}

func TestRegisterErrorRefuses(t *testing.T) {
	tests := []struct {
		name string
		f    func()
		want string
	}{
		{"name twice", func() { graph.RegisterError[quotaError]("graph_test.quotaError") }, "registered twice"},
		{"value twice", func() { graph.RegisterErrorValue("graph_test.other", errNoQuota) }, "registered twice"},
		{"two error fields", func() { graph.RegisterError[twoCauses]("graph_test.twoCauses") }, "at most one"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), tc.want) {
					t.Errorf("panic %v, want %q", r, tc.want)
				}
			}()
			tc.f()
		})
	}
}

type twoCauses struct{ A, B error }

func (e *twoCauses) Error() string { return "two" }

// linkNames are names the error codec knows: the fuzzer picks one by
// number, since it would seldom spell one.
var linkNames = []string{"", "fs.PathError", "os.LinkError", "os.SyscallError", "syscall.Errno",
	"graph.LostInputsError", "graph.WorkerLostError", "graph_test.quotaError", "fs.ErrNotExist", "io.EOF",
	"graph_test.errNoQuota", "not.Registered"}

// FuzzDecodeErrorLink decodes links of errors from another process, as
// they come off the wire: the error made is an error whose message and
// chain can be read (never a panic, whatever the fields or the causes
// missing), and a link decoded as its registered type encodes again to
// the same name and fields that decode to the same message.
func FuzzDecodeErrorLink(f *testing.F) {
	for _, err := range []error{
		&quotaError{Tenant: "a", Used: 7, Err: errNoQuota},
		&fs.PathError{Op: "open", Path: "/x", Err: syscall.ENOENT},
		&graph.LostInputsError{Keys: []graph.Key{"a-1"}, Err: errNoQuota},
		&graph.WorkerLostError{Worker: "127.0.0.1:1", Reason: "killed"},
		syscall.ENOSPC, io.EOF,
	} {
		link, e := graph.EncodeErrorLink(err)
		if e != nil {
			f.Fatal(e)
		}
		pick := slices.Index(linkNames, link.Name)
		if pick < 0 {
			pick = 0
		}
		f.Add(uint8(pick), link.Fields, err.Error(), link.Cause != nil)
		f.Add(uint8(pick), link.Fields, err.Error(), false)
	}
	f.Add(uint8(1), []byte(`{"Op":"open"}`), "open: no cause", false)
	f.Add(uint8(4), []byte("99999999999999999999"), "errno", false)
	f.Fuzz(func(t *testing.T, pick uint8, fields []byte, msg string, withCause bool) {
		name := linkNames[int(pick)%len(linkNames)]
		var causes []error
		if withCause {
			causes = []error{&graph.RemoteError{Message: "cause"}}
		}
		err, known := graph.DecodeErrorLink(name, fields, msg, causes)
		if err == nil {
			t.Fatalf("DecodeErrorLink(%q, %q) is nil", name, fields)
		}
		_ = err.Error()
		_ = errors.Is(err, fs.ErrNotExist)
		var re *graph.RemoteError
		if errors.As(err, &re) || !known {
			return
		}
		link, e := graph.EncodeErrorLink(err)
		if e != nil {
			t.Fatalf("%T %q decoded but does not encode: %v", err, err, e)
		}
		if link.Name != name {
			t.Fatalf("%T decoded from %q encodes as %q", err, name, link.Name)
		}
		var back []error
		if link.Cause != nil {
			back = []error{link.Cause}
		}
		again, _ := graph.DecodeErrorLink(link.Name, link.Fields, msg, back)
		if again.Error() != err.Error() {
			t.Fatalf("%s %q: decoded %q, then %q", name, fields, err.Error(), again.Error())
		}
	})
}
