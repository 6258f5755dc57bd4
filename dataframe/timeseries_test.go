package dataframe_test

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	df "github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/dataframe/dftest"
)

// timeFrame makes n readings at random times between from and to (with a
// gap of a few days and a few null values) in a timestamp column of zone
// tz, split into parts partitions; rows are not sorted.
func timeFrame(t *testing.T, seed uint64, n, parts int, from, to time.Time, tz string) (df.DataFrame, []time.Time, []*float64) {
	r := rand.New(rand.NewPCG(seed, 3))
	typ := &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: tz}
	tb := array.NewTimestampBuilder(memory.DefaultAllocator, typ)
	vb := array.NewFloat64Builder(memory.DefaultAllocator)
	defer tb.Release()
	defer vb.Release()
	span := to.Sub(from)
	gapFrom, gapTo := from.Add(span/3), from.Add(span/3+4*24*time.Hour)
	var ts []time.Time
	var vs []*float64
	for len(ts) < n {
		tm := from.Add(time.Duration(r.Int64N(int64(span))))
		if !tm.Before(gapFrom) && tm.Before(gapTo) {
			continue
		}
		ts = append(ts, tm)
		tb.Append(arrow.Timestamp(tm.UnixNano()))
		if r.IntN(30) == 0 {
			vs = append(vs, nil)
			vb.AppendNull()
			continue
		}
		v := math.Round(r.NormFloat64()*1000) / 16
		vs = append(vs, &v)
		vb.Append(v)
	}
	ta, va := tb.NewArray(), vb.NewArray()
	schema := arrow.NewSchema([]arrow.Field{{Name: "ts", Type: typ, Nullable: true}, {Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{ta, va}, int64(n))
	ta.Release()
	va.Release()
	tbl := array.NewTableFromRecords(schema, []arrow.RecordBatch{rec})
	rec.Release()
	t.Cleanup(tbl.Release)
	return df.FromTable(tbl, parts), ts, vs
}

// bins is a reference binning: the label of a time, and the next label.
type bins struct {
	label func(time.Time) time.Time
	next  func(time.Time) time.Time
}

func TestResample(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skipf("no time zone data: %v", err)
	}
	monthEnd := func(loc *time.Location) bins {
		return bins{
			label: func(tm time.Time) time.Time {
				tm = tm.In(loc)
				return time.Date(tm.Year(), tm.Month()+1, 0, 0, 0, 0, 0, loc)
			},
			next: func(l time.Time) time.Time { return time.Date(l.Year(), l.Month()+2, 0, 0, 0, 0, 0, l.Location()) },
		}
	}
	day := func(loc *time.Location) bins {
		return bins{
			label: func(tm time.Time) time.Time {
				tm = tm.In(loc)
				return time.Date(tm.Year(), tm.Month(), tm.Day(), 0, 0, 0, 0, loc)
			},
			next: func(l time.Time) time.Time {
				return time.Date(l.Year(), l.Month(), l.Day()+1, 0, 0, 0, 0, l.Location())
			},
		}
	}
	hours := func(h int) bins {
		d := time.Duration(h) * time.Hour
		return bins{
			label: func(tm time.Time) time.Time { return tm.UTC().Truncate(d) },
			next:  func(l time.Time) time.Time { return l.Add(d) },
		}
	}
	for _, tc := range []struct {
		name     string
		rule     string
		tz       string
		loc      *time.Location
		from, to time.Time
		n, parts int
		ref      bins
	}{
		{"month ends across a year, UTC", "ME", "UTC", time.UTC,
			time.Date(2023, 11, 3, 0, 0, 0, 0, time.UTC), time.Date(2024, 4, 20, 0, 0, 0, 0, time.UTC), 3000, 5, monthEnd(time.UTC)},
		{"month ends in New York", "ME", "America/New_York", ny,
			time.Date(2023, 12, 20, 0, 0, 0, 0, ny), time.Date(2024, 4, 2, 0, 0, 0, 0, ny), 2000, 3, monthEnd(ny)},
		{"days across daylight saving in New York", "1D", "America/New_York", ny,
			time.Date(2024, 3, 1, 0, 0, 0, 0, ny), time.Date(2024, 3, 20, 0, 0, 0, 0, ny), 2000, 4, day(ny)},
		{"days across the autumn change", "1D", "America/New_York", ny,
			time.Date(2024, 10, 25, 0, 0, 0, 0, ny), time.Date(2024, 11, 12, 0, 0, 0, 0, ny), 1000, 4, day(ny)},
		{"six hours", "6h", "UTC", time.UTC,
			time.Date(2024, 12, 28, 0, 0, 0, 0, time.UTC), time.Date(2025, 1, 9, 0, 0, 0, 0, time.UTC), 1500, 6, hours(6)},
		{"one partition", "1h", "UTC", time.UTC,
			time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 1, 8, 0, 0, 0, 0, time.UTC), 500, 1, hours(1)},
		{"more partitions than rows", "ME", "UTC", time.UTC,
			time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 2, 8, 0, 0, 0, 0, time.UTC), 5, 8, monthEnd(time.UTC)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			frame, ts, vs := timeFrame(t, 9, tc.n, tc.parts, tc.from, tc.to, tc.tz)
			got := frame.Resample(tc.rule, df.ResampleOptions{On: "ts"}).Agg(
				df.Min("v").As("min"), df.Max("v").As("max"), df.Mean("v").As("mean"),
				df.Count("v").As("count"), df.Sum("v").As("sum"))
			if err := got.Err(); err != nil {
				t.Fatal(err)
			}
			// Reference: bins from the first to the last, by hand.
			type acc struct {
				min, max, sum float64
				n             int64
			}
			by := map[time.Time]*acc{}
			first, last := tc.ref.label(ts[0]), tc.ref.label(ts[0])
			for i, tm := range ts {
				l := tc.ref.label(tm)
				if l.Before(first) {
					first = l
				}
				if l.After(last) {
					last = l
				}
				a := by[l]
				if a == nil {
					a = &acc{min: math.Inf(1), max: math.Inf(-1)}
					by[l] = a
				}
				if vs[i] != nil {
					a.min, a.max = min(a.min, *vs[i]), max(a.max, *vs[i])
					a.sum += *vs[i]
					a.n++
				}
			}
			var lab, mn, mx, mean, cnt, sum []any
			for l := first; !l.After(last); l = tc.ref.next(l) {
				lab = append(lab, l)
				a := by[l]
				if a == nil || a.n == 0 {
					mn, mx, mean = append(mn, nil), append(mx, nil), append(mean, nil)
					cnt, sum = append(cnt, 0), append(sum, 0.0)
					continue
				}
				mn, mx, mean = append(mn, a.min), append(mx, a.max), append(mean, a.sum/float64(a.n))
				cnt, sum = append(cnt, a.n), append(sum, a.sum)
			}
			want := dftest.Table(t, dftest.Timestamps("ts", lab...).As(&arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: tc.tz}),
				dftest.Float64s("min", mn...), dftest.Float64s("max", mx...), dftest.Float64s("mean", mean...),
				dftest.Int64s("count", cnt...), dftest.Float64s("sum", sum...))
			dftest.AssertEqual(t, compute(t, got), want)
		})
	}
}

func TestResampleErrors(t *testing.T) {
	frame := df.FromColumns("x", []int64{1, 2}, "s", []string{"a", "b"})
	for _, tc := range []struct {
		name string
		got  df.DataFrame
		want string
	}{
		{"no index", frame.Resample("1h").Mean(), "no index"},
		{"not a time", frame.Resample("1h", df.ResampleOptions{On: "x"}).Mean(), "not a timestamp"},
		{"unknown column", frame.Resample("1h", df.ResampleOptions{On: "nope"}).Mean(), "nope"},
		{"bad rule", frame.Rolling(3).Mean("x"), ""},
		{"bad rolling window", frame.Rolling("3 rows").Mean(), "give an int"},
		{"rolling span without time", frame.Rolling(time.Hour).Mean(), "time column"},
		{"rolling first", frame.Rolling(2).Agg(df.First("x")), "not a rolling aggregate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.got.Err()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one that says %q", err, tc.want)
			}
		})
	}
	ts := df.FromColumns("t", []time.Time{time.Unix(0, 0)}, "v", []float64{1})
	if err := ts.Resample("7 fortnights", df.ResampleOptions{On: "t"}).Mean().Err(); err == nil || !strings.Contains(err.Error(), "7 fortnights") {
		t.Errorf("bad rule: error %v", err)
	}
}

// TestRolling compares rolling windows of rows and of time, over sorted
// data in several partitions, with windows computed by hand.
func TestRolling(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		win   any
		parts int
		minP  int
	}{
		{"3 rows", 3, 4, 0},
		{"50 rows over short partitions", 50, 12, 0},
		{"5 rows min 2", 5, 3, 2},
		{"2 hours", 2 * time.Hour, 5, 0},
		{"1 day over short partitions", 24 * time.Hour, 16, 0},
		{"one partition", 30 * time.Minute, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			frame, _, _ := timeFrame(t, 4, 400, tc.parts,
				time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 3, 12, 0, 0, 0, 0, time.UTC), "UTC")
			sorted, err := frame.SortValues("ts").SetIndex(ctx, newExec(t), "ts", df.IndexOptions{Sorted: true})
			if err != nil {
				t.Fatal(err)
			}
			// The sorted input, for the reference.
			in := compute(t, sorted)
			tcol := column[*array.Timestamp](t, in, "ts")
			vcol := column[*array.Float64](t, in, "v")
			got := sorted.Rolling(tc.win, df.RollingOptions{MinPeriods: tc.minP}).Agg(
				df.Mean("v").As("mean"), df.Sum("v").As("sum"), df.Max("v").As("max"), df.Count("v").As("count"))
			if err := got.Err(); err != nil {
				t.Fatal(err)
			}
			var ts, mean, sum, mx, cnt []any
			for i := range tcol.Len() {
				lo := 0
				minP := tc.minP
				switch w := tc.win.(type) {
				case int:
					lo = max(0, i-w+1)
					if minP == 0 {
						minP = w
					}
				case time.Duration:
					for lo < i && tcol.Value(i)-tcol.Value(lo) >= arrow.Timestamp(w) {
						lo++
					}
					if minP == 0 {
						minP = 1
					}
				}
				var s, m float64
				m = math.Inf(-1)
				var n int64
				for j := lo; j <= i; j++ {
					if vcol.IsValid(j) {
						s += vcol.Value(j)
						m = max(m, vcol.Value(j))
						n++
					}
				}
				ts = append(ts, time.Unix(0, int64(tcol.Value(i))).UTC())
				if int(n) < minP { // as pandas, count too
					mean, sum, mx, cnt = append(mean, nil), append(sum, nil), append(mx, nil), append(cnt, nil)
					continue
				}
				mean, sum, mx, cnt = append(mean, s/float64(n)), append(sum, s), append(mx, m), append(cnt, n)
			}
			want := dftest.Table(t, dftest.Timestamps("ts", ts...).As(&arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}),
				dftest.Float64s("mean", mean...), dftest.Float64s("sum", sum...), dftest.Float64s("max", mx...),
				dftest.Float64s("count", cnt...))
			dftest.AssertEqual(t, compute(t, got), want, dftest.Tolerance(1e-9, 1e-9))
		})
	}
}
