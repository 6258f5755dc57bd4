package expr

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// decode turns a dictionary-encoded datum into a plain one; other datums
// are returned as they are. The result is retained.
func (ev *Evaluator) decode(ctx context.Context, d datum) (datum, error) {
	if d.isNull() || d.typ().ID() != arrow.DICTIONARY {
		return d.retain(), nil
	}
	da := d.arr.(*array.Dictionary)
	out, err := compute.TakeArray(compute.WithAllocator(ctx, ev.mem), da.Dictionary(), da.Indices())
	if err != nil {
		return datum{}, err
	}
	return datum{arr: out, bcast: d.bcast}, nil
}

// dictIndices gives the indices of a dictionary array as int32.
func dictIndices(da *array.Dictionary) []int32 {
	idx := da.Indices()
	switch idx.DataType().ID() {
	case arrow.INT32:
		return values[int32](idx)
	case arrow.INT8:
		return convert[int8, int32](values[int8](idx))
	case arrow.UINT8:
		return convert[uint8, int32](values[uint8](idx))
	case arrow.INT16:
		return convert[int16, int32](values[int16](idx))
	case arrow.UINT16:
		return convert[uint16, int32](values[uint16](idx))
	case arrow.UINT32:
		return convert[uint32, int32](values[uint32](idx))
	case arrow.INT64:
		return convert[int64, int32](values[int64](idx))
	case arrow.UINT64:
		return convert[uint64, int32](values[uint64](idx))
	}
	return make([]int32, idx.Len())
}

// onDictionary computes a boolean per distinct value of a dictionary datum
// with fn, then spreads the results over the rows through the indices. A
// row is null where its index or its dictionary value is null.
func (ev *Evaluator) onDictionary(a datum, fn func(dict arrow.Array) []bool) datum {
	da := a.arr.(*array.Dictionary)
	dict := da.Dictionary()
	res := fn(dict)
	idx := dictIndices(da)
	n := len(idx)
	buf, bm := allocBitmap(ev.mem, n)
	m := uint(len(res))
	for i, k := range idx {
		if uint(k) < m && res[k] {
			bm[i>>3] |= 1 << (i & 7)
		}
	}
	valid, nulls := ev.dictValidity(da, idx)
	return datum{arr: newArray(boolType, n, valid, buf, nulls), bcast: a.bcast}
}

// dictValidity is the validity of the rows of a dictionary array: the index
// is valid and so is the value it points to.
func (ev *Evaluator) dictValidity(da *array.Dictionary, idx []int32) (*memory.Buffer, int) {
	valid, nulls := copyValidity(ev.mem, da)
	dict := da.Dictionary()
	if dict.NullN() == 0 {
		return valid, nulls
	}
	n := len(idx)
	if valid == nil {
		var bm []byte
		valid, bm = allocBitmap(ev.mem, n)
		bitutil.SetBitsTo(bm, 0, int64(n), true)
	}
	bm := valid.Bytes()
	for i, k := range idx {
		if int(k) >= dict.Len() || dict.IsNull(int(k)) {
			bitutil.ClearBit(bm, i)
		}
	}
	return valid, n - bitutil.CountSetBits(bm, 0, n)
}
