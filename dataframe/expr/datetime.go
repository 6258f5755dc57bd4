package expr

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// instants is a temporal column split into what the date functions need.
type instants struct {
	date bool    // date32/date64 input: days only
	v    []int64 // raw values (timestamps) or days (dates)
	ups  int64   // units per second of a timestamp
	zone *zoneOffsets
}

func (ev *Evaluator) dt(_ context.Context, n *node, a datum, outT arrow.DataType) (datum, error) {
	if a.isNull() {
		return nullDatum(ev.mem, outT), nil
	}
	t := a.typ()
	rows := a.arr.Len()
	in := instants{}
	switch t.ID() {
	case arrow.DATE32:
		in.date = true
		in.v = asInt64s(a.arr)
	case arrow.DATE64:
		in.date = true
		in.v = make([]int64, rows)
		for i, ms := range values[int64](a.arr) {
			in.v[i] = floorDivInt(ms, 86400000)
		}
	case arrow.TIMESTAMP:
		ts := t.(*arrow.TimestampType)
		in.v = values[int64](a.arr)
		in.ups = unitsPerSecond(ts.Unit)
		loc, err := loadZone(ts.TimeZone)
		if err != nil {
			return datum{}, err
		}
		if loc != time.UTC && rows > 0 {
			mn, mx := minMax(in.v)
			in.zone = newZoneOffsets(loc, floorDivInt(mn, in.ups), floorDivInt(mx, in.ups))
		}
	default:
		return datum{}, fmt.Errorf("internal error: %s on %s", n.op, typeName(t))
	}
	valid, nulls := copyValidity(ev.mem, a.arr)
	switch n.op {
	case opDtTruncate, opDtAddMonths:
		buf, out := allocValues[int64](ev.mem, rows)
		if in.date {
			buf.Release()
			buf32, out32 := allocValues[int32](ev.mem, rows)
			days := make([]int64, rows)
			if n.op == opDtTruncate {
				truncDays(in.v, n.args[1].n.lit, days)
			} else {
				addMonthsDays(in.v, n.args[1].n.lit.i, days)
			}
			for i, d := range days {
				out32[i] = int32(d)
			}
			return datum{arr: newArray(outT, rows, valid, buf32, nulls), bcast: a.bcast}, nil
		}
		if n.op == opDtTruncate {
			in.truncate(n.args[1].n.lit, out)
		} else {
			in.addMonths(n.args[1].n.lit.i, out)
		}
		return datum{arr: newArray(outT, rows, valid, buf, nulls), bcast: a.bcast}, nil
	}
	buf, out := allocValues[int32](ev.mem, rows)
	in.parts(n.op, out)
	return datum{arr: newArray(outT, rows, valid, buf, nulls), bcast: a.bcast}, nil
}

func minMax(v []int64) (int64, int64) {
	mn, mx := int64(math.MaxInt64), int64(math.MinInt64)
	for _, x := range v {
		mn = min(mn, x)
		mx = max(mx, x)
	}
	return mn, mx
}

// partsBlock is the number of rows date parts are computed for at a time,
// through a scratch buffer that stays in the processor's cache.
const partsBlock = 2048

// parts computes a date or time part of every value into out.
func (in *instants) parts(op string, out []int32) {
	n := len(in.v)
	scratch := make([]int64, min(n, partsBlock))
	var tab dayTable
	for lo := 0; lo < n; lo += partsBlock {
		hi := min(lo+partsBlock, n)
		o := out[lo:hi]
		switch op {
		case opDtHour, opDtMinute, opDtSecond:
			if in.date {
				clear(o)
				continue
			}
			sod := in.secondsOfDay(lo, hi, scratch)
			switch op {
			case opDtHour:
				for i, s := range sod {
					o[i] = int32(s / 3600)
				}
			case opDtMinute:
				for i, s := range sod {
					o[i] = int32(s / 60 % 60)
				}
			default:
				for i, s := range sod {
					o[i] = int32(s % 60)
				}
			}
		default:
			days := in.days(lo, hi, scratch)
			tab.parts(op, days, o)
		}
	}
}

// days gives the local calendar day of rows lo to hi, as days since
// 1970-01-01, in scratch (or the values themselves for dates).
func (in *instants) days(lo, hi int, scratch []int64) []int64 {
	if in.date {
		return in.v[lo:hi]
	}
	out := scratch[:hi-lo]
	if in.zone == nil {
		floorDivAll(in.v[lo:hi], in.ups*86400, out)
		return out
	}
	floorDivAll(in.v[lo:hi], in.ups, out)
	for i, s := range out {
		out[i] = floorDivInt(s+in.zone.offset(s), 86400)
	}
	return out
}

// secondsOfDay gives the local second of the day of rows lo to hi.
func (in *instants) secondsOfDay(lo, hi int, scratch []int64) []int64 {
	out := scratch[:hi-lo]
	floorDivAll(in.v[lo:hi], in.ups, out)
	for i, s := range out {
		if in.zone != nil {
			s += in.zone.offset(s)
		}
		r := s % 86400
		if r < 0 {
			r += 86400
		}
		out[i] = r
	}
	return out
}

// dayTable holds a calendar part for a range of days, so that each
// distinct day is converted once. It grows to cover the days it is asked
// for, up to maxDayTable days; days beyond are converted one by one.
type dayTable struct {
	lo  int64
	tab []int32
}

const maxDayTable = 1 << 20 // about 2,900 years

func (t *dayTable) parts(op string, days []int64, out []int32) {
	tab, lo := t.tab, t.lo
	for i, d := range days {
		if k := uint64(d - lo); k < uint64(len(tab)) {
			out[i] = tab[k]
			continue
		}
		// A day beyond the table: extend it to the rest of the block.
		mn, mx := minMax(days[i:])
		if !t.cover(op, mn, mx) {
			out[i] = dayPart(op, d)
			continue
		}
		tab, lo = t.tab, t.lo
		out[i] = tab[d-lo]
	}
}

// cover extends the table to days mn to mx, reporting false if that would
// make it too large.
func (t *dayTable) cover(op string, mn, mx int64) bool {
	if t.tab != nil && mn >= t.lo && mx < t.lo+int64(len(t.tab)) {
		return true
	}
	lo, hi := mn, mx+1
	if t.tab != nil {
		lo, hi = min(lo, t.lo), max(hi, t.lo+int64(len(t.tab)))
	}
	if hi-lo > maxDayTable || hi < lo {
		return false
	}
	// Grow with some slack: data usually spreads a little at a time.
	if t.tab != nil {
		slack := (hi - lo) / 2
		lo, hi = max(lo-slack, math.MinInt64/2), min(hi+slack, math.MaxInt64/2)
		if hi-lo > maxDayTable {
			lo, hi = min(mn, t.lo), max(mx+1, t.lo+int64(len(t.tab)))
		}
	}
	tab := make([]int32, hi-lo)
	for d := lo; d < hi; d++ {
		if t.tab != nil && d >= t.lo && d < t.lo+int64(len(t.tab)) {
			tab[d-lo] = t.tab[d-t.lo]
			continue
		}
		tab[d-lo] = dayPart(op, d)
	}
	t.lo, t.tab = lo, tab
	return true
}

// floorDivAll divides by d rounding down; the common divisors are written
// out as constants so that the compiler replaces division by multiplication.
func floorDivAll(v []int64, d int64, out []int64) {
	out = out[:len(v)]
	switch d {
	case 1:
		copy(out, v)
	case 1000:
		for i, x := range v {
			q := x / 1000
			if x-q*1000 < 0 {
				q--
			}
			out[i] = q
		}
	case 1000000:
		for i, x := range v {
			q := x / 1000000
			if x-q*1000000 < 0 {
				q--
			}
			out[i] = q
		}
	case 1000000000:
		for i, x := range v {
			q := x / 1000000000
			if x-q*1000000000 < 0 {
				q--
			}
			out[i] = q
		}
	case 86400:
		for i, x := range v {
			q := x / 86400
			if x-q*86400 < 0 {
				q--
			}
			out[i] = q
		}
	case 86400000:
		for i, x := range v {
			q := x / 86400000
			if x-q*86400000 < 0 {
				q--
			}
			out[i] = q
		}
	case 86400000000:
		for i, x := range v {
			q := x / 86400000000
			if x-q*86400000000 < 0 {
				q--
			}
			out[i] = q
		}
	case 86400000000000:
		for i, x := range v {
			q := x / 86400000000000
			if x-q*86400000000000 < 0 {
				q--
			}
			out[i] = q
		}
	default:
		for i, x := range v {
			out[i] = floorDivInt(x, d)
		}
	}
}

func dayPart(op string, days int64) int32 {
	switch op {
	case opDtWeekday:
		return int32(floorMod(days+3, 7)) // 1970-01-01 was a Thursday
	case opDtDate:
		return int32(days)
	}
	y, m, d := civilFromDays(days)
	switch op {
	case opDtYear:
		return int32(y)
	case opDtMonth:
		return int32(m)
	case opDtDay:
		return int32(d)
	case opDtDayOfYear:
		return int32(days - daysFromCivil(y, 1, 1) + 1)
	}
	return 0
}

func floorMod(a, b int64) int64 {
	r := a % b
	if r != 0 && (r < 0) != (b < 0) {
		r += b
	}
	return r
}

// truncDay truncates a day number to the start of its week, month, quarter
// or year; other units leave it alone.
func truncDay(days int64, unit string) int64 {
	switch unit {
	case "week":
		return days - floorMod(days+3, 7)
	case "month", "quarter", "year":
		y, m, _ := civilFromDays(days)
		switch unit {
		case "quarter":
			m = (m-1)/3*3 + 1
		case "year":
			m = 1
		}
		return daysFromCivil(y, m, 1)
	}
	return days
}

func truncDays(in []int64, unit scalar, out []int64) {
	if unit.kind == litDuration {
		dd := unit.i / int64(24*time.Hour)
		for i, d := range in {
			out[i] = d - floorMod(d, max(dd, 1))
		}
		return
	}
	for i, d := range in {
		out[i] = truncDay(d, unit.s)
	}
}

// truncate rounds timestamps down on the wall clock of their zone.
func (in *instants) truncate(unit scalar, out []int64) {
	ups := in.ups
	if unit.kind == litString && unit.s == "second" {
		for i, v := range in.v {
			out[i] = v - floorMod(v, ups)
		}
		return
	}
	if unit.kind == litDuration && unit.i%int64(time.Second) != 0 {
		// Sub-second periods never cross a change of offset.
		du := unit.i / int64(time.Second/time.Duration(ups))
		for i, v := range in.v {
			var off int64
			if in.zone != nil {
				off = in.zone.offset(floorDivInt(v, ups)) * ups
			}
			w := v + off
			out[i] = w - floorMod(w, du) - off
		}
		return
	}
	secs := make([]int64, min(len(in.v), partsBlock))
	for lo := 0; lo < len(in.v); lo += partsBlock {
		hi := min(lo+partsBlock, len(in.v))
		floorDivAll(in.v[lo:hi], ups, secs[:hi-lo])
		in.truncateBlock(unit, secs[:hi-lo], out[lo:hi])
	}
}

func (in *instants) truncateBlock(unit scalar, secs, out []int64) {
	ups := in.ups
	for i, sec := range secs {
		var off int64
		if in.zone != nil {
			off = in.zone.offset(sec)
		}
		wall := sec + off
		var w2 int64
		switch {
		case unit.kind == litDuration:
			ds := unit.i / int64(time.Second)
			w2 = wall - floorMod(wall, ds)
		case unit.s == "minute":
			w2 = wall - floorMod(wall, 60)
		case unit.s == "hour":
			w2 = wall - floorMod(wall, 3600)
		default: // day and longer
			w2 = truncDay(floorDivInt(wall, 86400), unit.s) * 86400
		}
		if in.zone != nil {
			w2 = in.zone.toUTC(w2, off)
		}
		out[i] = w2 * ups
	}
}

// addMonthsDay adds n months to a day, clamping the day of the month.
func addMonthsDay(days, n int64) int64 {
	y, m, d := civilFromDays(days)
	m += n - 1
	y += floorDivInt(m, 12)
	m = floorMod(m, 12) + 1
	if last := daysInMonth(y, m); d > last {
		d = last
	}
	return daysFromCivil(y, m, d)
}

func daysInMonth(y, m int64) int64 {
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

func addMonthsDays(in []int64, n int64, out []int64) {
	for i, d := range in {
		out[i] = addMonthsDay(d, n)
	}
}

// addMonths adds calendar months on the wall clock, keeping the time of day.
func (in *instants) addMonths(n int64, out []int64) {
	ups := in.ups
	for i, v := range in.v {
		sec := floorDivInt(v, ups)
		sub := v - sec*ups
		var off int64
		if in.zone != nil {
			off = in.zone.offset(sec)
		}
		wall := sec + off
		days := floorDivInt(wall, 86400)
		sod := wall - days*86400
		w2 := addMonthsDay(days, n)*86400 + sod
		if in.zone != nil {
			w2 = in.zone.toUTC(w2, off)
		}
		out[i] = w2*ups + sub
	}
}
