package expr

import (
	"context"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// cast is the Cast operation.
func (ev *Evaluator) cast(ctx context.Context, a datum, t arrow.DataType) (datum, error) {
	d, err := ev.castTo(ctx, a, t)
	if err != nil {
		if a.isNull() {
			return datum{}, err
		}
		return datum{}, fmt.Errorf("cast from %s to %s: %w", typeName(a.typ()), typeName(t), err)
	}
	return d, nil
}

// castTo converts d to type t; the result is retained.
func (ev *Evaluator) castTo(ctx context.Context, d datum, t arrow.DataType) (datum, error) {
	if d.isNull() {
		return nullDatum(ev.mem, t), nil
	}
	from := d.typ()
	if arrow.TypeEqual(from, t) {
		return d.retain(), nil
	}
	if from.ID() == arrow.DICTIONARY && t.ID() != arrow.DICTIONARY {
		dec, err := ev.decode(ctx, d)
		if err != nil {
			return datum{}, err
		}
		defer dec.release()
		return ev.castTo(ctx, dec, t)
	}
	if dt, ok := t.(*arrow.DictionaryType); ok {
		v, err := ev.castTo(ctx, d, dt.ValueType)
		if err != nil {
			return datum{}, err
		}
		defer v.release()
		out, err := dictionaryEncode(ctx, ev, v.arr, dt)
		if err != nil {
			return datum{}, err
		}
		return datum{arr: out, bcast: d.bcast}, nil
	}
	n := d.arr.Len()
	if isNumeric(from) {
		switch t.ID() {
		case arrow.INT64:
			if isInt(from) {
				return ev.fromInt64s(d, t, asInt64s(d.arr)), nil
			}
		case arrow.FLOAT64:
			buf, out := allocValues[float64](ev.mem, n)
			copy(out, asFloat64s(d.arr))
			valid, nulls := copyValidity(ev.mem, d.arr)
			return datum{arr: newArray(t, n, valid, buf, nulls), bcast: d.bcast}, nil
		case arrow.FLOAT32:
			if from.ID() != arrow.FLOAT64 { // float64 to float32 may need checks; leave to compute
				buf, out := allocValues[float32](ev.mem, n)
				copy(out, asFloat32s(d.arr))
				valid, nulls := copyValidity(ev.mem, d.arr)
				return datum{arr: newArray(t, n, valid, buf, nulls), bcast: d.bcast}, nil
			}
		}
	}
	// Instants and durations between units (finer only) and dates to
	// timestamps.
	if (isInstant(from) && t.ID() == arrow.TIMESTAMP) || (from.ID() == arrow.DURATION && t.ID() == arrow.DURATION) {
		if unitFactor(from, timeUnitOf(t)) >= 1 && timeUnitOf(t) >= cmpUnit(from) {
			return ev.fromInt64s(d, t, inUnit(d.arr, timeUnitOf(t))), nil
		}
	}
	if (t.ID() == arrow.STRING || t.ID() == arrow.LARGE_STRING) && (isNumeric(from) || from.ID() == arrow.BOOL) {
		return datum{arr: ev.formatValues(d.arr, t), bcast: d.bcast}, nil
	}
	out, err := compute.CastArray(compute.WithAllocator(ctx, ev.mem), d.arr, compute.SafeCastOptions(t))
	if err != nil {
		return datum{}, err
	}
	return datum{arr: out, bcast: d.bcast}, nil
}

// fromInt64s builds an int64-backed array of type t from vals with the
// validity of d.
func (ev *Evaluator) fromInt64s(d datum, t arrow.DataType, vals []int64) datum {
	n := d.arr.Len()
	buf, out := allocValues[int64](ev.mem, n)
	copy(out, vals)
	valid, nulls := copyValidity(ev.mem, d.arr)
	return datum{arr: newArray(t, n, valid, buf, nulls), bcast: d.bcast}
}

// dictionaryEncode encodes a plain array as a dictionary of type dt.
func dictionaryEncode(ctx context.Context, ev *Evaluator, a arrow.Array, dt *arrow.DictionaryType) (arrow.Array, error) {
	b := array.NewDictionaryBuilder(ev.mem, dt)
	defer b.Release()
	if err := b.AppendArray(a); err != nil {
		return nil, err
	}
	return b.NewArray(), nil
}

// formatValues formats numbers or booleans as strings (integers in decimal,
// floats in the shortest form that reads back to the same value).
func (ev *Evaluator) formatValues(a arrow.Array, t arrow.DataType) arrow.Array {
	n := a.Len()
	offs := make([]int64, n+1)
	data := make([]byte, 0, n*4)
	from := a.DataType()
	switch {
	case from.ID() == arrow.BOOL:
		b := a.(*array.Boolean)
		for i := 0; i < n; i++ {
			offs[i] = int64(len(data))
			data = strconv.AppendBool(data, b.Value(i))
		}
	case from.ID() == arrow.UINT64:
		for i, v := range values[uint64](a) {
			offs[i] = int64(len(data))
			data = strconv.AppendUint(data, v, 10)
		}
	case isInt(from):
		for i, v := range asInt64s(a) {
			offs[i] = int64(len(data))
			data = strconv.AppendInt(data, v, 10)
		}
	case from.ID() == arrow.FLOAT32:
		for i, v := range values[float32](a) {
			offs[i] = int64(len(data))
			data = strconv.AppendFloat(data, float64(v), 'g', -1, 32)
		}
	default:
		for i, v := range asFloat64s(a) {
			offs[i] = int64(len(data))
			data = strconv.AppendFloat(data, v, 'g', -1, 64)
		}
	}
	offs[n] = int64(len(data))
	valid, nulls := copyValidity(ev.mem, a)
	dataBuf := memory.NewResizableBuffer(ev.mem)
	dataBuf.Resize(len(data))
	copy(dataBuf.Bytes(), data)
	if t.ID() == arrow.LARGE_STRING {
		offBuf, o := allocValues[int64](ev.mem, n+1)
		copy(o, offs)
		return newStringArray(t, n, valid, offBuf, dataBuf, nulls)
	}
	offBuf, o := allocValues[int32](ev.mem, n+1)
	for i, v := range offs {
		o[i] = int32(v)
	}
	return newStringArray(t, n, valid, offBuf, dataBuf, nulls)
}
