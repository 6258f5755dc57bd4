package array

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas"
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

// Products whose operands transpose other arrays read those arrays' blocks
// as they are (no task copies them into the transposed order) and give
// the products of the transposed matrices.
func TestMatMulTransposedOperands(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for trial := range 12 {
		m, k, n := 1+rng.IntN(9), 1+rng.IntN(9), 1+rng.IntN(9)
		xt := newRef([]int{k, m}, randFloats(rng, k*m)) // x = xt.T(): m×k
		y := newRef([]int{k, n}, randFloats(rng, k*n))
		yt := newRef([]int{n, k}, randFloats(rng, n*k))
		a3 := newRef([]int{k, 2, m}, randFloats(rng, k*2*m))
		dt := []DType{Float64, Float32, Int64}[trial%3]
		arr := func(r ref) Array { return r.array(rng).Astype(dt) }
		x, yy, ytt := arr(xt), arr(y), arr(yt)
		z := FromSlice(randFloats(rng, m*3), []int{m, 3}).Astype(dt)
		tests := []struct {
			name string
			got  Array
			a, b Array // the product is a·b, as matrices
		}{
			{"xᵀ·y", MatMul(x.T(), yy, SplitEvery(2+rng.IntN(3))), x.T(), yy},
			{"x·yᵀ", MatMul(yy.T(), ytt.T()), yy.T(), ytt.T()},
			{"xᵀ·yᵀ", MatMul(x.T(), ytt.T().T().T()), x.T(), ytt.T()},
			{"xᵀ·x", MatMul(x.T(), x), x.T(), x},
			{"twice transposed", MatMul(x.T().T(), z), x, z},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				a, b := compute(t, tt.a), compute(t, tt.b)
				am, err := a.Mat()
				if err != nil {
					t.Fatal(err)
				}
				bm, err := b.Mat()
				if err != nil {
					t.Fatal(err)
				}
				var want mat.Dense
				want.Mul(am, bm)
				got := compute(t, tt.got)
				if got.DType() != dt {
					t.Fatalf("dtype %v, want %v", got.DType(), dt)
				}
				tol := 1e-12
				if dt == Float32 {
					tol = 1e-5
				}
				assertMat(t, got, &want, tol)
				noTransposeTasks(t, tt.got)
			})
		}
		// An n-d operand whose contracted axis lies between its free ones
		// is not one matrix either way: the product's task copies it.
		a3a, b23 := arr(a3), FromSlice(randFloats(rng, 6), []int{2, 3}).Astype(dt)
		got := TensorDot(a3a.Transpose(1, 0, 2), b23, []int{0}, []int{0})
		a3d, bd := compute(t, a3a), compute(t, b23)
		var want []float64
		for p := range k {
			for i := range m {
				for j := range 3 {
					s := 0.0
					for q := range 2 {
						av, _ := a3d.At(p, q, i)
						bv, _ := bd.At(q, j)
						s += av * bv
					}
					want = append(want, s)
				}
			}
		}
		tol := 1e-12
		if dt == Float32 {
			tol = 1e-5
		}
		assertClose(t, compute(t, got), []int{k, m, 3}, want, tol)
		noTransposeTasks(t, got)
	}
}

func noTransposeTasks(t *testing.T, a Array) {
	t.Helper()
	g, _, err := a.Graph()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range g.Keys() {
		if k.Prefix() == "transpose" {
			t.Fatalf("task %s copies an operand into the transposed order", k)
		}
	}
}

// asMatrix sees blocks as matrices where they lie when it can, through
// the transpose flag when the contracted axes come first.
func TestAsMatrixInPlace(t *testing.T) {
	v := make([]float64, 60)
	for i := range v {
		v[i] = float64(i)
	}
	d3, _ := NewDense(v, 3, 4, 5)
	d2, _ := NewDense(v[:12], 3, 4)
	sub := &Dense{dtype: Float64, shape: []int{2, 3}, strides: []int{5, 1}, offset: 6, data: v} // rows 1-2, cols 1-3 of a 4×5
	tests := []struct {
		name       string
		d          *Dense
		rows, cols []int
		inPlace    bool
		trans      bool
	}{
		{"matrix", d2, []int{0}, []int{1}, true, false},
		{"transposed matrix", d2, []int{1}, []int{0}, true, true},
		{"3-d, last axis contracted", d3, []int{0, 1}, []int{2}, true, false},
		{"3-d, first axes contracted", d3, []int{2}, []int{0, 1}, true, true},
		{"3-d, first axis contracted", d3, []int{1, 2}, []int{0}, true, true},
		{"3-d, middle axis contracted", d3, []int{0, 2}, []int{1}, false, false},
		{"3-d, axes in another order", d3, []int{1, 0}, []int{2}, false, false},
		{"view with a row stride", sub, []int{0}, []int{1}, true, false},
		{"view with a row stride, transposed", sub, []int{1}, []int{0}, true, true},
		{"vector", d2.T(), []int{0}, []int{}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := asMatrix(tt.d, tt.rows, tt.cols)
			data := m.data.([]float64)
			inPlace := &data[0] == &v[tt.d.offset]
			if inPlace != tt.inPlace || (m.trans == blas.Trans) != tt.trans {
				t.Fatalf("in place %v, trans %v; want %v, %v", inPlace, m.trans == blas.Trans, tt.inPlace, tt.trans)
			}
			rs := make([]int, len(tt.rows))
			for i, ax := range tt.rows {
				rs[i] = tt.d.shape[ax]
			}
			cs := make([]int, len(tt.cols))
			for i, ax := range tt.cols {
				cs[i] = tt.d.shape[ax]
			}
			if m.rows != product(rs) || m.cols != product(cs) {
				t.Fatalf("%d×%d matrix, want %d×%d", m.rows, m.cols, product(rs), product(cs))
			}
			u := m.untransposed()
			if u.trans != blas.NoTrans || (m.trans == blas.Trans && u.ld != m.cols) {
				t.Fatalf("row-major copy with trans %v, ld %d", u.trans, u.ld)
			}
			idx := make([]int, len(tt.d.shape))
			for i := range m.rows {
				for j := range m.cols {
					ri, ci := blockIndex(rs, i), blockIndex(cs, j)
					for k, ax := range tt.rows {
						idx[ax] = ri[k]
					}
					for k, ax := range tt.cols {
						idx[ax] = ci[k]
					}
					want, _ := tt.d.At(idx...)
					if got := data[m.at(i, j)]; got != want {
						t.Fatalf("element (%d, %d) is %v, want %v (index %v)", i, j, got, want, idx)
					}
					if got := u.data.([]float64)[u.at(i, j)]; got != want {
						t.Fatalf("element (%d, %d) of the row-major copy is %v, want %v", i, j, got, want)
					}
				}
			}
		})
	}
}
