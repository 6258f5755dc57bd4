package csv

import (
	"bytes"
	"strconv"
)

// Parsers of single values. The fast paths handle the plain forms found in
// nearly every file without allocating; anything else goes to strconv.

var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseInt parses a base-10 int64, allowing a sign and surrounding spaces.
func parseInt(b []byte) (int64, bool) {
	if v, ok := parseIntFast(b); ok {
		return v, true
	}
	v, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
	return v, err == nil
}

// parseIntFast parses an optional sign and 1 to 17 digits.
func parseIntFast(b []byte) (int64, bool) {
	n := len(b)
	if n == 0 || n > 18 {
		return 0, false
	}
	i, neg := 0, false
	switch b[0] {
	case '-':
		neg, i = true, 1
	case '+':
		i = 1
	}
	if i == n {
		return 0, false
	}
	var v int64
	for ; i < n; i++ {
		d := b[i] - '0'
		if d > 9 {
			return 0, false
		}
		v = v*10 + int64(d)
	}
	if neg {
		v = -v
	}
	return v, true
}

// parseUint parses a base-10 uint64, allowing a '+' and surrounding spaces.
func parseUint(b []byte) (uint64, bool) {
	if n := len(b); n > 0 && n <= 19 {
		var v uint64
		for i := 0; i < n; i++ {
			d := b[i] - '0'
			if d > 9 {
				goto slow
			}
			v = v*10 + uint64(d)
		}
		return v, true
	}
slow:
	v, err := strconv.ParseUint(string(bytes.TrimPrefix(bytes.TrimSpace(b), []byte("+"))), 10, 64)
	return v, err == nil
}

// parseFloat parses a float64: plain decimals in the fast path, other forms,
// exponents, "inf" and surrounding spaces with strconv.ParseFloat.
func parseFloat(b []byte) (float64, bool) {
	if v, ok := parseFloatFast(b); ok {
		return v, true
	}
	return parseFloatSlow(b)
}

// parseFloatFast parses plain decimals with at most 15 digits exactly (the
// result equals strconv's: the digits and the power of ten are exact
// float64 values, so one division rounds correctly).
func parseFloatFast(b []byte) (float64, bool) {
	n := len(b)
	if n == 0 || n > 17 {
		return 0, false
	}
	i, neg := 0, false
	switch b[0] {
	case '-':
		neg, i = true, 1
	case '+':
		i = 1
	}
	var mant uint64
	digits, frac, dot := 0, 0, false
	for ; i < n; i++ {
		c := b[i]
		if d := c - '0'; d <= 9 {
			mant = mant*10 + uint64(d)
			digits++
			if dot {
				frac++
			}
		} else if c == '.' && !dot {
			dot = true
		} else {
			return 0, false
		}
	}
	if digits == 0 || digits > 15 {
		return 0, false
	}
	f := float64(mant)
	if frac > 0 {
		f /= pow10[frac]
	}
	if neg {
		f = -f
	}
	return f, true
}

func parseFloatSlow(b []byte) (float64, bool) {
	v, err := strconv.ParseFloat(string(bytes.TrimSpace(b)), 64)
	if err != nil {
		// Out of range values are errors, not ±Inf.
		return 0, false
	}
	return v, true
}

// parseBool accepts true/false, True/False, TRUE/FALSE, and 1/0 when digits
// is set.
func parseBool(b []byte, digits bool) (v, ok bool) {
	switch string(b) {
	case "true", "True", "TRUE":
		return true, true
	case "false", "False", "FALSE":
		return false, true
	case "1":
		return true, digits
	case "0":
		return false, digits
	}
	if t := bytes.TrimSpace(b); len(t) != len(b) {
		return parseBool(t, digits)
	}
	return false, false
}

// isoTime is a parsed ISO 8601 date or timestamp.
type isoTime struct {
	days    int64 // days since 1970-01-01 of the local date
	secs    int64 // seconds into the day
	nanos   int64
	offset  int64 // zone offset in seconds east of UTC
	hasTime bool
	hasZone bool
}

// unixSeconds returns the instant's seconds since the epoch, in UTC.
func (t *isoTime) unixSeconds() int64 { return t.days*86400 + t.secs - t.offset }

func digits2(b []byte) (int64, bool) {
	d0, d1 := b[0]-'0', b[1]-'0'
	return int64(d0)*10 + int64(d1), d0 <= 9 && d1 <= 9
}

// parseISO parses "YYYY-MM-DD" optionally followed by 'T' or ' ' and
// "HH:MM[:SS[.fffffffff]]" and a zone "Z", "±HH:MM", "±HHMM" or "±HH".
func parseISO(b []byte) (t isoTime, ok bool) {
	if len(b) < 10 || b[4] != '-' || b[7] != '-' {
		if s := bytes.TrimSpace(b); len(s) != len(b) && len(s) >= 10 {
			return parseISO(s)
		}
		return t, false
	}
	y1, ok1 := digits2(b[0:2])
	y2, ok2 := digits2(b[2:4])
	mo, ok3 := digits2(b[5:7])
	d, ok4 := digits2(b[8:10])
	if !(ok1 && ok2 && ok3 && ok4) || mo < 1 || mo > 12 || d < 1 || d > daysIn(y1*100+y2, mo) {
		return t, false
	}
	t.days = daysFromCivil(y1*100+y2, mo, d)
	b = b[10:]
	if len(b) == 0 {
		return t, true
	}
	if len(b) < 6 || (b[0] != 'T' && b[0] != ' ' && b[0] != 't') || b[3] != ':' {
		return t, false
	}
	h, ok1 := digits2(b[1:3])
	mi, ok2 := digits2(b[4:6])
	if !ok1 || !ok2 || h > 23 || mi > 59 {
		return t, false
	}
	t.hasTime = true
	t.secs = h*3600 + mi*60
	b = b[6:]
	if len(b) >= 3 && b[0] == ':' {
		s, ok := digits2(b[1:3])
		if !ok || s > 59 {
			return t, false
		}
		t.secs += s
		b = b[3:]
		if len(b) >= 2 && (b[0] == '.' || b[0] == ',') {
			i := 1
			scale := int64(100_000_000)
			for ; i < len(b) && b[i]-'0' <= 9; i++ {
				if i > 9 {
					return t, false
				}
				t.nanos += int64(b[i]-'0') * scale
				scale /= 10
			}
			if i == 1 {
				return t, false
			}
			b = b[i:]
		}
	}
	if len(b) == 0 {
		return t, true
	}
	if len(b) == 1 && (b[0] == 'Z' || b[0] == 'z') {
		t.hasZone = true
		return t, true
	}
	if b[0] != '+' && b[0] != '-' || len(b) < 3 {
		return t, false
	}
	oh, ok := digits2(b[1:3])
	if !ok || oh > 23 {
		return t, false
	}
	var om int64
	switch rest := b[3:]; {
	case len(rest) == 0:
	case len(rest) == 3 && rest[0] == ':':
		om, ok = digits2(rest[1:3])
	case len(rest) == 2:
		om, ok = digits2(rest)
	default:
		ok = false
	}
	if !ok || om > 59 {
		return t, false
	}
	t.offset = oh*3600 + om*60
	if b[0] == '-' {
		t.offset = -t.offset
	}
	t.hasZone = true
	return t, true
}

func isLeap(y int64) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysIn(y, m int64) int64 {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil returns the days since 1970-01-01 of a proleptic Gregorian
// date (H. Hinnant's algorithm).
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
