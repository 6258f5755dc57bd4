package wire

import (
	"context"
	"errors"
	"fmt"

	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/scheduler"
)

// maxErrorDepth bounds the chain of causes kept when an error is encoded.
const maxErrorDepth = 8

// EncodeError turns an error into its wire form, keeping what callers on
// the other side branch on: missing data, panics with their stack,
// cancellation, unknown ops, killed workers, missing keys and the fields
// of task errors. Other errors keep their message.
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
	var (
		te    *graph.TaskError
		inner *graph.InnerTaskError
		pe    *graph.PanicError
		uo    *graph.UnknownOpError
		kw    *scheduler.KilledWorkerError
		mk    *scheduler.MissingKeyError
		md    *MissingDataError
	)
	switch {
	case errors.As(err, &te) && depth == 0:
		e.Kind = Error_TASK
		e.Key, e.Op, e.Root, e.RootOp, e.Worker = string(te.Key), te.Op, string(te.Root), te.RootOp, te.Worker
		e.Cause = encodeError(te.Err, depth+1)
	case errors.As(err, &inner):
		e.Kind = Error_INNER_TASK
		e.Key, e.Op = string(inner.Key), inner.Op
		e.Cause = encodeError(inner.Err, depth+1)
	case errors.As(err, &pe):
		e.Kind = Error_PANIC
		e.Message = fmt.Sprint(pe.Value)
		e.Stack = pe.Stack
	case errors.As(err, &md):
		e.Kind = Error_MISSING_DATA
		e.MissingKeys = md.Keys
	case errors.Is(err, scheduler.ErrMissingData):
		e.Kind = Error_MISSING_DATA
	case errors.As(err, &uo):
		e.Kind = Error_UNKNOWN_OP
		e.Op, e.Key = uo.Op, string(uo.Key)
	case errors.As(err, &kw):
		e.Kind = Error_KILLED_WORKER
		e.Key, e.Workers, e.Causes = string(kw.Key), kw.Workers, kw.Causes
	case errors.As(err, &mk):
		e.Kind = Error_MISSING_KEY
		e.Key = string(mk.Key)
	case errors.Is(err, context.Canceled):
		e.Kind = Error_CANCELED
	case errors.Is(err, context.DeadlineExceeded):
		e.Kind = Error_DEADLINE
	}
	return e
}

// DecodeError turns a wire error back into a Go error: the types of
// package graph and scheduler that EncodeError recognised, errors that
// match context.Canceled, context.DeadlineExceeded and
// scheduler.ErrMissingData with errors.Is, and a *graph.RemoteError
// holding the message otherwise. A nil e is a nil error.
func DecodeError(e *Error) error {
	return decodeError(e, 0)
}

func decodeError(e *Error, depth int) error {
	if e == nil {
		return nil
	}
	cause := func() error {
		if e.Cause == nil || depth >= maxErrorDepth {
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
	return &graph.RemoteError{Message: e.Message}
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
