package array

import (
	"fmt"
	"slices"

	"github.com/shoal-data/shoal/graph"
)

// view returns the array whose axis o is axis view[o] of a (-1 for a new
// axis of length 1), with the given chunks. Views are elementwise, so they
// fuse with the operations around them.
func (a Array) view(name string, view []int, chunks [][]int) Array {
	expr := []exprNode{{Op: "leaf", Leaf: 0, T: a.n.dtype}}
	return newMap(name, expr, []*node{a.n}, [][]int{view}, chunks)
}

// Transpose permutes the axes: axis i of the result is axis axes[i] of a.
// With no axes it reverses them, as NumPy's transpose.
func (a Array) Transpose(axes ...int) Array {
	if err := a.Err(); err != nil {
		return a
	}
	nd := len(a.n.chunks)
	if len(axes) == 0 {
		axes = make([]int, nd)
		for i := range axes {
			axes[i] = nd - 1 - i
		}
	}
	perm := make([]int, len(axes))
	for i, ax := range axes {
		p, err := normAxis(ax, nd)
		if err != nil {
			return errorf("Transpose%v: %v", axes, err)
		}
		perm[i] = p
	}
	if err := checkPerm(perm, nd); err != nil {
		return errorf("Transpose: %v (shape %s)", unwrapArrayErr(err), fmtShape(a.Shape()))
	}
	if slices.Equal(perm, identityAxes(nd)) {
		return a
	}
	chunks := make([][]int, nd)
	for i, p := range perm {
		chunks[i] = slices.Clone(a.n.chunks[p])
	}
	return a.view("transpose", perm, chunks)
}

// T is Transpose with the axes reversed (a matrix's transpose).
func (a Array) T() Array { return a.Transpose() }

// SwapAxes exchanges two axes.
func (a Array) SwapAxes(ax1, ax2 int) Array {
	if err := a.Err(); err != nil {
		return a
	}
	nd := len(a.n.chunks)
	i, err := normAxis(ax1, nd)
	if err != nil {
		return errorf("SwapAxes: %v", err)
	}
	j, err := normAxis(ax2, nd)
	if err != nil {
		return errorf("SwapAxes: %v", err)
	}
	perm := identityAxes(nd)
	perm[i], perm[j] = perm[j], perm[i]
	return a.Transpose(perm...)
}

// ExpandDims inserts an axis of length 1 at position axis (which may be
// a.NDim(); negative counts from the end of the result).
func (a Array) ExpandDims(axis int) Array {
	if err := a.Err(); err != nil {
		return a
	}
	nd := len(a.n.chunks)
	ax, err := normAxis(axis, nd+1)
	if err != nil {
		return errorf("ExpandDims: %v", err)
	}
	view := make([]int, 0, nd+1)
	chunks := make([][]int, 0, nd+1)
	for i := range nd + 1 {
		switch {
		case i == ax:
			view = append(view, -1)
			chunks = append(chunks, []int{1})
		case i < ax:
			view = append(view, i)
			chunks = append(chunks, slices.Clone(a.n.chunks[i]))
		default:
			view = append(view, i-1)
			chunks = append(chunks, slices.Clone(a.n.chunks[i-1]))
		}
	}
	return a.view("expand-dims", view, chunks)
}

// Squeeze removes axes of length 1: the given ones, or all of them.
func (a Array) Squeeze(axes ...int) Array {
	if err := a.Err(); err != nil {
		return a
	}
	nd := len(a.n.chunks)
	shape := a.Shape()
	var drop []int
	if len(axes) == 0 {
		for ax, s := range shape {
			if s == 1 {
				drop = append(drop, ax)
			}
		}
	} else {
		var err error
		if drop, err = normAxes(axes, nd); err != nil {
			return errorf("Squeeze: %v", err)
		}
		for _, ax := range drop {
			if shape[ax] != 1 {
				return errorf("Squeeze: axis %d has length %d, not 1 (shape %s)", ax, shape[ax], fmtShape(shape))
			}
		}
	}
	if len(drop) == 0 {
		return a
	}
	var view []int
	var chunks [][]int
	for ax := range nd {
		if !slices.Contains(drop, ax) {
			view = append(view, ax)
			chunks = append(chunks, slices.Clone(a.n.chunks[ax]))
		}
	}
	return a.view("squeeze", view, chunks)
}

// Ravel returns the elements as a 1-D array, in row-major order.
func (a Array) Ravel() Array { return a.Reshape(-1) }

// Reshape gives the array a new shape with the same number of elements,
// in row-major order; one length may be -1, inferred from the others.
// Axes that are merged or split must be chunked so that each chunk can be
// reshaped on its own: Reshape rechunks the input for that when needed
// (all but the first of the merged axes become one chunk).
func (a Array) Reshape(shape ...int) Array {
	if err := a.Err(); err != nil {
		return a
	}
	in := a.Shape()
	if !allKnown(a.n.chunks) {
		return errorf("Reshape: the array has chunks of unknown size %s; call ComputeChunkSizes first", formatChunks(a.n.chunks))
	}
	size := product(in)
	out := slices.Clone(shape)
	infer := -1
	known := 1
	for i, s := range out {
		switch {
		case s == -1 && infer < 0:
			infer = i
		case s < 0:
			return errorf("Reshape%v: lengths must not be negative (only one may be -1)", shape)
		default:
			known *= s
		}
	}
	if infer >= 0 {
		if known == 0 || size%known != 0 {
			return errorf("Reshape: cannot reshape an array of shape %s (size %d) into %v", fmtShape(in), size, shape)
		}
		out[infer] = size / known
	}
	if product(out) != size {
		return errorf("Reshape: cannot reshape an array of shape %s (size %d) into %s (size %d)", fmtShape(in), size, fmtShape(out), product(out))
	}
	if slices.Equal(in, out) {
		return a
	}
	if size == 0 {
		return Zeros(out, WithDType(a.n.dtype), Chunks(-1))
	}
	// Match groups of input axes with groups of output axes of the same
	// size.
	type group struct{ in, out []int }
	var groups []group
	i, j := 0, 0
	for i < len(in) && j < len(out) {
		g := group{in: []int{i}, out: []int{j}}
		pi, pj := in[i], out[j]
		for pi != pj {
			if pi < pj {
				i++
				g.in = append(g.in, i)
				pi *= in[i]
			} else {
				j++
				g.out = append(g.out, j)
				pj *= out[j]
			}
		}
		i++
		j++
		groups = append(groups, g)
	}
	// Leftover axes have length 1; they join the last group.
	if len(groups) == 0 {
		groups = append(groups, group{})
	}
	last := &groups[len(groups)-1]
	for ; i < len(in); i++ {
		last.in = append(last.in, i)
	}
	for ; j < len(out); j++ {
		last.out = append(last.out, j)
	}
	want := cloneChunks(a.n.chunks)
	outChunks := make([][]int, len(out))
	for _, g := range groups {
		if len(g.in) == 0 || len(g.out) == 0 {
			for _, ax := range g.in {
				want[ax] = []int{in[ax]}
			}
			for _, ax := range g.out {
				outChunks[ax] = []int{out[ax]}
			}
			continue
		}
		if len(g.in) == 1 && len(g.out) == 1 {
			outChunks[g.out[0]] = slices.Clone(want[g.in[0]])
			continue
		}
		r, s := 1, 1
		for _, ax := range g.in[1:] {
			want[ax] = []int{in[ax]}
			r *= in[ax]
		}
		for _, ax := range g.out[1:] {
			outChunks[ax] = []int{out[ax]}
			s *= out[ax]
		}
		m := s / gcd(r, s)
		first := g.in[0]
		want[first] = roundChunks(want[first], m)
		oc := make([]int, len(want[first]))
		for k, c := range want[first] {
			oc[k] = c * r / s
		}
		outChunks[g.out[0]] = oc
	}
	src := rechunkTo(a, want)
	if src.Err() != nil {
		return src
	}
	// Block k of the input along a group's first axis is block k of the
	// output along the group's first axis.
	inOf := make([]int, len(out)) // output axis -> input axis whose block index it takes, or -1
	for o := range inOf {
		inOf[o] = -1
	}
	for _, g := range groups {
		if len(g.in) > 0 && len(g.out) > 0 {
			inOf[g.out[0]] = g.in[0]
		}
	}
	op := &reshapeOp{inOf: inOf}
	return newArray(op, a.n.dtype, outChunks, []*node{src.n}, []any{"reshape", out})
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// roundChunks moves the boundaries between chunks to multiples of m,
// keeping them near where they were.
func roundChunks(cs []int, m int) []int {
	if m <= 1 {
		return slices.Clone(cs)
	}
	total := 0
	for _, c := range cs {
		total += c
	}
	var out []int
	prev := 0
	for _, b := range offsets(cs)[1:] {
		r := (b + m/2) / m * m
		if r <= prev || r > total {
			continue
		}
		out = append(out, r-prev)
		prev = r
	}
	if prev < total {
		if len(out) > 0 && total-prev < m {
			out[len(out)-1] += total - prev
		} else {
			out = append(out, total-prev)
		}
	}
	return out
}

// reshapeOp reshapes every chunk of its input on its own.
type reshapeOp struct{ inOf []int }

func (o *reshapeOp) prefix() string { return "reshape" }

func (o *reshapeOp) lower(l *lowerer, n *node) ([]graph.Key, error) {
	in := n.inputs[0]
	grid := gridShape(n.chunks)
	keys := make([]graph.Key, numBlocks(n.chunks))
	for i := range keys {
		idx := blockIndex(grid, i)
		ii := make([]int, len(in.chunks))
		for oax, iax := range o.inOf {
			if iax >= 0 {
				ii[iax] = idx[oax]
			}
		}
		dep, err := l.blockKey(in, ii)
		if err != nil {
			return nil, err
		}
		keys[i] = n.key(idx...)
		p := assembleParams{DType: n.dtype, Shape: blockShape(n.chunks, idx), Reshape: true}
		if err := l.add(keys[i], opAssemble, p, []graph.Key{dep}); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// Concatenate joins arrays along an existing axis. Their other axes must
// have the same lengths; their dtypes are promoted to a common one. The
// chunks of the inputs become the chunks of the result, without copying.
func Concatenate(arrays []Array, axis int) Array {
	if len(arrays) == 0 {
		return errorf("Concatenate: no arrays")
	}
	for _, x := range arrays {
		if err := x.Err(); err != nil {
			return x
		}
	}
	nd := arrays[0].NDim()
	ax, err := normAxis(axis, nd)
	if err != nil {
		return errorf("Concatenate: %v", err)
	}
	if nd == 0 {
		return errorf("Concatenate: cannot concatenate 0-dimensional arrays; use Stack")
	}
	dt := arrays[0].n.dtype
	ref := arrays[0].Shape()
	for i, x := range arrays[1:] {
		s := x.Shape()
		if len(s) != nd {
			return errorf("Concatenate: array %d has shape %s, array 0 has shape %s: the numbers of dimensions differ", i+1, fmtShape(s), fmtShape(ref))
		}
		for d := range nd {
			if d != ax && s[d] != ref[d] {
				return errorf("Concatenate: array %d has shape %s, array 0 has shape %s: axis %d differs", i+1, fmtShape(s), fmtShape(ref), d)
			}
		}
		dt = promote(dt, x.n.dtype)
	}
	var inputs []*node
	chunks := cloneChunks(arrays[0].n.chunks)
	chunks[ax] = nil
	for i, x := range arrays {
		x = x.Astype(dt)
		if i > 0 {
			want := cloneChunks(arrays[0].n.chunks)
			want[ax] = x.n.chunks[ax]
			for d := range nd {
				if d != ax && !slices.Equal(x.n.chunks[d], want[d]) && !knownAxis(x.n.chunks[d]) {
					return errorf("Concatenate: axis %d of array %d has chunks of unknown size; call ComputeChunkSizes first", d, i)
				}
			}
			x = rechunkTo(x, want)
			if x.Err() != nil {
				return x
			}
		}
		inputs = append(inputs, x.n)
		chunks[ax] = append(chunks[ax], x.n.chunks[ax]...)
	}
	return newArray(&concatOp{axis: ax}, dt, chunks, inputs, []any{"concatenate", ax})
}

// concatOp's chunks are its inputs' chunks.
type concatOp struct{ axis int }

func (o *concatOp) prefix() string { return "concatenate" }

func (o *concatOp) lower(l *lowerer, n *node) ([]graph.Key, error) {
	grid := gridShape(n.chunks)
	keys := make([]graph.Key, numBlocks(n.chunks))
	for i := range keys {
		idx := blockIndex(grid, i)
		j := slices.Clone(idx)
		for _, in := range n.inputs {
			nb := len(in.chunks[o.axis])
			if j[o.axis] < nb {
				k, err := l.blockKey(in, j)
				if err != nil {
					return nil, err
				}
				keys[i] = k
				break
			}
			j[o.axis] -= nb
		}
	}
	return keys, nil
}

// Stack joins arrays of the same shape along a new axis.
func Stack(arrays []Array, axis int) Array {
	if len(arrays) == 0 {
		return errorf("Stack: no arrays")
	}
	for _, x := range arrays {
		if err := x.Err(); err != nil {
			return x
		}
	}
	ref := arrays[0].Shape()
	if _, err := normAxis(axis, len(ref)+1); err != nil {
		return errorf("Stack: %v", err)
	}
	ex := make([]Array, len(arrays))
	for i, x := range arrays {
		if s := x.Shape(); !slices.Equal(s, ref) {
			return errorf("Stack: array %d has shape %s, array 0 has shape %s", i, fmtShape(s), fmtShape(ref))
		}
		ex[i] = x.ExpandDims(axis)
	}
	r := Concatenate(ex, axis)
	if err := r.Err(); err != nil {
		return errArray(fmt.Errorf("array: Stack: %s", unwrapArrayErr(err)))
	}
	return r
}
