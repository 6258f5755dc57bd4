package expr

import (
	"context"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// isIn computes IsIn against the literal values of n.
func (ev *Evaluator) isIn(ctx context.Context, n *node, a datum) (datum, error) {
	if a.isNull() {
		return nullDatum(ev.mem, boolType), nil
	}
	var lits []scalar
	for _, v := range n.args[1:] {
		if v.n.lit.kind != litNull {
			lits = append(lits, v.n.lit)
		}
	}
	t := a.typ()
	if isStringType(t) {
		set := make(map[string]struct{}, len(lits))
		for _, l := range lits {
			set[l.s] = struct{}{}
		}
		member := func(arr arrow.Array) []bool {
			out := make([]bool, arr.Len())
			eachString(arr, func(i int, v []byte) { _, out[i] = set[b2s(v)] })
			return out
		}
		if t.ID() == arrow.DICTIONARY {
			return ev.onDictionary(a, member), nil
		}
		return ev.boolsResult(a, member(a.arr)), nil
	}
	rows := a.arr.Len()
	buf, bm := allocBitmap(ev.mem, rows)
	set1 := func(i int) { bm[i>>3] |= 1 << (i & 7) }
	switch {
	case t.ID() == arrow.BOOL:
		var hasT, hasF bool
		for _, l := range lits {
			hasT = hasT || l.b
			hasF = hasF || !l.b
		}
		vals, off := bitsOf(a.arr)
		for i := 0; i < rows; i++ {
			if bitutil.BitIsSet(vals, off+i) {
				if hasT {
					set1(i)
				}
			} else if hasF {
				set1(i)
			}
		}
	case isFloat(t):
		set := make(map[float64]struct{}, len(lits))
		for _, l := range lits {
			set[litFloat(l)] = struct{}{}
		}
		for i, v := range asFloat64s(a.arr) {
			if _, ok := set[v]; ok {
				set1(i)
			}
		}
	case t.ID() == arrow.UINT64:
		set := make(map[uint64]struct{}, len(lits))
		for _, l := range lits {
			switch {
			case l.kind == litUint:
				set[l.u] = struct{}{}
			case l.kind == litInt && l.i >= 0:
				set[uint64(l.i)] = struct{}{}
			case (l.kind == litFloat64 || l.kind == litFloat32) && l.f >= 0 && l.f < 1<<64 && l.f == math.Trunc(l.f):
				set[uint64(l.f)] = struct{}{}
			}
		}
		for i, v := range values[uint64](a.arr) {
			if _, ok := set[v]; ok {
				set1(i)
			}
		}
	default: // integers, dates, timestamps, durations: compare as int64
		var u arrow.TimeUnit
		temporal := !isInt(t)
		if temporal {
			u = cmpUnit(t)
			if t.ID() == arrow.DURATION {
				u = timeUnitOf(t)
			}
		}
		set := make(map[int64]struct{}, len(lits))
		for _, l := range lits {
			if v, ok := litInt64(l, t, u); ok {
				set[v] = struct{}{}
			}
		}
		var vals []int64
		if temporal && t.ID() != arrow.DATE32 {
			vals = inUnit(a.arr, u)
		} else {
			vals = asInt64s(a.arr)
		}
		if t.ID() == arrow.DATE32 {
			vals = scale(vals, 86400) // date32 values in seconds, as u
		}
		if len(set) <= 8 { // a short list: compare with each value
			list := make([]int64, 0, len(set))
			for v := range set {
				list = append(list, v)
			}
			for i, v := range vals {
				for _, c := range list {
					if v == c {
						bm[i>>3] |= 1 << (i & 7)
						break
					}
				}
			}
			break
		}
		for i, v := range vals {
			if _, ok := set[v]; ok {
				set1(i)
			}
		}
	}
	valid, nulls := copyValidity(ev.mem, a.arr)
	return datum{arr: newArray(boolType, rows, valid, buf, nulls), bcast: a.bcast}, nil
}

func litFloat(l scalar) float64 {
	switch l.kind {
	case litInt:
		return float64(l.i)
	case litUint:
		return float64(l.u)
	}
	return l.f
}

// litInt64 converts a literal to the int64 a column of type t holds (in time
// unit u for temporal types); false when no value of the column can equal it.
func litInt64(l scalar, t arrow.DataType, u arrow.TimeUnit) (int64, bool) {
	switch l.kind {
	case litInt:
		return l.i, isInt(t)
	case litFloat32, litFloat64:
		if isInt(t) && l.f == math.Trunc(l.f) && l.f >= -(1<<63) && l.f < 1<<63 {
			return int64(l.f), true
		}
	case litTime:
		if t.ID() == arrow.DURATION || isInt(t) {
			return 0, false
		}
		// nanoseconds to unit u, exactly
		f := int64(1e9) / unitsPerSecond(u)
		if l.i%f != 0 {
			return 0, false
		}
		return l.i / f, true
	case litDate:
		if t.ID() == arrow.DURATION || isInt(t) {
			return 0, false
		}
		return l.i * 86400 * unitsPerSecond(u), true
	case litDuration:
		if t.ID() != arrow.DURATION {
			return 0, false
		}
		f := int64(1e9) / unitsPerSecond(u)
		if l.i%f != 0 {
			return 0, false
		}
		return l.i / f, true
	}
	return 0, false
}

// boolsResult packs one boolean per row with the validity of a.
func (ev *Evaluator) boolsResult(a datum, vals []bool) datum {
	n := len(vals)
	buf, bm := allocBitmap(ev.mem, n)
	for i, v := range vals {
		if v {
			bm[i>>3] |= 1 << (i & 7)
		}
	}
	valid, nulls := copyValidity(ev.mem, a.arr)
	return datum{arr: newArray(boolType, n, valid, buf, nulls), bcast: a.bcast}
}
