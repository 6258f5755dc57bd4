package joink

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/dataframe/dftest"
)

// side is one side of a random join, as Go values: keys (nil is null) and
// the string key of the two-key joins.
type side struct {
	keys []any
	strs []any
}

// genSide draws n keys: with skew, key 0 holds about 80% of the rows;
// sparse keys are spread over a huge range (the hash table path), dense
// ones over [0, distinct) (the direct lookup table path).
func genSide(r *rand.Rand, n, distinct int, skew, sparse bool, nullFrac float64) side {
	s := side{keys: make([]any, n), strs: make([]any, n)}
	for i := range n {
		if r.Float64() < nullFrac {
			s.keys[i] = nil
		} else {
			k := int64(r.IntN(distinct))
			if skew && r.IntN(5) != 0 {
				k = 0
			}
			if sparse {
				k = k*1_000_000_007 - 3_000_000_000
			}
			s.keys[i] = k
		}
		s.strs[i] = []string{"a", "b", "a-long-key-of-more-than-sixteen-bytes"}[r.IntN(3)]
	}
	return s
}

func (s side) record(t *testing.T, payload string, twoKeys bool) arrow.RecordBatch {
	idx := make([]any, len(s.keys))
	for i := range idx {
		idx[i] = i
	}
	cols := []dftest.Column{dftest.Int64s("k", s.keys...), dftest.Int64s(payload, idx...)}
	if twoKeys {
		cols = append(cols, dftest.Strings("s", s.strs...))
	}
	return dftest.Record(t, cols...)
}

// naiveJoin is the reference: nested loops over the rows, in the order
// Join documents.
func naiveJoin(l, r side, how How, twoKeys bool) [][2]int {
	eq := func(i, j int) bool {
		if l.keys[i] == nil || r.keys[j] == nil || l.keys[i] != r.keys[j] {
			return false
		}
		return !twoKeys || l.strs[i] == r.strs[j]
	}
	var pairs [][2]int
	if how == Right {
		for j := range r.keys {
			found := false
			for i := range l.keys {
				if eq(i, j) {
					pairs = append(pairs, [2]int{i, j})
					found = true
				}
			}
			if !found {
				pairs = append(pairs, [2]int{-1, j})
			}
		}
		return pairs
	}
	matched := make([]bool, len(r.keys))
	for i := range l.keys {
		found := false
		for j := range r.keys {
			if eq(i, j) {
				pairs = append(pairs, [2]int{i, j})
				found, matched[j] = true, true
			}
		}
		if !found && how != Inner {
			pairs = append(pairs, [2]int{i, -1})
		}
	}
	if how == Outer {
		for j, m := range matched {
			if !m {
				pairs = append(pairs, [2]int{-1, j})
			}
		}
	}
	return pairs
}

func expected(t *testing.T, l, r side, pairs [][2]int, how How, twoKeys bool) arrow.RecordBatch {
	var k, a, b, s []any
	for _, p := range pairs {
		i, j := p[0], p[1]
		switch {
		case how == Right || i < 0:
			k = append(k, r.keys[j])
		default:
			k = append(k, l.keys[i])
		}
		if i >= 0 {
			a = append(a, i)
			s = append(s, l.strs[i])
		} else {
			a = append(a, nil)
			s = append(s, nil)
		}
		if j >= 0 {
			b = append(b, j)
		} else {
			b = append(b, nil)
		}
		if twoKeys && how != Right && i < 0 {
			s[len(s)-1] = r.strs[j]
		}
		if twoKeys && how == Right {
			s[len(s)-1] = r.strs[j]
		}
	}
	cols := []dftest.Column{dftest.Int64s("k", k...), dftest.Int64s("a", a...)}
	if twoKeys {
		cols = append(cols, dftest.Strings("s", s...))
	}
	cols = append(cols, dftest.Int64s("b", b...))
	return dftest.Record(t, cols...)
}

func TestJoinRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	type config struct {
		nl, nr, distinct int
		skew, sparse     bool
		twoKeys          bool
		nullFrac         float64
	}
	configs := []config{
		{300, 200, 50, false, false, false, 0.05},
		{300, 200, 50, false, true, false, 0.05},
		{400, 300, 30, true, false, false, 0},
		{400, 300, 30, true, true, true, 0.1},
		{200, 500, 1000, false, true, false, 0},
		{1, 300, 5, true, false, true, 0},
		{250, 1, 3, false, false, false, 0.3},
	}
	for ci, c := range configs {
		for _, how := range []How{Inner, Left, Right, Outer} {
			t.Run(fmt.Sprintf("%d/%s", ci, how), func(t *testing.T) {
				ls := genSide(r, c.nl, c.distinct, c.skew, c.sparse, c.nullFrac)
				rs := genSide(r, c.nr, c.distinct, c.skew, c.sparse, c.nullFrac)
				left, right := ls.record(t, "a", c.twoKeys), rs.record(t, "b", c.twoKeys)
				on := []string{"k"}
				if c.twoKeys {
					on = append(on, "s")
				}
				spec := Spec{How: how, LeftOn: on, RightOn: on}
				got := join(t, left, right, spec)
				want := expected(t, ls, rs, naiveJoin(ls, rs, how, c.twoKeys), how, c.twoKeys)
				dftest.AssertEqual(t, got, want)
			})
		}
	}
}

// TestProbeMany builds once and probes with the left side cut at random
// points, concurrently: the outputs in order, then the unmatched rows,
// must be the join of the whole sides.
func TestProbeMany(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ctx := context.Background()
	for _, how := range []How{Inner, Left, Outer} {
		t.Run(how.String(), func(t *testing.T) {
			mem := checkedAlloc(t)
			ls := genSide(r, 2000, 300, true, false, 0.05)
			rs := genSide(r, 500, 300, false, false, 0.05)
			left, right := ls.record(t, "a", false), rs.record(t, "b", false)
			spec := Spec{How: how, LeftOn: []string{"k"}, RightOn: []string{"k"}}
			want := join(t, left, right, spec)

			ht, err := Build(ctx, right, []string{"k"}, mem)
			if err != nil {
				t.Fatal(err)
			}
			defer ht.Release()
			cuts := []int64{0}
			for cuts[len(cuts)-1] < left.NumRows() {
				cuts = append(cuts, min(left.NumRows(), cuts[len(cuts)-1]+int64(r.IntN(400))))
			}
			outs := make([]arrow.RecordBatch, len(cuts)-1)
			errs := make([]error, len(cuts)-1)
			var wg sync.WaitGroup
			for i := range outs {
				wg.Go(func() {
					part := left.NewSlice(cuts[i], cuts[i+1])
					defer part.Release()
					outs[i], errs[i] = Probe(ctx, ht, part, spec, mem)
				})
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			rest, err := ht.Unmatched(ctx, left.Schema(), spec, mem)
			if err != nil {
				t.Fatal(err)
			}
			all := append(outs, rest)
			got, err := Concat(mem, all...)
			for _, o := range all {
				o.Release()
			}
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			dftest.AssertEqual(t, got, want)
		})
	}
}

// TestBuildLeft probes with the right side a table built on the left, for
// the joins that keep the left side (the build side) or not.
func TestBuildLeft(t *testing.T) {
	left, right := lr(t)
	ctx := context.Background()
	mem := checkedAlloc(t)
	for _, how := range []How{Inner, Left, Right, Outer} {
		t.Run(how.String(), func(t *testing.T) {
			spec := Spec{How: how, LeftOn: []string{"k"}, RightOn: []string{"k"}, Build: LeftSide}
			ht, err := Build(ctx, left, []string{"k"}, mem)
			if err != nil {
				t.Fatal(err)
			}
			defer ht.Release()
			out, err := Probe(ctx, ht, right, spec, mem)
			if err != nil {
				t.Fatal(err)
			}
			defer out.Release()
			rest, err := ht.Unmatched(ctx, right.Schema(), spec, mem)
			if err != nil {
				t.Fatal(err)
			}
			defer rest.Release()
			got, err := Concat(mem, out, rest)
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			want := join(t, left, right, Spec{How: how, LeftOn: []string{"k"}, RightOn: []string{"k"}})
			// Same rows, in another order (right order here).
			dftest.AssertEqual(t, got, want, dftest.IgnoreRowOrder())
		})
	}
}
