package rows

import (
	"context"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Take returns the rows idx of arr, in that order; a negative index gives a
// null. The common types (integers, floats, temporal types, booleans,
// strings and binaries, dictionaries, decimals) are gathered by typed
// loops; other types go through Arrow's take kernel.
func Take(ctx context.Context, mem memory.Allocator, arr arrow.Array, idx []int32) (arrow.Array, error) {
	n := len(idx)
	t := arr.DataType()
	switch t.ID() {
	case arrow.NULL:
		return Nulls(mem, t, n), nil
	case arrow.INT8, arrow.UINT8:
		return takeFixed[uint8](mem, arr, idx), nil
	case arrow.INT16, arrow.UINT16, arrow.FLOAT16:
		return takeFixed[uint16](mem, arr, idx), nil
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32, arrow.TIME32, arrow.INTERVAL_MONTHS, arrow.DECIMAL32:
		return takeFixed[uint32](mem, arr, idx), nil
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION,
		arrow.INTERVAL_DAY_TIME, arrow.DECIMAL64:
		return takeFixed[uint64](mem, arr, idx), nil
	case arrow.DECIMAL128, arrow.INTERVAL_MONTH_DAY_NANO:
		return takeFixed[[16]byte](mem, arr, idx), nil
	case arrow.DECIMAL256:
		return takeFixed[[32]byte](mem, arr, idx), nil
	case arrow.BOOL:
		return takeBool(mem, arr, idx), nil
	case arrow.STRING, arrow.BINARY:
		return takeStrings(mem, arr, idx, false)
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		return takeStrings(mem, arr, idx, true)
	case arrow.DICTIONARY:
		d := arr.(*array.Dictionary)
		ind, err := Take(ctx, mem, d.Indices(), idx)
		if err != nil {
			return nil, err
		}
		defer ind.Release()
		data := array.NewDataWithDictionary(t, n, ind.Data().Buffers(), ind.NullN(), 0, d.Data().Dictionary().(*array.Data))
		defer data.Release()
		return array.MakeFromData(data), nil
	}
	// Other types (lists, structs, views...): Arrow's take kernel, with
	// negative indices as null indices.
	valid := make([]bool, n)
	pos := make([]int32, n)
	for j, r := range idx {
		if r >= 0 {
			valid[j] = true
			pos[j] = r
		}
	}
	indices := FromSlice(mem, arrow.PrimitiveTypes.Int32, pos, valid)
	defer indices.Release()
	out, err := compute.TakeArray(compute.WithAllocator(ctx, mem), arr, indices)
	if err != nil {
		return nil, fmt.Errorf("take %d rows of %s: %w", n, t, err)
	}
	return out, nil
}

// takeValidity builds the validity of the rows idx of arr: a row is null
// when its index is negative or the row is null in arr.
func takeValidity(mem memory.Allocator, arr arrow.Array, idx []int32) (*memory.Buffer, int) {
	bm, boff := Validity(arr)
	anyNeg := false
	for _, r := range idx {
		if r < 0 {
			anyNeg = true
			break
		}
	}
	if bm == nil && !anyNeg {
		return nil, 0
	}
	buf, out := NewBitmap(mem, len(idx))
	nulls := 0
	for j, r := range idx {
		if r >= 0 && (bm == nil || Bit(bm, boff+int(r))) {
			out[j>>3] |= 1 << (j & 7)
		} else {
			nulls++
		}
	}
	if nulls == 0 {
		buf.Release()
		return nil, 0
	}
	return buf, nulls
}

func takeFixed[T any](mem memory.Allocator, arr arrow.Array, idx []int32) arrow.Array {
	vals := Values[T](arr)
	buf, out := NewBuffer[T](mem, len(idx))
	var zero T
	for j, r := range idx {
		if r >= 0 {
			out[j] = vals[r]
		} else {
			out[j] = zero
		}
	}
	vbuf, nulls := takeValidity(mem, arr, idx)
	return MakeArray(arr.DataType(), len(idx), []*memory.Buffer{vbuf, buf}, nulls)
}

func takeBool(mem memory.Allocator, arr arrow.Array, idx []int32) arrow.Array {
	d := arr.Data()
	src := d.Buffers()[1].Bytes()
	off := d.Offset()
	buf, out := NewBitmap(mem, len(idx))
	for j, r := range idx {
		if r >= 0 {
			i := off + int(r)
			out[j>>3] |= ((src[i>>3] >> (i & 7)) & 1) << (j & 7)
		}
	}
	vbuf, nulls := takeValidity(mem, arr, idx)
	return MakeArray(arr.DataType(), len(idx), []*memory.Buffer{vbuf, buf}, nulls)
}

func takeStrings(mem memory.Allocator, arr arrow.Array, idx []int32, large bool) (arrow.Array, error) {
	v := NewStringView(arr)
	total := 0
	for _, r := range idx {
		if r >= 0 {
			total += v.Len(int(r))
		}
	}
	if !large && total > math.MaxInt32 {
		return nil, fmt.Errorf("take %d rows of %s: %d bytes do not fit 32-bit offsets", len(idx), arr.DataType(), total)
	}
	dbuf, data := NewBuffer[byte](mem, total)
	var obuf *memory.Buffer
	pos := 0
	if large {
		var offs []int64
		obuf, offs = NewBuffer[int64](mem, len(idx)+1)
		for j, r := range idx {
			offs[j] = int64(pos)
			if r >= 0 {
				pos += copy(data[pos:], v.At(int(r)))
			}
		}
		offs[len(idx)] = int64(pos)
	} else {
		var offs []int32
		obuf, offs = NewBuffer[int32](mem, len(idx)+1)
		for j, r := range idx {
			offs[j] = int32(pos)
			if r >= 0 {
				pos += copy(data[pos:], v.At(int(r)))
			}
		}
		offs[len(idx)] = int32(pos)
	}
	vbuf, nulls := takeValidity(mem, arr, idx)
	return MakeArray(arr.DataType(), len(idx), []*memory.Buffer{vbuf, obuf, dbuf}, nulls), nil
}

// TakeRecord returns the rows idx of rec (see Take).
func TakeRecord(ctx context.Context, mem memory.Allocator, rec arrow.RecordBatch, idx []int32) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, rec.NumCols())
	defer ReleaseAll(cols)
	for i := range cols {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c, err := Take(ctx, mem, rec.Column(i), idx)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", rec.ColumnName(i), err)
		}
		cols[i] = c
	}
	return array.NewRecordBatch(rec.Schema(), cols, int64(len(idx))), nil
}

// IsIdentity reports whether idx is 0, 1, ..., n-1.
func IsIdentity(idx []int32, n int) bool {
	if len(idx) != n {
		return false
	}
	for j, r := range idx {
		if int(r) != j {
			return false
		}
	}
	return true
}

// Coalesce gathers rows from two arrays of the same type: row j is
// a[ai[j]] when ai[j] >= 0, else b[bi[j]] when bi[j] >= 0, else null.
func Coalesce(ctx context.Context, mem memory.Allocator, a arrow.Array, ai []int32, b arrow.Array, bi []int32) (arrow.Array, error) {
	if !arrow.TypeEqual(a.DataType(), b.DataType()) {
		return nil, fmt.Errorf("coalesce %s with %s: types differ", a.DataType(), b.DataType())
	}
	n := len(ai)
	if len(bi) != n {
		return nil, fmt.Errorf("coalesce: %d and %d indices", n, len(bi))
	}
	switch a.DataType().ID() {
	case arrow.INT8, arrow.UINT8:
		return coalesceFixed[uint8](mem, a, ai, b, bi), nil
	case arrow.INT16, arrow.UINT16:
		return coalesceFixed[uint16](mem, a, ai, b, bi), nil
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32, arrow.TIME32:
		return coalesceFixed[uint32](mem, a, ai, b, bi), nil
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		return coalesceFixed[uint64](mem, a, ai, b, bi), nil
	}
	// Others: gather from the concatenation of a and b.
	both, err := array.Concatenate([]arrow.Array{a, b}, mem)
	if err != nil {
		return nil, fmt.Errorf("coalesce %s: %w", a.DataType(), err)
	}
	defer both.Release()
	idx := make([]int32, n)
	off := int32(a.Len())
	for j := range idx {
		switch {
		case ai[j] >= 0:
			idx[j] = ai[j]
		case bi[j] >= 0:
			idx[j] = off + bi[j]
		default:
			idx[j] = -1
		}
	}
	return Take(ctx, mem, both, idx)
}

func coalesceFixed[T any](mem memory.Allocator, a arrow.Array, ai []int32, b arrow.Array, bi []int32) arrow.Array {
	av, bv := Values[T](a), Values[T](b)
	abm, aoff := Validity(a)
	bbm, boff := Validity(b)
	n := len(ai)
	buf, out := NewBuffer[T](mem, n)
	vbuf, vbm := NewBitmap(mem, n)
	nulls := 0
	var zero T
	for j := range n {
		switch {
		case ai[j] >= 0:
			r := int(ai[j])
			out[j] = av[r]
			if abm == nil || Bit(abm, aoff+r) {
				vbm[j>>3] |= 1 << (j & 7)
				continue
			}
		case bi[j] >= 0:
			r := int(bi[j])
			out[j] = bv[r]
			if bbm == nil || Bit(bbm, boff+r) {
				vbm[j>>3] |= 1 << (j & 7)
				continue
			}
		default:
			out[j] = zero
		}
		nulls++
	}
	return MakeArray(a.DataType(), n, []*memory.Buffer{vbuf, buf}, nulls)
}
