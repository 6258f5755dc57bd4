package array_test

import (
	"context"
	"fmt"

	"github.com/shoal-data/shoal/array"
	"github.com/shoal-data/shoal/local"
)

func Example() {
	ctx := context.Background()
	exec := local.New()
	defer exec.Close()

	// A 4×6 matrix in chunks of 2×3: nothing is computed yet.
	x := array.Arange(0, 24, 1, array.Chunks(5)).Reshape(4, 6).Rechunk(array.Chunks(2, 3))
	y := x.Sub(x.Mean(array.Axis(0))).Index(array.Slice(1, 3), array.Step(array.Open, array.Open, 2))
	fmt.Println(y)

	d, err := y.Compute(ctx, exec)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d)

	total, err := x.Sum().Compute(ctx, exec)
	if err != nil {
		fmt.Println(err)
		return
	}
	v, _ := total.At()
	fmt.Println("sum:", v)

	// A mistake is reported when the expression is built.
	fmt.Println(x.Add(array.Zeros([]int{5})).Err())
	// Output:
	// Array<float64, shape (2, 3), chunks (2×1, [2 1]), getitem>
	// [[-3 -3 -3]
	//  [3 3 3]]
	// sum: 276
	// array: Add: shapes (4, 6) and (5,) cannot be broadcast together: axis 1 has lengths 6 and 5
}

func ExampleMatMul() {
	ctx := context.Background()
	exec := local.New()
	defer exec.Close()

	a := array.FromSlice([]float64{1, 2, 3, 4, 5, 6}, []int{2, 3}, array.Chunks(1, 2))
	p, err := array.MatMul(a, a.T()).Compute(ctx, exec)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p)
	// Output:
	// [[14 32]
	//  [32 77]]
}

func ExampleSolve() {
	ctx := context.Background()
	exec := local.New()
	defer exec.Close()

	// 2x + y = 3, x + 3y = 5, in chunks of one row and column.
	a := array.FromSlice([]float64{2, 1, 1, 3}, []int{2, 2}, array.Chunks(1, 1))
	b := array.FromSlice([]float64{3, 5}, []int{2}, array.Chunks(1))
	x, err := array.Solve(a, b).Compute(ctx, exec)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.1f\n", x.Float64s())

	// A singular matrix is an error when computed.
	_, err = array.Solve(array.Ones([]int{2, 2}), b).Compute(ctx, exec)
	fmt.Println(err != nil)
	// Output:
	// [0.8 1.4]
	// true
}
