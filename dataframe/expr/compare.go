package expr

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// flip gives the operator with its operands swapped: a < b is b > a.
func flip(op string) string {
	switch op {
	case opLt:
		return opGt
	case opLe:
		return opGe
	case opGt:
		return opLt
	case opGe:
		return opLe
	}
	return op
}

// cmpResult turns a three-way comparison (2 for unordered, as NaN) into the
// result of op.
func cmpResult(op string, c int) bool {
	switch op {
	case opEq:
		return c == 0
	case opNe:
		return c != 0
	case opLt:
		return c == -1
	case opLe:
		return c == -1 || c == 0
	case opGt:
		return c == 1
	case opGe:
		return c == 1 || c == 0
	}
	return false
}

var boolType = arrow.FixedWidthTypes.Boolean

// boolResult wraps a value bitmap of n bits with the validity of the
// non-broadcast operands.
func (ev *Evaluator) boolResult(vals *memory.Buffer, n int, bc bool, ops ...datum) datum {
	valid, nulls := andValidity(ev.mem, n, nonBcast(ops...)...)
	return datum{arr: newArray(boolType, n, valid, vals, nulls), bcast: bc}
}

// constBool is true or false on every row, null where a is null.
func (ev *Evaluator) constBool(v bool, a datum) datum {
	n := a.arr.Len()
	buf, bm := allocBitmap(ev.mem, n)
	if v {
		bitutil.SetBitsTo(bm, 0, int64(n), true)
	}
	return ev.boolResult(buf, n, a.bcast, a)
}

func (ev *Evaluator) compare(ctx context.Context, op string, a, b datum) (datum, error) {
	if a.isNull() || b.isNull() {
		return nullDatum(ev.mem, boolType), nil
	}
	if a.bcast && !b.bcast {
		a, b = b, a
		op = flip(op)
	}
	at, bt := a.typ(), b.typ()
	switch {
	case isStringType(at) && isStringType(bt):
		return ev.compareStrings(ctx, op, a, b)
	case at.ID() == arrow.BOOL && bt.ID() == arrow.BOOL:
		return ev.compareBools(op, a, b), nil
	case isNumeric(at) && isNumeric(bt):
		return ev.compareNumbers(op, a, b), nil
	case isInstant(at) && isInstant(bt):
		if at.ID() == arrow.DATE32 && bt.ID() == arrow.DATE32 {
			return ev.compareInts(op, a, b, values[int32](a.arr), values[int32](b.arr)), nil
		}
		u := finerUnit(cmpUnit(at), cmpUnit(bt))
		return ev.compareScaled(op, a, b, unitFactor(at, u), unitFactor(bt, u)), nil
	case at.ID() == arrow.DURATION && bt.ID() == arrow.DURATION:
		u := finerUnit(timeUnitOf(at), timeUnitOf(bt))
		return ev.compareScaled(op, a, b, unitFactor(at, u), unitFactor(bt, u)), nil
	}
	return datum{}, fmt.Errorf("internal error: cannot compare %s with %s", typeName(at), typeName(bt))
}

// cmpUnit is the time unit instants of type t are compared in.
func cmpUnit(t arrow.DataType) arrow.TimeUnit {
	switch t.ID() {
	case arrow.TIMESTAMP:
		return t.(*arrow.TimestampType).Unit
	case arrow.DATE64:
		return arrow.Millisecond
	}
	return arrow.Second
}

// compareInts compares two operands of one Go type.
func compareInts[T cmp.Ordered](ev *Evaluator, op string, a, b datum, av, bv []T) datum {
	n := ev.length(a, b)
	buf, bm := allocBitmap(ev.mem, n)
	cmpKernel(op, mkvec(av, a.bcast), mkvec(bv, b.bcast), bm, n)
	return ev.boolResult(buf, n, allBcast(a, b), a, b)
}

func (ev *Evaluator) compareInts(op string, a, b datum, av, bv []int32) datum {
	return compareInts(ev, op, a, b, av, bv)
}

// compareScaled compares integer-valued operands (temporal values) after
// multiplying a by fa and b by fb. A broadcast b is brought to a's unit
// instead when that is exact, so that the column is not rescaled.
func (ev *Evaluator) compareScaled(op string, a, b datum, fa, fb int64) datum {
	av := asInt64s(a.arr)
	bv := asInt64s(b.arr)
	if b.bcast && !a.bcast && fa > 1 {
		// a*fa OP L  <=>  a OP' q, with L = b*fb.
		l := bv[0] * fb
		q := floorDivInt(l, fa)
		op2, c := rationalOp(op, l%fa == 0)
		if c >= 0 {
			return ev.constBool(c == 1, a)
		}
		return compareInts(ev, op2, a, b, av, []int64{q})
	}
	return compareInts(ev, op, a, b, scale(av, fa), scale(bv, fb))
}

// rationalOp rewrites x OP r, for integer x and a rational r with floor q,
// as x OP' q. exact says r == q. c is 0 or 1 for a constant result, else -1.
func rationalOp(op string, exact bool) (string, int) {
	if exact {
		return op, -1
	}
	switch op {
	case opEq:
		return op, 0
	case opNe:
		return op, 1
	case opLt, opLe:
		return opLe, -1
	}
	return opGt, -1
}

// compareNumbers compares numbers of any types exactly.
func (ev *Evaluator) compareNumbers(op string, a, b datum) datum {
	at, bt := a.typ(), b.typ()
	wide := func(t arrow.DataType) bool { // not exactly representable in float64
		return t.ID() == arrow.INT64 || t.ID() == arrow.UINT64
	}
	switch {
	case at.ID() == arrow.FLOAT32 && bt.ID() == arrow.FLOAT32:
		return compareInts(ev, op, a, b, values[float32](a.arr), values[float32](b.arr))
	case isFloat(at) && isFloat(bt), isFloat(at) && !wide(bt), isFloat(bt) && !wide(at):
		return compareInts(ev, op, a, b, asFloat64s(a.arr), asFloat64s(b.arr))
	case isFloat(bt) && b.bcast && at.ID() == arrow.INT64:
		// x OP f for an int64 column and a float literal: compare with an
		// integer bound.
		f := asFloat64s(b.arr)[0]
		op2, q, c := intVsFloat(op, f)
		if c >= 0 {
			return ev.constBool(c == 1, a)
		}
		return compareInts(ev, op2, a, b, values[int64](a.arr), []int64{q})
	case isFloat(at) && b.bcast && isInt(bt):
		// An integer literal exactly representable as a float64.
		var exact bool
		if bt.ID() == arrow.UINT64 {
			exact = values[uint64](b.arr)[0] <= 1<<53
		} else {
			i := asInt64s(b.arr)[0]
			exact = i >= -(1<<53) && i <= 1<<53
		}
		if exact {
			return compareInts(ev, op, a, b, asFloat64s(a.arr), asFloat64s(b.arr))
		}
	case isInt(at) && isInt(bt):
		if b.bcast && !a.bcast && bt.ID() == arrow.INT64 {
			// A narrow column against an integer literal: compare in the
			// column's own type when the literal fits, else the result is
			// constant.
			if d, ok := ev.compareNarrow(op, a, b, values[int64](b.arr)[0]); ok {
				return d
			}
		}
		au, bu := at.ID() == arrow.UINT64, bt.ID() == arrow.UINT64
		switch {
		case !au && !bu:
			return compareInts(ev, op, a, b, asInt64s(a.arr), asInt64s(b.arr))
		case au && (bu || isUnsigned(bt)), bu && isUnsigned(at):
			return compareInts(ev, op, a, b, asUint64s(a.arr), asUint64s(b.arr))
		case au && fitsInt64(values[uint64](a.arr)):
			return compareInts(ev, op, a, b, asInt64s(a.arr), asInt64s(b.arr))
		case bu && fitsInt64(values[uint64](b.arr)):
			return compareInts(ev, op, a, b, asInt64s(a.arr), asInt64s(b.arr))
		}
	}
	// Exact comparison of wide integers with floats or of signed with large
	// unsigned integers, row by row.
	n := ev.length(a, b)
	buf, bm := allocBitmap(ev.mem, n)
	x, y := exactNums(a), exactNums(b)
	get := func(v []exactNum, i int) exactNum {
		if len(v) == 1 {
			return v[0]
		}
		return v[i]
	}
	for i := 0; i < n; i++ {
		if cmpResult(op, cmpExact(get(x, i), get(y, i))) {
			bitutil.SetBit(bm, i)
		}
	}
	return ev.boolResult(buf, n, allBcast(a, b), a, b)
}

func fitsInt64(v []uint64) bool {
	for _, x := range v {
		if x > math.MaxInt64 {
			return false
		}
	}
	return true
}

// intVsFloat rewrites x OP f, x an int64 and f a float64, as x OP' q on
// int64; c is 0 or 1 when the result is constant, else -1.
func intVsFloat(op string, f float64) (string, int64, int) {
	switch {
	case math.IsNaN(f):
		if op == opNe {
			return op, 0, 1
		}
		return op, 0, 0
	case f >= 1<<63: // beyond every int64
		return op, 0, b2i(op == opLt || op == opLe || op == opNe)
	case f < -(1 << 63):
		return op, 0, b2i(op == opGt || op == opGe || op == opNe)
	}
	fl := math.Floor(f)
	op2, c := rationalOp(op, fl == f)
	return op2, int64(fl), c
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// exactNum is a number of any type, for exact mixed comparisons.
type exactNum struct {
	kind uint8 // 0 int64, 1 uint64, 2 float64
	i    int64
	u    uint64
	f    float64
}

func exactNums(d datum) []exactNum {
	t := d.typ()
	n := d.arr.Len()
	out := make([]exactNum, n)
	switch {
	case t.ID() == arrow.UINT64:
		for i, v := range values[uint64](d.arr) {
			out[i] = exactNum{kind: 1, u: v}
		}
	case isFloat(t):
		for i, v := range asFloat64s(d.arr) {
			out[i] = exactNum{kind: 2, f: v}
		}
	default:
		for i, v := range asInt64s(d.arr) {
			out[i] = exactNum{i: v}
		}
	}
	return out
}

// cmpExact compares two numbers exactly: -1, 0, 1, or 2 when unordered.
func cmpExact(x, y exactNum) int {
	if x.kind == 2 && y.kind == 2 {
		if math.IsNaN(x.f) || math.IsNaN(y.f) {
			return 2
		}
		return cmp.Compare(x.f, y.f)
	}
	if x.kind == 2 {
		c := cmpExact(y, x)
		if c == 2 {
			return 2
		}
		return -c
	}
	switch y.kind {
	case 2: // integer against float
		f := y.f
		if math.IsNaN(f) {
			return 2
		}
		var xf float64
		if x.kind == 1 {
			xf = float64(x.u)
		} else {
			xf = float64(x.i)
		}
		if xf != f {
			return cmp.Compare(xf, f)
		}
		// Equal after rounding: f is integral; compare as integers.
		switch {
		case f >= 1<<64:
			return -1
		case f >= 1<<63:
			if x.kind == 1 {
				return cmp.Compare(x.u, uint64(f))
			}
			return -1
		case f < -(1 << 63):
			return 1
		}
		fi := int64(f)
		if x.kind == 1 {
			if fi < 0 {
				return 1
			}
			return cmp.Compare(x.u, uint64(fi))
		}
		return cmp.Compare(x.i, fi)
	case 1:
		if x.kind == 1 {
			return cmp.Compare(x.u, y.u)
		}
		if x.i < 0 {
			return -1
		}
		return cmp.Compare(uint64(x.i), y.u)
	}
	if x.kind == 1 {
		return -cmpExact(y, x)
	}
	return cmp.Compare(x.i, y.i)
}

// cmpKernel sets bit i of out where a[i] OP b[i]; out is zeroed. At most one
// of a and b is broadcast unless n is 1.
func cmpKernel[T cmp.Ordered](op string, a, b vec[T], out []byte, n int) {
	a, b = bothScalar(a, b)
	if a.bc {
		a, b = b, a
		op = flip(op)
	}
	if b.bc {
		cmpVS(op, a.v[:n], b.s, out)
		return
	}
	switch op {
	case opGt:
		a, b, op = b, a, opLt
	case opGe:
		a, b, op = b, a, opLe
	}
	cmpVV(op, a.v[:n], b.v[:n], out)
}

func bit(b bool) byte {
	if b {
		return 1
	}
	return 0
}

func cmpVS[T cmp.Ordered](op string, a []T, s T, out []byte) {
	n := len(a)
	full := n &^ 7
	switch op {
	case opEq:
		for i := 0; i < full; i += 8 {
			x := a[i : i+8 : i+8]
			out[i>>3] = bit(x[0] == s) | bit(x[1] == s)<<1 | bit(x[2] == s)<<2 | bit(x[3] == s)<<3 |
				bit(x[4] == s)<<4 | bit(x[5] == s)<<5 | bit(x[6] == s)<<6 | bit(x[7] == s)<<7
		}
	case opNe:
		for i := 0; i < full; i += 8 {
			x := a[i : i+8 : i+8]
			out[i>>3] = bit(x[0] != s) | bit(x[1] != s)<<1 | bit(x[2] != s)<<2 | bit(x[3] != s)<<3 |
				bit(x[4] != s)<<4 | bit(x[5] != s)<<5 | bit(x[6] != s)<<6 | bit(x[7] != s)<<7
		}
	case opLt:
		for i := 0; i < full; i += 8 {
			x := a[i : i+8 : i+8]
			out[i>>3] = bit(x[0] < s) | bit(x[1] < s)<<1 | bit(x[2] < s)<<2 | bit(x[3] < s)<<3 |
				bit(x[4] < s)<<4 | bit(x[5] < s)<<5 | bit(x[6] < s)<<6 | bit(x[7] < s)<<7
		}
	case opLe:
		for i := 0; i < full; i += 8 {
			x := a[i : i+8 : i+8]
			out[i>>3] = bit(x[0] <= s) | bit(x[1] <= s)<<1 | bit(x[2] <= s)<<2 | bit(x[3] <= s)<<3 |
				bit(x[4] <= s)<<4 | bit(x[5] <= s)<<5 | bit(x[6] <= s)<<6 | bit(x[7] <= s)<<7
		}
	case opGt:
		for i := 0; i < full; i += 8 {
			x := a[i : i+8 : i+8]
			out[i>>3] = bit(x[0] > s) | bit(x[1] > s)<<1 | bit(x[2] > s)<<2 | bit(x[3] > s)<<3 |
				bit(x[4] > s)<<4 | bit(x[5] > s)<<5 | bit(x[6] > s)<<6 | bit(x[7] > s)<<7
		}
	case opGe:
		for i := 0; i < full; i += 8 {
			x := a[i : i+8 : i+8]
			out[i>>3] = bit(x[0] >= s) | bit(x[1] >= s)<<1 | bit(x[2] >= s)<<2 | bit(x[3] >= s)<<3 |
				bit(x[4] >= s)<<4 | bit(x[5] >= s)<<5 | bit(x[6] >= s)<<6 | bit(x[7] >= s)<<7
		}
	}
	for i := full; i < n; i++ {
		var r bool
		switch op {
		case opEq:
			r = a[i] == s
		case opNe:
			r = a[i] != s
		case opLt:
			r = a[i] < s
		case opLe:
			r = a[i] <= s
		case opGt:
			r = a[i] > s
		case opGe:
			r = a[i] >= s
		}
		out[i>>3] |= bit(r) << (i & 7)
	}
}

func cmpVV[T cmp.Ordered](op string, a, b []T, out []byte) {
	n := len(a)
	b = b[:n]
	full := n &^ 7
	switch op {
	case opEq:
		for i := 0; i < full; i += 8 {
			x, y := a[i:i+8:i+8], b[i:i+8:i+8]
			out[i>>3] = bit(x[0] == y[0]) | bit(x[1] == y[1])<<1 | bit(x[2] == y[2])<<2 | bit(x[3] == y[3])<<3 |
				bit(x[4] == y[4])<<4 | bit(x[5] == y[5])<<5 | bit(x[6] == y[6])<<6 | bit(x[7] == y[7])<<7
		}
	case opNe:
		for i := 0; i < full; i += 8 {
			x, y := a[i:i+8:i+8], b[i:i+8:i+8]
			out[i>>3] = bit(x[0] != y[0]) | bit(x[1] != y[1])<<1 | bit(x[2] != y[2])<<2 | bit(x[3] != y[3])<<3 |
				bit(x[4] != y[4])<<4 | bit(x[5] != y[5])<<5 | bit(x[6] != y[6])<<6 | bit(x[7] != y[7])<<7
		}
	case opLt:
		for i := 0; i < full; i += 8 {
			x, y := a[i:i+8:i+8], b[i:i+8:i+8]
			out[i>>3] = bit(x[0] < y[0]) | bit(x[1] < y[1])<<1 | bit(x[2] < y[2])<<2 | bit(x[3] < y[3])<<3 |
				bit(x[4] < y[4])<<4 | bit(x[5] < y[5])<<5 | bit(x[6] < y[6])<<6 | bit(x[7] < y[7])<<7
		}
	case opLe:
		for i := 0; i < full; i += 8 {
			x, y := a[i:i+8:i+8], b[i:i+8:i+8]
			out[i>>3] = bit(x[0] <= y[0]) | bit(x[1] <= y[1])<<1 | bit(x[2] <= y[2])<<2 | bit(x[3] <= y[3])<<3 |
				bit(x[4] <= y[4])<<4 | bit(x[5] <= y[5])<<5 | bit(x[6] <= y[6])<<6 | bit(x[7] <= y[7])<<7
		}
	}
	for i := full; i < n; i++ {
		var r bool
		switch op {
		case opEq:
			r = a[i] == b[i]
		case opNe:
			r = a[i] != b[i]
		case opLt:
			r = a[i] < b[i]
		case opLe:
			r = a[i] <= b[i]
		}
		out[i>>3] |= bit(r) << (i & 7)
	}
}

// compareBools compares booleans bitwise (false < true).
func (ev *Evaluator) compareBools(op string, a, b datum) datum {
	n := ev.length(a, b)
	x, y := boolBits(a, n), boolBits(b, n)
	buf, out := allocBitmap(ev.mem, n)
	for i := range out {
		p, q := x[i], y[i]
		var r byte
		switch op {
		case opEq:
			r = ^(p ^ q)
		case opNe:
			r = p ^ q
		case opLt:
			r = ^p & q
		case opLe:
			r = ^p | q
		case opGt:
			r = p &^ q
		case opGe:
			r = p | ^q
		}
		out[i] = r
	}
	return ev.boolResult(buf, n, allBcast(a, b), a, b)
}

// boolBits gives the values of a boolean datum as an aligned bitmap of n
// bits (a broadcast value is repeated).
func boolBits(d datum, n int) []byte {
	if d.bcast {
		out := make([]byte, bitutil.BytesForBits(int64(n)))
		if !d.isNull() && d.arr.(*array.Boolean).Value(0) {
			for i := range out {
				out[i] = 0xff
			}
		}
		return out
	}
	bm, off := bitsOf(d.arr)
	return alignedBits(bm, off, n)
}

// compareStrings compares strings byte-wise. A dictionary column against a
// literal compares the dictionary once.
func (ev *Evaluator) compareStrings(ctx context.Context, op string, a, b datum) (datum, error) {
	if b.bcast && !a.bcast && a.typ().ID() == arrow.DICTIONARY {
		s := bytesAt(b.arr, 0)
		return ev.onDictionary(a, func(dict arrow.Array) []bool {
			out := make([]bool, dict.Len())
			eachString(dict, func(i int, v []byte) { out[i] = cmpResult(op, bytes.Compare(v, s)) })
			return out
		}), nil
	}
	a, err := ev.decode(ctx, a)
	if err != nil {
		return datum{}, err
	}
	defer a.release()
	b, err = ev.decode(ctx, b)
	if err != nil {
		return datum{}, err
	}
	defer b.release()
	n := ev.length(a, b)
	buf, bm := allocBitmap(ev.mem, n)
	if b.bcast && !a.bcast {
		s := bytesAt(b.arr, 0)
		if op == opEq || op == opNe {
			if a.typ().ID() == arrow.LARGE_STRING {
				eqStrings(newStrView[int64](a.arr), b2s(s), op == opEq, bm)
			} else {
				eqStrings(newStrView[int32](a.arr), b2s(s), op == opEq, bm)
			}
		} else {
			eachString(a.arr, func(i int, v []byte) {
				if cmpResult(op, bytes.Compare(v, s)) {
					bm[i>>3] |= 1 << (i & 7)
				}
			})
		}
	} else {
		x, y := stringsOf(a), stringsOf(b)
		for i := 0; i < n; i++ {
			if cmpResult(op, bytes.Compare(x(i), y(i))) {
				bm[i>>3] |= 1 << (i & 7)
			}
		}
	}
	return ev.boolResult(buf, n, allBcast(a, b), a, b), nil
}

// eachString calls fn with every string of a utf8 or large_utf8 array (null
// slots included, usually empty).
func eachString(a arrow.Array, fn func(i int, v []byte)) {
	if a.DataType().ID() == arrow.LARGE_STRING {
		v := newStrView[int64](a)
		for i := 0; i < v.len(); i++ {
			fn(i, v.at(i))
		}
		return
	}
	v := newStrView[int32](a)
	for i := 0; i < v.len(); i++ {
		fn(i, v.at(i))
	}
}

// eqStrings sets the bits of the rows equal (or, if !eq, not equal) to s.
func eqStrings[O int32 | int64](v strView[O], s string, eq bool, bm []byte) {
	n := v.len()
	l := O(len(s))
	for i := 0; i < n; i++ {
		lo, hi := v.offs[i], v.offs[i+1]
		match := hi-lo == l && b2s(v.data[lo:hi]) == s
		if match == eq {
			bm[i>>3] |= 1 << (i & 7)
		}
	}
}

// compareNarrow compares an integer column narrower than 64 bits with an
// int64 literal without widening the column.
func (ev *Evaluator) compareNarrow(op string, a, b datum, lit int64) (datum, bool) {
	switch a.typ().ID() {
	case arrow.INT8:
		return compareNarrowT[int8](ev, op, a, b, lit, math.MinInt8, math.MaxInt8), true
	case arrow.INT16:
		return compareNarrowT[int16](ev, op, a, b, lit, math.MinInt16, math.MaxInt16), true
	case arrow.INT32:
		return compareNarrowT[int32](ev, op, a, b, lit, math.MinInt32, math.MaxInt32), true
	case arrow.UINT8:
		return compareNarrowT[uint8](ev, op, a, b, lit, 0, math.MaxUint8), true
	case arrow.UINT16:
		return compareNarrowT[uint16](ev, op, a, b, lit, 0, math.MaxUint16), true
	case arrow.UINT32:
		return compareNarrowT[uint32](ev, op, a, b, lit, 0, math.MaxUint32), true
	}
	return datum{}, false
}

func compareNarrowT[T interface {
	fixed
	cmp.Ordered
}](ev *Evaluator, op string, a, b datum, lit, lo, hi int64) datum {
	switch {
	case lit < lo: // every value is greater than the literal
		return ev.constBool(op == opGt || op == opGe || op == opNe, a)
	case lit > hi:
		return ev.constBool(op == opLt || op == opLe || op == opNe, a)
	}
	return compareInts(ev, op, a, b, values[T](a.arr), []T{T(lit)})
}

// stringsOf gives access to the strings of a utf8 or large_utf8 datum by
// row (a broadcast value for every row).
func stringsOf(d datum) func(i int) []byte {
	if d.typ().ID() == arrow.LARGE_STRING {
		v := newStrView[int64](d.arr)
		if d.bcast {
			s := v.at(0)
			return func(int) []byte { return s }
		}
		return v.at
	}
	v := newStrView[int32](d.arr)
	if d.bcast {
		s := v.at(0)
		return func(int) []byte { return s }
	}
	return v.at
}
