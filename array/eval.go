package array

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/shoal-data/shoal/graph"
)

// mapParams are the params of an "array.map" task: a fused elementwise
// expression over the task's input chunks, and what to do with the result.
type mapParams struct {
	Inputs []inputSpec `json:"in"`
	Expr   []exprNode  `json:"expr"`
	Shape  []int       `json:"shape"` // of the result block; -1 where unknown
	DType  DType       `json:"dtype"`
	Sink   *sinkSpec   `json:"sink,omitempty"`
}

// inputSpec says which task input a leaf reads and how its axes map to
// the result's (for each result axis, the input's axis or -1).
type inputSpec struct {
	Dep  int           `json:"dep"`
	Axes []int         `json:"axes"`
	Gen  *createParams `json:"gen,omitempty"` // a generated chunk the task makes itself (Dep is -1)
	// Strict lists the result axes of unknown length along which the
	// input's chunk must have the result's length: a chunk of length 1
	// there is not broadcast (the input's axis is not of length 1).
	Strict []int `json:"strict,omitempty"`
}

// sinkSpec says what a map task does with the block it computed, instead
// of returning it: the partial step of a reduction, a cumulative sum
// within the block, a histogram, a boolean selection.
type sinkSpec struct {
	Reduce *reduceSpec `json:"reduce,omitempty"`
	Scan   *scanSpec   `json:"scan,omitempty"`
	Hist   *histSpec   `json:"hist,omitempty"`
	Pct    *pctSpec    `json:"pct,omitempty"`
}

const tileSize = 2048

func runMap(ctx context.Context, in graph.OpInput) (any, error) {
	var p mapParams
	if err := json.Unmarshal(in.Params, &p); err != nil {
		return nil, fmt.Errorf("decode map params: %w", err)
	}
	ev, err := newEvaluator(&p, in.Inputs)
	if err != nil {
		return nil, err
	}
	if p.Sink != nil {
		switch {
		case p.Sink.Reduce != nil:
			return reduceSink(ctx, ev, p.Sink.Reduce)
		case p.Sink.Scan != nil:
			b, err := ev.materialize(ctx)
			if err != nil {
				return nil, err
			}
			return scanBlock(b, p.Sink.Scan)
		case p.Sink.Hist != nil:
			b, err := ev.materialize(ctx)
			if err != nil {
				return nil, err
			}
			return histBlock(b, p.Sink.Hist)
		case p.Sink.Pct != nil:
			return pctSink(ctx, ev, p.Sink.Pct, in.Inputs)
		}
		return nil, fmt.Errorf("map task has an empty sink")
	}
	return ev.materialize(ctx)
}

// evaluator computes a fused expression over a block, a tile of
// tileSize elements at a time, so that intermediate values stay in cache.
type evaluator struct {
	expr   []exprNode
	codes  []opcode
	shape  []int
	size   int
	dtype  DType
	leaves []leafReader
	bufs   []any // per expression node: its values over the current tile
	idx    []int // output index of the tile's first element
	vals   []any // per expression node: its values over the current tile, as computed
	args   []any
}

type leafReader struct {
	data    any      // contiguous elements
	direct  bool     // laid out as the output: read data[p:p+n]
	strides []int    // per output axis; 0 where broadcast
	band    *band    // a transposed matrix, read through a band of rows
	gen     chunkGen // a generated chunk laid out as the output, made a tile at a time
}

// bandElems is about how many elements a band of a transposed input
// holds: small enough to stay in cache.
const bandElems = 64 << 10

// band holds rows r0..r0+n of the result's layout of a transposed matrix
// (2-D, strides 1 and ld).
type band struct {
	buf   any // rows×cols elements
	rows  int // the most rows it holds
	ld    int
	r0, n int
}

// tile returns the elements p..p+n of the result's layout, transposing
// the band of rows that holds them if it is not the current one.
func (b *band) tile(src any, shape []int, p, n int) any {
	cols := shape[1]
	r, last := p/cols, (p+n-1)/cols
	if b.r0 < 0 || r < b.r0 || last >= b.r0+b.n {
		b.r0, b.n = r, min(b.rows, shape[0]-r)
		switch d := b.buf.(type) {
		case []float64:
			transposeInto(d[:b.n*cols], src.([]float64), b.n, cols, b.ld, r)
		case []float32:
			transposeInto(d[:b.n*cols], src.([]float32), b.n, cols, b.ld, r)
		case []int64:
			transposeInto(d[:b.n*cols], src.([]int64), b.n, cols, b.ld, r)
		case []bool:
			transposeInto(d[:b.n*cols], src.([]bool), b.n, cols, b.ld, r)
		}
	}
	off := p - b.r0*cols
	return subslice(b.buf, off, off+n)
}

func newEvaluator(p *mapParams, inputs []any) (*evaluator, error) {
	if len(p.Expr) == 0 {
		return nil, fmt.Errorf("empty expression")
	}
	if !p.DType.valid() {
		return nil, fmt.Errorf("map: invalid result dtype %d", p.DType)
	}
	ev := &evaluator{expr: p.Expr, shape: slices.Clone(p.Shape), dtype: p.DType}
	blocks := make([]*Dense, len(p.Inputs))
	for j, s := range p.Inputs {
		if s.Gen != nil {
			if len(s.Gen.Shape) != len(s.Gen.Offset) {
				return nil, fmt.Errorf("leaf %d: bad generator params", j)
			}
			if _, err := shapeSize(s.Gen.Shape); err != nil {
				return nil, fmt.Errorf("leaf %d: %w", j, err)
			}
			// The shape for now; the numbers come below.
			blocks[j] = &Dense{dtype: s.Gen.DType, shape: slices.Clone(s.Gen.Shape)}
			if len(s.Axes) != len(p.Shape) {
				return nil, fmt.Errorf("leaf %d maps %d axes for a block of %d", j, len(s.Axes), len(p.Shape))
			}
			continue
		}
		if s.Dep < 0 || s.Dep >= len(inputs) {
			return nil, fmt.Errorf("leaf %d reads input %d of %d", j, s.Dep, len(inputs))
		}
		d, ok := inputs[s.Dep].(*Dense)
		if !ok {
			return nil, fmt.Errorf("input %d is a %T, not a *array.Dense", s.Dep, inputs[s.Dep])
		}
		if len(s.Axes) != len(p.Shape) {
			return nil, fmt.Errorf("leaf %d maps %d axes for a block of %d", j, len(s.Axes), len(p.Shape))
		}
		blocks[j] = d
	}
	// Unknown sizes of the result block come from the inputs.
	for o := range ev.shape {
		if ev.shape[o] != unknown {
			continue
		}
		ev.shape[o] = 1
		for j, s := range p.Inputs {
			if a := s.Axes[o]; a >= 0 && a < len(blocks[j].shape) && blocks[j].shape[a] != 1 {
				ev.shape[o] = blocks[j].shape[a]
			}
		}
	}
	ev.size = 1
	for _, s := range ev.shape {
		ev.size *= s
	}
	outStrides := rowMajorStrides(ev.shape)
	for j, s := range p.Inputs {
		d := blocks[j]
		if want := leafType(p.Expr, j); want != d.dtype {
			return nil, fmt.Errorf("input %d has dtype %s, want %s", s.Dep, d.dtype, want)
		}
		mapped := make([]bool, len(d.shape))
		st := make([]int, len(ev.shape))
		dst := rowMajorStrides(d.shape)
		for o, a := range s.Axes {
			if a < 0 {
				continue
			}
			if a >= len(d.shape) {
				return nil, fmt.Errorf("input %d of shape %v has no axis %d", s.Dep, d.shape, a)
			}
			mapped[a] = true
			switch d.shape[a] {
			case ev.shape[o]:
				st[o] = dst[a]
			case 1:
			default:
				if p.Shape[o] == unknown {
					return nil, fmt.Errorf("the operands' chunks along axis %d have lengths %d and %d: arrays whose chunks have unknown lengths (after Mask or Compress) combine only when those lengths agree; call ComputeChunkSizes on them and Rechunk one like the other",
						o, d.shape[a], ev.shape[o])
				}
				return nil, fmt.Errorf("input block of shape %v does not fit the result block of shape %v (axis %d: %d, want %d)",
					d.shape, ev.shape, a, d.shape[a], ev.shape[o])
			}
			if ev.shape[o] == 1 {
				st[o] = 0
			}
		}
		for a, ok := range mapped {
			if !ok && d.shape[a] != 1 {
				return nil, fmt.Errorf("input block of shape %v: axis %d of length %d has no place in the result block of shape %v",
					d.shape, a, d.shape[a], ev.shape)
			}
		}
		same := true
		for o := range st {
			if ev.shape[o] != 1 && st[o] != outStrides[o] {
				same = false
			}
		}
		if s.Gen != nil {
			g, err := newChunkGen(*s.Gen)
			if err != nil {
				return nil, err
			}
			if same && d.Size() == ev.size {
				// Made a tile at a time, in order: the chunk is never held.
				ev.leaves = append(ev.leaves, leafReader{gen: g, strides: st})
				continue
			}
			d = newDense(s.Gen.DType, s.Gen.Shape)
			g.fill(d.data, 0)
		}
		for _, o := range s.Strict {
			if o < 0 || o >= len(s.Axes) || s.Axes[o] < 0 {
				return nil, fmt.Errorf("leaf %d: bad strict axis %d", j, o)
			}
			if a := s.Axes[o]; d.shape[a] != ev.shape[o] {
				return nil, fmt.Errorf("the operands' chunks along axis %d have lengths %d and %d: arrays whose chunks have unknown lengths (after Mask or Compress) combine only when those lengths agree; call ComputeChunkSizes on them and Rechunk one like the other",
					o, d.shape[a], ev.shape[o])
			}
		}
		c := d.contig()
		lr := leafReader{data: c.data, strides: st}
		root := p.Expr[len(p.Expr)-1]
		switch {
		case same && c.Size() == ev.size:
			lr.direct = true
		case c.Size() == ev.size && ev.size > tileSize && len(ev.shape) == 2 && st[0] == 1 &&
			!(root.Op == "leaf" && root.Leaf == j):
			// A transposed matrix read by an expression: transpose a band
			// of rows at a time, in cache-friendly tiles, into a small
			// buffer that the tiles read, rather than copying the whole
			// block (a big buffer costs more in page faults than the copy).
			cols := ev.shape[1]
			rows := min(ev.shape[0], max((bandElems+cols-1)/cols, (tileSize+cols-1)/cols+1))
			lr.band = &band{buf: makeSlice(c.dtype, rows*cols), rows: rows, ld: st[1], r0: -1}
		case c.Size() == ev.size && ev.size > tileSize:
			// A permutation of the output: copy it into output order once
			// (in cache-friendly tiles) rather than gathering every tile.
			perm := &Dense{dtype: c.dtype, shape: ev.shape, strides: st, data: c.data}
			lr = leafReader{data: perm.contig().data, direct: true}
		}
		ev.leaves = append(ev.leaves, lr)
	}
	ev.codes = make([]opcode, len(p.Expr))
	ev.bufs = make([]any, len(p.Expr))
	n := min(tileSize, max(ev.size, 1))
	for i, e := range p.Expr {
		if !e.T.valid() {
			return nil, fmt.Errorf("expression node %d (%s) has invalid dtype %d", i, e.Op, e.T)
		}
		code, ok := opcodes[e.Op]
		if !ok {
			return nil, fmt.Errorf("unknown elementwise op %q", e.Op)
		}
		ev.codes[i] = code
		if err := checkArity(e, i); err != nil {
			return nil, err
		}
		switch code {
		case opLeaf:
			if e.Leaf < 0 || e.Leaf >= len(ev.leaves) {
				return nil, fmt.Errorf("expression reads leaf %d of %d", e.Leaf, len(ev.leaves))
			}
			if !ev.leaves[e.Leaf].direct {
				ev.bufs[i] = makeSlice(e.T, n)
			}
		case opConst:
			ev.bufs[i] = constTile(e, n)
		default:
			ev.bufs[i] = makeSlice(e.T, n)
		}
	}
	ev.idx = make([]int, len(ev.shape))
	return ev, nil
}

func leafType(expr []exprNode, j int) DType {
	for _, e := range expr {
		if e.Op == "leaf" && e.Leaf == j {
			return e.T
		}
	}
	return 0
}

func constTile(e exprNode, n int) any {
	switch e.T {
	case Float64:
		s := make([]float64, n)
		for i := range s {
			s[i] = float64(e.F)
		}
		return s
	case Float32:
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(e.F)
		}
		return s
	case Int64:
		s := make([]int64, n)
		for i := range s {
			s[i] = e.I
		}
		return s
	default:
		s := make([]bool, n)
		for i := range s {
			s[i] = e.B
		}
		return s
	}
}

// materialize computes the whole block.
func (ev *evaluator) materialize(ctx context.Context) (*Dense, error) {
	root := len(ev.expr) - 1
	if ev.codes[root] == opLeaf && ev.leaves[ev.expr[root].Leaf].direct {
		// The block is an input as it is (after a permutation).
		lr := ev.leaves[ev.expr[root].Leaf]
		d := &Dense{dtype: ev.expr[root].T, shape: slices.Clone(ev.shape), strides: rowMajorStrides(ev.shape), data: lr.data}
		return d.astype(ev.dtype), nil
	}
	out := newDense(ev.dtype, ev.shape)
	err := ev.each(ctx, func(p int, v any) error {
		copyInto(out.data, p, v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// copyInto copies the tile v to dst at p, converting to dst's type.
func copyInto(dst any, p int, v any) {
	switch d := dst.(type) {
	case []float64:
		n := sliceLen(v)
		convertInto(d[p:p+n], v)
	case []float32:
		n := sliceLen(v)
		convertInto(d[p:p+n], v)
	case []int64:
		n := sliceLen(v)
		convertInto(d[p:p+n], v)
	case []bool:
		n := sliceLen(v)
		convertInto(d[p:p+n], v)
	}
}

// each computes the block a tile at a time and calls f with the position
// of the tile's first element and the values of the tile.
func (ev *evaluator) each(ctx context.Context, f func(p int, v any) error) error {
	root := len(ev.expr) - 1
	if ev.codes[root] == opLeaf && ev.leaves[ev.expr[root].Leaf].direct {
		// Nothing to compute: the whole block in one go.
		return f(0, subslice(ev.leaves[ev.expr[root].Leaf].data, 0, ev.size))
	}
	for p := 0; p < ev.size; p += tileSize {
		if p%(64*tileSize) == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		n := min(tileSize, ev.size-p)
		v, err := ev.tile(p, n)
		if err != nil {
			return err
		}
		if err := f(p, v); err != nil {
			return err
		}
	}
	return nil
}

// tile computes the expression over the elements p..p+n of the block.
func (ev *evaluator) tile(p, n int) (any, error) {
	if ev.vals == nil {
		ev.vals = make([]any, len(ev.expr))
		ev.args = make([]any, 3)
	}
	vals := ev.vals
	gathered := false
	for i, e := range ev.expr {
		switch ev.codes[i] {
		case opLeaf:
			lr := ev.leaves[e.Leaf]
			if lr.direct {
				vals[i] = subslice(lr.data, p, p+n)
				continue
			}
			if lr.band != nil {
				vals[i] = lr.band.tile(lr.data, ev.shape, p, n)
				continue
			}
			if lr.gen != nil {
				vals[i] = subslice(ev.bufs[i], 0, n)
				lr.gen.fill(vals[i], p)
				continue
			}
			if !gathered {
				ev.setIndex(p)
				gathered = true
			}
			vals[i] = subslice(ev.bufs[i], 0, n)
			gatherTile(vals[i], lr.data, ev.shape, lr.strides, ev.idx)
		case opConst:
			vals[i] = subslice(ev.bufs[i], 0, n)
		default:
			out := subslice(ev.bufs[i], 0, n)
			args := ev.args[:len(e.Args)]
			for k, a := range e.Args {
				args[k] = vals[a]
			}
			if err := apply(ev.codes[i], e, args, out); err != nil {
				return nil, err
			}
			vals[i] = out
		}
	}
	return vals[len(vals)-1], nil
}

// setIndex sets ev.idx to the output index of flat position p.
func (ev *evaluator) setIndex(p int) {
	for a := len(ev.shape) - 1; a >= 0; a-- {
		s := ev.shape[a]
		ev.idx[a] = p % s
		p /= s
	}
}

func subslice(v any, i, j int) any {
	switch x := v.(type) {
	case []float64:
		return x[i:j]
	case []float32:
		return x[i:j]
	case []int64:
		return x[i:j]
	case []bool:
		return x[i:j]
	}
	return nil
}

// gatherTile fills dst with the elements of src at the output positions
// starting at index start, src's strides per output axis being strides.
func gatherTile(dst, src any, shape, strides, start []int) {
	switch d := dst.(type) {
	case []float64:
		gather(d, src.([]float64), shape, strides, start)
	case []float32:
		gather(d, src.([]float32), shape, strides, start)
	case []int64:
		gather(d, src.([]int64), shape, strides, start)
	case []bool:
		gather(d, src.([]bool), shape, strides, start)
	}
}

func gather[T any](dst, src []T, shape, strides, start []int) {
	nd := len(shape)
	if nd == 0 {
		for i := range dst {
			dst[i] = src[0]
		}
		return
	}
	idx := slices.Clone(start)
	off := 0
	for a := range idx {
		off += idx[a] * strides[a]
	}
	last, ls := shape[nd-1], strides[nd-1]
	for w := 0; w < len(dst); {
		run := min(last-idx[nd-1], len(dst)-w)
		if ls == 0 {
			v := src[off]
			for k := range run {
				dst[w+k] = v
			}
		} else {
			q := off
			for k := range run {
				dst[w+k] = src[q]
				q += ls
			}
		}
		w += run
		off += run * ls
		idx[nd-1] += run
		if idx[nd-1] < last {
			continue
		}
		off -= last * ls
		idx[nd-1] = 0
		for a := nd - 2; a >= 0; a-- {
			idx[a]++
			off += strides[a]
			if idx[a] < shape[a] {
				break
			}
			off -= strides[a] * shape[a]
			idx[a] = 0
		}
	}
}

type opcode uint8

const (
	opLeaf opcode = iota
	opConst
	opCast
	opAdd
	opSub
	opMul
	opDiv
	opFloorDiv
	opMod
	opPow
	opMaximum
	opMinimum
	opEq
	opNe
	opLt
	opLe
	opGt
	opGe
	opAnd
	opOr
	opXor
	opNot
	opNeg
	opAbs
	opSqrt
	opExp
	opLog
	opLog1p
	opSin
	opCos
	opTanh
	opFloor
	opCeil
	opRound
	opIsNaN
	opIsInf
	opIsFinite
	opNanToNum
	opWhere
)

var opcodes = map[string]opcode{
	"leaf": opLeaf, "const": opConst, "cast": opCast,
	"add": opAdd, "sub": opSub, "mul": opMul, "div": opDiv, "floordiv": opFloorDiv, "mod": opMod, "pow": opPow,
	"maximum": opMaximum, "minimum": opMinimum,
	"eq": opEq, "ne": opNe, "lt": opLt, "le": opLe, "gt": opGt, "ge": opGe,
	"and": opAnd, "or": opOr, "xor": opXor, "not": opNot,
	"neg": opNeg, "abs": opAbs, "sqrt": opSqrt, "exp": opExp, "log": opLog, "log1p": opLog1p,
	"sin": opSin, "cos": opCos, "tanh": opTanh, "floor": opFloor, "ceil": opCeil, "round": opRound,
	"isnan": opIsNaN, "isinf": opIsInf, "isfinite": opIsFinite, "nantonum": opNanToNum, "where": opWhere,
}

func checkArity(e exprNode, i int) error {
	want := 1
	switch opcodes[e.Op] {
	case opLeaf, opConst:
		want = 0
	case opAdd, opSub, opMul, opDiv, opFloorDiv, opMod, opPow, opMaximum, opMinimum,
		opEq, opNe, opLt, opLe, opGt, opGe, opAnd, opOr, opXor:
		want = 2
	case opWhere:
		want = 3
	}
	if len(e.Args) != want {
		return fmt.Errorf("expression node %d (%s) has %d arguments, want %d", i, e.Op, len(e.Args), want)
	}
	for _, a := range e.Args {
		if a < 0 || a >= i {
			return fmt.Errorf("expression node %d (%s) reads node %d", i, e.Op, a)
		}
	}
	if (e.Op == "round" && len(e.P) != 1) || (e.Op == "nantonum" && len(e.P) != 3) {
		return fmt.Errorf("expression node %d (%s) has %d parameters", i, e.Op, len(e.P))
	}
	return nil
}

// apply computes one expression node over a tile.
func apply(code opcode, e exprNode, args []any, out any) error {
	switch code {
	case opCast:
		copyInto(out, 0, args[0])
		return nil
	case opWhere:
		c, ok := args[0].([]bool)
		if !ok {
			return fmt.Errorf("where: condition is %T", args[0])
		}
		switch o := out.(type) {
		case []float64:
			where(c, args[1].([]float64), args[2].([]float64), o)
		case []float32:
			where(c, args[1].([]float32), args[2].([]float32), o)
		case []int64:
			where(c, args[1].([]int64), args[2].([]int64), o)
		case []bool:
			where(c, args[1].([]bool), args[2].([]bool), o)
		}
		return nil
	case opEq, opNe, opLt, opLe, opGt, opGe:
		o := out.([]bool)
		switch a := args[0].(type) {
		case []float64:
			compareTile(code, a, args[1].([]float64), o)
		case []float32:
			compareTile(code, a, args[1].([]float32), o)
		case []int64:
			compareTile(code, a, args[1].([]int64), o)
		case []bool:
			b := args[1].([]bool)
			for i := range o {
				o[i] = (a[i] == b[i]) == (code == opEq)
			}
		}
		return nil
	case opAnd, opOr, opXor, opNot:
		o := out.([]bool)
		a := args[0].([]bool)
		switch code {
		case opNot:
			for i := range o {
				o[i] = !a[i]
			}
		case opAnd:
			b := args[1].([]bool)
			for i := range o {
				o[i] = a[i] && b[i]
			}
		case opOr:
			b := args[1].([]bool)
			for i := range o {
				o[i] = a[i] || b[i]
			}
		case opXor:
			b := args[1].([]bool)
			for i := range o {
				o[i] = a[i] != b[i]
			}
		}
		return nil
	case opIsNaN, opIsInf, opIsFinite:
		o := out.([]bool)
		switch a := args[0].(type) {
		case []float64:
			classify(code, a, o)
		case []float32:
			classify(code, a, o)
		default:
			for i := range o {
				o[i] = code == opIsFinite
			}
		}
		return nil
	}
	switch o := out.(type) {
	case []float64:
		return applyFloat(code, e, args, o)
	case []float32:
		return applyFloat(code, e, args, o)
	case []int64:
		return applyInt(code, e, args, o)
	}
	return fmt.Errorf("%s on %T", e.Op, out)
}

func where[T any](c []bool, x, y, o []T) {
	for i := range o {
		if c[i] {
			o[i] = x[i]
		} else {
			o[i] = y[i]
		}
	}
}

func compareTile[T float64 | float32 | int64](code opcode, a, b []T, o []bool) {
	switch code {
	case opEq:
		for i := range o {
			o[i] = a[i] == b[i]
		}
	case opNe:
		for i := range o {
			o[i] = a[i] != b[i]
		}
	case opLt:
		for i := range o {
			o[i] = a[i] < b[i]
		}
	case opLe:
		for i := range o {
			o[i] = a[i] <= b[i]
		}
	case opGt:
		for i := range o {
			o[i] = a[i] > b[i]
		}
	case opGe:
		for i := range o {
			o[i] = a[i] >= b[i]
		}
	}
}

func classify[T float64 | float32](code opcode, a []T, o []bool) {
	for i, v := range a {
		f := float64(v)
		switch code {
		case opIsNaN:
			o[i] = f != f
		case opIsInf:
			o[i] = math.IsInf(f, 0)
		default:
			o[i] = !math.IsInf(f, 0) && f == f
		}
	}
}

func applyFloat[T float64 | float32](code opcode, e exprNode, args []any, o []T) error {
	a := args[0].([]T)
	var b []T
	if len(args) > 1 {
		b = args[1].([]T)
	}
	switch code {
	case opAdd:
		for i := range o {
			o[i] = a[i] + b[i]
		}
	case opSub:
		for i := range o {
			o[i] = a[i] - b[i]
		}
	case opMul:
		for i := range o {
			o[i] = a[i] * b[i]
		}
	case opDiv:
		for i := range o {
			o[i] = a[i] / b[i]
		}
	case opFloorDiv:
		for i := range o {
			o[i] = T(math.Floor(float64(a[i]) / float64(b[i])))
		}
	case opMod:
		for i := range o {
			o[i] = T(pyMod(float64(a[i]), float64(b[i])))
		}
	case opPow:
		for i := range o {
			o[i] = T(math.Pow(float64(a[i]), float64(b[i])))
		}
	case opMaximum:
		for i := range o {
			o[i] = max(a[i], b[i])
		}
	case opMinimum:
		for i := range o {
			o[i] = min(a[i], b[i])
		}
	case opNeg:
		for i := range o {
			o[i] = -a[i]
		}
	case opAbs:
		for i := range o {
			o[i] = T(math.Abs(float64(a[i])))
		}
	case opSqrt:
		mapFloat(a, o, math.Sqrt)
	case opExp:
		mapFloat(a, o, math.Exp)
	case opLog:
		mapFloat(a, o, math.Log)
	case opLog1p:
		mapFloat(a, o, math.Log1p)
	case opSin:
		mapFloat(a, o, math.Sin)
	case opCos:
		mapFloat(a, o, math.Cos)
	case opTanh:
		mapFloat(a, o, math.Tanh)
	case opFloor:
		mapFloat(a, o, math.Floor)
	case opCeil:
		mapFloat(a, o, math.Ceil)
	case opRound:
		d := int(e.P[0])
		if d == 0 {
			mapFloat(a, o, math.RoundToEven)
		} else {
			s := math.Pow(10, float64(d))
			mapFloat(a, o, func(x float64) float64 { return math.RoundToEven(x*s) / s })
		}
	case opNanToNum:
		nan, pos, neg := T(e.P[0]), T(e.P[1]), T(e.P[2])
		for i, v := range a {
			switch f := float64(v); {
			case f != f:
				o[i] = nan
			case math.IsInf(f, 1):
				o[i] = pos
			case math.IsInf(f, -1):
				o[i] = neg
			default:
				o[i] = v
			}
		}
	default:
		return fmt.Errorf("%s is not defined for %s", e.Op, e.T)
	}
	return nil
}

func mapFloat[T float64 | float32](a, o []T, f func(float64) float64) {
	for i, v := range a {
		o[i] = T(f(float64(v)))
	}
}

// pyMod is the remainder with the sign of the divisor.
func pyMod(a, b float64) float64 {
	r := math.Mod(a, b)
	if r != 0 && (r < 0) != (b < 0) {
		r += b
	}
	return r
}

func applyInt(code opcode, e exprNode, args []any, o []int64) error {
	a := args[0].([]int64)
	var b []int64
	if len(args) > 1 {
		b = args[1].([]int64)
	}
	switch code {
	case opAdd:
		for i := range o {
			o[i] = a[i] + b[i]
		}
	case opSub:
		for i := range o {
			o[i] = a[i] - b[i]
		}
	case opMul:
		for i := range o {
			o[i] = a[i] * b[i]
		}
	case opFloorDiv:
		for i := range o {
			o[i] = floorDiv(a[i], b[i])
		}
	case opMod:
		for i := range o {
			if b[i] == 0 {
				o[i] = 0
				continue
			}
			r := a[i] % b[i]
			if r != 0 && (r < 0) != (b[i] < 0) {
				r += b[i]
			}
			o[i] = r
		}
	case opPow:
		for i := range o {
			if b[i] < 0 {
				return fmt.Errorf("integers to negative integer powers are not allowed (%d ** %d); use floats", a[i], b[i])
			}
			o[i] = ipow(a[i], b[i])
		}
	case opMaximum:
		for i := range o {
			o[i] = max(a[i], b[i])
		}
	case opMinimum:
		for i := range o {
			o[i] = min(a[i], b[i])
		}
	case opNeg:
		for i := range o {
			o[i] = -a[i]
		}
	case opAbs:
		for i := range o {
			if a[i] < 0 {
				o[i] = -a[i]
			} else {
				o[i] = a[i]
			}
		}
	case opFloor, opCeil, opNanToNum:
		copy(o, a)
	case opRound:
		d := int(e.P[0])
		if d >= 0 {
			copy(o, a)
			break
		}
		s := int64(1)
		for range -d {
			s *= 10
		}
		for i, v := range a {
			o[i] = int64(math.RoundToEven(float64(v)/float64(s))) * s
		}
	default:
		return fmt.Errorf("%s is not defined for %s", e.Op, e.T)
	}
	return nil
}

func floorDiv(a, b int64) int64 {
	if b == 0 {
		return 0
	}
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func ipow(a, b int64) int64 {
	r := int64(1)
	for b > 0 {
		if b&1 == 1 {
			r *= a
		}
		a *= a
		b >>= 1
	}
	return r
}
