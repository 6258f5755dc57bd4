package csv

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Write writes rec as CSV to w: a header line (unless opts.NoHeader), then
// one line per row. Strings are quoted when they contain the delimiter, a
// quote or a line break, or when they would read back as null (empty or a
// null marker). Floats are written in their shortest form that reads back
// exactly, dates as 2006-01-02, timestamps as RFC 3339 with the offset of
// their time zone (without offset when the type has no time zone).
func Write(w io.Writer, rec arrow.RecordBatch, opts WriteOptions) error {
	cw := NewWriter(w, rec.Schema(), opts)
	if err := cw.Write(rec); err != nil {
		return err
	}
	return cw.Flush()
}

// Writer writes records of one schema as one CSV stream.
type Writer struct {
	w       *bufio.Writer
	schema  *arrow.Schema
	opts    WriteOptions
	special [256]bool
	header  bool
	buf     []byte
	nulls   nullSet
	err     error
}

// NewWriter returns a Writer of records with the given schema to w.
func NewWriter(w io.Writer, schema *arrow.Schema, opts WriteOptions) *Writer {
	if opts.Delimiter == 0 {
		opts.Delimiter = ','
	}
	if opts.Quote == 0 {
		opts.Quote = '"'
	}
	cw := &Writer{w: bufio.NewWriterSize(w, 256<<10), schema: schema, opts: opts, header: !opts.NoHeader,
		nulls: newNullSet(append([]string{opts.Null}, DefaultNullValues...))}
	for _, c := range []byte{opts.Delimiter, opts.Quote, '\n', '\r'} {
		cw.special[c] = true
	}
	return cw
}

// Write writes the rows of rec, after the header line if this is the first
// call.
func (cw *Writer) Write(rec arrow.RecordBatch) error {
	if cw.err != nil {
		return cw.err
	}
	if !rec.Schema().Equal(cw.schema) {
		return fmt.Errorf("csv: write: record schema %s differs from the writer's %s", rec.Schema(), cw.schema)
	}
	if cw.opts.Delimiter == cw.opts.Quote || cw.special[0] {
		return fmt.Errorf("csv: write: delimiter and quote are both %q", cw.opts.Delimiter)
	}
	eol := "\n"
	if cw.opts.CRLF {
		eol = "\r\n"
	}
	if cw.header {
		cw.header = false
		for i, f := range cw.schema.Fields() {
			if i > 0 {
				cw.buf = append(cw.buf, cw.opts.Delimiter)
			}
			cw.buf = cw.appendString(cw.buf, f.Name, false)
		}
		cw.buf = append(cw.buf, eol...)
	}
	fmts := make([]formatter, rec.NumCols())
	for i, col := range rec.Columns() {
		f, err := newFormatter(col)
		if err != nil {
			return fmt.Errorf("csv: write column %q: %w", cw.schema.Field(i).Name, err)
		}
		fmts[i] = f
	}
	for row := 0; row < int(rec.NumRows()); row++ {
		for c := range fmts {
			if c > 0 {
				cw.buf = append(cw.buf, cw.opts.Delimiter)
			}
			cw.buf = cw.appendValue(cw.buf, &fmts[c], row)
		}
		cw.buf = append(cw.buf, eol...)
		if len(cw.buf) >= 64<<10 {
			if _, err := cw.w.Write(cw.buf); err != nil {
				cw.err = fmt.Errorf("csv: write: %w", err)
				return cw.err
			}
			cw.buf = cw.buf[:0]
		}
	}
	return nil
}

// Flush writes any buffered data to the underlying writer.
func (cw *Writer) Flush() error {
	if cw.err != nil {
		return cw.err
	}
	if cw.header { // no record written: still a header
		cw.header = false
		for i, f := range cw.schema.Fields() {
			if i > 0 {
				cw.buf = append(cw.buf, cw.opts.Delimiter)
			}
			cw.buf = cw.appendString(cw.buf, f.Name, false)
		}
		if cw.opts.CRLF {
			cw.buf = append(cw.buf, '\r')
		}
		cw.buf = append(cw.buf, '\n')
	}
	if _, err := cw.w.Write(cw.buf); err != nil {
		cw.err = fmt.Errorf("csv: write: %w", err)
		return cw.err
	}
	cw.buf = cw.buf[:0]
	if err := cw.w.Flush(); err != nil {
		cw.err = fmt.Errorf("csv: write: %w", err)
	}
	return cw.err
}

// appendString appends s, quoted if needed. Strings that would read back
// as null are quoted when nullable.
func (cw *Writer) appendString(b []byte, s string, nullable bool) []byte {
	need := nullable && cw.nulls.match([]byte(s))
	for i := 0; i < len(s) && !need; i++ {
		need = cw.special[s[i]]
	}
	if !need {
		return append(b, s...)
	}
	q := cw.opts.Quote
	b = append(b, q)
	for i := 0; i < len(s); i++ {
		if s[i] == q {
			b = append(b, q)
		}
		b = append(b, s[i])
	}
	return append(b, q)
}

type fmtKind uint8

const (
	fString fmtKind = iota
	fInt
	fUint
	fFloat64
	fFloat32
	fBool
	fDate32
	fDate64
	fTimestamp
	fOther
)

type formatter struct {
	kind   fmtKind
	arr    arrow.Array
	str    interface{ Value(int) string }
	ints   func(int) int64
	uints  func(int) uint64
	f64    []float64
	f32    []float32
	bools  *array.Boolean
	i32    []int32
	i64    []int64
	dict   *array.Dictionary
	unit   arrow.TimeUnit
	loc    *time.Location
	layout string
}

func newFormatter(a arrow.Array) (formatter, error) {
	f := formatter{arr: a, kind: fOther}
	switch a := a.(type) {
	case *array.String:
		f.kind, f.str = fString, a
	case *array.LargeString:
		f.kind, f.str = fString, a
	case *array.Dictionary:
		if _, ok := a.Dictionary().(interface{ Value(int) string }); ok {
			f.kind, f.dict = fString, a
		}
	case *array.Int8:
		f.kind, f.ints = fInt, func(i int) int64 { return int64(a.Value(i)) }
	case *array.Int16:
		f.kind, f.ints = fInt, func(i int) int64 { return int64(a.Value(i)) }
	case *array.Int32:
		f.kind, f.i32 = fInt, a.Int32Values()
	case *array.Int64:
		f.kind, f.i64 = fInt, a.Int64Values()
	case *array.Uint8:
		f.kind, f.uints = fUint, func(i int) uint64 { return uint64(a.Value(i)) }
	case *array.Uint16:
		f.kind, f.uints = fUint, func(i int) uint64 { return uint64(a.Value(i)) }
	case *array.Uint32:
		f.kind, f.uints = fUint, func(i int) uint64 { return uint64(a.Value(i)) }
	case *array.Uint64:
		f.kind, f.uints = fUint, func(i int) uint64 { return a.Value(i) }
	case *array.Float64:
		f.kind, f.f64 = fFloat64, a.Float64Values()
	case *array.Float32:
		f.kind, f.f32 = fFloat32, a.Float32Values()
	case *array.Boolean:
		f.kind, f.bools = fBool, a
	case *array.Date32:
		f.kind = fDate32
		f.i32 = arrow.Int32Traits.CastFromBytes(arrow.Date32Traits.CastToBytes(a.Date32Values()))
	case *array.Date64:
		f.kind = fDate64
		f.i64 = arrow.Int64Traits.CastFromBytes(arrow.Date64Traits.CastToBytes(a.Date64Values()))
	case *array.Timestamp:
		t := a.DataType().(*arrow.TimestampType)
		f.kind, f.unit = fTimestamp, t.Unit
		f.i64 = arrow.Int64Traits.CastFromBytes(arrow.TimestampTraits.CastToBytes(a.TimestampValues()))
		f.layout = "2006-01-02T15:04:05.999999999"
		f.loc = time.UTC
		if t.TimeZone != "" {
			loc, err := t.GetZone()
			if err != nil {
				return f, err
			}
			f.loc, f.layout = loc, time.RFC3339Nano
		}
	}
	return f, nil
}

func (cw *Writer) appendValue(b []byte, f *formatter, i int) []byte {
	if f.arr.IsNull(i) {
		return append(b, cw.opts.Null...)
	}
	switch f.kind {
	case fString:
		if f.dict != nil {
			return cw.appendString(b, f.dict.Dictionary().(interface{ Value(int) string }).Value(f.dict.GetValueIndex(i)), true)
		}
		return cw.appendString(b, f.str.Value(i), true)
	case fInt:
		switch {
		case f.i64 != nil:
			return strconv.AppendInt(b, f.i64[i], 10)
		case f.i32 != nil:
			return strconv.AppendInt(b, int64(f.i32[i]), 10)
		}
		return strconv.AppendInt(b, f.ints(i), 10)
	case fUint:
		return strconv.AppendUint(b, f.uints(i), 10)
	case fFloat64:
		return appendFloat(b, f.f64[i], 64)
	case fFloat32:
		return appendFloat(b, float64(f.f32[i]), 32)
	case fBool:
		return strconv.AppendBool(b, f.bools.Value(i))
	case fDate32:
		return time.Unix(int64(f.i32[i])*86400, 0).UTC().AppendFormat(b, "2006-01-02")
	case fDate64:
		return time.UnixMilli(f.i64[i]).UTC().AppendFormat(b, "2006-01-02")
	case fTimestamp:
		return arrow.Timestamp(f.i64[i]).ToTime(f.unit).In(f.loc).AppendFormat(b, f.layout)
	}
	return cw.appendString(b, f.arr.ValueStr(i), true)
}

// appendFloat writes the shortest text that reads back as v, always with a
// decimal point or exponent so that it reads back as a float.
func appendFloat(b []byte, v float64, bits int) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case math.IsInf(v, 1):
		return append(b, "Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	}
	if a := math.Abs(v); a != 0 && (a < 1e-5 || a >= 1e16) {
		return strconv.AppendFloat(b, v, 'e', -1, bits)
	}
	n := len(b)
	b = strconv.AppendFloat(b, v, 'f', -1, bits)
	for _, c := range b[n:] {
		if c == '.' {
			return b
		}
	}
	return append(b, '.', '0')
}
