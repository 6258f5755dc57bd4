package jsonl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/io/storage"
)

// seen is the set of kinds of values a key had in the sample.
type seen uint8

const (
	sawNull seen = 1 << iota
	sawBool
	sawInt
	sawFloat
	sawString
	sawNested
)

// observed is what the sample showed of one key.
type observed struct {
	name       string
	kinds      seen
	nestedLine int64 // first line with a nested value
	nestedText string
	nestedPos  int
	nestedKind valueKind
}

// infer reads the start of the first non-empty file and infers a schema.
func infer(ctx context.Context, fsys storage.FS, files []string, opts Options) (*arrow.Schema, error) {
	sampleBytes := cmpOr(opts.SampleBytes, DefaultSampleBytes)
	var path string
	var sample []byte
	for _, p := range files {
		s, err := readSample(ctx, fsys, p, sampleBytes)
		if err != nil {
			return nil, err
		}
		if !blank(s) {
			path, sample = p, s
			break
		}
	}
	if sample == nil {
		if len(opts.Columns) > 0 || len(opts.ParseDates) > 0 {
			return nil, fmt.Errorf("jsonl: %s: the files hold no data to infer a schema from; pass Options.Schema", files[0])
		}
		return arrow.NewSchema(nil, nil), nil
	}
	var cols []*observed
	index := map[string]int{}
	var keyBuf []byte
	var line int64
	var lineText []byte
	for rest := sample; len(rest) > 0; {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		line++
		lineText, rest, _ = bytes.Cut(rest, []byte{'\n'})
		lineText = trimLine(lineText, line == 1)
		if blank(lineText) {
			continue
		}
		err := scanObject(lineText, func(key []byte, esc bool, keyPos int, v token) error {
			if esc {
				keyBuf = unescape(keyBuf[:0], key)
				key = keyBuf
			}
			i, ok := index[string(key)]
			if !ok {
				i = len(cols)
				index[string(key)] = i
				cols = append(cols, &observed{name: string(key)})
			}
			o := cols[i]
			switch v.kind {
			case vNull:
				o.kinds |= sawNull
			case vTrue, vFalse:
				o.kinds |= sawBool
			case vNumber:
				if _, ok := parseInt(lineText[v.start:v.end]); ok && v.isInt {
					o.kinds |= sawInt
				} else {
					o.kinds |= sawFloat
				}
			case vString:
				o.kinds |= sawString
			case vObject, vArray:
				if o.kinds&sawNested == 0 {
					o.nestedLine, o.nestedText, o.nestedPos, o.nestedKind = line, excerpt(lineText, v.start), v.start, v.kind
				}
				o.kinds |= sawNested
			}
			return nil
		})
		if err != nil {
			return nil, lineError(path, line, lineText, "", err)
		}
	}
	dates := map[string]bool{}
	for _, name := range opts.ParseDates {
		if _, ok := index[name]; !ok {
			names := make([]string, len(cols))
			for i, c := range cols {
				names[i] = c.name
			}
			return nil, fmt.Errorf("jsonl: ParseDates names column %q, but the first %d lines of %s have no such key; they have %q", name, line, path, names)
		}
		dates[name] = true
	}
	fields := make([]arrow.Field, len(cols))
	for i, o := range cols {
		var dt arrow.DataType
		k := o.kinds &^ sawNull
		switch {
		case dates[o.name]:
			if k&^sawString != 0 {
				return nil, fmt.Errorf("jsonl: ParseDates names column %q, but in %s it holds %s, not only strings", o.name, path, describeKinds(k))
			}
			dt = TimestampType
		case k&sawNested != 0 && !opts.NestedAsJSON:
			return nil, &ParseError{Path: path, Line: o.nestedLine, Byte: o.nestedPos + 1, Key: o.name, Text: o.nestedText,
				Err: fmt.Errorf("%w: found %s; set Options.NestedAsJSON to keep objects and arrays as JSON text", ErrSchemaMismatch, o.nestedKind)}
		case k == 0:
			dt = arrow.Null
		case k == sawBool:
			dt = arrow.FixedWidthTypes.Boolean
		case k == sawInt:
			dt = arrow.PrimitiveTypes.Int64
		case k&^(sawInt|sawFloat) == 0:
			dt = arrow.PrimitiveTypes.Float64
		default:
			dt = arrow.BinaryTypes.String
		}
		fields[i] = arrow.Field{Name: o.name, Type: dt, Nullable: true}
	}
	return arrow.NewSchema(fields, nil), nil
}

func describeKinds(k seen) string {
	var names []string
	for _, kn := range []struct {
		k    seen
		name string
	}{{sawBool, "booleans"}, {sawInt, "integers"}, {sawFloat, "numbers"}, {sawString, "strings"}, {sawNested, "objects or arrays"}} {
		if k&kn.k != 0 {
			names = append(names, kn.name)
		}
	}
	return strings.Join(names, " and ")
}

// readSample reads about n bytes from the start of a file, cut after the
// last whole line (the first line is read whole, however long).
func readSample(ctx context.Context, fsys storage.FS, path string, n int64) ([]byte, error) {
	f, err := fsys.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("jsonl: %w", err)
	}
	defer f.Close()
	size := f.Size()
	for {
		m := min(n, size)
		buf := make([]byte, m)
		if _, err := f.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("jsonl: read %s: %w", path, err)
		}
		if m == size {
			return buf, nil
		}
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			return buf[:i+1], nil
		}
		n *= 2
	}
}

// trimLine drops a trailing carriage return and, on the first line of a
// file, a UTF-8 byte order mark.
func trimLine(b []byte, first bool) []byte {
	if first {
		b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

// lineError makes a ParseError of an error in a line.
func lineError(path string, line int64, text []byte, key string, err error) error {
	pos := 0
	var se *syntaxError
	if errors.As(err, &se) {
		pos = se.pos
		err = fmt.Errorf("%w: %s", ErrSyntax, se.msg)
	}
	var ve *valueError
	if errors.As(err, &ve) {
		pos, key = ve.pos, ve.key
		err = ve.err
	}
	return &ParseError{Path: path, Line: line, Byte: pos + 1, Key: key, Text: excerpt(text, pos), Err: err}
}

// parseInt reads a JSON integer, reporting whether it fits an int64.
func parseInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}
