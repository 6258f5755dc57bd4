package expr

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

func mustZone(t testing.TB, name string) *time.Location {
	loc, err := loadZone(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestDateTimeParts(t *testing.T) {
	ny := mustZone(t, "America/New_York")
	tm := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cols := func() []column {
		return []column{
			// 2024-03-10 07:30Z is 03:30 EDT, just after spring forward;
			// 05:30Z and 06:30Z on 2024-11-03 are both 01:30 in New York.
			col("ny", times(arrow.Microsecond, "America/New_York", tm("2024-03-10T07:30:00Z"), tm("2024-11-03T05:30:00Z"), tm("2024-11-03T06:30:00Z"), nil, tm("1969-12-31T23:59:59.5Z"))),
			col("utc", times(arrow.Nanosecond, "", tm("2024-03-10T07:30:00Z"), tm("2024-11-03T05:30:00Z"), tm("2024-11-03T06:30:00Z"), nil, tm("1969-12-31T23:59:59.5Z"))),
			col("d", dates(Date{2024, 2, 29}, Date{1969, 12, 31}, Date{2000, 1, 1}, nil, Date{2024, 12, 31})),
		}
	}
	at := func(s string) time.Time { return tm(s) }
	runEvalCases(t, []evalCase{
		{"year ny", cols, Col("ny").Dt().Year(), vals(int64(2024), int64(2024), int64(2024), nil, int64(1969)), "int32"},
		{"hour ny", cols, Col("ny").Dt().Hour(), vals(int64(3), int64(1), int64(1), nil, int64(18)), "int32"},
		{"hour utc", cols, Col("utc").Dt().Hour(), vals(int64(7), int64(5), int64(6), nil, int64(23)), "int32"},
		{"minute", cols, Col("ny").Dt().Minute(), vals(int64(30), int64(30), int64(30), nil, int64(59)), "int32"},
		{"second", cols, Col("utc").Dt().Second(), vals(int64(0), int64(0), int64(0), nil, int64(59)), "int32"},
		{"day", cols, Col("utc").Dt().Day(), vals(int64(10), int64(3), int64(3), nil, int64(31)), "int32"},
		{"weekday", cols, Col("ny").Dt().Weekday(), vals(int64(6), int64(6), int64(6), nil, int64(2)), "int32"},
		{"day of year", cols, Col("d").Dt().DayOfYear(), vals(int64(60), int64(365), int64(1), nil, int64(366)), "int32"},
		{"month of date", cols, Col("d").Dt().Month(), vals(int64(2), int64(12), int64(1), nil, int64(12)), "int32"},
		{"hour of date", cols, Col("d").Dt().Hour(), vals(int64(0), int64(0), int64(0), nil, int64(0)), "int32"},
		{"date ny", cols, Col("ny").Dt().Date(), vals(Date{2024, 3, 10}, Date{2024, 11, 3}, Date{2024, 11, 3}, nil, Date{1969, 12, 31}), "date32"},
		{"truncate day ny", cols, Col("ny").Dt().Truncate("day"),
			vals(at("2024-03-10T05:00:00Z"), at("2024-11-03T04:00:00Z"), at("2024-11-03T04:00:00Z"), nil, at("1969-12-31T05:00:00Z")), "timestamp[us, America/New_York]"},
		{"truncate hour ny keeps side of fall back", cols, Col("ny").Dt().Truncate("hour"),
			vals(at("2024-03-10T07:00:00Z"), at("2024-11-03T05:00:00Z"), at("2024-11-03T06:00:00Z"), nil, at("1969-12-31T23:00:00Z")), "timestamp[us, America/New_York]"},
		{"truncate month", cols, Col("utc").Dt().Truncate("month"),
			vals(at("2024-03-01T00:00:00Z"), at("2024-11-01T00:00:00Z"), at("2024-11-01T00:00:00Z"), nil, at("1969-12-01T00:00:00Z")), "timestamp[ns]"},
		{"truncate 15 minutes", cols, Col("utc").Dt().Truncate(15 * time.Minute),
			vals(at("2024-03-10T07:30:00Z"), at("2024-11-03T05:30:00Z"), at("2024-11-03T06:30:00Z"), nil, at("1969-12-31T23:45:00Z")), "timestamp[ns]"},
		{"truncate second", cols, Col("utc").Dt().Truncate("second"),
			vals(at("2024-03-10T07:30:00Z"), at("2024-11-03T05:30:00Z"), at("2024-11-03T06:30:00Z"), nil, at("1969-12-31T23:59:59Z")), "timestamp[ns]"},
		{"truncate week of date", cols, Col("d").Dt().Truncate("week"), vals(Date{2024, 2, 26}, Date{1969, 12, 29}, Date{1999, 12, 27}, nil, Date{2024, 12, 30}), "date32"},
		{"truncate quarter of date", cols, Col("d").Dt().Truncate("quarter"), vals(Date{2024, 1, 1}, Date{1969, 10, 1}, Date{2000, 1, 1}, nil, Date{2024, 10, 1}), "date32"},
		{"truncate 7 days of date", cols, Col("d").Dt().Truncate(7 * 24 * time.Hour), vals(Date{2024, 2, 29}, Date{1969, 12, 25}, Date{1999, 12, 30}, nil, Date{2024, 12, 26}), "date32"},
		{"add months date", cols, Col("d").Dt().AddMonths(12), vals(Date{2025, 2, 28}, Date{1970, 12, 31}, Date{2001, 1, 1}, nil, Date{2025, 12, 31}), "date32"},
		{"add months ny keeps wall time", cols, Col("ny").Dt().AddMonths(-1),
			vals(at("2024-02-10T08:30:00Z"), at("2024-10-03T05:30:00Z"), at("2024-10-03T05:30:00Z"), nil, at("1969-11-30T23:59:59.5Z")), "timestamp[us, America/New_York]"},
	})
	_ = ny
}

// TestTruncateInGap checks a truncation landing on a wall time that does not
// exist: midnight of 2018-11-04 in São Paulo, when clocks jumped to 01:00.
func TestTruncateInGap(t *testing.T) {
	v := time.Date(2018, 11, 4, 15, 0, 0, 0, time.UTC) // 13:00 -02
	rec := record(col("t", times(arrow.Second, "America/Sao_Paulo", v)))
	defer rec.Release()
	got, _ := evalOne(t, rec, Col("t").Dt().Truncate("day"))
	want := time.Date(2018, 11, 4, 3, 0, 0, 0, time.UTC) // 01:00 -02
	if !got[0].(time.Time).Equal(want) {
		t.Errorf("truncate day = %v, want %v", got[0], want)
	}
}

// TestDateTimeRandom compares parts, truncation and month arithmetic with the
// time package over random instants in several zones and units.
func TestDateTimeRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	zones := []string{"", "UTC", "America/New_York", "Europe/Paris", "Asia/Kolkata", "Australia/Lord_Howe", "America/Sao_Paulo", "Pacific/Chatham", "+05:30", "-03:00"}
	units := []arrow.TimeUnit{arrow.Second, arrow.Millisecond, arrow.Microsecond, arrow.Nanosecond}
	lo := time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	hi := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	for _, zone := range zones {
		loc := mustZone(t, zone)
		for _, unit := range units {
			n := 300
			in := make([]any, n)
			for i := range in {
				sec := lo + rng.Int64N(hi-lo)
				if i%3 == 0 { // clustered around now, where DST rules matter
					sec = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Unix() + rng.Int64N(366*86400)
				}
				ns := rng.Int64N(1e9) / int64(unit.Multiplier()) * int64(unit.Multiplier())
				in[i] = time.Unix(sec, ns)
			}
			rec := record(col("t", times(unit, zone, in...)))
			ref := func(f func(time.Time) any) []any {
				out := make([]any, n)
				for i, v := range in {
					out[i] = f(v.(time.Time).In(loc))
				}
				return out
			}
			// wall converts a wall clock time back to an instant as the
			// kernels should: the instant showing that wall time, with the
			// offset of orig when two do; the transition instant when the
			// wall time was skipped.
			wall := func(orig time.Time, y int, m time.Month, d, h, mi, s, ns int) any {
				return wallInstant(loc, orig, time.Date(y, m, d, h, mi, s, ns, time.UTC))
			}
			checks := []struct {
				e    Expr
				want []any
			}{
				{Col("t").Dt().Year(), ref(func(v time.Time) any { return int64(v.Year()) })},
				{Col("t").Dt().Month(), ref(func(v time.Time) any { return int64(v.Month()) })},
				{Col("t").Dt().Day(), ref(func(v time.Time) any { return int64(v.Day()) })},
				{Col("t").Dt().Hour(), ref(func(v time.Time) any { return int64(v.Hour()) })},
				{Col("t").Dt().Minute(), ref(func(v time.Time) any { return int64(v.Minute()) })},
				{Col("t").Dt().Second(), ref(func(v time.Time) any { return int64(v.Second()) })},
				{Col("t").Dt().Weekday(), ref(func(v time.Time) any { return int64((v.Weekday() + 6) % 7) })},
				{Col("t").Dt().DayOfYear(), ref(func(v time.Time) any { return int64(v.YearDay()) })},
				{Col("t").Dt().Date(), ref(func(v time.Time) any { return DateOf(v) })},
				{Col("t").Dt().Truncate("year"), ref(func(v time.Time) any { return wall(v, v.Year(), 1, 1, 0, 0, 0, 0) })},
				{Col("t").Dt().Truncate("quarter"), ref(func(v time.Time) any { return wall(v, v.Year(), (v.Month()-1)/3*3+1, 1, 0, 0, 0, 0) })},
				{Col("t").Dt().Truncate("month"), ref(func(v time.Time) any { return wall(v, v.Year(), v.Month(), 1, 0, 0, 0, 0) })},
				{Col("t").Dt().Truncate("week"), ref(func(v time.Time) any {
					return wall(v, v.Year(), v.Month(), v.Day()-int(v.Weekday()+6)%7, 0, 0, 0, 0)
				})},
				{Col("t").Dt().Truncate("day"), ref(func(v time.Time) any { return wall(v, v.Year(), v.Month(), v.Day(), 0, 0, 0, 0) })},
				{Col("t").Dt().Truncate("hour"), ref(func(v time.Time) any { return wall(v, v.Year(), v.Month(), v.Day(), v.Hour(), 0, 0, 0) })},
				{Col("t").Dt().Truncate("minute"), ref(func(v time.Time) any {
					return wall(v, v.Year(), v.Month(), v.Day(), v.Hour(), v.Minute(), 0, 0)
				})},
				{Col("t").Dt().Truncate("second"), ref(func(v time.Time) any { return v.Truncate(time.Second).UTC() })},
				{Col("t").Dt().AddMonths(13), ref(func(v time.Time) any {
					y, m := v.Year(), v.Month()+13
					first := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
					d := min(v.Day(), int(daysInMonth(int64(first.Year()), int64(first.Month()))))
					return wall(v, first.Year(), first.Month(), d, v.Hour(), v.Minute(), v.Second(), v.Nanosecond())
				})},
			}
			for _, c := range checks {
				got, _ := evalOne(t, rec, c.e)
				for i := range got {
					if !sameValues(got[i:i+1], c.want[i:i+1]) {
						t.Errorf("%s in %q (%s) of %s: got %v, want %v", c.e, zone, unit, in[i].(time.Time).In(loc), got[i], c.want[i])
						break
					}
				}
			}
			rec.Release()
		}
	}
}

func ExampleDtExpr_Truncate() {
	fmt.Println(Col("ts").Dt().Truncate("month"))
	fmt.Println(Col("ts").Dt().Truncate(15 * time.Minute))
	// Output:
	// col("ts").dt.truncate("month")
	// col("ts").dt.truncate(duration("15m0s"))
}

// asWall is the wall clock of t as a UTC time, for comparing wall times.
func asWall(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

// wallInstant finds the instant at which the clock of loc shows target
// (given as a UTC time), preferring the offset of orig.
func wallInstant(loc *time.Location, orig, target time.Time) time.Time {
	_, origOff := orig.Zone()
	offs := []int{origOff}
	for _, probe := range []time.Duration{0, -14 * time.Hour, 14 * time.Hour} {
		_, o := target.Add(probe).In(loc).Zone()
		offs = append(offs, o)
		_, o = target.Add(probe - time.Duration(origOff)*time.Second).In(loc).Zone()
		offs = append(offs, o)
	}
	for _, o := range offs {
		c := target.Add(-time.Duration(o) * time.Second)
		if asWall(c.In(loc)).Equal(target) {
			return c.UTC()
		}
	}
	// Skipped: find the transition after which the clock shows later times.
	p := target.Add(-26 * time.Hour)
	for range 100 {
		_, e := p.In(loc).ZoneBounds()
		if e.IsZero() {
			break
		}
		if asWall(e.In(loc)).After(target) && asWall(e.Add(-time.Nanosecond).In(loc)).Before(target) {
			return e.UTC()
		}
		if !e.After(p) {
			p = p.Add(24 * time.Hour)
			continue
		}
		p = e
	}
	panic("no instant for " + target.String())
}

func TestTruncateDurations(t *testing.T) {
	v := time.Date(2024, 3, 31, 0, 59, 59, 987_000_000, time.UTC) // 01:59:59.987 CET, just before the change to CEST
	cols := func() []column {
		return []column{
			col("ms", times(arrow.Millisecond, "Europe/Paris", v, nil)),
			col("fixed", times(arrow.Second, "+05:30", v, nil)),
		}
	}
	runEvalCases(t, []evalCase{
		{"250ms", cols, Col("ms").Dt().Truncate(250 * time.Millisecond), vals(v.Add(-237*time.Millisecond), nil), "timestamp[ms, Europe/Paris]"},
		{"2h on the wall clock", cols, Col("ms").Dt().Truncate(2 * time.Hour), vals(time.Date(2024, 3, 30, 23, 0, 0, 0, time.UTC), nil), "timestamp[ms, Europe/Paris]"},
		{"day in a fixed zone", cols, Col("fixed").Dt().Truncate("day"), vals(time.Date(2024, 3, 30, 18, 30, 0, 0, time.UTC), nil), "timestamp[s, +05:30]"},
		{"hour in a fixed zone", cols, Col("fixed").Dt().Hour(), vals(int64(6), nil), "int32"},
	})
	if got, want := Lit(v.In(time.FixedZone("IST", 5*3600+1800))).String(), `timestamp("2024-03-31T06:29:59.987+05:30", "+05:30")`; got != want {
		t.Errorf("literal in a fixed zone: %s, want %s", got, want)
	}
}
