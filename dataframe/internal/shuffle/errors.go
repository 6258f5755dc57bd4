package shuffle

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/shoal-data/shoal/graph"
)

// DiskFullError reports that the disk under a shuffle's storage filled up
// while a split wrote shards or a collect wrote a sorted run. The files the
// failed task had written are removed before it returns. errors.Is(err,
// syscall.ENOSPC) holds.
type DiskFullError struct {
	Op        string // "split" or "collect"
	ShuffleID string
	Input     int    // the split's input partition (-1 for a collect)
	Output    int    // the output partition whose data was being written (-1: closing the file)
	Path      string // the file being written
	Written   int64  // bytes written to Path before the failure
	Err       error  // the cause, from the file system
}

func (e *DiskFullError) Error() string {
	what := "no space left on device"
	var errno syscall.Errno
	if errors.As(e.Err, &errno) {
		what = errno.Error()
	}
	if e.Output < 0 {
		return fmt.Sprintf("shuffle %s: %s of input partition %d: closing %s: %s (%d bytes written)",
			e.ShuffleID, e.Op, e.Input, e.Path, what, e.Written)
	}
	if e.Op == "collect" {
		return fmt.Sprintf("shuffle %s: collect of output partition %d: writing a sorted run to %s: %s (%d bytes written)",
			e.ShuffleID, e.Output, e.Path, what, e.Written)
	}
	return fmt.Sprintf("shuffle %s: %s of input partition %d: writing output partition %d to %s: %s (%d bytes written)",
		e.ShuffleID, e.Op, e.Input, e.Output, e.Path, what, e.Written)
}

func (e *DiskFullError) Unwrap() error { return e.Err }

// ShardError says that a collect could not read a shard: its file is
// gone, was freed by an earlier run of the collect, or is damaged, or the
// worker that holds it cannot be reached (a *graph.WorkerLostError).
// Running the split of Input again writes it anew.
type ShardError struct {
	ShuffleID string
	Output    int    // the collect's output partition
	Input     int    // the split's input partition
	Worker    string // the worker that holds the file, when it is another
	Path      string // the file: its path, or its name on Worker
	Offset    int64  // the shard's bytes in it
	Length    int64
	Err       error
}

func (e *ShardError) Error() string {
	where := fmt.Sprintf("collect of output partition %d: shard of input partition %d (%s, bytes %d to %d)",
		e.Output, e.Input, e.Path, e.Offset, e.Offset+e.Length)
	if e.Worker != "" {
		where = fmt.Sprintf("collect of output partition %d: shard of input partition %d (%s on worker %s, bytes %d to %d)",
			e.Output, e.Input, e.Path, e.Worker, e.Offset, e.Offset+e.Length)
	}
	var lost *graph.WorkerLostError
	if errors.As(e.Err, &lost) {
		return fmt.Sprintf("shuffle %s: %v (%s)", e.ShuffleID, lost, where)
	}
	return fmt.Sprintf("shuffle %s: %s: %v", e.ShuffleID, where, e.Err)
}

func (e *ShardError) Unwrap() error { return e.Err }

// isDiskFull reports whether err says the disk is full.
func isDiskFull(err error) bool { return errors.Is(err, syscall.ENOSPC) }

// ErrShardGone is the cause of a collect error about a shard that holds
// fewer rows than its manifest says: it was freed by an earlier collect of
// the same output, or damaged. A collect frees its shards once it has
// returned them (unless Options.KeepShards), so collecting again needs the
// shuffle to run again.
var ErrShardGone = errors.New("the shard was freed by an earlier collect of this output, or is damaged")

// The errors of a shuffle keep their type when they cross a process
// boundary (see graph.RegisterError).
func init() {
	graph.RegisterError[DiskFullError]("shuffle.DiskFullError")
	graph.RegisterError[ShardError]("shuffle.ShardError")
	graph.RegisterErrorValue("shuffle.ErrShardGone", ErrShardGone)
}
