package agg

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	rowbuf "github.com/shoal-data/shoal/dataframe/internal/distinct/rows"
)

// An accumulator holds the running state of one spec for every group, as
// typed slices indexed by group id. Its loops run over a span of rows and
// their group ids (gids[j] is the group of the span's j-th row); gids ==
// nil means every row belongs to group 0 (a whole-column reduction), which
// gets loops without the indirection.
type accumulator interface {
	// grow makes room for n groups, new groups with the empty state, and
	// when it must reallocate, for at least hint groups.
	grow(n, hint int)
	// update folds the rows s of the input column into groups gids.
	update(col arrow.Array, s span, gids []uint32)
	// merge folds the rows s of the spec's state columns into groups gids.
	merge(cols []arrow.Array, s span, gids []uint32)
	// state builds the state columns of the groups in order (every group,
	// in id order, when order is nil).
	state(mem memory.Allocator, order []uint32) []arrow.Array
}

// growTo extends s to n elements set to init, reallocating to at least
// hint elements (and at least doubling) when it must.
func growTo[T any](s []T, n, hint int, init T) []T {
	if n <= len(s) {
		return s
	}
	old := len(s)
	if n > cap(s) {
		ns := make([]T, old, max(n, hint, 2*cap(s)))
		copy(ns, s)
		s = ns
	}
	s = s[:n]
	for i := old; i < n; i++ {
		s[i] = init
	}
	return s
}

func countValid(bm []byte, boff, n int) int {
	if bm == nil {
		return n
	}
	return bitutil.CountSetBits(bm, boff, n)
}

// ---- sum ----

type sumAcc[T number, A int64 | uint64 | float64] struct {
	sums []A
	typ  arrow.DataType
	in   []T
	sin  []A
}

func (a *sumAcc[T, A]) grow(n, hint int) { a.sums = growTo(a.sums, n, hint, 0) }

func (a *sumAcc[T, A]) update(col arrow.Array, s span, gids []uint32) {
	vals := load(col, s, &a.in)
	bm, boff := validOf(col, s)
	sums := a.sums
	if gids == nil {
		sums[0] += sumAll[T, A](vals, bm, boff)
		return
	}
	gids = gids[:len(vals)]
	if bm == nil {
		for j, g := range gids {
			sums[g] += A(vals[j])
		}
		return
	}
	for j, g := range gids {
		if rowbuf.Bit(bm, boff+j) {
			sums[g] += A(vals[j])
		}
	}
}

// sumAll sums the valid values, in four lanes to break the dependency
// chain of the additions.
func sumAll[T number, A int64 | uint64 | float64](vals []T, bm []byte, boff int) A {
	var s0, s1, s2, s3 A
	if bm == nil {
		i := 0
		for ; i+4 <= len(vals); i += 4 {
			v := vals[i : i+4 : i+4]
			s0 += A(v[0])
			s1 += A(v[1])
			s2 += A(v[2])
			s3 += A(v[3])
		}
		for ; i < len(vals); i++ {
			s0 += A(vals[i])
		}
		return (s0 + s1) + (s2 + s3)
	}
	for j, v := range vals {
		if rowbuf.Bit(bm, boff+j) {
			s0 += A(v)
		}
	}
	return s0
}

func (a *sumAcc[T, A]) merge(cols []arrow.Array, s span, gids []uint32) {
	vals := load(cols[0], s, &a.sin)
	if gids == nil {
		for _, v := range vals {
			a.sums[0] += v
		}
		return
	}
	sums := a.sums
	for j, g := range gids[:len(vals)] {
		sums[g] += vals[j]
	}
}

func (a *sumAcc[T, A]) state(mem memory.Allocator, order []uint32) []arrow.Array {
	return []arrow.Array{fixedArray(mem, a.typ, a.sums, nil, order)}
}

// ---- mean ----

// meanAcc keeps each group's sum and count side by side: one cache line
// per row when there are many groups.
type meanAcc[T number] struct {
	st  []meanState
	in  []T
	sin []float64
	cin []int64
}

type meanState struct {
	sum float64
	n   int64
}

func (a *meanAcc[T]) grow(n, hint int) { a.st = growTo(a.st, n, hint, meanState{}) }

func (a *meanAcc[T]) update(col arrow.Array, s span, gids []uint32) {
	vals := load(col, s, &a.in)
	bm, boff := validOf(col, s)
	st := a.st
	if gids == nil {
		st[0].sum += sumAll[T, float64](vals, bm, boff)
		st[0].n += int64(countValid(bm, boff, len(vals)))
		return
	}
	gids = gids[:len(vals)]
	if bm == nil {
		for j, g := range gids {
			p := &st[g]
			p.sum += float64(vals[j])
			p.n++
		}
		return
	}
	for j, g := range gids {
		if rowbuf.Bit(bm, boff+j) {
			p := &st[g]
			p.sum += float64(vals[j])
			p.n++
		}
	}
}

func (a *meanAcc[T]) merge(cols []arrow.Array, s span, gids []uint32) {
	sv := load(cols[0], s, &a.sin)
	cv := load(cols[1], s, &a.cin)
	cv = cv[:len(sv)]
	for j := range sv {
		var g uint32
		if gids != nil {
			g = gids[j]
		}
		p := &a.st[g]
		p.sum += sv[j]
		p.n += cv[j]
	}
}

func (a *meanAcc[T]) state(mem memory.Allocator, order []uint32) []arrow.Array {
	st := a.st
	return []arrow.Array{
		gather(mem, arrow.PrimitiveTypes.Float64, len(st), order, func(g uint32) float64 { return st[g].sum }),
		gather(mem, arrow.PrimitiveTypes.Int64, len(st), order, func(g uint32) int64 { return st[g].n }),
	}
}

// ---- count and size ----

type countAcc struct {
	counts []int64
	size   bool // count rows, nulls included
	cin    []int64
	bits   []byte
}

func (a *countAcc) grow(n, hint int) { a.counts = growTo(a.counts, n, hint, 0) }

func (a *countAcc) update(col arrow.Array, s span, gids []uint32) {
	var bm []byte
	var boff int
	if !a.size {
		bm, boff = validOf(col, s)
	}
	n := s.len()
	if gids == nil {
		a.counts[0] += int64(countValid(bm, boff, n))
		return
	}
	counts := a.counts
	gids = gids[:n]
	if bm == nil {
		for _, g := range gids {
			counts[g]++
		}
		return
	}
	for j, g := range gids {
		if rowbuf.Bit(bm, boff+j) {
			counts[g]++
		}
	}
}

func (a *countAcc) merge(cols []arrow.Array, s span, gids []uint32) {
	cv := load(cols[0], s, &a.cin)
	if gids == nil {
		for _, c := range cv {
			a.counts[0] += c
		}
		return
	}
	for j, g := range gids[:len(cv)] {
		a.counts[g] += cv[j]
	}
}

func (a *countAcc) state(mem memory.Allocator, order []uint32) []arrow.Array {
	return []arrow.Array{fixedArray(mem, arrow.PrimitiveTypes.Int64, a.counts, nil, order)}
}

// ---- var and std: count, mean and sum of squared deviations (M2) ----

// varAcc keeps each group's count, mean and M2 side by side, the mean as
// an unevaluated sum mean+low (a double-double), so that Welford's
// row-at-a-time update does not lose the low digits of a mean much larger
// than the spread (values near 1e9 that differ by 1).
type varAcc[T number] struct {
	st  []varState
	in  []T
	cin []int64
	fin [3][]float64
}

type varState struct {
	n             int64
	mean, low, m2 float64
}

func (a *varAcc[T]) grow(n, hint int) { a.st = growTo(a.st, n, hint, varState{}) }

// twoSum returns a+b rounded and its rounding error (Knuth).
func twoSum(a, b float64) (s, e float64) {
	s = a + b
	bb := s - a
	e = (a - (s - bb)) + (b - bb)
	return s, e
}

// combine folds a group's count n, mean mean+low and m2 into group g (Chan
// et al.).
func (a *varAcc[T]) combine(g uint32, n int64, mean, low, m2 float64) {
	if n == 0 {
		return
	}
	s := &a.st[g]
	na := s.n
	if na == 0 {
		*s = varState{n: n, mean: mean, low: low, m2: m2}
		return
	}
	tot := na + n
	delta := (mean - s.mean) + (low - s.low)
	hi, e := twoSum(s.mean, delta*float64(n)/float64(tot))
	s.mean, s.low = hi, s.low+e
	s.m2 += m2 + delta*delta*float64(na)*float64(n)/float64(tot)
	s.n = tot
}

func (a *varAcc[T]) update(col arrow.Array, s span, gids []uint32) {
	vals := load(col, s, &a.in)
	bm, boff := validOf(col, s)
	if gids == nil {
		// The corrected two-pass algorithm over the span, then one merge.
		n := int64(countValid(bm, boff, len(vals)))
		if n == 0 {
			return
		}
		mean := sumAll[T, float64](vals, bm, boff) / float64(n)
		var sd, m2 float64
		for j, v := range vals {
			if bm == nil || rowbuf.Bit(bm, boff+j) {
				d := float64(v) - mean
				sd += d
				m2 += d * d
			}
		}
		hi, lo := twoSum(mean, sd/float64(n))
		a.combine(0, n, hi, lo, m2-sd*sd/float64(n))
		return
	}
	// Welford's update, one row at a time.
	st := a.st
	for j, g := range gids[:len(vals)] {
		if bm != nil && !rowbuf.Bit(bm, boff+j) {
			continue
		}
		p := &st[g]
		x := float64(vals[j])
		p.n++
		d := (x - p.mean) - p.low
		m, e := twoSum(p.mean, d/float64(p.n))
		l := p.low + e
		p.mean, p.low = m, l
		p.m2 += d * ((x - m) - l)
	}
}

func (a *varAcc[T]) merge(cols []arrow.Array, s span, gids []uint32) {
	cv := load(cols[0], s, &a.cin)
	mv := load(cols[1], s, &a.fin[0])
	sv := load(cols[2], s, &a.fin[1])
	lv := load(cols[3], s, &a.fin[2])
	for j := range cv {
		var g uint32
		if gids != nil {
			g = gids[j]
		}
		a.combine(g, cv[j], mv[j], lv[j], sv[j])
	}
}

func (a *varAcc[T]) state(mem memory.Allocator, order []uint32) []arrow.Array {
	st, f64 := a.st, arrow.PrimitiveTypes.Float64
	return []arrow.Array{
		gather(mem, arrow.PrimitiveTypes.Int64, len(st), order, func(g uint32) int64 { return st[g].n }),
		gather(mem, f64, len(st), order, func(g uint32) float64 { return st[g].mean }),
		gather(mem, f64, len(st), order, func(g uint32) float64 { return st[g].m2 }),
		gather(mem, f64, len(st), order, func(g uint32) float64 { return st[g].low }),
	}
}

// ---- min, max, first, last of fixed-width values ----

type pickAcc[T number] struct {
	fn   Func
	typ  arrow.DataType
	vals []T
	seen []bool
	in   []T
}

func (a *pickAcc[T]) grow(n, hint int) {
	a.vals = growTo(a.vals, n, hint, 0)
	a.seen = growTo(a.seen, n, hint, false)
}

func (a *pickAcc[T]) update(col arrow.Array, s span, gids []uint32) {
	vals := load(col, s, &a.in)
	bm, boff := validOf(col, s)
	a.fold(vals, bm, boff, gids)
}

func (a *pickAcc[T]) merge(cols []arrow.Array, s span, gids []uint32) {
	a.update(cols[0], s, gids)
}

// fold folds values into the groups. Floats: NaN loses to any number in
// min and max, and is kept only when a group has nothing else.
func (a *pickAcc[T]) fold(vals []T, bm []byte, boff int, gids []uint32) {
	if gids == nil {
		pickOne(a, vals, bm, boff)
		return
	}
	out, seen := a.vals, a.seen
	gids = gids[:len(vals)]
	switch a.fn {
	case Min:
		for j, g := range gids {
			if bm != nil && !rowbuf.Bit(bm, boff+j) {
				continue
			}
			v := vals[j]
			if !seen[g] || v < out[g] || out[g] != out[g] {
				out[g], seen[g] = v, true
			}
		}
	case Max:
		for j, g := range gids {
			if bm != nil && !rowbuf.Bit(bm, boff+j) {
				continue
			}
			v := vals[j]
			if !seen[g] || v > out[g] || out[g] != out[g] {
				out[g], seen[g] = v, true
			}
		}
	case First:
		for j, g := range gids {
			if !seen[g] && (bm == nil || rowbuf.Bit(bm, boff+j)) {
				out[g], seen[g] = vals[j], true
			}
		}
	case Last:
		for j, g := range gids {
			if bm == nil || rowbuf.Bit(bm, boff+j) {
				out[g], seen[g] = vals[j], true
			}
		}
	}
}

// pickOne folds values into group 0.
func pickOne[T number](a *pickAcc[T], vals []T, bm []byte, boff int) {
	cur, seen := a.vals[0], a.seen[0]
	switch a.fn {
	case First:
		if seen {
			return
		}
		for j, v := range vals {
			if bm == nil || rowbuf.Bit(bm, boff+j) {
				a.vals[0], a.seen[0] = v, true
				return
			}
		}
		return
	case Last:
		for j := len(vals) - 1; j >= 0; j-- {
			if bm == nil || rowbuf.Bit(bm, boff+j) {
				a.vals[0], a.seen[0] = vals[j], true
				return
			}
		}
		return
	}
	isMax := a.fn == Max
	for j, v := range vals {
		if bm != nil && !rowbuf.Bit(bm, boff+j) {
			continue
		}
		if !seen || cur != cur || (isMax && v > cur) || (!isMax && v < cur) {
			cur, seen = v, true
		}
	}
	a.vals[0], a.seen[0] = cur, seen
}

func (a *pickAcc[T]) state(mem memory.Allocator, order []uint32) []arrow.Array {
	if a.typ.ID() == arrow.BOOL {
		b := unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(a.vals))), len(a.vals))
		return []arrow.Array{boolArray(mem, b, a.seen, order)}
	}
	return []arrow.Array{fixedArray(mem, a.typ, a.vals, a.seen, order)}
}

// ---- min, max, first, last of strings ----

// strPickAcc keeps, per group, a string pointing into the input's buffers:
// no copies until the state is built.
type strPickAcc struct {
	fn   Func
	typ  arrow.DataType
	vals []string
	seen []bool
	in   strLoader
}

func (a *strPickAcc) grow(n, hint int) {
	a.vals = growTo(a.vals, n, hint, "")
	a.seen = growTo(a.seen, n, hint, false)
}

func (a *strPickAcc) update(col arrow.Array, s span, gids []uint32) {
	strs, valid := a.in.load(col, s)
	out, seen := a.vals, a.seen
	for j, v := range strs {
		if valid != nil && !valid[j] {
			continue
		}
		var g uint32
		if gids != nil {
			g = gids[j]
		}
		switch {
		case !seen[g]:
		case a.fn == Min && v < out[g]:
		case a.fn == Max && v > out[g]:
		case a.fn == Last:
		default:
			continue
		}
		out[g], seen[g] = v, true
	}
}

func (a *strPickAcc) merge(cols []arrow.Array, s span, gids []uint32) {
	a.update(cols[0], s, gids)
}

func (a *strPickAcc) state(mem memory.Allocator, order []uint32) []arrow.Array {
	return []arrow.Array{stringArray(mem, a.typ, a.vals, a.seen, order)}
}

// ---- any, all ----

type anyAllAcc struct {
	all   bool
	flags []uint8
	in    []uint8
	bits  []byte
}

func (a *anyAllAcc) grow(n, hint int) {
	init := uint8(0)
	if a.all {
		init = 1
	}
	a.flags = growTo(a.flags, n, hint, init)
}

func (a *anyAllAcc) update(col arrow.Array, s span, gids []uint32) {
	vals := load(col, s, &a.in)
	bm, boff := validOf(col, s)
	flags := a.flags
	for j, v := range vals {
		if bm != nil && !rowbuf.Bit(bm, boff+j) {
			continue
		}
		var g uint32
		if gids != nil {
			g = gids[j]
		}
		if a.all {
			flags[g] &= v
		} else {
			flags[g] |= v
		}
	}
}

func (a *anyAllAcc) merge(cols []arrow.Array, s span, gids []uint32) {
	a.update(cols[0], s, gids)
}

func (a *anyAllAcc) state(mem memory.Allocator, order []uint32) []arrow.Array {
	return []arrow.Array{boolArray(mem, a.flags, nil, order)}
}
