package array

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func randMat(rng *rand.Rand, r, c int) *mat.Dense {
	return mat.NewDense(r, c, randFloats(rng, r*c))
}

func matArray(rng *rand.Rand, m mat.Matrix) Array {
	d := DenseFromMat(m)
	return FromDense(d, ChunkSizes(randChunks(rng, d.Shape())...))
}

func assertMat(t *testing.T, got *Dense, want mat.Matrix, tol float64) {
	t.Helper()
	r, c := want.Dims()
	assertClose(t, got, []int{r, c}, DenseFromMat(want).Float64s(), tol)
}

// Property test: products of random shapes and chunks against gonum's
// Mul; sums of products reassociate, compared within 1e-12 relative.
func TestMatMulProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 30))
	for range 20 {
		m, k, n := 1+rng.IntN(12), 1+rng.IntN(12), 1+rng.IntN(12)
		a, b := randMat(rng, m, k), randMat(rng, k, n)
		var want mat.Dense
		want.Mul(a, b)
		got := MatMul(matArray(rng, a), matArray(rng, b), SplitEvery(2+rng.IntN(3)))
		assertMat(t, compute(t, got), &want, 1e-12)
		// Vectors: a row vector times a matrix, a matrix times a column.
		v := randFloats(rng, k)
		var mv mat.VecDense
		mv.MulVec(a, mat.NewVecDense(k, v))
		got = MatMul(matArray(rng, a), FromSlice(v, []int{k}, ChunkSizes(randChunks(rng, []int{k})...)))
		assertClose(t, compute(t, got), []int{m}, mv.RawVector().Data, 1e-12)
		dot := Dot(FromSlice(v, []int{k}, Chunks(3)), FromSlice(v, []int{k}, Chunks(2)))
		assertClose(t, compute(t, dot), []int{}, []float64{mat.Dot(mat.NewVecDense(k, v), mat.NewVecDense(k, v))}, 1e-12)
	}
	// Integers multiply exactly; float32 stays float32.
	i := FromSlice([]int64{1, 2, 3, 4}, []int{2, 2}, Chunks(1))
	assertClose(t, compute(t, MatMul(i, i)), []int{2, 2}, []float64{7, 10, 15, 22}, 0)
	f := FromSlice([]float32{1, 2, 3, 4}, []int{2, 2}, Chunks(1))
	if d := compute(t, MatMul(f, f)); d.DType() != Float32 {
		t.Fatalf("float32 product is %v", d.DType())
	}
	mustErr(t, MatMul(Zeros([]int{2, 3}), Zeros([]int{4, 2})).Err(), "MatMul", "(2, 3)", "(4, 2)", "not aligned", "3", "4")
	mustErr(t, MatMul(Zeros([]int{2, 3, 4}), Zeros([]int{4})).Err(), "1-D or 2-D")
}

func TestTensorDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	a := newRef([]int{3, 4, 5}, randFloats(rng, 60))
	b := newRef([]int{5, 2, 4}, randFloats(rng, 40))
	// Contract a's axes 1, 2 with b's 2, 0: result (3, 2).
	want := ref{shape: []int{3, 2}}
	eachIndex([]int{3, 2}, func(idx []int) {
		s := 0.0
		for j := range 4 {
			for k := range 5 {
				s += a.at([]int{idx[0], j, k}) * b.at([]int{k, idx[1], j})
			}
		}
		want.v = append(want.v, s)
	})
	got := TensorDot(a.array(rng), b.array(rng), []int{1, 2}, []int{2, 0})
	assertClose(t, compute(t, got), want.shape, want.v, 1e-12)
	// Dot of n-d arrays: last axis of a with the second-to-last of b.
	d := Dot(a.array(rng), b.array(rng).Transpose(2, 0, 1))
	if !slices.Equal(d.Shape(), []int{3, 4, 4, 2}) {
		t.Fatalf("dot shape %v", d.Shape())
	}
	// An outer product: nothing contracted.
	o := TensorDot(FromSlice([]float64{1, 2}, []int{2}), FromSlice([]float64{3, 4, 5}, []int{3}, Chunks(2)), nil, nil)
	assertClose(t, compute(t, o), []int{2, 3}, []float64{3, 4, 5, 6, 8, 10}, 0)
	mustErr(t, TensorDot(a.array(rng), b.array(rng), []int{0}, []int{0}).Err(), "axis 0 of a has length 3", "axis 0 of b 5")
	mustErr(t, TensorDot(a.array(rng), b.array(rng), []int{1}, []int{2, 0}).Err(), "1 axes of a and 2 of b")
}

func TestQRSVD(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	for range 8 {
		n := 1 + rng.IntN(5)
		m := n + rng.IntN(40)
		a := randMat(rng, m, n)
		x := FromDense(DenseFromMat(a), ChunkSizes(randChunks(rng, []int{m})[0], randChunks(rng, []int{n})[0]))
		q, r := QR(x, SplitEvery(2))
		qd, rd := compute(t, q), compute(t, r)
		qm, _ := qd.Mat()
		rm, _ := rd.Mat()
		// Q R = A, Qᵀ Q = I, R upper triangular; R matches gonum's up to
		// the signs of its rows.
		var qr, qtq mat.Dense
		qr.Mul(qm, rm)
		assertMat(t, DenseFromMat(&qr), a, 1e-10)
		qtq.Mul(qm.T(), qm)
		assertMat(t, DenseFromMat(&qtq), eye(n), 1e-10)
		var g mat.QR
		g.Factorize(a)
		var gr mat.Dense
		g.RTo(&gr)
		for i := range n {
			s := math.Copysign(1, rm.At(i, i)) * math.Copysign(1, gr.At(i, i))
			for j := range n {
				if j < i && rm.At(i, j) != 0 {
					t.Fatalf("R is not upper triangular at (%d, %d)", i, j)
				}
				if !closeTo(rm.At(i, j), s*gr.At(i, j), 1e-10) {
					t.Fatalf("R(%d, %d) = %v, gonum %v", i, j, rm.At(i, j), gr.At(i, j))
				}
			}
		}
		u, s, vt := SVD(x)
		ud, sd, vd := compute(t, u), compute(t, s), compute(t, vt)
		var gs mat.SVD
		gs.Factorize(a, mat.SVDThin)
		assertClose(t, sd, []int{n}, gs.Values(nil), 1e-10)
		um, _ := ud.Mat()
		vm, _ := vd.Mat()
		var rec mat.Dense
		rec.Mul(um, mat.NewDiagDense(n, sd.Float64s()))
		rec.Mul(&rec, vm)
		assertMat(t, DenseFromMat(&rec), a, 1e-10)
	}
	_, r := QR(Zeros([]int{3, 5}))
	mustErr(t, r.Err(), "QR", "tall-and-skinny", "(3, 5)", "transpose")
}

func eye(n int) *mat.Dense {
	e := mat.NewDense(n, n, nil)
	for i := range n {
		e.Set(i, i, 1)
	}
	return e
}

func TestSolveLstsqCholesky(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	for range 6 {
		n := 1 + rng.IntN(8)
		a := randMat(rng, n, n)
		for i := range n {
			a.Set(i, i, a.At(i, i)+20) // well conditioned
		}
		b := randMat(rng, n, 2)
		var want mat.Dense
		if err := want.Solve(a, b); err != nil {
			t.Fatal(err)
		}
		assertMat(t, compute(t, Solve(matArray(rng, a), matArray(rng, b))), &want, 1e-10)

		// Least squares of a tall system against gonum's QR solve.
		m := n + 1 + rng.IntN(20)
		ta := randMat(rng, m, n)
		tb := randFloats(rng, m)
		var ls mat.Dense
		if err := ls.Solve(ta, mat.NewDense(m, 1, tb)); err != nil {
			t.Fatal(err)
		}
		x, res := Lstsq(matArray(rng, ta), FromSlice(tb, []int{m}, ChunkSizes(randChunks(rng, []int{m})...)))
		assertClose(t, compute(t, x), []int{n}, DenseFromMat(&ls).Float64s(), 1e-9)
		var rv mat.Dense
		rv.Mul(ta, &ls)
		rv.Sub(&rv, mat.NewDense(m, 1, tb))
		assertClose(t, compute(t, res), []int{1}, []float64{mat.Norm(&rv, 2) * mat.Norm(&rv, 2)}, 1e-9)

		// Cholesky of AᵀA + I against gonum.
		var spd mat.SymDense
		spd.SymOuterK(1, a.T())
		for i := range n {
			spd.SetSym(i, i, spd.At(i, i)+1)
		}
		var ch mat.Cholesky
		if !ch.Factorize(&spd) {
			t.Fatal("gonum: not positive definite")
		}
		var l mat.TriDense
		ch.LTo(&l)
		sq := FromDense(DenseFromMat(&spd), Chunks(1+rng.IntN(4), 1+rng.IntN(4)))
		assertMat(t, compute(t, Cholesky(sq)), &l, 1e-10)
	}
	// Pivoting across blocks: the first diagonal block is zero.
	p := FromSlice([]float64{0, 0, 2, 0, 3, 0, 1, 0, 0}, []int{3, 3}, Chunks(1))
	assertClose(t, compute(t, Solve(p, FromSlice([]float64{4, 6, 5}, []int{3}, Chunks(2)))), []int{3}, []float64{5, 2, 2}, 1e-12)
	mustErr(t, computeErr(t, Cholesky(FromSlice([]float64{1, 2, 2, 1}, []int{2, 2}, Chunks(1)))), "not positive definite", "block (1, 1)")
	mustErr(t, computeErr(t, Solve(Zeros([]int{2, 2}), Ones([]int{2}))), "singular")
	x, _ := Lstsq(FromSlice([]float64{1, 1, 1, 1, 1, 1}, []int{3, 2}), Ones([]int{3}))
	mustErr(t, computeErr(t, x), "rank-deficient")
	mustErr(t, Solve(Zeros([]int{2, 3}), Ones([]int{2})).Err(), "square", "(2, 3)")
	mustErr(t, Solve(Zeros([]int{2, 2}), Ones([]int{3})).Err(), "(3,)", "(2, 2)")
	mustErr(t, Cholesky(Zeros([]int{2, 3})).Err(), "square")
}

func TestNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 38))
	a := randMat(rng, 7, 4)
	x := matArray(rng, a)
	v := randFloats(rng, 9)
	vx := FromSlice(v, []int{9}, Chunks(4))
	vec := mat.NewVecDense(9, v)
	var svd mat.SVD
	svd.Factorize(a, mat.SVDNone)
	sv := svd.Values(nil)
	colMax, rowMax, colMin, rowMin := 0.0, 0.0, math.Inf(1), math.Inf(1)
	for j := range 4 {
		s := 0.0
		for i := range 7 {
			s += math.Abs(a.At(i, j))
		}
		colMax, colMin = math.Max(colMax, s), math.Min(colMin, s)
	}
	for i := range 7 {
		s := 0.0
		for j := range 4 {
			s += math.Abs(a.At(i, j))
		}
		rowMax, rowMin = math.Max(rowMax, s), math.Min(rowMin, s)
	}
	nz, cubes, minAbs := 0.0, 0.0, math.Inf(1)
	for _, x := range v {
		if x != 0 {
			nz++
		}
		cubes += math.Abs(x * x * x)
		minAbs = math.Min(minAbs, math.Abs(x))
	}
	tests := []struct {
		name string
		a    Array
		want float64
	}{
		{"vector 2", Norm(vx, DefaultOrd), mat.Norm(vec, 2)},
		{"vector 1", Norm(vx, P(1)), mat.Norm(vec, 1)},
		{"vector inf", Norm(vx, P(math.Inf(1))), mat.Norm(vec, math.Inf(1))},
		{"vector -inf", Norm(vx, P(math.Inf(-1))), minAbs},
		{"vector 0", Norm(vx, P(0)), nz},
		{"vector 3", Norm(vx, P(3)), math.Cbrt(cubes)},
		{"fro", Norm(x, Fro), mat.Norm(a, 2)},
		{"default", Norm(x, DefaultOrd), mat.Norm(a, 2)},
		{"matrix 1", Norm(x, P(1)), colMax},
		{"matrix -1", Norm(x, P(-1)), colMin},
		{"matrix inf", Norm(x, P(math.Inf(1))), rowMax},
		{"matrix -inf", Norm(x, P(math.Inf(-1))), rowMin},
		{"matrix 2", Norm(x, P(2)), sv[0]},
		{"matrix -2", Norm(x, P(-2)), sv[len(sv)-1]},
		{"nuc", Norm(x, Nuc), refSum(sv, nil)},
		{"wide 2", Norm(x.T(), P(2)), sv[0]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.a.Err(); err != nil {
				t.Fatal(err)
			}
			got, err := compute(t, tt.a).At()
			if err != nil {
				t.Fatal(err)
			}
			if !closeTo(got, tt.want, 1e-10) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
	// Along an axis: the norm of each row.
	rows := Norm(x, DefaultOrd, Axis(1), KeepDims())
	if !slices.Equal(rows.Shape(), []int{7, 1}) {
		t.Fatalf("row norms shape %v", rows.Shape())
	}
	mustErr(t, Norm(Zeros([]int{2, 2, 2}), P(1)).Err(), "1-D or 2-D")
	mustErr(t, Norm(vx, Fro, Axis(0)).Err(), "not a vector norm")
}

// Property test of the blocked LU solve: random square systems that are
// not diagonally dominant (so rows are swapped across blocks), random
// chunks, one or several right-hand sides, against gonum's Solve. The
// error bound grows with the condition number: |x - x_gonum| <= 1e-12·κ₁(a)
// relative to max(1, |x|).
func TestSolveProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 40))
	for trial := range 40 {
		n := 1 + rng.IntN(24)
		a := randMat(rng, n, n)
		cond := mat.Cond(a, 1)
		if math.IsInf(cond, 0) || cond > 1e8 {
			continue
		}
		k := 1 + rng.IntN(3)
		b := randMat(rng, n, k)
		var want mat.Dense
		if err := want.Solve(a, b); err != nil {
			t.Fatal(err)
		}
		got := compute(t, Solve(matArray(rng, a), matArray(rng, b)))
		assertMat(t, got, &want, 1e-12*cond)
		if trial%4 == 0 {
			// A vector right-hand side gives a vector.
			col := mat.Col(nil, 0, b)
			x := compute(t, Solve(matArray(rng, a), FromSlice(col, []int{n}, ChunkSizes(randChunks(rng, []int{n})...))))
			assertClose(t, x, []int{n}, mat.Col(nil, 0, &want), 1e-12*cond)
		}
	}
	// Integer and float32 systems are solved in float64.
	ai := FromSlice([]int64{2, 1, 1, 3}, []int{2, 2}, Chunks(1))
	x := compute(t, Solve(ai, FromSlice([]float32{3, 5}, []int{2}, Chunks(1))))
	if x.DType() != Float64 {
		t.Fatalf("dtype %v", x.DType())
	}
	assertClose(t, x, []int{2}, []float64{0.8, 1.4}, 1e-14)
	// Singular in a later column of blocks: rows 2 and 3 repeat rows 0
	// and 1 combined; the error names where elimination broke down.
	s := FromSlice([]float64{
		1, 2, 0, 1,
		0, 1, 1, 0,
		1, 3, 1, 1,
		2, 5, 1, 2,
	}, []int{4, 4}, Chunks(2))
	mustErr(t, computeErr(t, Solve(s, Ones([]int{4}, Chunks(2)))), "singular", "pivot 2", "column of blocks 1")
	mustErr(t, computeErr(t, Solve(Ones([]int{2, 2}), Ones([]int{2}))), "singular", "pivot 1 ", "column of blocks 0")
}

// Lstsq of a wide system gives the solution of least norm, as NumPy's
// lstsq: against x = aᵀ (a aᵀ)⁻¹ b from gonum.
func TestLstsqWide(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 48))
	for range 8 {
		m := 1 + rng.IntN(6)
		n := m + 1 + rng.IntN(20)
		a := randMat(rng, m, n)
		k := 1 + rng.IntN(2)
		b := randMat(rng, m, k)
		var aat, y, want mat.Dense
		aat.Mul(a, a.T())
		if err := y.Solve(&aat, b); err != nil {
			t.Fatal(err)
		}
		want.Mul(a.T(), &y)
		x, res := Lstsq(matArray(rng, a), matArray(rng, b))
		assertMat(t, compute(t, x), &want, 1e-9)
		if r := compute(t, res); r.Size() != 0 {
			t.Fatalf("residuals of a wide system have shape %v, want (0,)", r.Shape())
		}
		// A vector b gives a vector x.
		xv, _ := Lstsq(matArray(rng, a), FromSlice(mat.Col(nil, 0, b), []int{m}, Chunks(1+rng.IntN(m))))
		assertClose(t, compute(t, xv), []int{n}, mat.Col(nil, 0, &want), 1e-9)
	}
	// Rows that repeat: rank-deficient.
	x, _ := Lstsq(FromSlice([]float64{1, 2, 3, 1, 2, 3}, []int{2, 3}), Ones([]int{2}))
	mustErr(t, computeErr(t, x), "rank-deficient")
}
