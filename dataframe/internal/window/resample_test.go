package window

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/dftest"
)

var allAggs = []AggSpec{
	{Column: "v", Func: Count, Name: "count"},
	{Column: "v", Func: Sum, Name: "sum"},
	{Column: "v", Func: Mean, Name: "mean"},
	{Column: "v", Func: Min, Name: "min"},
	{Column: "v", Func: Max, Name: "max"},
	{Column: "v", Func: First, Name: "first"},
	{Column: "v", Func: Last, Name: "last"},
	{Column: "v", Func: Std, Name: "std"},
}

func checkedAlloc(t *testing.T) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

// resampleAll runs the whole pipeline on partitions, in order.
func resampleAll(t *testing.T, parts []arrow.RecordBatch, timeCol string, rule Rule, aggs []AggSpec, fill FillRange) arrow.RecordBatch {
	t.Helper()
	ctx := context.Background()
	mem := checkedAlloc(t)
	var states []arrow.RecordBatch
	for _, p := range parts {
		s, err := Resample(ctx, p, timeCol, rule, aggs, mem)
		if err != nil {
			t.Fatalf("Resample: %v", err)
		}
		states = append(states, s)
	}
	merged, err := MergeResample(ctx, states, timeCol, rule, aggs, mem)
	for _, s := range states {
		s.Release()
	}
	if err != nil {
		t.Fatalf("MergeResample: %v", err)
	}
	defer merged.Release()
	out, err := FinalizeResample(ctx, merged, timeCol, rule, aggs, fill, mem)
	if err != nil {
		t.Fatalf("FinalizeResample: %v", err)
	}
	t.Cleanup(out.Release)
	schema, err := ResampleSchema(parts[0].Schema(), timeCol, rule, aggs)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Schema().Equal(schema) {
		t.Fatalf("result schema %s, ResampleSchema %s", out.Schema(), schema)
	}
	return out
}

func TestResampleHourly(t *testing.T) {
	// pandas: s.resample("1h").agg([...]) with bin 02:00 empty.
	rec := dftest.Record(t,
		dftest.Timestamps("t", "2026-01-01T00:10:00Z", "2026-01-01T00:50:00Z", "2026-01-01T01:05:00Z", "2026-01-01T01:06:00Z", "2026-01-01T03:20:00Z"),
		dftest.Int64s("v", 1, 2, 3, nil, 4))
	got := resampleAll(t, []arrow.RecordBatch{rec}, "t", MustParseRule("1h"), allAggs, FillRange{})
	want := dftest.Record(t,
		dftest.Timestamps("t", "2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z", "2026-01-01T02:00:00Z", "2026-01-01T03:00:00Z"),
		dftest.Int64s("count", 2, 1, 0, 1),
		dftest.Int64s("sum", 3, 3, 0, 4),
		dftest.Float64s("mean", 1.5, 3, nil, 4),
		dftest.Int64s("min", 1, 3, nil, 4),
		dftest.Int64s("max", 2, 3, nil, 4),
		dftest.Int64s("first", 1, 3, nil, 4),
		dftest.Int64s("last", 2, 3, nil, 4),
		dftest.Float64s("std", math.Sqrt(0.5), nil, nil, nil))
	dftest.AssertEqual(t, got, want)
}

// osloTS is a timestamp column in nanoseconds, in Europe/Oslo.
var osloTS = &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "Europe/Oslo"}

func TestResampleZones(t *testing.T) {
	times := []any{
		"2026-03-28T23:30:00Z", // 2026-03-29 00:30+01
		"2026-03-29T21:59:00Z", // 2026-03-29 23:59+02
		"2026-03-29T22:00:00Z", // 2026-03-30 00:00+02
		"2026-10-24T22:00:00Z", // 2026-10-25 00:00+02
		"2026-10-25T22:59:00Z", // 2026-10-25 23:59+01
		"2026-10-25T23:00:00Z", // 2026-10-26 00:00+01
		"2026-12-31T22:30:00Z", // 2026-12-31 23:30+01
		"2026-12-31T23:30:00Z", // 2027-01-01 00:30+01
	}
	vals := []any{1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0}
	aggs := []AggSpec{{Column: "v", Func: Sum}, {Column: "v", Func: Count, Name: "n"}}
	tests := []struct {
		name  string
		typ   arrow.DataType
		rule  string
		want  []dftest.Column
		check func(t *testing.T, got arrow.RecordBatch)
	}{
		{"months in Oslo", osloTS, "ME", []dftest.Column{
			dftest.Timestamps("t", "2026-03-31T00:00:00+02:00", "2026-04-30T00:00:00+02:00", "2026-05-31T00:00:00+02:00",
				"2026-06-30T00:00:00+02:00", "2026-07-31T00:00:00+02:00", "2026-08-31T00:00:00+02:00", "2026-09-30T00:00:00+02:00",
				"2026-10-31T00:00:00+01:00", "2026-11-30T00:00:00+01:00", "2026-12-31T00:00:00+01:00", "2027-01-31T00:00:00+01:00").As(osloTS),
			dftest.Float64s("v", 6, 0, 0, 0, 0, 0, 0, 15, 0, 7, 8),
			dftest.Int64s("n", 3, 0, 0, 0, 0, 0, 0, 3, 0, 1, 1)}, nil},
		// The same instants in UTC: 2026-12-31T23:30Z is still December,
		// and 2026-03-28T23:30Z is March too.
		{"months in UTC", dftest.TimestampType, "ME", []dftest.Column{
			dftest.Timestamps("t", "2026-03-31", "2026-04-30", "2026-05-31", "2026-06-30", "2026-07-31", "2026-08-31",
				"2026-09-30", "2026-10-31", "2026-11-30", "2026-12-31"),
			dftest.Float64s("v", 6, 0, 0, 0, 0, 0, 0, 15, 0, 15),
			dftest.Int64s("n", 3, 0, 0, 0, 0, 0, 0, 3, 0, 2)}, nil},
		{"years in Oslo", osloTS, "YE", []dftest.Column{
			dftest.Timestamps("t", "2026-12-31T00:00:00+01:00", "2027-12-31T00:00:00+01:00").As(osloTS),
			dftest.Float64s("v", 28, 8),
			dftest.Int64s("n", 7, 1)}, nil},
		{"quarters in Oslo", osloTS, "QE", []dftest.Column{
			dftest.Timestamps("t", "2026-03-31T00:00:00+02:00", "2026-06-30T00:00:00+02:00", "2026-09-30T00:00:00+02:00",
				"2026-12-31T00:00:00+01:00", "2027-03-31T00:00:00+02:00").As(osloTS),
			dftest.Float64s("v", 6, 0, 0, 22, 8),
			dftest.Int64s("n", 3, 0, 0, 4, 1)}, nil},
		// Days around the changes of clocks: 23 and 25 hours long.
		{"days in Oslo", osloTS, "1D", nil, func(t *testing.T, got arrow.RecordBatch) {
			want := map[string][2]float64{
				"2026-03-29T00:00:00+01:00": {3, 2}, "2026-03-30T00:00:00+02:00": {3, 1},
				"2026-10-25T00:00:00+02:00": {9, 2}, "2026-10-26T00:00:00+01:00": {6, 1},
				"2026-12-31T00:00:00+01:00": {7, 1}, "2027-01-01T00:00:00+01:00": {8, 1},
			}
			// 2026-03-29 to 2027-01-01: 279 days, all present.
			if got.NumRows() != 279 {
				t.Fatalf("%d days, want 279", got.NumRows())
			}
			tcol := got.Column(0)
			sums := got.Column(1)
			found := 0
			for i := range int(got.NumRows()) {
				at := time.Unix(0, tcol.(interface{ Value(int) arrow.Timestamp }).Value(i).ToTime(arrow.Nanosecond).UnixNano())
				if w, ok := want[at.In(mustLoad(t, "Europe/Oslo")).Format(time.RFC3339)]; ok {
					found++
					s := sums.(interface{ Value(int) float64 }).Value(i)
					n := got.Column(2).(interface{ Value(int) int64 }).Value(i)
					if s != w[0] || float64(n) != w[1] {
						t.Errorf("day %s: sum %v n %d, want %v", at, s, n, w)
					}
				}
			}
			if found != len(want) {
				t.Errorf("found %d of the %d days", found, len(want))
			}
		}},
		{"hours in Oslo, spring", osloTS, "1h", nil, func(t *testing.T, got arrow.RecordBatch) {
			// From 2026-03-28T23:00Z to 2026-12-31T23:00Z, every hour.
			wantN := int64(ts(t, "2026-12-31T23:00:00Z").Sub(ts(t, "2026-03-28T23:00:00Z"))/time.Hour) + 1
			if got.NumRows() != wantN {
				t.Errorf("%d hours, want %d", got.NumRows(), wantN)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := dftest.Record(t, dftest.Timestamps("t", times...).As(tt.typ), dftest.Float64s("v", vals...))
			got := resampleAll(t, []arrow.RecordBatch{rec}, "t", MustParseRule(tt.rule), aggs, FillRange{})
			if tt.check != nil {
				tt.check(t, got)
				return
			}
			dftest.AssertEqual(t, got, dftest.Record(t, tt.want...))
		})
	}
}

func TestResampleDates(t *testing.T) {
	rec := dftest.Record(t,
		dftest.Dates("d", "2025-12-28", "2025-12-29", "2026-01-04", "2026-01-05", "2026-01-20"),
		dftest.Int64s("v", 1, 2, 3, 4, 5).As(arrow.PrimitiveTypes.Int32))
	aggs := []AggSpec{{Column: "v", Func: Sum}, {Column: "v", Func: Max, Name: "max"}}
	got := resampleAll(t, []arrow.RecordBatch{rec}, "d", MustParseRule("W"), aggs, FillRange{})
	want := dftest.Record(t,
		dftest.Dates("d", "2025-12-28", "2026-01-04", "2026-01-11", "2026-01-18", "2026-01-25"),
		dftest.Int64s("v", 1, 5, 4, 0, 5),
		dftest.Int64s("max", 1, 3, 4, nil, 5).As(arrow.PrimitiveTypes.Int32))
	dftest.AssertEqual(t, got, want)

	got = resampleAll(t, []arrow.RecordBatch{rec}, "d", MustParseRule("ME"), aggs, FillRange{})
	want = dftest.Record(t, dftest.Dates("d", "2025-12-31", "2026-01-31"), dftest.Int64s("v", 3, 12),
		dftest.Int64s("max", 2, 5).As(arrow.PrimitiveTypes.Int32))
	dftest.AssertEqual(t, got, want)

	if _, err := Resample(context.Background(), rec, "d", MustParseRule("1h"), aggs, memory.DefaultAllocator); !errors.Is(err, ErrBadRule) {
		t.Errorf("hourly bins of dates: %v, want ErrBadRule", err)
	}
}

func TestResampleEdgeCases(t *testing.T) {
	rule := MustParseRule("1D")
	t.Run("all-null values", func(t *testing.T) {
		rec := dftest.Record(t, dftest.Timestamps("t", "2026-01-01T10:00:00Z", "2026-01-03T10:00:00Z"), dftest.Int64s("v", nil, nil))
		got := resampleAll(t, []arrow.RecordBatch{rec}, "t", rule, allAggs, FillRange{})
		want := dftest.Record(t,
			dftest.Timestamps("t", "2026-01-01", "2026-01-02", "2026-01-03"),
			dftest.Int64s("count", 0, 0, 0), dftest.Int64s("sum", 0, 0, 0), dftest.Float64s("mean", nil, nil, nil),
			dftest.Int64s("min", nil, nil, nil), dftest.Int64s("max", nil, nil, nil),
			dftest.Int64s("first", nil, nil, nil), dftest.Int64s("last", nil, nil, nil), dftest.Float64s("std", nil, nil, nil))
		dftest.AssertEqual(t, got, want)
	})
	t.Run("null times and a single row", func(t *testing.T) {
		rec := dftest.Record(t, dftest.Timestamps("t", nil, "2026-01-01T10:00:00Z", nil), dftest.Int64s("v", 9, 5, 7))
		got := resampleAll(t, []arrow.RecordBatch{rec}, "t", rule, allAggs, FillRange{})
		want := dftest.Record(t,
			dftest.Timestamps("t", "2026-01-01"),
			dftest.Int64s("count", 1), dftest.Int64s("sum", 5), dftest.Float64s("mean", 5),
			dftest.Int64s("min", 5), dftest.Int64s("max", 5),
			dftest.Int64s("first", 5), dftest.Int64s("last", 5), dftest.Float64s("std", nil))
		dftest.AssertEqual(t, got, want)
	})
	t.Run("empty partitions and fill range", func(t *testing.T) {
		empty := dftest.Record(t, dftest.Timestamps("t"), dftest.Int64s("v"))
		one := dftest.Record(t, dftest.Timestamps("t", "2026-01-02T10:00:00Z"), dftest.Int64s("v", 5))
		got := resampleAll(t, []arrow.RecordBatch{empty, one, empty}, "t", rule,
			[]AggSpec{{Column: "v", Func: Sum}}, FillRange{From: ts(t, "2026-01-01T23:00:00Z"), To: ts(t, "2026-01-04T00:00:00Z")})
		want := dftest.Record(t, dftest.Timestamps("t", "2026-01-01", "2026-01-02", "2026-01-03", "2026-01-04"), dftest.Int64s("v", 0, 5, 0, 0))
		dftest.AssertEqual(t, got, want)
		got = resampleAll(t, []arrow.RecordBatch{empty}, "t", rule, []AggSpec{{Column: "v", Func: Sum}}, FillRange{})
		dftest.AssertEqual(t, got, dftest.Record(t, dftest.Timestamps("t"), dftest.Int64s("v")))
	})
	t.Run("NaN", func(t *testing.T) {
		rec := dftest.Record(t, dftest.Timestamps("t", "2026-01-01T01:00:00Z", "2026-01-01T02:00:00Z", "2026-01-02T01:00:00Z"),
			dftest.Float64s("v", math.NaN(), 2, math.NaN()))
		got := resampleAll(t, []arrow.RecordBatch{rec}, "t", rule, allAggs, FillRange{})
		// NaN is a value: it propagates through sum, mean and std and loses
		// to numbers in min and max.
		want := dftest.Record(t, dftest.Timestamps("t", "2026-01-01", "2026-01-02"),
			dftest.Int64s("count", 2, 1), dftest.Float64s("sum", math.NaN(), math.NaN()), dftest.Float64s("mean", math.NaN(), math.NaN()),
			dftest.Float64s("min", 2, math.NaN()), dftest.Float64s("max", 2, math.NaN()),
			dftest.Float64s("first", math.NaN(), math.NaN()), dftest.Float64s("last", 2, math.NaN()), dftest.Float64s("std", math.NaN(), nil))
		dftest.AssertEqual(t, got, want)
	})
	t.Run("strings and unsorted rows", func(t *testing.T) {
		rec := dftest.Record(t, dftest.Timestamps("t", "2026-01-02T01:00:00Z", "2026-01-01T02:00:00Z", "2026-01-02T00:00:00Z", "2026-01-01T01:00:00Z"),
			dftest.Strings("s", "pear", "fig", "apple", "kiwi"))
		aggs := []AggSpec{{Column: "s", Func: Min, Name: "min"}, {Column: "s", Func: Max, Name: "max"},
			{Column: "s", Func: First, Name: "first"}, {Column: "s", Func: Last, Name: "last"}, {Column: "s", Func: Count, Name: "n"}}
		got := resampleAll(t, []arrow.RecordBatch{rec}, "t", rule, aggs, FillRange{})
		want := dftest.Record(t, dftest.Timestamps("t", "2026-01-01", "2026-01-02"),
			dftest.Strings("min", "fig", "apple"), dftest.Strings("max", "kiwi", "pear"),
			dftest.Strings("first", "fig", "pear"), dftest.Strings("last", "kiwi", "apple"), dftest.Int64s("n", 2, 2))
		dftest.AssertEqual(t, got, want)
	})
}

func TestResampleErrors(t *testing.T) {
	rec := dftest.Record(t, dftest.Timestamps("t", "2026-01-01T00:00:00Z"), dftest.Strings("s", "x"), dftest.Int64s("v", 1))
	rule := MustParseRule("1h")
	tests := []struct {
		name    string
		time    string
		aggs    []AggSpec
		wantErr error
		msg     string
	}{
		{"unknown time", "nope", nil, ErrBadColumn, `no column "nope"`},
		{"time type", "v", nil, ErrBadColumn, "int64"},
		{"unknown column", "t", []AggSpec{{Column: "w", Func: Sum}}, ErrBadColumn, `sum(w)`},
		{"sum of strings", "t", []AggSpec{{Column: "s", Func: Sum}}, ErrBadColumn, `"s" has type utf8`},
		{"unknown func", "t", []AggSpec{{Column: "v", Func: "median"}}, ErrBadSpec, `"median"`},
		{"duplicate names", "t", []AggSpec{{Column: "v", Func: Sum}, {Column: "v", Func: Max}}, ErrBadSpec, `"v" is used twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Resample(context.Background(), rec, tt.time, rule, tt.aggs, memory.DefaultAllocator)
			if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("err = %v, want %v mentioning %s", err, tt.wantErr, tt.msg)
			}
		})
	}
	// A state made for other aggregates.
	st, err := Resample(context.Background(), rec, "t", rule, []AggSpec{{Column: "v", Func: Sum}}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Release()
	_, err = FinalizeResample(context.Background(), st, "t", rule, []AggSpec{{Column: "v", Func: Std}}, FillRange{}, memory.DefaultAllocator)
	if !errors.Is(err, ErrBadState) {
		t.Errorf("finalize with other aggregates: %v", err)
	}
}

// TestResamplePartitions cuts random rows at random points (some parts
// empty) and checks the merged result against a reference computed row by
// row with the time package, for several rules and zones.
func TestResamplePartitions(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	oslo := mustLoad(t, "Europe/Oslo")
	// label returns the pandas label of t's bin and the bin's index.
	type labeler func(t time.Time) time.Time
	cases := []struct {
		rule  string
		typ   *arrow.TimestampType
		label labeler
	}{
		{"ME", osloTS, func(x time.Time) time.Time {
			x = x.In(oslo)
			return time.Date(x.Year(), x.Month()+1, 0, 0, 0, 0, 0, oslo)
		}},
		{"ME", &arrow.TimestampType{Unit: arrow.Second}, func(x time.Time) time.Time {
			x = x.UTC()
			return time.Date(x.Year(), x.Month()+1, 0, 0, 0, 0, 0, time.UTC)
		}},
		{"1D", osloTS, func(x time.Time) time.Time {
			x = x.In(oslo)
			return time.Date(x.Year(), x.Month(), x.Day(), 0, 0, 0, 0, oslo)
		}},
		{"6h", &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, func(x time.Time) time.Time {
			x = x.UTC()
			return time.Date(x.Year(), x.Month(), x.Day(), x.Hour()/6*6, 0, 0, 0, time.UTC)
		}},
	}
	for _, c := range cases {
		t.Run(c.rule+" "+c.typ.String(), func(t *testing.T) {
			const n = 3000
			start := ts(t, "2025-11-01T00:00:00Z").UnixNano()
			span := ts(t, "2027-02-01T00:00:00Z").UnixNano() - start
			if c.rule == "6h" {
				span /= 20
			}
			times := make([]int64, n)
			for i := range times {
				times[i] = start + r.Int64N(span)
			}
			slicesSort(times)
			tv := make([]any, n)
			vv := make([]any, n)
			type acc struct {
				n         int64
				sum       float64
				min, max  float64
				first     any
				last      any
				hasValues bool
			}
			groups := map[int64]*acc{}
			for i, x := range times {
				at := time.Unix(0, x).Truncate(time.Duration(c.typ.Unit.Multiplier()))
				tv[i] = at
				if r.IntN(10) == 0 {
					vv[i] = nil
				} else {
					vv[i] = float64(r.IntN(1000)) / 8
				}
				lab := c.label(at).UnixNano()
				g := groups[lab]
				if g == nil {
					g = &acc{}
					groups[lab] = g
				}
				if v, ok := vv[i].(float64); ok {
					if !g.hasValues {
						g.min, g.max, g.first = v, v, v
					}
					g.hasValues = true
					g.n++
					g.sum += v
					g.min, g.max, g.last = min(g.min, v), max(g.max, v), v
				}
			}
			rec := dftest.Record(t, dftest.Timestamps("t", tv...).As(c.typ), dftest.Float64s("v", vv...))
			// Cut at random points, empty parts included.
			var parts []arrow.RecordBatch
			lo := int64(0)
			for lo < n {
				hi := min(n, lo+int64(r.IntN(600)))
				p := rec.NewSlice(lo, hi)
				t.Cleanup(p.Release)
				parts = append(parts, p)
				lo = hi
			}
			aggs := []AggSpec{{Column: "v", Func: Count, Name: "n"}, {Column: "v", Func: Sum, Name: "sum"},
				{Column: "v", Func: Min, Name: "min"}, {Column: "v", Func: Max, Name: "max"},
				{Column: "v", Func: First, Name: "first"}, {Column: "v", Func: Last, Name: "last"}}
			got := resampleAll(t, parts, "t", MustParseRule(c.rule), aggs, FillRange{})
			// Expected: every label from the first to the last.
			first, last := c.label(time.Unix(0, times[0])), c.label(time.Unix(0, times[n-1]))
			var lt, nv, sum, mn, mx, fi, la []any
			for l := first; !l.After(last); l = nextLabel(c.rule, l) {
				lt = append(lt, l)
				g := groups[l.UnixNano()]
				if g == nil {
					g = &acc{}
				}
				nv, sum = append(nv, g.n), append(sum, g.sum)
				if g.hasValues {
					mn, mx, fi, la = append(mn, g.min), append(mx, g.max), append(fi, g.first), append(la, g.last)
				} else {
					mn, mx, fi, la = append(mn, nil), append(mx, nil), append(fi, nil), append(la, nil)
				}
			}
			want := dftest.Record(t, dftest.Timestamps("t", lt...).As(c.typ), dftest.Int64s("n", nv...), dftest.Float64s("sum", sum...),
				dftest.Float64s("min", mn...), dftest.Float64s("max", mx...), dftest.Float64s("first", fi...), dftest.Float64s("last", la...))
			dftest.AssertEqual(t, got, want)
		})
	}
}

// nextLabel steps a label (in its location) to the next one of rule.
func nextLabel(rule string, l time.Time) time.Time {
	switch rule {
	case "ME":
		return time.Date(l.Year(), l.Month()+2, 0, 0, 0, 0, 0, l.Location())
	case "1D":
		return time.Date(l.Year(), l.Month(), l.Day()+1, 0, 0, 0, 0, l.Location())
	case "6h":
		return l.Add(6 * time.Hour)
	}
	panic(fmt.Sprint("no rule ", rule))
}

func slicesSort(v []int64) { slices.Sort(v) }
