package array

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/shoal-data/shoal/graph"
)

// Functions registered by name, as a program would at package level.
var (
	double = graph.MustRegisterFunc("arraytest.double", func(_ context.Context, b *Dense) (*Dense, error) {
		v := b.Float64s()
		for i := range v {
			v[i] *= 2
		}
		return NewDense(v, b.Shape()...)
	})
	// stencil sums each element with its neighbours along every axis.
	stencil = graph.MustRegisterFunc("arraytest.stencil", func(_ context.Context, b *Dense) (*Dense, error) {
		shape := b.Shape()
		v := b.Float64s()
		out := make([]float64, len(v))
		st := rowMajorStrides(shape)
		eachIndex(shape, func(idx []int) {
			off := 0
			for a := range idx {
				off += idx[a] * st[a]
			}
			s := v[off]
			for a := range idx {
				if idx[a] > 0 {
					s += v[off-st[a]]
				}
				if idx[a] < shape[a]-1 {
					s += v[off+st[a]]
				}
			}
			out[off] = s
		})
		return NewDense(out, shape...)
	})
	rowSums = graph.MustRegisterFunc("arraytest.rowsums", func(_ context.Context, b *Dense) (*Dense, error) {
		s := b.Shape()
		v := b.Float64s()
		out := make([]float64, s[0])
		for i := range s[0] {
			out[i] = refSum(v[i*s[1]:(i+1)*s[1]], nil)
		}
		return NewDense(out, s[0])
	})
	wrongShape = graph.MustRegisterFunc("arraytest.wrongshape", func(_ context.Context, b *Dense) (*Dense, error) {
		return NewDense([]float64{1}, 1)
	})
	failing = graph.MustRegisterFunc("arraytest.fail", func(_ context.Context, b *Dense) (*Dense, error) {
		return nil, fmt.Errorf("no luck with shape %v", b.Shape())
	})
	matmulBlocks = graph.MustRegisterFunc("arraytest.matmul", func(_ context.Context, bs []*Dense) (*Dense, error) {
		a, err := bs[0].Mat()
		if err != nil {
			return nil, err
		}
		b, err := bs[1].Mat()
		if err != nil {
			return nil, err
		}
		var c mat.Dense
		c.Mul(a, b)
		return DenseFromMat(&c), nil
	})
)

func TestMapBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	r := newRef([]int{7, 5}, randFloats(rng, 35))
	a := r.array(rng)
	want := slices.Clone(r.v)
	for i := range want {
		want[i] = 2 * want[i] * 3
	}
	assertClose(t, compute(t, a.MapBlocks(double).Mul(3)), r.shape, want, 0)
	// A function that drops an axis.
	rs := a.Rechunk(ChunkSizes(a.Chunks()[0], []int{5})).MapBlocks(rowSums, DropAxes(1))
	var sums []float64
	for i := range 7 {
		sums = append(sums, refSum(r.v[i*5:(i+1)*5], nil))
	}
	assertClose(t, compute(t, rs), []int{7}, sums, 1e-12)
	// Errors: named at build time, or naming the chunk when computed.
	mustErr(t, a.MapBlocks(nil).Err(), "nil function")
	mustErr(t, a.MapBlocks(rowSums, DropAxes(1)).Err(), "axis 1", "rechunk")
	// Every chunk fails; whichever is reported first is named.
	mustErr(t, computeErr(t, a.MapBlocks(wrongShape)), "arraytest.wrongshape", "shape [1]", "on block [", "ChunkSizes")
	mustErr(t, computeErr(t, a.MapBlocks(failing)), "arraytest.fail", "no luck")
	mustErr(t, computeErr(t, a.MapBlocks(double, WithDType(Int64))), "float64", "declared int64")
	mustErr(t, a.MapBlocks(double, NewAxis(0, 1), ChunkSizes(a.Chunks()...)).Err(), "2 axes", "the result has 3")
	// Unknown result sizes are allowed when declared.
	one := a.Rechunk(Chunks(-1)).MapBlocks(wrongShape, ChunkSizes([]int{-1}), DropAxes(1))
	assertClose(t, compute(t, one), []int{1}, []float64{1}, 0)
}

// MapOverlap gives each chunk a halo from its neighbours; the result does
// not depend on the chunks, for every boundary mode.
func TestMapOverlap(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	for _, b := range []Boundary{BoundaryReflect, BoundaryPeriodic, BoundaryNearest, BoundaryNone, BoundaryConstant(2.5)} {
		for range 4 {
			shape := randShape(rng, 1+rng.IntN(2), 9)
			r := newRef(shape, randFloats(rng, product(shape)))
			// The reference: the stencil on the whole array padded by one.
			whole := must(NewDense(r.v, shape...))
			one := FromDense(whole, Chunks(-1)).MapOverlap(stencil, []int{1}, WithBoundary(b))
			want := compute(t, one)
			got := r.array(rng).MapOverlap(stencil, []int{1}, WithBoundary(b))
			assertClose(t, compute(t, got), shape, want.Float64s(), 1e-12)
			// And against a direct computation of the padded stencil.
			direct := make([]float64, len(r.v))
			st := rowMajorStrides(shape)
			eachIndex(shape, func(idx []int) {
				off := 0
				for a := range idx {
					off += idx[a] * st[a]
				}
				s := r.v[off]
				for a := range idx {
					for _, d := range []int{-1, 1} {
						j, ok := boundaryIndex(idx[a]+d, shape[a], b.mode)
						switch {
						case !ok:
						case j < 0:
							s += b.value
						default:
							s += r.v[off+(j-idx[a])*st[a]]
						}
					}
				}
				direct[off] = s
			})
			assertClose(t, want, shape, direct, 1e-12)
		}
	}
	x := Zeros([]int{4, 4})
	mustErr(t, x.MapOverlap(stencil, []int{1, 1, 1}).Err(), "3 depths", "2 dimensions")
	mustErr(t, x.MapOverlap(stencil, []int{-1}).Err(), "depth -1")
	mustErr(t, x.MapOverlap(stencil, []int{1}, WithBoundary(Boundary{mode: "wrap"})).Err(), "unknown boundary")
	if got := boundaryIndexes(5, "reflect"); !slices.Equal(got, []int{1, 0, 0, 1, 2, 3, 4, 4, 3}) {
		t.Fatalf("reflect %v", got)
	}
}

func boundaryIndexes(n int, mode string) []int {
	var out []int
	for i := -2; i < n+2; i++ {
		j, _ := boundaryIndex(i, n, mode)
		out = append(out, j)
	}
	return out
}

func TestBlockwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	a := newRef([]int{6, 5}, randFloats(rng, 30))
	b := newRef([]int{5, 4}, randFloats(rng, 20))
	z := Blockwise(matmulBlocks, "ij", []BlockwiseArg{In(a.array(rng), "ik"), In(b.array(rng), "kj")})
	if err := z.Err(); err != nil {
		t.Fatal(err)
	}
	want := mat.NewDense(6, 4, nil)
	want.Mul(mat.NewDense(6, 5, a.v), mat.NewDense(5, 4, b.v))
	assertClose(t, compute(t, z), []int{6, 4}, DenseFromMat(want).Float64s(), 1e-12)
	x := Zeros([]int{3, 4})
	mustErr(t, Blockwise(matmulBlocks, "ij", []BlockwiseArg{In(x, "ik"), In(x, "kj")}).Err(), "letter 'k'", "4 long", "3")
	mustErr(t, Blockwise(matmulBlocks, "iz", []BlockwiseArg{In(x, "ik")}).Err(), "letter 'z'", "no argument")
	mustErr(t, Blockwise(matmulBlocks, "i", []BlockwiseArg{In(x, "i")}).Err(), "index \"i\"", "2 dimensions")
}

// started is closed by waitCancel when it first runs.
var (
	started     = make(chan struct{})
	startedOnce sync.Once
	// waitCancel runs until its task is cancelled.
	waitCancel = graph.MustRegisterFunc("arraytest.waitcancel", func(ctx context.Context, b *Dense) (*Dense, error) {
		startedOnce.Do(func() { close(started) })
		<-ctx.Done()
		return nil, ctx.Err()
	})
)

// Cancelling the context of Compute stops the computation: here it can
// only end that way, with the context's error, and no goroutine is left
// behind (TestMain checks).
func TestComputeCancel(t *testing.T) {
	x := Uniform(1, []int{400, 400}, 0, 1, Chunks(100)).MapBlocks(waitCancel).Sum()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-started
		cancel()
	}()
	_, err := x.Compute(ctx, newExec(t))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want one that is context.Canceled", err)
	}
}
