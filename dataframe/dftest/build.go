package dftest

import (
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Column is a named column of values for Table and Record. A nil value is
// a null.
type Column struct {
	name string
	typ  arrow.DataType
	vals []any
}

// Int64s is an int64 column. Values are Go integers of any type or nil.
func Int64s(name string, vals ...any) Column {
	return Column{name, arrow.PrimitiveTypes.Int64, vals}
}

// Float64s is a float64 column. Values are Go floats or integers
// (math.NaN() and math.Inf included) or nil.
func Float64s(name string, vals ...any) Column {
	return Column{name, arrow.PrimitiveTypes.Float64, vals}
}

// Strings is a string (utf8) column. Values are strings, []byte or nil.
func Strings(name string, vals ...any) Column {
	return Column{name, arrow.BinaryTypes.String, vals}
}

// Bools is a boolean column. Values are bools or nil.
func Bools(name string, vals ...any) Column {
	return Column{name, arrow.FixedWidthTypes.Boolean, vals}
}

// TimestampType is the type of Timestamps columns: microseconds, UTC.
var TimestampType = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}

// Timestamps is a timestamp column of type TimestampType (microseconds,
// UTC). Values are time.Time, strings or nil; a string is RFC 3339
// ("2024-03-01T12:30:00Z", "2024-03-01T12:30:00.5+01:00"), or without an
// offset ("2024-03-01 12:30:00", "2024-03-01T12:30", "2024-03-01") taken
// as UTC.
func Timestamps(name string, vals ...any) Column {
	return Column{name, TimestampType, vals}
}

// Dates is a date32 column. Values are time.Time (its calendar day),
// strings "2024-03-01" or nil.
func Dates(name string, vals ...any) Column {
	return Column{name, arrow.FixedWidthTypes.Date32, vals}
}

// Durations is a duration column in nanoseconds. Values are time.Duration,
// strings that time.ParseDuration accepts ("1h30m") or nil.
func Durations(name string, vals ...any) Column {
	return Column{name, arrow.FixedWidthTypes.Duration_ns, vals}
}

// As returns the column with another Arrow type, its values converted when
// the table is built. Supported: all integer and float types, string,
// large string, string view, binary, large binary, bool, timestamps of any
// unit and time zone, date32, date64, time32, time64 (from strings
// "15:04:05" or durations since midnight), durations of any unit, null,
// and dictionaries of strings. For example:
//
//	dftest.Int64s("n", 1, 2).As(arrow.PrimitiveTypes.Int32)
//	dftest.Timestamps("t", "2024-01-01").As(&arrow.TimestampType{Unit: arrow.Nanosecond})
//	dftest.Strings("city", "Oslo", "Lima").As(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String})
func (c Column) As(dt arrow.DataType) Column {
	c.typ = dt
	return c
}

// Table builds a table from columns of equal length, ending the test with
// t.Fatalf when a value does not fit its column. The table is released
// when the test ends.
func Table(t testing.TB, cols ...Column) arrow.Table {
	t.Helper()
	rec := Record(t, cols...)
	tbl := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
	t.Cleanup(tbl.Release)
	return tbl
}

// Record builds a record batch from columns of equal length, ending the
// test with t.Fatalf when a value does not fit its column. The record is
// released when the test ends.
func Record(t testing.TB, cols ...Column) arrow.RecordBatch {
	t.Helper()
	rec, err := buildRecord(cols)
	if err != nil {
		t.Fatalf("dftest: %v", err)
	}
	t.Cleanup(rec.Release)
	return rec
}

// NewRecord builds a record batch from columns of equal length, for use
// outside tests (examples, benchmarks, programs). Release it when done.
func NewRecord(cols ...Column) (arrow.RecordBatch, error) {
	rec, err := buildRecord(cols)
	if err != nil {
		return nil, fmt.Errorf("dftest: %w", err)
	}
	return rec, nil
}

func buildRecord(cols []Column) (arrow.RecordBatch, error) {
	fields := make([]arrow.Field, len(cols))
	arrs := make([]arrow.Array, len(cols))
	defer func() {
		for _, a := range arrs {
			if a != nil {
				a.Release()
			}
		}
	}()
	n := -1
	for i, c := range cols {
		if c.typ == nil {
			return nil, fmt.Errorf("column %d (%q) has no type; make it with Int64s, Strings, ...", i, c.name)
		}
		if n >= 0 && len(c.vals) != n {
			return nil, fmt.Errorf("column %q has %d values, but column %q has %d", c.name, len(c.vals), cols[0].name, n)
		}
		n = len(c.vals)
		a, err := buildArray(c)
		if err != nil {
			return nil, err
		}
		arrs[i] = a
		fields[i] = arrow.Field{Name: c.name, Type: c.typ, Nullable: true}
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, int64(max(n, 0))), nil
}

func buildArray(c Column) (a arrow.Array, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("column %q: cannot build %s: %v", c.name, c.typ, r)
		}
	}()
	b := array.NewBuilder(memory.DefaultAllocator, c.typ)
	defer b.Release()
	for i, v := range c.vals {
		if v == nil {
			b.AppendNull()
			continue
		}
		if err := appendValue(b, c.typ, v); err != nil {
			return nil, fmt.Errorf("column %q, value %d: %w", c.name, i, err)
		}
	}
	return b.NewArray(), nil
}

func appendValue(b array.Builder, dt arrow.DataType, v any) error {
	bad := func() error { return fmt.Errorf("cannot put %#v (%T) in a column of %s", v, v, dt) }
	switch b := b.(type) {
	case *array.Int8Builder:
		x, ok := toInt(v, math.MinInt8, math.MaxInt8)
		if !ok {
			return bad()
		}
		b.Append(int8(x))
	case *array.Int16Builder:
		x, ok := toInt(v, math.MinInt16, math.MaxInt16)
		if !ok {
			return bad()
		}
		b.Append(int16(x))
	case *array.Int32Builder:
		x, ok := toInt(v, math.MinInt32, math.MaxInt32)
		if !ok {
			return bad()
		}
		b.Append(int32(x))
	case *array.Int64Builder:
		x, ok := toInt(v, math.MinInt64, math.MaxInt64)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Uint8Builder:
		x, ok := toUint(v, math.MaxUint8)
		if !ok {
			return bad()
		}
		b.Append(uint8(x))
	case *array.Uint16Builder:
		x, ok := toUint(v, math.MaxUint16)
		if !ok {
			return bad()
		}
		b.Append(uint16(x))
	case *array.Uint32Builder:
		x, ok := toUint(v, math.MaxUint32)
		if !ok {
			return bad()
		}
		b.Append(uint32(x))
	case *array.Uint64Builder:
		x, ok := toUint(v, math.MaxUint64)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Float32Builder:
		x, ok := toFloat(v)
		if !ok {
			return bad()
		}
		b.Append(float32(x))
	case *array.Float64Builder:
		x, ok := toFloat(v)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.StringBuilder:
		s, ok := toString(v)
		if !ok {
			return bad()
		}
		b.Append(s)
	case *array.LargeStringBuilder:
		s, ok := toString(v)
		if !ok {
			return bad()
		}
		b.Append(s)
	case *array.StringViewBuilder:
		s, ok := toString(v)
		if !ok {
			return bad()
		}
		b.Append(s)
	case *array.BinaryBuilder:
		s, ok := toString(v)
		if !ok {
			return bad()
		}
		b.AppendString(s)
	case *array.BooleanBuilder:
		x, ok := v.(bool)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.TimestampBuilder:
		tm, err := toTime(v)
		if err != nil {
			return err
		}
		ts, err := arrow.TimestampFromTime(tm, dt.(*arrow.TimestampType).Unit)
		if err != nil {
			return err
		}
		b.Append(ts)
	case *array.Date32Builder:
		tm, err := toTime(v)
		if err != nil {
			return err
		}
		b.Append(arrow.Date32FromTime(tm))
	case *array.Date64Builder:
		tm, err := toTime(v)
		if err != nil {
			return err
		}
		b.Append(arrow.Date64FromTime(tm))
	case *array.DurationBuilder:
		d, err := toDuration(v)
		if err != nil {
			return err
		}
		mul := dt.(*arrow.DurationType).Unit.Multiplier()
		if d%mul != 0 {
			return fmt.Errorf("%v is not a whole number of %s", d, dt.(*arrow.DurationType).Unit)
		}
		b.Append(arrow.Duration(d / mul))
	case *array.Time32Builder:
		d, err := toTimeOfDay(v)
		if err != nil {
			return err
		}
		b.Append(arrow.Time32(d / dt.(*arrow.Time32Type).Unit.Multiplier()))
	case *array.Time64Builder:
		d, err := toTimeOfDay(v)
		if err != nil {
			return err
		}
		b.Append(arrow.Time64(d / dt.(*arrow.Time64Type).Unit.Multiplier()))
	case *array.BinaryDictionaryBuilder:
		s, ok := toString(v)
		if !ok {
			return bad()
		}
		return b.AppendString(s)
	default:
		return fmt.Errorf("dftest cannot build columns of %s", dt)
	}
	return nil
}

func toInt(v any, lo, hi int64) (int64, bool) {
	var x int64
	switch v := v.(type) {
	case int:
		x = int64(v)
	case int8:
		x = int64(v)
	case int16:
		x = int64(v)
	case int32:
		x = int64(v)
	case int64:
		x = v
	case uint, uint8, uint16, uint32, uint64:
		u, ok := toUint(v, math.MaxInt64)
		return int64(u), ok && int64(u) <= hi
	default:
		return 0, false
	}
	return x, x >= lo && x <= hi
}

func toUint(v any, hi uint64) (uint64, bool) {
	var x uint64
	switch v := v.(type) {
	case uint:
		x = uint64(v)
	case uint8:
		x = uint64(v)
	case uint16:
		x = uint64(v)
	case uint32:
		x = uint64(v)
	case uint64:
		x = v
	case int, int8, int16, int32, int64:
		i, _ := toInt(v, math.MinInt64, math.MaxInt64)
		return uint64(i), i >= 0 && uint64(i) <= hi
	default:
		return 0, false
	}
	return x, x <= hi
}

func toFloat(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case float32:
		return float64(v), true
	}
	if i, ok := toInt(v, math.MinInt64, math.MaxInt64); ok {
		return float64(i), true
	}
	if u, ok := toUint(v, math.MaxUint64); ok {
		return float64(u), true
	}
	return 0, false
}

func toString(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case []byte:
		return string(v), true
	}
	return "", false
}

var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04",
	"2006-01-02 15:04",
	time.DateOnly,
}

func toTime(v any) (time.Time, error) {
	switch v := v.(type) {
	case time.Time:
		return v, nil
	case string:
		for _, layout := range timeLayouts {
			if t, err := time.Parse(layout, v); err == nil {
				return t, nil
			}
		}
		return time.Time{}, fmt.Errorf("cannot read %q as a time; write RFC 3339 (2024-03-01T12:30:00Z) or 2024-03-01", v)
	}
	return time.Time{}, fmt.Errorf("cannot use %#v (%T) as a time; use time.Time or a string", v, v)
}

func toDuration(v any) (time.Duration, error) {
	switch v := v.(type) {
	case time.Duration:
		return v, nil
	case string:
		d, err := time.ParseDuration(v)
		if err != nil {
			return 0, fmt.Errorf("cannot read %q as a duration: %w", v, err)
		}
		return d, nil
	}
	return 0, fmt.Errorf("cannot use %#v (%T) as a duration; use time.Duration or a string such as \"1h30m\"", v, v)
}

func toTimeOfDay(v any) (time.Duration, error) {
	switch v := v.(type) {
	case time.Duration:
		if v < 0 || v >= 24*time.Hour {
			return 0, fmt.Errorf("%v is not a time of day", v)
		}
		return v, nil
	case string:
		t, err := time.Parse("15:04:05.999999999", v)
		if err != nil {
			return 0, fmt.Errorf("cannot read %s as a time of day (15:04:05)", strconv.Quote(v))
		}
		return time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute +
			time.Duration(t.Second())*time.Second + time.Duration(t.Nanosecond()), nil
	}
	return 0, fmt.Errorf("cannot use %#v (%T) as a time of day; use a string \"15:04:05\" or a time.Duration", v, v)
}
