package expr

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// chunkRows is the number of rows evaluated at a time when an expression
// over a large record gives fixed-width values: intermediate results of
// that size stay in the processor's cache and their memory is reused from
// one chunk to the next, instead of allocating (and faulting in) whole
// columns for every step.
const chunkRows = 1 << 14

// testNoChunks, set by tests, turns chunked evaluation off.
var testNoChunks bool

// chunkable reports whether e is evaluated chunk by chunk over the rows of
// the record.
func (ev *Evaluator) chunkable(e Expr, t arrow.DataType) bool {
	if ev.parent != nil || ev.rec.NumRows() < 2*chunkRows || testNoChunks {
		return false
	}
	// One operation on columns gains nothing from chunks: there are no
	// intermediate results.
	ops := 0
	var count func(n *node)
	count = func(n *node) {
		switch n.op {
		case opCol, opLit, opAlias:
		default:
			ops++
		}
		for _, a := range n.args {
			count(a.n)
		}
	}
	if count(e.n); ops < 2 {
		return false
	}
	if _, ok := t.(arrow.FixedWidthDataType); !ok || t.ID() == arrow.DICTIONARY {
		return false
	}
	// Functions of dictionary columns work on the dictionary; per chunk
	// they would redo that work.
	cols := e.Columns()
	if len(cols) == 0 {
		return false
	}
	for _, c := range cols {
		idx := ev.rec.Schema().FieldIndices(c)
		if len(idx) == 0 || ev.rec.Schema().Field(idx[0]).Type.ID() == arrow.DICTIONARY {
			return false
		}
	}
	return true
}

// evalChunked evaluates n over chunks of rows and assembles the result.
func (ev *Evaluator) evalChunked(ctx context.Context, n *node, t arrow.DataType) (arrow.Array, error) {
	rows := int(ev.rec.NumRows())
	p := &pool{parent: ev.mem, free: make(map[int][][]byte)}
	defer p.flush()
	isBool := t.ID() == arrow.BOOL
	width := 0
	var valBuf *memory.Buffer
	var vals []byte
	if isBool {
		valBuf, vals = allocBitmap(ev.mem, rows)
	} else {
		width = t.(arrow.FixedWidthDataType).BitWidth() / 8
		valBuf = memory.NewResizableBuffer(ev.mem)
		valBuf.Resize(rows * width)
		vals = valBuf.Bytes()
	}
	var validBuf *memory.Buffer
	var valid []byte
	fail := func(err error) (arrow.Array, error) {
		valBuf.Release()
		if validBuf != nil {
			validBuf.Release()
		}
		return nil, err
	}
	for lo := 0; lo < rows; lo += chunkRows {
		hi := min(lo+chunkRows, rows)
		sub := ev.rec.NewSlice(int64(lo), int64(hi))
		sev := &Evaluator{rec: sub, mem: p, tc: ev.tc, cache: make(map[string]datum), lits: ev.lits, parent: ev, lo: lo}
		d, err := sev.eval(ctx, n)
		var arr arrow.Array
		if err == nil {
			arr, err = d.toArray(ctx, p, t, hi-lo)
			d.release()
		}
		sev.releaseCache()
		sub.Release()
		if err != nil {
			return fail(err)
		}
		k := hi - lo
		data := arr.Data()
		off := data.Offset()
		if isBool {
			bitutil.CopyBitmap(data.Buffers()[1].Bytes(), off, k, vals, lo)
		} else {
			copy(vals[lo*width:hi*width], data.Buffers()[1].Bytes()[off*width:(off+k)*width])
		}
		if bm, boff := validity(arr); bm != nil {
			if validBuf == nil {
				validBuf, valid = allocBitmap(ev.mem, rows)
				bitutil.SetBitsTo(valid, 0, int64(lo), true)
			}
			bitutil.CopyBitmap(bm, boff, k, valid, lo)
		} else if validBuf != nil {
			bitutil.SetBitsTo(valid, int64(lo), int64(k), true)
		}
		arr.Release()
	}
	nulls := 0
	if validBuf != nil {
		nulls = rows - bitutil.CountSetBits(valid, 0, rows)
	}
	return newArray(t, rows, validBuf, valBuf, nulls), nil
}

// fromParent looks for a result the Evaluator a chunk comes from has
// computed already, and slices it.
func (ev *Evaluator) fromParent(text string) (datum, bool) {
	if ev.parent == nil {
		return datum{}, false
	}
	d, ok := ev.parent.cache[text]
	if !ok {
		return datum{}, false
	}
	if d.bcast {
		return d.retain(), true
	}
	return datum{arr: array.NewSlice(d.arr, int64(ev.lo), int64(ev.lo)+ev.rec.NumRows())}, true
}

// pool is an allocator that keeps freed buffers for reuse until flushed;
// chunks of the same size reuse each other's memory.
type pool struct {
	parent  memory.Allocator
	free    map[int][][]byte
	flushed bool
}

func (p *pool) Allocate(size int) []byte {
	if l := p.free[size]; len(l) > 0 {
		b := l[len(l)-1]
		p.free[size] = l[:len(l)-1]
		clear(b)
		return b
	}
	return p.parent.Allocate(size)
}

func (p *pool) Reallocate(size int, b []byte) []byte {
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

func (p *pool) Free(b []byte) {
	if p.flushed || cap(b) == 0 {
		p.parent.Free(b)
		return
	}
	p.free[len(b)] = append(p.free[len(b)], b)
}

// flush returns the kept buffers to the parent allocator; buffers freed
// later go straight to it.
func (p *pool) flush() {
	for _, l := range p.free {
		for _, b := range l {
			p.parent.Free(b)
		}
	}
	clear(p.free)
	p.flushed = true
}
