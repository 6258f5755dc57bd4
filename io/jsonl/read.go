package jsonl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/io/storage"
)

// colKind is how a column reads values.
type colKind uint8

const (
	kInt64 colKind = iota
	kFloat64
	kBool
	kString
	kTimestamp
	kDate32
	kNull
)

func kindOf(dt arrow.DataType) (colKind, error) {
	switch dt.ID() {
	case arrow.INT64:
		return kInt64, nil
	case arrow.FLOAT64:
		return kFloat64, nil
	case arrow.BOOL:
		return kBool, nil
	case arrow.STRING, arrow.LARGE_STRING:
		return kString, nil
	case arrow.TIMESTAMP:
		return kTimestamp, nil
	case arrow.DATE32:
		return kDate32, nil
	case arrow.NULL:
		return kNull, nil
	}
	return 0, fmt.Errorf("type %s cannot be read from JSON lines; use int64, float64, bool, string, large string, timestamp, date32 or null", dt)
}

// valueError is a value that does not fit its column.
type valueError struct {
	pos int
	key string
	err error
}

func (e *valueError) Error() string { return e.err.Error() }

// column builds one column of a part.
type column struct {
	name  string
	kind  colKind
	typ   arrow.DataType
	unit  arrow.TimeUnit
	b     array.Builder
	ints  *array.Int64Builder
	flts  *array.Float64Builder
	bools *array.BooleanBuilder
	strs  *array.BinaryBuilder
	tss   *array.TimestampBuilder
	dates *array.Date32Builder
	nulls *array.NullBuilder
	row   int64 // the last row that set it
}

// partReader reads the lines of a part into columns.
type partReader struct {
	cols          []*column
	index         map[string]int // key: column (>= 0), or -1 for a column not read
	ignoreUnknown bool
	nestedAsJSON  bool
	row           int64
	line          []byte
	keyBuf        []byte
	strBuf        []byte
}

func newPartReader(plan *Plan, mem memory.Allocator) (*partReader, error) {
	r := &partReader{index: map[string]int{}, ignoreUnknown: plan.ignoreUnknown, nestedAsJSON: plan.nestedAsJSON}
	for _, k := range plan.known {
		r.index[k] = -1
	}
	for i, f := range plan.Schema.Fields() {
		kind, err := kindOf(f.Type)
		if err != nil {
			r.release()
			return nil, fmt.Errorf("jsonl: column %q: %w", f.Name, err)
		}
		c := &column{name: f.Name, kind: kind, typ: f.Type, row: -1}
		c.b = array.NewBuilder(mem, f.Type)
		switch b := c.b.(type) {
		case *array.Int64Builder:
			c.ints = b
		case *array.Float64Builder:
			c.flts = b
		case *array.BooleanBuilder:
			c.bools = b
		case *array.StringBuilder:
			c.strs = b.BinaryBuilder
		case *array.LargeStringBuilder:
			c.strs = b.BinaryBuilder
		case *array.TimestampBuilder:
			c.tss = b
			c.unit = f.Type.(*arrow.TimestampType).Unit
		case *array.Date32Builder:
			c.dates = b
		case *array.NullBuilder:
			c.nulls = b
		}
		r.cols = append(r.cols, c)
		r.index[f.Name] = i
	}
	return r, nil
}

func (r *partReader) release() {
	for _, c := range r.cols {
		c.b.Release()
	}
}

// readLine reads one line (not blank) as a row.
func (r *partReader) readLine(line []byte) error {
	r.line = line
	if err := scanObject(line, r.value); err != nil {
		return err
	}
	for _, c := range r.cols {
		if c.row != r.row {
			c.b.AppendNull()
		}
	}
	r.row++
	return nil
}

// value is called for every key and value of a line.
func (r *partReader) value(key []byte, esc bool, keyPos int, v token) error {
	if esc {
		r.keyBuf = unescape(r.keyBuf[:0], key)
		key = r.keyBuf
	}
	i, ok := r.index[string(key)]
	switch {
	case !ok:
		if r.ignoreUnknown {
			return nil
		}
		return &valueError{pos: keyPos, key: string(key), err: fmt.Errorf(
			"%w: the key is not in the schema (a schema inferred from a sample may miss keys that appear later; pass Options.Schema, or set IgnoreUnknownKeys to skip such keys)",
			ErrSchemaMismatch)}
	case i < 0:
		return nil // a column not read
	}
	c := r.cols[i]
	if c.row == r.row {
		return &valueError{pos: keyPos, key: c.name, err: fmt.Errorf("%w: the key appears twice in the object", ErrSyntax)}
	}
	c.row = r.row
	text := r.line[v.start:v.end]
	if v.kind == vNull {
		c.b.AppendNull()
		return nil
	}
	switch c.kind {
	case kInt64:
		if v.kind == vNumber && v.isInt {
			if n, ok := parseInt(text); ok {
				c.ints.Append(n)
				return nil
			}
			return r.mismatch(c, v, "does not fit int64")
		}
		return r.mismatch(c, v, "is not an integer")
	case kFloat64:
		if v.kind == vNumber {
			var x float64
			var err error
			if v.special {
				x = special(text)
			} else if x, err = strconv.ParseFloat(unsafe.String(unsafe.SliceData(text), len(text)), 64); err != nil {
				return r.mismatch(c, v, "is out of the range of float64")
			}
			c.flts.Append(x)
			return nil
		}
		return r.mismatch(c, v, "is not a number")
	case kBool:
		if v.kind == vTrue || v.kind == vFalse {
			c.bools.Append(v.kind == vTrue)
			return nil
		}
		return r.mismatch(c, v, "is not true or false")
	case kString:
		switch v.kind {
		case vString:
			c.strs.Append(r.str(text, v.escaped))
		case vObject, vArray:
			if !r.nestedAsJSON {
				return &valueError{pos: v.start, key: c.name, err: fmt.Errorf(
					"%w: found %s; set Options.NestedAsJSON to keep objects and arrays as JSON text", ErrSchemaMismatch, v.kind)}
			}
			c.strs.Append(text)
		default:
			c.strs.Append(text) // a number or boolean, as written
		}
		return nil
	case kTimestamp:
		if v.kind == vString {
			if sec, nsec, ok := parseTime(r.str(text, v.escaped)); ok {
				if t, ok := toUnit(sec, nsec, c.unit); ok {
					c.tss.Append(arrow.Timestamp(t))
					return nil
				}
				return r.mismatch(c, v, "is out of the range of "+c.typ.String())
			}
		}
		return r.mismatch(c, v, "is not an RFC 3339 timestamp (2024-03-01T12:30:00Z)")
	case kDate32:
		if v.kind == vString {
			if d, ok := parseDate(r.str(text, v.escaped)); ok && d >= math.MinInt32 && d <= math.MaxInt32 {
				c.dates.Append(arrow.Date32(d))
				return nil
			}
		}
		return r.mismatch(c, v, "is not a date (2024-03-01)")
	case kNull:
		return r.mismatch(c, v, "is not null, and the column's type is null (when inferred, every value in the sample was null; pass Options.Schema)")
	}
	return nil
}

// str returns the text of a string value (quotes included in text).
func (r *partReader) str(text []byte, escaped bool) []byte {
	text = text[1 : len(text)-1]
	if !escaped {
		return text
	}
	r.strBuf = unescape(r.strBuf[:0], text)
	return r.strBuf
}

func special(text []byte) float64 {
	switch text[0] {
	case 'N':
		return math.NaN()
	case '-':
		return math.Inf(-1)
	}
	return math.Inf(1)
}

// mismatch reports a value that does not fit its column.
func (r *partReader) mismatch(c *column, v token, what string) error {
	text := r.line[v.start:v.end]
	if len(text) > 40 {
		text = append(text[:37:37], "..."...)
	}
	return &valueError{pos: v.start, key: c.name, err: fmt.Errorf("%w: %s %s (the column is %s)", ErrSchemaMismatch, text, what, c.typ)}
}

func (r *partReader) finish(schema *arrow.Schema) arrow.RecordBatch {
	arrs := make([]arrow.Array, len(r.cols))
	for i, c := range r.cols {
		arrs[i] = c.b.NewArray()
		defer arrs[i].Release()
	}
	return array.NewRecordBatch(schema, arrs, r.row)
}

// ReadPart reads part i of the plan into one record batch holding the
// plan's columns, allocating from mem (memory.DefaultAllocator when nil).
// The caller releases the record batch. A line that is not a JSON object,
// or a value that does not fit its column, is a *ParseError naming the
// file, line, key and text.
func ReadPart(ctx context.Context, fsys storage.FS, plan *Plan, i int, mem memory.Allocator) (arrow.RecordBatch, error) {
	if plan == nil || plan.Schema == nil {
		return nil, errors.New("jsonl: ReadPart needs a plan from PlanRead")
	}
	if i < 0 || i >= len(plan.Parts) {
		return nil, fmt.Errorf("jsonl: the plan has %d parts; there is no part %d", len(plan.Parts), i)
	}
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	part := plan.Parts[i]
	if part.Offset < 0 || part.Length < 0 {
		return nil, fmt.Errorf("jsonl: part %d of the plan has a negative offset or length", i)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := fsys.Open(ctx, part.Path)
	if err != nil {
		return nil, fmt.Errorf("jsonl: %w", err)
	}
	defer f.Close()
	data, base, err := readLines(f, part)
	if err != nil {
		return nil, fmt.Errorf("jsonl: read %s: %w", part.Path, err)
	}
	r, err := newPartReader(plan, mem)
	if err != nil {
		return nil, err
	}
	defer r.release()
	rows := bytes.Count(data, []byte{'\n'}) + 1
	for _, c := range r.cols {
		c.b.Reserve(rows)
	}
	pos := 0
	for n := 0; pos < len(data); n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		end := bytes.IndexByte(data[pos:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += pos
		}
		line := trimLine(data[pos:end], base+int64(pos) == 0)
		if !blank(line) {
			if err := r.readLine(line); err != nil {
				lineNo, lerr := lineNumber(f, base, data, pos)
				if lerr != nil {
					return nil, fmt.Errorf("jsonl: read %s: %w", part.Path, lerr)
				}
				return nil, lineError(part.Path, lineNo, line, "", err)
			}
		}
		pos = end + 1
	}
	return r.finish(plan.Schema), nil
}

// readLines reads the lines of a file that start in the part's range: it
// returns them and the offset in the file of the first.
func readLines(f storage.File, part Part) ([]byte, int64, error) {
	size := f.Size()
	start, end := part.Offset, min(part.Offset+part.Length, size)
	if start >= end {
		return nil, start, nil
	}
	from := max(start-1, 0)
	buf := make([]byte, end-from, end-from+4096)
	if _, err := f.ReadAt(buf, from); err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, err
	}
	// Finish the last line, which may run past the range.
	for len(buf) > 0 && buf[len(buf)-1] != '\n' && from+int64(len(buf)) < size {
		at := from + int64(len(buf))
		chunk := make([]byte, min(max(int64(len(buf))/2, 4096), size-at))
		n, err := f.ReadAt(chunk, at)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, 0, err
		}
		chunk = chunk[:n]
		if i := bytes.IndexByte(chunk, '\n'); i >= 0 {
			chunk = chunk[:i+1]
		}
		if len(chunk) == 0 {
			break
		}
		buf = append(buf, chunk...)
	}
	if start == 0 {
		return buf, 0, nil
	}
	// The part's first line starts after the first newline at or after
	// start-1; a line that started earlier belongs to the part before.
	i := bytes.IndexByte(buf, '\n')
	if i < 0 || from+int64(i)+1 >= end {
		return nil, end, nil
	}
	return buf[i+1:], from + int64(i) + 1, nil
}

// lineNumber counts the lines before data[pos], which is at base+pos in
// the file, reading the file before base.
func lineNumber(f storage.File, base int64, data []byte, pos int) (int64, error) {
	n := int64(bytes.Count(data[:pos], []byte{'\n'})) + 1
	buf := make([]byte, 1<<20)
	for at := int64(0); at < base; {
		m := min(int64(len(buf)), base-at)
		if _, err := f.ReadAt(buf[:m], at); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		n += int64(bytes.Count(buf[:m], []byte{'\n'}))
		at += m
	}
	return n, nil
}
