package array

import (
	"context"
	"encoding/json"
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
// chunks of the inputs become the chunks of the result, without copying;
// an array chunked otherwise than the first along the other axes is
// rechunked like it.
//
// Lengths that are not known until the arrays are computed (after Mask or
// Compress) cannot be compared when the result is built. Along the other
// axes, such arrays must then be chunked alike (as many chunks as the
// first array, and equal lengths where both are known), and every chunk
// is checked against the first array's when it is computed: a mismatch is
// an error of that task, naming the arrays, their shapes, the axis and
// the two lengths, whether the result is assembled, reduced or written.
// Lengths that are known and differ are errors at once, when the result is
// built, as are arrays of unknown lengths chunked differently (call
// ComputeChunkSizes on them first).
func Concatenate(arrays []Array, axis int) Array {
	return concatenate(joinInfo{fn: "Concatenate"}, arrays, axis)
}

// joinInfo says how concatenate names things in errors: the function, and
// for Stack, which concatenates its arrays with a new axis, the shapes of
// the arrays and the axes as the caller gave them.
type joinInfo struct {
	fn     string
	shapes [][]int       // nil: the shapes of the concatenated arrays
	axisOf func(int) int // nil: the axes of the concatenated arrays
}

func (j joinInfo) shape(arrays []Array, i int) string {
	if j.shapes != nil {
		return fmtShape(j.shapes[i])
	}
	return fmtShape(arrays[i].Shape())
}

func (j joinInfo) axis(d int) int {
	if j.axisOf != nil {
		return j.axisOf(d)
	}
	return d
}

func concatenate(j joinInfo, arrays []Array, axis int) Array {
	fn := j.fn
	if len(arrays) == 0 {
		return errorf("%s: no arrays", fn)
	}
	for _, x := range arrays {
		if err := x.Err(); err != nil {
			return x
		}
	}
	nd := arrays[0].NDim()
	ax, err := normAxis(axis, nd)
	if err != nil {
		return errorf("%s: %v", fn, err)
	}
	if nd == 0 {
		return errorf("Concatenate: cannot concatenate 0-dimensional arrays; use Stack")
	}
	dt := arrays[0].n.dtype
	c0 := arrays[0].n.chunks
	ref := arrays[0].Shape()
	// The result's chunks along the other axes are array 0's, with the
	// lengths it does not know taken from the arrays that do (knownBy).
	chunks := cloneChunks(c0)
	knownBy := make([][]int, nd)
	for d := range nd {
		knownBy[d] = make([]int, len(c0[d]))
	}
	checks := make([][]int, len(arrays))
	for i := 1; i < len(arrays); i++ {
		x := arrays[i]
		s := x.Shape()
		if len(s) != nd {
			return errorf("%s: array %d has shape %s, array 0 has shape %s: the numbers of dimensions differ", fn, i, j.shape(arrays, i), j.shape(arrays, 0))
		}
		for d := range nd {
			if d == ax {
				continue
			}
			if s[d] != unknown && ref[d] != unknown && s[d] != ref[d] {
				return errorf("%s: array %d has shape %s, array 0 has shape %s: axis %d differs", fn, i, j.shape(arrays, i), j.shape(arrays, 0), j.axis(d))
			}
			ci := x.n.chunks[d]
			if knownAxis(ci) && knownAxis(c0[d]) {
				continue // rechunked like array 0 below if need be
			}
			if len(ci) != len(c0[d]) {
				return errorf("%s: array %d (shape %s) has chunks %s along axis %d, array 0 (shape %s) has %s: lengths not known until computed (after Mask or Compress) join only chunk by chunk; call ComputeChunkSizes on them first",
					fn, i, j.shape(arrays, i), formatAxisChunks(ci), j.axis(d), j.shape(arrays, 0), formatAxisChunks(c0[d]))
			}
			for k, c := range ci {
				switch {
				case c == unknown:
				case chunks[d][k] == unknown:
					chunks[d][k], knownBy[d][k] = c, i
				case c != chunks[d][k]:
					o := knownBy[d][k]
					return errorf("%s: array %d (shape %s) has chunks %s along axis %d, array %d (shape %s) has %s: chunk %d differs (%d and %d), and lengths not known until computed join only chunk by chunk; call ComputeChunkSizes on them first",
						fn, i, j.shape(arrays, i), formatAxisChunks(ci), j.axis(d), o, j.shape(arrays, o), formatAxisChunks(arrays[o].n.chunks[d]), k, c, chunks[d][k])
				}
			}
			checks[i] = append(checks[i], d)
		}
		dt = promote(dt, x.n.dtype)
	}
	var inputs []*node
	chunks[ax] = nil
	for i, x := range arrays {
		x = x.Astype(dt)
		if i > 0 {
			want := cloneChunks(x.n.chunks)
			rechunk := false
			for d := range nd {
				if d != ax && knownAxis(c0[d]) && knownAxis(want[d]) && !slices.Equal(c0[d], want[d]) {
					want[d], rechunk = slices.Clone(c0[d]), true
				}
			}
			if rechunk {
				if !allKnown(x.n.chunks) {
					return errorf("%s: array %d (shape %s) has chunks of unknown size %s, and must be rechunked like array 0 (chunks %s); call ComputeChunkSizes on it first",
						fn, i, j.shape(arrays, i), formatChunks(x.n.chunks), formatChunks(c0))
				}
				x = rechunkTo(x, want)
				if x.Err() != nil {
					return x
				}
			}
		}
		inputs = append(inputs, x.n)
		chunks[ax] = append(chunks[ax], x.n.chunks[ax]...)
	}
	op := &concatOp{axis: ax, checks: checks}
	if slices.ContainsFunc(checks, func(c []int) bool { return len(c) > 0 }) {
		op.fn = fn
		op.shapes = make([]string, len(arrays))
		for i := range arrays {
			op.shapes[i] = j.shape(arrays, i)
		}
		op.axisNames = make([]int, nd)
		for d := range nd {
			op.axisNames[d] = j.axis(d)
		}
	}
	return newArray(op, dt, chunks, inputs, []any{"concatenate", ax, checks, op.fn, op.shapes})
}

// concatOp's chunks are its inputs' chunks. Where lengths are not known
// until computed, the chunks of inputs 1... pass through a check against
// the shape of input 0's chunk (checks lists the axes, per input).
type concatOp struct {
	axis   int
	checks [][]int
	// For errors.
	fn        string
	shapes    []string
	axisNames []int
}

func (o *concatOp) prefix() string { return "concatenate" }

func (o *concatOp) lower(l *lowerer, n *node) ([]graph.Key, error) {
	grid := gridShape(n.chunks)
	keys := make([]graph.Key, numBlocks(n.chunks))
	shapeKeys := map[graph.Key]bool{}
	for i := range keys {
		idx := blockIndex(grid, i)
		j := slices.Clone(idx)
		for a, in := range n.inputs {
			nb := len(in.chunks[o.axis])
			if j[o.axis] >= nb {
				j[o.axis] -= nb
				continue
			}
			k, err := l.blockKey(in, j)
			if err != nil {
				return nil, err
			}
			if a > 0 && len(o.checks[a]) > 0 {
				if k, err = o.check(l, n, a, idx, j, k, shapeKeys); err != nil {
					return nil, err
				}
			}
			keys[i] = k
			break
		}
	}
	return keys, nil
}

// check adds the task that passes block j of input a (key k, block idx of
// the result) on once it has checked it against input 0's block in the
// same place.
func (o *concatOp) check(l *lowerer, n *node, a int, idx, j []int, k graph.Key, shapeKeys map[graph.Key]bool) (graph.Key, error) {
	r := slices.Clone(j)
	r[o.axis] = 0
	sk := graph.NewKey("concatenate-shape", n.token, r...)
	if !shapeKeys[sk] {
		dep, err := l.blockKey(n.inputs[0], r)
		if err != nil {
			return "", err
		}
		if err := l.add(sk, opCheck, checkParams{Mode: "shape"}, []graph.Key{dep}); err != nil {
			return "", err
		}
		shapeKeys[sk] = true
	}
	p := checkParams{Mode: "fits", Axes: o.checks[a], Fn: o.fn, Array: a, Block: j,
		Shape: o.shapes[a], Shape0: o.shapes[0], AxisNames: o.axisNames}
	ck := graph.NewKey("concatenate-check", n.token, idx...)
	return ck, l.add(ck, opCheck, p, []graph.Key{k, sk})
}

// checkParams are the params of an "array.check" task.
type checkParams struct {
	// "shape": the shape of the input chunk, as an int64 Dense; "fits":
	// the input chunk as it is, once its lengths along Axes are those of
	// the shape that is the second input.
	Mode string `json:"mode"`
	Axes []int  `json:"axes,omitempty"`
	// For errors: which function, array, block, shapes and axes.
	Fn        string `json:"fn,omitempty"`
	Array     int    `json:"array,omitempty"`
	Block     []int  `json:"block,omitempty"`
	Shape     string `json:"shape,omitempty"`
	Shape0    string `json:"shape0,omitempty"`
	AxisNames []int  `json:"axis_names,omitempty"`
}

func runCheck(_ context.Context, in graph.OpInput) (any, error) {
	var p checkParams
	if err := json.Unmarshal(in.Params, &p); err != nil {
		return nil, fmt.Errorf("decode check params: %w", err)
	}
	blocks, err := denseInputs(in)
	if err != nil {
		return nil, err
	}
	switch p.Mode {
	case "shape":
		if len(blocks) != 1 {
			return nil, fmt.Errorf("check: shape takes 1 chunk, got %d", len(blocks))
		}
		s := make([]int64, len(blocks[0].shape))
		for i, v := range blocks[0].shape {
			s[i] = int64(v)
		}
		return &Dense{dtype: Int64, shape: []int{len(s)}, strides: []int{1}, data: s}, nil
	case "fits":
		if len(blocks) != 2 || blocks[1].dtype != Int64 || len(blocks[1].shape) != 1 {
			return nil, fmt.Errorf("check: fits takes a chunk and a shape")
		}
		b := blocks[0]
		ref := blocks[1].flat().([]int64)
		for _, d := range p.Axes {
			if d < 0 || d >= len(b.shape) || d >= len(ref) || d >= len(p.Block) || d >= len(p.AxisNames) {
				return nil, fmt.Errorf("check: axis %d of a chunk of shape %v against shape %v", d, b.shape, ref)
			}
			if int64(b.shape[d]) != ref[d] {
				return nil, fmt.Errorf("%s: array %d (shape %s) does not fit array 0 (shape %s) along axis %d: its chunk %d there has length %d, array 0's has %d; lengths not known until computed (after Mask or Compress) join only where they agree",
					p.Fn, p.Array, p.Shape, p.Shape0, p.AxisNames[d], p.Block[d], b.shape[d], ref[d])
			}
		}
		return b, nil
	}
	return nil, fmt.Errorf("unknown check mode %q", p.Mode)
}

// Stack joins arrays of the same shape along a new axis, at position axis
// of the result. Lengths that are not known until computed are handled as
// by Concatenate: the arrays must be chunked alike, and their chunks are
// checked when computed, an error naming the arrays, their shapes and the
// lengths.
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
	ax, err := normAxis(axis, len(ref)+1)
	if err != nil {
		return errorf("Stack: %v", err)
	}
	ex := make([]Array, len(arrays))
	shapes := make([][]int, len(arrays))
	for i, x := range arrays {
		s := x.Shape()
		if !sameShape(s, ref) {
			return errorf("Stack: array %d has shape %s, array 0 has shape %s", i, fmtShape(s), fmtShape(ref))
		}
		shapes[i] = s
		ex[i] = x.ExpandDims(ax)
	}
	return concatenate(joinInfo{fn: "Stack", shapes: shapes, axisOf: func(d int) int {
		if d > ax {
			return d - 1
		}
		return d
	}}, ex, ax)
}

// sameShape reports whether two shapes have the same lengths where both
// are known.
func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && a[i] != unknown && b[i] != unknown {
			return false
		}
	}
	return true
}
