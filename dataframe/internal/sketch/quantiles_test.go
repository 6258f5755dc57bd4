package sketch

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// distributions of test data, seeded.
var distributions = map[string]func(rng *rand.Rand, n int) []float64{
	"uniform": func(rng *rand.Rand, n int) []float64 {
		return fill(n, func(int) float64 { return rng.Float64() })
	},
	"normal": func(rng *rand.Rand, n int) []float64 {
		return fill(n, func(int) float64 { return rng.NormFloat64()*10 + 3 })
	},
	"lognormal (skewed)": func(rng *rand.Rand, n int) []float64 {
		return fill(n, func(int) float64 { return math.Exp(rng.NormFloat64() * 3) })
	},
	"zipf (duplicates)": func(rng *rand.Rand, n int) []float64 {
		z := rand.NewZipf(rng, 1.3, 1, 1000)
		return fill(n, func(int) float64 { return float64(z.Uint64()) })
	},
	"one value 90%": func(rng *rand.Rand, n int) []float64 {
		return fill(n, func(int) float64 {
			if rng.IntN(10) > 0 {
				return 42
			}
			return rng.Float64() * 100
		})
	},
	"sorted": func(rng *rand.Rand, n int) []float64 {
		return fill(n, func(i int) float64 { return float64(i) })
	},
	"reversed": func(rng *rand.Rand, n int) []float64 {
		return fill(n, func(i int) float64 { return float64(n - i) })
	},
}

func fill(n int, f func(int) float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

// rankError is how far, as a fraction of n, the rank of v in sorted is
// from q*n: 0 when some position of v (duplicates span several) is q*n.
func rankError(sorted []float64, v, q float64) float64 {
	n := float64(len(sorted))
	lo := float64(sort.SearchFloat64s(sorted, v))                                      // values below v
	hi := float64(sort.Search(len(sorted), func(i int) bool { return sorted[i] > v })) // values at most v
	target := q * n
	switch {
	case target < lo:
		return (lo - target) / n
	case target > hi:
		return (target - hi) / n
	}
	return 0
}

var probes = []float64{0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999}

// maxRankError queries the sketch at the probes and returns the worst
// rank error.
func maxRankError(s *Quantiles, sorted []float64) (float64, float64) {
	worst, at := 0.0, 0.0
	got := s.Quantiles(probes...)
	for i, q := range probes {
		if e := rankError(sorted, got[i], q); e > worst {
			worst, at = e, q
		}
	}
	return worst, at
}

// The rank error stays within the documented bound on every distribution,
// for a sketch fed directly and for one merged from 50 partial sketches.
func TestAccuracy(t *testing.T) {
	const n = 200000
	for name, gen := range distributions {
		for _, k := range []int{200, 800} {
			bound := RankError(k)
			for seed := range uint64(2) {
				rng := rand.New(rand.NewPCG(seed, 99))
				data := gen(rng, n)
				sorted := slices.Clone(data)
				slices.Sort(sorted)
				whole := New(k, seed)
				whole.Add(data...)
				merged := New(k, seed)
				parts := 50
				for p := range parts {
					part := New(k, seed*1000+uint64(p))
					part.Add(data[p*n/parts : (p+1)*n/parts]...)
					merged.Merge(part)
				}
				for what, s := range map[string]*Quantiles{"whole": whole, "merged": merged} {
					if s.Count() != n {
						t.Fatalf("%s %s: count %d, want %d", name, what, s.Count(), n)
					}
					e, q := maxRankError(s, sorted)
					if e > bound {
						t.Errorf("%s, k=%d, seed %d, %s: rank error %.4f at q=%v, bound %.4f", name, k, seed, what, e, q, bound)
					}
					if s.Quantile(0) != sorted[0] || s.Quantile(1) != sorted[n-1] {
						t.Errorf("%s %s: min/max %v %v, want %v %v", name, what, s.Quantile(0), s.Quantile(1), sorted[0], sorted[n-1])
					}
				}
			}
		}
	}
}

// TestAccuracyReport logs the worst rank error seen per distribution (run
// with -v), for the figures in the documentation.
func TestAccuracyReport(t *testing.T) {
	if !testing.Verbose() {
		t.Skip("a report: run with -v")
	}
	const n = 1000000
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range distributions {
			if !yield(k) {
				return
			}
		}
	}) {
		rng := rand.New(rand.NewPCG(7, 7))
		data := distributions[name](rng, n)
		sorted := slices.Clone(data)
		slices.Sort(sorted)
		s := New(0, 1)
		s.Add(data...)
		e, q := maxRankError(s, sorted)
		b, _ := s.MarshalBinary()
		t.Logf("%-20s n=%d k=%d: worst rank error %.4f (at q=%v), bound %.4f, %d items, %d bytes encoded", name, n, s.K(), e, q, s.RankError(), s.size, len(b))
	}
}

// Few values: the sketch holds them all and is exact.
func TestSmall(t *testing.T) {
	s := New(0, 0)
	if !math.IsNaN(s.Quantile(0.5)) || !math.IsNaN(s.Min()) || s.Count() != 0 || s.Divisions(4) != nil {
		t.Error("empty sketch: want NaN, no divisions")
	}
	s.Add(5)
	if s.Quantile(0) != 5 || s.Quantile(0.5) != 5 || s.Quantile(1) != 5 {
		t.Error("one value: want it at every q")
	}
	s.Add(3, math.NaN(), 1, 4, 2)
	if s.Count() != 5 {
		t.Errorf("count %d, want 5 (NaN skipped)", s.Count())
	}
	if got := s.Quantiles(0, 0.2, 0.5, 0.8, 1, 1.5, -1); fmt.Sprint(got) != "[1 1 3 4 5 NaN NaN]" {
		t.Errorf("quantiles %v", got)
	}
	if r := s.Rank(3); r != 0.6 {
		t.Errorf("rank of 3: %v, want 0.6", r)
	}
	if d := s.Divisions(5); fmt.Sprint(d) != "[1 2 3 4]" {
		t.Errorf("divisions %v", d)
	}
	c := New(0, 0)
	c.Add(7, 7, 7, 7)
	if d := c.Divisions(4); fmt.Sprint(d) != "[7]" {
		t.Errorf("divisions of a constant: %v, want one", d)
	}
}

// Encoding round trips (directly and through gob), and a decoded sketch
// keeps working like the original.
func TestMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	s := New(100, 5)
	s.Add(distributions["normal"](rng, 50000)...)
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var d Quantiles
	if err := d.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(s); err != nil {
		t.Fatal(err)
	}
	var g Quantiles
	if err := gob.NewDecoder(&buf).Decode(&g); err != nil {
		t.Fatal(err)
	}
	more := distributions["uniform"](rng, 20000)
	for _, x := range []*Quantiles{s, &d, &g} {
		x.Add(more...)
	}
	want := fmt.Sprint(s.Quantiles(probes...))
	for what, x := range map[string]*Quantiles{"binary": &d, "gob": &g} {
		if got := fmt.Sprint(x.Quantiles(probes...)); got != want {
			t.Errorf("%s: after decoding and adding: %s, want %s", what, got, want)
		}
	}
	for _, bad := range [][]byte{nil, []byte("KLL2"), b[:len(b)-3], append(slices.Clone(b), 0)} {
		if err := new(Quantiles).UnmarshalBinary(bad); err == nil {
			t.Errorf("decoding %d bad bytes: no error", len(bad))
		}
	}
}

// The same values, order and seed make the same sketch.
func TestDeterministic(t *testing.T) {
	data := distributions["lognormal (skewed)"](rand.New(rand.NewPCG(4, 4)), 30000)
	a, b := New(0, 9), New(0, 9)
	a.Add(data...)
	for _, v := range data {
		b.Add(v)
	}
	ea, _ := a.MarshalBinary()
	eb, _ := b.MarshalBinary()
	if !bytes.Equal(ea, eb) {
		t.Error("adding in one call or one by one made different sketches")
	}
}

func TestAddArray(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ib := array.NewInt64Builder(mem)
	ib.AppendValues([]int64{5, 1, 0, 3}, []bool{true, true, false, true})
	ia := ib.NewArray()
	ib.Release()
	defer ia.Release()
	fb := array.NewFloat32Builder(mem)
	fb.AppendValues([]float32{2, float32(math.NaN()), 4}, nil)
	fa := fb.NewArray()
	fb.Release()
	defer fa.Release()
	s := New(0, 0)
	for _, a := range []arrow.Array{ia, fa} {
		if err := s.AddArray(a); err != nil {
			t.Fatal(err)
		}
	}
	if s.Count() != 5 || s.Quantile(0.5) != 3 {
		t.Errorf("count %d, median %v: want 5 and 3 (nulls and NaN skipped)", s.Count(), s.Quantile(0.5))
	}
	sb := array.NewStringBuilder(mem)
	sb.Append("x")
	sa := sb.NewArray()
	sb.Release()
	defer sa.Release()
	if err := s.AddArray(sa); err == nil {
		t.Error("adding strings: no error")
	}
}
