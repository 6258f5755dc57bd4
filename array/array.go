package array

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/shoal-data/shoal/graph"
)

// Array is a lazy, chunked n-dimensional array. Building one (creating,
// adding, reducing, slicing) only records what to do; Compute runs it on
// an executor, one task per chunk.
//
// An Array is an immutable value: every method returns a new Array and
// leaves its receiver as it was, so an Array can be shared and reused. A
// mistake found while building (shapes that do not broadcast, an axis out
// of range, a bad dtype) is kept in the Array: Err returns it, every
// Array derived from it carries it, and Compute returns it. The zero Array
// is not usable.
type Array struct {
	n *node
}

// node is one step of an array expression: an operation on the nodes it
// takes as inputs, with the chunks and dtype of its result.
type node struct {
	op     nodeOp
	dtype  DType
	chunks [][]int
	inputs []*node
	token  string
	err    error
}

// nodeOp is what a node does. lower adds the tasks that compute the
// node's chunks to l's graph and returns their keys in row-major order of
// the chunk grid.
type nodeOp interface {
	prefix() string
	lower(l *lowerer, n *node) ([]graph.Key, error)
}

var errZero = errors.New("array: zero Array: make arrays with a constructor such as Zeros, FromSlice or Uniform")

func errArray(err error) Array { return Array{n: &node{err: err}} }

func errorf(format string, args ...any) Array {
	return errArray(fmt.Errorf("array: "+format, args...))
}

// newArray returns an Array of a new node. desc describes the operation
// (JSON-encodable); with the inputs' tokens it makes the node's token,
// so that the same operation on the same inputs gets the same keys.
func newArray(op nodeOp, dt DType, chunks [][]int, inputs []*node, desc any) Array {
	for _, in := range inputs {
		if in == nil {
			return errArray(errZero)
		}
		if in.err != nil {
			return Array{n: &node{err: in.err}}
		}
	}
	d, err := json.Marshal(desc)
	if err != nil {
		return errorf("%s: describe the operation: %v", op.prefix(), err)
	}
	parts := [][]byte{[]byte(op.prefix()), d, []byte(dt.String()), []byte(fmt.Sprint(chunks))}
	for _, in := range inputs {
		parts = append(parts, []byte(in.token))
	}
	return Array{n: &node{op: op, dtype: dt, chunks: chunks, inputs: inputs, token: graph.Tokenize(parts...)}}
}

// Err returns the error met while building the array, if any.
func (a Array) Err() error {
	if a.n == nil {
		return errZero
	}
	return a.n.err
}

// DType returns the element type.
func (a Array) DType() DType {
	if a.Err() != nil {
		return 0
	}
	return a.n.dtype
}

// NDim returns the number of axes.
func (a Array) NDim() int {
	if a.Err() != nil {
		return 0
	}
	return len(a.n.chunks)
}

// Shape returns the length of every axis; -1 for an axis whose length is
// not known until the array is computed (after boolean-mask indexing).
func (a Array) Shape() []int {
	if a.Err() != nil {
		return nil
	}
	return shapeOfChunks(a.n.chunks)
}

// Size returns the number of elements, or -1 when it is not known.
func (a Array) Size() int {
	s := a.Shape()
	n := 1
	for _, d := range s {
		if d == unknown {
			return unknown
		}
		n *= d
	}
	return n
}

// Chunks returns the chunk sizes along every axis: Chunks()[i] lists the
// sizes of the chunks along axis i. A size of -1 is not known until the
// array is computed; ComputeChunkSizes finds it.
func (a Array) Chunks() [][]int {
	if a.Err() != nil {
		return nil
	}
	return cloneChunks(a.n.chunks)
}

// NumBlocks returns the number of chunks along every axis.
func (a Array) NumBlocks() []int {
	if a.Err() != nil {
		return nil
	}
	return gridShape(a.n.chunks)
}

// String describes the array without computing it.
func (a Array) String() string {
	if err := a.Err(); err != nil {
		return "Array<error: " + err.Error() + ">"
	}
	shape := a.Shape()
	parts := make([]string, len(shape))
	for i, s := range shape {
		if s == unknown {
			parts[i] = "?"
		} else {
			parts[i] = fmt.Sprint(s)
		}
	}
	return fmt.Sprintf("Array<%s, shape (%s), chunks %s, %s>", a.n.dtype, strings.Join(parts, ", "),
		formatChunks(a.n.chunks), a.n.op.prefix())
}

// Graph returns the task graph that computes the array and the keys of
// its chunks in row-major order of the chunk grid (the last axis varies
// fastest). Other engines can run it: every task names a registered op
// and carries encoded params. Tasks that the keys do not need are left
// out.
func (a Array) Graph() (*graph.Graph, []graph.Key, error) {
	if err := a.Err(); err != nil {
		return nil, nil, err
	}
	l := newLowerer(a.n)
	keys, err := l.blocks(a.n)
	if err != nil {
		return nil, nil, err
	}
	// Slices and the like need only some chunks of their inputs.
	g, err := graph.Cull(l.g, keys...)
	if err != nil {
		return nil, nil, err
	}
	return g, keys, nil
}

// Compute runs the array on exec and returns it as one Dense. The chunks
// are computed in parallel and put together in this process, so the
// result must fit in memory; reduce or slice big arrays first, or write
// them with WriteNPYStack.
func (a Array) Compute(ctx context.Context, exec graph.Executor) (*Dense, error) {
	if exec == nil {
		return nil, errors.New("array: Compute needs an executor, such as local.New()")
	}
	g, keys, done, err := a.graphFor(exec)
	if err != nil {
		return nil, err
	}
	defer done()
	vals, err := exec.Compute(ctx, g, keys...)
	if err != nil {
		return nil, err
	}
	return assembleResult(a.n, vals)
}

// assembleResult puts computed chunks together into one Dense.
func assembleResult(n *node, vals []any) (*Dense, error) {
	blocks := make([]*Dense, len(vals))
	for i, v := range vals {
		d, ok := v.(*Dense)
		if !ok {
			return nil, fmt.Errorf("array: chunk %d is a %T, not a *array.Dense", i, v)
		}
		if d.dtype != n.dtype {
			return nil, fmt.Errorf("array: chunk %d has dtype %s, want %s", i, d.dtype, n.dtype)
		}
		blocks[i] = d
	}
	if len(blocks) == 1 {
		if !slices.Equal(blocks[0].shape, shapeOfChunksResolved(n.chunks, blocks)) {
			return nil, fmt.Errorf("array: the only chunk has shape %v, want %v", blocks[0].shape, n.chunks)
		}
		return blocks[0].Copy(), nil
	}
	chunks, err := resolveChunks(n.chunks, blocks)
	if err != nil {
		return nil, err
	}
	return concatBlocks(n.dtype, chunks, blocks), nil
}

// shapeOfChunksResolved is the shape of a one-chunk array, taking unknown
// sizes from the computed chunk.
func shapeOfChunksResolved(chunks [][]int, blocks []*Dense) []int {
	s := shapeOfChunks(chunks)
	for a := range s {
		if s[a] == unknown && len(blocks) == 1 && a < len(blocks[0].shape) {
			s[a] = blocks[0].shape[a]
		}
	}
	return s
}

// resolveChunks returns the chunk sizes with the unknown ones taken from
// the computed blocks, and checks that the blocks fit them.
func resolveChunks(chunks [][]int, blocks []*Dense) ([][]int, error) {
	grid := gridShape(chunks)
	out := cloneChunks(chunks)
	for i, b := range blocks {
		idx := blockIndex(grid, i)
		if len(b.shape) != len(chunks) {
			return nil, fmt.Errorf("array: chunk %v has shape %v, want %d dimensions", idx, b.shape, len(chunks))
		}
		for a := range chunks {
			want := out[a][idx[a]]
			if want == unknown {
				out[a][idx[a]] = b.shape[a]
			} else if want != b.shape[a] {
				return nil, fmt.Errorf("array: chunk %v has shape %v, but the chunks along axis %d are %v", idx, b.shape, a, chunks[a])
			}
		}
	}
	return out, nil
}

// concatBlocks copies blocks (row-major in the grid of chunks) into one
// contiguous Dense.
func concatBlocks(dt DType, chunks [][]int, blocks []*Dense) *Dense {
	shape := shapeOfChunks(chunks)
	out := newDense(dt, shape)
	grid := gridShape(chunks)
	offs := make([][]int, len(chunks))
	for a := range chunks {
		offs[a] = offsets(chunks[a])
	}
	for i, b := range blocks {
		idx := blockIndex(grid, i)
		start := make([]int, len(idx))
		for a := range idx {
			start[a] = offs[a][idx[a]]
		}
		placeBlock(out, b, start)
	}
	return out
}

// placeBlock copies b into dst (contiguous) at start.
func placeBlock(dst, b *Dense, start []int) {
	src := b.contig()
	if src.Size() == 0 {
		return
	}
	ds := dst.strides
	off := 0
	for a := range start {
		off += start[a] * ds[a]
	}
	switch x := dst.data.(type) {
	case []float64:
		placeRows(x, src.data.([]float64), src.shape, ds, off)
	case []float32:
		placeRows(x, src.data.([]float32), src.shape, ds, off)
	case []int64:
		placeRows(x, src.data.([]int64), src.shape, ds, off)
	case []bool:
		placeRows(x, src.data.([]bool), src.shape, ds, off)
	}
}

// placeRows copies the contiguous src of shape into dst with strides ds
// starting at off, one row of the last axis at a time.
func placeRows[T any](dst, src []T, shape, ds []int, off int) {
	nd := len(shape)
	if nd == 0 {
		dst[off] = src[0]
		return
	}
	last := shape[nd-1]
	idx := make([]int, nd-1)
	for s := 0; s < len(src); s += last {
		copy(dst[off:off+last], src[s:s+last])
		for a := nd - 2; a >= 0; a-- {
			idx[a]++
			off += ds[a]
			if idx[a] < shape[a] {
				break
			}
			off -= ds[a] * shape[a]
			idx[a] = 0
		}
	}
}

// key returns the key of n's block idx.
func (n *node) key(idx ...int) graph.Key { return graph.NewKey(n.op.prefix(), n.token, idx...) }

// keysOf returns the keys of all of n's blocks, row-major.
func (n *node) keysOf() []graph.Key {
	grid := gridShape(n.chunks)
	keys := make([]graph.Key, numBlocks(n.chunks))
	for i := range keys {
		keys[i] = n.key(blockIndex(grid, i)...)
	}
	return keys
}
