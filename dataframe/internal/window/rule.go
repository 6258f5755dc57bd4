package window

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ErrBadRule: a rule string that does not parse, or a rule that does not
// fit the column (a rule finer than a day on a date column).
var ErrBadRule = errors.New("bad resample rule")

type ruleKind uint8

const (
	kindTick  ruleKind = iota // a fixed duration: ns, us, ms, s, min, h
	kindDay                   // n calendar days
	kindWeek                  // weeks ending on a weekday
	kindMonth                 // months, quarters and years, ending on a month
)

// A Rule says how to cut time into bins, as pandas' offset aliases do.
//
//	"30s", "15min", "1h", "2h" (also "ns", "us", "ms"): fixed durations, bins
//	    [start, start+d) labelled by their start (pandas: closed and label
//	    left), counted from the origin in absolute time, so that an hourly
//	    bin is an hour long across a daylight-saving change;
//	"1D", "2D": calendar days in the zone, [midnight, next midnight), 23 or
//	    25 hours long on the days of a daylight-saving change, labelled by
//	    the first midnight (closed and label left; pandas does the same for
//	    'D' since it treats a day as a calendar day when resampling);
//	"W" (= "W-SUN"), "W-MON" ... "W-SAT": weeks ending on that weekday, from
//	    the midnight after the previous end day to the midnight after the
//	    end day, labelled by the end day at midnight (pandas: closed and
//	    label right, with the edges moved to the end of the day, which
//	    gives these bins);
//	"ME" (or "M"): calendar months, labelled by their last day at midnight
//	    (2000-01-31 00:00), closed and label right as pandas;
//	"QE" (or "Q", "QE-DEC"), "QE-JAN" ... "QE-NOV": quarters ending in that
//	    month, labelled by their last day;
//	"YE" (or "Y", "A", "YE-DEC"), "YE-JAN" ...: years ending in that month,
//	    labelled by their last day.
//
// A number in front multiplies the period ("2h", "3D", "2W", "6ME").
// Calendar rules work in the rule's time zone (In), by default the time
// column's zone, or UTC for a column without one.
//
// Bins are counted from an origin (WithOrigin): for durations, from the
// midnight of the origin's day; for multiples of days, from the origin's
// day; for multiples of weeks, months, quarters and years, so that a bin
// ends with the period holding the origin. pandas uses the first day of the
// data (origin='start_day', and the first period for multiples of weeks and
// months); without WithOrigin, the origin is 1970-01-01 in the zone
// (origin='epoch'), which gives the same bins whenever the rule divides a
// day (1h, 15min, 1D; in a zone with daylight saving, durations must divide
// an hour) or is a single week, month, quarter or year.
type Rule struct {
	text   string
	kind   ruleKind
	n      int64
	tick   time.Duration // kindTick: n units
	months int64         // kindMonth: months per period before n (1, 3, 12)
	anchor int           // kindWeek: end weekday (0 Sunday); kindMonth: end month (1-12)
	loc    *time.Location
	origin time.Time
}

var ruleRE = regexp.MustCompile(`^(\d*)([A-Za-z]+)(?:-([A-Za-z]{3}))?$`)

var weekdays = map[string]int{"SUN": 0, "MON": 1, "TUE": 2, "WED": 3, "THU": 4, "FRI": 5, "SAT": 6}

var monthNames = map[string]int{"JAN": 1, "FEB": 2, "MAR": 3, "APR": 4, "MAY": 5, "JUN": 6,
	"JUL": 7, "AUG": 8, "SEP": 9, "OCT": 10, "NOV": 11, "DEC": 12}

var tickUnits = map[string]time.Duration{
	"ns": time.Nanosecond, "N": time.Nanosecond,
	"us": time.Microsecond, "U": time.Microsecond,
	"ms": time.Millisecond, "L": time.Millisecond,
	"s": time.Second, "S": time.Second,
	"min": time.Minute, "T": time.Minute,
	"h": time.Hour, "H": time.Hour,
}

// ParseRule reads a rule written as pandas writes offset aliases (see
// Rule).
func ParseRule(s string) (Rule, error) {
	m := ruleRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return Rule{}, fmt.Errorf("window: rule %q: want a number and a unit such as 1h, 15min, 1D, W, ME, QE, YE: %w", s, ErrBadRule)
	}
	r := Rule{text: s, n: 1}
	if m[1] != "" {
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil || n < 1 || n > 1<<31 {
			return Rule{}, fmt.Errorf("window: rule %q: multiple %q must be a positive number: %w", s, m[1], ErrBadRule)
		}
		r.n = n
	}
	unit, anchor := m[2], strings.ToUpper(m[3])
	noAnchor := func() error {
		if anchor != "" {
			return fmt.Errorf("window: rule %q: unit %s takes no anchor (-%s): %w", s, unit, anchor, ErrBadRule)
		}
		return nil
	}
	if d, ok := tickUnits[unit]; ok {
		if err := noAnchor(); err != nil {
			return Rule{}, err
		}
		if r.n > int64(time.Duration(1<<62)/d) {
			return Rule{}, fmt.Errorf("window: rule %q is too long: %w", s, ErrBadRule)
		}
		r.kind, r.tick = kindTick, time.Duration(r.n)*d
		return r, nil
	}
	switch unit {
	case "D", "d":
		r.kind = kindDay
		return r, noAnchor()
	case "W", "w":
		r.kind = kindWeek
		if anchor != "" {
			wd, ok := weekdays[anchor]
			if !ok {
				return Rule{}, fmt.Errorf("window: rule %q: unknown weekday %q (SUN, MON, ..., SAT): %w", s, anchor, ErrBadRule)
			}
			r.anchor = wd
		}
		return r, nil
	case "ME", "M":
		r.kind, r.months = kindMonth, 1
		return r, noAnchor()
	case "QE", "Q", "YE", "Y", "A":
		r.kind, r.months, r.anchor = kindMonth, 3, 12
		if unit != "QE" && unit != "Q" {
			r.months = 12
		}
		if anchor != "" {
			mo, ok := monthNames[anchor]
			if !ok {
				return Rule{}, fmt.Errorf("window: rule %q: unknown month %q (JAN, ..., DEC): %w", s, anchor, ErrBadRule)
			}
			r.anchor = mo
		}
		return r, nil
	}
	return Rule{}, fmt.Errorf("window: rule %q: unknown unit %q (ns, us, ms, s, min, h, D, W, ME, QE, YE): %w", s, unit, ErrBadRule)
}

// MustParseRule is ParseRule that panics on error, for rules written in
// code.
func MustParseRule(s string) Rule {
	r, err := ParseRule(s)
	if err != nil {
		panic(err)
	}
	return r
}

// String returns the rule as parsed.
func (r Rule) String() string { return r.text }

// In returns the rule working in time zone loc.
func (r Rule) In(loc *time.Location) Rule {
	r.loc = loc
	return r
}

// Location is the rule's time zone, nil when it takes the column's.
func (r Rule) Location() *time.Location { return r.loc }

// WithOrigin returns the rule counting its bins from origin (see Rule).
func (r Rule) WithOrigin(origin time.Time) Rule {
	r.origin = origin
	return r
}

// Origin returns the origin set with WithOrigin (zero when none).
func (r Rule) Origin() time.Time { return r.origin }

// ClosedRight reports whether pandas closes and labels the rule's bins on
// the right (weeks, months, quarters, years).
func (r Rule) ClosedRight() bool { return r.kind == kindWeek || r.kind == kindMonth }

// Calendar reports whether bins are calendar days or longer (no finer than
// a day), so that the rule applies to date columns.
func (r Rule) Calendar() bool { return r.kind != kindTick }

func (r Rule) zone() *time.Location {
	if r.loc == nil {
		return time.UTC
	}
	return r.loc
}

// Bin returns the bin holding t: the instants [start, end).
func (r Rule) Bin(t time.Time) (start, end time.Time) {
	loc := r.zone()
	switch r.kind {
	case kindTick:
		o := r.originMidnight()
		k := floorDiv(t.Sub(o), r.tick)
		if k == nil {
			// t and the origin are more than 292 years apart: count in
			// nanoseconds since the epoch from the origin's phase.
			return r.binFar(t)
		}
		start = o.Add(time.Duration(*k) * r.tick)
		return start, start.Add(r.tick)
	case kindDay:
		d := dayNumber(t.In(loc))
		d0 := r.originDay()
		s := d0 + floorDivInt(d-d0, r.n)*r.n
		return midnight(s, loc), midnight(s+r.n, loc)
	case kindWeek:
		d := dayNumber(t.In(loc))
		e := r.weekEnd(d)
		return midnight(e-7*r.n+1, loc), midnight(e+1, loc)
	}
	lt := t.In(loc)
	m := monthNumber(lt)
	e := r.monthEnd(m)
	step := r.months * r.n
	return monthStart(e-step+1, loc), monthStart(e+1, loc)
}

// Label returns the label of the bin [start, end): start for durations
// and days, the midnight of the last day for weeks, months, quarters and
// years (see Rule).
func (r Rule) Label(start, end time.Time) time.Time {
	if r.kind == kindTick || r.kind == kindDay {
		return start
	}
	loc := r.zone()
	return midnight(dayNumber(end.In(loc))-1, loc)
}

// originMidnight is the midnight that durations are counted from.
func (r Rule) originMidnight() time.Time {
	return midnight(r.originDay(), r.zone())
}

// originDay is the day number (days since 1970-01-01) of the origin's day
// in the zone.
func (r Rule) originDay() int64 {
	if r.origin.IsZero() {
		return 0
	}
	return dayNumber(r.origin.In(r.zone()))
}

// weekEnd returns the day number of the end of the week holding day d.
func (r Rule) weekEnd(d int64) int64 {
	// 1970-01-01 was a Thursday (weekday 4): day d is weekday (d+4) mod 7.
	firstEnd := func(from int64) int64 { return from + mod(int64(r.anchor)-4-from, 7) }
	period := 7 * r.n
	c := mod(firstEnd(r.originDay()), period)
	return d + mod(c-d, period)
}

// monthEnd returns the month number of the last month of the bin holding
// month m.
func (r Rule) monthEnd(m int64) int64 {
	// The end months of single periods are those congruent to anchor-1
	// modulo months (any month for ME).
	firstEnd := func(from int64) int64 {
		if r.months == 1 {
			return from
		}
		return from + mod(int64(r.anchor-1)-from, r.months)
	}
	period := r.months * r.n
	var o int64 = 1970 * 12
	if !r.origin.IsZero() {
		o = monthNumber(r.origin.In(r.zone()))
	}
	c := mod(firstEnd(o), period)
	return m + mod(c-m, period)
}

// binFar is Bin for a duration rule and an instant more than 292 years
// from the origin, beyond time.Duration: the same arithmetic in big
// integers of nanoseconds.
func (r Rule) binFar(t time.Time) (time.Time, time.Time) {
	o := r.originMidnight()
	ns := func(x time.Time) *big.Int {
		v := big.NewInt(x.Unix())
		v.Mul(v, big.NewInt(1e9))
		return v.Add(v, big.NewInt(int64(x.Nanosecond())))
	}
	step := big.NewInt(int64(r.tick))
	diff := new(big.Int).Sub(ns(t), ns(o))
	k := new(big.Int).Div(diff, step) // Euclidean: floor for a positive step
	start := new(big.Int).Add(ns(o), k.Mul(k, step))
	sec, nsec := new(big.Int).DivMod(start, big.NewInt(1e9), new(big.Int))
	st := time.Unix(sec.Int64(), nsec.Int64()).In(t.Location())
	return st, st.Add(r.tick)
}

// floorDiv returns floor(a/b), or nil when a is at the limit of
// time.Duration (more than 292 years).
func floorDiv(a, b time.Duration) *int64 {
	if a == time.Duration(1<<63-1) || a == time.Duration(-1<<63) {
		return nil
	}
	k := int64(a / b)
	if a%b != 0 && (a < 0) != (b < 0) {
		k--
	}
	return &k
}

func floorDivInt(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func mod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

// dayNumber is the number of days from 1970-01-01 to t's date (in t's
// location).
func dayNumber(t time.Time) int64 {
	y, m, d := t.Date()
	return daysFromCivil(int64(y), int64(m), int64(d))
}

// daysFromCivil converts a proleptic Gregorian date to days since
// 1970-01-01 (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := floorDivInt(y, 400)
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := floorDivInt(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// monthNumber is year*12 + month-1 of t's date.
func monthNumber(t time.Time) int64 {
	y, m, _ := t.Date()
	return int64(y)*12 + int64(m) - 1
}

// midnight returns the first instant of day number d in loc: its midnight,
// or, in a zone whose clocks skip midnight that day, the instant the day
// begins (pandas' nonexistent='shift_forward').
func midnight(d int64, loc *time.Location) time.Time {
	y, m, dd := civilFromDays(d)
	t := time.Date(int(y), time.Month(m), int(dd), 0, 0, 0, 0, loc)
	if ty, tm, td := t.Date(); int64(ty) != y || int64(tm) != m || int64(td) != dd {
		// Midnight falls in a gap: the day starts when the clocks jump.
		if _, end := t.ZoneBounds(); !end.IsZero() {
			return end
		}
	}
	return t
}

// monthStart is the first instant of month number m in loc.
func monthStart(m int64, loc *time.Location) time.Time {
	y, mo := floorDivInt(m, 12), mod(m, 12)+1
	return midnight(daysFromCivil(y, mo, 1), loc)
}

// ruleJSON is how a Rule crosses a process boundary.
type ruleJSON struct {
	Rule   string    `json:"rule"`
	Zone   string    `json:"zone,omitempty"`
	Origin time.Time `json:"origin,omitzero"`
}

// MarshalJSON writes the rule, its zone name and its origin.
func (r Rule) MarshalJSON() ([]byte, error) {
	j := ruleJSON{Rule: r.text, Origin: r.origin}
	if r.loc != nil {
		j.Zone = r.loc.String()
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *Rule) UnmarshalJSON(b []byte) error {
	var j ruleJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("window: decode rule: %w", err)
	}
	v, err := ParseRule(j.Rule)
	if err != nil {
		return err
	}
	if j.Zone != "" {
		loc, err := time.LoadLocation(j.Zone)
		if err != nil {
			return fmt.Errorf("window: rule %q: time zone %q: %w", j.Rule, j.Zone, err)
		}
		v.loc = loc
	}
	v.origin = j.Origin
	*r = v
	return nil
}
