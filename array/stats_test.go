package array

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

func TestHistogram(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	for range 10 {
		shape := randShape(rng, 1+rng.IntN(2), 30)
		r := newRef(shape, randFloats(rng, product(shape)))
		r.v[0] = math.NaN()
		bins := 1 + rng.IntN(7)
		lo, hi := -6.0, 5.0+rng.Float64()
		counts, edges := Histogram(r.array(rng), bins, lo, hi)
		e := compute(t, edges).Float64s()
		want := make([]float64, bins)
		for _, v := range r.v {
			if !(v >= lo && v <= hi) {
				continue
			}
			i := sort.SearchFloat64s(e, v)
			if i == len(e) || e[i] != v {
				i--
			}
			want[min(i, bins-1)]++
		}
		got := compute(t, counts)
		if got.DType() != Int64 {
			t.Fatalf("counts dtype %v", got.DType())
		}
		assertClose(t, got, []int{bins}, want, 0)
		if e[0] != lo || e[bins] != hi || len(e) != bins+1 {
			t.Fatalf("edges %v", e)
		}
		he := HistogramEdges(r.array(rng), e)
		assertClose(t, compute(t, he), []int{bins}, want, 0)
	}
	c, _ := Histogram(Zeros([]int{3}), 0, 0, 1)
	mustErr(t, c.Err(), "bins > 0")
	mustErr(t, HistogramEdges(Zeros([]int{3}), []float64{0, 2, 1}).Err(), "edge 2", "increase")
}

func percentileRef(v []float64, q float64) float64 {
	s := slices.Clone(v)
	for _, x := range s {
		if math.IsNaN(x) {
			return math.NaN()
		}
	}
	slices.Sort(s)
	pos := q / 100 * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(s)-1)
	return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
}

func TestPercentile(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	qs := []float64{0, 12.5, 50, 90, 100}
	for range 10 {
		nd := 1 + rng.IntN(3)
		shape := randShape(rng, nd, 7)
		r := newRef(shape, randFloats(rng, product(shape)))
		// All elements.
		var want []float64
		for _, q := range qs {
			want = append(want, percentileRef(r.v, q))
		}
		assertClose(t, compute(t, Percentile(r.array(rng), qs)), []int{len(qs)}, want, 1e-12)
		// Along an axis: shape (len(q), other axes...).
		ax := rng.IntN(nd)
		other := slices.Delete(slices.Clone(shape), ax, ax+1)
		var wv []float64
		for _, q := range qs {
			eachIndex(other, func(idx []int) {
				var lane []float64
				for k := range shape[ax] {
					full := slices.Insert(slices.Clone(idx), ax, k)
					lane = append(lane, r.at(full))
				}
				wv = append(wv, percentileRef(lane, q))
			})
		}
		got := Percentile(r.array(rng), qs, Axis(ax))
		assertClose(t, compute(t, got), append([]int{len(qs)}, other...), wv, 1e-12)
	}
	mustErr(t, Percentile(Zeros([]int{3}), []float64{101}).Err(), "101", "between 0 and 100")
	mustErr(t, Percentile(Zeros([]int{3}), []float64{1}, Axis(0, 1)).Err(), "one axis")
	if v, _ := compute(t, Percentile(FromSlice([]float64{1, math.NaN()}, []int{2}), []float64{50})).At(0); !math.IsNaN(v) {
		t.Fatalf("percentile with NaN %v", v)
	}
}
