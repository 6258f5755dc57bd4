package array

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// broadcastRef evaluates f elementwise over refs broadcast together, as
// NumPy does.
func broadcastRef(f func(xs []float64) float64, refs ...ref) ref {
	nd := 0
	for _, r := range refs {
		nd = max(nd, len(r.shape))
	}
	shape := make([]int, nd)
	for i := range shape {
		shape[i] = 1
	}
	for _, r := range refs {
		for i, d := range r.shape {
			a := nd - len(r.shape) + i
			shape[a] = max(shape[a], d)
		}
	}
	out := ref{shape: shape}
	xs := make([]float64, len(refs))
	eachIndex(shape, func(idx []int) {
		for k, r := range refs {
			ri := make([]int, len(r.shape))
			for i := range ri {
				if r.shape[i] != 1 {
					ri[i] = idx[nd-len(r.shape)+i]
				}
			}
			xs[k] = r.at(ri)
		}
		out.v = append(out.v, f(xs))
	})
	return out
}

// randBroadcastShape returns a shape that broadcasts against shape: some
// leading axes dropped and some lengths set to 1.
func randBroadcastShape(rng *rand.Rand, shape []int) []int {
	s := slices.Clone(shape[rng.IntN(len(shape)+1):])
	for i := range s {
		if rng.IntN(3) == 0 {
			s[i] = 1
		}
	}
	return s
}

// Property test: random shapes, chunks and broadcasting, fused chains of
// elementwise operations, against a loop over broadcast indices. Values are
// multiples of 1/8 so that + - * are exact; other functions are compared
// within 1e-12 relative.
func TestElementwiseProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	type op struct {
		name string
		arr  func(a, b Array) Array
		f    func(x, y float64) float64
	}
	ops := []op{
		{"add", func(a, b Array) Array { return a.Add(b) }, func(x, y float64) float64 { return x + y }},
		{"sub", func(a, b Array) Array { return a.Sub(b) }, func(x, y float64) float64 { return x - y }},
		{"mul", func(a, b Array) Array { return a.Mul(b) }, func(x, y float64) float64 { return x * y }},
		{"div", func(a, b Array) Array { return a.Div(b) }, func(x, y float64) float64 { return x / y }},
		{"max", func(a, b Array) Array { return a.Maximum(b) }, math.Max},
		{"min", func(a, b Array) Array { return a.Minimum(b) }, math.Min},
		{"pow", func(a, b Array) Array { return a.Abs().Pow(b.Div(4)) }, func(x, y float64) float64 { return math.Pow(math.Abs(x), y/4) }},
		{"floordiv", func(a, b Array) Array { return a.FloorDiv(b) }, func(x, y float64) float64 { return math.Floor(x / y) }},
		{"mod", func(a, b Array) Array { return a.Mod(b) }, pyMod},
		{"where", func(a, b Array) Array { return Where(a.Gt(b), a, b.Mul(2)) }, func(x, y float64) float64 {
			if x > y {
				return x
			}
			return 2 * y
		}},
		{"exp-tanh", func(a, b Array) Array { return a.Tanh().Add(b.Div(10).Exp()) }, func(x, y float64) float64 { return math.Tanh(x) + math.Exp(y/10) }},
		{"sin-cos", func(a, b Array) Array { return a.Sin().Mul(b.Cos()) }, func(x, y float64) float64 { return math.Sin(x) * math.Cos(y) }},
		{"sqrt-log", func(a, b Array) Array { return a.Abs().Sqrt().Add(b.Abs().Log1p()).Add(a.Abs().Add(1).Log()) },
			func(x, y float64) float64 {
				return math.Sqrt(math.Abs(x)) + math.Log1p(math.Abs(y)) + math.Log(math.Abs(x)+1)
			}},
		{"round", func(a, b Array) Array { return a.Div(3).Round(1).Add(b.Floor()).Sub(b.Ceil()) },
			func(x, y float64) float64 { return math.RoundToEven(x/3*10)/10 + math.Floor(y) - math.Ceil(y) }},
		{"clip", func(a, b Array) Array { return a.Clip(-2, b) }, func(x, y float64) float64 { return math.Min(math.Max(x, -2), y) }},
		{"neg-scalar", func(a, b Array) Array { return a.Neg().Add(2.5).Mul(b).Sub(1) }, func(x, y float64) float64 { return (-x+2.5)*y - 1 }},
	}
	for trial := range 60 {
		nd := 1 + rng.IntN(3)
		shape := randShape(rng, nd, 7)
		o := ops[trial%len(ops)]
		ra := newRef(randBroadcastShape(rng, shape), nil)
		rb := newRef(shape, nil)
		if rng.IntN(2) == 0 {
			ra, rb = rb, ra
		}
		ra.v = randFloats(rng, product(ra.shape))
		rb.v = randFloats(rng, product(rb.shape))
		a, b := ra.array(rng), rb.array(rng)
		// A chain: the op, then more elementwise work fused with it.
		got := o.arr(a, b).Mul(0.5).Add(a.T().T())
		want := broadcastRef(func(xs []float64) float64 { return o.f(xs[0], xs[1])*0.5 + xs[0] }, ra, rb)
		if err := got.Err(); err != nil {
			t.Fatalf("%s on %v and %v: %v", o.name, ra.shape, rb.shape, err)
		}
		if !slices.Equal(got.Shape(), want.shape) {
			t.Fatalf("%s: shape %v, want %v", o.name, got.Shape(), want.shape)
		}
		assertClose(t, compute(t, got), want.shape, want.v, 1e-12)
	}
}

// Chains of elementwise operations become one task per chunk.
func TestElementwiseFusion(t *testing.T) {
	x := Uniform(1, []int{6, 6}, 0, 1, Chunks(3))
	y := x.Add(1).Mul(2).Sqrt().Sub(x.T()).Abs().Sum(Axis(1))
	g, _, err := y.Graph()
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, k := range g.Keys() {
		count[k.Prefix()]++
	}
	// 4 chunks of x, 4 partial sums fusing the chain, 2 results.
	if count["uniform"] != 4 || count["sum-partial"] != 4 || count["sum"] != 2 || g.Len() != 10 {
		t.Fatalf("tasks by kind %v", count)
	}
}

// Generated arrays (random numbers, constants, ranges, the identity)
// used by one expression are made by its tasks, a tile at a time, with the
// same numbers as chunks of their own.
func TestRandomDrawnInTask(t *testing.T) {
	for _, tt := range []struct {
		name   string
		x      func() Array
		f      func(x Array) Array
		create int // tasks that make chunks of x
	}{
		{"sum", func() Array { return Uniform(5, []int{90, 70}, -1, 1, Chunks(40, 30)) }, func(x Array) Array { return x.Sum() }, 0},
		{"chain", func() Array { return Normal(5, []int{90, 70}, 0, 1, Chunks(40, 30)) }, func(x Array) Array { return x.Mul(2).Exp().Mean(Axis(0)) }, 0},
		{"integers", func() Array { return Integers(5, []int{5000}, 0, 9, Chunks(2100)) }, func(x Array) Array { return x.Add(1).CumSum(0) }, 0},
		{"transposed", func() Array { return Uniform(5, []int{90, 70}, 0, 1, Chunks(40, 30)) }, func(x Array) Array { return x.T().Add(1) }, 0},
		{"broadcast", func() Array { return Uniform(5, []int{70}, 0, 1, Chunks(30)) }, func(x Array) Array { return Ones([]int{90, 70}, Chunks(40, 30)).Add(x) }, 3},
		{"used twice", func() Array { return Uniform(5, []int{90, 90}, 0, 1, Chunks(40)) }, func(x Array) Array { return x.Add(x.T()).Max() }, 9},
		{"a result", func() Array { return Uniform(5, []int{90}, 0, 1, Chunks(40)) }, func(x Array) Array { return x }, 3},
		{"full", func() Array { return Full([]int{90, 70}, 2.5, Chunks(40, 30)) }, func(x Array) Array { return x.Mul(2).Sum(Axis(0)) }, 0},
		{"ones int", func() Array { return Ones([]int{3000}, Chunks(2500), WithDType(Int64)) }, func(x Array) Array { return x.CumSum(0) }, 0},
		{"zeros bool", func() Array { return Zeros([]int{50, 50}, Chunks(20), WithDType(Bool)) }, func(x Array) Array { return x.Not().Any(Axis(1)) }, 0},
		{"arange", func() Array { return Arange(-3, 5000, 0.5, Chunks(3333)) }, func(x Array) Array { return x.Mul(x).Sub(1) }, 0},
		{"arange float32", func() Array { return Arange(0, 9000, 1, Chunks(4100), WithDType(Float32)) }, func(x Array) Array { return x.Add(1) }, 0},
		{"linspace", func() Array { return Linspace(0, 1, 4999, Chunks(2000)) }, func(x Array) Array { return x.Mul(3) }, 0},
		{"eye", func() Array { return Eye(130, Chunks(40, 70)) }, func(x Array) Array { return x.Mul(7).Add(1) }, 0},
		{"eye int", func() Array { return Eye(100, Chunks(30, 80), WithDType(Int64)) }, func(x Array) Array { return x.Sub(1).Sum(Axis(1)) }, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			y := tt.f(tt.x())
			g, _, err := y.Graph()
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, k := range g.Keys() {
				switch k.Prefix() {
				case "uniform", "normal", "integers", "full", "arange", "linspace", "eye":
					n++
				}
			}
			if n != tt.create {
				t.Fatalf("%d tasks make random chunks, want %d", n, tt.create)
			}
			// The same numbers as chunks computed on their own.
			whole := compute(t, tt.x())
			want := compute(t, tt.f(FromDense(whole, ChunkSizes(tt.x().Chunks()...))))
			assertClose(t, compute(t, y), want.Shape(), want.Float64s(), 0)
		})
	}
}

// Types follow NumPy's promotion, with Go ints and float64s as weak
// scalars.
func TestElementwiseTypes(t *testing.T) {
	i := FromSlice([]int64{7, -7, 2}, []int{3})
	f32 := FromSlice([]float32{1.5, 2, -3}, []int{3})
	b := FromSlice([]bool{true, false, true}, []int{3})
	f := FromSlice([]float64{0.5, math.NaN(), math.Inf(1)}, []int{3})
	tests := []struct {
		name  string
		a     Array
		dtype DType
		want  []float64
	}{
		{"int+int", i.Add(i), Int64, []float64{14, -14, 4}},
		{"int+2", i.Add(2), Int64, []float64{9, -5, 4}},
		{"int+2.5", i.Add(2.5), Float64, []float64{9.5, -4.5, 4.5}},
		{"int/2", i.Div(2), Float64, []float64{3.5, -3.5, 1}},
		{"int//2", i.FloorDiv(2), Int64, []float64{3, -4, 1}},
		{"int%-3", i.Mod(-3), Int64, []float64{-2, -1, -1}},
		{"int//0", i.FloorDiv(0), Int64, []float64{0, 0, 0}},
		{"int**2", i.Pow(2), Int64, []float64{49, 49, 4}},
		{"f32*0.5", f32.Mul(0.5), Float32, []float64{0.75, 1, -1.5}},
		{"f32+int", f32.Add(i), Float64, []float64{8.5, -5, -1}},
		{"f32+f32", f32.Add(f32), Float32, []float64{3, 4, -6}},
		{"bool+bool", b.Add(b), Int64, []float64{2, 0, 2}},
		{"bool+1", b.Add(1), Int64, []float64{2, 1, 2}},
		{"bool*1.5", b.Mul(1.5), Float64, []float64{1.5, 0, 1.5}},
		{"eq", i.Eq(7), Bool, []float64{1, 0, 0}},
		{"lt f32 int", f32.Lt(i), Bool, []float64{1, 0, 1}},
		{"bool eq", b.Eq(true), Bool, []float64{1, 0, 1}},
		{"and", b.And(i.Gt(0)), Bool, []float64{1, 0, 1}},
		{"or", b.Or(false), Bool, []float64{1, 0, 1}},
		{"xor", b.Xor(i), Bool, []float64{0, 1, 0}},
		{"not", b.Not(), Bool, []float64{0, 1, 0}},
		{"sqrt int", i.Abs().Sqrt(), Float64, []float64{math.Sqrt(7), math.Sqrt(7), math.Sqrt(2)}},
		{"abs int", i.Abs(), Int64, []float64{7, 7, 2}},
		{"neg bool", b.Neg(), Int64, []float64{-1, 0, -1}},
		{"floor int", i.Floor(), Int64, []float64{7, -7, 2}},
		{"round -1", i.Mul(5).Round(-1), Int64, []float64{40, -40, 10}},
		{"astype", f.Astype(Int64).Eq(math.MinInt64), Bool, []float64{0, 1, 1}},
		{"astype bool", f32.Astype(Bool), Bool, []float64{1, 1, 1}},
		{"astype f32", i.Astype(Float32), Float32, []float64{7, -7, 2}},
		{"isnan", f.IsNaN(), Bool, []float64{0, 1, 0}},
		{"isinf", f.IsInf(), Bool, []float64{0, 0, 1}},
		{"isfinite", f.IsFinite(), Bool, []float64{1, 0, 0}},
		{"isnan int", i.IsNaN(), Bool, []float64{0, 0, 0}},
		{"nantonum", f.NanToNum(0, 9, -9), Float64, []float64{0.5, 0, 9}},
		{"maximum nan", f.Maximum(1), Float64, []float64{1, math.NaN(), math.Inf(1)}},
		{"where scalar", Where(b, i, 0.5), Float64, []float64{7, 0.5, 2}},
		{"where bool", Where(b, true, b.Not()), Bool, []float64{1, 1, 1}},
		{"clip nan", f.Clip(0, 1), Float64, []float64{0.5, math.NaN(), 1}},
		{"clip lo>hi", i.Clip(5, 3), Int64, []float64{3, 3, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.a.Err(); err != nil {
				t.Fatal(err)
			}
			if tt.a.DType() != tt.dtype {
				t.Fatalf("dtype %v, want %v", tt.a.DType(), tt.dtype)
			}
			got := compute(t, tt.a)
			if got.DType() != tt.dtype {
				t.Fatalf("computed dtype %v, want %v", got.DType(), tt.dtype)
			}
			assertClose(t, got, []int{3}, tt.want, 1e-15)
		})
	}
	// Integer arithmetic is exact beyond 2^53.
	big := FromSlice([]int64{1<<62 + 1}, []int{1})
	if v := compute(t, big.Add(big).Sub(1<<62)).data.([]int64)[0]; v != 1<<62+2 {
		t.Fatalf("int64 arithmetic %d", v)
	}
}

func TestElementwiseErrors(t *testing.T) {
	a := Zeros([]int{3, 4})
	tests := []struct {
		name  string
		a     Array
		parts []string
	}{
		{"broadcast", a.Add(Zeros([]int{5})), []string{"Add", "(3, 4)", "(5,)", "cannot be broadcast", "axis 1", "4 and 5"}},
		{"broadcast 3", Where(a.Gt(0), a, Zeros([]int{2, 1, 3})), []string{"Where", "(2, 1, 3)", "axis 2"}},
		{"operand", a.Add("x"), []string{"Add", "operand 2", "string"}},
		{"nil operand", a.Mul(nil), []string{"Mul", "nil"}},
		{"no array", Where(true, 1, 2), []string{"Where", "no operand is an Array"}},
		{"astype", a.Astype(0), []string{"Astype", "invalid dtype"}},
		{"clip", a.Clip(Zeros([]int{2}), 1), []string{"Clip", "broadcast"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { mustErr(t, tt.a.Err(), tt.parts...) })
	}
	// An integer to a negative power fails when computed, naming the values.
	mustErr(t, computeErr(t, FromSlice([]int64{2}, []int{1}).Pow(-1)), "2 ** -1", "negative")
}

// Expressions that read a transposed matrix in big chunks (more than one
// tile of elements) against a loop, for every dtype and for shapes whose
// rows do not divide a tile.
func TestElementwiseTransposedBigChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	for _, tt := range []struct {
		rows, cols int
		chunks     []int
		dt         DType
	}{
		{300, 300, []int{300, 300}, Float64},
		{97, 211, []int{60, 211}, Float64},
		{2100, 3, []int{2100, 3}, Float32},
		{5, 4100, []int{5, 4000}, Int64},
		{130, 140, []int{-1, 70}, Bool},
		{1, 5000, []int{1, 5000}, Float64},
	} {
		n := tt.rows * tt.cols
		vals := randFloats(rng, n)
		x := FromSlice(vals, []int{tt.rows, tt.cols}, Chunks(tt.chunks...))
		if tt.dt == Bool {
			x = x.Gt(0)
		} else {
			x = x.Astype(tt.dt)
		}
		// xᵀ·2 - xᵀ², read through the transposed chunks, and summed.
		y := x.T().Astype(Float64)
		e := y.Mul(2).Sub(y.Mul(y))
		want := ref{shape: []int{tt.cols, tt.rows}}
		for i := range tt.cols {
			for j := range tt.rows {
				v := vals[j*tt.cols+i]
				switch tt.dt {
				case Bool:
					v = map[bool]float64{true: 1, false: 0}[v > 0]
				case Int64:
					v = math.Trunc(v)
				}
				want.v = append(want.v, 2*v-v*v)
			}
		}
		assertClose(t, compute(t, e), want.shape, want.v, 1e-12)
		s, err := compute(t, e.Sum()).At()
		if err != nil {
			t.Fatal(err)
		}
		if !closeTo(s, refSum(want.v, nil), 1e-12) {
			t.Fatalf("%v %v: sum %v, want %v", tt.dt, []int{tt.rows, tt.cols}, s, refSum(want.v, nil))
		}
		// x + xᵀ of a square matrix.
		if tt.rows == tt.cols && tt.dt == Float64 {
			sq := compute(t, x.Add(x.T()))
			var want []float64
			for i := range tt.rows {
				for j := range tt.cols {
					want = append(want, vals[i*tt.cols+j]+vals[j*tt.cols+i])
				}
			}
			assertClose(t, sq, []int{tt.rows, tt.cols}, want, 0)
		}
	}
}

// A band serves every tile of a transposed matrix with the right elements,
// whatever the tiles' positions relative to the rows and bands.
func TestBandTiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	for _, cols := range []int{1, 3, 97, 300, 2047, 2048, 2049, 4100, 70000} {
		rows := 1 + (3*bandElems+cols-1)/cols + rng.IntN(5)
		if rows*cols > 1<<20 {
			rows = (1 << 20) / cols
		}
		src := make([]float64, rows*cols) // the input, cols×rows row-major
		for i := range src {
			src[i] = float64(i)
		}
		shape := []int{rows, cols}
		nb := min(rows, max((bandElems+cols-1)/cols, (tileSize+cols-1)/cols+1))
		b := &band{buf: makeSlice(Float64, nb*cols), rows: nb, ld: rows, r0: -1}
		for p := 0; p < rows*cols; {
			n := min(1+rng.IntN(tileSize), rows*cols-p)
			got := b.tile(src, shape, p, n).([]float64)
			for k, v := range got {
				i, j := (p+k)/cols, (p+k)%cols
				if want := src[j*rows+i]; v != want {
					t.Fatalf("cols %d: element (%d, %d) of the tile at %d is %v, want %v", cols, i, j, p, v, want)
				}
			}
			p += n
		}
	}
}

// Generators give the same elements a run at a time, in any order, as all
// at once.
func TestChunkGenRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(49, 50))
	for _, p := range []createParams{
		{Kind: "eye", DType: Float64, Shape: []int{7, 9}, Offset: []int{4, 2}},
		{Kind: "eye", DType: Bool, Shape: []int{5, 3}, Offset: []int{0, 3}},
		{Kind: "eye", DType: Int64, Shape: []int{1, 1}, Offset: []int{6, 6}},
		{Kind: "arange", DType: Float32, Shape: []int{40}, Offset: []int{7}, A: 1.5, B: 0.25},
		{Kind: "linspace", DType: Float64, Shape: []int{11}, Offset: []int{10}, A: 0, B: 0.1, Last: 20, IA: int64(math.Float64bits(2))},
		{Kind: "full", DType: Bool, Shape: []int{6, 2}, Offset: []int{0, 0}, A: 3},
		{Kind: "normal", DType: Float32, Shape: []int{33}, Offset: []int{0}, Seed: 3, Stream: 2, A: 1, B: 2},
		{Kind: "integers", DType: Int64, Shape: []int{4, 6}, Offset: []int{0, 0}, Seed: 3, IA: -5, IB: 5},
	} {
		g, err := newChunkGen(p)
		if err != nil {
			t.Fatal(err)
		}
		whole := newDense(p.DType, p.Shape)
		g.fill(whole.data, 0)
		n := whole.Size()
		for range 5 {
			g, _ := newChunkGen(p)
			got := newDense(p.DType, p.Shape)
			// Runs in a random order.
			var cuts []int
			for c := 0; c < n; c += 1 + rng.IntN(5) {
				cuts = append(cuts, c)
			}
			cuts = append(cuts, n)
			order := rng.Perm(len(cuts) - 1)
			for _, k := range order {
				g.fill(subslice(got.data, cuts[k], cuts[k+1]), cuts[k])
			}
			if !slices.Equal(got.Float64s(), whole.Float64s()) {
				t.Fatalf("%s %v: runs give %v, all at once %v", p.Kind, p.Shape, got.Float64s(), whole.Float64s())
			}
		}
		if p.Kind == "eye" {
			for i := range p.Shape[0] {
				for j := range p.Shape[1] {
					v, _ := whole.At(i, j)
					if want := p.Offset[0]+i == p.Offset[1]+j; (v == 1) != want {
						t.Fatalf("eye chunk at %v: (%d, %d) is %v", p.Offset, i, j, v)
					}
				}
			}
		}
	}
}
