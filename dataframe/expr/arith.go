package expr

import (
	"context"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// nonBcast returns the arrays of the datums that are not broadcast.
func nonBcast(ds ...datum) []arrow.Array {
	out := make([]arrow.Array, 0, len(ds))
	for _, d := range ds {
		if !d.bcast {
			out = append(out, d.arr)
		}
	}
	return out
}

func (ev *Evaluator) arith(_ context.Context, op string, a, b datum, outT arrow.DataType) (datum, error) {
	if a.isNull() || b.isNull() {
		return nullDatum(ev.mem, outT), nil
	}
	n := ev.length(a, b)
	bc := allBcast(a, b)
	valid, nulls := andValidity(ev.mem, n, nonBcast(a, b)...)
	switch outT.ID() {
	case arrow.FLOAT64:
		buf, out := allocValues[float64](ev.mem, n)
		if !fusedFloat64(op, a, b, out) {
			arithFloat(op, mkvec(asFloat64s(a.arr), a.bcast), mkvec(asFloat64s(b.arr), b.bcast), out)
		}
		return datum{arr: newArray(outT, n, valid, buf, nulls), bcast: bc}, nil
	case arrow.FLOAT32:
		buf, out := allocValues[float32](ev.mem, n)
		arithFloat(op, mkvec(asFloat32s(a.arr), a.bcast), mkvec(asFloat32s(b.arr), b.bcast), out)
		return datum{arr: newArray(outT, n, valid, buf, nulls), bcast: bc}, nil
	case arrow.INT64, arrow.TIMESTAMP, arrow.DURATION:
		buf, out := allocValues[int64](ev.mem, n)
		if outT.ID() == arrow.INT64 && fusedInt64(op, a, b, out) {
			return datum{arr: newArray(outT, n, valid, buf, nulls), bcast: bc}, nil
		}
		var av, bv []int64
		if outT.ID() == arrow.INT64 {
			av, bv = asInt64s(a.arr), asInt64s(b.arr)
		} else {
			u := timeUnitOf(outT)
			av, bv = inUnit(a.arr, u), inUnit(b.arr, u)
		}
		x, y := mkvec(av, a.bcast), mkvec(bv, b.bcast)
		switch op {
		case opAdd, opSub, opMul:
			arithBasic(op, x, y, out)
		case opFloorDiv, opMod, opPow:
			valid, nulls = arithIntChecked(ev.mem, op, x, y, out, valid, nulls)
		default:
			buf.Release()
			if valid != nil {
				valid.Release()
			}
			return datum{}, fmt.Errorf("internal error: %s on %s", op, typeName(outT))
		}
		return datum{arr: newArray(outT, n, valid, buf, nulls), bcast: bc}, nil
	}
	if valid != nil {
		valid.Release()
	}
	return datum{}, fmt.Errorf("internal error: arithmetic giving %s", typeName(outT))
}

// arithBasic computes +, - or * (integers wrap around).
func arithBasic[T number](op string, a, b vec[T], out []T) {
	a, b = bothScalar(a, b)
	n := len(out)
	switch op {
	case opAdd:
		switch {
		case a.bc:
			b.v = b.v[:n]
			for i := range out {
				out[i] = a.s + b.v[i]
			}
		case b.bc:
			a.v = a.v[:n]
			for i := range out {
				out[i] = a.v[i] + b.s
			}
		default:
			a.v, b.v = a.v[:n], b.v[:n]
			for i := range out {
				out[i] = a.v[i] + b.v[i]
			}
		}
	case opSub:
		switch {
		case a.bc:
			b.v = b.v[:n]
			for i := range out {
				out[i] = a.s - b.v[i]
			}
		case b.bc:
			a.v = a.v[:n]
			for i := range out {
				out[i] = a.v[i] - b.s
			}
		default:
			a.v, b.v = a.v[:n], b.v[:n]
			for i := range out {
				out[i] = a.v[i] - b.v[i]
			}
		}
	case opMul:
		switch {
		case a.bc:
			b.v = b.v[:n]
			for i := range out {
				out[i] = a.s * b.v[i]
			}
		case b.bc:
			a.v = a.v[:n]
			for i := range out {
				out[i] = a.v[i] * b.s
			}
		default:
			a.v, b.v = a.v[:n], b.v[:n]
			for i := range out {
				out[i] = a.v[i] * b.v[i]
			}
		}
	}
}

type float interface{ ~float32 | ~float64 }

// arithFloat computes every arithmetic operation on floats, with IEEE
// semantics for division by zero.
func arithFloat[T float](op string, a, b vec[T], out []T) {
	switch op {
	case opAdd, opSub, opMul:
		arithBasic(op, a, b, out)
		return
	}
	a, b = bothScalar(a, b)
	n := len(out)
	get := func(v vec[T], i int) T {
		if v.bc {
			return v.s
		}
		return v.v[i]
	}
	switch op {
	case opDiv:
		switch {
		case a.bc:
			b.v = b.v[:n]
			for i := range out {
				out[i] = a.s / b.v[i]
			}
		case b.bc:
			a.v = a.v[:n]
			for i := range out {
				out[i] = a.v[i] / b.s
			}
		default:
			a.v, b.v = a.v[:n], b.v[:n]
			for i := range out {
				out[i] = a.v[i] / b.v[i]
			}
		}
	case opFloorDiv:
		for i := range out {
			out[i] = T(math.Floor(float64(get(a, i)) / float64(get(b, i))))
		}
	case opMod:
		for i := range out {
			out[i] = T(floatMod(float64(get(a, i)), float64(get(b, i))))
		}
	case opPow:
		for i := range out {
			out[i] = T(math.Pow(float64(get(a, i)), float64(get(b, i))))
		}
	}
}

// floatMod is Python's float modulo: the result has the sign of y.
func floatMod(x, y float64) float64 {
	r := math.Mod(x, y)
	if r != 0 && (r < 0) != (y < 0) {
		r += y
	}
	return r
}

// arithIntChecked computes //, % and ** on int64, giving null for a zero
// divisor or a negative exponent.
func arithIntChecked(mem memory.Allocator, op string, a, b vec[int64], out []int64, valid *memory.Buffer, nulls int) (*memory.Buffer, int) {
	a, b = bothScalar(a, b)
	n := len(out)
	// Find the rows the operation is undefined for: a zero divisor, a
	// negative exponent (null slots included, whose values are arbitrary).
	bad := func(y int64) bool {
		if op == opPow {
			return y < 0
		}
		return y == 0
	}
	anyBad := false
	if b.bc {
		anyBad = bad(b.s)
	} else {
		for _, y := range b.v[:n] {
			if bad(y) {
				anyBad = true
				break
			}
		}
	}
	var vb []byte
	if anyBad {
		if valid == nil {
			var bm []byte
			valid, bm = allocBitmap(mem, n)
			bitutil.SetBitsTo(bm, 0, int64(n), true)
		}
		vb = valid.Bytes()
	}
	get := func(v vec[int64], i int) int64 {
		if v.bc {
			return v.s
		}
		return v.v[i]
	}
	for i := range out {
		x, y := get(a, i), get(b, i)
		if anyBad && bad(y) {
			out[i] = 0
			bitutil.ClearBit(vb, i)
			continue
		}
		switch op {
		case opFloorDiv:
			q := x / y
			if (x%y != 0) && ((x < 0) != (y < 0)) {
				q--
			}
			out[i] = q
		case opMod:
			r := x % y
			if r != 0 && (r < 0) != (y < 0) {
				r += y
			}
			out[i] = r
		case opPow:
			out[i] = ipow(x, y)
		}
	}
	if vb != nil {
		nulls = n - bitutil.CountSetBits(vb, 0, n)
	}
	return valid, nulls
}

// ipow is x**y for y >= 0, wrapping on overflow.
func ipow(x, y int64) int64 {
	r := int64(1)
	for y > 0 {
		if y&1 != 0 {
			r *= x
		}
		x *= x
		y >>= 1
	}
	return r
}

// unary computes Neg and Abs.
func (ev *Evaluator) unary(_ context.Context, op string, a datum, outT arrow.DataType) (datum, error) {
	if a.isNull() {
		return nullDatum(ev.mem, outT), nil
	}
	if isUnsigned(outT) { // Abs of an unsigned integer
		return a.retain(), nil
	}
	n := a.arr.Len()
	valid, nulls := copyValidity(ev.mem, a.arr)
	switch outT.ID() {
	case arrow.FLOAT64:
		buf, out := allocValues[float64](ev.mem, n)
		negAbs(op, values[float64](a.arr), out)
		return datum{arr: newArray(outT, n, valid, buf, nulls), bcast: a.bcast}, nil
	case arrow.FLOAT32:
		buf, out := allocValues[float32](ev.mem, n)
		negAbs(op, values[float32](a.arr), out)
		return datum{arr: newArray(outT, n, valid, buf, nulls), bcast: a.bcast}, nil
	case arrow.INT8:
		buf, out := allocValues[int8](ev.mem, n)
		negAbs(op, values[int8](a.arr), out)
		return datum{arr: newArray(outT, n, valid, buf, nulls), bcast: a.bcast}, nil
	case arrow.INT16:
		buf, out := allocValues[int16](ev.mem, n)
		negAbs(op, values[int16](a.arr), out)
		return datum{arr: newArray(outT, n, valid, buf, nulls), bcast: a.bcast}, nil
	case arrow.INT32:
		buf, out := allocValues[int32](ev.mem, n)
		negAbs(op, values[int32](a.arr), out)
		return datum{arr: newArray(outT, n, valid, buf, nulls), bcast: a.bcast}, nil
	case arrow.INT64, arrow.DURATION:
		buf, out := allocValues[int64](ev.mem, n)
		negAbs(op, asInt64s(a.arr), out)
		return datum{arr: newArray(outT, n, valid, buf, nulls), bcast: a.bcast}, nil
	}
	if valid != nil {
		valid.Release()
	}
	return datum{}, fmt.Errorf("internal error: %s giving %s", op, typeName(outT))
}

type signed interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~float32 | ~float64
}

func negAbs[T signed](op string, in, out []T) {
	in = in[:len(out)]
	if op == opNeg {
		for i := range out {
			out[i] = -in[i]
		}
		return
	}
	var zero T
	for i, v := range in {
		if v < 0 {
			v = -v
		}
		if v == zero {
			v = zero // -0.0 becomes 0.0
		}
		out[i] = v
	}
}

// fusedFloat64 computes +, -, * and / of int64 and float64 operands into
// float64 without converting a whole operand first. It reports false for
// the cases it does not cover.
func fusedFloat64(op string, a, b datum, out []float64) bool {
	switch op {
	case opAdd, opSub, opMul, opDiv:
	default:
		return false
	}
	at, bt := a.typ().ID(), b.typ().ID()
	switch {
	case at == arrow.INT64 && bt == arrow.FLOAT64:
		mixedFloat64(op, mkvec(values[int64](a.arr), a.bcast), mkvec(values[float64](b.arr), b.bcast), out)
	case at == arrow.FLOAT64 && bt == arrow.INT64:
		mixedFloat64(op, mkvec(values[float64](a.arr), a.bcast), mkvec(values[int64](b.arr), b.bcast), out)
	case at == arrow.INT64 && bt == arrow.INT64:
		mixedFloat64(op, mkvec(values[int64](a.arr), a.bcast), mkvec(values[int64](b.arr), b.bcast), out)
	case at == arrow.INT32 && bt == arrow.FLOAT64:
		mixedFloat64(op, mkvec(values[int32](a.arr), a.bcast), mkvec(values[float64](b.arr), b.bcast), out)
	case at == arrow.FLOAT64 && bt == arrow.INT32:
		mixedFloat64(op, mkvec(values[float64](a.arr), a.bcast), mkvec(values[int32](b.arr), b.bcast), out)
	default:
		return false
	}
	return true
}

func mixedFloat64[A, B fixed](op string, a vec[A], b vec[B], out []float64) {
	if a.bc && b.bc {
		a, b = vec[A]{v: []A{a.s}}, vec[B]{v: []B{b.s}}
	}
	n := len(out)
	switch {
	case a.bc:
		x, y := float64(a.s), b.v[:n]
		switch op {
		case opAdd:
			for i := range out {
				out[i] = x + float64(y[i])
			}
		case opSub:
			for i := range out {
				out[i] = x - float64(y[i])
			}
		case opMul:
			for i := range out {
				out[i] = x * float64(y[i])
			}
		case opDiv:
			for i := range out {
				out[i] = x / float64(y[i])
			}
		}
	case b.bc:
		x, y := a.v[:n], float64(b.s)
		switch op {
		case opAdd:
			for i := range out {
				out[i] = float64(x[i]) + y
			}
		case opSub:
			for i := range out {
				out[i] = float64(x[i]) - y
			}
		case opMul:
			for i := range out {
				out[i] = float64(x[i]) * y
			}
		case opDiv:
			for i := range out {
				out[i] = float64(x[i]) / y
			}
		}
	default:
		x, y := a.v[:n], b.v[:n]
		switch op {
		case opAdd:
			for i := range out {
				out[i] = float64(x[i]) + float64(y[i])
			}
		case opSub:
			for i := range out {
				out[i] = float64(x[i]) - float64(y[i])
			}
		case opMul:
			for i := range out {
				out[i] = float64(x[i]) * float64(y[i])
			}
		case opDiv:
			for i := range out {
				out[i] = float64(x[i]) / float64(y[i])
			}
		}
	}
}

// fusedInt64 computes +, - and * of an int32 operand with an int32 or int64
// one into int64 without widening a whole operand first. It reports false
// for the cases it does not cover.
func fusedInt64(op string, a, b datum, out []int64) bool {
	switch op {
	case opAdd, opSub, opMul:
	default:
		return false
	}
	at, bt := a.typ().ID(), b.typ().ID()
	switch {
	case at == arrow.INT32 && bt == arrow.INT64:
		mixedInt64(op, mkvec(values[int32](a.arr), a.bcast), mkvec(values[int64](b.arr), b.bcast), out)
	case at == arrow.INT64 && bt == arrow.INT32:
		mixedInt64(op, mkvec(values[int64](a.arr), a.bcast), mkvec(values[int32](b.arr), b.bcast), out)
	case at == arrow.INT32 && bt == arrow.INT32:
		mixedInt64(op, mkvec(values[int32](a.arr), a.bcast), mkvec(values[int32](b.arr), b.bcast), out)
	default:
		return false
	}
	return true
}

func mixedInt64[A, B fixed](op string, a vec[A], b vec[B], out []int64) {
	if a.bc && b.bc {
		a, b = vec[A]{v: []A{a.s}}, vec[B]{v: []B{b.s}}
	}
	n := len(out)
	switch {
	case a.bc:
		x, y := int64(a.s), b.v[:n]
		switch op {
		case opAdd:
			for i := range out {
				out[i] = x + int64(y[i])
			}
		case opSub:
			for i := range out {
				out[i] = x - int64(y[i])
			}
		case opMul:
			for i := range out {
				out[i] = x * int64(y[i])
			}
		}
	case b.bc:
		x, y := a.v[:n], int64(b.s)
		switch op {
		case opAdd:
			for i := range out {
				out[i] = int64(x[i]) + y
			}
		case opSub:
			for i := range out {
				out[i] = int64(x[i]) - y
			}
		case opMul:
			for i := range out {
				out[i] = int64(x[i]) * y
			}
		}
	default:
		x, y := a.v[:n], b.v[:n]
		switch op {
		case opAdd:
			for i := range out {
				out[i] = int64(x[i]) + int64(y[i])
			}
		case opSub:
			for i := range out {
				out[i] = int64(x[i]) - int64(y[i])
			}
		case opMul:
			for i := range out {
				out[i] = int64(x[i]) * int64(y[i])
			}
		}
	}
}
