package expr

import (
	"context"
	"fmt"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Filter keeps the rows of rec where predicate is true; rows where it is
// false or null are dropped. The caller releases the result.
func Filter(ctx context.Context, rec arrow.RecordBatch, predicate Expr, mem memory.Allocator) (arrow.RecordBatch, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	t, err := predicate.Type(rec.Schema())
	if err != nil {
		return nil, err
	}
	if !isBoolish(t) {
		return nil, &TypeError{Expr: predicate.String(), Msg: "a filter needs a boolean predicate, not " + typeName(t)}
	}
	if len(predicate.Columns()) == 0 { // a constant
		ev := NewEvaluator(rec.NewSlice(0, 0), mem)
		defer ev.rec.Release()
		defer ev.Release()
		d, err := ev.eval(ctx, predicate.n)
		if err != nil {
			return nil, err
		}
		defer d.release()
		if maskOf(d, 1)[0]&1 != 0 {
			rec.Retain()
			return rec, nil
		}
		return rec.NewSlice(0, 0), nil
	}
	ev := NewEvaluator(rec, mem)
	defer ev.Release()
	arr, err := ev.Eval(ctx, predicate)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	n := int(rec.NumRows())
	return FilterMask(ctx, rec, maskOf(datum{arr: arr}, n), mem)
}

// FilterMask keeps the rows of rec whose bit is set in mask, a bitmap (least
// significant bit first) of at least rec.NumRows() bits.
func FilterMask(ctx context.Context, rec arrow.RecordBatch, mask []byte, mem memory.Allocator) (arrow.RecordBatch, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	n := int(rec.NumRows())
	if len(mask)*8 < n {
		return nil, fmt.Errorf("expr: filter mask has %d bits for %d rows", len(mask)*8, n)
	}
	count := countOnes(mask, n)
	switch count {
	case n:
		rec.Retain()
		return rec, nil
	case 0:
		return rec.NewSlice(0, 0), nil
	}
	sel := selection(mask, n, count)
	cols := make([]arrow.Array, rec.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, c := range rec.Columns() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out, err := take(ctx, mem, c, sel)
		if err != nil {
			return nil, fmt.Errorf("expr: filter column %q: %w", rec.Schema().Field(i).Name, err)
		}
		cols[i] = out
	}
	return array.NewRecordBatch(rec.Schema(), cols, int64(count)), nil
}

// selection lists the positions of the set bits of mask.
func selection(mask []byte, n, count int) []int32 {
	sel := make([]int32, 0, count)
	full := n / 64
	for w := 0; w < full; w++ {
		word := le64(mask[w*8:])
		for word != 0 {
			sel = append(sel, int32(w*64+bits.TrailingZeros64(word)))
			word &= word - 1
		}
	}
	for i := full * 64; i < n; i++ {
		if mask[i>>3]>>(i&7)&1 != 0 {
			sel = append(sel, int32(i))
		}
	}
	return sel
}

// take gathers the rows sel of a.
func take(ctx context.Context, mem memory.Allocator, a arrow.Array, sel []int32) (arrow.Array, error) {
	if da, ok := a.(*array.Dictionary); ok { // the indices carry the validity
		idx, err := take(ctx, mem, da.Indices(), sel)
		if err != nil {
			return nil, err
		}
		defer idx.Release()
		return array.NewDictionaryArray(a.DataType(), idx, da.Dictionary()), nil
	}
	k := len(sel)
	var valid *memory.Buffer
	nulls := 0
	if bm, off := validity(a); bm != nil {
		var vb []byte
		valid, vb = allocBitmap(mem, k)
		for j, i := range sel {
			p := off + int(i)
			if bm[p>>3]>>(p&7)&1 != 0 {
				vb[j>>3] |= 1 << (j & 7)
			}
		}
		nulls = k - bitutil.CountSetBits(vb, 0, k)
	}
	t := a.DataType()
	switch t.ID() {
	case arrow.INT8, arrow.UINT8:
		return takeFixed[uint8](mem, a, sel, valid, nulls), nil
	case arrow.INT16, arrow.UINT16, arrow.FLOAT16:
		return takeFixed[uint16](mem, a, sel, valid, nulls), nil
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32, arrow.TIME32:
		return takeFixed[uint32](mem, a, sel, valid, nulls), nil
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.DATE64, arrow.TIMESTAMP, arrow.DURATION, arrow.TIME64:
		return takeFixed[uint64](mem, a, sel, valid, nulls), nil
	case arrow.BOOL:
		bm, off := bitsOf(a)
		buf, out := allocBitmap(mem, k)
		for j, i := range sel {
			p := off + int(i)
			if bm[p>>3]>>(p&7)&1 != 0 {
				out[j>>3] |= 1 << (j & 7)
			}
		}
		return newArray(t, k, valid, buf, nulls), nil
	case arrow.STRING, arrow.BINARY:
		return takeStrings[int32](mem, a, sel, valid, nulls), nil
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		return takeStrings[int64](mem, a, sel, valid, nulls), nil
	}
	if valid != nil {
		valid.Release()
	}
	idxBuf, idx := allocValues[int32](mem, k)
	copy(idx, sel)
	indices := newArray(arrow.PrimitiveTypes.Int32, k, nil, idxBuf, 0)
	defer indices.Release()
	return compute.TakeArray(compute.WithAllocator(ctx, mem), a, indices)
}

func takeFixed[T fixed](mem memory.Allocator, a arrow.Array, sel []int32, valid *memory.Buffer, nulls int) arrow.Array {
	v := values[T](a)
	buf, out := allocValues[T](mem, len(sel))
	for j, i := range sel {
		out[j] = v[i]
	}
	return newArray(a.DataType(), len(sel), valid, buf, nulls)
}

func takeStrings[O int32 | int64](mem memory.Allocator, a arrow.Array, sel []int32, valid *memory.Buffer, nulls int) arrow.Array {
	v := newStrView[O](a)
	k := len(sel)
	offBuf, offs := allocValues[O](mem, k+1)
	var total O
	for j, i := range sel {
		offs[j] = total
		total += v.offs[i+1] - v.offs[i]
	}
	offs[k] = total
	dataBuf := memory.NewResizableBuffer(mem)
	dataBuf.Resize(int(total))
	data := dataBuf.Bytes()
	for j, i := range sel {
		copy(data[offs[j]:offs[j+1]], v.data[v.offs[i]:v.offs[i+1]])
	}
	return newStringArray(a.DataType(), k, valid, offBuf, dataBuf, nulls)
}
