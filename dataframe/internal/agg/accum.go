package agg

import (
	"slices"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// An accumulator holds the running state of one spec for every group, as
// typed slices indexed by group id. Its loops run over a chunk of rows and
// the chunk's group ids; gids == nil means every row belongs to group 0
// (a whole-column reduction), which gets loops without the indirection.
type accumulator interface {
	// grow makes room for n groups; new groups get the empty state.
	grow(n int)
	// update folds rows [lo, hi) of the input column into groups gids.
	update(col arrow.Array, lo, hi int, gids []uint32)
	// merge folds rows [lo, hi) of the spec's state columns into groups gids.
	merge(cols []arrow.Array, lo, hi int, gids []uint32)
	// state builds the state columns of the groups in order (every group,
	// in id order, when order is nil).
	state(mem memory.Allocator, order []uint32) []arrow.Array
}

// growTo extends s to n elements set to init.
func growTo[T any](s []T, n int, init T) []T {
	if n <= len(s) {
		return s
	}
	old := len(s)
	s = slices.Grow(s, n-old)[:n]
	for i := old; i < n; i++ {
		s[i] = init
	}
	return s
}

// load returns rows [lo, hi) of a numeric or boolean column as a []T (for
// booleans T is uint8 and the bits are unpacked into scratch).
func load[T any](col arrow.Array, lo, hi int, scratch *[]uint8) []T {
	if col.DataType().ID() == arrow.BOOL {
		n := hi - lo
		if cap(*scratch) < n {
			*scratch = make([]uint8, n)
		}
		s := (*scratch)[:n]
		boolsOf(col, lo, hi, s)
		return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(s))), n)
	}
	return fixedValues[T](col)[lo:hi]
}

// ---- sum ----

type sumAcc[T number, A int64 | uint64 | float64] struct {
	sums    []A
	typ     arrow.DataType
	scratch []uint8
}

func (a *sumAcc[T, A]) grow(n int) { a.sums = growTo(a.sums, n, 0) }

func (a *sumAcc[T, A]) update(col arrow.Array, lo, hi int, gids []uint32) {
	vals := load[T](col, lo, hi, &a.scratch)
	bm, boff := validity(col)
	boff += lo
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
		if bitSet(bm, boff+j) {
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
		if bitSet(bm, boff+j) {
			s0 += A(v)
		}
	}
	return s0
}

func (a *sumAcc[T, A]) merge(cols []arrow.Array, lo, hi int, gids []uint32) {
	vals := fixedValues[A](cols[0])[lo:hi]
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
	st      []meanState
	scratch []uint8
}

type meanState struct {
	sum float64
	n   int64
}

func (a *meanAcc[T]) grow(n int) { a.st = growTo(a.st, n, meanState{}) }

func (a *meanAcc[T]) update(col arrow.Array, lo, hi int, gids []uint32) {
	vals := load[T](col, lo, hi, &a.scratch)
	bm, boff := validity(col)
	boff += lo
	st := a.st
	if gids == nil {
		st[0].sum += sumAll[T, float64](vals, bm, boff)
		st[0].n += int64(countValid(bm, boff, len(vals)))
		return
	}
	gids = gids[:len(vals)]
	if bm == nil {
		for j, g := range gids {
			s := &st[g]
			s.sum += float64(vals[j])
			s.n++
		}
		return
	}
	for j, g := range gids {
		if bitSet(bm, boff+j) {
			s := &st[g]
			s.sum += float64(vals[j])
			s.n++
		}
	}
}

func countValid(bm []byte, boff, n int) int {
	if bm == nil {
		return n
	}
	return bitutil.CountSetBits(bm, boff, n)
}

func (a *meanAcc[T]) merge(cols []arrow.Array, lo, hi int, gids []uint32) {
	sv := fixedValues[float64](cols[0])[lo:hi]
	cv := fixedValues[int64](cols[1])[lo:hi]
	cv = cv[:len(sv)]
	for j := range sv {
		var g uint32
		if gids != nil {
			g = gids[j]
		}
		s := &a.st[g]
		s.sum += sv[j]
		s.n += cv[j]
	}
}

func (a *meanAcc[T]) state(mem memory.Allocator, order []uint32) []arrow.Array {
	sums := make([]float64, len(a.st))
	counts := make([]int64, len(a.st))
	for i, s := range a.st {
		sums[i], counts[i] = s.sum, s.n
	}
	return []arrow.Array{
		fixedArray(mem, arrow.PrimitiveTypes.Float64, sums, nil, order),
		fixedArray(mem, arrow.PrimitiveTypes.Int64, counts, nil, order),
	}
}

// ---- count and size ----

type countAcc struct {
	counts []int64
	size   bool // count rows, nulls included
}

func (a *countAcc) grow(n int) { a.counts = growTo(a.counts, n, 0) }

func (a *countAcc) update(col arrow.Array, lo, hi int, gids []uint32) {
	var bm []byte
	var boff int
	if !a.size {
		bm, boff = validity(col)
		boff += lo
	}
	if gids == nil {
		a.counts[0] += int64(countValid(bm, boff, hi-lo))
		return
	}
	counts := a.counts
	gids = gids[:hi-lo]
	if bm == nil {
		for _, g := range gids {
			counts[g]++
		}
		return
	}
	for j, g := range gids {
		if bitSet(bm, boff+j) {
			counts[g]++
		}
	}
}

func (a *countAcc) merge(cols []arrow.Array, lo, hi int, gids []uint32) {
	cv := fixedValues[int64](cols[0])[lo:hi]
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
	st      []varState
	scratch []uint8
}

type varState struct {
	n             int64
	mean, low, m2 float64
}

func (a *varAcc[T]) grow(n int) { a.st = growTo(a.st, n, varState{}) }

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

func (a *varAcc[T]) update(col arrow.Array, lo, hi int, gids []uint32) {
	vals := load[T](col, lo, hi, &a.scratch)
	bm, boff := validity(col)
	boff += lo
	if gids == nil {
		// The corrected two-pass algorithm over the chunk, then one merge.
		n := int64(countValid(bm, boff, len(vals)))
		if n == 0 {
			return
		}
		mean := sumAll[T, float64](vals, bm, boff) / float64(n)
		var sd, m2 float64
		for j, v := range vals {
			if bm == nil || bitSet(bm, boff+j) {
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
		if bm != nil && !bitSet(bm, boff+j) {
			continue
		}
		s := &st[g]
		x := float64(vals[j])
		s.n++
		d := (x - s.mean) - s.low
		m, e := twoSum(s.mean, d/float64(s.n))
		l := s.low + e
		s.mean, s.low = m, l
		s.m2 += d * ((x - m) - l)
	}
}

func (a *varAcc[T]) merge(cols []arrow.Array, lo, hi int, gids []uint32) {
	cv := fixedValues[int64](cols[0])[lo:hi]
	mv := fixedValues[float64](cols[1])[lo:hi]
	sv := fixedValues[float64](cols[2])[lo:hi]
	lv := fixedValues[float64](cols[3])[lo:hi]
	for j := range cv {
		var g uint32
		if gids != nil {
			g = gids[j]
		}
		a.combine(g, cv[j], mv[j], lv[j], sv[j])
	}
}

func (a *varAcc[T]) state(mem memory.Allocator, order []uint32) []arrow.Array {
	n := len(a.st)
	counts := make([]int64, n)
	means, m2s, lows := make([]float64, n), make([]float64, n), make([]float64, n)
	for i, s := range a.st {
		counts[i], means[i], m2s[i], lows[i] = s.n, s.mean, s.m2, s.low
	}
	return []arrow.Array{
		fixedArray(mem, arrow.PrimitiveTypes.Int64, counts, nil, order),
		fixedArray(mem, arrow.PrimitiveTypes.Float64, means, nil, order),
		fixedArray(mem, arrow.PrimitiveTypes.Float64, m2s, nil, order),
		fixedArray(mem, arrow.PrimitiveTypes.Float64, lows, nil, order),
	}
}

// ---- min, max, first, last of fixed-width values ----

type pickAcc[T number] struct {
	fn      Func
	typ     arrow.DataType
	vals    []T
	seen    []bool
	scratch []uint8
}

func (a *pickAcc[T]) grow(n int) {
	a.vals = growTo(a.vals, n, 0)
	a.seen = growTo(a.seen, n, false)
}

func (a *pickAcc[T]) update(col arrow.Array, lo, hi int, gids []uint32) {
	vals := load[T](col, lo, hi, &a.scratch)
	bm, boff := validity(col)
	a.fold(vals, bm, boff+lo, gids)
}

func (a *pickAcc[T]) merge(cols []arrow.Array, lo, hi int, gids []uint32) {
	a.update(cols[0], lo, hi, gids)
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
			if bm != nil && !bitSet(bm, boff+j) {
				continue
			}
			v := vals[j]
			if !seen[g] || v < out[g] || out[g] != out[g] {
				out[g], seen[g] = v, true
			}
		}
	case Max:
		for j, g := range gids {
			if bm != nil && !bitSet(bm, boff+j) {
				continue
			}
			v := vals[j]
			if !seen[g] || v > out[g] || out[g] != out[g] {
				out[g], seen[g] = v, true
			}
		}
	case First:
		for j, g := range gids {
			if !seen[g] && (bm == nil || bitSet(bm, boff+j)) {
				out[g], seen[g] = vals[j], true
			}
		}
	case Last:
		for j, g := range gids {
			if bm == nil || bitSet(bm, boff+j) {
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
			if bm == nil || bitSet(bm, boff+j) {
				a.vals[0], a.seen[0] = v, true
				return
			}
		}
		return
	case Last:
		for j := len(vals) - 1; j >= 0; j-- {
			if bm == nil || bitSet(bm, boff+j) {
				a.vals[0], a.seen[0] = vals[j], true
				return
			}
		}
		return
	}
	isMax := a.fn == Max
	for j, v := range vals {
		if bm != nil && !bitSet(bm, boff+j) {
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

func (a *strPickAcc) grow(n int) {
	a.vals = growTo(a.vals, n, "")
	a.seen = growTo(a.seen, n, false)
}

func (a *strPickAcc) update(col arrow.Array, lo, hi int, gids []uint32) {
	strs, valid := a.in.load(col, lo, hi)
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

func (a *strPickAcc) merge(cols []arrow.Array, lo, hi int, gids []uint32) {
	a.update(cols[0], lo, hi, gids)
}

func (a *strPickAcc) state(mem memory.Allocator, order []uint32) []arrow.Array {
	return []arrow.Array{stringArray(mem, a.typ, a.vals, a.seen, order)}
}

// ---- any, all ----

type anyAllAcc struct {
	all     bool
	flags   []uint8
	scratch []uint8
}

func (a *anyAllAcc) grow(n int) {
	init := uint8(0)
	if a.all {
		init = 1
	}
	a.flags = growTo(a.flags, n, init)
}

func (a *anyAllAcc) update(col arrow.Array, lo, hi int, gids []uint32) {
	vals := load[uint8](col, lo, hi, &a.scratch)
	bm, boff := validity(col)
	boff += lo
	flags := a.flags
	for j, v := range vals {
		if bm != nil && !bitSet(bm, boff+j) {
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

func (a *anyAllAcc) merge(cols []arrow.Array, lo, hi int, gids []uint32) {
	a.update(cols[0], lo, hi, gids)
}

func (a *anyAllAcc) state(mem memory.Allocator, order []uint32) []arrow.Array {
	return []arrow.Array{boolArray(mem, a.flags, nil, order)}
}
