package shuffle

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/internal/sortk"
	"github.com/shoal-data/shoal/internal/ended"
)

// Manifest is what a split task returns: where the rows of its input went,
// output by output. It is plain data (encoding/gob, JSON), small next to
// the rows: the collect task of output j reads Outputs[j] of every input's
// manifest.
type Manifest struct {
	ShuffleID string
	Input     int
	// Worker is the worker whose storage holds the files, when the
	// storage is a PeerStorage; empty: any reader's storage has them.
	Worker  string
	Layout  Layout
	Files   []string // storage names of the files written
	Outputs []Shard  // one per output partition
	Rows    int64    // rows of the input
	Bytes   int64    // bytes written, in all files
	// Flushes is how many times the split filled its memory budget (or
	// reached its end) and wrote its buffered rows out.
	Flushes int
	// PeakBuffered is the most bytes of partitioned rows it held.
	PeakBuffered int64
}

// Shard is the part of one input that goes to one output: zero or more
// segments (one per flush that had rows for the output).
type Shard struct {
	Rows     int64
	Bytes    int64 // bytes in files
	Segments []Segment
}

// Segment is a byte range of a file holding an Arrow IPC stream of rows
// of one output.
type Segment struct {
	File   int // index in Manifest.Files
	Offset int64
	Length int64
	Rows   int64
}

// Split partitions the rows of rec, input partition number input of the
// shuffle shuffleID, into m outputs with p and writes them as shards to
// st, within the memory budget of opts. It returns the manifest the
// collect tasks need. On error (a full disk is a *DiskFullError) or
// cancellation it removes the files it wrote.
func Split(ctx context.Context, st Storage, shuffleID string, input int, rec arrow.RecordBatch, p Partitioner, m int, opts Options) (*Manifest, error) {
	s, err := NewSplitter(st, shuffleID, input, rec.Schema(), p, m, opts)
	if err != nil {
		return nil, err
	}
	if err := s.Write(ctx, rec); err != nil {
		return nil, err
	}
	return s.Close(ctx)
}

// Splitter is a split task that takes its input in several batches (read
// from a file piece by piece, say): Write each batch, then Close for the
// manifest, or Abort. A Splitter is not safe for concurrent use.
type Splitter struct {
	st      Storage
	id      string
	input   int
	schema  *arrow.Schema
	p       Partitioner
	m       int
	opts    Options
	mem     memory.Allocator
	pending [][]arrow.RecordBatch // per output, waiting for the next flush
	pendBy  int64                 // bytes held by pending
	files   []*outFile
	man     *Manifest
	attempt string    // in the names of its files
	started time.Time // see Close
	err     error
	done    bool
}

// outFile is a shard file being written.
type outFile struct {
	name string
	wc   io.WriteCloser
	cw   *countingWriter
	bw   *bufio.Writer
}

// countingWriter counts the bytes written through it and keeps the first
// error of the writer below.
type countingWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// writeBuffer is the buffer of a shard file writer.
const writeBuffer = 1 << 20

// NewSplitter starts the split task of input partition number input of the
// shuffle shuffleID, whose rows have schema, into m outputs by p.
func NewSplitter(st Storage, shuffleID string, input int, schema *arrow.Schema, p Partitioner, m int, opts Options) (*Splitter, error) {
	if err := checkID(shuffleID); err != nil {
		return nil, err
	}
	if err := opts.check(); err != nil {
		return nil, err
	}
	if m < 1 || input < 0 || st == nil || p == nil || schema == nil {
		return nil, fmt.Errorf("shuffle %s: split of input partition %d into %d outputs: want m >= 1, input >= 0, a storage, a partitioner and a schema", shuffleID, input, m)
	}
	s := &Splitter{st: st, id: shuffleID, input: input, schema: schema, p: p, m: m, opts: opts, mem: opts.mem(),
		attempt: newAttempt(), started: time.Now(),
		pending: make([][]arrow.RecordBatch, m),
		man:     &Manifest{ShuffleID: shuffleID, Input: input, Layout: opts.Layout, Outputs: make([]Shard, m)}}
	if ps, ok := st.(PeerStorage); ok {
		s.man.Worker = ps.Self()
	}
	return s, nil
}

func (s *Splitter) fail(ctx context.Context, err error) error {
	s.err = err
	s.Abort(ctx)
	return err
}

// Write partitions rec and buffers its rows, writing shards out each time
// the buffer reaches the budget.
func (s *Splitter) Write(ctx context.Context, rec arrow.RecordBatch) error {
	if s.err != nil {
		return s.err
	}
	if s.done {
		return fmt.Errorf("shuffle %s: split of input partition %d: write after close", s.id, s.input)
	}
	if !rec.Schema().Equal(s.schema) {
		return s.fail(ctx, fmt.Errorf("shuffle %s: split of input partition %d: a batch with schema %s, want %s", s.id, s.input, rec.Schema(), s.schema))
	}
	n := rec.NumRows()
	s.man.Rows += n
	if n == 0 {
		return nil
	}
	// Partition in chunks of about a quarter of the budget, so that the
	// rows held between flushes stay near it.
	perRow := max(1, batchBytes(rec)/n)
	chunk := max(64, s.opts.budget()/4/perRow)
	for lo := int64(0); lo < n; lo += chunk {
		if err := ctx.Err(); err != nil {
			return s.fail(ctx, err)
		}
		slice := rec.NewSlice(lo, min(lo+chunk, n))
		err := s.partition(ctx, slice)
		slice.Release()
		if err != nil {
			return s.fail(ctx, err)
		}
		if s.pendBy >= s.opts.budget() {
			if err := s.flush(ctx); err != nil {
				return s.fail(ctx, err)
			}
		}
	}
	return nil
}

// partition buffers the rows of rec by output.
func (s *Splitter) partition(ctx context.Context, rec arrow.RecordBatch) error {
	parts, err := s.p.Partition(ctx, rec, s.m)
	if err != nil {
		return fmt.Errorf("shuffle %s: split of input partition %d: %w", s.id, s.input, err)
	}
	rows := int(rec.NumRows())
	if len(parts) != rows {
		return fmt.Errorf("shuffle %s: split of input partition %d: the partitioner gave %d outputs for %d rows", s.id, s.input, len(parts), rows)
	}
	// Counting sort of the rows by output.
	starts := make([]int, s.m+1)
	for i, q := range parts {
		if q < 0 || int(q) >= s.m {
			return fmt.Errorf("shuffle %s: split of input partition %d: the partitioner sent row %d to output %d of %d", s.id, s.input, i, q, s.m)
		}
		starts[q+1]++
	}
	for j := 1; j <= s.m; j++ {
		starts[j] += starts[j-1]
	}
	var taken arrow.RecordBatch
	if one := int(parts[0]); starts[one+1]-starts[one] == rows {
		rec.Retain() // every row goes to one output: no need to reorder
		taken = rec
	} else {
		order := make([]int32, rows)
		next := make([]int, s.m)
		copy(next, starts[:s.m])
		for i, q := range parts {
			order[next[q]] = int32(i)
			next[q]++
		}
		taken, err = sortk.Take(ctx, rec, order, s.mem)
		if err != nil {
			return fmt.Errorf("shuffle %s: split of input partition %d: %w", s.id, s.input, err)
		}
	}
	defer taken.Release()
	for j := range s.m {
		if starts[j+1] > starts[j] {
			s.pending[j] = append(s.pending[j], taken.NewSlice(int64(starts[j]), int64(starts[j+1])))
		}
	}
	s.pendBy += batchBytes(taken)
	s.man.PeakBuffered = max(s.man.PeakBuffered, s.pendBy)
	return nil
}

// flush writes the buffered rows out, one segment per output that has
// some.
func (s *Splitter) flush(ctx context.Context) error {
	for j, pieces := range s.pending {
		if len(pieces) == 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.writeSegment(ctx, j, pieces); err != nil {
			return err
		}
		for _, p := range pieces {
			p.Release()
		}
		s.pending[j] = nil
	}
	s.pendBy = 0
	s.man.Flushes++
	return nil
}

// file returns the file output j's next segment goes to: the split's one
// file (FilePerInput), created the first time, or a new file
// (FilePerShard), which writeSegment closes once written, so that a split
// holds one file open whatever the number of outputs.
func (s *Splitter) file(ctx context.Context, j int) (int, *outFile, error) {
	name := inputFile(s.id, s.input, s.attempt)
	if s.opts.Layout == FilePerShard {
		name = shardFile(s.id, s.input, j, len(s.man.Outputs[j].Segments), s.attempt)
	} else if len(s.files) > 0 {
		return 0, s.files[0], nil
	}
	wc, err := s.st.Create(ctx, name)
	if err != nil {
		if isDiskFull(err) {
			return 0, nil, &DiskFullError{Op: "split", ShuffleID: s.id, Input: s.input, Output: j, Path: s.st.Path(name), Err: err}
		}
		return 0, nil, fmt.Errorf("shuffle %s: split of input partition %d: create %s: %w", s.id, s.input, s.st.Path(name), err)
	}
	cw := &countingWriter{w: wc}
	f := &outFile{name: name, wc: wc, cw: cw, bw: bufio.NewWriterSize(cw, writeBuffer)}
	s.files = append(s.files, f)
	s.man.Files = append(s.man.Files, name)
	return len(s.files) - 1, f, nil
}

// writeSegment appends the rows of output j to its file as an Arrow IPC
// stream.
func (s *Splitter) writeSegment(ctx context.Context, j int, pieces []arrow.RecordBatch) error {
	idx, f, err := s.file(ctx, j)
	if err != nil {
		return err
	}
	off := f.cw.n
	w := ipc.NewWriter(f.bw, append(s.opts.writerOptions(), ipc.WithSchema(s.schema))...)
	var rows int64
	for _, p := range pieces {
		if err = w.Write(p); err != nil {
			break
		}
		rows += p.NumRows()
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = f.bw.Flush()
	}
	if err == nil && s.opts.Layout == FilePerShard {
		err = f.wc.Close()
		f.wc = nil
		f.bw = nil
	}
	if err != nil {
		if f.cw.err != nil {
			err = f.cw.err // the file system's error, not Arrow's wrapping
		}
		if isDiskFull(err) {
			return &DiskFullError{Op: "split", ShuffleID: s.id, Input: s.input, Output: j, Path: s.st.Path(f.name), Written: f.cw.n, Err: err}
		}
		return fmt.Errorf("shuffle %s: split of input partition %d: write output partition %d to %s: %w", s.id, s.input, j, s.st.Path(f.name), err)
	}
	sh := &s.man.Outputs[j]
	sh.Segments = append(sh.Segments, Segment{File: idx, Offset: off, Length: f.cw.n - off, Rows: rows})
	sh.Rows += rows
	sh.Bytes += f.cw.n - off
	return nil
}

// Close writes what is buffered, closes the files and returns the
// manifest.
func (s *Splitter) Close(ctx context.Context) (*Manifest, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.done {
		return nil, fmt.Errorf("shuffle %s: split of input partition %d: closed twice", s.id, s.input)
	}
	if s.pendBy > 0 {
		if err := s.flush(ctx); err != nil {
			return nil, s.fail(ctx, err)
		}
	}
	for _, f := range s.files {
		if f.wc == nil {
			s.man.Bytes += f.cw.n
			continue // closed when written
		}
		err := f.wc.Close()
		f.wc = nil
		if err != nil {
			if isDiskFull(err) {
				return nil, s.fail(ctx, &DiskFullError{Op: "split", ShuffleID: s.id, Input: s.input, Output: -1, Path: s.st.Path(f.name), Written: f.cw.n, Err: err})
			}
			return nil, s.fail(ctx, fmt.Errorf("shuffle %s: split of input partition %d: close %s: %w", s.id, s.input, s.st.Path(f.name), err))
		}
		s.man.Bytes += f.cw.n
	}
	// A computation that ended while this split ran removed the
	// shuffle's files, and nobody will remove these.
	if ended.Since(s.st.Path(Dir(s.id)), s.started) {
		err := s.fail(ctx, fmt.Errorf("shuffle %s: split of input partition %d: %w", s.id, s.input, ErrEnded))
		s.st.Remove(context.WithoutCancel(ctx), Dir(s.id)) // if nothing else is in it
		return nil, err
	}
	s.done = true
	return s.man, nil
}

// Abort drops the buffered rows and removes the files written. It is what
// a failed Write or Close does, and safe to call after them; after a
// successful Close it does nothing (the files are the shuffle's, removed by
// Cleanup).
func (s *Splitter) Abort(ctx context.Context) error {
	if s.done {
		return nil
	}
	for j, pieces := range s.pending {
		for _, p := range pieces {
			p.Release()
		}
		s.pending[j] = nil
	}
	s.pendBy = 0
	var errs []error
	for _, f := range s.files {
		if f.wc != nil {
			f.wc.Close()
			f.wc = nil
		}
		// Removing must work even when ctx is what was cancelled.
		if err := s.st.Remove(context.WithoutCancel(ctx), f.name); err != nil {
			errs = append(errs, err)
		}
	}
	s.files = nil
	if s.err == nil {
		s.err = fmt.Errorf("shuffle %s: split of input partition %d: aborted", s.id, s.input)
	}
	return errors.Join(errs...)
}

// batchBytes is the size of the Arrow buffers of rec's rows (of a slice:
// its share of the buffers).
func batchBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, c := range rec.Columns() {
		n += dataBytes(c.Data())
	}
	return n
}

func dataBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		n += dataBytes(c)
	}
	if d.DataType().ID() == arrow.DICTIONARY {
		n += dataBytes(d.Dictionary())
	}
	// A slice shares its parent's buffers: count its share.
	if full := bufferRows(d); full > 0 && int64(d.Len()) < full {
		n = n * int64(d.Len()) / full
	}
	return n
}

// bufferRows estimates how many rows d's buffers hold, from its value
// buffer (0 when unknown).
func bufferRows(d arrow.ArrayData) int64 {
	bufs := d.Buffers()
	if len(bufs) < 2 || bufs[1] == nil {
		return 0
	}
	switch t := d.DataType().(type) {
	case arrow.FixedWidthDataType:
		if w := t.BitWidth(); w >= 8 {
			return int64(bufs[1].Len()) * 8 / int64(w)
		}
	case arrow.OffsetsDataType:
		return int64(bufs[1].Len())/int64(t.OffsetTypeTraits().BytesRequired(1)) - 1
	}
	return 0
}
