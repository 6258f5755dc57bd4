package expr

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// datum is an intermediate result: an array, or a broadcast array of length
// one standing for a column of equal values (a literal, or a result computed
// from literals only).
type datum struct {
	arr   arrow.Array
	bcast bool
}

func (d datum) release() {
	if d.arr != nil {
		d.arr.Release()
	}
}

func (d datum) retain() datum {
	if d.arr != nil {
		d.arr.Retain()
	}
	return d
}

func (d datum) typ() arrow.DataType { return d.arr.DataType() }

// isNull reports whether d is a broadcast null: every row is null.
func (d datum) isNull() bool {
	return d.bcast && (d.arr.IsNull(0) || d.arr.DataType().ID() == arrow.NULL)
}

// nullDatum is a broadcast null of type t.
func nullDatum(mem memory.Allocator, t arrow.DataType) datum {
	return datum{arr: array.MakeArrayOfNull(mem, t, 1), bcast: true}
}

// litArray builds a one-element array holding the literal.
func litArray(mem memory.Allocator, s scalar) arrow.Array {
	t := s.dataType()
	if s.kind == litNull {
		return array.NewNull(1)
	}
	b := array.NewBuilder(mem, t)
	defer b.Release()
	switch b := b.(type) {
	case *array.BooleanBuilder:
		b.Append(s.b)
	case *array.Int64Builder:
		b.Append(s.i)
	case *array.Uint64Builder:
		b.Append(s.u)
	case *array.Float32Builder:
		b.Append(float32(s.f))
	case *array.Float64Builder:
		b.Append(s.f)
	case *array.StringBuilder:
		b.Append(s.s)
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(s.i))
	case *array.DurationBuilder:
		b.Append(arrow.Duration(s.i))
	case *array.Date32Builder:
		b.Append(arrow.Date32(s.i))
	}
	return b.NewArray()
}

// toArray returns d as an array of type t and length n; the caller releases
// it.
func (d datum) toArray(ctx context.Context, mem memory.Allocator, t arrow.DataType, n int) (arrow.Array, error) {
	if !d.bcast {
		d.arr.Retain()
		return d.arr, nil
	}
	if d.isNull() {
		return array.MakeArrayOfNull(mem, t, n), nil
	}
	src := d.arr
	if !arrow.TypeEqual(src.DataType(), t) {
		return nil, fmt.Errorf("internal error: broadcast of %s as %s", typeName(src.DataType()), typeName(t))
	}
	return broadcast(ctx, mem, src, n)
}

// broadcast repeats the single value of src n times.
func broadcast(ctx context.Context, mem memory.Allocator, src arrow.Array, n int) (arrow.Array, error) {
	switch src.DataType().ID() {
	case arrow.INT64, arrow.TIMESTAMP, arrow.DURATION, arrow.DATE64:
		return fill[int64](mem, src, n), nil
	case arrow.FLOAT64:
		return fill[float64](mem, src, n), nil
	case arrow.INT32, arrow.DATE32:
		return fill[int32](mem, src, n), nil
	case arrow.BOOL:
		buf, bm := allocBitmap(mem, n)
		if src.(*array.Boolean).Value(0) {
			for i := range bm {
				bm[i] = 0xff
			}
		}
		return newArray(src.DataType(), n, nil, buf, 0), nil
	}
	idxBuf, idx := allocValues[int32](mem, n)
	clear(idx)
	indices := newArray(arrow.PrimitiveTypes.Int32, n, nil, idxBuf, 0)
	defer indices.Release()
	return compute.TakeArray(compute.WithAllocator(ctx, mem), src, indices)
}

func fill[T fixed](mem memory.Allocator, src arrow.Array, n int) arrow.Array {
	v := values[T](src)[0]
	buf, out := allocValues[T](mem, n)
	for i := range out {
		out[i] = v
	}
	return newArray(src.DataType(), n, nil, buf, 0)
}
