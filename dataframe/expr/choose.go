package expr

import (
	"context"
	"fmt"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func (ev *Evaluator) fillNull(ctx context.Context, a, v datum, t arrow.DataType) (datum, error) {
	if a.isNull() {
		return ev.castTo(ctx, v, t)
	}
	x, err := ev.castTo(ctx, a, t)
	if err != nil {
		return datum{}, err
	}
	defer x.release()
	if x.arr.NullN() == 0 || v.isNull() {
		return x.retain(), nil
	}
	y, err := ev.castTo(ctx, v, t)
	if err != nil {
		return datum{}, err
	}
	defer y.release()
	n := ev.length(x, y)
	mask := validBits(x, n)
	return ev.choose(mask, x, y, t, n, allBcast(x, y))
}

// when evaluates condition, value pairs followed by the otherwise value.
func (ev *Evaluator) when(ctx context.Context, args []datum, t arrow.DataType) (datum, error) {
	n := ev.length(args...)
	res, err := ev.castTo(ctx, args[len(args)-1], t)
	if err != nil {
		return datum{}, err
	}
	for k := len(args) - 3; k >= 0; k -= 2 {
		cond := args[k]
		if cond.bcast {
			if maskOf(cond, 1)[0]&1 == 0 {
				continue
			}
			res.release()
			if res, err = ev.castTo(ctx, args[k+1], t); err != nil {
				return datum{}, err
			}
			continue
		}
		val, err := ev.castTo(ctx, args[k+1], t)
		if err != nil {
			res.release()
			return datum{}, err
		}
		next, err := ev.choose(maskOf(cond, n), val, res, t, n, false)
		val.release()
		res.release()
		if err != nil {
			return datum{}, err
		}
		res = next
	}
	return res, nil
}

// choose takes rows from a where mask is set, else from b; both have type t
// (or are broadcast nulls). bc says the result is a broadcast value.
func (ev *Evaluator) choose(mask []byte, a, b datum, t arrow.DataType, n int, bc bool) (datum, error) {
	if bc {
		n = 1
	}
	va, vb := validBits(a, n), validBits(b, n)
	var valid *memory.Buffer
	nulls := 0
	if va != nil || vb != nil {
		var bm []byte
		valid, bm = allocBitmap(ev.mem, n)
		for i := range bm {
			p, q := byte(0xff), byte(0xff)
			if va != nil {
				p = va[i]
			}
			if vb != nil {
				q = vb[i]
			}
			bm[i] = mask[i]&p | ^mask[i]&q
		}
		nulls = n - bitutil.CountSetBits(bm, 0, n)
	}
	// Values under a broadcast null are never read; give them a zero array.
	var out arrow.Array
	switch t.ID() {
	case arrow.BOOL:
		x, y := boolBits(a, n), boolBits(b, n)
		buf, bm := allocBitmap(ev.mem, n)
		for i := range bm {
			bm[i] = mask[i]&x[i] | ^mask[i]&y[i]
		}
		out = newArray(t, n, valid, buf, nulls)
	case arrow.INT8, arrow.UINT8:
		out = chooseFixed[uint8](ev.mem, mask, a, b, t, n, valid, nulls)
	case arrow.INT16, arrow.UINT16:
		out = chooseFixed[uint16](ev.mem, mask, a, b, t, n, valid, nulls)
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32:
		out = chooseFixed[uint32](ev.mem, mask, a, b, t, n, valid, nulls)
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.DATE64, arrow.TIMESTAMP, arrow.DURATION:
		out = chooseFixed[uint64](ev.mem, mask, a, b, t, n, valid, nulls)
	case arrow.STRING:
		out = chooseStrings[int32](ev.mem, mask, a, b, t, n, valid, nulls)
	case arrow.LARGE_STRING:
		out = chooseStrings[int64](ev.mem, mask, a, b, t, n, valid, nulls)
	case arrow.NULL:
		if valid != nil {
			valid.Release()
		}
		return nullDatum(ev.mem, t), nil
	default:
		if valid != nil {
			valid.Release()
		}
		return datum{}, fmt.Errorf("choosing between values of type %s is not supported", typeName(t))
	}
	return datum{arr: out, bcast: bc}, nil
}

func fixedOperand[T fixed](d datum) vec[T] {
	if d.isNull() {
		return vec[T]{bc: true}
	}
	return mkvec(values[T](d.arr), d.bcast)
}

func chooseFixed[T fixed](mem memory.Allocator, mask []byte, a, b datum, t arrow.DataType, n int, valid *memory.Buffer, nulls int) arrow.Array {
	x, y := fixedOperand[T](a), fixedOperand[T](b)
	buf, out := allocValues[T](mem, n)
	// Start from b, then overwrite the rows the mask takes from a, a word
	// of the mask at a time.
	if y.bc {
		for i := range out {
			out[i] = y.s
		}
	} else {
		copy(out, y.v[:n])
	}
	for w := 0; w*64 < n; w++ {
		var word uint64
		if (w+1)*64 <= n {
			word = le64(mask[w*8:])
		} else {
			for i := w * 64; i < n; i++ {
				word |= uint64(mask[i>>3]>>(i&7)&1) << (i - w*64)
			}
		}
		base := w * 64
		switch {
		case word == 0:
		case word == ^uint64(0) && !x.bc:
			copy(out[base:base+64], x.v[base:base+64])
		default:
			for word != 0 {
				i := base + bits.TrailingZeros64(word)
				if x.bc {
					out[i] = x.s
				} else {
					out[i] = x.v[i]
				}
				word &= word - 1
			}
		}
	}
	return newArray(t, n, valid, buf, nulls)
}

func chooseStrings[O int32 | int64](mem memory.Allocator, mask []byte, a, b datum, t arrow.DataType, n int, valid *memory.Buffer, nulls int) arrow.Array {
	view := func(d datum) (strView[O], bool) {
		if d.isNull() {
			return strView[O]{offs: make([]O, 2)}, true
		}
		return newStrView[O](d.arr), d.bcast
	}
	x, xbc := view(a)
	y, ybc := view(b)
	get := func(v strView[O], bc bool, i int) []byte {
		if bc {
			return v.at(0)
		}
		return v.at(i)
	}
	total := 0
	for i := 0; i < n; i++ {
		if mask[i>>3]>>(i&7)&1 != 0 {
			total += len(get(x, xbc, i))
		} else {
			total += len(get(y, ybc, i))
		}
	}
	offBuf, offs := allocValues[O](mem, n+1)
	dataBuf := memory.NewResizableBuffer(mem)
	dataBuf.Resize(total)
	data := dataBuf.Bytes()
	pos := 0
	for i := 0; i < n; i++ {
		offs[i] = O(pos)
		var s []byte
		if mask[i>>3]>>(i&7)&1 != 0 {
			s = get(x, xbc, i)
		} else {
			s = get(y, ybc, i)
		}
		pos += copy(data[pos:], s)
	}
	offs[n] = O(pos)
	return newStringArray(t, n, valid, offBuf, dataBuf, nulls)
}
