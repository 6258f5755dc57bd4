package array

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func transposeRef(r ref, perm []int) ref {
	shape := make([]int, len(perm))
	for i, p := range perm {
		shape[i] = r.shape[p]
	}
	out := ref{shape: shape}
	eachIndex(shape, func(idx []int) {
		src := make([]int, len(idx))
		for i, p := range perm {
			src[p] = idx[i]
		}
		out.v = append(out.v, r.at(src))
	})
	return out
}

func TestTransposeProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for range 20 {
		nd := 1 + rng.IntN(4)
		shape := randShape(rng, nd, 6)
		r := newRef(shape, randFloats(rng, product(shape)))
		perm := rng.Perm(nd)
		got := r.array(rng).Transpose(perm...)
		want := transposeRef(r, perm)
		assertClose(t, compute(t, got), want.shape, want.v, 0)
		if nd >= 2 {
			sw := r.array(rng).SwapAxes(0, -1)
			p := identityAxes(nd)
			p[0], p[nd-1] = p[nd-1], p[0]
			w := transposeRef(r, p)
			assertClose(t, compute(t, sw), w.shape, w.v, 0)
		}
	}
}

// Property test: reshapes between random shapes of the same size, from
// random chunks, keep the row-major order.
func TestReshapeProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	factor := func(n int) []int {
		var out []int
		for n > 1 {
			f := 2
			for n%f != 0 {
				f++
			}
			out = append(out, f)
			n /= f
		}
		return out
	}
	shapeOf := func(fs []int) []int {
		// Group prime factors randomly into axes, with some axes of 1.
		var s []int
		for _, f := range fs {
			if len(s) == 0 || rng.IntN(2) == 0 {
				s = append(s, f)
			} else {
				s[len(s)-1] *= f
			}
			if rng.IntN(6) == 0 {
				s = append(s, 1)
			}
		}
		if len(s) == 0 {
			s = []int{1}
		}
		return s
	}
	for range 40 {
		n := []int{12, 24, 30, 36, 60, 64, 72, 90}[rng.IntN(8)]
		fs := factor(n)
		rng.Shuffle(len(fs), func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
		from := shapeOf(fs)
		rng.Shuffle(len(fs), func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
		to := shapeOf(fs)
		v := randFloats(rng, n)
		a := newRef(from, v).array(rng)
		got := a.Reshape(to...)
		if err := got.Err(); err != nil {
			t.Fatalf("%v -> %v: %v", from, to, err)
		}
		assertClose(t, compute(t, got), to, v, 0)
	}
	a := Arange(0, 12, 1, Chunks(5))
	assertClose(t, compute(t, a.Reshape(-1, 3).Ravel()), []int{12}, compute(t, a).Float64s(), 0)
	mustErr(t, a.Reshape(5, -1).Err(), "Reshape", "(12,)", "[5 -1]")
	mustErr(t, a.Reshape(2, 2).Err(), "size 12", "(2, 2)", "size 4")
	mustErr(t, a.Reshape(-1, -1).Err(), "only one may be -1")
	if s := Zeros([]int{0, 3}).Reshape(3, 0).Shape(); !slices.Equal(s, []int{3, 0}) {
		t.Fatalf("empty reshape %v", s)
	}
}

// Property test: rechunking to random chunks keeps every element, and
// takes a two-stage plan when a new chunk would read many old ones.
func TestRechunkProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for range 30 {
		nd := 1 + rng.IntN(3)
		shape := randShape(rng, nd, 12)
		r := newRef(shape, randFloats(rng, product(shape)))
		a := r.array(rng)
		to := randChunks(rng, shape)
		got := a.Rechunk(ChunkSizes(to...))
		if !equalChunks(got.Chunks(), to) {
			t.Fatalf("chunks %v, want %v", got.Chunks(), to)
		}
		assertClose(t, compute(t, got), shape, r.v, 0)
	}
	// Rows to columns: each new chunk would read every old chunk (the
	// whole array), so the old chunks are split first, one task per old
	// chunk, and each new chunk is put together from pieces that add up to
	// its own size.
	x := Uniform(1, []int{40, 40}, 0, 1, Chunks(4, 40))
	y := x.Rechunk(Chunks(40, 4))
	g, _, err := y.Graph()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range g.Keys() {
		task, _ := g.Get(k)
		if task.Op != opAssemble {
			continue
		}
		for _, d := range task.Deps {
			if d.Prefix() == "uniform" && len(task.Deps) > 1 {
				t.Fatalf("%s reads %d chunks, old ones among them", k, len(task.Deps))
			}
		}
	}
	assertClose(t, compute(t, y), []int{40, 40}, compute(t, x).Float64s(), 0)
	mustErr(t, x.Rechunk(ChunkSizes([]int{20, 20}, []int{30})).Err(), "[30]", "add up to 30", "length 40")
	mustErr(t, x.Rechunk().Err(), "Rechunk", "say how")
}

func TestConcatenateStack(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	for range 15 {
		nd := 1 + rng.IntN(3)
		shape := randShape(rng, nd, 6)
		ax := rng.IntN(nd)
		var refs []ref
		var arrs []Array
		for range 1 + rng.IntN(3) {
			s := slices.Clone(shape)
			s[ax] = 1 + rng.IntN(5)
			r := newRef(s, randFloats(rng, product(s)))
			refs = append(refs, r)
			arrs = append(arrs, r.array(rng))
		}
		// Reference: walk the output and pick the input.
		outShape := slices.Clone(shape)
		outShape[ax] = 0
		for _, r := range refs {
			outShape[ax] += r.shape[ax]
		}
		var want []float64
		eachIndex(outShape, func(idx []int) {
			i := idx[ax]
			for _, r := range refs {
				if i < r.shape[ax] {
					src := slices.Clone(idx)
					src[ax] = i
					want = append(want, r.at(src))
					return
				}
				i -= r.shape[ax]
			}
		})
		assertClose(t, compute(t, Concatenate(arrs, ax)), outShape, want, 0)
		// Stack the first array with itself (and doubled) on a new axis.
		st := Stack([]Array{arrs[0], arrs[0].Mul(2)}, ax)
		sShape := slices.Insert(slices.Clone(refs[0].shape), ax, 2)
		var sw []float64
		eachIndex(sShape, func(idx []int) {
			src := slices.Delete(slices.Clone(idx), ax, ax+1)
			v := refs[0].at(src)
			if idx[ax] == 1 {
				v *= 2
			}
			sw = append(sw, v)
		})
		assertClose(t, compute(t, st), sShape, sw, 0)
	}
	i := FromSlice([]int64{1, 2}, []int{2})
	f := FromSlice([]float32{0.5}, []int{1})
	c := Concatenate([]Array{i, f}, 0)
	if c.DType() != Float64 {
		t.Fatalf("concatenated dtype %v", c.DType())
	}
	assertClose(t, compute(t, c), []int{3}, []float64{1, 2, 0.5}, 0)
	mustErr(t, Concatenate([]Array{Zeros([]int{2, 3}), Zeros([]int{2, 4})}, 0).Err(), "array 1", "(2, 4)", "(2, 3)", "axis 1")
	mustErr(t, Concatenate(nil, 0).Err(), "no arrays")
	mustErr(t, Stack([]Array{Zeros([]int{2}), Zeros([]int{3})}, 0).Err(), "Stack", "(3,)", "(2,)")
}

func TestSqueezeExpand(t *testing.T) {
	a := FromSlice([]float64{1, 2, 3}, []int{1, 3, 1}, Chunks(1, 2, 1))
	if s := a.Squeeze().Shape(); !slices.Equal(s, []int{3}) {
		t.Fatalf("squeeze %v", s)
	}
	if s := a.Squeeze(-1).Shape(); !slices.Equal(s, []int{1, 3}) {
		t.Fatalf("squeeze -1 %v", s)
	}
	e := a.Squeeze().ExpandDims(0).ExpandDims(-1)
	assertClose(t, compute(t, e), []int{1, 3, 1}, []float64{1, 2, 3}, 0)
	mustErr(t, a.Squeeze(1).Err(), "axis 1", "length 3")
	mustErr(t, a.ExpandDims(5).Err(), "axis 5")
	mustErr(t, a.Transpose(0, 1).Err(), "Transpose")
}

// Concatenate and Stack of arrays whose lengths are not known until
// computed (after Mask): chunks that agree join; chunks that turn out to
// differ are an error naming the function, the arrays, their shapes and
// the lengths, however the result is used; mismatches that can be seen
// when building are errors then.
func TestConcatenateUnknownChunks(t *testing.T) {
	grid := func(rows int) Array {
		return Arange(0, 12, 1, Chunks(4)).Reshape(6, 2).Rechunk(Chunks(rows, 2))
	}
	m := grid(3)                                                 // rows [0 1] [2 3] ... [10 11], chunks ([3 3], [2])
	col0 := func(x Array) Array { return x.Index(All(), At(0)) } // 0 2 4 6 8 10
	late := m.Mask(col0(m).Gt(4))                                // rows 3..5: chunks of 0 and 3 rows
	early := m.Mask(col0(m).Lt(6))                               // rows 0..2: chunks of 3 and 0 rows
	all := m.Mask(col0(m).Ge(0))                                 // every row, chunks of unknown length
	narrow := Arange(0, 12, 1, Chunks(4)).Reshape(6, 2).Rechunk(Chunks(3, 1))
	narrowLate := narrow.Mask(col0(narrow).Gt(4)) // chunks ([? ?], [1 1])
	v := Arange(0, 3, 1)
	ragged := Concatenate([]Array{v.Mask(v.Gt(0)), Arange(0, 3, 1)}, 0) // chunks [? 3]

	ok := []struct {
		name  string
		a     Array
		shape []int // as computed
		want  []float64
	}{
		{"same mask", Concatenate([]Array{late, late.Mul(10)}, 1), []int{3, 4},
			[]float64{6, 7, 60, 70, 8, 9, 80, 90, 10, 11, 100, 110}},
		{"along the unknown axis", Concatenate([]Array{late, early}, 0), []int{6, 2},
			[]float64{6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5}},
		{"unknown with known", Concatenate([]Array{all, m.Add(100)}, 1), []int{6, 4},
			[]float64{0, 1, 100, 101, 2, 3, 102, 103, 4, 5, 104, 105, 6, 7, 106, 107, 8, 9, 108, 109, 10, 11, 110, 111}},
		{"stack", Stack([]Array{late, late.Add(1)}, 2), []int{3, 2, 2},
			[]float64{6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12}},
	}
	for _, tt := range ok {
		t.Run(tt.name, func(t *testing.T) {
			assertClose(t, compute(t, tt.a), tt.shape, tt.want, 0)
		})
	}
	if c := Concatenate([]Array{all, m}, 1).Chunks(); !slices.Equal(c[0], []int{3, 3}) {
		t.Fatalf("chunks %v: the lengths m knows should be known", c)
	}

	// Found when computed, whatever is done with the result.
	computed := []struct {
		name  string
		a     Array
		parts []string
	}{
		{"concatenate", Concatenate([]Array{late, early}, 1),
			[]string{"Concatenate: array 1 (shape (?, 2)) does not fit array 0 (shape (?, 2)) along axis 0", "there has length", "array 0's has"}},
		{"concatenate then sum", Concatenate([]Array{late, early}, 1).Sum(),
			[]string{"Concatenate: array 1", "along axis 0"}},
		{"third array", Concatenate([]Array{late, late, early.Mul(2)}, 1).Max(Axis(0)),
			[]string{"Concatenate: array 2 (shape (?, 2))", "array 0 (shape (?, 2))"}},
		{"known with unknown", Concatenate([]Array{late, m}, 1),
			[]string{"array 1 (shape (6, 2)) does not fit array 0 (shape (?, 2))", "length 3, array 0's has 0"}},
		{"stack on a new first axis", Stack([]Array{late, early}, 0),
			[]string{"Stack: array 1 (shape (?, 2)) does not fit array 0 (shape (?, 2)) along axis 0"}},
		{"stack on a new last axis", Stack([]Array{late, early}, -1).Mean(),
			[]string{"Stack: array 1", "along axis 0"}},
	}
	for _, tt := range computed {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.a.Err(); err != nil {
				t.Fatalf("error when building: %v", err)
			}
			mustErr(t, computeErr(t, tt.a), tt.parts...)
		})
	}

	// Found when building.
	built := []struct {
		name  string
		a     Array
		parts []string
	}{
		{"chunked otherwise", Concatenate([]Array{late, grid(2)}, 1),
			[]string{"Concatenate: array 1 (shape (6, 2)) has chunks 3×2 along axis 0, array 0 (shape (?, 2)) has [? ?]", "ComputeChunkSizes"}},
		{"known lengths differ", Stack([]Array{ragged, Arange(0, 6, 1, ChunkSizes([]int{2, 4}))}, 0),
			[]string{"Stack: array 1 (shape (6,)) has chunks [2 4] along axis 0", "chunk 1 differs (4 and 3)"}},
		{"rechunk of unknown", Concatenate([]Array{late, narrowLate}, 0),
			[]string{"Concatenate: array 1 (shape (?, 2)) has chunks of unknown size", "rechunked like array 0", "ComputeChunkSizes"}},
		{"known shapes", Stack([]Array{late, Zeros([]int{4, 3})}, 0),
			[]string{"Stack: array 1 has shape (4, 3), array 0 has shape (?, 2)"}},
	}
	for _, tt := range built {
		t.Run(tt.name, func(t *testing.T) {
			mustErr(t, tt.a.Err(), tt.parts...)
		})
	}
}
