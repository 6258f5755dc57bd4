package array

import (
	"fmt"
	"math"
	"slices"
)

// Open stands for an omitted bound of a slice, as in NumPy's a[:5] or
// a[::-1]: Slice(Open, 5), Step(Open, Open, -1).
const Open = math.MinInt

// Index selects along one axis, for Array.Index: a slice (Slice, Step,
// All), one position (At, which drops the axis) or a list of positions
// (Take).
type Index struct {
	kind              byte // 's' slice, 'a' at, 't' take
	start, stop, step int
	idx               []int
}

// Slice selects start, start+1, ... up to stop (excluded). Negative values
// count from the end; Open is the start or the end of the axis; bounds
// beyond the axis are clipped, as in NumPy.
func Slice(start, stop int) Index { return Index{kind: 's', start: start, stop: stop, step: 1} }

// Step is Slice with a step; a negative step goes backwards:
// Step(Open, Open, -1) reverses an axis.
func Step(start, stop, step int) Index {
	return Index{kind: 's', start: start, stop: stop, step: step}
}

// All selects the whole axis.
func All() Index { return Slice(Open, Open) }

// At selects one position and drops the axis. A negative i counts from the
// end.
func At(i int) Index { return Index{kind: 'a', start: i} }

// Take selects the listed positions, in order (repeats allowed). Several
// Take indices in one call select the outer product of the lists, as
// NumPy's np.ix_ does, not pairs of positions.
func Take(indices ...int) Index { return Index{kind: 't', idx: slices.Clone(indices)} }

func (ix Index) String() string {
	b := func(v int) string {
		if v == Open {
			return ""
		}
		return fmt.Sprint(v)
	}
	switch ix.kind {
	case 's':
		if ix.step == 1 {
			return b(ix.start) + ":" + b(ix.stop)
		}
		return b(ix.start) + ":" + b(ix.stop) + ":" + fmt.Sprint(ix.step)
	case 'a':
		return fmt.Sprint(ix.start)
	case 't':
		if len(ix.idx) > 6 {
			return fmt.Sprintf("%v...(%d positions)", ix.idx[:6], len(ix.idx))
		}
		return fmt.Sprint(ix.idx)
	}
	return "?"
}

// sliceRange returns the first position, the step and the count of a
// slice of an axis of length n, as Python does.
func sliceRange(start, stop, step, n int) (int, int, int) {
	if step > 0 {
		switch {
		case start == Open:
			start = 0
		case start < 0:
			start = max(start+n, 0)
		default:
			start = min(start, n)
		}
		switch {
		case stop == Open:
			stop = n
		case stop < 0:
			stop = max(stop+n, 0)
		default:
			stop = min(stop, n)
		}
		if stop <= start {
			return start, step, 0
		}
		return start, step, (stop - start + step - 1) / step
	}
	switch {
	case start == Open:
		start = n - 1
	case start < 0:
		start = max(start+n, -1)
	default:
		start = min(start, n-1)
	}
	switch {
	case stop == Open:
		stop = -1
	case stop < 0:
		stop = max(stop+n, -1)
	default:
		stop = min(stop, n-1)
	}
	if start <= stop {
		return start, step, 0
	}
	return start, step, (start - stop - step - 1) / -step
}

// axisSel is what an index selects along one axis: the input coordinates
// of each result chunk, or drop for At.
type axisSel struct {
	chunks [][]int
	drop   bool
}

// Index selects a part of the array, as NumPy's a[i, j, ...]: one Index
// per axis, the axes without one taken whole.
//
//	a.Index(array.Slice(1, -1), array.At(0))     // a[1:-1, 0]
//	a.Index(array.All(), array.Step(Open, Open, 2)) // a[:, ::2]
//	a.Index(array.Take(3, 0, 3))                 // a[[3, 0, 3]]
//
// The chunks of the result follow those of a: each chunk of a gives at
// most one chunk of a slice, and a Take is chunked like the axis it takes
// from. A chunk that is a chunk of a as it is is not copied.
func (a Array) Index(idx ...Index) Array {
	if err := a.Err(); err != nil {
		return a
	}
	nd := len(a.n.chunks)
	if len(idx) > nd {
		return errorf("Index: %d indices for an array of %d dimensions (shape %s)", len(idx), nd, fmtShape(a.Shape()))
	}
	sels := make([]axisSel, nd)
	shape := a.Shape()
	for ax := range nd {
		ix := All()
		if ax < len(idx) {
			ix = idx[ax]
		}
		if ix.kind == 0 {
			return errorf("Index: the index of axis %d is the zero Index; use Slice, Step, All, At or Take", ax)
		}
		cs := a.n.chunks[ax]
		if !knownAxis(cs) {
			if ix.kind == 's' && ix.start == Open && ix.stop == Open && ix.step == 1 {
				continue // checked below
			}
			return errorf("Index: axis %d has chunks of unknown size; call ComputeChunkSizes first", ax)
		}
		n := shape[ax]
		offs := offsets(cs)
		switch ix.kind {
		case 's':
			if ix.step == 0 {
				return errorf("Index: slice %s of axis %d has step 0", ix, ax)
			}
			first, step, count := sliceRange(ix.start, ix.stop, ix.step, n)
			// One result chunk per chunk of the input it touches.
			var cur []int
			curBlock := -1
			for k := range count {
				c := first + k*step
				b := blockOf(offs, c)
				if b != curBlock && cur != nil {
					sels[ax].chunks = append(sels[ax].chunks, cur)
					cur = nil
				}
				curBlock = b
				cur = append(cur, c)
			}
			if cur != nil || count == 0 {
				sels[ax].chunks = append(sels[ax].chunks, cur)
			}
		case 'a':
			i := ix.start
			if i < 0 {
				i += n
			}
			if i < 0 || i >= n {
				return errorf("Index: index %d is out of range for axis %d of length %d (shape %s)", ix.start, ax, n, fmtShape(shape))
			}
			sels[ax] = axisSel{chunks: [][]int{{i}}, drop: true}
		case 't':
			size := 1
			for _, c := range cs {
				size = max(size, c)
			}
			all := make([]int, len(ix.idx))
			for k, i := range ix.idx {
				j := i
				if j < 0 {
					j += n
				}
				if j < 0 || j >= n {
					return errorf("Index: Take index %d (position %d of the list) is out of range for axis %d of length %d (shape %s)",
						i, k, ax, n, fmtShape(shape))
				}
				all[k] = j
			}
			for s := 0; s < len(all); s += size {
				sels[ax].chunks = append(sels[ax].chunks, all[s:min(s+size, len(all))])
			}
			if len(all) == 0 {
				sels[ax].chunks = [][]int{nil}
			}
		}
	}
	for ax := range nd {
		if sels[ax].chunks == nil && !knownAxis(a.n.chunks[ax]) {
			return errorf("Index: axis %d has chunks of unknown size; call ComputeChunkSizes first", ax)
		}
	}
	desc := []any{"index"}
	for _, ix := range idx {
		desc = append(desc, []any{string(ix.kind), ix.start, ix.stop, ix.step, ix.idx})
	}
	return selectCoords(a, "getitem", sels, nil, desc)
}

func blockOf(offs []int, c int) int {
	lo, hi := 0, len(offs)-2
	for lo < hi {
		m := (lo + hi + 1) / 2
		if offs[m] <= c {
			lo = m
		} else {
			hi = m - 1
		}
	}
	return lo
}

// selectCoords builds the array made of the input coordinates sels along
// each axis (see axisSel), -1 coordinates taking the fill value.
func selectCoords(a Array, name string, sels []axisSel, fill *num, desc any) Array {
	nd := len(sels)
	axes := make([]int, nd)
	var chunks [][]int
	o := 0
	for ax, s := range sels {
		if s.drop {
			axes[ax] = -1
			continue
		}
		axes[ax] = o
		o++
		cs := make([]int, len(s.chunks))
		for k, c := range s.chunks {
			cs[k] = len(c)
		}
		chunks = append(chunks, cs)
	}
	op := &assembleOp{name: name, axes: axes, fill: fill, sel: func(idx []int) [][]int {
		coords := make([][]int, nd)
		for ax, s := range sels {
			if s.drop {
				coords[ax] = s.chunks[0]
			} else {
				coords[ax] = s.chunks[idx[axes[ax]]]
			}
		}
		return coords
	}}
	return newArray(op, a.n.dtype, chunks, []*node{a.n}, desc)
}

// rangeSel selects whole chunks cs of an axis, unchanged.
func rangeSel(cs []int) axisSel {
	offs := offsets(cs)
	s := axisSel{chunks: make([][]int, len(cs))}
	for k := range cs {
		c := make([]int, cs[k])
		for i := range c {
			c[i] = offs[k] + i
		}
		s.chunks[k] = c
	}
	return s
}
