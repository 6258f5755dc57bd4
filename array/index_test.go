package array

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// pySlice lists the positions a Python slice selects.
func pySlice(start, stop, step, n int) []int {
	f, s, c := sliceRange(start, stop, step, n)
	out := make([]int, c)
	for i := range out {
		out[i] = f + i*s
	}
	return out
}

// selectRef selects positions per axis (outer product), dropping the axes
// in drop.
func selectRef(r ref, pos [][]int, drop []bool) ref {
	var shape []int
	for a, p := range pos {
		if !drop[a] {
			shape = append(shape, len(p))
		}
	}
	out := ref{shape: shape}
	full := make([]int, len(pos))
	for a, p := range pos {
		full[a] = len(p)
	}
	eachIndex(full, func(idx []int) {
		src := make([]int, len(idx))
		for a := range idx {
			src[a] = pos[a][idx[a]]
		}
		out.v = append(out.v, r.at(src))
	})
	return out
}

// Property test: slices with steps and negative bounds, At and Take on
// random shapes and chunks, against Python's rules.
func TestIndexProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	bound := func(n int) int {
		switch rng.IntN(4) {
		case 0:
			return Open
		case 1:
			return -rng.IntN(n + 3)
		default:
			return rng.IntN(n + 3)
		}
	}
	for range 80 {
		nd := 1 + rng.IntN(3)
		shape := randShape(rng, nd, 9)
		r := newRef(shape, randFloats(rng, product(shape)))
		idx := make([]Index, 0, nd)
		pos := make([][]int, nd)
		drop := make([]bool, nd)
		for a := range nd {
			n := shape[a]
			switch rng.IntN(5) {
			case 0:
				i := rng.IntN(2*n) - n
				idx = append(idx, At(i))
				pos[a] = []int{(i + n) % n}
				drop[a] = true
			case 1:
				var take []int
				for range rng.IntN(6) {
					take = append(take, rng.IntN(2*n)-n)
				}
				idx = append(idx, Take(take...))
				for _, i := range take {
					pos[a] = append(pos[a], (i+n)%n)
				}
			default:
				step := 1 + rng.IntN(3)
				if rng.IntN(3) == 0 {
					step = -step
				}
				s, e := bound(n), bound(n)
				idx = append(idx, Step(s, e, step))
				pos[a] = pySlice(s, e, step, n)
			}
		}
		if rng.IntN(4) == 0 && nd > 1 {
			// Fewer indices than axes: the rest are whole.
			idx = idx[:nd-1]
			pos[nd-1] = pySlice(Open, Open, 1, shape[nd-1])
			drop[nd-1] = false
		}
		want := selectRef(r, pos, drop)
		got := r.array(rng).Index(idx...)
		if err := got.Err(); err != nil {
			t.Fatalf("%v of %v: %v", idx, shape, err)
		}
		if !slices.Equal(got.Shape(), want.shape) {
			t.Fatalf("%v of %v: shape %v, want %v", idx, shape, got.Shape(), want.shape)
		}
		assertClose(t, compute(t, got), want.shape, want.v, 0)
	}
}

// A slice along chunk boundaries reuses the chunks: no copy task.
func TestIndexReusesChunks(t *testing.T) {
	x := Uniform(1, []int{8, 8}, 0, 1, Chunks(4))
	g, keys, err := x.Index(Slice(4, 8)).Graph()
	if err != nil {
		t.Fatal(err)
	}
	if g.Len() != 2 || keys[0].Prefix() != "uniform" {
		t.Fatalf("%d tasks, keys %v", g.Len(), keys)
	}
}

func TestIndexErrors(t *testing.T) {
	a := Zeros([]int{3, 4})
	tests := []struct {
		name  string
		a     Array
		parts []string
	}{
		{"at", a.Index(At(3)), []string{"index 3", "axis 0", "length 3", "(3, 4)"}},
		{"at negative", a.Index(All(), At(-5)), []string{"index -5", "axis 1", "length 4"}},
		{"take", a.Index(Take(0, 7)), []string{"Take index 7", "position 1", "axis 0", "length 3"}},
		{"step", a.Index(Step(0, 2, 0)), []string{"step 0"}},
		{"too many", a.Index(All(), All(), All()), []string{"3 indices", "2 dimensions"}},
		{"zero index", a.Index(Index{}), []string{"zero Index"}},
		{"mask type", a.Mask(a), []string{"float64", "want bool"}},
		{"mask shape", a.Mask(Zeros([]int{4}).Gt(0)), []string{"(4,)", "(3, 4)"}},
		{"compress", a.Compress(Zeros([]int{3}).Gt(0), 1), []string{"length 3", "axis 1", "length 4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { mustErr(t, tt.a.Err(), tt.parts...) })
	}
}

// Boolean masks select in row-major order, with chunk sizes that are
// unknown until computed.
func TestMask(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for range 10 {
		nd := 1 + rng.IntN(3)
		shape := randShape(rng, nd, 7)
		r := newRef(shape, randFloats(rng, product(shape)))
		k := 1 + rng.IntN(nd)
		a := r.array(rng)
		mask := a.Index().Sum(Axis(identityAxes(nd)[k:]...)).Gt(0)
		got := a.Mask(mask)
		if got.Shape()[0] != -1 {
			t.Fatalf("masked shape %v", got.Shape())
		}
		// Reference: the rows (over the first k axes) whose sum is > 0.
		inner := product(shape[k:])
		var want []float64
		rows := 0
		for i := 0; i < len(r.v); i += inner {
			if refSum(r.v[i:i+inner], nil) > 0 {
				want = append(want, r.v[i:i+inner]...)
				rows++
			}
		}
		wantShape := append([]int{rows}, shape[k:]...)
		assertClose(t, compute(t, got), wantShape, want, 0)
		// Reductions work on unknown sizes; indexing needs them known.
		if s, _ := compute(t, got.Sum()).At(); !closeTo(s, refSum(want, nil), 1e-12) {
			t.Fatalf("sum of masked %v", s)
		}
		mustErr(t, got.Index(Slice(0, 1)).Err(), "unknown size", "ComputeChunkSizes")
		known, err := got.ComputeChunkSizes(ctxB, newExec(t))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(known.Shape(), wantShape) {
			t.Fatalf("resolved shape %v, want %v", known.Shape(), wantShape)
		}
		if rows > 0 {
			assertClose(t, compute(t, known.Index(Step(Open, Open, -1))), wantShape, reverseRows(want, inner), 0)
		}
	}
	x := FromSlice([]float64{1, 2, 3, 4, 5, 6}, []int{2, 3}, Chunks(1, 2))
	c := x.Compress(FromSlice([]bool{true, false, true}, []int{3}), 1)
	assertClose(t, compute(t, c), []int{2, 2}, []float64{1, 3, 4, 6}, 0)
}

func reverseRows(v []float64, inner int) []float64 {
	var out []float64
	for i := len(v) - inner; i >= 0; i -= inner {
		out = append(out, v[i:i+inner]...)
	}
	return out
}

// Arrays whose chunks have unknown lengths combine chunk by chunk: when
// the lengths turn out to differ, even where one is 1, that is an error
// naming the lengths, never a broadcast of the chunk.
func TestUnknownChunksCombine(t *testing.T) {
	v := Arange(0, 8, 1, Chunks(4))
	x := v.Mask(v.Gt(2)) // chunks of 1 and 4 elements: 3 | 4 5 6 7
	y := v.Mask(v.Lt(5)) // chunks of 4 and 1 elements: 0 1 2 3 | 4
	if !slices.Equal(x.Shape(), []int{-1}) || !slices.Equal(y.Shape(), []int{-1}) {
		t.Fatalf("shapes %v and %v", x.Shape(), y.Shape())
	}
	mustErr(t, computeErr(t, x.Add(y)), "chunks along axis 0 have lengths", "1", "4", "ComputeChunkSizes")
	mustErr(t, computeErr(t, x.Mul(y).Sum()), "chunks along axis 0 have lengths")
	// Chunks that agree combine; a length-1 array still broadcasts.
	assertClose(t, compute(t, x.Add(x.Mul(2))), []int{5}, []float64{9, 12, 15, 18, 21}, 0)
	assertClose(t, compute(t, x.Add(FromSlice([]float64{10}, []int{1}))), []int{5}, []float64{13, 14, 15, 16, 17}, 0)
	m := Arange(0, 12, 1, Chunks(4)).Reshape(6, 2).Rechunk(Chunks(3, 2))
	rows := m.Mask(m.Index(All(), At(0)).Gt(4))
	assertClose(t, compute(t, rows.Sub(FromSlice([]float64{1, 2}, []int{1, 2}))), []int{3, 2}, []float64{5, 5, 7, 7, 9, 9}, 0)
}
