package wire

import (
	"context"
	"fmt"

	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/scheduler"
)

// maxErrorDepth bounds the chain of causes kept when an error is encoded.
const maxErrorDepth = 8

// EncodeError turns an error into its wire form, link by link of its
// chain of wrapped errors (at most maxErrorDepth deep), keeping what
// callers on the other side branch on: the task errors of package graph
// with their fields, panics with their stack, missing data, unknown ops,
// killed workers, missing keys, cancellation, and every type and value
// registered with graph.RegisterError and graph.RegisterErrorValue
// (errors of the file system among them). Other errors keep their message
// and the errors they wrap.
func EncodeError(err error) *Error {
	return encodeError(err, 0)
}

func encodeError(err error, depth int) *Error {
	if err == nil {
		return nil
	}
	e := &Error{Message: err.Error()}
	if depth >= maxErrorDepth {
		return e
	}
	switch x := err.(type) {
	case *graph.TaskError:
		e.Kind = Error_TASK
		e.Key, e.Op, e.Root, e.RootOp, e.Worker = string(x.Key), x.Op, string(x.Root), x.RootOp, x.Worker
		e.Cause = encodeError(x.Err, depth+1)
		return e
	case *graph.InnerTaskError:
		e.Kind = Error_INNER_TASK
		e.Key, e.Op = string(x.Key), x.Op
		e.Cause = encodeError(x.Err, depth+1)
		return e
	case *graph.PanicError:
		e.Kind = Error_PANIC
		e.Message = fmt.Sprint(x.Value)
		e.Stack = x.Stack
		return e
	case *MissingDataError:
		e.Kind = Error_MISSING_DATA
		e.MissingKeys = x.Keys
		return e
	case *graph.UnknownOpError:
		e.Kind = Error_UNKNOWN_OP
		e.Op, e.Key = x.Op, string(x.Key)
		return e
	case *scheduler.KilledWorkerError:
		e.Kind = Error_KILLED_WORKER
		e.Key, e.Workers, e.Causes = string(x.Key), x.Workers, x.Causes
		return e
	case *scheduler.MissingKeyError:
		e.Kind = Error_MISSING_KEY
		e.Key = string(x.Key)
		return e
	case *remoteWrapped:
		err = x.target
	}
	switch err {
	case scheduler.ErrMissingData:
		e.Kind = Error_MISSING_DATA
		return e
	case context.Canceled:
		e.Kind = Error_CANCELED
		return e
	case context.DeadlineExceeded:
		e.Kind = Error_DEADLINE
		return e
	}
	link, lerr := graph.EncodeErrorLink(err)
	if lerr != nil {
		return e // its message only
	}
	e.Codec, e.Fields = link.Name, link.Fields
	e.Cause = encodeError(link.Cause, depth+1)
	for _, w := range link.Wraps {
		if w == nil {
			continue
		}
		if e.Cause == nil {
			e.Cause = encodeError(w, depth+1)
		} else {
			e.Wraps = append(e.Wraps, encodeError(w, depth+1))
		}
	}
	return e
}

// DecodeError turns a wire error back into a Go error: the types of
// package graph and scheduler that EncodeError recognised, errors that
// match context.Canceled, context.DeadlineExceeded and
// scheduler.ErrMissingData with errors.Is, the types and values
// registered in this program with graph.RegisterError and
// graph.RegisterErrorValue, and a *graph.RemoteError holding the message
// and the decoded errors it wrapped otherwise. A nil e is a nil error.
func DecodeError(e *Error) error {
	return decodeError(e, 0)
}

func decodeError(e *Error, depth int) error {
	if e == nil {
		return nil
	}
	if depth >= maxErrorDepth {
		return &graph.RemoteError{Message: e.Message}
	}
	cause := func() error {
		if e.Cause == nil {
			return &graph.RemoteError{Message: e.Message}
		}
		return decodeError(e.Cause, depth+1)
	}
	switch e.Kind {
	case Error_TASK:
		return &graph.TaskError{Key: graph.Key(e.Key), Op: e.Op, Root: graph.Key(e.Root), RootOp: e.RootOp,
			Worker: e.Worker, Err: cause()}
	case Error_INNER_TASK:
		return &graph.InnerTaskError{Key: graph.Key(e.Key), Op: e.Op, Err: cause()}
	case Error_PANIC:
		return &graph.PanicError{Value: e.Message, Stack: e.Stack}
	case Error_MISSING_DATA:
		return &MissingDataError{Keys: e.MissingKeys, Message: e.Message}
	case Error_UNKNOWN_OP:
		return &graph.UnknownOpError{Op: e.Op, Key: graph.Key(e.Key)}
	case Error_KILLED_WORKER:
		return &scheduler.KilledWorkerError{Key: graph.Key(e.Key), Workers: e.Workers, Causes: e.Causes}
	case Error_MISSING_KEY:
		return &scheduler.MissingKeyError{Key: graph.Key(e.Key)}
	case Error_CANCELED:
		return &remoteWrapped{msg: e.Message, target: context.Canceled}
	case Error_DEADLINE:
		return &remoteWrapped{msg: e.Message, target: context.DeadlineExceeded}
	}
	var causes []error
	if e.Cause != nil {
		causes = append(causes, decodeError(e.Cause, depth+1))
	}
	for _, w := range e.Wraps {
		if w != nil {
			causes = append(causes, decodeError(w, depth+1))
		}
	}
	err, _ := graph.DecodeErrorLink(e.Codec, e.Fields, e.Message, causes)
	return err
}

// Find returns the first error of kind in e's chain (e itself, its
// causes and what it wraps), or nil.
func (e *Error) Find(kind Error_Kind) *Error {
	for depth := 0; e != nil && depth <= maxErrorDepth; depth++ {
		if e.Kind == kind {
			return e
		}
		for _, w := range e.Wraps {
			if f := w.Find(kind); f != nil {
				return f
			}
		}
		e = e.Cause
	}
	return nil
}

// MissingDataError says that the values of Keys could not be had: the
// workers that held them are gone or no longer hold them. It matches
// scheduler.ErrMissingData with errors.Is.
type MissingDataError struct {
	Keys    []string
	Message string
}

func (e *MissingDataError) Error() string {
	if e.Message != "" {
		return e.Message
	}
	return fmt.Sprintf("%v: %v", scheduler.ErrMissingData, e.Keys)
}

// Is makes errors.Is(err, scheduler.ErrMissingData) true.
func (e *MissingDataError) Is(target error) bool { return target == scheduler.ErrMissingData }

// remoteWrapped keeps a remote message and matches a sentinel error.
type remoteWrapped struct {
	msg    string
	target error
}

func (e *remoteWrapped) Error() string        { return e.msg }
func (e *remoteWrapped) Is(target error) bool { return target == e.target }
