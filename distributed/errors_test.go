package distributed_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/internal/testutil"
	"github.com/shoal-data/shoal/io/csv"
)

// opaqueError is a type no one registered: it arrives as a
// *graph.RemoteError, with what it wraps.
type opaqueError struct{ err error }

func (e *opaqueError) Error() string { return "opaque: " + e.err.Error() }
func (e *opaqueError) Unwrap() error { return e.err }

var failWith = graph.MustRegisterFunc("distributed_test.fail_with", failWithFn)

// failWithFn fails with an error of the kind named.
func failWithFn(_ context.Context, kind string) (int, error) {
	switch kind {
	case "disk full":
		return 0, fmt.Errorf("save the result: %w", &fs.PathError{Op: "write", Path: "/data/out.bin", Err: syscall.ENOSPC})
	case "missing file":
		_, err := os.Open("/nonexistent/shoal-test-input.csv")
		return 0, fmt.Errorf("load: %w", err)
	case "opaque":
		return 0, &opaqueError{err: io.ErrUnexpectedEOF}
	case "joined":
		return 0, errors.Join(errors.New("first"), fmt.Errorf("second: %w", syscall.EACCES))
	}
	return 0, errors.New("plain")
}

// TestErrorsKeepTheirTypes has tasks on worker processes' side of the wire
// fail with errors of the file system, of a CSV read and of types nobody
// registered: errors.Is and errors.As work on what the client gets as
// they do on the in-process executor, and the message is the same.
func TestErrorsKeepTheirTypes(t *testing.T) {
	_, c := newCluster(t, distributed.LocalClusterOptions{Workers: 1, ThreadsPerWorker: 1, InProcess: true})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tests := []struct {
		kind  string
		check func(error) bool
	}{
		{"disk full", func(err error) bool {
			var pe *fs.PathError
			return errors.Is(err, syscall.ENOSPC) && errors.As(err, &pe) && pe.Path == "/data/out.bin" && pe.Op == "write"
		}},
		{"missing file", func(err error) bool {
			var pe *fs.PathError
			return errors.Is(err, fs.ErrNotExist) && errors.As(err, &pe) && pe.Op == "open"
		}},
		{"opaque", func(err error) bool {
			var re *graph.RemoteError
			return errors.Is(err, io.ErrUnexpectedEOF) && errors.As(err, &re) && re.Message == "opaque: unexpected EOF"
		}},
		{"joined", func(err error) bool { return errors.Is(err, syscall.EACCES) }},
	}
	for _, tc := range tests {
		t.Run(tc.kind, func(t *testing.T) {
			_, err := graph.Compute[int](ctx, c, failWith.Call(tc.kind))
			_, local := failWithFn(ctx, tc.kind)
			var te *graph.TaskError
			if !errors.As(err, &te) || te.Worker == "" {
				t.Fatalf("error %v: no TaskError naming the worker", err)
			}
			if !tc.check(err) || !strings.HasSuffix(err.Error(), local.Error()) {
				t.Errorf("from the cluster: %v (%T); in-process: %v", err, errors.Unwrap(err), local)
			}
		})
	}

	// A malformed row of a CSV file read by the workers.
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(path, []byte("a,b\n1,2\n3,x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	df, err := dataframe.ReadCSV(ctx, path, dataframe.CSVOptions{Types: map[string]arrow.DataType{"b": arrow.PrimitiveTypes.Int64}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = df.WithColumn("s", dataframe.Col("a").Add(dataframe.Col("b"))).Compute(ctx, c)
	var pe *csv.ParseError
	if !errors.As(err, &pe) || pe.Path != path || pe.Line != 3 || pe.Name != "b" || !errors.Is(err, csv.ErrValue) {
		t.Errorf("a malformed row read on a worker: %v (%+v)", err, pe)
	}
}

// TestShuffleDiskFullOnCluster fills the disk of the workers during a
// shuffle: the client's error is a *dataframe.ShuffleError naming the
// path, and errors.Is(err, syscall.ENOSPC) holds.
func TestShuffleDiskFullOnCluster(t *testing.T) {
	dir := testutil.Tmpfs(t, 256<<10)
	_, c := newCluster(t, distributed.LocalClusterOptions{Workers: 2, ThreadsPerWorker: 1, InProcess: true, LocalDir: dir})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	src := t.TempDir()
	df, err := dataframe.ReadCSV(ctx, writeTutorialCSV(t, src, 4, 20_000), dataframe.CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = df.SortValues("temperature").Compute(ctx, c)
	var se *dataframe.ShuffleError
	var te *graph.TaskError
	if !errors.As(err, &se) || !errors.Is(err, syscall.ENOSPC) || !strings.HasPrefix(se.Path, dir) ||
		!errors.As(err, &te) || te.Worker == "" {
		t.Fatalf("error %v, want a ShuffleError with ENOSPC under %s naming the worker", err, dir)
	}
}

// TestSchedulerLost closes the scheduler under a connected client: its
// calls then fail with an error that matches ErrSchedulerLost, so that a
// program can tell a lost scheduler from a failed task and connect again.
func TestSchedulerLost(t *testing.T) {
	lc, c := newCluster(t, distributed.LocalClusterOptions{Workers: 1, InProcess: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if got, err := graph.Compute[int](ctx, c, double.Call(1)); err != nil || got != 2 {
		t.Fatalf("before: %v, %v", got, err)
	}
	if err := lc.Scheduler().Close(ctx); err != nil {
		t.Fatal(err)
	}
	var err error
	eventually(t, "the client saw the scheduler go", func() bool {
		_, err = graph.Compute[int](ctx, c, double.Call(2))
		return err != nil
	})
	if !errors.Is(err, distributed.ErrSchedulerLost) || !strings.Contains(err.Error(), "lost the scheduler "+lc.Address()) {
		t.Fatalf("compute after the scheduler closed: %v, want ErrSchedulerLost naming %s", err, lc.Address())
	}
	// The calls that ask the scheduler directly say so too: removing a
	// shuffle's files after a computation does (the chaos suite met its
	// transport error when it killed the scheduler).
	if _, err := c.Info(ctx); !errors.Is(err, distributed.ErrSchedulerLost) {
		t.Errorf("info after the scheduler closed: %v, want ErrSchedulerLost", err)
	}
	if err := c.RemoveWorkerFiles(ctx, []string{"shuffle-x"}); !errors.Is(err, distributed.ErrSchedulerLost) {
		t.Errorf("remove worker files after the scheduler closed: %v, want ErrSchedulerLost", err)
	}
}
