package main

import (
	"context"
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/shoal-data/shoal/array"
)

// arraySuite is the array workload against gonum: the sum of a random
// square matrix, the mean of x + xᵀ, and the product x·x (answered by the
// sum of its elements). Both engines get the same matrix in memory; Shoal
// holds it in chunks of a quarter of each side (16 chunks) and computes
// on its local executor, gonum in one call.
func arraySuite(_ context.Context, h *harness) ([]*benchCase, string, func(), error) {
	n := h.cfg.arrayN
	var x *mat.Dense
	setup := func(context.Context) error {
		if x != nil {
			return nil
		}
		rng := rand.New(rand.NewPCG(h.cfg.seed, 0x6172726179))
		data := make([]float64, n*n)
		for i := range data {
			data[i] = rng.Float64()
		}
		x = mat.NewDense(n, n, data)
		return nil
	}
	scalar := func(name string) func(context.Context, any) (*table, error) {
		return func(_ context.Context, v any) (*table, error) {
			t := newTable(name)
			return t, t.appendRow(v.(float64))
		}
	}
	gonum := func(answer string, run func() float64) *engine {
		return &engine{setup: setup, run: func(context.Context) (any, error) { return run(), nil }, answer: scalar(answer)}
	}
	chunk := max(n/4, 1)
	shoal := func(answer string, expr func(x array.Array) array.Array) *engine {
		var xa array.Array
		return &engine{
			setup: func(ctx context.Context) error {
				if err := setup(ctx); err != nil {
					return err
				}
				xa = array.FromMat(x, array.Chunks(chunk, chunk))
				return nil
			},
			run: func(ctx context.Context) (any, error) {
				d, err := expr(xa).Compute(ctx, h.exec)
				if err != nil {
					return nil, err
				}
				v, err := array.Values[float64](d)
				if err != nil {
					return nil, err
				}
				if len(v) != 1 {
					return nil, fmt.Errorf("%d values, want 1", len(v))
				}
				return v[0], nil
			},
			answer: scalar(answer),
		}
	}
	cases := []*benchCase{
		{suite: "array", name: "sum", note: fmt.Sprintf("x: %d×%d float64, uniform in [0, 1)", n, n),
			shoal:    shoal("sum", func(x array.Array) array.Array { return x.Sum() }),
			peerName: "gonum", peer: gonum("sum", func() float64 { return mat.Sum(x) })},
		{suite: "array", name: "x + x.T mean",
			shoal:    shoal("mean", func(x array.Array) array.Array { return x.Add(x.T()).Mean() }),
			peerName: "gonum", peer: gonum("mean", func() float64 {
				var y mat.Dense
				y.Add(x, x.T())
				return mat.Sum(&y) / float64(n*n)
			})},
		{suite: "array", name: "matmul x·x", note: "answer: sum of the product",
			shoal:    shoal("sum", func(x array.Array) array.Array { return array.MatMul(x, x).Sum() }),
			peerName: "gonum", peer: gonum("sum", func() float64 {
				var y mat.Dense
				y.Mul(x, x)
				return mat.Sum(&y)
			})},
	}
	return cases, fmt.Sprintf("%d×%d float64 matrices", n, n), func() {}, nil
}
