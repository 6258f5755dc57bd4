package csv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/io/storage"
)

const (
	defaultBatchRows = 65536
)

// chunkSize is how many bytes of a block are read and parsed at a time; a
// variable for tests.
var chunkSize = 8 << 20

var chunkPool = sync.Pool{New: func() any { b := make([]byte, chunkSize); return &b }}

// Projection returns the schema of the record ReadBlock returns for columns
// (nil: all), or an error naming a column that does not exist.
func (p *Plan) Projection(columns []string) (*arrow.Schema, error) {
	idx, err := p.columnIndexes(columns)
	if err != nil {
		return nil, err
	}
	fields := make([]arrow.Field, len(idx))
	for i, j := range idx {
		fields[i] = p.Schema.Field(j)
	}
	return arrow.NewSchema(fields, nil), nil
}

func (p *Plan) columnIndexes(columns []string) ([]int, error) {
	if p.Schema == nil {
		return nil, errors.New("csv: plan has no schema")
	}
	if columns == nil {
		idx := make([]int, p.Schema.NumFields())
		for i := range idx {
			idx[i] = i
		}
		return idx, nil
	}
	idx := make([]int, len(columns))
	seen := map[string]bool{}
	for i, name := range columns {
		if seen[name] {
			return nil, fmt.Errorf("csv: column %q selected twice", name)
		}
		seen[name] = true
		js := p.Schema.FieldIndices(name)
		if len(js) == 0 {
			names := make([]string, p.Schema.NumFields())
			for k, f := range p.Schema.Fields() {
				names[k] = f.Name
			}
			return nil, fmt.Errorf("csv: no column %q; the columns are %s", name, quoteNames(names))
		}
		idx[i] = js[0]
	}
	return idx, nil
}

// ReadBlock reads block i of the plan: one record with the rows of the block
// (those that pass ro.Filter) and the columns ro.Columns selects. With
// Options.BadRows = Skip, malformed rows are left out and returned as bad
// rows; otherwise the first is an error, a *ParseError.
//
// Blocks may be read concurrently, and in other processes than the one that
// made the plan.
func ReadBlock(ctx context.Context, fsys storage.FS, plan *Plan, i int, ro ReadOptions) (arrow.RecordBatch, []BadRow, error) {
	if i < 0 || i >= len(plan.Blocks) {
		return nil, nil, fmt.Errorf("csv: block %d of a plan with %d blocks", i, len(plan.Blocks))
	}
	blk := plan.Blocks[i]
	idx, err := plan.columnIndexes(ro.Columns)
	if err != nil {
		return nil, nil, err
	}
	o := plan.Options
	outSchema, _ := plan.Projection(ro.Columns)

	batchRows := ro.BatchRows
	if batchRows <= 0 {
		batchRows = defaultBatchRows
	}
	estRows := batchRows
	if ro.Filter == nil {
		batchRows = int(^uint(0) >> 1)
		estRows = 1024
		if plan.RowBytes > 0 {
			estRows = int(float64(blk.Length)/plan.RowBytes*1.05) + 64
		}
	}
	cols := make([]column, plan.Schema.NumFields())
	for j := range cols {
		cols[j].kind = kSkip
	}
	for _, j := range idx {
		layout, isDate := o.ParseDates[plan.Schema.Field(j).Name]
		if cols[j], err = newColumn(plan.Schema.Field(j), layout, isDate); err != nil {
			return nil, nil, err
		}
		cols[j].mem = ro.Allocator
		cols[j].reserve(estRows, plan.fieldHint(j))
	}
	p := newParser(o.Delimiter, o.Quote, cols, o.NullValues, o.BadRows == Skip, o.NoNewlinesInQuotes, batchRows)
	defer p.release()

	f, err := fsys.Open(ctx, blk.Path)
	if err != nil {
		return nil, nil, fmt.Errorf("csv: %w", err)
	}
	defer f.Close()
	r := &blockReader{plan: plan, blk: blk, f: f, p: p, idx: idx, schema: outSchema, ro: ro}
	defer r.release()
	if err := r.run(ctx); err != nil {
		return nil, nil, err
	}
	rec, err := r.result()
	if err != nil {
		return nil, nil, err
	}
	bad, err := r.badRows()
	if err != nil {
		rec.Release()
		return nil, nil, err
	}
	return rec, bad, nil
}

func (p *Plan) fieldHint(j int) float64 {
	if j < len(p.fieldBytes) {
		return p.fieldBytes[j] * 1.05
	}
	return 8
}

// blockReader reads one block in chunks.
type blockReader struct {
	plan    *Plan
	blk     Block
	f       storage.File
	p       *parser
	idx     []int
	schema  *arrow.Schema
	ro      ReadOptions
	batches []arrow.RecordBatch // filtered batches
	bad     []issue
	lines   lineCounter
}

func (r *blockReader) release() {
	for _, b := range r.batches {
		b.Release()
	}
	r.batches = nil
}

func (r *blockReader) run(ctx context.Context) error {
	var buf []byte
	switch {
	case r.blk.Length < int64(chunkSize)/4:
		buf = make([]byte, max(r.blk.Length, 1))
	default:
		bufp := chunkPool.Get().(*[]byte)
		if cap(*bufp) < chunkSize {
			*bufp = make([]byte, chunkSize)
		}
		buf = (*bufp)[:chunkSize]
		defer func() {
			*bufp = buf
			chunkPool.Put(bufp)
		}()
	}
	off, end := r.blk.Offset, r.blk.Offset+r.blk.Length
	carry := 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := int(min(int64(len(buf)-carry), end-off))
		if got, err := r.f.ReadAt(buf[carry:carry+n], off); got < n {
			if err == nil || errors.Is(err, io.EOF) {
				err = fmt.Errorf("%w: the file is shorter than when the read was planned", io.ErrUnexpectedEOF)
			}
			return fmt.Errorf("csv: read %s: %w", r.blk.Path, err)
		}
		off += int64(n)
		data := buf[:carry+n]
		base := off - int64(len(data))
		final := off == end
		pos := 0
		for {
			used, err := r.p.parse(data[pos:], base+int64(pos), final)
			pos += used
			if err != nil {
				var is *issue
				if errors.As(err, &is) {
					return r.parseError(*is)
				}
				return fmt.Errorf("csv: %s: %w", r.blk.Path, err)
			}
			if r.p.nrows < r.p.maxRows {
				break
			}
			if err := r.flush(); err != nil {
				return err
			}
		}
		if len(r.p.bad) > 0 {
			r.bad = append(r.bad, r.p.bad...)
			r.p.bad = r.p.bad[:0]
		}
		if final {
			return nil
		}
		if first := base == r.blk.Offset; first && r.ro.Filter == nil && pos > 0 {
			// The first chunk tells how big the rest is: make room for it
			// at once rather than by repeated doubling.
			scale := float64(r.blk.Length) / float64(pos) * 1.05
			for _, j := range r.idx {
				r.p.cols[j].expect(int(float64(r.p.nrows)*scale)+64, scale)
			}
		}
		carry = copy(buf, data[pos:])
		if carry == len(buf) { // one row is longer than the buffer
			buf = slices.Grow(buf[:carry], len(buf))[:2*len(buf)]
		}
	}
}

// flush passes the current batch through the filter.
func (r *blockReader) flush() error {
	rec := r.batch()
	out, err := r.ro.Filter(rec)
	rec.Release()
	if err != nil {
		return fmt.Errorf("csv: %s: filter: %w", r.blk.Path, err)
	}
	if out == nil {
		return nil
	}
	if out.NumRows() == 0 {
		out.Release()
		return nil
	}
	r.batches = append(r.batches, out)
	return nil
}

// batch makes a record of the parsed rows and resets the parser's batch.
func (r *blockReader) batch() arrow.RecordBatch {
	arrs := make([]arrow.Array, len(r.idx))
	next := r.p.maxRows
	if r.ro.Filter == nil {
		next = 0
	}
	for i, j := range r.idx {
		arrs[i] = r.p.cols[j].finish(r.p.nrows, next, r.plan.fieldHint(j))
	}
	rec := array.NewRecordBatch(r.schema, arrs, int64(r.p.nrows))
	for _, a := range arrs {
		a.Release()
	}
	r.p.nrows = 0
	return rec
}

func (r *blockReader) result() (arrow.RecordBatch, error) {
	if r.ro.Filter == nil {
		return r.batch(), nil
	}
	if r.p.nrows > 0 {
		if err := r.flush(); err != nil {
			return nil, err
		}
	}
	switch len(r.batches) {
	case 0: // no rows: the filter still decides the schema
		rec := r.batch()
		defer rec.Release()
		out, err := r.ro.Filter(rec)
		if err != nil {
			return nil, fmt.Errorf("csv: %s: filter: %w", r.blk.Path, err)
		}
		if out == nil {
			rec.Retain()
			return rec, nil
		}
		return out, nil
	case 1:
		rec := r.batches[0]
		r.batches = nil
		return rec, nil
	}
	schema := r.batches[0].Schema()
	mem := r.ro.Allocator
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	var rows int64
	arrs := make([]arrow.Array, schema.NumFields())
	defer func() {
		for _, a := range arrs {
			if a != nil {
				a.Release()
			}
		}
	}()
	for c := range arrs {
		parts := make([]arrow.Array, len(r.batches))
		for k, b := range r.batches {
			if !b.Schema().Equal(schema) {
				return nil, fmt.Errorf("csv: filter returned batches of different schemas: %s and %s", schema, b.Schema())
			}
			parts[k] = b.Column(c)
		}
		a, err := array.Concatenate(parts, mem)
		if err != nil {
			return nil, fmt.Errorf("csv: concatenate filtered batches: %w", err)
		}
		arrs[c] = a
	}
	for _, b := range r.batches {
		rows += b.NumRows()
	}
	return array.NewRecordBatch(schema, arrs, rows), nil
}

func (r *blockReader) parseError(is issue) error {
	line, err := r.lines.lineAt(r.f, is.off)
	if err != nil {
		return fmt.Errorf("csv: %s: %w (while finding the line of a malformed row)", r.blk.Path, err)
	}
	pe := &ParseError{Path: r.blk.Path, Line: line, Column: is.col, Text: is.text, Err: r.hint(is)}
	if is.col > 0 && is.col <= r.plan.Schema.NumFields() {
		pe.Name = r.plan.Schema.Field(is.col - 1).Name
	}
	return pe
}

// hint adds to a bad value in a column of inferred type how to change it.
func (r *blockReader) hint(is issue) error {
	j := is.col - 1
	if !errors.Is(is.err, ErrValue) || j < 0 || j >= len(r.plan.inferred) || !r.plan.inferred[j] {
		return is.err
	}
	return fmt.Errorf("%w (the type %s was inferred from the first rows; set Options.Types[%q] to read the column as another type)",
		is.err, r.plan.Schema.Field(j).Type, r.plan.Schema.Field(j).Name)
}

func (r *blockReader) badRows() ([]BadRow, error) {
	if len(r.bad) == 0 {
		return nil, nil
	}
	sortIssues(r.bad)
	out := make([]BadRow, len(r.bad))
	for i, is := range r.bad {
		line, err := r.lines.lineAt(r.f, is.off)
		if err != nil {
			return nil, fmt.Errorf("csv: %s: %w (while finding the line of a malformed row)", r.blk.Path, err)
		}
		out[i] = BadRow{Path: r.blk.Path, Line: line, Column: is.col, Text: is.text, Err: r.hint(is).Error()}
	}
	return out, nil
}

// lineCounter finds line numbers by counting line breaks from the start of
// the file, remembering where it got to so that increasing offsets are
// counted once.
type lineCounter struct {
	off  int64 // counted up to here
	line int64 // 1-based line at off
	buf  []byte
}

func (lc *lineCounter) lineAt(f storage.File, off int64) (int64, error) {
	if lc.line == 0 || off < lc.off {
		lc.off, lc.line = 0, 1
	}
	if lc.buf == nil {
		lc.buf = make([]byte, min(1<<20, max(off, 64)))
	}
	for lc.off < off {
		chunk := lc.buf[:min(int64(len(lc.buf)), off-lc.off)]
		if _, err := f.ReadAt(chunk, lc.off); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		lc.line += int64(bytes.Count(chunk, []byte{'\n'}))
		lc.off += int64(len(chunk))
	}
	return lc.line, nil
}
