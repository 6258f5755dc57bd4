package dataframe_test

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	df "github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/dataframe/dftest"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/local"
)

// distinctData is a frame held as Go values (nil is null) so that the
// tests compute expected results with plain loops: a string key k, a
// small integer key g, a float v with nulls and NaNs, an integer x with
// nulls, and a row id.
type distinctData struct {
	k, g, v, x, id []any
}

func (d distinctData) len() int { return len(d.id) }

// genDistinct makes n rows; with skew, most rows have key "k0"; with
// nullV, every v is null.
func genDistinct(seed uint64, n, keys int, skew, nullV bool) distinctData {
	r := rand.New(rand.NewPCG(seed, 11))
	var d distinctData
	for i := range n {
		var k any = fmt.Sprintf("k%d", r.IntN(keys))
		switch {
		case skew && r.IntN(10) < 7:
			k = "k0"
		case r.IntN(15) == 0:
			k = nil
		}
		var v any = float64(r.IntN(50)) / 4
		switch {
		case nullV || r.IntN(10) == 0:
			v = nil
		case r.IntN(25) == 0:
			v = math.NaN()
		}
		var x any = int64(r.IntN(100) - 50)
		if r.IntN(12) == 0 {
			x = nil
		}
		d.k = append(d.k, k)
		d.g = append(d.g, int64(r.IntN(3)))
		d.v = append(d.v, v)
		d.x = append(d.x, x)
		d.id = append(d.id, int64(i))
	}
	return d
}

// frame splits the rows into partitions of the given sizes (zeros make
// empty partitions); the sizes must add up to the rows.
func (d distinctData) frame(t *testing.T, sizes []int) df.DataFrame {
	t.Helper()
	var recs []arrow.RecordBatch
	off := 0
	for _, s := range sizes {
		lo, hi := off, off+s
		off = hi
		recs = append(recs, dftest.Record(t,
			dftest.Strings("k", d.k[lo:hi]...), dftest.Int64s("g", d.g[lo:hi]...),
			dftest.Float64s("v", d.v[lo:hi]...), dftest.Int64s("x", d.x[lo:hi]...),
			dftest.Int64s("id", d.id[lo:hi]...)))
	}
	if off != d.len() {
		t.Fatalf("partition sizes add up to %d, have %d rows", off, d.len())
	}
	return df.FromRecords(recs...)
}

// rows returns the columns of the rows idx, in that order.
func (d distinctData) rows(idx []int) []dftest.Column {
	var out []dftest.Column
	for _, c := range []string{"k", "g", "v", "x", "id"} {
		out = append(out, d.column(c, idx))
	}
	return out
}

// column returns the column name of the rows idx.
func (d distinctData) column(name string, idx []int) dftest.Column {
	vals := make([]any, len(idx))
	for i, j := range idx {
		vals[i] = d.col(name)[j]
	}
	switch name {
	case "k":
		return dftest.Strings(name, vals...)
	case "v":
		return dftest.Float64s(name, vals...)
	}
	return dftest.Int64s(name, vals...)
}

// distinctCase is a data set and a partitioning.
type distinctCase struct {
	name  string
	data  distinctData
	sizes []int
}

func distinctCases() []distinctCase {
	even := func(n, parts int) []int {
		s := make([]int, parts)
		for i := range s {
			s[i] = (i+1)*n/parts - i*n/parts
		}
		return s
	}
	return []distinctCase{
		{"one partition", genDistinct(1, 300, 12, false, false), []int{300}},
		{"empty partitions", genDistinct(2, 400, 12, false, false), []int{0, 150, 0, 0, 170, 80, 0}},
		{"skewed keys", genDistinct(3, 600, 30, true, false), even(600, 5)},
		{"all-null column", genDistinct(4, 200, 6, false, true), []int{50, 0, 150}},
		{"no rows", genDistinct(5, 0, 6, false, false), []int{0, 0, 0}},
		{"many partitions", genDistinct(6, 500, 8, false, false), even(500, 19)},
	}
}

// missing reports a null or a NaN.
func missing(v any) bool {
	f, ok := v.(float64)
	return v == nil || ok && math.IsNaN(f)
}

func num(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	}
	panic(fmt.Sprintf("num of %T", v))
}

// refQuantile is numpy's linear quantile of the values that are not
// missing, NaN when there are none.
func refQuantile(vals []any, q float64) (float64, bool) {
	var xs []float64
	for _, v := range vals {
		if !missing(v) {
			xs = append(xs, num(v))
		}
	}
	if len(xs) == 0 {
		return math.NaN(), false
	}
	slices.Sort(xs)
	h := float64(len(xs)-1) * q
	i, j := int(math.Floor(h)), int(math.Ceil(h))
	return xs[i] + (h-float64(i))*(xs[j]-xs[i]), true
}

func TestSeriesQuantile(t *testing.T) {
	ctx := context.Background()
	e := newExec(t)
	qs := []float64{0, 0.1, 0.25, 0.5, 0.9, 1}
	for _, c := range distinctCases() {
		for _, col := range []string{"v", "x"} {
			t.Run(c.name+"/"+col, func(t *testing.T) {
				f := c.data.frame(t, c.sizes)
				vals := c.data.v
				if col == "x" {
					vals = c.data.x
				}
				got, err := f.Column(col).Median().Float64(ctx, e)
				if err != nil {
					t.Fatal(err)
				}
				want, _ := refQuantile(vals, 0.5)
				if !(got == want || math.IsNaN(got) && math.IsNaN(want)) {
					t.Errorf("median: got %v, want %v", got, want)
				}
				var wq []any
				for _, q := range qs {
					w, _ := refQuantile(vals, q)
					wq = append(wq, w)
				}
				dftest.AssertEqual(t, compute(t, f.Column(col).Quantile(qs...)),
					dftest.Table(t, dftest.Float64s("quantile", anyFloats(qs)...), dftest.Float64s(col, wq...)))
			})
		}
	}
}

func anyFloats(xs []float64) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// TestApproxQuantile checks the documented rank error bound of the KLL
// sketch: the rank of the value returned for q is within 1.33% of q.
func TestApproxQuantile(t *testing.T) {
	const eps = 0.0133
	qs := []float64{0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1}
	tests := []struct {
		name  string
		n     int
		sizes []int
		gen   func(r *rand.Rand) float64
	}{
		{"uniform", 50_000, []int{10_000, 0, 25_000, 15_000}, func(r *rand.Rand) float64 { return r.Float64() }},
		{"skewed", 40_000, []int{40_000}, func(r *rand.Rand) float64 { return math.Exp(8 * r.Float64()) }},
		{"many duplicates", 30_000, []int{5_000, 5_000, 5_000, 5_000, 5_000, 5_000}, func(r *rand.Rand) float64 { return float64(r.IntN(20)) }},
		{"small", 300, []int{100, 200}, func(r *rand.Rand) float64 { return r.NormFloat64() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(tt.n), 3))
			vals := make([]float64, tt.n)
			var recs []arrow.RecordBatch
			off := 0
			for _, s := range tt.sizes {
				part := make([]any, 0, s)
				for i := off; i < off+s; i++ {
					vals[i] = tt.gen(r)
					part = append(part, vals[i])
				}
				off += s
				recs = append(recs, dftest.Record(t, dftest.Float64s("a", part...)))
			}
			f := df.FromRecords(recs...)
			got := compute(t, f.Column("a").ApproxQuantile(qs...))
			if got.NumRows() != int64(len(qs)) {
				t.Fatalf("%d rows, want %d", got.NumRows(), len(qs))
			}
			out := column[*array.Float64](t, got, "a").Float64Values()
			slices.Sort(vals)
			n := float64(len(vals))
			for i, q := range qs {
				x := out[i]
				below, _ := slices.BinarySearch(vals, x)                 // values < x
				upTo := below + countEqual(vals[below:], x)              // values <= x
				if float64(below)/n > q+eps || float64(upTo)/n < q-eps { // some rank of x within eps of q
					t.Errorf("q=%v: got %v, whose ranks are %.4f..%.4f", q, x, float64(below)/n, float64(upTo)/n)
				}
			}
			if out[0] != vals[0] || out[len(qs)-1] != vals[len(vals)-1] {
				t.Errorf("q=0 and q=1: got %v and %v, want the min %v and max %v", out[0], out[len(qs)-1], vals[0], vals[len(vals)-1])
			}
		})
	}
}

func countEqual(xs []float64, x float64) int {
	n := 0
	for n < len(xs) && xs[n] == x {
		n++
	}
	return n
}

// refKey is a row's values on cols, as text.
func refKey(d distinctData, i int, cols []string) string {
	var b strings.Builder
	for _, c := range cols {
		fmt.Fprintf(&b, "%v|", d.col(c)[i])
	}
	return b.String()
}

func (d distinctData) col(name string) []any {
	switch name {
	case "k":
		return d.k
	case "g":
		return d.g
	case "v":
		return d.v
	case "x":
		return d.x
	}
	return d.id
}

func TestDropDuplicates(t *testing.T) {
	for _, c := range distinctCases() {
		for _, subset := range [][]string{{"k"}, {"k", "g"}, {"v"}, nil} {
			for _, keep := range []string{"", "last", "none"} {
				t.Run(fmt.Sprintf("%s/%v/%q", c.name, subset, keep), func(t *testing.T) {
					f := c.data.frame(t, c.sizes)
					cols := subset
					if subset == nil { // all columns: leave the unique id out
						f = f.Drop("id")
						cols = []string{"k", "g", "v", "x"}
					}
					count := map[string]int{}
					for i := range c.data.len() {
						count[refKey(c.data, i, cols)]++
					}
					seen := map[string]int{}
					var idx []int
					for i := range c.data.len() {
						key := refKey(c.data, i, cols)
						seen[key]++
						switch keep {
						case "":
							if seen[key] == 1 {
								idx = append(idx, i)
							}
						case "last":
							if seen[key] == count[key] {
								idx = append(idx, i)
							}
						case "none":
							if count[key] == 1 {
								idx = append(idx, i)
							}
						}
					}
					want := c.data.rows(idx)
					if subset == nil {
						want = want[:4]
					}
					got := compute(t, f.DropDuplicates(subset, keep))
					var opts []dftest.Option
					if len(c.sizes) > 1 {
						opts = append(opts, dftest.IgnoreRowOrder())
					}
					dftest.AssertEqual(t, got, dftest.Table(t, want...), opts...)
				})
			}
		}
	}
}

func TestValueCountsAndUnique(t *testing.T) {
	for _, c := range distinctCases() {
		t.Run(c.name, func(t *testing.T) {
			f := c.data.frame(t, c.sizes)
			for _, cols := range [][]string{{"k"}, {"k", "g"}, {"v"}} {
				// Counts of the tuples without a missing value, by count
				// descending, ties in order of first appearance.
				count := map[string]int64{}
				var first []int
				for i := range c.data.len() {
					skip := false
					for _, col := range cols {
						skip = skip || missing(c.data.col(col)[i])
					}
					if skip {
						continue
					}
					key := refKey(c.data, i, cols)
					if count[key] == 0 {
						first = append(first, i)
					}
					count[key]++
				}
				slices.SortStableFunc(first, func(a, b int) int {
					return cmp.Compare(count[refKey(c.data, b, cols)], count[refKey(c.data, a, cols)])
				})
				var want []dftest.Column
				for _, col := range cols {
					want = append(want, c.data.column(col, first))
				}
				var counts []any
				for _, i := range first {
					counts = append(counts, count[refKey(c.data, i, cols)])
				}
				want = append(want, dftest.Int64s("count", counts...))
				got := f.ValueCounts(cols...)
				if len(cols) == 1 {
					got = f.Column(cols[0]).ValueCounts()
				}
				if got.NPartitions() != 1 {
					t.Errorf("ValueCounts%v: %d partitions, want 1", cols, got.NPartitions())
				}
				dftest.AssertEqual(t, compute(t, got), dftest.Table(t, want...))
			}

			// Unique: first appearance order, null once.
			for _, col := range []string{"k", "x"} {
				seen := map[string]bool{}
				var idx []int
				for i := range c.data.len() {
					key := refKey(c.data, i, []string{col})
					if !seen[key] {
						seen[key] = true
						idx = append(idx, i)
					}
				}
				want := c.data.column(col, idx)
				got := f.Column(col).Unique()
				dftest.AssertEqual(t, compute(t, got.Frame()), dftest.Table(t, want))
			}
		})
	}
}

// refBest returns the rows of the n best of idx on cols (largest or
// smallest first), missing values below every value, ties in row order.
func refBest(d distinctData, idx []int, n int, cols []string, smallest bool) []int {
	idx = slices.Clone(idx)
	slices.SortStableFunc(idx, func(a, b int) int {
		for _, c := range cols {
			va, vb := d.col(c)[a], d.col(c)[b]
			ma, mb := missing(va), missing(vb)
			switch {
			case ma && mb:
				continue
			case ma:
				return 1
			case mb:
				return -1
			}
			var r int
			if s, ok := va.(string); ok {
				r = cmp.Compare(s, vb.(string))
			} else {
				r = cmp.Compare(num(va), num(vb))
			}
			if !smallest {
				r = -r
			}
			if r != 0 {
				return r
			}
		}
		return 0
	})
	return idx[:min(n, len(idx))]
}

func allRows(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

func TestNLargestNSmallest(t *testing.T) {
	for _, c := range distinctCases() {
		t.Run(c.name, func(t *testing.T) {
			f := c.data.frame(t, c.sizes)
			all := allRows(c.data.len())
			nonMissingV := 0
			for _, v := range c.data.v {
				if !missing(v) {
					nonMissingV++
				}
			}
			tests := []struct {
				name     string
				got      df.DataFrame
				n        int
				cols     []string
				smallest bool
			}{
				{"largest x", f.NLargest(7, "x"), 7, []string{"x"}, false},
				{"smallest x,g", f.NSmallest(9, "x", "g"), 9, []string{"x", "g"}, true},
				{"largest g,x", f.NLargest(25, "g", "x"), 25, []string{"g", "x"}, false},
				{"largest k", f.NLargest(5, "k", "id"), 5, []string{"k", "id"}, false},
				{"zero", f.NSmallest(0, "x"), 0, []string{"x"}, true},
			}
			if nonMissingV >= 10 { // how nulls and NaNs fill a result among themselves is not specified
				tests = append(tests, struct {
					name     string
					got      df.DataFrame
					n        int
					cols     []string
					smallest bool
				}{"largest v", f.NLargest(10, "v"), 10, []string{"v"}, false})
			}
			for _, tt := range tests {
				want := c.data.rows(refBest(c.data, all, tt.n, tt.cols, tt.smallest))
				dftest.AssertEqual(t, compute(t, tt.got), dftest.Table(t, want...))
			}
			// A Series' values.
			want := c.data.column("x", refBest(c.data, all, 4, []string{"x"}, true))
			dftest.AssertEqual(t, compute(t, f.Column("x").NSmallest(4).Frame()), dftest.Table(t, want))
		})
	}
}

// refGroups returns the row numbers of each key of cols (null keys
// dropped unless keepNull), the keys sorted ascending with nulls last.
func refGroups(d distinctData, keys []string, keepNull bool) [][]int {
	byKey := map[string][]int{}
	var order []int
	for i := range d.len() {
		null := false
		for _, k := range keys {
			null = null || d.col(k)[i] == nil
		}
		if null && !keepNull {
			continue
		}
		key := refKey(d, i, keys)
		if byKey[key] == nil {
			order = append(order, i)
		}
		byKey[key] = append(byKey[key], i)
	}
	slices.SortFunc(order, func(a, b int) int {
		for _, k := range keys {
			va, vb := d.col(k)[a], d.col(k)[b]
			switch {
			case va == nil && vb == nil:
				continue
			case va == nil:
				return 1
			case vb == nil:
				return -1
			}
			var r int
			if s, ok := va.(string); ok {
				r = cmp.Compare(s, vb.(string))
			} else {
				r = cmp.Compare(va.(int64), vb.(int64))
			}
			if r != 0 {
				return r
			}
		}
		return 0
	})
	out := make([][]int, len(order))
	for i, r := range order {
		out[i] = byKey[refKey(d, r, keys)]
	}
	return out
}

func TestGroupByQuantile(t *testing.T) {
	for _, c := range distinctCases() {
		for _, keys := range [][]string{{"k"}, {"k", "g"}} {
			t.Run(fmt.Sprintf("%s/%v", c.name, keys), func(t *testing.T) {
				f := c.data.frame(t, c.sizes)
				tests := []struct {
					name     string
					g        df.GroupBy
					keepNull bool
					sorted   bool
				}{
					{"default", f.GroupBy(keys...), false, true},
					{"null keys", f.GroupBy(keys...).KeepNullKeys(), true, true},
					{"unsorted", f.GroupBy(keys...).Sort(false), false, false},
					{"split out", f.GroupBy(keys...).SplitOut(3), false, false},
				}
				for _, tt := range tests {
					groups := refGroups(c.data, keys, tt.keepNull)
					firsts := make([]int, len(groups))
					wantMed := map[string][]any{}
					wantQ := map[string][]any{}
					for i, rows := range groups {
						firsts[i] = rows[0]
						for _, col := range []string{"v", "x"} {
							vals := make([]any, len(rows))
							for j, r := range rows {
								vals[j] = c.data.col(col)[r]
							}
							var m, q any
							if x, ok := refQuantile(vals, 0.5); ok {
								m = x
							}
							if x, ok := refQuantile(vals, 0.3); ok {
								q = x
							}
							wantMed[col] = append(wantMed[col], m)
							wantQ[col] = append(wantQ[col], q)
						}
					}
					var keyCols []dftest.Column
					for _, k := range keys {
						keyCols = append(keyCols, c.data.column(k, firsts))
					}
					var opts []dftest.Option
					if !tt.sorted {
						opts = append(opts, dftest.IgnoreRowOrder())
					}
					med := tt.g.Median("v", "x")
					if tt.sorted && med.NPartitions() != 1 {
						t.Errorf("%s: %d partitions, want 1", tt.name, med.NPartitions())
					}
					want := append(slices.Clone(keyCols), dftest.Float64s("v", wantMed["v"]...), dftest.Float64s("x", wantMed["x"]...))
					if !dftest.AssertEqual(t, compute(t, med), dftest.Table(t, want...), opts...) {
						t.Logf("%s median plan:\n%s", tt.name, med.Explain())
					}
					quant := tt.g.Quantile(0.3) // every numeric non-key column
					want = append(slices.Clone(keyCols), dftest.Float64s("v", wantQ["v"]...), dftest.Float64s("x", wantQ["x"]...))
					extra := []string{"id"}
					if !slices.Contains(keys, "g") {
						extra = append(extra, "g")
					}
					got := compute(t, quant.Drop(extra...))
					if !dftest.AssertEqual(t, got, dftest.Table(t, want...), opts...) {
						t.Logf("%s quantile plan:\n%s", tt.name, quant.Explain())
					}
				}
			})
		}
	}
}

func TestGroupByNLargest(t *testing.T) {
	for _, c := range distinctCases() {
		t.Run(c.name, func(t *testing.T) {
			f := c.data.frame(t, c.sizes)
			for _, smallest := range []bool{false, true} {
				var idx []int
				for _, rows := range refGroups(c.data, []string{"k"}, false) {
					idx = append(idx, refBest(c.data, rows, 3, []string{"x"}, smallest)...)
				}
				got := f.GroupBy("k").NLargest(3, "x")
				if smallest {
					got = f.GroupBy("k").NSmallest(3, "x")
				}
				if !dftest.AssertEqual(t, compute(t, got), dftest.Table(t, c.data.rows(idx)...)) {
					t.Logf("plan:\n%s", got.Explain())
				}
			}
		})
	}
}

// TestGroupByMedianOutOfCore computes medians per group of data several
// times larger than the executor's memory limit: the rows are shuffled by
// group on disk. The exact quantiles of the whole column too: it is sorted
// on disk.
func TestGroupByMedianOutOfCore(t *testing.T) {
	dir := t.TempDir()
	e := local.New(local.WithThreads(2), local.WithLocalDir(dir), local.WithMemoryLimit(1<<20))
	defer e.Close()
	const n, keys = 240_000, 3_000 // 240k rows of two 8-byte columns: 3.7 MiB, 3.7x the limit
	r := rand.New(rand.NewPCG(17, 3))
	ks, vs := make([]int64, n), make([]float64, n)
	byKey := map[int64][]float64{}
	for i := range n {
		ks[i] = int64(r.IntN(keys))
		if r.IntN(4) == 0 {
			ks[i] = 0 // one key holds a quarter of the rows
		}
		vs[i] = float64(r.IntN(1_000_000)) / 16
		byKey[ks[i]] = append(byKey[ks[i]], vs[i])
	}
	f := df.FromTable(compute(t, df.FromColumns("k", ks, "v", vs)), 8)
	got, err := f.GroupBy("k").Median("v").Compute(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	var wk, wm []any
	sorted := make([]int64, 0, len(byKey))
	for k := range byKey {
		sorted = append(sorted, k)
	}
	slices.Sort(sorted)
	for _, k := range sorted {
		xs := byKey[k]
		vals := make([]any, len(xs))
		for i, x := range xs {
			vals[i] = x
		}
		m, _ := refQuantile(vals, 0.5)
		wk, wm = append(wk, k), append(wm, m)
	}
	dftest.AssertEqual(t, got, dftest.Table(t, dftest.Int64s("k", wk...), dftest.Float64s("v", wm...)))

	// The exact quantiles of the whole column sort it on disk.
	qs := []float64{0, 0.25, 0.5, 0.999, 1}
	all := make([]any, n)
	for i, v := range vs {
		all[i] = v
	}
	wq := make([]any, len(qs))
	for i, q := range qs {
		wq[i], _ = refQuantile(all, q)
	}
	gotQ, err := f.Column("v").Quantile(qs...).Compute(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	defer gotQ.Release()
	dftest.AssertEqual(t, gotQ, dftest.Table(t, dftest.Float64s("quantile", anyFloats(qs)...), dftest.Float64s("v", wq...)))
	if files := leftFiles(t, dir); len(files) != 0 {
		t.Errorf("files left after the median: %v", files)
	}
}

func TestDistinctErrors(t *testing.T) {
	f := genDistinct(1, 20, 3, false, false).frame(t, []int{10, 10})
	tests := []struct {
		name string
		err  error
		want []string
	}{
		{"median of strings", f.Column("k").Median().Err(), []string{"Median", `"k"`, "utf8"}},
		{"quantile out of range", f.Column("v").Quantile(1.5).Err(), []string{"Quantile", "1.5"}},
		{"approx of strings", f.Column("k").ApproxQuantile(0.5).Err(), []string{"ApproxQuantile", `"k"`, "utf8"}},
		{"bad keep", f.DropDuplicates(nil, "middle").Err(), []string{"DropDuplicates", "middle"}},
		{"unknown subset column", f.DropDuplicates([]string{"nope"}, "").Err(), []string{"DropDuplicates", "nope"}},
		{"group median of strings", f.GroupBy("g").Median("k").Err(), []string{"GroupBy.Median", `"k"`, "utf8"}},
		{"group quantile out of range", f.GroupBy("g").Quantile(-0.1, "v").Err(), []string{"GroupBy.Quantile", "-0.1"}},
		{"nlargest unknown column", f.NLargest(3, "nope").Err(), []string{"NLargest", "nope"}},
		{"nlargest negative", f.NLargest(-1, "x").Err(), []string{"NLargest", "-1"}},
		{"group nsmallest unknown", f.GroupBy("k").NSmallest(2, "nope").Err(), []string{"GroupBy.NSmallest", "nope"}},
		{"value counts unknown", f.ValueCounts("nope").Err(), []string{"ValueCounts", "nope"}},
	}
	for _, tt := range tests {
		if tt.err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(tt.err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", tt.name, tt.err, w)
			}
		}
	}
}

// TestDistinctExplain shows how the operations run.
func TestDistinctExplain(t *testing.T) {
	f := genDistinct(1, 20, 3, false, false).frame(t, []int{10, 10})
	tests := []struct {
		got  df.DataFrame
		want string
	}{
		{f.GroupBy("k").Median("v"), "hash shuffle by [k] into 2 partitions"},
		{f.DropDuplicates([]string{"k"}, ""), "hash shuffle into 2 partitions"},
		{f.Column("v").ApproxQuantile(0.5), "KLL sketch"},
		{f.Column("v").Quantile(0.5), "sorted, then the values at the ranks picked"},
		{f.Coalesce(2).Column("v").Quantile(0.5), "one partition: selection in one task"},
	}
	for _, tt := range tests {
		if s := tt.got.Explain(); !strings.Contains(s, tt.want) {
			t.Errorf("plan does not say %q:\n%s", tt.want, s)
		}
	}
}

// TestDistinctGraphsCrossProcessBoundary encodes the graphs of the
// operations, decodes them and runs the copies.
func TestDistinctGraphsCrossProcessBoundary(t *testing.T) {
	d := genDistinct(8, 300, 10, true, false)
	f := d.frame(t, []int{100, 0, 120, 80})
	tests := []struct {
		name string
		got  df.DataFrame
	}{
		{"group median", f.GroupBy("k").Median("v", "x")},
		{"group nlargest", f.GroupBy("k", "g").NLargest(2, "x")},
		{"quantile", f.Column("x").Quantile(0.2, 0.5)},
		{"approx quantile", f.Column("v").ApproxQuantile(0.5)},
		{"value counts", f.ValueCounts("k", "g")},
		{"unique", f.Column("k").Unique().Frame()},
		{"nsmallest", f.NSmallest(5, "v", "id")},
		{"drop duplicates", f.DropDuplicates([]string{"k"}, "last")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, keys, err := tt.got.Graph()
			if err != nil {
				t.Fatal(err)
			}
			b, err := graph.Encode(g)
			if err != nil {
				t.Fatal(err)
			}
			g2, err := graph.Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			vals, err := newExec(t).Compute(context.Background(), g2, keys...)
			if err != nil {
				t.Fatal(err)
			}
			recs := make([]arrow.RecordBatch, len(vals))
			for i, v := range vals {
				recs[i] = v.(arrow.RecordBatch)
			}
			got := array.NewTableFromRecords(tt.got.Schema(), recs)
			defer got.Release()
			dftest.AssertEqual(t, got, compute(t, tt.got))
		})
	}
}

func ExampleGroupBy_Median() {
	ctx := context.Background()
	exec := local.New()
	defer exec.Close()

	readings := df.FromColumns(
		"sensor", []string{"a", "b", "a", "b", "a", "c"},
		"temp", []float64{20, 11, 22, 13, 30, 5},
	).Repartition(3)
	// The rows are shuffled by sensor, then each group's median selected.
	medians, err := readings.GroupBy("sensor").Median("temp").Compute(ctx, exec)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer medians.Release()
	fmt.Print(df.FormatTable(medians, 10))

	q, err := readings.Column("temp").Quantile(0.25, 0.5).Compute(ctx, exec)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer q.Release()
	fmt.Print(df.FormatTable(q, 10))
	// Output:
	// sensor  temp
	// a         22
	// b         12
	// c          5
	// [3 rows x 2 columns]
	// quantile  temp
	//     0.25  11.5
	//      0.5  16.5
	// [2 rows x 2 columns]
}

func TestDistinctIndexQuantile(t *testing.T) {
	ctx := context.Background()
	e := newExec(t)
	d := genDistinct(9, 400, 10, false, false)
	f := d.frame(t, []int{100, 0, 200, 100})
	indexed, err := f.DropNull("x").SetIndex(ctx, e, "x")
	if err != nil {
		t.Fatal(err)
	}
	q := indexed.Column("x").Quantile(0.1, 0.5, 0.75)
	if !strings.Contains(q.Explain(), "already sorted by the index") {
		t.Errorf("the quantiles of the index sort again:\n%s", q.Explain())
	}
	var want []any
	for _, p := range []float64{0.1, 0.5, 0.75} {
		w, _ := refQuantile(d.x, p)
		want = append(want, w)
	}
	dftest.AssertEqual(t, compute(t, q), dftest.Table(t, dftest.Float64s("quantile", 0.1, 0.5, 0.75), dftest.Float64s("x", want...)))
}
