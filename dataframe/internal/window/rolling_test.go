package window

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/dftest"
)

var rollAggs = []AggSpec{
	{Column: "v", Func: Sum, Name: "sum"}, {Column: "v", Func: Mean, Name: "mean"},
	{Column: "v", Func: Min, Name: "min"}, {Column: "v", Func: Max, Name: "max"},
	{Column: "v", Func: Std, Name: "std"}, {Column: "v", Func: Count, Name: "count"},
}

func rolling(t *testing.T, rec arrow.RecordBatch, spec RollingSpec, before arrow.RecordBatch) arrow.RecordBatch {
	t.Helper()
	out, err := Rolling(context.Background(), rec, spec, before, checkedAlloc(t))
	if err != nil {
		t.Fatalf("Rolling: %v", err)
	}
	t.Cleanup(out.Release)
	return out
}

func TestRollingRows(t *testing.T) {
	rec := dftest.Record(t, dftest.Int64s("v", 1, 2, nil, 4, 5, 6))
	// pandas: s.rolling(3).agg(...): a full window of non-null values.
	got := rolling(t, rec, RollingSpec{Window: Window{Rows: 3}, Aggs: rollAggs}, nil)
	want := dftest.Record(t,
		dftest.Float64s("sum", nil, nil, nil, nil, nil, 15), dftest.Float64s("mean", nil, nil, nil, nil, nil, 5),
		dftest.Float64s("min", nil, nil, nil, nil, nil, 4), dftest.Float64s("max", nil, nil, nil, nil, nil, 6),
		dftest.Float64s("std", nil, nil, nil, nil, nil, 1), dftest.Float64s("count", nil, nil, nil, nil, nil, 3))
	dftest.AssertEqual(t, got, want)
	// s.rolling(3, min_periods=2)
	got = rolling(t, rec, RollingSpec{Window: Window{Rows: 3, MinPeriods: 2}, Aggs: rollAggs}, nil)
	want = dftest.Record(t,
		dftest.Float64s("sum", nil, 3, 3, 6, 9, 15), dftest.Float64s("mean", nil, 1.5, 1.5, 3, 4.5, 5),
		dftest.Float64s("min", nil, 1, 1, 2, 4, 4), dftest.Float64s("max", nil, 2, 2, 4, 5, 6),
		dftest.Float64s("std", nil, math.Sqrt(0.5), math.Sqrt(0.5), math.Sqrt2, math.Sqrt(0.5), 1),
		dftest.Float64s("count", nil, 2, 2, 2, 2, 3))
	dftest.AssertEqual(t, got, want)
}

func TestRollingSpan(t *testing.T) {
	rec := dftest.Record(t,
		dftest.Timestamps("t", "2026-03-29T00:00:00Z", "2026-03-29T00:30:00Z", "2026-03-29T01:59:00Z",
			"2026-03-29T02:00:00Z", "2026-03-29T02:00:00Z", "2026-03-29T05:00:00Z"),
		dftest.Float64s("v", 1, 2, 3, 4, 5, 6))
	// pandas: s.rolling("2h"): windows (t-2h, t], up to the row itself
	// among equal times.
	got := rolling(t, rec, RollingSpec{Time: "t", Window: Window{Span: 2 * time.Hour}, Aggs: rollAggs}, nil)
	want := dftest.Record(t, dftest.Timestamps("t", "2026-03-29T00:00:00Z", "2026-03-29T00:30:00Z", "2026-03-29T01:59:00Z",
		"2026-03-29T02:00:00Z", "2026-03-29T02:00:00Z", "2026-03-29T05:00:00Z"),
		dftest.Float64s("sum", 1, 3, 6, 9, 14, 6), dftest.Float64s("mean", 1, 1.5, 2, 3, 3.5, 6),
		dftest.Float64s("min", 1, 1, 1, 2, 2, 6), dftest.Float64s("max", 1, 2, 3, 4, 5, 6),
		dftest.Float64s("std", nil, math.Sqrt(0.5), 1, 1, math.Sqrt(5.0/3), nil),
		dftest.Float64s("count", 1, 2, 3, 3, 4, 1))
	dftest.AssertEqual(t, got, want)

	// Equal values: std is exactly 0. NaN propagates through sum, mean
	// and std and loses to numbers in min and max.
	rec = dftest.Record(t, dftest.Float64s("v", 0.1, 0.1, 0.1, math.NaN(), 7, math.Inf(1), math.Inf(-1)))
	got = rolling(t, rec, RollingSpec{Window: Window{Rows: 2, MinPeriods: 1}, Aggs: rollAggs}, nil)
	nan, inf := math.NaN(), math.Inf(1)
	want = dftest.Record(t,
		dftest.Float64s("sum", 0.1, 0.2, 0.2, nan, nan, inf, nan), dftest.Float64s("mean", 0.1, 0.1, 0.1, nan, nan, inf, nan),
		dftest.Float64s("min", 0.1, 0.1, 0.1, 0.1, 7, 7, -inf), dftest.Float64s("max", 0.1, 0.1, 0.1, 0.1, 7, inf, inf),
		dftest.Float64s("std", nil, 0, 0, nan, nan, nan, nan), dftest.Float64s("count", 1, 2, 2, 2, 2, 2, 2))
	dftest.AssertEqual(t, got, want)
}

func TestRollingErrors(t *testing.T) {
	rec := dftest.Record(t, dftest.Timestamps("t", "2026-01-01T02:00:00Z", "2026-01-01T01:00:00Z"),
		dftest.Strings("s", "a", "b"), dftest.Int64s("v", 1, 2))
	nullT := dftest.Record(t, dftest.Timestamps("t", "2026-01-01T02:00:00Z", nil), dftest.Int64s("v", 1, 2))
	sum := []AggSpec{{Column: "v", Func: Sum}}
	tests := []struct {
		name    string
		rec     arrow.RecordBatch
		spec    RollingSpec
		wantErr error
		msg     string
	}{
		{"unsorted", rec, RollingSpec{Time: "t", Window: Window{Span: time.Hour}, Aggs: sum}, ErrUnsorted, "row 1 (2026-01-01 01:00:00 +0000 UTC) comes after row 0"},
		{"null time", nullT, RollingSpec{Time: "t", Window: Window{Span: time.Hour}, Aggs: sum}, ErrUnsorted, "row 1 has a null time"},
		{"span without time", rec, RollingSpec{Window: Window{Span: time.Hour}, Aggs: sum}, ErrBadSpec, "needs a time column"},
		{"rows and span", rec, RollingSpec{Window: Window{Rows: 2, Span: time.Hour}, Aggs: sum}, ErrBadSpec, "exactly one"},
		{"no window", rec, RollingSpec{Aggs: sum}, ErrBadSpec, "exactly one"},
		{"min periods", rec, RollingSpec{Window: Window{Rows: 2, MinPeriods: 3}, Aggs: sum}, ErrBadSpec, "min periods 3"},
		{"string", rec, RollingSpec{Window: Window{Rows: 2}, Aggs: []AggSpec{{Column: "s", Func: Mean}}}, ErrBadColumn, `"s" has type utf8`},
		{"func", rec, RollingSpec{Window: Window{Rows: 2}, Aggs: []AggSpec{{Column: "v", Func: First}}}, ErrBadSpec, `"first"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Rolling(context.Background(), tt.rec, tt.spec, nil, memory.DefaultAllocator)
			if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("err = %v, want %v mentioning %q", err, tt.wantErr, tt.msg)
			}
		})
	}
}

// naiveRolling computes each window from scratch (the reference).
func naiveRolling(times []int64, vals []any, w Window, unit int64, f Func) []any {
	out := make([]any, len(vals))
	minp := w.minPeriods()
	for i := range vals {
		var win []float64
		for j := 0; j <= i; j++ {
			in := w.Rows > 0 && j > i-w.Rows
			if w.Span > 0 {
				in = (times[i]-times[j])*unit < int64(w.Span)
			}
			if in && vals[j] != nil {
				win = append(win, vals[j].(float64))
			}
		}
		if len(win) < minp || len(win) == 0 {
			continue
		}
		var s float64
		hasNaN := false
		mn, mx := math.Inf(1), math.Inf(-1)
		for _, x := range win {
			s += x
			if x != x {
				hasNaN = true
				continue
			}
			mn, mx = min(mn, x), max(mx, x)
		}
		switch f {
		case Sum:
			out[i] = s
		case Mean:
			out[i] = s / float64(len(win))
		case Count:
			out[i] = float64(len(win))
		case Min, Max:
			v := mn
			if f == Max {
				v = mx
			}
			if math.IsInf(v, 0) && (hasNaN && (mn > mx)) {
				v = math.NaN()
			}
			out[i] = v
		case Std:
			if len(win) < 2 {
				continue
			}
			m := s / float64(len(win))
			var ss float64
			for _, x := range win {
				ss += (x - m) * (x - m)
			}
			out[i] = math.Sqrt(ss / float64(len(win)-1))
		}
	}
	return out
}

// TestRollingPartitions checks Rolling against the reference on random
// data, then cuts the data at random points (empty and one-row parts
// included) and checks that Rolling of each part with the edge rows of
// the parts before gives the same rows.
func TestRollingPartitions(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	ctx := context.Background()
	windows := []Window{{Rows: 1}, {Rows: 5}, {Rows: 30, MinPeriods: 3}, {Span: 90 * time.Second}, {Span: 20 * time.Minute, MinPeriods: 4}}
	for _, w := range windows {
		for _, withNaN := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/nan=%v", w, withNaN), func(t *testing.T) {
				mem := checkedAlloc(t)
				const n = 1500
				times := make([]int64, n)
				tv, vv := make([]any, n), make([]any, n)
				cur := ts(t, "2026-10-25T00:00:00Z").Unix()
				for i := range n {
					cur += int64(r.IntN(4)) * int64(r.IntN(40)) // ties and gaps
					times[i] = cur
					tv[i] = time.Unix(cur, 0)
					switch k := r.IntN(20); {
					case k == 0:
						vv[i] = nil
					case k == 1 && withNaN:
						vv[i] = math.NaN()
					case k < 6:
						vv[i] = 3.0 // runs of equal values
					default:
						vv[i] = r.NormFloat64()*10 + 100
					}
				}
				sec := &arrow.TimestampType{Unit: arrow.Second, TimeZone: "Europe/Oslo"}
				rec := dftest.Record(t, dftest.Timestamps("t", tv...).As(sec), dftest.Float64s("v", vv...), dftest.Strings("other", make([]any, n)...))
				spec := RollingSpec{Time: "t", Window: w, Aggs: rollAggs}
				whole := rolling(t, rec, spec, nil)
				cols := []dftest.Column{dftest.Timestamps("t", tv...).As(sec)}
				for _, a := range rollAggs {
					cols = append(cols, dftest.Float64s(a.name(), naiveRolling(times, vv, w, 1e9, a.Func)...))
				}
				tol := dftest.Tolerance(1e-9, 1e-7)
				dftest.AssertEqual(t, whole, dftest.Record(t, cols...), tol)

				var outs []arrow.RecordBatch
				var edge arrow.RecordBatch
				lo := int64(0)
				for lo < n {
					hi := min(n, lo+int64(r.IntN(60)))
					part := rec.NewSlice(lo, hi)
					out, err := Rolling(ctx, part, spec, edge, mem)
					if err != nil {
						t.Fatal(err)
					}
					outs = append(outs, out)
					next, err := EdgeRows(ctx, edge, part, spec, mem)
					if err != nil {
						t.Fatal(err)
					}
					if edge != nil {
						edge.Release()
					}
					edge = next
					part.Release()
					lo = hi
				}
				edge.Release()
				dftest.AssertEqual(t, outs, whole, tol)
				for _, o := range outs {
					o.Release()
				}
			})
		}
	}
}

func TestEdgeRows(t *testing.T) {
	ctx := context.Background()
	rec := dftest.Record(t, dftest.Int64s("v", 1, 2, 3), dftest.Strings("s", "a", "b", "c"))
	spec := RollingSpec{Window: Window{Rows: 3}, Aggs: []AggSpec{{Column: "v", Func: Sum}}}
	e1, err := EdgeRows(ctx, nil, rec, spec, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	defer e1.Release()
	dftest.AssertEqual(t, e1, dftest.Record(t, dftest.Int64s("v", 2, 3)))
	// An empty partition passes its edge on; a one-row one shifts it.
	empty := dftest.Record(t, dftest.Int64s("v"), dftest.Strings("s"))
	e2, err := EdgeRows(ctx, e1, empty, spec, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Release()
	dftest.AssertEqual(t, e2, dftest.Record(t, dftest.Int64s("v", 2, 3)))
	one := dftest.Record(t, dftest.Int64s("v", 4), dftest.Strings("s", "d"))
	e3, err := EdgeRows(ctx, e2, one, spec, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	defer e3.Release()
	dftest.AssertEqual(t, e3, dftest.Record(t, dftest.Int64s("v", 3, 4)))
	got := rolling(t, one, spec, e2)
	dftest.AssertEqual(t, got, dftest.Record(t, dftest.Float64s("v", 9)))
	// Edge rows must carry the columns Rolling reads.
	bad := dftest.Record(t, dftest.Strings("v", "x"))
	if _, err := Rolling(ctx, one, spec, bad, memory.DefaultAllocator); !errors.Is(err, ErrBadColumn) {
		t.Errorf("edge rows of another type: %v", err)
	}
}

func TestCancelled(t *testing.T) {
	rec := dftest.Record(t, dftest.Timestamps("t", "2026-01-01T00:00:00Z"), dftest.Float64s("v", 1))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Resample(ctx, rec, "t", MustParseRule("1h"), []AggSpec{{Column: "v", Func: Sum}}, memory.DefaultAllocator); !errors.Is(err, context.Canceled) {
		t.Errorf("Resample: %v", err)
	}
	if _, err := Rolling(ctx, rec, RollingSpec{Window: Window{Rows: 2}, Aggs: []AggSpec{{Column: "v", Func: Sum}}}, nil, memory.DefaultAllocator); !errors.Is(err, context.Canceled) {
		t.Errorf("Rolling: %v", err)
	}
}
