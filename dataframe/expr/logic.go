package expr

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// validBits gives the validity of a datum as an aligned bitmap of n bits, or
// nil when every row is valid.
func validBits(d datum, n int) []byte {
	if d.bcast {
		if d.isNull() {
			return make([]byte, bitutil.BytesForBits(int64(n)))
		}
		return nil
	}
	bm, off := validity(d.arr)
	if bm == nil {
		return nil
	}
	return alignedBits(bm, off, n)
}

// logic computes And, Or (three-valued) and Xor.
func (ev *Evaluator) logic(op string, a, b datum) (datum, error) {
	n := ev.length(a, b)
	x, y := boolBits(a, n), boolBits(b, n)
	vx, vy := validBits(a, n), validBits(b, n)
	buf, out := allocBitmap(ev.mem, n)
	switch op {
	case opAnd:
		for i := range out {
			out[i] = x[i] & y[i]
		}
	case opOr:
		for i := range out {
			out[i] = x[i] | y[i]
		}
	case opXor:
		for i := range out {
			out[i] = x[i] ^ y[i]
		}
	}
	var valid *memory.Buffer
	nulls := 0
	if vx != nil || vy != nil {
		var vb []byte
		valid, vb = allocBitmap(ev.mem, n)
		const ones = 0xff
		for i := range vb {
			p, q := byte(ones), byte(ones)
			if vx != nil {
				p = vx[i]
			}
			if vy != nil {
				q = vy[i]
			}
			switch op {
			case opAnd: // known false on either side decides
				vb[i] = p&q | p&^x[i] | q&^y[i]
			case opOr: // known true on either side decides
				vb[i] = p&q | p&x[i] | q&y[i]
			default:
				vb[i] = p & q
			}
		}
		nulls = n - bitutil.CountSetBits(vb, 0, n)
		if nulls == 0 {
			valid.Release()
			valid = nil
		}
	}
	return datum{arr: newArray(boolType, n, valid, buf, nulls), bcast: allBcast(a, b)}, nil
}

func (ev *Evaluator) not(a datum) (datum, error) {
	if a.isNull() {
		return nullDatum(ev.mem, boolType), nil
	}
	n := a.arr.Len()
	x := boolBits(a, n)
	buf, out := allocBitmap(ev.mem, n)
	for i := range out {
		out[i] = ^x[i]
	}
	valid, nulls := copyValidity(ev.mem, a.arr)
	return datum{arr: newArray(boolType, n, valid, buf, nulls), bcast: a.bcast}, nil
}

// isNull computes IsNull (want true) and IsNotNull.
func (ev *Evaluator) isNull(a datum, want bool) (datum, error) {
	n := a.arr.Len()
	buf, out := allocBitmap(ev.mem, n)
	vb := validBits(a, n)
	if da, ok := a.arr.(*array.Dictionary); ok && !a.bcast && da.Dictionary().NullN() > 0 {
		// A row pointing at a null dictionary value is null.
		valid, _ := ev.dictValidity(da, dictIndices(da))
		vb = valid.Bytes()
		defer valid.Release()
	}
	for i := range out {
		v := byte(0xff)
		if vb != nil {
			v = vb[i]
		}
		if want {
			out[i] = ^v
		} else {
			out[i] = v
		}
	}
	return datum{arr: newArray(boolType, n, nil, buf, 0), bcast: a.bcast}, nil
}

func (ev *Evaluator) isNaN(a datum) (datum, error) {
	if a.isNull() {
		return nullDatum(ev.mem, boolType), nil
	}
	n := a.arr.Len()
	buf, out := allocBitmap(ev.mem, n)
	switch a.typ().ID() {
	case arrow.FLOAT64:
		for i, v := range values[float64](a.arr) {
			if math.IsNaN(v) {
				out[i>>3] |= 1 << (i & 7)
			}
		}
	case arrow.FLOAT32:
		for i, v := range values[float32](a.arr) {
			if v != v {
				out[i>>3] |= 1 << (i & 7)
			}
		}
	}
	valid, nulls := copyValidity(ev.mem, a.arr)
	return datum{arr: newArray(boolType, n, valid, buf, nulls), bcast: a.bcast}, nil
}

// maskOf gives the rows where a boolean datum is true (and not null), as an
// aligned bitmap of n bits.
func maskOf(d datum, n int) []byte {
	out := make([]byte, bitutil.BytesForBits(int64(n)))
	if d.bcast {
		if !d.isNull() && d.arr.(*array.Boolean).Value(0) {
			for i := range out {
				out[i] = 0xff
			}
		}
		return out
	}
	x := boolBits(d, n)
	v := validBits(d, n)
	for i := range out {
		if v != nil {
			out[i] = x[i] & v[i]
		} else {
			out[i] = x[i]
		}
	}
	return out
}
