package jsonl

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
)

// parseTime reads a timestamp in RFC 3339 form, "2024-03-01T12:30:00Z",
// with or without fractional seconds (up to nanoseconds), with an offset
// ("Z", "+01:00", "+0100", "+01") or without one (taken as UTC), with 'T',
// 't' or a space between date and time, or a date alone (midnight). It
// returns seconds and nanoseconds since the Unix epoch.
func parseTime(b []byte) (sec, nsec int64, ok bool) {
	days, ok := parseDate(b)
	if !ok {
		if len(b) < 10 {
			return 0, 0, false
		}
		if days, ok = parseDate(b[:10]); !ok {
			return 0, 0, false
		}
	}
	sec = days * 86400
	b = b[min(len(b), 10):]
	if len(b) == 0 {
		return sec, 0, true
	}
	if c := b[0]; c != 'T' && c != 't' && c != ' ' {
		return 0, 0, false
	}
	b = b[1:]
	h, ok1 := digits(b, 0, 2)
	if !ok1 || len(b) < 5 || b[2] != ':' {
		return 0, 0, false
	}
	m, ok2 := digits(b, 3, 2)
	if !ok2 || h > 23 || m > 59 {
		return 0, 0, false
	}
	sec += int64(h)*3600 + int64(m)*60
	b = b[5:]
	if len(b) > 0 && b[0] == ':' {
		s, ok := digits(b, 1, 2)
		if !ok || s > 59 {
			return 0, 0, false
		}
		sec += int64(s)
		b = b[3:]
		if len(b) > 0 && (b[0] == '.' || b[0] == ',') {
			i := 1
			scale := int64(1e8)
			for i < len(b) && b[i] >= '0' && b[i] <= '9' {
				if scale == 0 {
					return 0, 0, false // finer than nanoseconds
				}
				nsec += int64(b[i]-'0') * scale
				scale /= 10
				i++
			}
			if i == 1 {
				return 0, 0, false
			}
			b = b[i:]
		}
	}
	switch {
	case len(b) == 0:
	case len(b) == 1 && (b[0] == 'Z' || b[0] == 'z'):
	case b[0] == '+' || b[0] == '-':
		oh, ok := digits(b, 1, 2)
		if !ok || oh > 23 {
			return 0, 0, false
		}
		om := 0
		switch len(b) {
		case 3:
		case 5:
			om, ok = digits(b, 3, 2)
		case 6:
			if b[3] != ':' {
				return 0, 0, false
			}
			om, ok = digits(b, 4, 2)
		default:
			return 0, 0, false
		}
		if !ok || om > 59 {
			return 0, 0, false
		}
		off := int64(oh)*3600 + int64(om)*60
		if b[0] == '-' {
			off = -off
		}
		sec -= off
	default:
		return 0, 0, false
	}
	return sec, nsec, true
}

// parseDate reads "YYYY-MM-DD" and returns days since the Unix epoch.
func parseDate(b []byte) (int64, bool) {
	if len(b) != 10 || b[4] != '-' || b[7] != '-' {
		return 0, false
	}
	y, ok1 := digits(b, 0, 4)
	m, ok2 := digits(b, 5, 2)
	d, ok3 := digits(b, 8, 2)
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 || d > daysIn(y, m) {
		return 0, false
	}
	return daysFromCivil(int64(y), int64(m), int64(d)), true
}

func digits(b []byte, at, n int) (int, bool) {
	if at+n > len(b) {
		return 0, false
	}
	v := 0
	for _, c := range b[at : at+n] {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil counts days from 1970-01-01 to a date of the proleptic
// Gregorian calendar (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// toUnit converts seconds and nanoseconds to a count of unit, reporting
// whether it fits in an int64. Finer digits than the unit are dropped.
func toUnit(sec, nsec int64, unit arrow.TimeUnit) (int64, bool) {
	var per int64
	switch unit {
	case arrow.Second:
		return sec, true
	case arrow.Millisecond:
		per = 1e3
	case arrow.Microsecond:
		per = 1e6
	default:
		per = 1e9
	}
	if sec > math.MaxInt64/per-1 || sec < math.MinInt64/per+1 {
		return 0, false
	}
	return sec*per + nsec/(1e9/per), true
}
