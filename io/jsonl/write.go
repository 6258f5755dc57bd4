package jsonl

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/shoal-data/shoal/io/storage"
)

// WriteOptions control Write and WriteFile.
type WriteOptions struct {
	// OmitNulls leaves null values out of the objects instead of writing
	// "key":null. Reading gives nulls for missing keys either way.
	OmitNulls bool
}

// WriteFile writes record batches to path as JSON lines, one object a
// row; see Write. On error, the partly written file is removed.
func WriteFile(ctx context.Context, fsys storage.FS, path string, recs []arrow.RecordBatch, opts WriteOptions) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	out, err := fsys.Create(ctx, path)
	if err != nil {
		return fmt.Errorf("jsonl: %w", err)
	}
	closed := false
	defer func() {
		if err != nil {
			if !closed {
				out.Close()
			}
			_ = fsys.Remove(context.WithoutCancel(ctx), path)
		}
	}()
	if err := write(ctx, out, recs, opts); err != nil {
		return fmt.Errorf("jsonl: write %s: %w", path, err)
	}
	closed = true
	if err := out.Close(); err != nil {
		return fmt.Errorf("jsonl: write %s: %w", path, err)
	}
	return nil
}

// Write writes the rows of record batches to w, one JSON object a line,
// keys in column order. Integers, floats and booleans are JSON numbers
// and booleans (NaN and infinities, which JSON cannot hold, become null);
// strings are JSON strings; binary values are base64 strings; timestamps
// are RFC 3339 strings in their column's time zone (without an offset
// when the column has none), dates "2024-03-01", times of day
// "15:04:05.123"; durations are integers in their unit; decimals are
// numbers; dictionary-encoded values are written as their values; lists,
// structs and maps are JSON arrays and objects.
func Write(w io.Writer, recs []arrow.RecordBatch, opts WriteOptions) error {
	return write(context.Background(), w, recs, opts)
}

func write(ctx context.Context, w io.Writer, recs []arrow.RecordBatch, opts WriteOptions) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var line []byte
	for ri, rec := range recs {
		if err := ctx.Err(); err != nil {
			return err
		}
		encs := make([]encoder, rec.NumCols())
		for j, col := range rec.Columns() {
			enc, err := newEncoder(col)
			if err != nil {
				return fmt.Errorf("record batch %d, column %q: %w", ri, rec.ColumnName(j), err)
			}
			encs[j] = enc
			key, _ := json.Marshal(rec.ColumnName(j))
			encs[j].key = append(key, ':')
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			if i%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			line = append(line[:0], '{')
			first := true
			for j := range encs {
				e := &encs[j]
				null := e.arr.IsNull(i)
				if null && opts.OmitNulls {
					continue
				}
				if !first {
					line = append(line, ',')
				}
				first = false
				line = append(line, e.key...)
				if null {
					line = append(line, "null"...)
					continue
				}
				var err error
				if line, err = e.append(line, i); err != nil {
					return fmt.Errorf("record batch %d, row %d, column %q: %w", ri, i, rec.ColumnName(j), err)
				}
			}
			line = append(line, '}', '\n')
			if _, err := bw.Write(line); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// encoder writes the values of one column.
type encoder struct {
	key    []byte
	arr    arrow.Array
	append func(dst []byte, i int) ([]byte, error)
}

func newEncoder(a arrow.Array) (encoder, error) {
	e := encoder{arr: a}
	ok := func(f func(dst []byte, i int) []byte) func([]byte, int) ([]byte, error) {
		return func(dst []byte, i int) ([]byte, error) { return f(dst, i), nil }
	}
	switch a := a.(type) {
	case *array.Int8:
		e.append = ok(func(d []byte, i int) []byte { return strconv.AppendInt(d, int64(a.Value(i)), 10) })
	case *array.Int16:
		e.append = ok(func(d []byte, i int) []byte { return strconv.AppendInt(d, int64(a.Value(i)), 10) })
	case *array.Int32:
		e.append = ok(func(d []byte, i int) []byte { return strconv.AppendInt(d, int64(a.Value(i)), 10) })
	case *array.Int64:
		e.append = ok(func(d []byte, i int) []byte { return strconv.AppendInt(d, a.Value(i), 10) })
	case *array.Uint8:
		e.append = ok(func(d []byte, i int) []byte { return strconv.AppendUint(d, uint64(a.Value(i)), 10) })
	case *array.Uint16:
		e.append = ok(func(d []byte, i int) []byte { return strconv.AppendUint(d, uint64(a.Value(i)), 10) })
	case *array.Uint32:
		e.append = ok(func(d []byte, i int) []byte { return strconv.AppendUint(d, uint64(a.Value(i)), 10) })
	case *array.Uint64:
		e.append = ok(func(d []byte, i int) []byte { return strconv.AppendUint(d, a.Value(i), 10) })
	case *array.Float16:
		e.append = ok(func(d []byte, i int) []byte { return appendFloat(d, float64(a.Value(i).Float32()), 32) })
	case *array.Float32:
		e.append = ok(func(d []byte, i int) []byte { return appendFloat(d, float64(a.Value(i)), 32) })
	case *array.Float64:
		e.append = ok(func(d []byte, i int) []byte { return appendFloat(d, a.Value(i), 64) })
	case *array.Boolean:
		e.append = ok(func(d []byte, i int) []byte { return strconv.AppendBool(d, a.Value(i)) })
	case *array.String:
		e.append = ok(func(d []byte, i int) []byte { return appendString(d, a.Value(i)) })
	case *array.LargeString:
		e.append = ok(func(d []byte, i int) []byte { return appendString(d, a.Value(i)) })
	case *array.StringView:
		e.append = ok(func(d []byte, i int) []byte { return appendString(d, a.Value(i)) })
	case *array.Binary:
		e.append = ok(func(d []byte, i int) []byte { return appendBase64(d, a.Value(i)) })
	case *array.LargeBinary:
		e.append = ok(func(d []byte, i int) []byte { return appendBase64(d, a.Value(i)) })
	case *array.BinaryView:
		e.append = ok(func(d []byte, i int) []byte { return appendBase64(d, a.Value(i)) })
	case *array.FixedSizeBinary:
		e.append = ok(func(d []byte, i int) []byte { return appendBase64(d, a.Value(i)) })
	case *array.Timestamp:
		dt := a.DataType().(*arrow.TimestampType)
		loc, err := dt.GetZone()
		if err != nil {
			return e, err
		}
		layout := time.RFC3339Nano
		if dt.TimeZone == "" {
			layout = "2006-01-02T15:04:05.999999999"
		}
		e.append = ok(func(d []byte, i int) []byte {
			d = append(d, '"')
			d = a.Value(i).ToTime(dt.Unit).In(loc).AppendFormat(d, layout)
			return append(d, '"')
		})
	case *array.Date32:
		e.append = ok(func(d []byte, i int) []byte {
			d = append(d, '"')
			d = a.Value(i).ToTime().AppendFormat(d, time.DateOnly)
			return append(d, '"')
		})
	case *array.Date64:
		e.append = ok(func(d []byte, i int) []byte {
			d = append(d, '"')
			d = a.Value(i).ToTime().AppendFormat(d, time.DateOnly)
			return append(d, '"')
		})
	case *array.Time32:
		unit := a.DataType().(*arrow.Time32Type).Unit
		e.append = ok(func(d []byte, i int) []byte {
			d = append(d, '"')
			d = a.Value(i).ToTime(unit).AppendFormat(d, "15:04:05.999999999")
			return append(d, '"')
		})
	case *array.Time64:
		unit := a.DataType().(*arrow.Time64Type).Unit
		e.append = ok(func(d []byte, i int) []byte {
			d = append(d, '"')
			d = a.Value(i).ToTime(unit).AppendFormat(d, "15:04:05.999999999")
			return append(d, '"')
		})
	case *array.Duration:
		e.append = ok(func(d []byte, i int) []byte { return strconv.AppendInt(d, int64(a.Value(i)), 10) })
	case *array.Decimal128, *array.Decimal256, *array.Decimal32, *array.Decimal64:
		e.append = ok(func(d []byte, i int) []byte { return append(d, a.ValueStr(i)...) })
	case *array.Null:
		e.append = ok(func(d []byte, i int) []byte { return append(d, "null"...) })
	case *array.Dictionary:
		inner, err := newEncoder(a.Dictionary())
		if err != nil {
			return e, err
		}
		e.append = func(d []byte, i int) ([]byte, error) {
			j := a.GetValueIndex(i)
			if inner.arr.IsNull(j) {
				return append(d, "null"...), nil
			}
			return inner.append(d, j)
		}
	default:
		// Lists, structs, maps and the rest, through encoding/json.
		e.append = func(d []byte, i int) ([]byte, error) {
			b, err := json.Marshal(a.GetOneForMarshal(i))
			if err != nil {
				return d, err
			}
			return append(d, b...), nil
		}
	}
	return e, nil
}

func appendFloat(d []byte, x float64, bits int) []byte {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return append(d, "null"...)
	}
	return strconv.AppendFloat(d, x, 'g', -1, bits)
}

func appendBase64(d []byte, b []byte) []byte {
	d = append(d, '"')
	d = base64.StdEncoding.AppendEncode(d, b)
	return append(d, '"')
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD.
func appendString(d []byte, s string) []byte {
	d = append(d, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			d = append(d, s[start:i]...)
			switch c {
			case '"', '\\':
				d = append(d, '\\', c)
			case '\n':
				d = append(d, '\\', 'n')
			case '\r':
				d = append(d, '\\', 'r')
			case '\t':
				d = append(d, '\\', 't')
			default:
				d = append(d, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			d = append(d, s[start:i]...)
			d = append(d, "\ufffd"...)
			i++
			start = i
			continue
		}
		i += size
	}
	d = append(d, s[start:]...)
	return append(d, '"')
}
