package graph

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"strconv"
	"sync"
	"syscall"
)

// Errors that cross a process boundary keep their type when it is
// registered: an error a task returns on a worker reaches the client as
// the same Go type, with the errors it wraps, so that errors.Is and
// errors.As work on a cluster as on the in-process executor. Register the
// error types and sentinel values of your own package at init time, like
// the functions of RegisterFunc, in the program the client and the
// workers both run:
//
//	type QuotaError struct {
//		Tenant string
//		Err    error // what the quota service said
//	}
//
//	func (e *QuotaError) Error() string { return "tenant " + e.Tenant + ": " + e.Err.Error() }
//	func (e *QuotaError) Unwrap() error { return e.Err }
//
//	var ErrNoQuota = errors.New("no quota left")
//
//	func init() {
//		graph.RegisterError[QuotaError]("mypkg.QuotaError")
//		graph.RegisterErrorValue("mypkg.ErrNoQuota", ErrNoQuota)
//	}
//
// Shoal registers its own: the file system's (*fs.PathError,
// *os.LinkError, *os.SyscallError, syscall.Errno, fs.ErrNotExist and the
// like, io.EOF), the CSV, Parquet, shuffle and spill errors, and those of
// package graph and scheduler. An error of a type the receiving side did
// not register arrives as a *RemoteError with its message and the
// errors it wraps, as far as they are registered.

// errorCodec turns errors of one type into JSON fields and the error they
// wrap, and back.
type errorCodec struct {
	name   string
	encode func(err error) (fields []byte, cause error, e error)
	decode func(fields []byte, cause error) (error, error)
}

var errorCodecs struct {
	sync.RWMutex
	byName   map[string]*errorCodec
	byType   map[reflect.Type]*errorCodec
	sentinel map[string]error
	names    map[error]string
}

func registerCodec(t reflect.Type, c *errorCodec) {
	errorCodecs.Lock()
	defer errorCodecs.Unlock()
	if errorCodecs.byName == nil {
		errorCodecs.byName = map[string]*errorCodec{}
		errorCodecs.byType = map[reflect.Type]*errorCodec{}
	}
	if old, ok := errorCodecs.byName[c.name]; ok && old != nil {
		panic(fmt.Sprintf("graph: error name %q registered twice", c.name))
	}
	if _, ok := errorCodecs.byType[t]; ok {
		panic(fmt.Sprintf("graph: error type %v registered twice", t))
	}
	errorCodecs.byName[c.name] = c
	errorCodecs.byType[t] = c
}

// RegisterError registers the error type *T under name, unique in the
// program: an error of type *T that crosses a process boundary arrives as
// a *T. T must be a struct whose pointer is an error. Its exported fields
// travel as JSON (give them JSON-encodable types); a field of type error
// is the error it wraps and travels as an error itself (at most one such
// field). RegisterError panics when name or the type is registered
// already, or when T does not fit.
func RegisterError[T any, PT interface {
	*T
	error
}](name string) {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("graph: RegisterError[%v]: not a struct", t))
	}
	cause := -1
	errType := reflect.TypeFor[error]()
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Type == errType {
			if !f.IsExported() || cause >= 0 {
				panic(fmt.Sprintf("graph: RegisterError[%v]: at most one exported field of type error", t))
			}
			cause = i
		}
	}
	registerCodec(reflect.TypeFor[PT](), &errorCodec{
		name: name,
		encode: func(err error) ([]byte, error, error) {
			v := *any(err).(PT) // a copy: the cause is cleared in it
			rv := reflect.ValueOf(&v).Elem()
			var c error
			if cause >= 0 {
				if f := rv.Field(cause); !f.IsNil() {
					c = f.Interface().(error)
					f.SetZero()
				}
			}
			b, e := json.Marshal(&v)
			return b, c, e
		},
		decode: func(fields []byte, c error) (error, error) {
			var v T
			if err := json.Unmarshal(fields, &v); err != nil {
				return nil, err
			}
			if cause >= 0 && c != nil {
				reflect.ValueOf(&v).Elem().Field(cause).Set(reflect.ValueOf(c))
			}
			if err := readable(PT(&v)); err != nil {
				return nil, fmt.Errorf("decode error %s: %w", name, err)
			}
			return PT(&v), nil
		},
	})
}

// readable checks that err's message can be read: the fields of an error
// from another process, or its cause, may be missing (a *fs.PathError
// without Err panics in Error), and such an error is better kept as its
// message than made.
func readable(err error) (e error) {
	defer func() {
		if r := recover(); r != nil {
			e = fmt.Errorf("its message panics: %v", r)
		}
	}()
	_ = err.Error()
	return nil
}

// RegisterErrorValue registers a sentinel error under name, unique in the
// program: when err itself crosses a process boundary (wrapped or not),
// the other side gets the same value, so that errors.Is(got, err) holds.
// It panics when name or err is registered already.
func RegisterErrorValue(name string, err error) {
	errorCodecs.Lock()
	defer errorCodecs.Unlock()
	if errorCodecs.sentinel == nil {
		errorCodecs.sentinel = map[string]error{}
		errorCodecs.names = map[error]string{}
	}
	if _, ok := errorCodecs.sentinel[name]; ok {
		panic(fmt.Sprintf("graph: error name %q registered twice", name))
	}
	if _, ok := errorCodecs.names[err]; ok {
		panic(fmt.Sprintf("graph: error %q registered twice", err))
	}
	errorCodecs.sentinel[name] = err
	errorCodecs.names[err] = name
}

// EncodedError is one link of an error's chain in a form that crosses a
// process boundary: the executors that run tasks in other processes use
// it. Name is "" for an error of no registered type or value, which keeps
// only its message.
type EncodedError struct {
	Name   string // the registered name of its type or value
	Fields []byte // its fields, as JSON, for a registered type
	// Wraps are the errors it wraps, when it is of no registered type
	// or value (Unwrap() error or Unwrap() []error); for a registered
	// type, the error of its error field (Cause).
	Cause error
	Wraps []error
}

// EncodeErrorLink describes err itself (not the errors it wraps) for the
// other side of a process boundary.
func EncodeErrorLink(err error) (EncodedError, error) {
	errorCodecs.RLock()
	name, isValue := errorCodecs.names[comparableErr(err)]
	c := errorCodecs.byType[reflect.TypeOf(err)]
	errorCodecs.RUnlock()
	switch {
	case isValue:
		return EncodedError{Name: name}, nil
	case c != nil:
		fields, cause, e := c.encode(err)
		if e != nil {
			return EncodedError{}, fmt.Errorf("encode error %s: %w", c.name, e)
		}
		return EncodedError{Name: c.name, Fields: fields, Cause: cause}, nil
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		if w := u.Unwrap(); w != nil {
			return EncodedError{Wraps: []error{w}}, nil
		}
	case interface{ Unwrap() []error }:
		return EncodedError{Wraps: u.Unwrap()}, nil
	}
	return EncodedError{}, nil
}

// comparableErr returns err when it can be a map key, else nil.
func comparableErr(err error) error {
	if t := reflect.TypeOf(err); t != nil && t.Comparable() {
		return err
	}
	return nil
}

// DecodeErrorLink makes the error that EncodeErrorLink described, with
// cause the error it wrapped (already decoded), and reports whether its
// name is registered here. msg is its message, for the errors of no
// registered type: they become a *RemoteError.
func DecodeErrorLink(name string, fields []byte, msg string, causes []error) (error, bool) {
	if name == "" {
		return &RemoteError{Message: msg, Causes: causes}, true
	}
	errorCodecs.RLock()
	v, isValue := errorCodecs.sentinel[name]
	c := errorCodecs.byName[name]
	errorCodecs.RUnlock()
	switch {
	case isValue:
		return v, true
	case c != nil:
		var cause error
		if len(causes) > 0 {
			cause = causes[0]
		}
		if err, e := c.decode(fields, cause); e == nil {
			return err, true
		}
	}
	return &RemoteError{Message: msg, Causes: causes}, false
}

// errnoCodec carries syscall.Errno by number: errors.Is(err,
// syscall.ENOSPC) and errors.Is(err, fs.ErrNotExist) hold on the other
// side (of the same operating system).
var errnoCodec = &errorCodec{
	name: "syscall.Errno",
	encode: func(err error) ([]byte, error, error) {
		return strconv.AppendUint(nil, uint64(err.(syscall.Errno)), 10), nil, nil
	},
	decode: func(fields []byte, _ error) (error, error) {
		n, err := strconv.ParseUint(string(fields), 10, 64)
		if err != nil {
			return nil, err
		}
		return syscall.Errno(n), nil
	},
}

func init() {
	registerCodec(reflect.TypeFor[syscall.Errno](), errnoCodec)
	RegisterError[LostInputsError]("graph.LostInputsError")
	RegisterError[WorkerLostError]("graph.WorkerLostError")
	RegisterError[fs.PathError]("fs.PathError")
	RegisterError[os.LinkError]("os.LinkError")
	RegisterError[os.SyscallError]("os.SyscallError")
	for name, err := range map[string]error{
		"fs.ErrNotExist": fs.ErrNotExist, "fs.ErrExist": fs.ErrExist, "fs.ErrPermission": fs.ErrPermission,
		"fs.ErrInvalid": fs.ErrInvalid, "fs.ErrClosed": fs.ErrClosed, "os.ErrDeadlineExceeded": os.ErrDeadlineExceeded,
		"io.EOF": io.EOF, "io.ErrUnexpectedEOF": io.ErrUnexpectedEOF, "io.ErrShortWrite": io.ErrShortWrite,
	} {
		RegisterErrorValue(name, err)
	}
}
