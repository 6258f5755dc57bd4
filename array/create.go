package array

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"gonum.org/v1/gonum/mat"

	"github.com/shoal-data/shoal/graph"
)

// literalOp is an array given in memory when it was built; each chunk is
// a copy carried in its task's params.
type literalOp struct{ d *Dense }

func (o *literalOp) prefix() string { return "array" }

func (o *literalOp) lower(l *lowerer, n *node) ([]graph.Key, error) {
	grid := gridShape(n.chunks)
	offs := make([][]int, len(n.chunks))
	for a := range n.chunks {
		offs[a] = offsets(n.chunks[a])
	}
	keys := make([]graph.Key, numBlocks(n.chunks))
	var heldID uint64
	if l.inProcess {
		heldID = held.Hold(o.d, o.d)
		l.held = append(l.held, heldID)
	}
	for i := range keys {
		idx := blockIndex(grid, i)
		start, shape := make([]int, len(idx)), blockShape(n.chunks, idx)
		for a := range idx {
			start[a] = offs[a][idx[a]]
		}
		if l.inProcess {
			keys[i] = n.key(idx...)
			if err := l.add(keys[i], opHeldChunk, heldChunkParams{ID: heldID, Start: start, Shape: shape}, nil); err != nil {
				return nil, err
			}
			continue
		}
		b := subBlock(o.d, start, shape)
		enc, err := encodeDense(b)
		if err != nil {
			return nil, err
		}
		keys[i] = n.key(idx...)
		if err := l.add(keys[i], opChunk, enc, nil); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// subBlock returns a contiguous copy of the part of d starting at start
// with the given shape.
func subBlock(d *Dense, start, shape []int) *Dense {
	off := d.offset
	for a := range start {
		off += start[a] * d.strides[a]
	}
	v := &Dense{dtype: d.dtype, shape: slices.Clone(shape), strides: d.strides, offset: off, data: d.data}
	return v.Copy()
}

// FromSlice returns an array of the given shape holding a copy of data in
// row-major order. Options: Chunks, ChunkSizes, ChunkBytes (by default,
// chunks of up to 128 MiB). The chunks travel in the graph's params, as
// Dask's from_array does; for arrays bigger than memory use a generator,
// ReadNPY or FromFrame.
func FromSlice[T Elem](data []T, shape []int, opts ...Option) Array {
	d, err := NewDense(slices.Clone(data), shape...)
	if err != nil {
		return errorf("FromSlice: %v", unwrapArrayErr(err))
	}
	return fromDense("FromSlice", d, opts)
}

// FromDense returns an array holding a copy of d. Options as FromSlice.
func FromDense(d *Dense, opts ...Option) Array {
	if d == nil {
		return errorf("FromDense: nil *Dense")
	}
	return fromDense("FromDense", d.Copy(), opts)
}

// FromMat returns a 2-D float64 array holding a copy of m, a gonum
// matrix. Options as FromSlice.
func FromMat(m mat.Matrix, opts ...Option) Array {
	if m == nil {
		return errorf("FromMat: nil matrix")
	}
	return fromDense("FromMat", DenseFromMat(m), opts)
}

func fromDense(fn string, d *Dense, opts []Option) Array {
	c, err := configure(fn, opts, chunkOptions...)
	if err != nil {
		return errArray(wrapErr(err))
	}
	chunks, err := normalizeChunks(c.chunks, d.shape, d.dtype)
	if err != nil {
		return errorf("%s: %v", fn, err)
	}
	return newArray(&literalOp{d: d}, d.dtype, chunks, nil, graph.Tokenize(rawBytes(d)))
}

// rawBytes returns the elements of d as bytes, for tokens.
func rawBytes(d *Dense) []byte {
	switch x := d.flat().(type) {
	case []float64:
		return arrow.Float64Traits.CastToBytes(x)
	case []float32:
		return arrow.Float32Traits.CastToBytes(x)
	case []int64:
		return arrow.Int64Traits.CastToBytes(x)
	case []bool:
		b := make([]byte, len(x))
		for i, v := range x {
			if v {
				b[i] = 1
			}
		}
		return b
	}
	return nil
}

// createParams describe a generated chunk.
type createParams struct {
	Kind   string `json:"kind"` // full, arange, linspace, eye, uniform, normal, integers
	DType  DType  `json:"dtype"`
	Shape  []int  `json:"shape"`  // of the chunk
	Offset []int  `json:"offset"` // where the chunk starts in the array
	A      num    `json:"a,omitempty"`
	B      num    `json:"b,omitempty"`
	IA     int64  `json:"ia,omitempty"`
	IB     int64  `json:"ib,omitempty"`
	Seed   uint64 `json:"seed,omitempty"`
	Stream uint64 `json:"stream,omitempty"` // the chunk's number, row-major
	Last   int    `json:"last,omitempty"`   // linspace: index of the last element
}

type createOp struct{ p createParams }

func (o *createOp) prefix() string { return o.p.Kind }

func (o *createOp) lower(l *lowerer, n *node) ([]graph.Key, error) {
	grid := gridShape(n.chunks)
	keys := make([]graph.Key, numBlocks(n.chunks))
	for i := range keys {
		idx := blockIndex(grid, i)
		keys[i] = n.key(idx...)
		if err := l.add(keys[i], opCreate, o.blockParams(n, idx), nil); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// blockParams returns the params that generate n's block idx.
func (o *createOp) blockParams(n *node, idx []int) createParams {
	p := o.p
	p.DType = n.dtype
	p.Shape = blockShape(n.chunks, idx)
	p.Offset = make([]int, len(idx))
	for a := range idx {
		p.Offset[a] = offsets(n.chunks[a])[idx[a]]
	}
	p.Stream = uint64(blockNumber(gridShape(n.chunks), idx))
	return p
}

// streams reports whether the chunks can be made a run at a time by the
// task that uses them, rather than by a task of their own: all of them
// can.
func (o *createOp) streams() bool {
	switch o.p.Kind {
	case "uniform", "normal", "integers", "full", "arange", "linspace", "eye":
		return true
	}
	return false
}

func create(fn string, p createParams, shape []int, opts []Option, desc any) Array {
	c, err := configure(fn, opts, withChunkOptions("WithDType")...)
	if err != nil {
		return errArray(wrapErr(err))
	}
	dt := c.dtype
	if dt == 0 {
		dt = Float64
		if p.Kind == "integers" {
			dt = Int64
		}
	}
	chunks, err := normalizeChunks(c.chunks, shape, dt)
	if err != nil {
		return errorf("%s: %v", fn, err)
	}
	return newArray(&createOp{p: p}, dt, chunks, nil, desc)
}

// Zeros returns an array of zeros. Options: WithDType, Chunks,
// ChunkSizes, ChunkBytes.
func Zeros(shape []int, opts ...Option) Array { return full("Zeros", shape, 0, opts) }

// Ones returns an array of ones. Options as Zeros.
func Ones(shape []int, opts ...Option) Array { return full("Ones", shape, 1, opts) }

// Full returns an array whose every element is value (converted to the
// dtype). Options as Zeros.
func Full(shape []int, value float64, opts ...Option) Array { return full("Full", shape, value, opts) }

func full(fn string, shape []int, value float64, opts []Option) Array {
	p := createParams{Kind: "full", A: num(value)}
	return create(fn, p, shape, opts, p)
}

// Arange returns the values start, start+step, ... up to stop (excluded),
// as NumPy's arange. Options as Zeros.
func Arange(start, stop, step float64, opts ...Option) Array {
	if step == 0 || math.IsNaN(step) || math.IsInf(step, 0) || math.IsNaN(start) || math.IsNaN(stop) ||
		math.IsInf(start, 0) || math.IsInf(stop, 0) {
		return errorf("Arange(%g, %g, %g): start and stop must be finite and step finite and not zero", start, stop, step)
	}
	n := max(0, int(math.Ceil((stop-start)/step)))
	p := createParams{Kind: "arange", A: num(start), B: num(step)}
	return create("Arange", p, []int{n}, opts, p)
}

// Linspace returns num evenly spaced values from start to stop, both
// included, as NumPy's linspace. Options as Zeros.
func Linspace(start, stop float64, count int, opts ...Option) Array {
	if count < 0 {
		return errorf("Linspace(%g, %g, %d): the number of values must not be negative", start, stop, count)
	}
	step := 0.0
	if count > 1 {
		step = (stop - start) / float64(count-1)
	}
	p := createParams{Kind: "linspace", A: num(start), B: num(step), IA: int64(math.Float64bits(stop)), Last: count - 1}
	return create("Linspace", p, []int{count}, opts, p)
}

// Eye returns the n×n identity matrix. Options as Zeros.
func Eye(n int, opts ...Option) Array {
	p := createParams{Kind: "eye"}
	return create("Eye", p, []int{n, n}, opts, []any{p, n})
}

// Uniform returns an array of random numbers drawn uniformly from
// [low, high). Each chunk draws from its own PCG generator seeded with
// (seed, the chunk's row-major number), so the same seed, shape and
// chunks give the same numbers wherever the chunks are computed; other
// chunks give other numbers, as in Dask. Options: WithDType (Float64 or
// Float32), Chunks, ChunkSizes, ChunkBytes.
func Uniform(seed uint64, shape []int, low, high float64, opts ...Option) Array {
	if !(low <= high) || math.IsInf(high-low, 0) {
		return errorf("Uniform: low %g and high %g must be finite with low <= high", low, high)
	}
	p := createParams{Kind: "uniform", Seed: seed, A: num(low), B: num(high)}
	a := create("Uniform", p, shape, opts, p)
	return checkFloat("Uniform", a)
}

// Normal returns an array of random numbers from the normal distribution
// with the given mean and standard deviation, seeded as Uniform. Options
// as Uniform.
func Normal(seed uint64, shape []int, mean, std float64, opts ...Option) Array {
	if !(std >= 0) || math.IsInf(std, 0) || math.IsNaN(mean) || math.IsInf(mean, 0) {
		return errorf("Normal: mean %g must be finite and std %g finite and not negative", mean, std)
	}
	p := createParams{Kind: "normal", Seed: seed, A: num(mean), B: num(std)}
	a := create("Normal", p, shape, opts, p)
	return checkFloat("Normal", a)
}

// Integers returns an int64 array of random integers drawn uniformly from
// [low, high), seeded as Uniform. Options: Chunks, ChunkSizes, ChunkBytes.
func Integers(seed uint64, shape []int, low, high int64, opts ...Option) Array {
	if low >= high {
		return errorf("Integers: low %d must be less than high %d", low, high)
	}
	if high-low <= 0 {
		return errorf("Integers: the range [%d, %d) is too large", low, high)
	}
	p := createParams{Kind: "integers", Seed: seed, IA: low, IB: high}
	a := create("Integers", p, shape, opts, p)
	if a.Err() == nil && a.DType() != Int64 {
		return errorf("Integers: makes int64 arrays, not %s", a.DType())
	}
	return a
}

func checkFloat(fn string, a Array) Array {
	if a.Err() == nil && !a.DType().isFloat() {
		return errorf("%s: makes float64 or float32 arrays, not %s", fn, a.DType())
	}
	return a
}

func runCreate(ctx context.Context, in graph.OpInput) (any, error) {
	var p createParams
	if err := json.Unmarshal(in.Params, &p); err != nil {
		return nil, fmt.Errorf("decode create params: %w", err)
	}
	if !p.DType.valid() || len(p.Offset) != len(p.Shape) {
		return nil, fmt.Errorf("create %s: bad params", p.Kind)
	}
	if _, err := shapeSize(p.Shape); err != nil {
		return nil, err
	}
	g, err := newChunkGen(p)
	if err != nil {
		return nil, err
	}
	d := newDense(p.DType, p.Shape)
	g.fill(d.data, 0)
	return d, nil
}

// chunkGen makes the elements of a generated chunk, a run at a time, in
// row-major order: fill sets dst (a slice of the chunk's dtype) to the
// elements at positions pos, pos+1, ... of the chunk.
type chunkGen interface {
	fill(dst any, pos int)
}

func newChunkGen(p createParams) (chunkGen, error) {
	if !p.DType.valid() || len(p.Offset) != len(p.Shape) {
		return nil, fmt.Errorf("create %s: bad params", p.Kind)
	}
	switch p.Kind {
	case "uniform", "normal", "integers":
		return newRandomGen(p)
	case "full":
		f := newDense(Float64, []int{1})
		f.data.([]float64)[0] = float64(p.A)
		return &constGen{v: f.astype(p.DType).data}, nil
	case "arange", "linspace":
		if len(p.Shape) != 1 {
			return nil, fmt.Errorf("create %s: a chunk of shape %v is not 1-D", p.Kind, p.Shape)
		}
		return &rangeGen{p: p}, nil
	case "eye":
		if len(p.Shape) != 2 {
			return nil, fmt.Errorf("create eye: a chunk of shape %v is not 2-D", p.Shape)
		}
		one := newDense(Float64, []int{1})
		one.data.([]float64)[0] = 1
		return &eyeGen{p: p, one: one.astype(p.DType).data, zero: newDense(p.DType, []int{1}).data}, nil
	}
	return nil, fmt.Errorf("unknown generator %q", p.Kind)
}

// constGen fills with one value (v holds it, of the chunk's dtype).
type constGen struct{ v any }

func (g *constGen) fill(dst any, _ int) { fillWith(dst, g.v) }

// rangeGen makes the evenly spaced numbers of Arange and Linspace: element
// j of the array is A + j·B, and Linspace's last element is exactly its
// stop (held in IA as float64 bits).
type rangeGen struct {
	p   createParams
	buf []float64
}

func (g *rangeGen) fill(dst any, pos int) {
	n := sliceLen(dst)
	if cap(g.buf) < n {
		g.buf = make([]float64, n)
	}
	v := g.buf[:n]
	p := g.p
	for i := range v {
		j := p.Offset[0] + pos + i
		v[i] = float64(p.A) + float64(j)*float64(p.B)
		if p.Kind == "linspace" && j == p.Last && j > 0 {
			v[i] = math.Float64frombits(uint64(p.IA))
		}
	}
	copyInto(dst, 0, v)
}

// eyeGen makes a chunk of the identity matrix: one where the row and the
// column in the whole matrix are equal.
type eyeGen struct {
	p         createParams
	one, zero any // of the chunk's dtype
}

func (g *eyeGen) fill(dst any, pos int) {
	cols := g.p.Shape[1]
	n := sliceLen(dst)
	fillWith(dst, g.zero)
	for q := pos; q < pos+n; q++ {
		// The first element of row q/cols on the diagonal, if the run has it.
		r := q / cols
		c := g.p.Offset[0] + r - g.p.Offset[1]
		if c >= 0 && c < cols {
			if at := r*cols + c; at >= pos && at < pos+n {
				setFrom(dst, at-pos, g.one, 0)
			}
		}
		q = (r+1)*cols - 1 // on to the next row
	}
}

// fillWith sets every element of dst to the only element of v.
func fillWith(dst, v any) {
	switch d := dst.(type) {
	case []float64:
		x := v.([]float64)[0]
		for i := range d {
			d[i] = x
		}
	case []float32:
		x := v.([]float32)[0]
		for i := range d {
			d[i] = x
		}
	case []int64:
		x := v.([]int64)[0]
		for i := range d {
			d[i] = x
		}
	case []bool:
		x := v.([]bool)[0]
		for i := range d {
			d[i] = x
		}
	}
}

func setFrom(dst any, i int, src any, j int) {
	switch d := dst.(type) {
	case []float64:
		d[i] = src.([]float64)[j]
	case []float32:
		d[i] = src.([]float32)[j]
	case []int64:
		d[i] = src.([]int64)[j]
	case []bool:
		d[i] = src.([]bool)[j]
	}
}

func randomChunk(_ context.Context, p createParams) (*Dense, error) {
	g, err := newRandomGen(p)
	if err != nil {
		return nil, err
	}
	d := newDense(p.DType, p.Shape)
	g.fill(d.data, 0)
	return d, nil
}

// randomGen draws the numbers of one random chunk in row-major order, a
// run at a time, so that a task can use them without holding the chunk.
type randomGen struct {
	p    createParams
	src  *rand.PCG
	r    *rand.Rand
	next int // the position of the next number of the stream
}

func newRandomGen(p createParams) (*randomGen, error) {
	switch {
	case p.Kind == "uniform" && (p.DType == Float64 || p.DType == Float32),
		p.Kind == "normal" && (p.DType == Float64 || p.DType == Float32),
		p.Kind == "integers" && p.DType == Int64 && p.IB > p.IA:
	default:
		return nil, fmt.Errorf("create %s: no %s random numbers", p.Kind, p.DType)
	}
	g := &randomGen{p: p}
	g.restart()
	return g, nil
}

func (g *randomGen) restart() {
	g.src = rand.NewPCG(g.p.Seed, g.p.Stream)
	g.r = rand.New(g.src)
	g.next = 0
}

// fill sets dst (a slice of the chunk's dtype) to the numbers at
// positions pos, pos+1, ... of the chunk. Runs in order cost nothing
// extra; out of order, the stream is drawn again from its start.
func (g *randomGen) fill(dst any, pos int) {
	if pos != g.next {
		if pos < g.next {
			g.restart()
		}
		skip := makeSlice(g.p.DType, min(pos-g.next, 4096))
		for g.next < pos {
			g.fill(subslice(skip, 0, min(pos-g.next, sliceLen(skip))), g.next)
		}
	}
	p := g.p
	switch p.Kind {
	case "uniform":
		lo, span := float64(p.A), float64(p.B-p.A)
		switch v := dst.(type) {
		case []float32:
			for i := range v {
				// As rand.Float64, from the same stream.
				v[i] = float32(lo + span*(float64(g.src.Uint64()<<11>>11)/(1<<53)))
			}
		case []float64:
			if lo == 0 && span == 1 {
				for i := range v {
					v[i] = float64(g.src.Uint64()<<11>>11) / (1 << 53)
				}
			} else {
				for i := range v {
					v[i] = lo + span*(float64(g.src.Uint64()<<11>>11)/(1<<53))
				}
			}
		}
	case "normal":
		mean, std := float64(p.A), float64(p.B)
		switch v := dst.(type) {
		case []float32:
			for i := range v {
				v[i] = float32(mean + std*g.r.NormFloat64())
			}
		case []float64:
			for i := range v {
				v[i] = mean + std*g.r.NormFloat64()
			}
		}
	case "integers":
		v := dst.([]int64)
		span := uint64(p.IB - p.IA)
		for i := range v {
			v[i] = p.IA + int64(g.r.Uint64N(span))
		}
	}
	g.next += sliceLen(dst)
}
