package window

import (
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/dataframe/internal/distinct/rows"
)

// timeCol describes a time column: a timestamp of any unit (with or
// without a zone), a date32 or a date64. Its values are read as int64
// counts of its unit since the epoch.
type timeCol struct {
	typ  arrow.DataType
	unit int64 // nanoseconds per value unit
	loc  *time.Location
	date bool // date32 or date64: calendar days, no time of day
}

func newTimeCol(name string, t arrow.DataType) (timeCol, error) {
	switch tt := t.(type) {
	case *arrow.TimestampType:
		loc, err := zoneOf(tt.TimeZone)
		if err != nil {
			return timeCol{}, fmt.Errorf("window: time column %q (%s): %w", name, t, err)
		}
		return timeCol{typ: t, unit: int64(tt.Unit.Multiplier()), loc: loc}, nil
	case *arrow.Date32Type:
		return timeCol{typ: t, unit: 86400e9, loc: time.UTC, date: true}, nil
	case *arrow.Date64Type:
		return timeCol{typ: t, unit: 1e6, loc: time.UTC, date: true}, nil
	}
	return timeCol{}, fmt.Errorf("window: time column %q has type %s; want a timestamp, date32 or date64: %w", name, t, ErrBadColumn)
}

var zones sync.Map // zone name -> *time.Location

// zoneOf loads an Arrow time zone: "" (no zone: wall times read as UTC),
// an IANA name, or a fixed offset "+01:00".
func zoneOf(name string) (*time.Location, error) {
	if name == "" || name == "UTC" || name == "Z" {
		return time.UTC, nil
	}
	if l, ok := zones.Load(name); ok {
		return l.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		if off, ok := parseOffset(name); ok {
			loc, err = time.FixedZone(name, off), nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("time zone %q: %w", name, err)
	}
	zones.Store(name, loc)
	return loc, nil
}

// parseOffset reads "+HH:MM", "-HH:MM" or "+HHMM" as seconds east of UTC.
func parseOffset(s string) (int, bool) {
	if len(s) < 5 || (s[0] != '+' && s[0] != '-') {
		return 0, false
	}
	digits := s[1:]
	if len(digits) == 5 && digits[2] == ':' {
		digits = digits[:2] + digits[3:]
	}
	if len(digits) != 4 {
		return 0, false
	}
	h, err1 := strconv.Atoi(digits[:2])
	m, err2 := strconv.Atoi(digits[2:])
	if err1 != nil || err2 != nil || h > 23 || m > 59 {
		return 0, false
	}
	off := h*3600 + m*60
	if s[0] == '-' {
		off = -off
	}
	return off, true
}

// values returns the column's values as int64 (a view for 64-bit types, a
// copy for date32).
func (c timeCol) values(arr arrow.Array) []int64 {
	if arr.DataType().ID() == arrow.DATE32 {
		v := rows.Values[int32](arr)
		out := make([]int64, len(v))
		for i, x := range v {
			out[i] = int64(x)
		}
		return out
	}
	return rows.Values[int64](arr)
}

// toTime returns the instant of value v.
func (c timeCol) toTime(v int64) time.Time {
	switch c.unit {
	case 1:
		return time.Unix(0, v).In(c.loc)
	case 1e3:
		return time.UnixMicro(v).In(c.loc)
	case 1e6:
		return time.UnixMilli(v).In(c.loc)
	case 1e9:
		return time.Unix(v, 0).In(c.loc)
	}
	return time.Unix(v*86400, 0).In(c.loc)
}

// fromTime returns the value of instant t, rounded down to the unit, and
// false when the column's type cannot hold it.
func (c timeCol) fromTime(t time.Time) (int64, bool) {
	sec, nsec := t.Unix(), int64(t.Nanosecond())
	switch c.unit {
	case 1:
		if sec > math.MaxInt64/1_000_000_000-1 || sec < math.MinInt64/1_000_000_000+1 {
			return 0, false
		}
		return sec*1e9 + nsec, true
	case 1e3:
		if sec > math.MaxInt64/1_000_000-1 || sec < math.MinInt64/1_000_000+1 {
			return 0, false
		}
		return sec*1e6 + nsec/1e3, true
	case 1e6:
		if sec > math.MaxInt64/1_000-1 || sec < math.MinInt64/1_000+1 {
			return 0, false
		}
		return sec*1e3 + nsec/1e6, true
	case 1e9:
		return sec, true
	}
	d := floorDivInt(sec, 86400)
	if c.typ.ID() == arrow.DATE32 && (d > math.MaxInt32 || d < math.MinInt32) {
		return 0, false
	}
	return d, true
}

// spanUnits returns the number of units a duration spans, rounded up: for
// integers a and b, (b-a) units is less than span exactly when b-a is less
// than spanUnits(span).
func (c timeCol) spanUnits(span time.Duration) int64 {
	return (int64(span) + c.unit - 1) / c.unit
}
