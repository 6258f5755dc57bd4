package distinct

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/dftest"
)

func checkedAlloc(t *testing.T) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

func column(t *testing.T, c dftest.Column) arrow.Array {
	return dftest.Record(t, c).Column(0)
}

var nan = math.NaN()

func TestQuantiles(t *testing.T) {
	qs := []float64{0, 0.25, 0.5, 0.75, 1}
	tests := []struct {
		name   string
		col    dftest.Column
		method Method
		want   []float64
	}{
		// pd.Series([1, 2, 3, 4]).quantile([0, .25, .5, .75, 1], interpolation=...)
		{"linear", dftest.Int64s("v", 1, 2, 3, 4), Linear, []float64{1, 1.75, 2.5, 3.25, 4}},
		{"default", dftest.Int64s("v", 4, 3, 2, 1), "", []float64{1, 1.75, 2.5, 3.25, 4}},
		{"lower", dftest.Int64s("v", 1, 2, 3, 4), Lower, []float64{1, 1, 2, 3, 4}},
		{"higher", dftest.Int64s("v", 1, 2, 3, 4), Higher, []float64{1, 2, 3, 4, 4}},
		// h = 0, .75, 1.5, 2.25, 3: 1.5 rounds to 2 (half to even).
		{"nearest", dftest.Int64s("v", 1, 2, 3, 4), Nearest, []float64{1, 2, 3, 3, 4}},
		{"midpoint", dftest.Int64s("v", 1, 2, 3, 4), Midpoint, []float64{1, 1.5, 2.5, 3.5, 4}},
		// pandas skips NaN and missing values.
		{"nulls and NaN", dftest.Float64s("v", nil, nan, 3, 1, nan, 2, 4), Linear, []float64{1, 1.75, 2.5, 3.25, 4}},
		{"single", dftest.Float64s("v", 7), Linear, []float64{7, 7, 7, 7, 7}},
		{"empty", dftest.Float64s("v"), Linear, []float64{nan, nan, nan, nan, nan}},
		{"all null", dftest.Int64s("v", nil, nil), Linear, []float64{nan, nan, nan, nan, nan}},
		{"all NaN", dftest.Float64s("v", nan), Linear, []float64{nan, nan, nan, nan, nan}},
		{"uint8", dftest.Int64s("v", 200, 10, 255).As(arrow.PrimitiveTypes.Uint8), Linear, []float64{10, 105, 200, 227.5, 255}},
		{"float32", dftest.Float64s("v", 0.5, -1.5).As(arrow.PrimitiveTypes.Float32), Linear, []float64{-1.5, -1, -0.5, 0, 0.5}},
		{"int64 extremes", dftest.Int64s("v", math.MinInt64, math.MaxInt64), Lower, []float64{math.MinInt64, math.MinInt64, math.MinInt64, math.MinInt64, math.MaxInt64}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Quantiles(context.Background(), column(t, tt.col), qs, tt.method)
			if err != nil {
				t.Fatal(err)
			}
			for i := range qs {
				if got[i] != tt.want[i] && !(math.IsNaN(got[i]) && math.IsNaN(tt.want[i])) {
					t.Errorf("q=%v: got %v, want %v", qs[i], got[i], tt.want[i])
				}
			}
		})
	}
	m, err := Median(context.Background(), column(t, dftest.Int64s("v", 5, 1, 3)))
	if err != nil || m != 3 {
		t.Errorf("Median = %v, %v; want 3", m, err)
	}
}

func TestQuantileErrors(t *testing.T) {
	ctx := context.Background()
	v := column(t, dftest.Int64s("v", 1))
	for _, q := range []float64{-0.1, 1.5, nan} {
		if _, err := Quantiles(ctx, v, []float64{q}, Linear); !errors.Is(err, ErrBadSpec) {
			t.Errorf("q=%v: %v, want ErrBadSpec", q, err)
		}
	}
	if _, err := Quantiles(ctx, v, []float64{0.5}, "cubic"); !errors.Is(err, ErrBadSpec) {
		t.Errorf("method cubic: %v", err)
	}
	if _, err := Quantiles(ctx, column(t, dftest.Strings("s", "a")), []float64{0.5}, Linear); !errors.Is(err, ErrBadColumn) {
		t.Errorf("strings: %v", err)
	}
}

// sortedQuantile is the reference: sort, then the formula.
func sortedQuantile(vals []float64, q float64, method Method) float64 {
	var a []float64
	for _, v := range vals {
		if !math.IsNaN(v) {
			a = append(a, v)
		}
	}
	slices.Sort(a)
	return fromSorted(a, q, method)
}

func fromSorted(a []float64, q float64, method Method) float64 {
	if len(a) == 0 {
		return nan
	}
	q = q * 100 / 100
	h := float64(len(a))*q + (1 - q) - 1
	h = min(max(h, 0), float64(len(a)-1))
	lo, hi := int(math.Floor(h)), int(math.Ceil(h))
	switch method {
	case Lower:
		return a[lo]
	case Higher:
		return a[hi]
	case Nearest:
		return a[int(math.RoundToEven(h))]
	case Midpoint:
		return (a[lo] + a[hi]) / 2
	}
	return lerp(a[lo], a[hi], h-float64(lo))
}

func TestQuantilesRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for trial := range 200 {
		n := r.IntN(3000)
		if trial%10 == 0 {
			n = r.IntN(5)
		}
		distinct := 1 + r.IntN(max(1, n))
		vals := make([]any, n)
		fv := make([]float64, n)
		for i := range vals {
			x := float64(r.IntN(distinct)) - float64(distinct)/3
			if r.IntN(50) == 0 {
				x = nan
			}
			vals[i], fv[i] = x, x
		}
		qs := []float64{r.Float64(), r.Float64(), 0, 1, 0.5, float64(r.IntN(100)) / 100}
		if trial%3 == 0 {
			qs = qs[:1]
		}
		col := column(t, dftest.Float64s("v", vals...))
		sorted := slices.DeleteFunc(slices.Clone(fv), math.IsNaN)
		slices.Sort(sorted)
		for _, m := range []Method{Linear, Lower, Higher, Nearest, Midpoint} {
			got, err := Quantiles(context.Background(), col, qs, m)
			if err != nil {
				t.Fatal(err)
			}
			for i, q := range qs {
				want := fromSorted(sorted, q, m)
				if got[i] != want && !(math.IsNaN(got[i]) && math.IsNaN(want)) {
					t.Fatalf("trial %d, n %d, %s q=%v: got %v, want %v", trial, n, m, q, got[i], want)
				}
			}
		}
	}
}

func TestGroupQuantiles(t *testing.T) {
	rec := dftest.Record(t,
		dftest.Strings("k", "b", "a", "b", nil, "a", "b", "c", nil),
		dftest.Float64s("v", 1, 10, 2, 100, nil, 3, nan, 200),
		dftest.Int64s("w", 4, 3, 2, 1, 0, -1, -2, -3))
	specs := []QuantileSpec{{Column: "v", Q: 0.5, Name: "median"}, {Column: "v", Q: 1, Name: "max"}, {Column: "w", Q: 0.25, Name: "w25"}}
	mem := checkedAlloc(t)
	// pandas: df.groupby("k", dropna=False, sort=False).agg(...) -- the null
	// group kept, groups in order of their first row; group c has only a
	// NaN, so its quantile is NaN (here null).
	got, err := GroupQuantiles(context.Background(), rec, []string{"k"}, specs, Linear, GroupOptions{}, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	want := dftest.Record(t,
		dftest.Strings("k", "b", "a", nil, "c"),
		dftest.Float64s("median", 2, 10, 150, nil),
		dftest.Float64s("max", 3, 10, 200, nil),
		dftest.Float64s("w25", 0.5, 0.75, -2, -2))
	dftest.AssertEqual(t, got, want)
	// dropna=True, sort=True: pandas' defaults.
	got2, err := GroupQuantiles(context.Background(), rec, []string{"k"}, specs, Linear, GroupOptions{DropNullKeys: true, Sort: true}, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer got2.Release()
	want = dftest.Record(t,
		dftest.Strings("k", "a", "b", "c"),
		dftest.Float64s("median", 10, 2, nil),
		dftest.Float64s("max", 10, 3, nil),
		dftest.Float64s("w25", 0.75, 0.5, -2))
	dftest.AssertEqual(t, got2, want)

	// Skewed groups and an empty batch.
	r := rand.New(rand.NewPCG(11, 12))
	var ks, vs []any
	groups := map[int64][]float64{}
	for range 5000 {
		k := int64(0)
		if r.IntN(10) == 0 {
			k = int64(1 + r.IntN(50))
		}
		v := r.NormFloat64()
		ks, vs = append(ks, k), append(vs, v)
		groups[k] = append(groups[k], v)
	}
	big := dftest.Record(t, dftest.Int64s("k", ks...).As(arrow.PrimitiveTypes.Int32), dftest.Float64s("v", vs...))
	got3, err := GroupQuantiles(context.Background(), big, []string{"k"}, []QuantileSpec{{Column: "v", Q: 0.9}}, Linear, GroupOptions{Sort: true}, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer got3.Release()
	var wk, wv []any
	for k := range int64(51) {
		if g, ok := groups[k]; ok {
			wk, wv = append(wk, k), append(wv, sortedQuantile(g, 0.9, Linear))
		}
	}
	dftest.AssertEqual(t, got3, dftest.Record(t, dftest.Int64s("k", wk...).As(arrow.PrimitiveTypes.Int32), dftest.Float64s("v", wv...)), dftest.Tolerance(0, 0))

	empty := dftest.Record(t, dftest.Strings("k"), dftest.Float64s("v"))
	got4, err := GroupQuantiles(context.Background(), empty, []string{"k"}, []QuantileSpec{{Column: "v", Q: 0.5}}, Linear, GroupOptions{}, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer got4.Release()
	dftest.AssertEqual(t, got4, dftest.Record(t, dftest.Strings("k"), dftest.Float64s("v")))

	if _, err := GroupQuantiles(context.Background(), rec, []string{"k"}, []QuantileSpec{{Column: "k", Q: 0.5, Name: "x"}}, Linear, GroupOptions{}, mem); !errors.Is(err, ErrBadColumn) {
		t.Errorf("quantile of strings: %v", err)
	}
	if _, err := GroupQuantiles(context.Background(), rec, []string{"k"}, []QuantileSpec{{Column: "v", Q: 0.5}, {Column: "v", Q: 0.6}}, Linear, GroupOptions{}, mem); !errors.Is(err, ErrBadSpec) {
		t.Errorf("duplicate names: %v", err)
	}
}
