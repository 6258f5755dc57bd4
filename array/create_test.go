package array

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestCreate(t *testing.T) {
	tests := []struct {
		name  string
		a     Array
		shape []int
		dtype DType
		want  []float64
	}{
		{"zeros", Zeros([]int{2, 3}, Chunks(1, 2)), []int{2, 3}, Float64, []float64{0, 0, 0, 0, 0, 0}},
		{"ones int", Ones([]int{3}, WithDType(Int64), Chunks(2)), []int{3}, Int64, []float64{1, 1, 1}},
		{"full bool", Full([]int{2}, 5, WithDType(Bool)), []int{2}, Bool, []float64{1, 1}},
		{"full scalar", Full(nil, 2.5), []int{}, Float64, []float64{2.5}},
		{"arange", Arange(1, 2, 0.25, Chunks(3)), []int{4}, Float64, []float64{1, 1.25, 1.5, 1.75}},
		{"arange int down", Arange(5, 0, -2, WithDType(Int64), Chunks(1)), []int{3}, Int64, []float64{5, 3, 1}},
		{"arange empty", Arange(0, -1, 1), []int{0}, Float64, nil},
		{"linspace", Linspace(0, 1, 5, Chunks(2)), []int{5}, Float64, []float64{0, 0.25, 0.5, 0.75, 1}},
		{"linspace 1", Linspace(3, 7, 1), []int{1}, Float64, []float64{3}},
		{"eye", Eye(3, Chunks(2)), []int{3, 3}, Float64, []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}},
		{"from slice f32", FromSlice([]float32{1, 2, 3, 4}, []int{2, 2}, Chunks(1)), []int{2, 2}, Float32, []float64{1, 2, 3, 4}},
		{"from mat", FromMat(mat.NewDense(2, 2, []float64{1, 2, 3, 4}), ChunkSizes([]int{1, 1}, []int{2})), []int{2, 2}, Float64, []float64{1, 2, 3, 4}},
		{"from dense view", FromDense(must(NewDense([]int64{1, 2, 3, 4, 5, 6}, 2, 3)).T(), Chunks(2)), []int{3, 2}, Int64, []float64{1, 4, 2, 5, 3, 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !slices.Equal(tt.a.Shape(), tt.shape) || tt.a.DType() != tt.dtype {
				t.Fatalf("shape %v dtype %v, want %v %v", tt.a.Shape(), tt.a.DType(), tt.shape, tt.dtype)
			}
			got := compute(t, tt.a)
			if got.DType() != tt.dtype {
				t.Fatalf("computed dtype %v", got.DType())
			}
			assertClose(t, got, tt.shape, tt.want, 0)
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// Chunks that do not cover the shape, and other bad arguments, are errors
// that name the numbers.
func TestCreateErrors(t *testing.T) {
	tests := []struct {
		name  string
		a     Array
		parts []string
	}{
		{"sizes sum", Zeros([]int{10, 4}, ChunkSizes([]int{3, 3, 3}, []int{4})), []string{"[3 3 3]", "axis 0", "add up to 9", "length 10"}},
		{"sizes axes", Zeros([]int{10, 4}, ChunkSizes([]int{10})), []string{"1 axes", "(10, 4)"}},
		{"zero chunk", Zeros([]int{4}, ChunkSizes([]int{0, 4})), []string{"positive"}},
		{"regular count", Zeros([]int{4, 4, 4}, Chunks(2, 2)), []string{"2 sizes", "3 axes"}},
		{"regular zero", Zeros([]int{4}, Chunks(0)), []string{"chunk size 0", "positive"}},
		{"negative shape", Zeros([]int{3, -1}), []string{"negative size -1", "axis 1", "[3 -1]"}},
		{"negative eye", Eye(-2), []string{"negative size -2", "[-2 -2]"}},
		{"bytes", Zeros([]int{3}, ChunkBytes(0)), []string{"ChunkBytes(0)"}},
		{"slice size", FromSlice([]float64{1, 2, 3}, []int{2, 2}), []string{"shape [2 2]", "4 elements", "has 3"}},
		{"option", Zeros([]int{3}, KeepDims()), []string{"Zeros does not take option KeepDims"}},
		{"arange step", Arange(0, 1, 0), []string{"step"}},
		{"uniform range", Uniform(1, []int{3}, 2, 1), []string{"low 2", "high 1"}},
		{"uniform int", Uniform(1, []int{3}, 0, 1, WithDType(Int64)), []string{"int64"}},
		{"integers range", Integers(1, []int{3}, 5, 5), []string{"low 5", "high 5"}},
		{"normal std", Normal(1, []int{3}, 0, -1), []string{"std -1"}},
		{"linspace", Linspace(0, 1, -1), []string{"-1"}},
		{"zero array", Array{}.Add(1), []string{"zero Array"}},
		{"dtype", Ones([]int{2}, WithDType(DType(9))), []string{"invalid dtype"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mustErr(t, tt.a.Err(), tt.parts...)
			mustErr(t, computeErr(t, tt.a), tt.parts...)
			// The error travels through everything built on the array.
			mustErr(t, tt.a.Sum().Mul(2).Err(), tt.parts...)
		})
	}
}

func TestAutoChunks(t *testing.T) {
	a := Zeros([]int{1000, 1000}, ChunkBytes(1<<20))
	bytes := 8
	for _, cs := range a.Chunks() {
		bytes *= slices.Max(cs)
	}
	if bytes > 1<<20 {
		t.Fatalf("chunks %v exceed 1 MiB", a.Chunks())
	}
	if n := Zeros([]int{10, 10}).NumBlocks(); !slices.Equal(n, []int{1, 1}) {
		t.Fatalf("small array in %v chunks", n)
	}
}

// Random arrays depend on the seed and the chunks only: computing part of
// an array gives the same numbers as computing all of it, and an array made
// again with the same seed and chunks is the same.
func TestRandomDeterminism(t *testing.T) {
	for _, mk := range []func(seed uint64, opts ...Option) Array{
		func(s uint64, o ...Option) Array { return Uniform(s, []int{30, 20}, -1, 3, o...) },
		func(s uint64, o ...Option) Array { return Normal(s, []int{30, 20}, 5, 2, o...) },
		func(s uint64, o ...Option) Array { return Integers(s, []int{30, 20}, -5, 50, o...) },
		func(s uint64, o ...Option) Array {
			return Uniform(s, []int{30, 20}, 0, 1, append(o, WithDType(Float32))...)
		},
	} {
		a := mk(7, Chunks(7, 6))
		full := compute(t, a)
		again := compute(t, mk(7, Chunks(7, 6)))
		if !slices.Equal(full.Float64s(), again.Float64s()) {
			t.Fatal("same seed and chunks gave other numbers")
		}
		part := compute(t, a.Index(Slice(7, 14), Slice(6, 12)))
		for i := range 7 {
			for j := range 6 {
				w, _ := full.At(7+i, 6+j)
				g, _ := part.At(i, j)
				if w != g {
					t.Fatalf("chunk (1, 1) computed alone differs at (%d, %d): %v, %v", i, j, g, w)
				}
			}
		}
		other := compute(t, mk(8, Chunks(7, 6)))
		if slices.Equal(full.Float64s(), other.Float64s()) {
			t.Fatal("other seed gave the same numbers")
		}
	}
	u := compute(t, Uniform(3, []int{10000}, 2, 5, Chunks(999)))
	ints := compute(t, Integers(3, []int{10000}, -3, 4, Chunks(999)))
	var sum float64
	seen := map[float64]bool{}
	for i, v := range u.Float64s() {
		if v < 2 || v >= 5 {
			t.Fatalf("uniform value %v out of [2, 5)", v)
		}
		sum += v
		iv := ints.Float64s()[i]
		if iv < -3 || iv >= 4 || iv != math.Trunc(iv) {
			t.Fatalf("integer %v out of [-3, 4)", iv)
		}
		seen[iv] = true
	}
	if m := sum / 10000; math.Abs(m-3.5) > 0.05 || len(seen) != 7 {
		t.Fatalf("uniform mean %v, integers seen %v", m, seen)
	}
	n := compute(t, Normal(3, []int{20000}, 5, 2, Chunks(999)))
	mean := compute(t, FromDense(n).Mean())
	std := compute(t, FromDense(n).Std())
	if m, _ := mean.At(); math.Abs(m-5) > 0.05 {
		t.Fatalf("normal mean %v", m)
	}
	if s, _ := std.At(); math.Abs(s-2) > 0.05 {
		t.Fatalf("normal std %v", s)
	}
}

// The same expression built twice gets the same keys and graph bytes, and
// a sub-expression used twice is computed once.
func TestDeterministicKeys(t *testing.T) {
	build := func() Array {
		x := Uniform(1, []int{8, 8}, 0, 1, Chunks(4))
		y := x.Add(1).Mul(x.Sub(1))
		return y.Sum(Axis(0)).Add(y.Mean(Axis(0)))
	}
	g1, k1, err := build().Graph()
	if err != nil {
		t.Fatal(err)
	}
	g2, k2, _ := build().Graph()
	if !slices.Equal(k1, k2) || g1.Len() != g2.Len() {
		t.Fatalf("keys %v and %v", k1, k2)
	}
	for _, k := range g1.Keys() {
		t1, _ := g1.Get(k)
		t2, ok := g2.Get(k)
		if !ok || !t1.Equal(t2) {
			t.Fatalf("task %s differs", k)
		}
	}
	// x's 4 chunks are made once; y (used twice) is one task per chunk.
	count := map[string]int{}
	for _, k := range g1.Keys() {
		count[k.Prefix()]++
	}
	if count["uniform"] != 4 || count["mul"] != 4 {
		t.Fatalf("tasks by kind %v", count)
	}
	_ = rand.New(rand.NewPCG(1, 1))
}

// The numbers are those of math/rand/v2 with a PCG source seeded with
// (seed, the chunk's row-major number), drawn in row-major order within
// the chunk, as the documentation promises: a program in another language
// can reproduce them.
func TestRandomStreams(t *testing.T) {
	const seed = 11
	shape, chunks := []int{7, 9}, []int{3, 4}
	grid := []int{3, 3}
	draw := func(f func(r *rand.Rand) float64) []float64 {
		out := make([]float64, 63)
		for bi := range grid[0] {
			for bj := range grid[1] {
				r := rand.New(rand.NewPCG(seed, uint64(bi*grid[1]+bj)))
				for i := bi * 3; i < min(bi*3+3, 7); i++ {
					for j := bj * 4; j < min(bj*4+4, 9); j++ {
						out[i*9+j] = f(r)
					}
				}
			}
		}
		return out
	}
	tests := []struct {
		name string
		a    Array
		want []float64
	}{
		{"uniform", Uniform(seed, shape, -2, 6, Chunks(chunks...)), draw(func(r *rand.Rand) float64 { return -2 + 8*r.Float64() })},
		{"uniform float32", Uniform(seed, shape, 0, 3, Chunks(chunks...), WithDType(Float32)),
			draw(func(r *rand.Rand) float64 { return float64(float32(3 * r.Float64())) })},
		{"normal", Normal(seed, shape, 1, 0.5, Chunks(chunks...)), draw(func(r *rand.Rand) float64 { return 1 + 0.5*r.NormFloat64() })},
		{"normal float32", Normal(seed, shape, 1, 0.5, Chunks(chunks...), WithDType(Float32)),
			draw(func(r *rand.Rand) float64 { return float64(float32(1 + 0.5*r.NormFloat64())) })},
		{"integers", Integers(seed, shape, -4, 1000, Chunks(chunks...)), draw(func(r *rand.Rand) float64 { return float64(-4 + int64(r.Uint64N(1004))) })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertClose(t, compute(t, tt.a), shape, tt.want, 0)
			// The same numbers reach an expression and a reduction.
			twice := make([]float64, len(tt.want))
			for i, v := range tt.want {
				twice[i] = 2 * v
			}
			assertClose(t, compute(t, tt.a.Astype(Float64).Mul(2)), shape, twice, 0)
			assertClose(t, compute(t, tt.a.Astype(Float64).Sum(Axis(1))), []int{7}, reduceRef(newRef(shape, tt.want), []int{1}, false, refSum).v, 1e-12)
			assertClose(t, compute(t, tt.a.T().Astype(Float64).Add(1)), []int{9, 7}, transposedPlus(shape, tt.want, 1), 0)
		})
	}
}

func transposedPlus(shape []int, v []float64, add float64) []float64 {
	out := make([]float64, 0, len(v))
	for j := range shape[1] {
		for i := range shape[0] {
			out = append(out, v[i*shape[1]+j]+add)
		}
	}
	return out
}
