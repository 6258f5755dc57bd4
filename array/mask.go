package array

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/shoal-data/shoal/graph"
)

type selectParams struct {
	Mode string `json:"mode"` // "mask", "compress" or "shape"
	K    int    `json:"k,omitempty"`
	Axis int    `json:"axis,omitempty"`
}

// selectOp selects elements with a boolean mask; the sizes of its chunks
// along the selected axis are not known until they are computed.
type selectOp struct {
	mode string
	k    int // mask: the mask covers the first k axes
	axis int // compress: the axis
}

func (o *selectOp) prefix() string { return "getitem-" + o.mode }

// Mask returns the elements of a where mask is true, as NumPy's a[mask].
// The mask is a bool array whose shape is the shape of a's first
// mask.NDim() axes; those axes become one axis of the result, in
// row-major order, whose length is not known until it is computed (Shape
// reports -1). For a mask of more than one axis, a's axes 1 to
// mask.NDim()-1 are brought into one chunk each.
func (a Array) Mask(mask Array) Array {
	if err := a.Err(); err != nil {
		return a
	}
	if err := mask.Err(); err != nil {
		return mask
	}
	if mask.n.dtype != Bool {
		return errorf("Mask: the mask is a %s array; want bool (compare first, as in a.Gt(0))", mask.n.dtype)
	}
	k := len(mask.n.chunks)
	as, ms := a.Shape(), mask.Shape()
	if k == 0 || k > len(as) || !slices.Equal(as[:k], ms) {
		return errorf("Mask: a mask of shape %s does not fit an array of shape %s (it must match the leading axes)", fmtShape(ms), fmtShape(as))
	}
	// Axes 1..k-1 in one chunk, so that the selected elements come out in
	// row-major order, as NumPy's.
	if k > 1 {
		aw := cloneChunks(a.n.chunks)
		for ax := 1; ax < k; ax++ {
			aw[ax] = []int{as[ax]}
		}
		if !equalChunks(aw, a.n.chunks) {
			if !allKnown(a.n.chunks) {
				return errorf("Mask: the array has chunks of unknown size %s; call ComputeChunkSizes first", formatChunks(a.n.chunks))
			}
			a = rechunkTo(a, aw)
			if a.Err() != nil {
				return a
			}
		}
	}
	want := cloneChunks(a.n.chunks[:k])
	if !equalChunks(mask.n.chunks, want) {
		if !allKnown(want) || !allKnown(mask.n.chunks) {
			return errorf("Mask: the mask's chunks %s and the array's %s differ and have unknown sizes; call ComputeChunkSizes first",
				formatChunks(mask.n.chunks), formatChunks(want))
		}
		mask = rechunkTo(mask, want)
		if mask.Err() != nil {
			return mask
		}
	}
	lead := numBlocks(a.n.chunks[:k])
	chunks := [][]int{slices.Repeat([]int{unknown}, lead)}
	chunks = append(chunks, cloneChunks(a.n.chunks[k:])...)
	return newArray(&selectOp{mode: "mask", k: k}, a.n.dtype, chunks, []*node{a.n, mask.n}, []any{"mask", k})
}

// Compress returns the positions along axis where the 1-D bool array
// mask is true, as NumPy's compress (a[:, mask] for axis 1). The length
// of that axis is not known until it is computed.
func (a Array) Compress(mask Array, axis int) Array {
	if err := a.Err(); err != nil {
		return a
	}
	if err := mask.Err(); err != nil {
		return mask
	}
	ax, err := normAxis(axis, len(a.n.chunks))
	if err != nil {
		return errorf("Compress: %v", err)
	}
	if mask.n.dtype != Bool || len(mask.n.chunks) != 1 {
		return errorf("Compress: the mask must be a 1-D bool array, not a %s array of shape %s", mask.n.dtype, fmtShape(mask.Shape()))
	}
	if ms, as := mask.Shape()[0], a.Shape()[ax]; ms != as || ms == unknown {
		return errorf("Compress: a mask of length %d does not fit axis %d of length %d (shape %s)", ms, ax, as, fmtShape(a.Shape()))
	}
	if !slices.Equal(mask.n.chunks[0], a.n.chunks[ax]) {
		mask = rechunkTo(mask, [][]int{a.n.chunks[ax]})
		if mask.Err() != nil {
			return mask
		}
	}
	chunks := cloneChunks(a.n.chunks)
	for i := range chunks[ax] {
		chunks[ax][i] = unknown
	}
	return newArray(&selectOp{mode: "compress", axis: ax}, a.n.dtype, chunks, []*node{a.n, mask.n}, []any{"compress", ax})
}

func (o *selectOp) lower(l *lowerer, n *node) ([]graph.Key, error) {
	in, mask := n.inputs[0], n.inputs[1]
	grid := gridShape(n.chunks)
	keys := make([]graph.Key, numBlocks(n.chunks))
	inGrid := gridShape(in.chunks)
	for i := range keys {
		idx := blockIndex(grid, i)
		var ii, mi []int
		switch o.mode {
		case "mask":
			lead := blockIndex(inGrid[:o.k], idx[0])
			ii = append(slices.Clone(lead), idx[1:]...)
			mi = lead
		default:
			ii = idx
			mi = []int{idx[o.axis]}
		}
		bk, err := l.blockKey(in, ii)
		if err != nil {
			return nil, err
		}
		mk, err := l.blockKey(mask, mi)
		if err != nil {
			return nil, err
		}
		keys[i] = n.key(idx...)
		if err := l.add(keys[i], opSelect, selectParams{Mode: o.mode, K: o.k, Axis: o.axis}, []graph.Key{bk, mk}); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

func runSelect(_ context.Context, in graph.OpInput) (any, error) {
	var p selectParams
	if err := json.Unmarshal(in.Params, &p); err != nil {
		return nil, fmt.Errorf("decode select params: %w", err)
	}
	blocks, err := denseInputs(in)
	if err != nil {
		return nil, err
	}
	if p.Mode == "shape" {
		if len(blocks) != 1 {
			return nil, fmt.Errorf("shape takes 1 input")
		}
		s := make([]int64, len(blocks[0].shape))
		for i, v := range blocks[0].shape {
			s[i] = int64(v)
		}
		return &Dense{dtype: Int64, shape: []int{len(s)}, strides: []int{1}, data: s}, nil
	}
	if len(blocks) != 2 {
		return nil, fmt.Errorf("select takes 2 inputs, got %d", len(blocks))
	}
	b, m := blocks[0].contig(), blocks[1].contig()
	if m.dtype != Bool {
		return nil, fmt.Errorf("the mask is %s, not bool", m.dtype)
	}
	mv := m.data.([]bool)
	switch p.Mode {
	case "mask":
		if p.K > len(b.shape) || !slices.Equal(b.shape[:p.K], m.shape) {
			return nil, fmt.Errorf("a mask block of shape %v does not fit a block of shape %v", m.shape, b.shape)
		}
		inner := product(b.shape[p.K:])
		count := 0
		for _, v := range mv {
			if v {
				count++
			}
		}
		out := newDense(b.dtype, append([]int{count}, b.shape[p.K:]...))
		j := 0
		for i, v := range mv {
			if v {
				copySlice(out.data, j*inner, b.data, i*inner, inner)
				j++
			}
		}
		return out, nil
	case "compress":
		ax := p.Axis
		if ax >= len(b.shape) || m.Size() != b.shape[ax] {
			return nil, fmt.Errorf("a mask block of shape %v does not fit axis %d of a block of shape %v", m.shape, ax, b.shape)
		}
		count := 0
		for _, v := range mv {
			if v {
				count++
			}
		}
		shape := slices.Clone(b.shape)
		shape[ax] = count
		out := newDense(b.dtype, shape)
		inner := product(b.shape[ax+1:])
		outer := product(b.shape[:ax])
		n := b.shape[ax]
		for o := range outer {
			j := 0
			for i, v := range mv {
				if v {
					copySlice(out.data, (o*count+j)*inner, b.data, (o*n+i)*inner, inner)
					j++
				}
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown select mode %q", p.Mode)
}

func copySlice(dst any, di int, src any, si, n int) {
	switch d := dst.(type) {
	case []float64:
		copy(d[di:di+n], src.([]float64)[si:si+n])
	case []float32:
		copy(d[di:di+n], src.([]float32)[si:si+n])
	case []int64:
		copy(d[di:di+n], src.([]int64)[si:si+n])
	case []bool:
		copy(d[di:di+n], src.([]bool)[si:si+n])
	}
}

// ComputeChunkSizes computes the array's chunks to learn the sizes that
// are not known (after Mask or Compress, or from a DataFrame) and returns
// the same array with known chunk sizes. The chunks themselves are not
// kept: persist the array first (Persist) to avoid computing them again.
func (a Array) ComputeChunkSizes(ctx context.Context, exec graph.Executor) (Array, error) {
	if err := a.Err(); err != nil {
		return a, err
	}
	if allKnown(a.n.chunks) {
		return a, nil
	}
	if exec == nil {
		return a, errors.New("array: ComputeChunkSizes needs an executor, such as local.New()")
	}
	g, keys, err := a.Graph()
	if err != nil {
		return a, err
	}
	shapeKeys := make([]graph.Key, len(keys))
	for i, k := range keys {
		shapeKeys[i] = graph.NewKey("chunk-shape", a.n.token, i)
		if err := g.Add(&graph.Task{Key: shapeKeys[i], Op: opSelect, Params: []byte(`{"mode":"shape"}`), Deps: []graph.Key{k}}); err != nil {
			return a, err
		}
	}
	vals, err := exec.Compute(ctx, g, shapeKeys...)
	if err != nil {
		return a, err
	}
	chunks := cloneChunks(a.n.chunks)
	grid := gridShape(chunks)
	for i, v := range vals {
		d, ok := v.(*Dense)
		if !ok || d.dtype != Int64 || d.Size() != len(chunks) {
			return a, fmt.Errorf("array: the shape of chunk %d is a %T", i, v)
		}
		idx := blockIndex(grid, i)
		for ax, s := range d.data.([]int64) {
			// Every chunk along an axis at one position must agree on its
			// length.
			switch c := chunks[ax][idx[ax]]; {
			case c == unknown:
				chunks[ax][idx[ax]] = int(s)
			case c != int(s):
				return a, fmt.Errorf("array: chunk %v has length %d along axis %d, but another chunk at that position has %d", idx, s, ax, c)
			}
		}
	}
	return newArray(&aliasOp{}, a.n.dtype, chunks, []*node{a.n}, "sizes"), nil
}

// aliasOp is its input with other metadata (known chunk sizes).
type aliasOp struct{}

func (o *aliasOp) prefix() string { return "alias" }

func (o *aliasOp) lower(l *lowerer, n *node) ([]graph.Key, error) { return l.blocks(n.inputs[0]) }

// persistOp is an array whose chunks an executor holds.
type persistOp struct {
	keys    []graph.Key
	futures []graph.Future
}

func (o *persistOp) prefix() string { return "persisted" }

func (o *persistOp) lower(l *lowerer, n *node) ([]graph.Key, error) {
	l.g.AddExternal(o.keys...)
	return slices.Clone(o.keys), nil
}

// Persist computes the array's chunks and keeps them on exec. The
// returned Array reads them from there, so that several computations
// share the work; call its Release when done. Persisted chunks work as
// external keys: later graphs that use them run on the same executor.
func (a Array) Persist(ctx context.Context, exec graph.Executor) (Array, error) {
	if exec == nil {
		return a, errors.New("array: Persist needs an executor, such as local.New()")
	}
	g, keys, err := a.Graph()
	if err != nil {
		return a, err
	}
	fs, err := exec.Submit(ctx, g, keys...)
	if err != nil {
		return a, err
	}
	release := func() {
		for _, f := range fs {
			f.Release()
		}
	}
	for _, f := range fs {
		select {
		case <-f.Done():
		case <-ctx.Done():
			release()
			return a, ctx.Err()
		}
	}
	for _, f := range fs {
		if _, err := f.Result(ctx); err != nil {
			release()
			return a, err
		}
	}
	op := &persistOp{keys: keys, futures: fs}
	return newArray(op, a.n.dtype, cloneChunks(a.n.chunks), nil, []any{"persist", a.n.token, keys}), nil
}

// Release frees the chunks that a persisted array holds on its executor.
// On other arrays it does nothing.
func (a Array) Release() {
	if a.n == nil {
		return
	}
	if p, ok := a.n.op.(*persistOp); ok {
		for _, f := range p.futures {
			f.Release()
		}
	}
}
