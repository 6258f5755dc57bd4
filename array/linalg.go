package array

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"github.com/shoal-data/shoal/graph"
)

// Linear algebra runs gonum's kernels on chunks: products block by block
// with a tree of sums over the contracted blocks, QR by TSQR (a QR per
// block of rows, then QRs of the stacked R factors in a tree), and a
// blocked Cholesky factorization.

// linalgParams are the params of an "array.linalg" task.
type linalgParams struct {
	Kind  string `json:"kind"`
	AxesA []int  `json:"axes_a,omitempty"` // tdot: contracted axes of the a blocks
	AxesB []int  `json:"axes_b,omitempty"`
	FreeA []int  `json:"free_a,omitempty"` // tdot: the a blocks' other axes, in the result's order (ascending if not given)
	FreeB []int  `json:"free_b,omitempty"`
	OutT  DType  `json:"out,omitempty"`
	Row   int    `json:"row,omitempty"` // qr-apply: first row of the factor to use
	Rows  int    `json:"rows,omitempty"`
	Block []int  `json:"block,omitempty"` // for errors
}

// tdotOp is TensorDot.
type tdotOp struct {
	axesA, axesB []int
	freeA, freeB []int
	split        int
}

func (o *tdotOp) prefix() string { return "tensordot" }

// TensorDot sums the products of a's and b's elements over the axes
// axesA of a and axesB of b (paired in order, of equal lengths), as NumPy's
// tensordot: the result's axes are a's other axes, then b's. Each result
// chunk sums the products of the matching chunks, at most SplitEvery pairs
// per task (gonum's Gemm for floats), then in a tree. b is rechunked along
// the contracted axes to match a. An operand that transposes another array
// (x.T(), x.Transpose(...)) is not copied into the transposed order: its
// chunks go to Gemm as they lie, with Gemm's transpose flag, when their
// axes allow. Options: SplitEvery.
func TensorDot(a, b Array, axesA, axesB []int, opts ...Option) Array {
	return tensorDot("TensorDot", a, b, axesA, axesB, opts)
}

func tensorDot(fn string, a, b Array, axesA, axesB []int, opts []Option) Array {
	if err := a.Err(); err != nil {
		return a
	}
	if err := b.Err(); err != nil {
		return b
	}
	c, err := configure(fn, opts, "SplitEvery")
	if err != nil {
		return errArray(wrapErr(err))
	}
	if len(axesA) != len(axesB) {
		return errorf("%s: %d axes of a and %d of b: they pair up", fn, len(axesA), len(axesB))
	}
	na, nb := a.NDim(), b.NDim()
	ca, cb := make([]int, len(axesA)), make([]int, len(axesB))
	sa, sb := a.Shape(), b.Shape()
	for i := range axesA {
		var err error
		if ca[i], err = normAxis(axesA[i], na); err != nil {
			return errorf("%s: a: %v", fn, err)
		}
		if cb[i], err = normAxis(axesB[i], nb); err != nil {
			return errorf("%s: b: %v", fn, err)
		}
		if sa[ca[i]] != sb[cb[i]] || sa[ca[i]] == unknown {
			return errorf("%s: shapes %s and %s are not aligned: axis %d of a has length %d, axis %d of b %d",
				fn, fmtShape(sa), fmtShape(sb), ca[i], sa[ca[i]], cb[i], sb[cb[i]])
		}
	}
	if _, err := normAxes(ca, na); err != nil {
		return errorf("%s: axes of a: %v", fn, err)
	}
	if _, err := normAxes(cb, nb); err != nil {
		return errorf("%s: axes of b: %v", fn, err)
	}
	dt := promote(a.n.dtype, b.n.dtype)
	if dt == Bool {
		dt = Int64
	}
	a, b = a.Astype(dt), b.Astype(dt)
	// b's contracted axes take a's chunks.
	want := cloneChunks(b.n.chunks)
	for i := range ca {
		if !knownAxis(a.n.chunks[ca[i]]) {
			return errorf("%s: axis %d of a has chunks of unknown size; call ComputeChunkSizes first", fn, ca[i])
		}
		want[cb[i]] = a.n.chunks[ca[i]]
	}
	b = rechunkThroughTranspose(b, want)
	if err := b.Err(); err != nil {
		return b
	}
	var fa, fb []int
	var chunks [][]int
	for ax := range na {
		if !slices.Contains(ca, ax) {
			fa = append(fa, ax)
			chunks = append(chunks, slices.Clone(a.n.chunks[ax]))
		}
	}
	for ax := range nb {
		if !slices.Contains(cb, ax) {
			fb = append(fb, ax)
			chunks = append(chunks, slices.Clone(b.n.chunks[ax]))
		}
	}
	op := &tdotOp{axesA: ca, axesB: cb, freeA: fa, freeB: fb, split: c.splitEvery}
	return newArray(op, dt, chunks, []*node{a.n, b.n}, []any{"tensordot", ca, cb, c.splitEvery})
}

func (o *tdotOp) lower(l *lowerer, n *node) ([]graph.Key, error) {
	a, b := n.inputs[0], n.inputs[1]
	grid := gridShape(n.chunks)
	keys := make([]graph.Key, numBlocks(n.chunks))
	cgrid := make([]int, len(o.axesA))
	for i, ax := range o.axesA {
		cgrid[i] = len(a.chunks[ax])
	}
	// An operand that transposes another array (x.T(), x.Transpose(...))
	// is read as that array: its blocks go to Gemm as they are, through
	// the transpose flag (see tdotBlocks), instead of tasks first copying
	// them into the transposed order.
	srcA, permA := transposed(a)
	srcB, permB := transposed(b)
	params := linalgParams{Kind: "tdot", AxesA: composeAxes(o.axesA, permA), AxesB: composeAxes(o.axesB, permB), OutT: n.dtype}
	if fa := composeAxes(o.freeA, permA); !slices.IsSorted(fa) {
		params.FreeA = fa
	}
	if fb := composeAxes(o.freeB, permB); !slices.IsSorted(fb) {
		params.FreeB = fb
	}
	blockOf := func(src *node, perm, idx []int) (graph.Key, error) {
		si := make([]int, len(idx))
		for ax, i := range idx {
			si[perm[ax]] = i
		}
		return l.blockKey(src, si)
	}
	for i := range keys {
		idx := blockIndex(grid, i)
		ia, ib := make([]int, len(a.chunks)), make([]int, len(b.chunks))
		for k, ax := range o.freeA {
			ia[ax] = idx[k]
		}
		for k, ax := range o.freeB {
			ib[ax] = idx[len(o.freeA)+k]
		}
		var pairs [][2]graph.Key
		var err error
		forEachIndex(make([]int, len(cgrid)), cgrid, func(j []int) {
			if err != nil {
				return
			}
			for k := range j {
				ia[o.axesA[k]] = j[k]
				ib[o.axesB[k]] = j[k]
			}
			var ka, kb graph.Key
			if ka, err = blockOf(srcA, permA, ia); err != nil {
				return
			}
			if kb, err = blockOf(srcB, permB, ib); err != nil {
				return
			}
			pairs = append(pairs, [2]graph.Key{ka, kb})
		})
		if err != nil {
			return nil, err
		}
		keys[i] = n.key(idx...)
		groups := (len(pairs) + o.split - 1) / o.split
		if groups <= 1 {
			if err := l.add(keys[i], opLinalg, params, flatPairs(pairs)); err != nil {
				return nil, err
			}
			continue
		}
		var partial []graph.Key
		for g := range groups {
			k := graph.NewKey("tensordot-partial", n.token, append([]int{g}, idx...)...)
			if err := l.add(k, opLinalg, params, flatPairs(pairs[g*o.split:min((g+1)*o.split, len(pairs))])); err != nil {
				return nil, err
			}
			partial = append(partial, k)
		}
		err = l.treeWith(partial, o.split, "tensordot-sum", graph.TokenizeStrings(n.token, fmt.Sprint(idx)), keys[i], opLinalg, linalgParams{Kind: "add", OutT: n.dtype})
		if err != nil {
			return nil, err
		}
	}
	return keys, nil
}

func flatPairs(p [][2]graph.Key) []graph.Key {
	out := make([]graph.Key, 0, 2*len(p))
	for _, x := range p {
		out = append(out, x[0], x[1])
	}
	return out
}

// rechunkThroughTranspose rechunks a to chunks; when a transposes another
// array, it rechunks that one and transposes the result, so that the
// product reads its blocks as they are (see tdotOp.lower).
func rechunkThroughTranspose(a Array, chunks [][]int) Array {
	if err := a.Err(); err != nil || equalChunks(a.n.chunks, chunks) {
		return a
	}
	src, perm := transposed(a.n)
	if src == a.n {
		return rechunkTo(a, chunks)
	}
	want := make([][]int, len(chunks))
	for ax, p := range perm {
		want[p] = chunks[ax]
	}
	return rechunkTo(Array{n: src}, want).Transpose(perm...)
}

// transposed returns the array that n permutes the axes of (through
// Transpose or T, possibly several times), and for each axis of n that
// array's axis; n itself and the identity when n is not such a view.
func transposed(n *node) (*node, []int) {
	perm := identityAxes(len(n.chunks))
	for {
		m, ok := n.op.(*mapOp)
		if !ok || len(m.expr) != 1 || m.expr[0].Op != "leaf" || len(n.inputs) != 1 || len(m.views) != 1 {
			return n, perm
		}
		in, v := n.inputs[0], m.views[0]
		if in.dtype != n.dtype || checkPerm(v, len(in.chunks)) != nil {
			return n, perm
		}
		perm = composeAxes(perm, v)
		n = in
	}
}

// treeWith merges keys with op and params, split at a time, into final.
func (l *lowerer) treeWith(keys []graph.Key, split int, prefix, token string, final graph.Key, op string, params any) error {
	for level := 1; ; level++ {
		n := (len(keys) + split - 1) / split
		next := make([]graph.Key, n)
		for i := range next {
			if n == 1 {
				next[i] = final
			} else {
				next[i] = graph.NewKey(prefix, token, level, i)
			}
			if err := l.add(next[i], op, params, slices.Clone(keys[i*split:min((i+1)*split, len(keys))])); err != nil {
				return err
			}
		}
		if n == 1 {
			return nil
		}
		keys = next
	}
}

// MatMul returns the matrix product of a and b, as NumPy's matmul for 1-D
// and 2-D arrays: (m, k)·(k, n) is (m, n); a 1-D a is a row vector and a
// 1-D b a column vector, their axis removed from the result. Blocked as
// TensorDot. Options: SplitEvery.
func MatMul(a, b Array, opts ...Option) Array { return matmul("MatMul", a, b, opts) }

// Dot is NumPy's dot: MatMul for 1-D and 2-D arrays; for more dimensions,
// the sum over the last axis of a and the second-to-last of b.
func Dot(a, b Array, opts ...Option) Array {
	if a.Err() == nil && b.Err() == nil && (a.NDim() > 2 || b.NDim() > 2) {
		bx := -1
		if b.NDim() >= 2 {
			bx = -2
		}
		return tensorDot("Dot", a, b, []int{-1}, []int{bx}, opts)
	}
	return matmul("Dot", a, b, opts)
}

func matmul(fn string, a, b Array, opts []Option) Array {
	if err := a.Err(); err != nil {
		return a
	}
	if err := b.Err(); err != nil {
		return b
	}
	na, nb := a.NDim(), b.NDim()
	if na == 0 || nb == 0 || na > 2 || nb > 2 {
		return errorf("%s: takes 1-D or 2-D arrays, not shapes %s and %s (use TensorDot or Blockwise for more)",
			fn, fmtShape(a.Shape()), fmtShape(b.Shape()))
	}
	sa, sb := a.Shape(), b.Shape()
	k1, k2 := sa[na-1], sb[0]
	if k1 != k2 {
		return errorf("%s: shapes %s and %s are not aligned: %d (axis %d of a) != %d (axis 0 of b)", fn, fmtShape(sa), fmtShape(sb), k1, na-1, k2)
	}
	r := tensorDot(fn, a, b, []int{na - 1}, []int{0}, opts)
	return r
}

func runLinalg(ctx context.Context, in graph.OpInput) (any, error) {
	var kind struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(in.Params, &kind); err != nil {
		return nil, fmt.Errorf("decode linalg params: %w", err)
	}
	if strings.HasPrefix(kind.Kind, "lu-") {
		return runLU(in.Params, in.Inputs)
	}
	var p linalgParams
	if err := json.Unmarshal(in.Params, &p); err != nil {
		return nil, fmt.Errorf("decode linalg params: %w", err)
	}
	blocks, err := denseInputs(in)
	if err != nil {
		return nil, err
	}
	switch p.Kind {
	case "tdot":
		return tdotBlocks(ctx, blocks, p)
	case "add":
		return addBlocks(blocks)
	case "qr":
		q, r, err := thinQR(blocks[0])
		if err != nil {
			return nil, err
		}
		return []any{q, r}, nil
	case "qr-stack":
		stacked, err := stackRows(blocks)
		if err != nil {
			return nil, err
		}
		q, r, err := thinQR(stacked)
		if err != nil {
			return nil, err
		}
		return []any{q, r}, nil
	case "qr-apply":
		// blocks[0] times rows Row..Row+Rows of blocks[1].
		if len(blocks) != 2 {
			return nil, fmt.Errorf("qr-apply takes 2 inputs")
		}
		f := blocks[1].astype(Float64).contig()
		if len(f.shape) != 2 || p.Row+p.Rows > f.shape[0] {
			return nil, fmt.Errorf("qr-apply: rows %d..%d of a factor of shape %v", p.Row, p.Row+p.Rows, f.shape)
		}
		c := subBlock(f, []int{p.Row, 0}, []int{p.Rows, f.shape[1]})
		return tdotBlocks(ctx, []*Dense{blocks[0].astype(Float64), c}, linalgParams{AxesA: []int{1}, AxesB: []int{0}, OutT: Float64})
	case "svd":
		return smallSVD(blocks[0])
	case "trsolve":
		return triSolve(blocks[0], blocks[1])
	case "chol":
		return cholBlock(blocks, p)
	}
	return nil, fmt.Errorf("unknown linalg kernel %q", p.Kind)
}

// tdotBlocks sums tensordot(a_k, b_k) over the pairs of blocks. Each pair
// goes to Gemm as the matrices a_k (m×k) and b_k (k×n) lie in their
// buffers: a block whose contracted axes come first (as the blocks of a
// transposed array do, see tdotOp.lower) is read through Gemm's transpose
// flag rather than copied into the other order; only blocks whose axes
// cannot be seen as one matrix either way are copied.
func tdotBlocks(ctx context.Context, blocks []*Dense, p linalgParams) (*Dense, error) {
	if len(blocks)%2 != 0 || len(blocks) == 0 {
		return nil, fmt.Errorf("tensordot takes pairs of blocks, got %d", len(blocks))
	}
	if !p.OutT.valid() {
		return nil, fmt.Errorf("tensordot: invalid dtype %d", p.OutT)
	}
	var out *Dense
	var outShape []int
	for k := 0; k < len(blocks); k += 2 {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		ma, mb, shape, err := tdotOperands(blocks[k].astype(p.OutT), blocks[k+1].astype(p.OutT), p)
		if err != nil {
			return nil, err
		}
		if ma.trans == blas.Trans && mb.trans == blas.Trans {
			// Gemm with both flags takes about twice as long as with one
			// (BenchmarkGemmLayouts): copy the smaller operand.
			if ma.rows*ma.cols <= mb.rows*mb.cols {
				ma = ma.untransposed()
			} else {
				mb = mb.untransposed()
			}
		}
		m, kk, nn := ma.rows, ma.cols, mb.cols
		if out == nil {
			outShape = shape
			out = newDense(p.OutT, []int{m, nn})
		} else if !slices.Equal(shape, outShape) {
			return nil, fmt.Errorf("tensordot: pair %d gives shape %v, pair 0 %v", k/2, shape, outShape)
		}
		if m == 0 || nn == 0 || kk == 0 {
			continue
		}
		switch c := out.data.(type) {
		case []float64:
			blas64.Gemm(ma.trans, mb.trans, 1,
				blas64.General{Rows: ma.storedRows(), Cols: ma.storedCols(), Stride: ma.ld, Data: ma.data.([]float64)},
				blas64.General{Rows: mb.storedRows(), Cols: mb.storedCols(), Stride: mb.ld, Data: mb.data.([]float64)},
				1, blas64.General{Rows: m, Cols: nn, Stride: nn, Data: c})
		case []float32:
			blas32.Gemm(ma.trans, mb.trans, 1,
				blas32.General{Rows: ma.storedRows(), Cols: ma.storedCols(), Stride: ma.ld, Data: ma.data.([]float32)},
				blas32.General{Rows: mb.storedRows(), Cols: mb.storedCols(), Stride: mb.ld, Data: mb.data.([]float32)},
				1, blas32.General{Rows: m, Cols: nn, Stride: nn, Data: c})
		case []int64:
			mulInt(ma, mb, c)
		default:
			return nil, fmt.Errorf("tensordot of %s blocks", out.dtype)
		}
	}
	return out.reshaped(outShape), nil
}

// matOperand is a block seen as a rows×cols matrix where it lies in its
// buffer, as BLAS takes matrices: element (i, j) is data[i*ld+j], or
// data[j*ld+i] when trans is blas.Trans (the buffer holds the cols×rows
// transpose, row-major).
type matOperand struct {
	data       any // the buffer from the block's first element on
	rows, cols int
	ld         int
	trans      blas.Transpose
}

// storedRows and storedCols are the dimensions of the matrix the buffer
// holds.
func (o matOperand) storedRows() int {
	if o.trans == blas.Trans {
		return o.cols
	}
	return o.rows
}

func (o matOperand) storedCols() int {
	if o.trans == blas.Trans {
		return o.rows
	}
	return o.cols
}

// at is the buffer position of element (i, j).
func (o matOperand) at(i, j int) int {
	if o.trans == blas.Trans {
		return j*o.ld + i
	}
	return i*o.ld + j
}

// untransposed returns the matrix copied row-major.
func (o matOperand) untransposed() matOperand {
	if o.trans != blas.Trans {
		return o
	}
	var data any
	switch x := o.data.(type) {
	case []float64:
		d := make([]float64, o.rows*o.cols)
		transposeInto(d, x, o.rows, o.cols, o.ld, 0)
		data = d
	case []float32:
		d := make([]float32, o.rows*o.cols)
		transposeInto(d, x, o.rows, o.cols, o.ld, 0)
		data = d
	case []int64:
		d := make([]int64, o.rows*o.cols)
		transposeInto(d, x, o.rows, o.cols, o.ld, 0)
		data = d
	default:
		return o
	}
	return matOperand{data: data, rows: o.rows, cols: o.cols, ld: max(o.cols, 1), trans: blas.NoTrans}
}

// asMatrix returns d as the matrix whose rows run over rowAxes and whose
// columns run over colAxes (row-major in the order given): in place when
// the axes of each group collapse into one and one of the groups is
// contiguous, a copy otherwise.
func asMatrix(d *Dense, rowAxes, colAxes []int) matOperand {
	rows, cols := 1, 1
	for _, ax := range rowAxes {
		rows *= d.shape[ax]
	}
	for _, ax := range colAxes {
		cols *= d.shape[ax]
	}
	data := subslice(d.data, d.offset, sliceLen(d.data))
	if rows == 0 || cols == 0 {
		return matOperand{data: data, rows: rows, cols: cols, ld: max(cols, 1), trans: blas.NoTrans}
	}
	rs, rok := collapsedStride(d, rowAxes)
	cs, cok := collapsedStride(d, colAxes)
	if rok && cok {
		// A stride of -1 is that of a group of one element: any will do.
		switch {
		case (cs == 1 || cs == -1) && (rs == -1 || rs >= cols):
			if rs == -1 {
				rs = cols
			}
			return matOperand{data: data, rows: rows, cols: cols, ld: rs, trans: blas.NoTrans}
		case (rs == 1 || rs == -1) && (cs == -1 || cs >= rows):
			if cs == -1 {
				cs = rows
			}
			return matOperand{data: data, rows: rows, cols: cols, ld: cs, trans: blas.Trans}
		}
	}
	v, _ := d.Transpose(append(slices.Clone(rowAxes), colAxes...)...)
	return matOperand{data: v.contig().data, rows: rows, cols: cols, ld: cols, trans: blas.NoTrans}
}

// collapsedStride returns the stride of the axes of d taken as one axis
// (row-major in the order given), if they collapse into one: -1 when they
// hold one element.
func collapsedStride(d *Dense, axes []int) (int, bool) {
	stride, span := -1, 1
	for i := len(axes) - 1; i >= 0; i-- {
		ax := axes[i]
		n, s := d.shape[ax], d.strides[ax]
		if n == 1 {
			continue
		}
		switch {
		case s <= 0:
			return 0, false
		case stride == -1:
			stride = s
		case s != stride*span:
			return 0, false
		}
		span *= n
	}
	return stride, true
}

// mulInt adds the product of the int64 matrices a and b to c (row-major,
// a.rows×b.cols).
func mulInt(a, b matOperand, c []int64) {
	x, y := a.data.([]int64), b.data.([]int64)
	nn := b.cols
	for i := range a.rows {
		row := c[i*nn : (i+1)*nn]
		for q := range a.cols {
			v := x[a.at(i, q)]
			if v == 0 {
				continue
			}
			if b.trans == blas.NoTrans {
				yr := y[q*b.ld : q*b.ld+nn]
				for j := range row {
					row[j] += v * yr[j]
				}
			} else {
				for j := range row {
					row[j] += v * y[j*b.ld+q]
				}
			}
		}
	}
}

// tdotOperands returns a as the m×k matrix of its free axes (in the order
// p.FreeA, ascending if not given) by its contracted axes p.AxesA, b as
// the k×n matrix of its contracted axes p.AxesB by its free axes, and the
// shape of their product.
func tdotOperands(a, b *Dense, p linalgParams) (ma, mb matOperand, shape []int, err error) {
	if len(p.AxesA) != len(p.AxesB) {
		return ma, mb, nil, fmt.Errorf("tensordot: %d axes of a, %d of b", len(p.AxesA), len(p.AxesB))
	}
	fa, err := freeAxes(a, p.AxesA, p.FreeA)
	if err != nil {
		return ma, mb, nil, err
	}
	fb, err := freeAxes(b, p.AxesB, p.FreeB)
	if err != nil {
		return ma, mb, nil, err
	}
	for i := range p.AxesA {
		if a.shape[p.AxesA[i]] != b.shape[p.AxesB[i]] {
			return ma, mb, nil, fmt.Errorf("tensordot: blocks of shape %v and %v do not align on axes %v and %v", a.shape, b.shape, p.AxesA, p.AxesB)
		}
	}
	for _, ax := range fa {
		shape = append(shape, a.shape[ax])
	}
	for _, ax := range fb {
		shape = append(shape, b.shape[ax])
	}
	return asMatrix(a, fa, p.AxesA), asMatrix(b, p.AxesB, fb), shape, nil
}

// freeAxes returns the axes of d that are not contracted: free if given,
// else the others in ascending order. With the contracted ones they must
// be all of d's axes, each once.
func freeAxes(d *Dense, contracted, free []int) ([]int, error) {
	if len(free) == 0 {
		free = nil
		for ax := range d.shape {
			if !slices.Contains(contracted, ax) {
				free = append(free, ax)
			}
		}
	}
	if err := checkPerm(append(slices.Clone(free), contracted...), len(d.shape)); err != nil {
		return nil, fmt.Errorf("tensordot: free axes %v and contracted axes %v of a block of shape %v: %v", free, contracted, d.shape, unwrapArrayErr(err))
	}
	return free, nil
}

func addBlocks(blocks []*Dense) (*Dense, error) {
	if len(blocks) == 0 {
		return nil, fmt.Errorf("add: no blocks")
	}
	out := blocks[0].Copy()
	for i, b := range blocks[1:] {
		if err := combineInPlace(out, b, false); err != nil {
			return nil, fmt.Errorf("add block %d: %w", i+1, err)
		}
	}
	return out, nil
}

// thinQR factors the m×n block (m >= n) as Q (m×n, orthonormal columns)
// times R (n×n, upper triangular).
func thinQR(d *Dense) (*Dense, *Dense, error) {
	if len(d.shape) != 2 {
		return nil, nil, fmt.Errorf("QR of a block of shape %v", d.shape)
	}
	m, n := d.shape[0], d.shape[1]
	if m < n || n == 0 {
		return nil, nil, fmt.Errorf("QR of a %d×%d block: TSQR needs blocks with at least as many rows as columns", m, n)
	}
	a := d.astype(Float64).Copy()
	g := blas64.General{Rows: m, Cols: n, Stride: n, Data: a.data.([]float64)}
	tau := make([]float64, n)
	work := make([]float64, 1)
	lapack64.Geqrf(g, tau, work, -1)
	work = make([]float64, max(int(work[0]), n))
	lapack64.Geqrf(g, tau, work, len(work))
	r := newDense(Float64, []int{n, n})
	rd := r.data.([]float64)
	for i := range n {
		copy(rd[i*n+i:(i+1)*n], g.Data[i*n+i:(i+1)*n])
	}
	work = make([]float64, 1)
	lapack64.Orgqr(g, tau, work, -1)
	work = make([]float64, max(int(work[0]), n))
	lapack64.Orgqr(g, tau, work, len(work))
	return a, r, nil
}

func stackRows(blocks []*Dense) (*Dense, error) {
	if len(blocks) == 0 {
		return nil, fmt.Errorf("nothing to stack")
	}
	n := 0
	rows := 0
	for i, b := range blocks {
		if len(b.shape) != 2 || (i > 0 && b.shape[1] != n) {
			return nil, fmt.Errorf("cannot stack a block of shape %v under blocks of %d columns", b.shape, n)
		}
		n = b.shape[1]
		rows += b.shape[0]
	}
	out := newDense(Float64, []int{rows, n})
	r := 0
	for _, b := range blocks {
		placeBlock(out, b.astype(Float64), []int{r, 0})
		r += b.shape[0]
	}
	return out, nil
}

func smallSVD(d *Dense) (any, error) {
	m, err := d.Mat()
	if err != nil {
		return nil, err
	}
	var svd mat.SVD
	if !svd.Factorize(m, mat.SVDThin) {
		return nil, fmt.Errorf("SVD did not converge (block of shape %v)", d.shape)
	}
	var u, v mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	s := svd.Values(nil)
	return []any{DenseFromMat(&u), &Dense{dtype: Float64, shape: []int{len(s)}, strides: []int{1}, data: s}, DenseFromMat(v.T())}, nil
}

// triSolve solves R x = y for an upper-triangular R.
func triSolve(r, y *Dense) (*Dense, error) {
	rr := r.astype(Float64).contig()
	if len(rr.shape) != 2 || rr.shape[0] != rr.shape[1] {
		return nil, fmt.Errorf("triangular solve with a factor of shape %v", rr.shape)
	}
	n := rr.shape[0]
	vec := len(y.shape) == 1
	yy := y.astype(Float64).Copy()
	if vec {
		yy = yy.reshaped([]int{yy.shape[0], 1})
	}
	if len(yy.shape) != 2 || yy.shape[0] != n {
		return nil, fmt.Errorf("triangular solve: a right-hand side of shape %v for a %d×%d factor", y.shape, n, n)
	}
	rd := rr.data.([]float64)
	big := 0.0
	for i := range n {
		big = max(big, math.Abs(rd[i*n+i]))
	}
	for i := range n {
		if math.Abs(rd[i*n+i]) <= big*float64(n)*2.220446049250313e-16 {
			return nil, fmt.Errorf("the matrix is rank-deficient: R[%d,%d] = %g (of at most %g)", i, i, rd[i*n+i], big)
		}
	}
	k := yy.shape[1]
	if n > 0 && k > 0 {
		blas64.Trsm(blas.Left, blas.NoTrans, 1, blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: n, Stride: n, Data: rd},
			blas64.General{Rows: n, Cols: k, Stride: k, Data: yy.data.([]float64)})
	}
	if vec {
		return yy.reshaped([]int{n}), nil
	}
	return yy, nil
}

// kernelOp is a single-chunk result of one linalg kernel on single-chunk
// inputs.
type kernelOp struct {
	name   string
	params linalgParams
}

func (o *kernelOp) prefix() string { return o.name }

func (o *kernelOp) lower(l *lowerer, n *node) ([]graph.Key, error) {
	var deps []graph.Key
	for _, in := range n.inputs {
		k, err := l.blocks(in)
		if err != nil {
			return nil, err
		}
		if len(k) != 1 {
			return nil, fmt.Errorf("array: internal error: %s takes single-chunk inputs", o.name)
		}
		deps = append(deps, k[0])
	}
	key := n.key(make([]int, len(n.chunks))...)
	return []graph.Key{key}, l.add(key, opLinalg, o.params, deps)
}

// tsqr is the TSQR factorization of a tall-and-skinny node (one chunk of
// columns, every chunk of rows at least as tall as the matrix is wide).
type tsqr struct {
	in    *node
	split int
	token string
}

// qrOp is one output of QR: "q" (chunked like the rows of a) or "r" (one
// chunk).
type qrOp struct {
	t    *tsqr
	part string
}

func (o *qrOp) prefix() string { return "qr-" + o.part }

// factors adds the tasks of the tree and returns the keys of the Q blocks
// and of R.
func (t *tsqr) factors(l *lowerer) ([]graph.Key, graph.Key, error) {
	qkey := graph.NewKey("qr-q", t.token, 0, 0)
	if l.g.Has(qkey) {
		return l.done["tsqr-q:"+t.token], graph.NewKey("qr-r", t.token, 0, 0), nil
	}
	in, err := l.blocks(t.in)
	if err != nil {
		return nil, "", err
	}
	n := t.in.chunks[1][0]
	getitem := func(k graph.Key, i int, prefix string, idx ...int) (graph.Key, error) {
		g := graph.NewKey(prefix, t.token, idx...)
		return g, l.g.Add(&graph.Task{Key: g, Op: graph.OpGetItem, Params: graph.GetItemParams(i), Deps: []graph.Key{k}})
	}
	// Level 0: a QR per block of rows.
	type level struct {
		qs, rs  []graph.Key
		parents []int // index of the group each member belongs to at the next level
		slots   []int
	}
	var levels []level
	var lv level
	for i, k := range in {
		f := graph.NewKey("qr-block", t.token, 0, i)
		if err := l.add(f, opLinalg, linalgParams{Kind: "qr"}, []graph.Key{k}); err != nil {
			return nil, "", err
		}
		q, err := getitem(f, 0, "qr-block-q", 0, i)
		if err != nil {
			return nil, "", err
		}
		r, err := getitem(f, 1, "qr-block-r", 0, i)
		if err != nil {
			return nil, "", err
		}
		lv.qs, lv.rs = append(lv.qs, q), append(lv.rs, r)
	}
	// Stack the R factors in groups, up the tree.
	for d := 1; len(lv.rs) > 1; d++ {
		var next level
		lv.parents = make([]int, len(lv.rs))
		lv.slots = make([]int, len(lv.rs))
		for g := 0; g*t.split < len(lv.rs); g++ {
			members := lv.rs[g*t.split : min((g+1)*t.split, len(lv.rs))]
			for s := range members {
				lv.parents[g*t.split+s] = g
				lv.slots[g*t.split+s] = s
			}
			f := graph.NewKey("qr-stack", t.token, d, g)
			if err := l.add(f, opLinalg, linalgParams{Kind: "qr-stack"}, slices.Clone(members)); err != nil {
				return nil, "", err
			}
			q, err := getitem(f, 0, "qr-stack-q", d, g)
			if err != nil {
				return nil, "", err
			}
			r, err := getitem(f, 1, "qr-stack-r", d, g)
			if err != nil {
				return nil, "", err
			}
			next.qs, next.rs = append(next.qs, q), append(next.rs, r)
		}
		levels = append(levels, lv)
		lv = next
	}
	levels = append(levels, lv)
	rkey := graph.NewKey("qr-r", t.token, 0, 0)
	if err := l.g.Add(&graph.Task{Key: rkey, Op: graph.OpAlias, Deps: []graph.Key{lv.rs[0]}}); err != nil {
		return nil, "", err
	}
	// Down the tree: the effective Q of a member is its own Q times its
	// rows of its group's effective Q.
	eff := []graph.Key{levels[len(levels)-1].qs[0]}
	for d := len(levels) - 2; d >= 0; d-- {
		lv := levels[d]
		next := make([]graph.Key, len(lv.qs))
		for i, q := range lv.qs {
			if d == 0 {
				next[i] = graph.NewKey("qr-q", t.token, i, 0)
			} else {
				next[i] = graph.NewKey("qr-down", t.token, d, i)
			}
			p := linalgParams{Kind: "qr-apply", Row: lv.slots[i] * n, Rows: n}
			if err := l.add(next[i], opLinalg, p, []graph.Key{q, eff[lv.parents[i]]}); err != nil {
				return nil, "", err
			}
		}
		eff = next
	}
	if len(levels) == 1 {
		// One block: its Q is the Q.
		if err := l.g.Add(&graph.Task{Key: qkey, Op: graph.OpAlias, Deps: []graph.Key{levels[0].qs[0]}}); err != nil {
			return nil, "", err
		}
		eff = []graph.Key{qkey}
	}
	l.done["tsqr-q:"+t.token] = eff
	return eff, rkey, nil
}

func (o *qrOp) lower(l *lowerer, n *node) ([]graph.Key, error) {
	q, r, err := o.t.factors(l)
	if err != nil {
		return nil, err
	}
	if o.part == "r" {
		return []graph.Key{r}, nil
	}
	return q, nil
}

// tallSkinny prepares a for TSQR: one chunk of columns, and chunks of rows
// at least as tall as a is wide.
func tallSkinny(fn string, a Array) (Array, error) {
	s := a.Shape()
	if len(s) != 2 {
		return a, fmt.Errorf("array: %s: needs a 2-D array, not shape %s", fn, fmtShape(s))
	}
	if !allKnown(a.n.chunks) {
		return a, fmt.Errorf("array: %s: the array has chunks of unknown size %s; call ComputeChunkSizes first", fn, formatChunks(a.n.chunks))
	}
	m, n := s[0], s[1]
	if m < n || n == 0 {
		return a, fmt.Errorf("array: %s: TSQR needs a tall-and-skinny array (at least as many rows as columns, and some columns), not shape %s; for a wide array factor its transpose",
			fn, fmtShape(s))
	}
	rows := slices.Clone(a.n.chunks[0])
	// Merge chunks of rows shorter than n into their neighbours.
	var merged []int
	acc := 0
	for _, r := range rows {
		acc += r
		if acc >= n {
			merged = append(merged, acc)
			acc = 0
		}
	}
	if acc > 0 {
		merged[len(merged)-1] += acc
	}
	a = a.Astype(Float64)
	return rechunkTo(a, [][]int{merged, {n}}), nil
}

// QR factors a tall-and-skinny matrix a (m×n, m >= n) as a = q·r, with q
// (m×n, chunked like a's rows) having orthonormal columns and r (n×n)
// upper triangular, by TSQR: a QR factorization per chunk of rows, then of
// the stacked R factors, SplitEvery at a time, in a tree. a is brought into
// one chunk of columns, and chunks of rows shorter than n are merged. As
// with LAPACK, the signs of r's diagonal are not normalized. Options:
// SplitEvery.
func QR(a Array, opts ...Option) (q, r Array) {
	t, err := newTSQR("QR", a, opts)
	if err != nil {
		e := errArray(err)
		return e, e
	}
	n := t.in.chunks[1][0]
	q = newArray(&qrOp{t: t, part: "q"}, Float64, cloneChunks(t.in.chunks), []*node{t.in}, []any{"qr-q", t.split})
	r = newArray(&qrOp{t: t, part: "r"}, Float64, [][]int{{n}, {n}}, []*node{t.in}, []any{"qr-r", t.split})
	return q, r
}

func newTSQR(fn string, a Array, opts []Option) (*tsqr, error) {
	if err := a.Err(); err != nil {
		return nil, err
	}
	c, err := configure(fn, opts, "SplitEvery")
	if err != nil {
		return nil, wrapErr(err)
	}
	ts, err := tallSkinny(fn, a)
	if err != nil {
		return nil, err
	}
	if ts.Err() != nil {
		return nil, ts.Err()
	}
	return &tsqr{in: ts.n, split: c.splitEvery, token: graph.TokenizeStrings("tsqr", ts.n.token, fmt.Sprint(c.splitEvery))}, nil
}

// svdOp is one output of SVD.
type svdOp struct {
	t    *tsqr
	part string // "u", "s", "vt"
}

func (o *svdOp) prefix() string { return "svd-" + o.part }

func (o *svdOp) lower(l *lowerer, n *node) ([]graph.Key, error) {
	q, r, err := o.t.factors(l)
	if err != nil {
		return nil, err
	}
	f := graph.NewKey("svd-r", o.t.token)
	if err := l.add(f, opLinalg, linalgParams{Kind: "svd"}, []graph.Key{r}); err != nil {
		return nil, err
	}
	item := func(i int, prefix string) (graph.Key, error) {
		k := graph.NewKey(prefix, o.t.token)
		return k, l.g.Add(&graph.Task{Key: k, Op: graph.OpGetItem, Params: graph.GetItemParams(i), Deps: []graph.Key{f}})
	}
	ur, err := item(0, "svd-ur")
	if err != nil {
		return nil, err
	}
	switch o.part {
	case "s":
		k, err := item(1, "svd-s")
		return []graph.Key{k}, err
	case "vt":
		k, err := item(2, "svd-vt")
		return []graph.Key{k}, err
	}
	keys := make([]graph.Key, len(q))
	for i, qk := range q {
		keys[i] = n.key(i, 0)
		p := linalgParams{Kind: "tdot", AxesA: []int{1}, AxesB: []int{0}, OutT: Float64}
		if err := l.add(keys[i], opLinalg, p, []graph.Key{qk, ur}); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// SVD returns the thin singular value decomposition a = u·diag(s)·vt of a
// tall-and-skinny matrix (m×n, m >= n): u (m×n, chunked like a's rows), s
// (n, descending) and vt (n×n), through TSQR (see QR) and gonum's SVD of
// the small R factor. For a wide matrix, take the SVD of its transpose.
// Singular vectors are unique up to sign. Options: SplitEvery.
func SVD(a Array, opts ...Option) (u, s, vt Array) {
	t, err := newTSQR("SVD", a, opts)
	if err != nil {
		e := errArray(err)
		return e, e, e
	}
	n := t.in.chunks[1][0]
	u = newArray(&svdOp{t: t, part: "u"}, Float64, cloneChunks(t.in.chunks), []*node{t.in}, []any{"svd-u", t.split})
	s = newArray(&svdOp{t: t, part: "s"}, Float64, [][]int{{n}}, []*node{t.in}, []any{"svd-s", t.split})
	vt = newArray(&svdOp{t: t, part: "vt"}, Float64, [][]int{{n}, {n}}, []*node{t.in}, []any{"svd-vt", t.split})
	return u, s, vt
}

// Lstsq returns the least-squares solution x of a x = b, for a (m×n) of
// full rank and b of shape (m,) or (m, k), blocked through TSQR. For a
// tall a (m >= n), x = R⁻¹ (Qᵀ b) minimizes |a x - b|, and residuals
// holds the sum of squared residuals of each column of b (shape (1,) for
// a 1-D b, as in NumPy). For a wide a (m < n), aᵀ = Q R and x = Q R⁻ᵀ b
// is the solution of least norm; residuals is empty (shape (0,)), as in
// NumPy. A rank-deficient a is an error when computed. Options:
// SplitEvery.
func Lstsq(a, b Array, opts ...Option) (x, residuals Array) {
	fail := func(e Array) (Array, Array) { return e, e }
	if err := a.Err(); err != nil {
		return fail(a)
	}
	if err := b.Err(); err != nil {
		return fail(b)
	}
	sa, sb := a.Shape(), b.Shape()
	if len(sa) != 2 || (len(sb) != 1 && len(sb) != 2) || sb[0] != sa[0] {
		return fail(errorf("Lstsq: b of shape %s does not fit a of shape %s (want (%d,) or (%d, k))", fmtShape(sb), fmtShape(sa), sa[0], sa[0]))
	}
	if sa[0] != unknown && sa[1] != unknown && sa[0] < sa[1] {
		return lstsqWide(a, b, opts)
	}
	q, r := QR(a, opts...)
	if q.Err() != nil {
		return fail(errorf("Lstsq: %s", unwrapArrayErr(q.Err())))
	}
	bb := b.Astype(Float64)
	want := cloneChunks(bb.n.chunks)
	want[0] = q.n.chunks[0]
	bb = rechunkTo(bb, want)
	if bb.Err() != nil {
		return fail(bb)
	}
	qtb := TensorDot(q, bb, []int{0}, []int{0}, opts...)
	if qtb.Err() != nil {
		return fail(qtb)
	}
	qtb = rechunkTo(qtb, wholeChunks(qtb.Shape()))
	x = newArray(&kernelOp{name: "lstsq", params: linalgParams{Kind: "trsolve"}}, Float64, wholeChunks(qtb.Shape()), []*node{r.n, qtb.n}, "lstsq")
	res := bb.Sub(MatMul(a.Astype(Float64), x))
	residuals = res.Mul(res).Sum(Axis(0))
	if len(sb) == 1 {
		residuals = residuals.ExpandDims(0)
	}
	return x, residuals
}

// lstsqWide is Lstsq of a wide a (m < n): with aᵀ = Q R, a x = b becomes
// Rᵀ (Qᵀ x) = b, whose solution of least norm is x = Q R⁻ᵀ b.
func lstsqWide(a, b Array, opts []Option) (x, residuals Array) {
	fail := func(e Array) (Array, Array) { return e, e }
	q, r := QR(a.T(), opts...)
	if q.Err() != nil {
		return fail(errorf("Lstsq: %s", unwrapArrayErr(q.Err())))
	}
	m := a.Shape()[0]
	// R is m×m and upper triangular; Rᵀ y = b by a triangular solve of
	// the reversed system: with J the reversal, J Rᵀ J is upper triangular.
	bb := b.Astype(Float64)
	vec := bb.NDim() == 1
	if vec {
		bb = bb.ExpandDims(1)
	}
	rev := Step(Open, Open, -1)
	bb = rechunkTo(bb.Index(rev), wholeChunks(bb.Shape()))
	if bb.Err() != nil {
		return fail(bb)
	}
	rt := r.T().Index(rev, rev)
	rt = rechunkTo(rt, wholeChunks([]int{m, m}))
	if rt.Err() != nil {
		return fail(rt)
	}
	y := newArray(&kernelOp{name: "lstsq", params: linalgParams{Kind: "trsolve"}}, Float64, wholeChunks(bb.Shape()), []*node{rt.n, bb.n}, "lstsq-wide")
	x = MatMul(q, y.Index(rev), opts...)
	if vec {
		x = x.Squeeze(1)
	}
	return x, Zeros([]int{0})
}

// cholOp is the blocked Cholesky factorization.
type cholOp struct{}

func (o *cholOp) prefix() string { return "cholesky" }

// Cholesky returns the lower-triangular L with a = L·Lᵀ, for a symmetric
// positive-definite a (only its lower triangle is read), blocked: a is
// rechunked to square chunks (its column chunks become its row chunks),
// then block (i, j) of L is computed from block (i, j) of a and blocks of
// L to its left (gonum's Potrf, Gemm and Trsm). A matrix that is not
// positive definite is an error when computed, naming the block.
func Cholesky(a Array) Array {
	if err := a.Err(); err != nil {
		return a
	}
	s := a.Shape()
	if len(s) != 2 || s[0] != s[1] || s[0] == unknown {
		return errorf("Cholesky: a must be a square matrix, not shape %s", fmtShape(s))
	}
	if !allKnown(a.n.chunks) {
		return errorf("Cholesky: the array has chunks of unknown size; call ComputeChunkSizes first")
	}
	sq := rechunkTo(a.Astype(Float64), [][]int{a.n.chunks[0], a.n.chunks[0]})
	if sq.Err() != nil {
		return sq
	}
	return newArray(&cholOp{}, Float64, cloneChunks(sq.n.chunks), []*node{sq.n}, "cholesky")
}

func (o *cholOp) lower(l *lowerer, n *node) ([]graph.Key, error) {
	in := n.inputs[0]
	nb := len(n.chunks[0])
	keys := make([]graph.Key, nb*nb)
	L := func(i, j int) graph.Key { return n.key(i, j) }
	for j := range nb {
		for i := range nb {
			keys[i*nb+j] = L(i, j)
			if i < j {
				p := createParams{Kind: "full", DType: Float64, Shape: []int{n.chunks[0][i], n.chunks[1][j]}, Offset: []int{0, 0}}
				if err := l.add(L(i, j), opCreate, p, nil); err != nil {
					return nil, err
				}
				continue
			}
			ak, err := l.blockKey(in, []int{i, j})
			if err != nil {
				return nil, err
			}
			deps := []graph.Key{ak}
			if i > j {
				deps = append(deps, L(j, j))
			}
			for p := range j {
				deps = append(deps, L(i, p), L(j, p))
			}
			params := linalgParams{Kind: "chol", Block: []int{i, j}}
			if err := l.add(L(i, j), opLinalg, params, deps); err != nil {
				return nil, err
			}
		}
	}
	return keys, nil
}

// cholBlock computes block (i, j) of L: inputs a_ij, then L_jj when i > j,
// then pairs L_ip, L_jp for p < j.
func cholBlock(blocks []*Dense, p linalgParams) (*Dense, error) {
	if len(p.Block) != 2 {
		return nil, fmt.Errorf("cholesky: block index %v", p.Block)
	}
	i, j := p.Block[0], p.Block[1]
	m := blocks[0].astype(Float64).Copy()
	if len(m.shape) != 2 {
		return nil, fmt.Errorf("cholesky: block of shape %v", m.shape)
	}
	rows, cols := m.shape[0], m.shape[1]
	md := m.data.([]float64)
	rest := blocks[1:]
	var ljj *Dense
	if i > j {
		ljj = rest[0].contig()
		rest = rest[1:]
	}
	for k := 0; k+1 < len(rest); k += 2 {
		lip, ljp := rest[k].contig(), rest[k+1].contig()
		kk := lip.shape[1]
		if rows == 0 || cols == 0 || kk == 0 {
			continue
		}
		blas64.Gemm(blas.NoTrans, blas.Trans, -1,
			blas64.General{Rows: rows, Cols: kk, Stride: kk, Data: lip.data.([]float64)},
			blas64.General{Rows: cols, Cols: kk, Stride: kk, Data: ljp.data.([]float64)},
			1, blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: md})
	}
	if i == j {
		if rows == 0 {
			return m, nil
		}
		if _, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Lower, N: rows, Stride: cols, Data: md}); !ok {
			return nil, fmt.Errorf("Cholesky: the matrix is not positive definite (diagonal block (%d, %d))", i, j)
		}
		for r := range rows {
			for c := r + 1; c < cols; c++ {
				md[r*cols+c] = 0
			}
		}
		return m, nil
	}
	if rows > 0 && cols > 0 {
		blas64.Trsm(blas.Right, blas.Trans, 1,
			blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: cols, Stride: cols, Data: ljj.data.([]float64)},
			blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: md})
	}
	return m, nil
}

// Ord is the order of a norm, for Norm.
type Ord struct {
	name string
	p    float64
}

var (
	// DefaultOrd is the 2-norm of a vector and the Frobenius norm of a
	// matrix.
	DefaultOrd = Ord{}
	// Fro is the Frobenius norm of a matrix.
	Fro = Ord{name: "fro"}
	// Nuc is the nuclear norm of a matrix: the sum of its singular values.
	Nuc = Ord{name: "nuc"}
)

// P is the norm of order p: for a vector (sum |x|^p)^(1/p), with P(0) the
// number of non-zero elements and P(±Inf) the largest (smallest) |x|; for a
// matrix P(1) and P(-1) the largest (smallest) column sum of |a|, P(Inf)
// and P(-Inf) the largest (smallest) row sum, P(2) and P(-2) the largest
// (smallest) singular value.
func P(p float64) Ord { return Ord{name: "p", p: p} }

func (o Ord) String() string {
	switch o.name {
	case "":
		return "default"
	case "p":
		return fmt.Sprint(o.p)
	}
	return o.name
}

// Norm returns a vector or matrix norm, as NumPy's linalg.norm: over the
// one or two axes given with Axis, or over all axes of a 1-D or 2-D
// array (a vector or a matrix norm). With DefaultOrd and no Axis, any
// array is flattened into a vector. Options: Axis, KeepDims.
func Norm(a Array, ord Ord, opts ...Option) Array {
	if err := a.Err(); err != nil {
		return a
	}
	c, err := configure("Norm", opts, "Axis", "KeepDims")
	if err != nil {
		return errArray(wrapErr(err))
	}
	nd := a.NDim()
	axes := c.axes
	if !c.axesSet {
		switch {
		case ord == DefaultOrd:
			axes = identityAxes(nd)
			x := a.Astype(floatType(a.n.dtype))
			r := x.Mul(x).Sum(keepOpt(c.keepDims)...).Sqrt()
			return r
		case nd == 1 || nd == 2:
			axes = identityAxes(nd)
		default:
			return errorf("Norm: order %s needs a 1-D or 2-D array or Axis, not shape %s", ord, fmtShape(a.Shape()))
		}
	}
	axes, err = normAxes(axes, nd)
	if err != nil {
		return errorf("Norm: %v", err)
	}
	if c.axesSet {
		// Keep the order the caller gave for matrix norms (rows, columns).
		axes = make([]int, len(c.axes))
		for i, ax := range c.axes {
			axes[i], _ = normAxis(ax, nd)
		}
	}
	x := a.Astype(floatType(a.n.dtype))
	keep := keepOpt(c.keepDims)
	switch len(axes) {
	case 1:
		ax := Axis(axes[0])
		abs := x.Abs()
		switch {
		case ord.name == "" || (ord.name == "p" && ord.p == 2):
			return x.Mul(x).Sum(append(keep, ax)...).Sqrt()
		case ord.name == "p" && math.IsInf(ord.p, 1):
			return abs.Max(append(keep, ax)...)
		case ord.name == "p" && math.IsInf(ord.p, -1):
			return abs.Min(append(keep, ax)...)
		case ord.name == "p" && ord.p == 0:
			return x.Ne(0).Astype(x.n.dtype).Sum(append(keep, ax)...)
		case ord.name == "p" && ord.p == 1:
			return abs.Sum(append(keep, ax)...)
		case ord.name == "p":
			return abs.Pow(ord.p).Sum(append(keep, ax)...).Pow(1 / ord.p)
		}
		return errorf("Norm: order %s is not a vector norm", ord)
	case 2:
		r, cl := axes[0], axes[1]
		abs := x.Abs()
		// Reduce one axis with KeepDims, then the other, then drop both
		// unless asked to keep them.
		two := func(first int, f1 func(Array, ...Option) Array, second int, f2 func(Array, ...Option) Array) Array {
			y := f1(abs, Axis(first), KeepDims())
			y = f2(y, Axis(second), KeepDims())
			if c.keepDims {
				return y
			}
			return y.Squeeze(r, cl)
		}
		sum := func(a Array, o ...Option) Array { return a.Sum(o...) }
		mx := func(a Array, o ...Option) Array { return a.Max(o...) }
		mn := func(a Array, o ...Option) Array { return a.Min(o...) }
		switch {
		case ord.name == "" || ord.name == "fro":
			y := x.Mul(x).Sum(Axis(r, cl), KeepDims()).Sqrt()
			if c.keepDims {
				return y
			}
			return y.Squeeze(r, cl)
		case ord.name == "p" && ord.p == 1:
			return two(r, sum, cl, mx)
		case ord.name == "p" && ord.p == -1:
			return two(r, sum, cl, mn)
		case ord.name == "p" && math.IsInf(ord.p, 1):
			return two(cl, sum, r, mx)
		case ord.name == "p" && math.IsInf(ord.p, -1):
			return two(cl, sum, r, mn)
		case ord.name == "nuc" || (ord.name == "p" && (ord.p == 2 || ord.p == -2)):
			if nd != 2 {
				return errorf("Norm: order %s of a matrix needs a 2-D array, not shape %s", ord, fmtShape(a.Shape()))
			}
			m := x
			if r > cl {
				m = m.T()
			}
			if s := m.Shape(); s[0] < s[1] {
				m = m.T()
			}
			_, sv, _ := SVD(m)
			var y Array
			switch {
			case ord.name == "nuc":
				y = sv.Sum()
			case ord.p == 2:
				y = sv.Max()
			default:
				y = sv.Min()
			}
			if c.keepDims {
				y = y.Reshape(1, 1)
			}
			return y
		}
		return errorf("Norm: order %s is not a matrix norm", ord)
	}
	return errorf("Norm: takes 1 or 2 axes, not %v", c.axes)
}

func floatType(t DType) DType {
	if t == Float32 {
		return Float32
	}
	return Float64
}

func keepOpt(k bool) []Option {
	if k {
		return []Option{KeepDims()}
	}
	return nil
}
