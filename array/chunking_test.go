package array

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The result of every operation must not depend on the chunks beyond the
// order of floating-point additions. Each case below computes the same
// operation on the same numbers cut into one chunk and into random
// chunks, and compares the two: exactly for integer, boolean, selection
// and shape results, within tol (relative to max(1, |value|)) where sums
// are reassociated: 1e-12 for sums, means and variances, 1e-10 for the
// factorizations, whose blocked algorithms round differently.
func TestChunkingIndependence(t *testing.T) {
	type opCase struct {
		name string
		tol  float64
		nd   int // the number of axes of the input; 0 for any of 1..3
		f    func(x Array) Array
	}
	square := func(x Array) Array { // a well-conditioned square matrix made from x
		n := x.Shape()[1]
		return x.Index(Slice(0, n), All()).Add(Eye(n).Mul(30))
	}
	cases := []opCase{
		{"elementwise", 1e-14, 0, func(x Array) Array { return x.Mul(x).Sub(x.Abs().Sqrt()).Add(x.Sin().Mul(x.Exp().Clip(0, 3))) }},
		{"broadcast", 1e-14, 2, func(x Array) Array { return x.Sub(x.Mean(Axis(0))).Div(x.Std(Axis(0)).Add(1)) }},
		{"sum", 1e-12, 0, func(x Array) Array { return x.Sum() }},
		{"mean axis 0 keepdims", 1e-12, 0, func(x Array) Array { return x.Mean(Axis(0), KeepDims()) }},
		{"var last axis", 1e-12, 0, func(x Array) Array { return x.Var(Axis(x.NDim()-1), Ddof(1)) }},
		{"prod", 1e-12, 0, func(x Array) Array { return x.Div(40).Add(1).Prod(Axis(0)) }},
		{"nansum", 1e-12, 0, func(x Array) Array { return Where(x.Gt(5), math.NaN(), x).NanSum(Axis(0)) }},
		{"min max", 0, 0, func(x Array) Array { return x.Min(Axis(0)).Add(x.Max()) }},
		{"argmax", 0, 2, func(x Array) Array { return x.ArgMax(Axis(1)) }},
		{"argmin flat", 0, 0, func(x Array) Array { return x.ArgMin() }},
		{"any all", 0, 2, func(x Array) Array { return x.Gt(9).Any(Axis(0)).And(x.Gt(-9).All(Axis(0))) }},
		{"cumsum", 1e-12, 0, func(x Array) Array { return x.CumSum(0) }},
		{"cumprod", 1e-12, 2, func(x Array) Array { return x.Div(40).Add(1).CumProd(1) }},
		{"percentile", 0, 1, func(x Array) Array { return Percentile(x, []float64{0, 10, 50, 99, 100}) }},
		{"histogram", 0, 0, func(x Array) Array { c, _ := Histogram(x, 7, -10, 10); return c }},
		{"slice", 0, 2, func(x Array) Array { return x.Index(Step(-1, 0, -2), Slice(1, Open)) }},
		{"take", 0, 0, func(x Array) Array { return x.Index(Take(1, 0, -1, 1)) }},
		{"mask", 1e-12, 2, func(x Array) Array { return x.Mask(x.Index(All(), At(0)).Gt(0)).Sum(Axis(0)) }},
		{"transpose reshape", 0, 3, func(x Array) Array { return x.Transpose(2, 0, 1).Reshape(-1) }},
		{"concatenate stack", 0, 2, func(x Array) Array {
			return Stack([]Array{Concatenate([]Array{x, x.Mul(2)}, 0), Concatenate([]Array{x.Neg(), x}, 0)}, 1)
		}},
		{"map overlap", 1e-14, 0, func(x Array) Array { return x.MapOverlap(stencil, []int{1}, WithBoundary(BoundaryPeriodic)) }},
		{"matmul", 1e-12, 2, func(x Array) Array { return MatMul(x.T(), x) }},
		{"tensordot", 1e-12, 3, func(x Array) Array { return TensorDot(x, x, []int{0, 2}, []int{0, 2}) }},
		{"norm", 1e-12, 2, func(x Array) Array { return Norm(x, Fro).Add(Norm(x, P(1))) }},
		{"qr gram", 1e-10, 2, func(x Array) Array { _, r := QR(x); return MatMul(r.T(), r) }},
		{"singular values", 1e-10, 2, func(x Array) Array { _, s, _ := SVD(x); return s }},
		{"solve", 1e-10, 2, func(x Array) Array { a := square(x); return Solve(a, x.Index(Slice(0, a.Shape()[0]), At(0))) }},
		{"lstsq", 1e-10, 2, func(x Array) Array { r, _ := Lstsq(x, x.Sum(Axis(1))); return r }},
		{"cholesky", 1e-10, 2, func(x Array) Array { return Cholesky(MatMul(x.T(), x).Add(Eye(x.Shape()[1]))) }},
	}
	rng := rand.New(rand.NewPCG(41, 42))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for trial := range 4 {
				nd := c.nd
				if nd == 0 {
					nd = 1 + rng.IntN(3)
				}
				shape := randShape(rng, nd, 7)
				for a := range shape {
					shape[a]++ // at least 2 long
				}
				if nd == 2 {
					// Tall, for the factorizations.
					shape[0] = shape[1] + rng.IntN(12)
				}
				vals := randFloats(rng, product(shape))
				whole := FromSlice(vals, shape, Chunks(-1))
				chunked := FromSlice(vals, shape, ChunkSizes(randChunks(rng, shape)...))
				want := c.f(whole)
				got := c.f(chunked)
				if err := want.Err(); err != nil {
					t.Fatalf("shape %v: %v", shape, err)
				}
				if err := got.Err(); err != nil {
					t.Fatalf("shape %v, chunks %v: %v", shape, chunked.Chunks(), err)
				}
				if len(chunked.Chunks()[0]) == 1 && trial == 0 && nd > 1 {
					// Force several chunks at least once.
					chunked = chunked.Rechunk(Chunks(1))
					got = c.f(chunked)
				}
				wd := compute(t, want)
				gd := compute(t, got)
				if gd.DType() != wd.DType() {
					t.Fatalf("shape %v, chunks %v: dtype %v, one chunk gives %v", shape, chunked.Chunks(), gd.DType(), wd.DType())
				}
				assertClose(t, gd, wd.Shape(), wd.Float64s(), c.tol)
			}
		})
	}
}
