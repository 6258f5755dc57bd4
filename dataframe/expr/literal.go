package expr

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// Date is a calendar date without a time of day, used as a date32 literal.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// DateOf is the date of t in t's time zone.
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	return Date{y, m, d}
}

// String formats d as 2006-01-02.
func (d Date) String() string {
	return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
}

// days is d as a count of days since 1970-01-01.
func (d Date) days() int64 {
	return daysFromCivil(int64(d.Year), int64(d.Month), int64(d.Day))
}

func dateFromDays(days int64) Date {
	y, m, d := civilFromDays(days)
	return Date{int(y), time.Month(m), int(d)}
}

type litKind uint8

const (
	litNull litKind = iota
	litBool
	litInt
	litUint
	litFloat32
	litFloat64
	litString
	litTime
	litDuration
	litDate
)

// scalar is a literal value. Integers are normalised to int64 (uint64 only
// above the int64 range), times to nanoseconds since the epoch and a zone
// name, dates to days since the epoch.
type scalar struct {
	kind litKind
	b    bool
	i    int64 // int, time (ns), duration (ns), date (days)
	u    uint64
	f    float64
	s    string // string value, or zone name of a time
}

func scalarOf(v any) (scalar, error) {
	switch x := v.(type) {
	case nil:
		return scalar{kind: litNull}, nil
	case bool:
		return scalar{kind: litBool, b: x}, nil
	case int:
		return scalar{kind: litInt, i: int64(x)}, nil
	case int8:
		return scalar{kind: litInt, i: int64(x)}, nil
	case int16:
		return scalar{kind: litInt, i: int64(x)}, nil
	case int32:
		return scalar{kind: litInt, i: int64(x)}, nil
	case int64:
		return scalar{kind: litInt, i: x}, nil
	case uint:
		return uintScalar(uint64(x)), nil
	case uint8:
		return uintScalar(uint64(x)), nil
	case uint16:
		return uintScalar(uint64(x)), nil
	case uint32:
		return uintScalar(uint64(x)), nil
	case uint64:
		return uintScalar(x), nil
	case float32:
		return scalar{kind: litFloat32, f: float64(x)}, nil
	case float64:
		return scalar{kind: litFloat64, f: x}, nil
	case string:
		return scalar{kind: litString, s: x}, nil
	case time.Time:
		return timeScalar(x)
	case time.Duration:
		return scalar{kind: litDuration, i: int64(x)}, nil
	case Date:
		return scalar{kind: litDate, i: x.days()}, nil
	}
	return scalar{}, &LiteralError{Value: v}
}

func uintScalar(u uint64) scalar {
	if u <= math.MaxInt64 {
		return scalar{kind: litInt, i: int64(u)}
	}
	return scalar{kind: litUint, u: u}
}

var (
	minNanoTime = time.Unix(0, math.MinInt64)
	maxNanoTime = time.Unix(0, math.MaxInt64)
)

func timeScalar(t time.Time) (scalar, error) {
	if t.Before(minNanoTime) || t.After(maxNanoTime) {
		return scalar{}, fmt.Errorf("literal time %s is outside the range of timestamp[ns] (%d to %d)",
			t.Format(time.RFC3339), minNanoTime.UTC().Year(), maxNanoTime.UTC().Year())
	}
	return scalar{kind: litTime, i: t.UnixNano(), s: zoneName(t)}, nil
}

// zoneName is the name of t's time zone as Arrow spells it: an IANA name
// when t's location is one, else a fixed offset such as "+05:30".
func zoneName(t time.Time) string {
	loc := t.Location()
	switch name := loc.String(); name {
	case "UTC", "":
		return "UTC"
	case "Local":
		return "UTC"
	default:
		if _, err := loadZone(name); err == nil {
			return name
		}
		_, off := t.Zone()
		return offsetName(off)
	}
}

func offsetName(off int) string {
	sign := '+'
	if off < 0 {
		sign = '-'
		off = -off
	}
	return fmt.Sprintf("%c%02d:%02d", sign, off/3600, off/60%60)
}

var zoneCache sync.Map // string -> *time.Location

// loadZone loads a time zone by IANA name or fixed offset ("+01:00"),
// caching the result.
func loadZone(name string) (*time.Location, error) {
	if name == "" || name == "UTC" {
		return time.UTC, nil
	}
	if l, ok := zoneCache.Load(name); ok {
		return l.(*time.Location), nil
	}
	ts := &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: name}
	loc, err := ts.GetZone()
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q: %w", name, err)
	}
	if loc == nil {
		loc = time.UTC
	}
	zoneCache.Store(name, loc)
	return loc, nil
}

// dataType is the Arrow type of the literal.
func (s scalar) dataType() arrow.DataType {
	switch s.kind {
	case litBool:
		return arrow.FixedWidthTypes.Boolean
	case litInt:
		return arrow.PrimitiveTypes.Int64
	case litUint:
		return arrow.PrimitiveTypes.Uint64
	case litFloat32:
		return arrow.PrimitiveTypes.Float32
	case litFloat64:
		return arrow.PrimitiveTypes.Float64
	case litString:
		return arrow.BinaryTypes.String
	case litTime:
		return &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: s.s}
	case litDuration:
		return arrow.FixedWidthTypes.Duration_ns
	case litDate:
		return arrow.FixedWidthTypes.Date32
	}
	return arrow.Null
}

// value is the literal as the Go value LiteralValue documents.
func (s scalar) value() any {
	switch s.kind {
	case litBool:
		return s.b
	case litInt:
		return s.i
	case litUint:
		return s.u
	case litFloat32:
		return float32(s.f)
	case litFloat64:
		return s.f
	case litString:
		return s.s
	case litTime:
		t := time.Unix(0, s.i)
		if loc, err := loadZone(s.s); err == nil {
			return t.In(loc)
		}
		return t.UTC()
	case litDuration:
		return time.Duration(s.i)
	case litDate:
		return dateFromDays(s.i)
	}
	return nil
}

// String is the literal as it appears in an expression's text.
func (s scalar) String() string {
	switch s.kind {
	case litBool:
		return strconv.FormatBool(s.b)
	case litInt:
		return strconv.FormatInt(s.i, 10)
	case litUint:
		return strconv.FormatUint(s.u, 10)
	case litFloat32:
		return "float32(" + formatFloat(s.f, 32) + ")"
	case litFloat64:
		return formatFloat(s.f, 64)
	case litString:
		return strconv.Quote(s.s)
	case litTime:
		t := s.value().(time.Time)
		if s.s == "UTC" {
			return "timestamp(" + strconv.Quote(t.Format(time.RFC3339Nano)) + ")"
		}
		return "timestamp(" + strconv.Quote(t.Format(time.RFC3339Nano)) + ", " + strconv.Quote(s.s) + ")"
	case litDuration:
		return "duration(" + strconv.Quote(time.Duration(s.i).String()) + ")"
	case litDate:
		return "date(" + strconv.Quote(dateFromDays(s.i).String()) + ")"
	}
	return "null"
}

// formatFloat formats f so that it always reads as a float: 2.0, 1.5e+20,
// NaN, inf, -inf.
func formatFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	t := strconv.FormatFloat(f, 'g', -1, bits)
	if !strings.ContainsAny(t, ".e") {
		t += ".0"
	}
	return t
}

// civilFromDays converts days since 1970-01-01 to a proleptic Gregorian
// year, month and day (Howard Hinnant's algorithm).
func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := z
	if era < 0 {
		era -= 146096
	}
	era /= 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	if mp < 10 {
		m = mp + 3
	} else {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// daysFromCivil is the inverse of civilFromDays. Out-of-range months and
// days are normalised as time.Date does.
func daysFromCivil(y, m, d int64) int64 {
	if m < 1 || m > 12 {
		m--
		y += floorDivInt(m, 12)
		m = m - floorDivInt(m, 12)*12 + 1
	}
	if m <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	mp := m + 9
	if m > 2 {
		mp = m - 3
	}
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func floorDivInt(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
