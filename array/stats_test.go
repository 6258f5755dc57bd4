package array

import (
	"math"
	"math/rand/v2"
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
