package main

import (
	"context"
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// arraySuite is the array workload against gonum: the sum of a random
// square matrix, the mean of x + xᵀ, and the product x·x (answered by the
// sum of its elements). Shoal has no arrays yet: its side says so, gonum's
// runs so that the reference answers are ready.
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
	const why = "arrays (package array does not exist yet)"
	cases := []*benchCase{
		{suite: "array", name: "sum", note: fmt.Sprintf("x: %d×%d float64, uniform in [0, 1)", n, n), unsupported: why,
			peerName: "gonum", peer: gonum("sum", func() float64 { return mat.Sum(x) })},
		{suite: "array", name: "x + x.T mean", unsupported: why,
			peerName: "gonum", peer: gonum("mean", func() float64 {
				var y mat.Dense
				y.Add(x, x.T())
				return mat.Sum(&y) / float64(n*n)
			})},
		{suite: "array", name: "matmul x·x", note: "answer: sum of the product", unsupported: why,
			peerName: "gonum", peer: gonum("sum", func() float64 {
				var y mat.Dense
				y.Mul(x, x)
				return mat.Sum(&y)
			})},
	}
	return cases, fmt.Sprintf("%d×%d float64 matrices", n, n), func() {}, nil
}
