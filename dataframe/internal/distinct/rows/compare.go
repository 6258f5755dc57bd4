package rows

import (
	"cmp"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Comparator returns a function that compares rows a and b of col:
// ascending, or descending when desc is true, with nulls (and NaNs)
// last either way. It is for sorting few rows (groups, candidates): it is
// a closure call per comparison. It returns nil for a type it cannot
// order.
func Comparator(col arrow.Array, desc bool) func(a, b int32) int {
	bm, off := Validity(col)
	var nan func(i int32) bool
	var vcmp func(a, b int32) int
	switch col.DataType().ID() {
	case arrow.INT8:
		vcmp = valueCmp(Values[int8](col))
	case arrow.UINT8:
		vcmp = valueCmp(Values[uint8](col))
	case arrow.INT16:
		vcmp = valueCmp(Values[int16](col))
	case arrow.UINT16:
		vcmp = valueCmp(Values[uint16](col))
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		vcmp = valueCmp(Values[int32](col))
	case arrow.UINT32:
		vcmp = valueCmp(Values[uint32](col))
	case arrow.INT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		vcmp = valueCmp(Values[int64](col))
	case arrow.UINT64:
		vcmp = valueCmp(Values[uint64](col))
	case arrow.FLOAT32:
		v := Values[float32](col)
		vcmp, nan = valueCmp(v), func(i int32) bool { return v[i] != v[i] }
	case arrow.FLOAT64:
		v := Values[float64](col)
		vcmp, nan = valueCmp(v), func(i int32) bool { return v[i] != v[i] }
	case arrow.BOOL:
		b := make([]uint8, col.Len())
		Bools(col, 0, col.Len(), b)
		vcmp = valueCmp(b)
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		v := NewStringView(col)
		vcmp = func(a, b int32) int { return strings.Compare(v.At(int(a)), v.At(int(b))) }
	case arrow.DICTIONARY:
		d := col.(*array.Dictionary)
		dict := d.Dictionary()
		if KindOf(dict.DataType()) != KindString {
			return nil
		}
		v := NewStringView(dict)
		dbm, doff := Validity(dict)
		idx := dictIndices(d)
		vcmp = func(a, b int32) int { return strings.Compare(v.At(idx[a]), v.At(idx[b])) }
		if dbm != nil {
			nan = func(i int32) bool { return !Bit(dbm, doff+idx[i]) }
		}
	default:
		return nil
	}
	isNull := func(i int32) bool {
		return (bm != nil && !Bit(bm, off+int(i))) || (nan != nil && nan(i))
	}
	return func(a, b int32) int {
		na, nb := isNull(a), isNull(b)
		switch {
		case na && nb:
			return 0
		case na:
			return 1
		case nb:
			return -1
		}
		if desc {
			return vcmp(b, a)
		}
		return vcmp(a, b)
	}
}

func valueCmp[T cmp.Ordered](v []T) func(a, b int32) int {
	return func(a, b int32) int { return cmp.Compare(v[a], v[b]) }
}

// dictIndices returns the indices of a dictionary array as ints.
func dictIndices(d *array.Dictionary) []int {
	idx := d.Indices()
	out := make([]int, idx.Len())
	switch idx.DataType().ID() {
	case arrow.INT8:
		copyInts(out, Values[int8](idx))
	case arrow.UINT8:
		copyInts(out, Values[uint8](idx))
	case arrow.INT16:
		copyInts(out, Values[int16](idx))
	case arrow.UINT16:
		copyInts(out, Values[uint16](idx))
	case arrow.INT32:
		copyInts(out, Values[int32](idx))
	case arrow.UINT32:
		copyInts(out, Values[uint32](idx))
	case arrow.INT64:
		copyInts(out, Values[int64](idx))
	case arrow.UINT64:
		copyInts(out, Values[uint64](idx))
	}
	return out
}

func copyInts[T Integer](dst []int, src []T) {
	for i, x := range src {
		dst[i] = int(x)
	}
}
