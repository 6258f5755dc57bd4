package dataframe_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	df "github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/dataframe/dftest"
	"github.com/shoal-data/shoal/local"
)

// joinSide is one side of a reference join: keys k (nullable) and g, a
// value v (a name both sides have) and a column of its own.
type joinSide struct {
	k   []*int64
	g   []string
	v   []float64
	own []int64
}

func makeSide(seed uint64, n, keys int, skew bool) joinSide {
	r := rand.New(rand.NewPCG(seed, 7))
	var s joinSide
	for i := range n {
		var k *int64
		if r.IntN(15) != 0 {
			x := int64(r.IntN(keys))
			if skew && r.IntN(3) == 0 {
				x = 1
			}
			k = &x
		}
		s.k = append(s.k, k)
		s.g = append(s.g, fmt.Sprintf("g%d", r.IntN(2)))
		s.v = append(s.v, float64(r.IntN(1000))/8)
		s.own = append(s.own, int64(seed)*1_000_000+int64(i))
	}
	return s
}

func (s joinSide) frame(t *testing.T, names [4]string, parts int) df.DataFrame {
	tbl := compute(t, df.FromColumns(names[0], s.k, names[1], s.g, names[2], s.v, names[3], s.own))
	return df.FromTable(tbl, parts)
}

// referenceJoin joins with nested loops on (k, g); keys named the same
// on both sides appear once (the left key, or the right one for right-only
// rows), v gets suffixes.
func referenceJoin(t *testing.T, l, r joinSide, how string, sameNames bool) []dftest.Column {
	var k, rk []any
	var g, rg []any
	var lv, rv, lo, ro []any
	matchedR := make([]bool, len(r.k))
	emit := func(i, j int) {
		if i >= 0 {
			k = append(k, ptr(l.k[i]))
			g = append(g, l.g[i])
			lv = append(lv, l.v[i])
			lo = append(lo, l.own[i])
		} else {
			if sameNames {
				k = append(k, ptr(r.k[j]))
				g = append(g, r.g[j])
			} else {
				k = append(k, nil)
				g = append(g, nil)
			}
			lv = append(lv, nil)
			lo = append(lo, nil)
		}
		if j >= 0 {
			rk = append(rk, ptr(r.k[j]))
			rg = append(rg, r.g[j])
			rv = append(rv, r.v[j])
			ro = append(ro, r.own[j])
		} else {
			rk, rg, rv, ro = append(rk, nil), append(rg, nil), append(rv, nil), append(ro, nil)
		}
	}
	match := func(i, j int) bool {
		return l.k[i] != nil && r.k[j] != nil && *l.k[i] == *r.k[j] && l.g[i] == r.g[j]
	}
	if how == "right" {
		for j := range r.k {
			any := false
			for i := range l.k {
				if match(i, j) {
					emit(i, j)
					any = true
				}
			}
			if !any {
				emit(-1, j)
			}
		}
	} else {
		for i := range l.k {
			any := false
			for j := range r.k {
				if match(i, j) {
					emit(i, j)
					any, matchedR[j] = true, true
				}
			}
			if !any && (how == "left" || how == "outer") {
				emit(i, -1)
			}
		}
		if how == "outer" {
			for j := range r.k {
				if !matchedR[j] {
					emit(-1, j)
				}
			}
		}
	}
	if sameNames {
		return []dftest.Column{dftest.Int64s("k", k...), dftest.Strings("g", g...), dftest.Float64s("v_x", lv...),
			dftest.Int64s("lown", lo...), dftest.Float64s("v_y", rv...), dftest.Int64s("rown", ro...)}
	}
	return []dftest.Column{dftest.Int64s("k", k...), dftest.Strings("g", g...), dftest.Float64s("v_x", lv...),
		dftest.Int64s("lown", lo...), dftest.Int64s("rk", rk...), dftest.Strings("rg", rg...),
		dftest.Float64s("v_y", rv...), dftest.Int64s("rown", ro...)}
}

func ptr(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestMerge(t *testing.T) {
	for _, tc := range []struct {
		name                string
		nl, nr, keys        int
		lparts, rparts      int
		broadcast           int64
		skew, differentKeys bool
		strategy            string // expected in Explain
	}{
		{name: "shuffle", nl: 600, nr: 400, keys: 60, lparts: 4, rparts: 3, broadcast: -1, strategy: "hash shuffle"},
		{name: "broadcast", nl: 600, nr: 100, keys: 40, lparts: 5, rparts: 2, strategy: "broadcast"},
		{name: "skewed", nl: 500, nr: 300, keys: 30, lparts: 3, rparts: 4, broadcast: -1, skew: true, strategy: "hash shuffle"},
		{name: "single partitions", nl: 50, nr: 70, keys: 10, lparts: 1, rparts: 1, broadcast: -1, strategy: "one partition each"},
		{name: "more partitions than rows", nl: 5, nr: 3, keys: 3, lparts: 8, rparts: 6, broadcast: -1, strategy: "hash shuffle"},
		{name: "different key names", nl: 300, nr: 200, keys: 25, lparts: 3, rparts: 2, broadcast: -1, differentKeys: true, strategy: "hash shuffle"},
		{name: "different key names broadcast", nl: 300, nr: 200, keys: 25, lparts: 3, rparts: 2, differentKeys: true, strategy: "broadcast"},
	} {
		for _, how := range []string{"inner", "left", "right", "outer"} {
			t.Run(tc.name+"/"+how, func(t *testing.T) {
				ls := makeSide(1, tc.nl, tc.keys, tc.skew)
				rs := makeSide(2, tc.nr, tc.keys, tc.skew)
				left := ls.frame(t, [4]string{"k", "g", "v", "lown"}, tc.lparts)
				opts := df.MergeOptions{How: how, BroadcastBytes: tc.broadcast, On: []string{"k", "g"}}
				rnames := [4]string{"k", "g", "v", "rown"}
				if tc.differentKeys {
					rnames = [4]string{"rk", "rg", "v", "rown"}
					opts.On, opts.LeftOn, opts.RightOn = nil, []string{"k", "g"}, []string{"rk", "rg"}
				}
				right := rs.frame(t, rnames, tc.rparts)
				m := left.Merge(right, opts)
				if err := m.Err(); err != nil {
					t.Fatal(err)
				}
				plan := m.Explain()
				wantStrategy := tc.strategy
				if wantStrategy == "broadcast" && how == "outer" && tc.lparts > 1 {
					wantStrategy = "hash shuffle" // an outer join cannot broadcast
				}
				if !strings.Contains(plan, wantStrategy) {
					t.Errorf("plan does not say %q:\n%s", wantStrategy, plan)
				}
				want := dftest.Table(t, referenceJoin(t, ls, rs, how, !tc.differentKeys)...)
				dftest.AssertEqual(t, compute(t, m), want, dftest.IgnoreRowOrder())
			})
		}
	}
}

func TestMergeErrors(t *testing.T) {
	a := df.FromColumns("k", []int64{1, 2}, "s", []string{"a", "b"})
	b := df.FromColumns("k", []string{"1", "2"}, "x", []float64{1, 2})
	c := df.FromColumns("z", []int64{1})
	for _, tc := range []struct {
		name string
		m    df.DataFrame
		want string
	}{
		{"unknown key", a.Merge(b, df.MergeOptions{On: []string{"nope"}}), "nope"},
		{"key types", a.Merge(b, df.MergeOptions{On: []string{"k"}}), "int64"},
		{"no common columns", a.Merge(c), "no column in common"},
		{"bad how", a.Merge(a, df.MergeOptions{How: "cross-ish"}), "cross-ish"},
		{"key counts", a.Merge(a, df.MergeOptions{LeftOn: []string{"k", "s"}, RightOn: []string{"k"}}), "as many"},
		{"no index", a.Merge(a, df.MergeOptions{LeftIndex: true, RightIndex: true}), "no index"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.m.Err()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one that says %q", err, tc.want)
			}
		})
	}
}

// TestMergeAligned joins two frames indexed alike partition by partition,
// without a shuffle.
func TestMergeAligned(t *testing.T) {
	ctx := context.Background()
	e := newExec(t)
	var lk, rk, allk []int64
	var lv, rv, allv []float64
	var keep []bool
	for i := range 1000 {
		lk = append(lk, int64(i))
		lv = append(lv, float64(i)/2)
		allk, allv, keep = append(allk, int64(i)), append(allv, float64(i)*3), append(keep, i%3 != 0)
		if i%3 != 0 {
			rk = append(rk, int64(i))
			rv = append(rv, float64(i)*3)
		}
	}
	left, err := df.FromTable(compute(t, df.FromColumns("k", lk, "a", lv)), 4).SetIndex(ctx, e, "k", df.IndexOptions{Sorted: true})
	if err != nil {
		t.Fatal(err)
	}
	right, err := df.FromTable(compute(t, df.FromColumns("k", allk, "b", allv, "keep", keep)), 4).SetIndex(ctx, e, "k", df.IndexOptions{Sorted: true})
	if err != nil {
		t.Fatal(err)
	}
	right = right.Filter(df.Col("keep")).Drop("keep") // keeps the index
	if !reflect.DeepEqual(left.Divisions(), right.Divisions()) {
		t.Fatalf("divisions differ: %v and %v", left.Divisions(), right.Divisions())
	}
	m := left.Merge(right, df.MergeOptions{LeftIndex: true, RightIndex: true})
	if plan := m.Explain(); !strings.Contains(plan, "aligned partitions") || strings.Contains(plan, "Shuffle") {
		t.Errorf("plan is not an aligned merge:\n%s", plan)
	}
	if m.Index() != "k" {
		t.Errorf("index %q, want k", m.Index())
	}
	var wk, wa, wb []any
	for i, k := range rk {
		wk, wa, wb = append(wk, k), append(wa, float64(k)/2), append(wb, rv[i])
	}
	want := dftest.Table(t, dftest.Int64s("k", wk...), dftest.Float64s("a", wa...), dftest.Float64s("b", wb...))
	dftest.AssertEqual(t, compute(t, m), want)
}

// TestMergeOutOfCore joins two frames much larger than the executor's
// memory limit through a shuffle on disk.
func TestMergeOutOfCore(t *testing.T) {
	dir := t.TempDir()
	e := local.New(local.WithThreads(2), local.WithLocalDir(dir), local.WithMemoryLimit(1<<20))
	defer e.Close()
	const n = 60_000
	r := rand.New(rand.NewPCG(5, 5))
	lk, rk := make([]int64, n), make([]int64, n)
	lo, ro := make([]int64, n), make([]int64, n)
	count := map[int64]int64{}
	sum := map[int64]int64{}
	for i := range n {
		lk[i], rk[i] = int64(r.IntN(n)), int64(r.IntN(n))
		lo[i], ro[i] = int64(i), int64(i)
		count[rk[i]]++
		sum[rk[i]] += ro[i]
	}
	var wantRows, wantSum int64
	for i := range n {
		c := count[lk[i]]
		wantRows += max(c, 1) // a left join keeps unmatched rows
		wantSum += c*lo[i] + sum[lk[i]]
	}
	left := df.FromTable(compute(t, df.FromColumns("k", lk, "lo", lo)), 6)
	right := df.FromTable(compute(t, df.FromColumns("k", rk, "ro", ro)), 6)
	m := left.Merge(right, df.MergeOptions{How: "left", BroadcastBytes: -1, Partitions: 12})
	got, err := m.Agg(df.Count("k").As("rows"), df.Sum("lo").As("lo"), df.Sum("ro").As("ro")).Compute(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	var lcount int64
	for i := range n {
		lcount += max(count[lk[i]], 1) * lo[i]
	}
	wantLo := lcount
	wantRo := wantSum - func() int64 {
		var s int64
		for i := range n {
			s += count[lk[i]] * lo[i]
		}
		return s
	}()
	want := dftest.Table(t, dftest.Int64s("rows", wantRows), dftest.Int64s("lo", wantLo), dftest.Int64s("ro", wantRo))
	dftest.AssertEqual(t, got, want)
	if files := leftFiles(t, dir); len(files) != 0 {
		t.Errorf("files left after the join: %v", files)
	}
}

// TestMergeEdgeCases: an all-null key column, an empty side, keys of
// different integer widths and of dictionary and plain strings.
func TestMergeEdgeCases(t *testing.T) {
	nulls := df.FromColumns("k", []*int64{nil, nil, nil}, "a", []int64{1, 2, 3})
	right := df.FromColumns("k", []int64{1, 2}, "b", []string{"x", "y"})
	empty := df.FromSchema(right.Schema())
	narrow := df.FromColumns("k", []int32{2, 3}, "c", []float64{0.5, 1.5})
	for _, tc := range []struct {
		name string
		m    df.DataFrame
		want arrow.Table
	}{
		{"all-null keys, inner", nulls.Merge(right, df.MergeOptions{BroadcastBytes: -1}),
			dftest.Table(t, dftest.Int64s("k"), dftest.Int64s("a"), dftest.Strings("b"))},
		{"all-null keys, left", nulls.Merge(right, df.MergeOptions{How: "left", BroadcastBytes: -1}),
			dftest.Table(t, dftest.Int64s("k", nil, nil, nil), dftest.Int64s("a", 1, 2, 3), dftest.Strings("b", nil, nil, nil))},
		{"empty right, left", right.Merge(empty.Rename(map[string]string{"b": "c"}), df.MergeOptions{How: "left"}),
			dftest.Table(t, dftest.Int64s("k", 1, 2), dftest.Strings("b", "x", "y"), dftest.Strings("c", nil, nil))},
		{"empty right, inner, shuffled", right.Merge(empty.Rename(map[string]string{"b": "c"}), df.MergeOptions{BroadcastBytes: -1}),
			dftest.Table(t, dftest.Int64s("k"), dftest.Strings("b"), dftest.Strings("c"))},
		{"int64 with int32 keys, shuffled", right.Merge(narrow, df.MergeOptions{BroadcastBytes: -1}),
			dftest.Table(t, dftest.Int64s("k", 2), dftest.Strings("b", "y"), dftest.Float64s("c", 0.5))},
		{"int64 with int32 keys, outer", right.Merge(narrow, df.MergeOptions{How: "outer"}),
			dftest.Table(t, dftest.Int64s("k", 1, 2, 3), dftest.Strings("b", "x", "y", nil), dftest.Float64s("c", nil, 0.5, 1.5))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.m.Err(); err != nil {
				t.Fatal(err)
			}
			dftest.AssertEqual(t, compute(t, tc.m), tc.want, dftest.IgnoreRowOrder(), dftest.CheckTypes(false))
		})
	}
}

// TestMergeDictionaryKeys joins Parquet string keys (read as dictionaries)
// with plain string keys, shuffled and broadcast.
func TestMergeDictionaryKeys(t *testing.T) {
	ctx := context.Background()
	e := newExec(t)
	dir := t.TempDir()
	src := df.FromColumns("city", []string{"lima", "oslo", "rome", "oslo"}, "n", []int64{1, 2, 3, 4})
	if _, err := src.WriteParquet(ctx, e, dir); err != nil {
		t.Fatal(err)
	}
	pq, err := df.ReadParquet(ctx, filepath.Join(dir, "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if typ := pq.Schema().Field(0).Type; typ.ID() != arrow.DICTIONARY {
		t.Logf("city read as %s", typ)
	}
	plain := df.FromColumns("city", []string{"oslo", "rome", "paris"}, "country", []string{"NO", "IT", "FR"})
	want := dftest.Table(t, dftest.Strings("city", "oslo", "rome", "oslo"), dftest.Int64s("n", 2, 3, 4),
		dftest.Strings("country", "NO", "IT", "NO"))
	for _, bb := range []int64{-1, 0} {
		m := pq.Merge(plain, df.MergeOptions{On: []string{"city"}, BroadcastBytes: bb})
		dftest.AssertEqual(t, compute(t, m), want, dftest.IgnoreRowOrder(), dftest.CheckTypes(false))
	}
}
