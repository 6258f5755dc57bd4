package array

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// reduceRef reduces r over axes with f, which gets the values of a cell
// in row-major order and their flat index over the reduced axes.
func reduceRef(r ref, axes []int, keep bool, f func(vals []float64, pos []int) float64) ref {
	var outShape, cellShape []int
	for a, s := range r.shape {
		if slices.Contains(axes, a) {
			cellShape = append(cellShape, s)
			if keep {
				outShape = append(outShape, 1)
			}
		} else {
			outShape = append(outShape, s)
		}
	}
	var kept []int
	for a := range r.shape {
		if !slices.Contains(axes, a) {
			kept = append(kept, a)
		}
	}
	keptShape := make([]int, len(kept))
	for i, a := range kept {
		keptShape[i] = r.shape[a]
	}
	out := ref{shape: outShape}
	eachIndex(keptShape, func(k []int) {
		var vals []float64
		var pos []int
		p := 0
		eachIndex(cellShape, func(c []int) {
			idx := make([]int, len(r.shape))
			for i, a := range kept {
				idx[a] = k[i]
			}
			j := 0
			for a := range r.shape {
				if slices.Contains(axes, a) {
					idx[a] = c[j]
					j++
				}
			}
			vals = append(vals, r.at(idx))
			pos = append(pos, p)
			p++
		})
		out.v = append(out.v, f(vals, pos))
	})
	return out
}

func refSum(v []float64, _ []int) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

func refVar(v []float64, ddof int) float64 {
	m := refSum(v, nil) / float64(len(v))
	q := 0.0
	for _, x := range v {
		q += (x - m) * (x - m)
	}
	if len(v)-ddof <= 0 {
		return math.NaN()
	}
	return q / float64(len(v)-ddof)
}

func skipNaN(v []float64) []float64 {
	var out []float64
	for _, x := range v {
		if !math.IsNaN(x) {
			out = append(out, x)
		}
	}
	return out
}

var reductionRefs = map[string]func(v []float64, pos []int) float64{
	"sum": refSum,
	"prod": func(v []float64, _ []int) float64 {
		p := 1.0
		for _, x := range v {
			p *= x
		}
		return p
	},
	"min": func(v []float64, _ []int) float64 {
		m := math.Inf(1)
		for _, x := range v {
			if math.IsNaN(x) {
				return x
			}
			m = math.Min(m, x)
		}
		return m
	},
	"max": func(v []float64, _ []int) float64 {
		m := math.Inf(-1)
		for _, x := range v {
			if math.IsNaN(x) {
				return x
			}
			m = math.Max(m, x)
		}
		return m
	},
	"mean": func(v []float64, _ []int) float64 { return refSum(v, nil) / float64(len(v)) },
	"var":  func(v []float64, _ []int) float64 { return refVar(v, 0) },
	"std":  func(v []float64, _ []int) float64 { return math.Sqrt(refVar(v, 0)) },
	"argmin": func(v []float64, pos []int) float64 {
		b := 0
		for i, x := range v {
			if math.IsNaN(x) {
				return float64(pos[i])
			}
			if x < v[b] {
				b = i
			}
		}
		return float64(pos[b])
	},
	"argmax": func(v []float64, pos []int) float64 {
		b := 0
		for i, x := range v {
			if math.IsNaN(x) {
				return float64(pos[i])
			}
			if x > v[b] {
				b = i
			}
		}
		return float64(pos[b])
	},
	"any": func(v []float64, _ []int) float64 {
		for _, x := range v {
			if x != 0 {
				return 1
			}
		}
		return 0
	},
	"all": func(v []float64, _ []int) float64 {
		for _, x := range v {
			if x == 0 {
				return 0
			}
		}
		return 1
	},
	"nansum":  func(v []float64, p []int) float64 { return refSum(skipNaN(v), p) },
	"nanmean": func(v []float64, p []int) float64 { s := skipNaN(v); return refSum(s, p) / float64(len(s)) },
	"nanmax": func(v []float64, _ []int) float64 {
		s := skipNaN(v)
		if len(s) == 0 {
			return math.NaN()
		}
		return slices.Max(s)
	},
	"nanvar": func(v []float64, _ []int) float64 { return refVar(skipNaN(v), 0) },
}

// Property test: every reduction over random shapes, chunks, axes,
// KeepDims and SplitEvery, against a loop. The values are multiples of
// 1/8, a few NaN for the NaN-aware ones; sums are compared within 1e-12
// relative (chunked sums add in another order).
func TestReduceProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	kinds := make([]string, 0, len(reductionRefs))
	for k := range reductionRefs {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for trial := range 3 * len(kinds) {
		kind := kinds[trial%len(kinds)]
		nd := 1 + rng.IntN(3)
		shape := randShape(rng, nd, 9)
		vals := randFloats(rng, product(shape))
		if kind == "prod" {
			for i := range vals {
				vals[i] = 1 + vals[i]/40
			}
		}
		if kind[:3] == "nan" || (kind == "max" && trial%2 == 0) {
			for range 1 + product(shape)/5 {
				vals[rng.IntN(len(vals))] = math.NaN()
			}
		}
		r := newRef(shape, vals)
		var axes []int
		switch {
		case kind == "argmin" || kind == "argmax":
			if rng.IntN(2) == 0 {
				axes = []int{rng.IntN(nd)}
			} else {
				axes = identityAxes(nd)
			}
		default:
			for a := range nd {
				if rng.IntN(2) == 0 {
					axes = append(axes, a)
				}
			}
			if len(axes) == 0 {
				axes = []int{rng.IntN(nd)}
			}
		}
		keep := rng.IntN(2) == 0 && kind[:3] != "arg"
		opts := []Option{Axis(axes...), SplitEvery(2 + rng.IntN(4))}
		if keep {
			opts = append(opts, KeepDims())
		}
		if kind == "argmin" || kind == "argmax" {
			if len(axes) == nd && rng.IntN(2) == 0 {
				opts = opts[1:] // no Axis: over the flattened array
			}
		}
		want := reduceRef(r, axes, keep, reductionRefs[kind])
		if nd > 1 && slices.Contains([]string{"nanmax", "nanmean", "nanvar"}, kind) {
			// All-NaN cells are fine (NaN), but keep the test about values.
			for i := range want.v {
				if math.IsNaN(want.v[i]) {
					want.v[i] = math.NaN()
				}
			}
		}
		got := r.array(rng).Reduce(kind, opts...)
		if err := got.Err(); err != nil {
			t.Fatalf("%s over %v of %v: %v", kind, axes, shape, err)
		}
		d := compute(t, got)
		assertClose(t, d, want.shape, want.v, 1e-12)
	}
}

func TestReduceTypes(t *testing.T) {
	i := FromSlice([]int64{1 << 60, 3, -5, 1 << 60}, []int{4}, Chunks(1))
	b := FromSlice([]bool{true, false, true}, []int{3}, Chunks(2))
	f32 := FromSlice([]float32{1, 2, 4}, []int{3}, Chunks(2))
	tests := []struct {
		name  string
		a     Array
		dtype DType
		want  float64
	}{
		{"int sum exact", i.Sum().Sub(1 << 61), Int64, -2},
		{"int max", i.Max(), Int64, 1 << 60},
		{"int min", i.Min(), Int64, -5},
		{"int argmax first", i.ArgMax(), Int64, 0},
		{"int argmin", i.ArgMin(), Int64, 2},
		{"int mean", i.Mean(), Float64, float64(1<<61-2) / 4},
		{"int prod", FromSlice([]int64{3, -2, 5}, []int{3}, Chunks(1)).Prod(), Int64, -30},
		{"bool sum", b.Sum(), Int64, 2},
		{"bool mean", b.Mean(), Float64, 2.0 / 3},
		{"bool any", b.Any(), Bool, 1},
		{"bool all", b.All(), Bool, 0},
		{"f32 sum", f32.Sum(), Float32, 7},
		{"f32 mean", f32.Mean(), Float32, 7.0 / 3},
		{"var ddof", f32.Var(Ddof(1)), Float32, 7.0 / 3},
		{"std ddof", FromSlice([]float64{2, 4, 4, 4, 5, 5, 7, 9}, []int{8}, Chunks(3)).Std(), Float64, 2},
		{"nanmin all nan", FromSlice([]float64{math.NaN(), math.NaN()}, []int{2}, Chunks(1)).NanMin(), Float64, math.NaN()},
		{"nanprod", FromSlice([]float64{2, math.NaN(), 3}, []int{3}, Chunks(1)).NanProd(), Float64, 6},
		{"nanstd", FromSlice([]float64{1, math.NaN(), 3}, []int{3}, Chunks(1)).NanStd(), Float64, 1},
		{"argmin nan", FromSlice([]float64{3, math.NaN(), 1, math.NaN()}, []int{4}, Chunks(3)).ArgMin(), Int64, 1},
		{"sum 0-d", Full(nil, 4).Sum(), Float64, 4},
		{"sum empty", Zeros([]int{0, 3}).Sum(), Float64, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.a.Err(); err != nil {
				t.Fatal(err)
			}
			if tt.a.DType() != tt.dtype {
				t.Fatalf("dtype %v, want %v", tt.a.DType(), tt.dtype)
			}
			d := compute(t, tt.a)
			v, err := d.At()
			if err != nil {
				t.Fatal(err)
			}
			if !closeTo(v, tt.want, 1e-6) {
				t.Fatalf("got %v, want %v", v, tt.want)
			}
		})
	}
}

func TestReduceErrors(t *testing.T) {
	a := Zeros([]int{3, 4})
	tests := []struct {
		name  string
		a     Array
		parts []string
	}{
		{"axis", a.Sum(Axis(2)), []string{"Sum", "axis 2", "out of range", "2 dimensions"}},
		{"repeat", a.Mean(Axis(0, -2)), []string{"repeat"}},
		{"argmin axes", Zeros([]int{2, 2, 2}).ArgMin(Axis(0, 1)), []string{"ArgMin", "one axis or all"}},
		{"ddof option", a.Sum(Ddof(1)), []string{"Sum does not take option Ddof"}},
		{"ddof negative", a.Var(Ddof(-1)), []string{"Ddof(-1)"}},
		{"split", a.Sum(SplitEvery(1)), []string{"SplitEvery(1)"}},
		{"kind", a.Reduce("median"), []string{"median", "want one of"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { mustErr(t, tt.a.Err(), tt.parts...) })
	}
	mustErr(t, computeErr(t, Zeros([]int{0}).Max()), "max of an empty array")
	mustErr(t, computeErr(t, Zeros([]int{0, 2}, Chunks(1)).ArgMax(Axis(0))), "argmax of an empty array")
}

// A reduction of many chunks is a tree: no task merges more than
// SplitEvery partial results.
func TestReduceTree(t *testing.T) {
	a := Ones([]int{64, 64}, Chunks(4))
	g, keys, err := a.Sum(SplitEvery(4)).Graph()
	if err != nil {
		t.Fatal(err)
	}
	levels := 0
	for _, k := range g.Keys() {
		task, _ := g.Get(k)
		if task.Op == opReduce {
			if len(task.Deps) > 4 {
				t.Fatalf("%s merges %d results", k, len(task.Deps))
			}
			levels++
		}
	}
	if levels < 16+4+1 {
		t.Fatalf("%d merge tasks", levels)
	}
	if v, _ := compute(t, a.Sum(SplitEvery(4))).At(); v != 64*64 || len(keys) != 1 {
		t.Fatalf("sum %v", v)
	}
}

func TestCumulative(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 12 {
		nd := 1 + rng.IntN(3)
		shape := randShape(rng, nd, 8)
		r := newRef(shape, randFloats(rng, product(shape)))
		ax := rng.IntN(nd)
		prod := trial%3 == 2
		if prod {
			for i := range r.v {
				r.v[i] = 1 + r.v[i]/40
			}
		}
		want := ref{shape: shape, v: make([]float64, len(r.v))}
		st := rowMajorStrides(shape)
		eachIndex(shape, func(idx []int) {
			off := 0
			for a := range idx {
				off += idx[a] * st[a]
			}
			if idx[ax] == 0 {
				want.v[off] = r.v[off]
			} else if prod {
				want.v[off] = want.v[off-st[ax]] * r.v[off]
			} else {
				want.v[off] = want.v[off-st[ax]] + r.v[off]
			}
		})
		a := r.array(rng)
		var got Array
		if prod {
			got = a.CumProd(ax)
		} else {
			got = a.Mul(1).CumSum(ax)
		}
		assertClose(t, compute(t, got), shape, want.v, 1e-12)
	}
	b := FromSlice([]bool{true, true, false, true}, []int{4}, Chunks(3))
	if d := compute(t, b.CumSum(0)); d.DType() != Int64 || !slices.Equal(d.Float64s(), []float64{1, 2, 2, 3}) {
		t.Fatalf("bool cumsum %v %v", d.DType(), d)
	}
	mustErr(t, b.CumSum(1).Err(), "CumSum", "axis 1")
}

// Chunks that a mask left empty, first or in the middle, pass the carry
// of cumulative sums and products on.
func TestCumulativeEmptyChunks(t *testing.T) {
	v := FromSlice([]float64{1, 2, 9, 9, 3, 9, 9, 9, 4, 5}, []int{10}, Chunks(2))
	kept := v.Mask(v.Lt(9).And(v.Gt(2))) // chunks: {} {} {3} {} {4 5}
	assertClose(t, compute(t, kept.CumSum(0)), []int{3}, []float64{3, 7, 12}, 0)
	assertClose(t, compute(t, kept.CumProd(0)), []int{3}, []float64{3, 12, 60}, 0)
	m := Arange(0, 12, 1, Chunks(4)).Reshape(6, 2).Rechunk(Chunks(2, 1))
	rows := m.Mask(m.Index(All(), At(0)).Gt(4)) // rows 3, 4, 5 in chunks of 0, 1 and 2 rows
	ints := rows.Astype(Int64)
	assertClose(t, compute(t, ints.CumProd(0)), []int{3, 2}, []float64{6, 7, 48, 63, 480, 693}, 0)
	assertClose(t, compute(t, ints.CumSum(0)), []int{3, 2}, []float64{6, 7, 14, 16, 24, 27}, 0)
}
