// Package spillfile writes task results to disk and reads them back: Arrow
// records and tables as Arrow IPC files, other values as their registry
// codec bytes. The in-process executor and the cluster workers spill
// through it, so their files look the same.
package spillfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/shoal-data/shoal/graph"
)

// Error says that a result could not be written to disk.
type Error struct {
	Key   graph.Key // the result being spilled
	Path  string    // the file it was written to
	Bytes int64     // the size of the result
	Err   error     // what the file system said
}

func (e *Error) Error() string {
	msg := e.Err.Error()
	if errors.Is(e.Err, syscall.ENOSPC) {
		msg += " (no space left on device)"
	}
	return fmt.Sprintf("spill %q (%d bytes) to %s: %s", e.Key, e.Bytes, e.Path, msg)
}

func (e *Error) Unwrap() error { return e.Err }

// Name makes a file name from a key: safe characters are kept, the rest
// replaced, and the counter n keeps names unique. The extension says how
// the value is stored.
func Name(k graph.Key, n int, v any) string {
	b := make([]byte, 0, len(k)+16)
	for i := 0; i < len(k) && len(b) < 80; i++ {
		c := k[i]
		if c == '-' || c == '_' || c == '.' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			b = append(b, c)
		} else {
			b = append(b, '_')
		}
	}
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(n), 10)
	switch v.(type) {
	case arrow.RecordBatch:
		b = append(b, ".record.arrow"...)
	case arrow.Table:
		b = append(b, ".table.arrow"...)
	default:
		b = append(b, ".bin"...)
	}
	return string(b)
}

// Timing says how long a WriteTimed or ReadTimed took: in all, and in
// the file system's calls; the rest was encoding or decoding.
type Timing struct {
	Total, IO time.Duration
}

// Write writes v to a new file at path: an Arrow IPC file for Arrow data,
// the value's codec bytes otherwise.
func Write(path string, v any, reg *graph.Registry) error {
	_, err := WriteTimed(path, v, reg)
	return err
}

// WriteTimed is Write, saying how long it took.
func WriteTimed(path string, v any, reg *graph.Registry) (tm Timing, err error) {
	start := time.Now()
	defer func() { tm.Total = time.Since(start) }()
	err = write(path, v, reg, &tm.IO)
	return tm, err
}

func write(path string, v any, reg *graph.Registry, ioTime *time.Duration) (err error) {
	var data []byte
	switch v.(type) {
	case arrow.RecordBatch, arrow.Table:
	default:
		if data, err = reg.MarshalValue(v); err != nil {
			return err
		}
	}
	t0 := time.Now()
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	*ioTime += time.Since(t0)
	if err != nil {
		return err
	}
	f := &timedWriter{f: file, io: ioTime}
	defer func() {
		t0 := time.Now()
		if cerr := file.Close(); err == nil {
			err = cerr
		}
		*ioTime += time.Since(t0)
	}()
	switch x := v.(type) {
	case arrow.RecordBatch:
		return writeIPC(f, x.Schema(), func(w *ipc.FileWriter) error { return w.Write(x) })
	case arrow.Table:
		return writeIPC(f, x.Schema(), func(w *ipc.FileWriter) error {
			tr := array.NewTableReader(x, -1)
			defer tr.Release()
			for tr.Next() {
				if err := w.Write(tr.RecordBatch()); err != nil {
					return err
				}
			}
			return tr.Err()
		})
	}
	_, err = f.Write(data)
	return err
}

// timedWriter adds the time of its writes to io.
type timedWriter struct {
	f  *os.File
	io *time.Duration
}

func (w *timedWriter) Write(p []byte) (int, error) {
	t0 := time.Now()
	n, err := w.f.Write(p)
	*w.io += time.Since(t0)
	return n, err
}

func writeIPC(f io.Writer, schema *arrow.Schema, write func(*ipc.FileWriter) error) error {
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema))
	if err != nil {
		return err
	}
	if err := write(w); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// Read reads a value written by Write; the file's name (from Name) says
// how it is stored.
func Read(path string, reg *graph.Registry) (any, error) {
	v, _, err := ReadTimed(path, reg)
	return v, err
}

// ReadTimed is Read, saying how long it took.
func ReadTimed(path string, reg *graph.Registry) (v any, tm Timing, err error) {
	start := time.Now()
	data, err := os.ReadFile(path)
	tm.IO = time.Since(start)
	if err == nil {
		if v, err = decode(path, data, reg); err != nil {
			err = fmt.Errorf("read spilled value %s: %w", path, err)
		}
	}
	tm.Total = time.Since(start)
	return v, tm, err
}

func decode(path string, data []byte, reg *graph.Registry) (any, error) {
	if filepath.Ext(path) != ".arrow" {
		return reg.UnmarshalValue(data)
	}
	// An Arrow IPC file is its magic, an IPC stream and a footer that
	// indexes the stream. The footer is not read: Arrow's file reader
	// trusts its offsets and counts, and a file cut short or damaged on
	// disk made it panic or allocate without bound. The stream is read
	// instead, each message checked before Arrow reads it.
	if len(data) < len(arrowMagic)+2 || string(data[:len(arrowMagic)]) != arrowMagic {
		return nil, errors.New("not an Arrow IPC file")
	}
	r, err := graph.NewArrowReader(bytes.NewReader(data[len(arrowMagic)+2:]), int64(len(data)))
	if err != nil {
		return nil, err
	}
	defer r.Release()
	var recs []arrow.RecordBatch
	release := func() {
		for _, rec := range recs {
			rec.Release()
		}
	}
	for r.Next() {
		rec := r.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
	}
	if err := r.Err(); err != nil {
		release()
		return nil, err
	}
	if len(recs) == 1 && strings.HasSuffix(path, ".record.arrow") {
		return recs[0], nil
	}
	t := array.NewTableFromRecords(r.Schema(), recs)
	release()
	return t, nil
}

// arrowMagic begins an Arrow IPC file, padded to 8 bytes.
const arrowMagic = "ARROW1"

// A spill's error keeps its type when it crosses a process boundary (see
// graph.RegisterError).
func init() { graph.RegisterError[Error]("spill.Error") }
