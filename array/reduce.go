package array

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/shoal-data/shoal/graph"
)

// A reduction runs in three steps, as in Dask: every chunk is reduced to a
// partial state (fused with the elementwise work before it), states are
// merged in a tree, SplitEvery at a time, and the last merge finalizes the
// state into the result. A state is a Dense whose first axis lists the
// components (sum and count for a mean; count, mean and sum of squared
// deviations for a variance, merged by Chan's formula; value and index for
// argmin) and whose other axes are those of the chunk, the reduced ones
// of length 1.

// reduceSpec describes the partial step of a reduction over one chunk.
type reduceSpec struct {
	Kind string `json:"kind"`
	Axes []int  `json:"axes"` // reduced axes of the chunk
	InT  DType  `json:"in"`
	// For argmin and argmax: where the chunk starts in the array, and for
	// each axis its stride in the flat index over the reduced axes.
	Offset  []int      `json:"offset,omitempty"`
	GStride []int      `json:"gstride,omitempty"`
	Final   *finalSpec `json:"final,omitempty"`
}

// finalSpec turns a merged state into the result chunk.
type finalSpec struct {
	Axes     []int `json:"axes"`
	KeepDims bool  `json:"keepdims,omitempty"`
	OutT     DType `json:"out"`
	Ddof     int   `json:"ddof,omitempty"`
}

type combineParams struct {
	Kind  string     `json:"kind"`
	InT   DType      `json:"in"`
	Final *finalSpec `json:"final,omitempty"`
}

// kindInfo describes a reduction: its base operation, whether it skips
// NaN, and its state and result types for an input type.
type kindInfo struct {
	base string // sum, prod, min, max, mean, var, std, argmin, argmax, any, all
	nan  bool
}

var reductionKinds = []string{"sum", "prod", "min", "max", "mean", "var", "std", "argmin", "argmax", "any", "all",
	"nansum", "nanprod", "nanmin", "nanmax", "nanmean", "nanvar", "nanstd"}

func parseKind(k string) (kindInfo, error) {
	if !slices.Contains(reductionKinds, k) {
		return kindInfo{}, fmt.Errorf("unknown reduction %q", k)
	}
	if b, ok := strings.CutPrefix(k, "nan"); ok {
		return kindInfo{base: b, nan: true}, nil
	}
	return kindInfo{base: k}, nil
}

// stateType returns the element type and number of components of the
// state of a reduction of an input of type in.
func (k kindInfo) stateType(in DType) (DType, int) {
	switch k.base {
	case "any", "all":
		return Bool, 1
	case "mean":
		return Float64, 2
	case "var", "std":
		return Float64, 3
	}
	t := Int64
	if in.isFloat() {
		t = Float64
	}
	switch k.base {
	case "sum", "prod":
		return t, 1
	}
	return t, 2 // min, max: value and count; argmin, argmax: value and index
}

// resultType returns the type of the result.
func (k kindInfo) resultType(in DType) DType {
	switch k.base {
	case "any", "all":
		return Bool
	case "argmin", "argmax":
		return Int64
	case "mean", "var", "std":
		if in == Float32 {
			return Float32
		}
		return Float64
	case "min", "max":
		return in
	}
	if in.isFloat() {
		return in
	}
	return Int64
}

// reduceOp is a reduction node.
type reduceOp struct {
	kind       string
	axes       []int // sorted, of the input
	keepDims   bool
	splitEvery int
	ddof       int
}

func (r *reduceOp) prefix() string { return r.kind }

// Reduce runs the reduction kind ("sum", "mean", "nanmax", ...: the names
// of the methods in lower case) over a. Options: Axis, KeepDims,
// SplitEvery, and Ddof for var and std.
func (a Array) Reduce(kind string, opts ...Option) Array {
	fn := "Reduce(" + kind + ")"
	if err := a.Err(); err != nil {
		return a
	}
	k, err := parseKind(kind)
	if err != nil {
		return errorf("%s: %v (want one of %s)", fn, err, strings.Join(reductionKinds, ", "))
	}
	allowed := []string{"Axis", "KeepDims", "SplitEvery"}
	if k.base == "var" || k.base == "std" {
		allowed = append(allowed, "Ddof")
	}
	c, err := configure(methodName(kind), opts, allowed...)
	if err != nil {
		return errArray(wrapErr(err))
	}
	nd := len(a.n.chunks)
	axes := identityAxes(nd)
	if c.axesSet {
		if axes, err = normAxes(c.axes, nd); err != nil {
			return errorf("%s: %v (shape %s)", methodName(kind), err, fmtShape(a.Shape()))
		}
	}
	if k.base == "argmin" || k.base == "argmax" {
		if len(axes) != 1 && len(axes) != nd {
			return errorf("%s: reduces along one axis or all of them, not axes %v", methodName(kind), c.axes)
		}
		for _, ax := range axes {
			if !knownAxis(a.n.chunks[ax]) {
				return errorf("%s: axis %d has chunks of unknown size; call ComputeChunkSizes first", methodName(kind), ax)
			}
		}
	}
	if c.ddof < 0 {
		return errorf("%s: Ddof(%d) must not be negative", methodName(kind), c.ddof)
	}
	if a.n.dtype == Bool && (k.base == "mean" || k.base == "var" || k.base == "std") {
		a = a.Astype(Float64)
	}
	var chunks [][]int
	for ax, cs := range a.n.chunks {
		switch {
		case !slices.Contains(axes, ax):
			chunks = append(chunks, slices.Clone(cs))
		case c.keepDims:
			chunks = append(chunks, []int{1})
		}
	}
	op := &reduceOp{kind: kind, axes: axes, keepDims: c.keepDims, splitEvery: c.splitEvery, ddof: c.ddof}
	return newArray(op, k.resultType(a.n.dtype), chunks, []*node{a.n},
		[]any{kind, axes, c.keepDims, c.splitEvery, c.ddof})
}

func methodName(kind string) string {
	switch kind {
	case "argmin":
		return "ArgMin"
	case "argmax":
		return "ArgMax"
	}
	if b, ok := strings.CutPrefix(kind, "nan"); ok {
		return "Nan" + strings.ToUpper(b[:1]) + b[1:]
	}
	return strings.ToUpper(kind[:1]) + kind[1:]
}

// Sum returns the sum of the elements (along Axis, if given). Integers and
// bools sum to int64. Options: Axis, KeepDims, SplitEvery.
func (a Array) Sum(opts ...Option) Array { return a.Reduce("sum", opts...) }

// Prod returns the product of the elements.
func (a Array) Prod(opts ...Option) Array { return a.Reduce("prod", opts...) }

// Min returns the smallest element; NaN if there is one. An empty
// reduction is an error when computed.
func (a Array) Min(opts ...Option) Array { return a.Reduce("min", opts...) }

// Max returns the largest element; NaN if there is one.
func (a Array) Max(opts ...Option) Array { return a.Reduce("max", opts...) }

// Mean returns the arithmetic mean (float64, or float32 for float32).
func (a Array) Mean(opts ...Option) Array { return a.Reduce("mean", opts...) }

// Var returns the variance: the mean squared deviation from the mean,
// divided by N - Ddof.
func (a Array) Var(opts ...Option) Array { return a.Reduce("var", opts...) }

// Std returns the standard deviation, the square root of Var.
func (a Array) Std(opts ...Option) Array { return a.Reduce("std", opts...) }

// ArgMin returns the index of the smallest element (the first one on a
// tie or the first NaN): along one Axis, or into the flattened array.
func (a Array) ArgMin(opts ...Option) Array { return a.Reduce("argmin", opts...) }

// ArgMax returns the index of the largest element.
func (a Array) ArgMax(opts ...Option) Array { return a.Reduce("argmax", opts...) }

// Any reports whether any element is true (not zero).
func (a Array) Any(opts ...Option) Array { return a.Reduce("any", opts...) }

// All reports whether every element is true (not zero).
func (a Array) All(opts ...Option) Array { return a.Reduce("all", opts...) }

// NanSum is Sum treating NaN as zero.
func (a Array) NanSum(opts ...Option) Array { return a.Reduce("nansum", opts...) }

// NanProd is Prod treating NaN as one.
func (a Array) NanProd(opts ...Option) Array { return a.Reduce("nanprod", opts...) }

// NanMin is Min ignoring NaN; NaN where every element is NaN.
func (a Array) NanMin(opts ...Option) Array { return a.Reduce("nanmin", opts...) }

// NanMax is Max ignoring NaN.
func (a Array) NanMax(opts ...Option) Array { return a.Reduce("nanmax", opts...) }

// NanMean is Mean ignoring NaN.
func (a Array) NanMean(opts ...Option) Array { return a.Reduce("nanmean", opts...) }

// NanVar is Var ignoring NaN.
func (a Array) NanVar(opts ...Option) Array { return a.Reduce("nanvar", opts...) }

// NanStd is Std ignoring NaN.
func (a Array) NanStd(opts ...Option) Array { return a.Reduce("nanstd", opts...) }

func (r *reduceOp) lower(l *lowerer, n *node) ([]graph.Key, error) {
	in := n.inputs[0]
	k, _ := parseKind(r.kind)
	p := l.consumerProgram(in)
	grid := gridShape(in.chunks)
	final := &finalSpec{Axes: r.axes, KeepDims: r.keepDims, OutT: n.dtype, Ddof: r.ddof}
	single := true
	for _, ax := range r.axes {
		if grid[ax] > 1 {
			single = false
		}
	}
	// outKey names the result block for a grid index of the input whose
	// reduced axes are 0.
	outKey := func(idx []int) graph.Key {
		var o []int
		for ax, i := range idx {
			switch {
			case !slices.Contains(r.axes, ax):
				o = append(o, i)
			case r.keepDims:
				o = append(o, 0)
			}
		}
		return n.key(o...)
	}
	var gstride []int
	var offs [][]int
	if k.base == "argmin" || k.base == "argmax" {
		shape := shapeOfChunks(in.chunks)
		gstride = make([]int, len(shape))
		s := 1
		for ax := len(shape) - 1; ax >= 0; ax-- {
			if slices.Contains(r.axes, ax) {
				gstride[ax] = s
				s *= shape[ax]
			}
		}
		offs = make([][]int, len(shape))
		for ax := range shape {
			if knownAxis(in.chunks[ax]) {
				offs[ax] = offsets(in.chunks[ax])
			}
		}
	}
	partialKey := func(idx []int) graph.Key { return graph.NewKey(r.kind+"-partial", n.token, idx...) }
	keyOf := partialKey
	if single {
		keyOf = outKey
	}
	keys, err := l.mapTasks(in.chunks, p, keyOf, func(idx []int) *sinkSpec {
		s := &reduceSpec{Kind: r.kind, Axes: r.axes, InT: in.dtype, GStride: gstride}
		if gstride != nil {
			s.Offset = make([]int, len(idx))
			for ax, i := range idx {
				if offs[ax] != nil {
					s.Offset[ax] = offs[ax][i]
				}
			}
		}
		if single {
			s.Final = final
		}
		return &sinkSpec{Reduce: s}
	})
	if err != nil {
		return nil, err
	}
	if single {
		return keys, nil
	}
	// The tree: merge groups of blocks along the reduced axes until one
	// block is left along each.
	many := 0
	for _, ax := range r.axes {
		if grid[ax] > 1 {
			many++
		}
	}
	split := max(2, int(math.Floor(math.Pow(float64(r.splitEvery), 1/float64(many))+1e-9)))
	for level := 1; ; level++ {
		next := slices.Clone(grid)
		last := true
		for _, ax := range r.axes {
			next[ax] = (grid[ax] + split - 1) / split
			if next[ax] > 1 {
				last = false
			}
		}
		nkeys := make([]graph.Key, product(next))
		for i := range nkeys {
			idx := blockIndex(next, i)
			// The group of blocks of the level below.
			lo, hi := slices.Clone(idx), slices.Clone(idx)
			for _, ax := range r.axes {
				lo[ax] = idx[ax] * split
				hi[ax] = min(lo[ax]+split, grid[ax])
			}
			for ax := range idx {
				if !slices.Contains(r.axes, ax) {
					hi[ax] = lo[ax] + 1
				}
			}
			var deps []graph.Key
			forEachIndex(lo, hi, func(j []int) {
				deps = append(deps, keys[blockNumber(grid, j)])
			})
			params := combineParams{Kind: r.kind, InT: in.dtype}
			if last {
				params.Final = final
				nkeys[i] = outKey(idx)
			} else {
				nkeys[i] = graph.NewKey(r.kind+"-combine", n.token, append([]int{level}, idx...)...)
			}
			if err := l.add(nkeys[i], opReduce, params, deps); err != nil {
				return nil, err
			}
		}
		grid, keys = next, nkeys
		if last {
			return keys, nil
		}
	}
}

func product(s []int) int {
	n := 1
	for _, v := range s {
		n *= v
	}
	return n
}

// forEachIndex calls f with every index between lo (included) and hi
// (excluded), row-major. f must not keep the slice.
func forEachIndex(lo, hi []int, f func([]int)) {
	for a := range lo {
		if hi[a] <= lo[a] {
			return
		}
	}
	idx := slices.Clone(lo)
	for {
		f(idx)
		a := len(idx) - 1
		for ; a >= 0; a-- {
			idx[a]++
			if idx[a] < hi[a] {
				break
			}
			idx[a] = lo[a]
		}
		if a < 0 {
			return
		}
	}
}

// reduceSink computes the partial state of a chunk computed by ev.
func reduceSink(ctx context.Context, ev *evaluator, s *reduceSpec) (any, error) {
	k, err := parseKind(s.Kind)
	if err != nil {
		return nil, err
	}
	for _, ax := range s.Axes {
		if ax < 0 || ax >= len(ev.shape) {
			return nil, fmt.Errorf("reduce axis %d of a block of shape %v", ax, ev.shape)
		}
	}
	st := newState(k, s.InT, ev.shape, s.Axes)
	if len(s.Axes) == len(ev.shape) && k.base != "argmin" && k.base != "argmax" {
		// One cell: stream the tiles into it.
		err = ev.each(ctx, func(_ int, v any) error {
			st.run(v, 0, true, nil)
			return nil
		})
	} else {
		var b *Dense
		if b, err = ev.materialize(ctx); err == nil {
			st.block(b, s)
		}
	}
	if err != nil {
		return nil, err
	}
	if s.Final != nil {
		return st.finalize(s.Final)
	}
	return st.d, nil
}

// state is the partial state of a reduction over the cells of a block.
type state struct {
	k     kindInfo
	d     *Dense // [components, cells...]
	ncell int
	// When reducing: the block's reduced-axes strides into the cells and
	// the argmin offsets.
}

func newState(k kindInfo, in DType, blockShape []int, axes []int) *state {
	t, nc := k.stateType(in)
	cell := slices.Clone(blockShape)
	for _, ax := range axes {
		cell[ax] = 1
	}
	shape := append([]int{nc}, cell...)
	st := &state{k: k, d: newDense(t, shape), ncell: product(cell)}
	st.init()
	return st
}

func (st *state) comp(c int) any { return subslice(st.d.data, c*st.ncell, (c+1)*st.ncell) }

// init sets every cell to the identity of the reduction.
func (st *state) init() {
	switch st.k.base {
	case "prod":
		fillState(st.comp(0), 1)
	case "min":
		fillState(st.comp(0), math.Inf(1))
	case "max":
		fillState(st.comp(0), math.Inf(-1))
	case "argmin":
		fillState(st.comp(0), math.Inf(1))
		fillState(st.comp(1), -1)
	case "argmax":
		fillState(st.comp(0), math.Inf(-1))
		fillState(st.comp(1), -1)
	case "all":
		fillState(st.comp(0), 1)
	}
}

func fillState(v any, f float64) {
	switch x := v.(type) {
	case []float64:
		for i := range x {
			x[i] = f
		}
	case []int64:
		var iv int64
		switch {
		case math.IsInf(f, 1):
			iv = math.MaxInt64
		case math.IsInf(f, -1):
			iv = math.MinInt64
		default:
			iv = int64(f)
		}
		for i := range x {
			x[i] = iv
		}
	case []bool:
		for i := range x {
			x[i] = f != 0
		}
	}
}

// stateValues converts a tile of any element type to the state's element
// type.
func (st *state) values(v any) any {
	switch st.d.dtype {
	case Float64:
		if x, ok := v.([]float64); ok {
			return x
		}
		out := make([]float64, sliceLen(v))
		convertInto(out, v)
		return out
	case Int64:
		if x, ok := v.([]int64); ok {
			return x
		}
		out := make([]int64, sliceLen(v))
		convertInto(out, v)
		return out
	default:
		if x, ok := v.([]bool); ok {
			return x
		}
		out := make([]bool, sliceLen(v))
		convertInto(out, v)
		return out
	}
}

// block reduces a whole block, row by row of its last axis.
func (st *state) block(b *Dense, s *reduceSpec) {
	shape := b.shape
	nd := len(shape)
	vals := st.values(b.flat())
	cellShape := slices.Clone(shape)
	for _, ax := range s.Axes {
		cellShape[ax] = 1
	}
	cs := rowMajorStrides(cellShape)
	for _, ax := range s.Axes {
		cs[ax] = 0
	}
	if nd == 0 {
		st.run(vals, 0, true, st.argPos(s, nil, -1))
		return
	}
	last := shape[nd-1]
	scalar := slices.Contains(s.Axes, nd-1)
	if last == 0 || product(shape) == 0 {
		return
	}
	idx := make([]int, nd)
	cell := 0
	for p := 0; p < product(shape); p += last {
		run := subslice(vals, p, p+last)
		st.run(run, cell, scalar, st.argPos(s, idx, nd-1))
		for a := nd - 2; a >= 0; a-- {
			idx[a]++
			cell += cs[a]
			if idx[a] < shape[a] {
				break
			}
			cell -= cs[a] * shape[a]
			idx[a] = 0
		}
	}
}

// argPos returns the flat index over the reduced axes of the element at
// idx (a block index), and the step along the last axis, for argmin and
// argmax; nil otherwise.
func (st *state) argPos(s *reduceSpec, idx []int, lastAxis int) []int {
	if st.k.base != "argmin" && st.k.base != "argmax" {
		return nil
	}
	base := 0
	for ax, g := range s.GStride {
		i := s.Offset[ax]
		if idx != nil {
			i += idx[ax]
		}
		base += i * g
	}
	step := 0
	if lastAxis >= 0 {
		step = s.GStride[lastAxis]
	}
	return []int{base, step}
}

// run folds a run of values into the state: all into one cell when
// scalar, else value k into cell cell+k. pos is the flat index of the
// first value and the step between values (argmin and argmax).
func (st *state) run(v any, cell int, scalar bool, pos []int) {
	v = st.values(v)
	switch x := v.(type) {
	case []float64:
		foldRun(st, x, cell, scalar, pos)
	case []int64:
		foldRun(st, x, cell, scalar, pos)
	case []bool:
		a := st.comp(0).([]bool)
		if st.k.base == "any" {
			for k, b := range x {
				if scalar {
					if b {
						a[cell] = true
						break
					}
				} else if b {
					a[cell+k] = true
				}
			}
		} else {
			for k, b := range x {
				if scalar {
					if !b {
						a[cell] = false
						break
					}
				} else if !b {
					a[cell+k] = false
				}
			}
		}
	}
}

func isNaN[T float64 | int64](v T) bool { return v != v }

func foldRun[T float64 | int64](st *state, x []T, cell int, scalar bool, pos []int) {
	nan := st.k.nan
	switch st.k.base {
	case "sum":
		s := st.comp(0).([]T)
		if scalar {
			s[cell] += sumRun(x, nan)
			return
		}
		for k, v := range x {
			if !(nan && isNaN(v)) {
				s[cell+k] += v
			}
		}
	case "prod":
		s := st.comp(0).([]T)
		for k, v := range x {
			if nan && isNaN(v) {
				continue
			}
			if scalar {
				s[cell] *= v
			} else {
				s[cell+k] *= v
			}
		}
	case "min", "max":
		s, cnt := st.comp(0).([]T), st.comp(1).([]T)
		isMin := st.k.base == "min"
		if scalar {
			m, n := s[cell], T(0)
			for _, v := range x {
				if nan {
					if isNaN(v) {
						continue
					}
					if (isMin && v < m) || (!isMin && v > m) {
						m = v
					}
				} else if isMin {
					m = min(m, v)
				} else {
					m = max(m, v)
				}
				n++
			}
			s[cell], cnt[cell] = m, cnt[cell]+n
			return
		}
		for k, v := range x {
			c := cell + k
			if nan {
				if isNaN(v) {
					continue
				}
				if (isMin && v < s[c]) || (!isMin && v > s[c]) {
					s[c] = v
				}
			} else if isMin {
				s[c] = min(s[c], v)
			} else {
				s[c] = max(s[c], v)
			}
			cnt[c]++
		}
	case "argmin", "argmax":
		val, ix := st.comp(0).([]T), st.comp(1).([]T)
		isMin := st.k.base == "argmin"
		for k, v := range x {
			c := cell
			if !scalar {
				c = cell + k
			}
			if st.k.nan && isNaN(v) {
				continue
			}
			if argBetter(v, T(pos[0]+k*pos[1]), val[c], ix[c], isMin) {
				val[c], ix[c] = v, T(pos[0]+k*pos[1])
			}
		}
	case "mean":
		xs := any(x).([]float64)
		s, cnt := st.comp(0).([]float64), st.comp(1).([]float64)
		if scalar {
			var n float64
			if nan {
				for _, v := range xs {
					if v == v {
						n++
					}
				}
			} else {
				n = float64(len(xs))
			}
			s[cell] += sumRun(xs, nan)
			cnt[cell] += n
			return
		}
		for k, v := range xs {
			if nan && v != v {
				continue
			}
			s[cell+k] += v
			cnt[cell+k]++
		}
	case "var", "std":
		xs := any(x).([]float64)
		cn, mu, m2 := st.comp(0).([]float64), st.comp(1).([]float64), st.comp(2).([]float64)
		if scalar {
			// Two passes over the run, then Chan's merge into the cell.
			var n float64
			if nan {
				for _, v := range xs {
					if v == v {
						n++
					}
				}
			} else {
				n = float64(len(xs))
			}
			if n == 0 {
				return
			}
			mean := sumRun(xs, nan) / n
			var q float64
			for _, v := range xs {
				if nan && v != v {
					continue
				}
				d := v - mean
				q += d * d
			}
			mergeVar(cn, mu, m2, cell, n, mean, q)
			return
		}
		for k, v := range xs {
			if nan && v != v {
				continue
			}
			c := cell + k
			cn[c]++
			d := v - mu[c]
			mu[c] += d / cn[c]
			m2[c] += d * (v - mu[c])
		}
	}
}

// argBetter reports whether (v, i) beats the current (best, bi): a smaller
// (or larger) value, the first NaN, or the first of equal values.
func argBetter[T float64 | int64](v, i, best, bi T, isMin bool) bool {
	if bi < 0 {
		return true
	}
	vn, bn := isNaN(v), isNaN(best)
	switch {
	case bn && vn:
		return i < bi
	case bn:
		return false
	case vn:
		return true
	case v == best:
		return i < bi
	case isMin:
		return v < best
	default:
		return v > best
	}
}

func mergeVar(cn, mu, m2 []float64, c int, n, mean, q float64) {
	na := cn[c]
	if na == 0 {
		cn[c], mu[c], m2[c] = n, mean, q
		return
	}
	t := na + n
	d := mean - mu[c]
	mu[c] += d * n / t
	m2[c] += q + d*d*na*n/t
	cn[c] = t
}

// sumRun adds up a run with four accumulators (NaN skipped when nan).
func sumRun[T float64 | int64](x []T, nan bool) T {
	var s0, s1, s2, s3 T
	if nan {
		for _, v := range x {
			if !isNaN(v) {
				s0 += v
			}
		}
		return s0
	}
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i]
		s1 += x[i+1]
		s2 += x[i+2]
		s3 += x[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// merge folds the state o (of the same shape) into st.
func (st *state) merge(o *Dense) error {
	if o.dtype != st.d.dtype || !slices.Equal(o.shape, st.d.shape) {
		return fmt.Errorf("cannot merge a %s state of shape %v into a %s state of shape %v", o.dtype, o.shape, st.d.dtype, st.d.shape)
	}
	ot := &state{k: st.k, d: o, ncell: st.ncell}
	switch st.d.dtype {
	case Float64:
		mergeStates[float64](st, ot)
	case Int64:
		mergeStates[int64](st, ot)
	default:
		a, b := st.comp(0).([]bool), ot.comp(0).([]bool)
		for i := range a {
			if st.k.base == "any" {
				a[i] = a[i] || b[i]
			} else {
				a[i] = a[i] && b[i]
			}
		}
	}
	return nil
}

func mergeStates[T float64 | int64](st, o *state) {
	switch st.k.base {
	case "sum":
		a, b := st.comp(0).([]T), o.comp(0).([]T)
		for i := range a {
			a[i] += b[i]
		}
	case "prod":
		a, b := st.comp(0).([]T), o.comp(0).([]T)
		for i := range a {
			a[i] *= b[i]
		}
	case "min", "max":
		a, b := st.comp(0).([]T), o.comp(0).([]T)
		ca, cb := st.comp(1).([]T), o.comp(1).([]T)
		for i := range a {
			if cb[i] == 0 {
				continue
			}
			if st.k.base == "min" {
				a[i] = min(a[i], b[i])
			} else {
				a[i] = max(a[i], b[i])
			}
			ca[i] += cb[i]
		}
	case "argmin", "argmax":
		a, b := st.comp(0).([]T), o.comp(0).([]T)
		ia, ib := st.comp(1).([]T), o.comp(1).([]T)
		for i := range a {
			if ib[i] >= 0 && argBetter(b[i], ib[i], a[i], ia[i], st.k.base == "argmin") {
				a[i], ia[i] = b[i], ib[i]
			}
		}
	case "mean":
		a, b := st.comp(0).([]T), o.comp(0).([]T)
		ca, cb := st.comp(1).([]T), o.comp(1).([]T)
		for i := range a {
			a[i] += b[i]
			ca[i] += cb[i]
		}
	case "var", "std":
		cn, mu, m2 := st.comp(0).([]float64), st.comp(1).([]float64), st.comp(2).([]float64)
		on, om, oq := o.comp(0).([]float64), o.comp(1).([]float64), o.comp(2).([]float64)
		for i := range cn {
			if on[i] > 0 {
				mergeVar(cn, mu, m2, i, on[i], om[i], oq[i])
			}
		}
	}
}

// finalize turns the state into the result block.
func (st *state) finalize(f *finalSpec) (*Dense, error) {
	if !f.OutT.valid() {
		return nil, fmt.Errorf("%s: invalid result dtype %d", st.k.base, f.OutT)
	}
	cell := st.d.shape[1:]
	var shape []int
	for ax, s := range cell {
		if !slices.Contains(f.Axes, ax) || f.KeepDims {
			shape = append(shape, s)
		}
	}
	out := newDense(f.OutT, shape)
	n := st.ncell
	empty := func() error {
		return fmt.Errorf("%s of an empty array: the reduction has no identity", st.k.base)
	}
	switch st.k.base {
	case "sum", "prod", "any", "all":
		copyInto(out.data, 0, st.comp(0))
	case "min", "max":
		cnt := st.comp(1)
		for i := range n {
			c, _ := atFloat(cnt, i)
			if c == 0 && !(st.k.nan && st.d.dtype == Float64) {
				return nil, empty()
			}
		}
		vals := st.comp(0)
		if st.k.nan && st.d.dtype == Float64 {
			v := vals.([]float64)
			c := cnt.([]float64)
			fixed := make([]float64, n)
			for i := range n {
				fixed[i] = v[i]
				if c[i] == 0 {
					fixed[i] = math.NaN()
				}
			}
			vals = fixed
		}
		copyInto(out.data, 0, vals)
	case "argmin", "argmax":
		ix := st.comp(1)
		o := out.data.([]int64)
		for i := range n {
			v, _ := atFloat(ix, i)
			if v < 0 {
				if st.k.nan {
					return nil, fmt.Errorf("%s: all values are NaN", "nan"+st.k.base)
				}
				return nil, fmt.Errorf("%s of an empty array", st.k.base)
			}
			o[i] = int64(v)
		}
	case "mean":
		s, c := st.comp(0).([]float64), st.comp(1).([]float64)
		r := make([]float64, n)
		for i := range n {
			r[i] = s[i] / c[i]
		}
		copyInto(out.data, 0, r)
	case "var", "std":
		cn, m2 := st.comp(0).([]float64), st.comp(2).([]float64)
		r := make([]float64, n)
		for i := range n {
			d := cn[i] - float64(f.Ddof)
			if d <= 0 {
				r[i] = math.NaN()
			} else {
				r[i] = m2[i] / d
			}
			if st.k.base == "std" {
				r[i] = math.Sqrt(r[i])
			}
		}
		copyInto(out.data, 0, r)
	}
	return out, nil
}

func atFloat(v any, i int) (float64, bool) {
	switch x := v.(type) {
	case []float64:
		return x[i], true
	case []int64:
		return float64(x[i]), true
	}
	return 0, false
}

func runReduce(ctx context.Context, in graph.OpInput) (any, error) {
	var p combineParams
	if err := json.Unmarshal(in.Params, &p); err != nil {
		return nil, fmt.Errorf("decode reduce params: %w", err)
	}
	k, err := parseKind(p.Kind)
	if err != nil {
		return nil, err
	}
	if len(in.Inputs) == 0 {
		return nil, fmt.Errorf("%s: no partial states to merge", p.Kind)
	}
	var st *state
	for i, v := range in.Inputs {
		d, ok := v.(*Dense)
		if !ok {
			return nil, fmt.Errorf("%s: input %d is a %T, not a state", p.Kind, i, v)
		}
		if len(d.shape) == 0 {
			return nil, fmt.Errorf("%s: input %d is not a state (shape %v)", p.Kind, i, d.shape)
		}
		if st == nil {
			c := d.Copy()
			st = &state{k: k, d: c, ncell: product(c.shape[1:])}
			continue
		}
		if err := st.merge(d); err != nil {
			return nil, fmt.Errorf("%s: %w", p.Kind, err)
		}
	}
	if p.Final != nil {
		return st.finalize(p.Final)
	}
	return st.d, nil
}
