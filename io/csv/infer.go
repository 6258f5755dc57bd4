package csv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/shoal-data/shoal/io/storage"
)

// planSchema works out the column names (when still unknown) and types:
// from Options.Schema, or inferred from a sample of the first file with
// rows, then adjusted by Types, ParseDates and Dictionary.
func planSchema(ctx context.Context, fsys storage.FS, heads []fileHead, names []string, o Options, plan *Plan) (*arrow.Schema, error) {
	// The sample: SampleBytes of the first file with rows, and up to 64 KiB
	// of each further file while the total stays under 4*SampleBytes, so
	// that a glob of files is not typed from its first file alone.
	type piece struct {
		data  []byte
		final bool
	}
	var samples []piece
	var samplePath string
	budget := 4 * int64(o.SampleBytes)
	for _, h := range heads {
		if h.empty || h.dataStart >= h.size {
			continue
		}
		n := min(int64(o.SampleBytes), h.size-h.dataStart)
		if len(samples) > 0 {
			n = min(n, 64<<10)
		}
		if n > budget {
			break
		}
		budget -= n
		f, err := fsys.Open(ctx, h.path)
		if err != nil {
			return nil, fmt.Errorf("csv: %w", err)
		}
		buf := make([]byte, n)
		_, err = f.ReadAt(buf, h.dataStart)
		f.Close()
		if err != nil && !(errors.Is(err, io.EOF) && h.dataStart+n == h.size) {
			return nil, fmt.Errorf("csv: read %s: %w", h.path, err)
		}
		if samples == nil {
			samplePath = h.path
		}
		samples = append(samples, piece{buf, h.dataStart+n == h.size})
	}
	if names == nil { // no header, no names given: count the first row's fields
		if samples == nil {
			return nil, fmt.Errorf("csv: %s: %w (give Options.Schema or Options.Columns to read empty files)", heads[0].path, ErrEmptyFile)
		}
		fields, _, err := readRecord(samples[0].data, o.Delimiter, o.Quote, samples[0].final)
		if err != nil {
			return nil, fmt.Errorf("csv: %s line 1: %w", samplePath, err)
		}
		if fields == nil {
			return nil, fmt.Errorf("csv: %s: the first row is longer than Options.SampleBytes (%d)", samplePath, o.SampleBytes)
		}
		for i := range fields {
			names = append(names, fmt.Sprintf("column_%d", i))
		}
	}
	if o.Schema != nil && len(o.Schema.Fields()) != len(names) {
		return nil, fmt.Errorf("csv: Options.Schema has %d fields, but the files have %d columns", len(o.Schema.Fields()), len(names))
	}

	// Parse the sample as strings; malformed rows are left for reading to
	// report with their line numbers.
	cols := make([]column, len(names))
	for i, n := range names {
		cols[i] = column{kind: kString, name: n, typ: arrow.BinaryTypes.String}
		cols[i].reserve(1024, 8)
	}
	p := newParser(o.Delimiter, o.Quote, cols, o.NullValues, true, false, int(^uint(0)>>1))
	used := 0
	for _, sm := range samples {
		n, _ := p.parse(sm.data, 0, sm.final)
		used += n
	}
	strs := make([]*array.String, len(cols))
	plan.fieldBytes = make([]float64, len(cols))
	for i := range cols {
		strs[i] = cols[i].finish(p.nrows, 0, 0).(*array.String)
		defer strs[i].Release()
		if p.nrows > 0 {
			plan.fieldBytes[i] = float64(len(strs[i].ValueBytes())) / float64(p.nrows)
		}
	}
	if p.nrows > 0 {
		plan.RowBytes = float64(used) / float64(p.nrows)
	}

	for _, m := range []struct {
		what string
		keys []string
	}{{"Types", keysOf(o.Types)}, {"ParseDates", keysOf(o.ParseDates)}, {"Dictionary", o.Dictionary}} {
		for _, k := range m.keys {
			if !contains(names, k) {
				return nil, fmt.Errorf("csv: Options.%s names column %q, but the columns are %s", m.what, k, quoteNames(names))
			}
		}
	}

	fields := make([]arrow.Field, len(names))
	plan.inferred = make([]bool, len(names))
	for i, name := range names {
		fields[i] = arrow.Field{Name: name, Nullable: true}
		layout, isDate := o.ParseDates[name]
		switch {
		case o.Types[name] != nil:
			fields[i].Type = o.Types[name]
		case o.Schema != nil:
			fields[i].Type = o.Schema.Field(i).Type
			fields[i].Nullable = o.Schema.Field(i).Nullable
			fields[i].Metadata = o.Schema.Field(i).Metadata
		case isDate && layout != "":
			fields[i].Type = layoutType(layout)
		case isDate:
			t, bad := inferISO(strs[i])
			if bad != "" {
				return nil, fmt.Errorf("csv: %s: column %q in Options.ParseDates: %w: %q is not an ISO 8601 date or timestamp; give a layout",
					samplePath, name, ErrValue, bad)
			}
			fields[i].Type = t
		default:
			fields[i].Type = inferType(strs[i])
			plan.inferred[i] = true
		}
		if contains(o.Dictionary, name) {
			if fields[i].Type.ID() != arrow.STRING {
				return nil, fmt.Errorf("csv: column %q in Options.Dictionary has type %s; only string columns can be dictionary-encoded", name, fields[i].Type)
			}
			fields[i].Type = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
		}
		if _, err := newColumn(fields[i], layout, isDate); err != nil {
			return nil, err
		}
	}
	return arrow.NewSchema(fields, nil), nil
}

func keysOf[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// layoutType is date32 for a layout without clock, timestamp[ns] with one,
// in UTC when the layout has a zone.
func layoutType(layout string) arrow.DataType {
	ref := time.Date(2001, 2, 3, 4, 5, 6, 7000000, time.FixedZone("", 3*3600))
	t, err := time.Parse(layout, ref.Format(layout))
	if err != nil {
		return arrow.FixedWidthTypes.Timestamp_ns
	}
	_, off := t.Zone()
	if off != 0 {
		return &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}
	}
	if t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0 {
		return arrow.FixedWidthTypes.Date32
	}
	return &arrow.TimestampType{Unit: arrow.Nanosecond}
}

func isIntText(b []byte) bool {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		b = b[1:]
	}
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// inferType returns the narrowest type that every non-null value of the
// sample column fits: int64, float64, bool, date32, timestamp[ns] or
// string (also when all values are null).
func inferType(a *array.String) arrow.DataType {
	canInt, canFloat, canBool, canISO := true, true, true, true
	bigInt, realFloat, values := false, false, 0
	for i := 0; i < a.Len(); i++ {
		if a.IsNull(i) {
			continue
		}
		values++
		v := []byte(a.Value(i))
		if canInt {
			if _, ok := parseInt(v); !ok {
				canInt = false
				bigInt = bigInt || isIntText(v)
			}
		}
		if canFloat {
			if _, ok := parseFloat(v); !ok {
				canFloat = false
			} else if !isIntText(v) {
				realFloat = true
			}
		}
		if canBool {
			_, canBool = parseBool(v, false)
		}
		if canISO {
			_, canISO = parseISO(v)
		}
		if !canInt && !canFloat && !canBool && !canISO {
			return arrow.BinaryTypes.String
		}
	}
	switch {
	case values == 0:
		return arrow.BinaryTypes.String
	case canInt:
		return arrow.PrimitiveTypes.Int64
	case canFloat && (realFloat || !bigInt):
		return arrow.PrimitiveTypes.Float64
	case canBool:
		return arrow.FixedWidthTypes.Boolean
	case canISO:
		if t, bad := inferISO(a); bad == "" {
			return t
		}
	}
	return arrow.BinaryTypes.String
}

// inferISO returns date32 if every non-null value is an ISO date,
// timestamp[ns] if they are timestamps (or dates) without zone, and
// timestamp[ns] with a zone if all have a zone: the zone's offset if they
// share one, UTC otherwise. bad is the first value that is none of these,
// or mixes zoned and unzoned values.
func inferISO(a *array.String) (typ arrow.DataType, bad string) {
	allDates, zoned, unzoned := true, false, false
	offset, sameOffset := int64(0), true
	for i := 0; i < a.Len(); i++ {
		if a.IsNull(i) {
			continue
		}
		t, ok := parseISO([]byte(a.Value(i)))
		if !ok {
			return nil, a.Value(i)
		}
		if t.hasTime {
			allDates = false
		}
		if t.hasZone {
			if !zoned {
				offset = t.offset
			}
			sameOffset = sameOffset && t.offset == offset
			zoned = true
		} else {
			unzoned = true
		}
		if zoned && unzoned {
			return nil, a.Value(i)
		}
	}
	switch {
	case allDates && !zoned && !unzoned: // all null
		return &arrow.TimestampType{Unit: arrow.Nanosecond}, ""
	case allDates && !zoned:
		return arrow.FixedWidthTypes.Date32, ""
	case !zoned:
		return &arrow.TimestampType{Unit: arrow.Nanosecond}, ""
	case sameOffset && offset != 0:
		sign, off := '+', offset
		if off < 0 {
			sign, off = '-', -off
		}
		return &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: fmt.Sprintf("%c%02d:%02d", sign, off/3600, off/60%60)}, ""
	}
	return &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, ""
}
