package distinct

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/shoal-data/shoal/dataframe/dftest"
)

var tDict = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

func TestDropDuplicates(t *testing.T) {
	// pandas: df.drop_duplicates(subset, keep): None equals None and NaN
	// equals NaN; -0.0 equals 0.0.
	rec := dftest.Record(t,
		dftest.Strings("a", "x", "y", "x", nil, "x", nil, "y").As(tDict),
		dftest.Float64s("b", 1, nan, 1, 2, -0.0, 2, nan),
		dftest.Int64s("c", 0, 1, 2, 3, 4, 5, 6))
	tests := []struct {
		name   string
		subset []string
		keep   Keep
		want   []any // values of c
	}{
		{"a,b first", []string{"a", "b"}, KeepFirst, []any{0, 1, 3, 4}},
		{"a,b default", []string{"a", "b"}, "", []any{0, 1, 3, 4}},
		{"a,b last", []string{"a", "b"}, KeepLast, []any{2, 4, 5, 6}},
		{"a,b none", []string{"a", "b"}, KeepNone, []any{4}},
		{"a", []string{"a"}, KeepFirst, []any{0, 1, 3}},
		{"b last", []string{"b"}, KeepLast, []any{2, 4, 5, 6}},
		{"all columns", nil, KeepFirst, []any{0, 1, 2, 3, 4, 5, 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DropDuplicates(context.Background(), rec, tt.subset, tt.keep, checkedAlloc(t))
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			dftest.AssertEqual(t, asRec(t, got.Column(2)), dftest.Record(t, dftest.Int64s("row", tt.want...)))
			if got.NumCols() != 3 {
				t.Errorf("%d columns", got.NumCols())
			}
		})
	}
	for _, tt := range []struct {
		name string
		rec  arrow.RecordBatch
		keep Keep
		want int64
	}{
		{"empty", dftest.Record(t, dftest.Int64s("a")), KeepFirst, 0},
		{"single", dftest.Record(t, dftest.Int64s("a", 5)), KeepNone, 1},
		{"all null", dftest.Record(t, dftest.Int64s("a", nil, nil, nil)), KeepFirst, 1},
		{"all null none", dftest.Record(t, dftest.Int64s("a", nil, nil, nil)), KeepNone, 0},
		{"bool", dftest.Record(t, dftest.Bools("a", true, false, true, nil)), KeepFirst, 3},
		{"dates", dftest.Record(t, dftest.Dates("a", "2024-01-01", "2024-01-01")), KeepFirst, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DropDuplicates(context.Background(), tt.rec, nil, tt.keep, checkedAlloc(t))
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			if got.NumRows() != tt.want {
				t.Errorf("%d rows, want %d", got.NumRows(), tt.want)
			}
		})
	}
	if _, err := DropDuplicates(context.Background(), rec, []string{"zz"}, KeepFirst, checkedAlloc(t)); !errors.Is(err, ErrBadColumn) {
		t.Errorf("unknown column: %v", err)
	}
	if _, err := DropDuplicates(context.Background(), rec, nil, "any", checkedAlloc(t)); !errors.Is(err, ErrBadSpec) {
		t.Errorf("keep any: %v", err)
	}
}

// TestDropDuplicatesRandom compares with a map of the tuples seen.
func TestDropDuplicatesRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for trial := range 20 {
		n := r.IntN(5000)
		var a, b []any
		for range n {
			if r.IntN(20) == 0 {
				a = append(a, nil)
			} else {
				a = append(a, int64(r.IntN(30)*1_000_003)) // spread: the hash path
			}
			b = append(b, []string{"p", "q", "a-string-longer-than-16-bytes"}[r.IntN(3)])
		}
		rec := dftest.Record(t, dftest.Int64s("a", a...), dftest.Strings("b", b...))
		for _, keep := range []Keep{KeepFirst, KeepLast, KeepNone} {
			key := func(i int) string { return fmt.Sprint(a[i], "|", b[i]) }
			count, last := map[string]int{}, map[string]int{}
			for i := range n {
				count[key(i)]++
				last[key(i)] = i
			}
			seen := map[string]bool{}
			var wa, wb []any
			for i := range n {
				k := key(i)
				keepIt := false
				switch keep {
				case KeepFirst:
					keepIt = !seen[k]
				case KeepLast:
					keepIt = last[k] == i
				case KeepNone:
					keepIt = count[k] == 1
				}
				seen[k] = true
				if keepIt {
					wa, wb = append(wa, a[i]), append(wb, b[i])
				}
			}
			got, err := DropDuplicates(context.Background(), rec, nil, keep, checkedAlloc(t))
			if err != nil {
				t.Fatal(err)
			}
			if !dftest.AssertEqual(t, got, dftest.Record(t, dftest.Int64s("a", wa...), dftest.Strings("b", wb...))) {
				t.Fatalf("trial %d keep %s", trial, keep)
			}
			got.Release()
		}
	}
}

func TestUnique(t *testing.T) {
	tests := []struct {
		name string
		in   dftest.Column
		want dftest.Column
	}{
		{"ints", dftest.Int64s("v", 3, 1, nil, 3, 1, nil, 2), dftest.Int64s("v", 3, 1, nil, 2)},
		{"strings", dftest.Strings("v", "b", "a", "b"), dftest.Strings("v", "b", "a")},
		{"dict", dftest.Strings("v", "b", nil, "a", "b").As(tDict), dftest.Strings("v", "b", nil, "a").As(tDict)},
		{"floats", dftest.Float64s("v", nan, 0.0, -0.0, nan, 1), dftest.Float64s("v", nan, 0.0, 1)},
		{"distinct", dftest.Int64s("v", 1, 2), dftest.Int64s("v", 1, 2)},
		{"empty", dftest.Int64s("v"), dftest.Int64s("v")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Unique(context.Background(), column(t, tt.in), checkedAlloc(t))
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			dftest.AssertEqual(t, asRec(t, got), asRec(t, column(t, tt.want)))
		})
	}
}

func TestValueCounts(t *testing.T) {
	ctx := context.Background()
	mem := checkedAlloc(t)
	rec := dftest.Record(t, dftest.Strings("s", "b", "a", nil, "b", "c", "b", nil, "a"))
	// pandas: s.value_counts() drops NA and sorts by count, descending.
	vc, err := ValueCounts(ctx, rec, []string{"s"}, true, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer vc.Release()
	dftest.AssertEqual(t, vc, dftest.Record(t, dftest.Strings("s", "b", "a", "c"), dftest.Int64s("count", 3, 2, 1)))
	// dropna=False: null is a value.
	vc2, err := ValueCounts(ctx, rec, []string{"s"}, false, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer vc2.Release()
	sorted, err := SortCounts(ctx, vc2, false, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer sorted.Release()
	dftest.AssertEqual(t, sorted, dftest.Record(t, dftest.Strings("s", "b", "a", nil, "c"), dftest.Int64s("count", 3, 2, 2, 1)))
	asc, err := SortCounts(ctx, vc2, true, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer asc.Release()
	dftest.AssertEqual(t, asc, dftest.Record(t, dftest.Strings("s", "c", "a", nil, "b"), dftest.Int64s("count", 1, 2, 2, 3)))

	if _, err := ValueCounts(ctx, dftest.Record(t, dftest.Int64s("count", 1)), []string{"count"}, true, mem); !errors.Is(err, ErrBadSpec) {
		t.Errorf("a column named count: %v", err)
	}
}

// TestValueCountsPartitions counts random rows cut into partitions (empty
// ones and one with every key included) and merges the partial counts in
// a tree; the result must be the counts of the whole.
func TestValueCountsPartitions(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	ctx := context.Background()
	mem := checkedAlloc(t)
	const n = 4000
	var a, b []any
	want := map[string]int64{}
	for range n {
		x := int64(0) // skew: key 0 holds most rows
		if r.IntN(4) == 0 {
			x = int64(r.IntN(100))
		}
		var y any = r.IntN(3) == 0
		if r.IntN(30) == 0 {
			y = nil
		}
		a, b = append(a, x), append(b, y)
		if y != nil {
			want[fmt.Sprint(x, y)]++
		}
	}
	rec := dftest.Record(t, dftest.Int64s("a", a...), dftest.Bools("b", b...))
	var parts []arrow.RecordBatch
	for lo := int64(0); lo < n; {
		hi := min(n, lo+int64(r.IntN(700)))
		p := rec.NewSlice(lo, hi)
		c, err := ValueCounts(ctx, p, []string{"a", "b"}, true, mem)
		p.Release()
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, c)
		lo = hi
	}
	for len(parts) > 1 {
		k := min(len(parts), 3)
		m, err := MergeCounts(ctx, parts[:k], []string{"a", "b"}, mem)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range parts[:k] {
			p.Release()
		}
		parts = append([]arrow.RecordBatch{m}, parts[k:]...)
	}
	got := parts[0]
	defer got.Release()
	if int(got.NumRows()) != len(want) {
		t.Fatalf("%d tuples, want %d", got.NumRows(), len(want))
	}
	for i := range int(got.NumRows()) {
		k := fmt.Sprint(got.Column(0).GetOneForMarshal(i), got.Column(1).GetOneForMarshal(i))
		if c := got.Column(2).GetOneForMarshal(i).(int64); c != want[k] {
			t.Errorf("tuple %s: count %d, want %d", k, c, want[k])
		}
	}
}

func TestNLargest(t *testing.T) {
	rec := dftest.Record(t,
		dftest.Float64s("v", 3, 1, nil, 3, nan, 5, 3, 1),
		dftest.Strings("s", "b", "x", "y", "a", "z", "q", "b", "w"),
		dftest.Int64s("row", 0, 1, 2, 3, 4, 5, 6, 7))
	tests := []struct {
		name    string
		largest bool
		n       int
		cols    []string
		keep    Keep
		want    []any // rows
	}{
		// pandas: df.nlargest(3, "v"): 5, then the first two 3s.
		{"largest first", true, 3, []string{"v"}, KeepFirst, []any{5, 0, 3}},
		// keep="last": the last 3s, the last one first.
		{"largest last", true, 3, []string{"v"}, KeepLast, []any{5, 6, 3}},
		// keep="all": every row tied with the third.
		{"largest all", true, 3, []string{"v"}, KeepAll, []any{5, 0, 3, 6}},
		{"two columns", true, 3, []string{"v", "s"}, KeepFirst, []any{5, 0, 6}},
		{"smallest", false, 3, []string{"v"}, KeepFirst, []any{1, 7, 0}},
		{"smallest last", false, 3, []string{"v"}, KeepLast, []any{7, 1, 6}},
		// Not enough values: the null and the NaN fill the rest.
		{"more than values", true, 8, []string{"v"}, KeepFirst, []any{5, 0, 3, 6, 1, 7, 2, 4}},
		{"more than rows", false, 20, []string{"v", "s"}, KeepFirst, []any{7, 1, 3, 0, 6, 5, 2, 4}},
		{"zero", true, 0, []string{"v"}, KeepFirst, nil},
		{"strings", true, 2, []string{"s"}, KeepFirst, []any{4, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NSmallest
			if tt.largest {
				f = NLargest
			}
			got, err := f(context.Background(), rec, tt.n, tt.cols, tt.keep, checkedAlloc(t))
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			dftest.AssertEqual(t, asRec(t, got.Column(2)), dftest.Record(t, dftest.Int64s("row", tt.want...)))
		})
	}
	for _, bad := range []struct {
		n    int
		cols []string
		keep Keep
		err  error
	}{{-1, []string{"v"}, KeepFirst, ErrBadSpec}, {1, nil, KeepFirst, ErrBadSpec}, {1, []string{"v"}, KeepNone, ErrBadSpec}, {1, []string{"zz"}, KeepFirst, ErrBadColumn}} {
		if _, err := NLargest(context.Background(), rec, bad.n, bad.cols, bad.keep, checkedAlloc(t)); !errors.Is(err, bad.err) {
			t.Errorf("NLargest(%d, %v, %s) = %v, want %v", bad.n, bad.cols, bad.keep, err, bad.err)
		}
	}
}

// refTop is the reference: a stable sort of every row, then the cut.
func refTop(vals []any, strs []string, rowsIn []int, n int, largest bool, keep Keep) []any {
	idx := slices.Clone(rowsIn)
	rank := func(i int) (bool, int64) { // null last
		if vals[i] == nil {
			return true, 0
		}
		return false, vals[i].(int64)
	}
	cmpRows := func(a, b int) int {
		na, va := rank(a)
		nb, vb := rank(b)
		switch {
		case na != nb:
			if na {
				return 1
			}
			return -1
		case va != vb:
			if (va > vb) == largest {
				return -1
			}
			return 1
		case strs[a] != strs[b]:
			if (strs[a] > strs[b]) == largest {
				return -1
			}
			return 1
		}
		return 0
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if c := cmpRows(a, b); c != 0 {
			return c
		}
		if keep == KeepLast {
			return b - a
		}
		return a - b
	})
	end := min(n, len(idx))
	if keep == KeepAll && end > 0 {
		for end < len(idx) && cmpRows(idx[end], idx[end-1]) == 0 {
			end++
		}
	}
	var out []any
	for _, i := range idx[:end] {
		out = append(out, i)
	}
	return out
}

func TestNLargestRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for trial := range 60 {
		size := r.IntN(400)
		vals, strs, rowNums := make([]any, size), make([]string, size), make([]any, size)
		ks := make([]any, size)
		groups := map[int64][]int{}
		var order []int64
		for i := range size {
			if r.IntN(10) == 0 {
				vals[i] = nil
			} else {
				vals[i] = int64(r.IntN(1 + trial))
			}
			strs[i] = string(rune('a' + r.IntN(3)))
			rowNums[i] = i
			k := int64(r.IntN(4))
			if r.IntN(2) == 0 {
				k = 0 // skewed groups
			}
			ks[i] = k
			if _, ok := groups[k]; !ok {
				order = append(order, k)
			}
			groups[k] = append(groups[k], i)
		}
		strAny := make([]any, size)
		for i, s := range strs {
			strAny[i] = s
		}
		rec := dftest.Record(t, dftest.Int64s("v", vals...), dftest.Strings("s", strAny...), dftest.Int64s("row", rowNums...), dftest.Int64s("k", ks...))
		n := r.IntN(12)
		for _, largest := range []bool{true, false} {
			for _, keep := range []Keep{KeepFirst, KeepLast, KeepAll} {
				f, g := NSmallest, GroupNSmallest
				if largest {
					f, g = NLargest, GroupNLargest
				}
				got, err := f(context.Background(), rec, n, []string{"v", "s"}, keep, checkedAlloc(t))
				if err != nil {
					t.Fatal(err)
				}
				want := refTop(vals, strs, iotaInts(size), n, largest, keep)
				if !dftest.AssertEqual(t, asRec(t, got.Column(2)), dftest.Record(t, dftest.Int64s("row", want...))) {
					t.Fatalf("trial %d n %d largest %v keep %s", trial, n, largest, keep)
				}
				got.Release()

				got, err = g(context.Background(), rec, []string{"k"}, n, []string{"v", "s"}, keep, GroupOptions{}, checkedAlloc(t))
				if err != nil {
					t.Fatal(err)
				}
				var wantG []any
				for _, k := range order {
					wantG = append(wantG, refTop(vals, strs, groups[k], n, largest, keep)...)
				}
				if !dftest.AssertEqual(t, asRec(t, got.Column(2)), dftest.Record(t, dftest.Int64s("row", wantG...))) {
					t.Fatalf("groups: trial %d n %d largest %v keep %s", trial, n, largest, keep)
				}
				got.Release()
			}
		}
	}
}

// asRec makes a one-column record of arr (named as the want columns).
func asRec(t *testing.T, arr arrow.Array) arrow.RecordBatch {
	rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "row", Type: arr.DataType(), Nullable: true}}, nil), []arrow.Array{arr}, int64(arr.Len()))
	t.Cleanup(rec.Release)
	return rec
}

func iotaInts(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func TestCancelled(t *testing.T) {
	rec := dftest.Record(t, dftest.Int64s("a", 1, 1), dftest.Float64s("v", 1, 2))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	mem := checkedAlloc(t)
	if _, err := DropDuplicates(ctx, rec, nil, KeepFirst, mem); !errors.Is(err, context.Canceled) {
		t.Errorf("DropDuplicates: %v", err)
	}
	if _, err := Quantiles(ctx, rec.Column(1), []float64{0.5}, Linear); !errors.Is(err, context.Canceled) {
		t.Errorf("Quantiles: %v", err)
	}
	if _, err := GroupQuantiles(ctx, rec, []string{"a"}, []QuantileSpec{{Column: "v", Q: 0.5, Name: "m"}}, Linear, GroupOptions{}, mem); !errors.Is(err, context.Canceled) {
		t.Errorf("GroupQuantiles: %v", err)
	}
	if _, err := ValueCounts(ctx, rec, []string{"a"}, true, mem); !errors.Is(err, context.Canceled) {
		t.Errorf("ValueCounts: %v", err)
	}
	if _, err := NLargest(ctx, rec, 1, []string{"v"}, KeepFirst, mem); !errors.Is(err, context.Canceled) {
		t.Errorf("NLargest: %v", err)
	}
}

// Partial counts of dictionary columns with different dictionaries merge
// by value.
func TestMergeCountsDictionaries(t *testing.T) {
	ctx := context.Background()
	mem := checkedAlloc(t)
	a := dftest.Record(t, dftest.Strings("s", "x", "y", "x").As(tDict))
	b := dftest.Record(t, dftest.Strings("s", "z", "x").As(tDict))
	ca, err := ValueCounts(ctx, a, []string{"s"}, true, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Release()
	cb, err := ValueCounts(ctx, b, []string{"s"}, true, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Release()
	m, err := MergeCounts(ctx, []arrow.RecordBatch{ca, cb}, []string{"s"}, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Release()
	dftest.AssertEqual(t, m, dftest.Record(t, dftest.Strings("s", "x", "y", "z").As(tDict), dftest.Int64s("count", 3, 1, 1)))
}
