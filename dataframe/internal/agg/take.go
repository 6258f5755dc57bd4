package agg

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	rowbuf "github.com/shoal-data/shoal/dataframe/internal/distinct/rows"
	"github.com/shoal-data/shoal/dataframe/internal/sortk"
)

// take returns the rows of arr in order (arr itself, retained, when order
// is nil).
func take(ctx context.Context, mem memory.Allocator, arr arrow.Array, order []uint32) (arrow.Array, error) {
	if order == nil {
		arr.Retain()
		return arr, nil
	}
	bm, boff := rowbuf.Validity(arr)
	var valid []bool
	if bm != nil {
		valid = make([]bool, len(order))
		for j, r := range order {
			valid[j] = rowbuf.Bit(bm, boff+int(r))
		}
	}
	t := arr.DataType()
	switch t.ID() {
	case arrow.INT8, arrow.UINT8:
		return takeFixed[uint8](mem, arr, valid, order), nil
	case arrow.INT16, arrow.UINT16:
		return takeFixed[uint16](mem, arr, valid, order), nil
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32, arrow.TIME32:
		return takeFixed[uint32](mem, arr, valid, order), nil
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		return takeFixed[uint64](mem, arr, valid, order), nil
	case arrow.BOOL:
		b := make([]uint8, len(order))
		boolsOfRows(arr, order, b)
		return boolArray(mem, b, valid, nil), nil
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		v := newStringView(arr)
		strs := make([]string, len(order))
		for j, r := range order {
			if valid == nil || valid[j] {
				strs[j] = v.str(int(r))
			}
		}
		return stringArray(mem, t, strs, valid, nil), nil
	case arrow.DICTIONARY:
		d := arr.(*array.Dictionary)
		idx, err := take(ctx, mem, d.Indices(), order)
		if err != nil {
			return nil, err
		}
		defer idx.Release()
		data := array.NewDataWithDictionary(t, len(order), idx.Data().Buffers(), idx.NullN(), 0, d.Data().Dictionary().(*array.Data))
		defer data.Release()
		return array.MakeFromData(data), nil
	}
	// Other types (only HashPartition meets them): Arrow's take kernel.
	ib, iv := rowbuf.NewBuffer[uint32](mem, len(order))
	copy(iv, order)
	indices := rowbuf.MakeArray(arrow.PrimitiveTypes.Uint32, len(order), []*memory.Buffer{nil, ib}, 0)
	defer indices.Release()
	return compute.TakeArray(compute.WithAllocator(ctx, mem), arr, indices)
}

func takeFixed[T any](mem memory.Allocator, arr arrow.Array, valid []bool, order []uint32) arrow.Array {
	vals := rowbuf.Values[T](arr)
	buf, out := rowbuf.NewBuffer[T](mem, len(order))
	for j, r := range order {
		out[j] = vals[r]
	}
	vbuf, nulls := rowbuf.ValidityFrom(mem, valid)
	return rowbuf.MakeArray(arr.DataType(), len(order), []*memory.Buffer{vbuf, buf}, nulls)
}

func boolsOfRows(arr arrow.Array, rows []uint32, out []uint8) {
	d := arr.Data()
	bm := d.Buffers()[1].Bytes()
	off := d.Offset()
	for j, r := range rows {
		i := off + int(r)
		out[j] = (bm[i>>3] >> (i & 7)) & 1
	}
}

// sortedRows returns the rows of keep (every row when keep is nil) in
// the order of the key columns, ascending, nulls last. One key is sorted
// here; several with the radix sort of sortk (a comparison sort of tens
// of millions of multi-column string keys takes minutes).
func sortedRows(ctx context.Context, keyCols []arrow.Array, keep []uint32, rows int) ([]uint32, error) {
	if len(keyCols) == 1 {
		order := keep
		if order == nil {
			order = make([]uint32, rows)
			for i := range order {
				order[i] = uint32(i)
			}
		}
		sortRows(keyCols, order)
		return order, nil
	}
	fields := make([]arrow.Field, len(keyCols))
	keys := make([]sortk.SortKey, len(keyCols))
	for i, c := range keyCols {
		name := fmt.Sprintf("k%d", i)
		fields[i] = arrow.Field{Name: name, Type: c.DataType(), Nullable: true}
		keys[i] = sortk.SortKey{Column: name}
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), keyCols, int64(rows))
	defer rec.Release()
	idx, err := sortk.SortIndices(ctx, rec, keys)
	if err != nil {
		return nil, err
	}
	if keep != nil {
		wanted := make([]bool, rows)
		for _, r := range keep {
			wanted[r] = true
		}
		out := keep[:0]
		for _, r := range idx {
			if wanted[r] {
				out = append(out, uint32(r))
			}
		}
		return out, nil
	}
	out := make([]uint32, len(idx))
	for i, r := range idx {
		out[i] = uint32(r)
	}
	return out, nil
}

// sortRows sorts rows by the key columns, ascending, nulls last; NaN comes
// after every number and before null.
func sortRows(keyCols []arrow.Array, rows []uint32) {
	cmps := make([]func(a, b uint32) int, len(keyCols))
	for i, c := range keyCols {
		cmps[i] = comparator(c)
	}
	if len(cmps) == 1 {
		if sortOneKey(keyCols[0], rows) {
			return
		}
		slices.SortFunc(rows, cmps[0])
		return
	}
	slices.SortFunc(rows, func(a, b uint32) int {
		for _, c := range cmps {
			if r := c(a, b); r != 0 {
				return r
			}
		}
		return cmp.Compare(a, b)
	})
}

// comparator returns a function comparing rows a and b of col.
func comparator(col arrow.Array) func(a, b uint32) int {
	bm, boff := rowbuf.Validity(col)
	var strs []string
	var strValid []bool
	if c := classify(col.DataType()); c == classString || c == classDict {
		var l strLoader
		strs, strValid = l.load(col, rowRange(0, col.Len()))
	}
	isNull := func(r uint32) bool {
		if strs != nil {
			return strValid != nil && !strValid[r]
		}
		return bm != nil && !rowbuf.Bit(bm, boff+int(r))
	}
	var vcmp func(a, b uint32) int
	switch col.DataType().ID() {
	case arrow.INT8:
		vcmp = valueCmp(rowbuf.Values[int8](col))
	case arrow.UINT8:
		vcmp = valueCmp(rowbuf.Values[uint8](col))
	case arrow.INT16:
		vcmp = valueCmp(rowbuf.Values[int16](col))
	case arrow.UINT16:
		vcmp = valueCmp(rowbuf.Values[uint16](col))
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		vcmp = valueCmp(rowbuf.Values[int32](col))
	case arrow.UINT32:
		vcmp = valueCmp(rowbuf.Values[uint32](col))
	case arrow.INT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		vcmp = valueCmp(rowbuf.Values[int64](col))
	case arrow.UINT64:
		vcmp = valueCmp(rowbuf.Values[uint64](col))
	case arrow.FLOAT32:
		vcmp = nanLast(rowbuf.Values[float32](col), valueCmp(rowbuf.Values[float32](col)))
	case arrow.FLOAT64:
		vcmp = nanLast(rowbuf.Values[float64](col), valueCmp(rowbuf.Values[float64](col)))
	case arrow.BOOL:
		b := make([]uint8, col.Len())
		rowbuf.Bools(col, 0, col.Len(), b)
		vcmp = valueCmp(b)
	default:
		vcmp = func(a, b uint32) int { return cmp.Compare(strs[a], strs[b]) }
	}
	return func(a, b uint32) int {
		na, nb := isNull(a), isNull(b)
		switch {
		case na && nb:
			return 0
		case na:
			return 1
		case nb:
			return -1
		}
		return vcmp(a, b)
	}
}

func valueCmp[T cmp.Ordered](vals []T) func(a, b uint32) int {
	return func(a, b uint32) int { return cmp.Compare(vals[a], vals[b]) }
}

func nanLast[T float](vals []T, c func(a, b uint32) int) func(a, b uint32) int {
	return func(a, b uint32) int {
		x, y := vals[a], vals[b]
		xn, yn := x != x, y != y
		switch {
		case xn && yn:
			return 0
		case xn:
			return 1
		case yn:
			return -1
		}
		return c(a, b)
	}
}

// sortOneKey sorts rows by one key column through sort keys computed once
// per row (no per-comparison null checks or indirection), nulls last. It
// reports false for a type it does not handle.
func sortOneKey(col arrow.Array, rows []uint32) bool {
	var nonNull, nulls []uint32
	switch c := classify(col.DataType()); c {
	case classString, classDict:
		var l strLoader
		strs, valid := l.load(col, rowRange(0, col.Len()))
		keyed := make([]strKeyed, 0, len(rows))
		for _, r := range rows {
			if valid != nil && !valid[r] {
				nulls = append(nulls, r)
				continue
			}
			keyed = append(keyed, newStrKeyed(strs[r], r))
		}
		slices.SortFunc(keyed, compareStrKeyed)
		nonNull = rows[:0]
		for _, k := range keyed {
			nonNull = append(nonNull, k.r)
		}
	case classInt, classUint, classFloat, classBool:
		keys := orderedBits(col)
		bm, boff := rowbuf.Validity(col)
		keyed := make([]intKeyed, 0, len(rows))
		for _, r := range rows {
			if bm != nil && !rowbuf.Bit(bm, boff+int(r)) {
				nulls = append(nulls, r)
				continue
			}
			keyed = append(keyed, intKeyed{keys[r], r})
		}
		slices.SortFunc(keyed, func(a, b intKeyed) int { return cmp.Compare(a.k, b.k) })
		nonNull = rows[:0]
		for _, k := range keyed {
			nonNull = append(nonNull, k.r)
		}
	default:
		return false
	}
	copy(rows[len(nonNull):], nulls)
	return true
}

// strKeyed is a string to sort with its first 16 bytes as big-endian
// words, so that most comparisons need not read the string.
type strKeyed struct {
	hi, lo uint64
	s      string
	r      uint32
}

func newStrKeyed(s string, r uint32) strKeyed {
	var b [16]byte
	copy(b[:], s)
	return strKeyed{hi: binary.BigEndian.Uint64(b[:8]), lo: binary.BigEndian.Uint64(b[8:]), s: s, r: r}
}

// compareStrKeyed orders strings bytewise. Equal zero-padded prefixes mean
// that the shorter string is a prefix of the longer, unless both go on
// past 16 bytes.
func compareStrKeyed(a, b strKeyed) int {
	if a.hi != b.hi {
		return cmp.Compare(a.hi, b.hi)
	}
	if a.lo != b.lo {
		return cmp.Compare(a.lo, b.lo)
	}
	if len(a.s) > 16 && len(b.s) > 16 {
		return cmp.Compare(a.s[16:], b.s[16:])
	}
	return cmp.Compare(len(a.s), len(b.s))
}

type intKeyed struct {
	k uint64
	r uint32
}

// orderedBits maps the values of a numeric or boolean column to uint64s in
// the same order (NaN after every number).
func orderedBits(col arrow.Array) []uint64 {
	out := make([]uint64, col.Len())
	switch col.DataType().ID() {
	case arrow.INT8:
		signedBits(rowbuf.Values[int8](col), out)
	case arrow.INT16:
		signedBits(rowbuf.Values[int16](col), out)
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		signedBits(rowbuf.Values[int32](col), out)
	case arrow.INT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		signedBits(rowbuf.Values[int64](col), out)
	case arrow.UINT8:
		unsignedBits(rowbuf.Values[uint8](col), out)
	case arrow.UINT16:
		unsignedBits(rowbuf.Values[uint16](col), out)
	case arrow.UINT32:
		unsignedBits(rowbuf.Values[uint32](col), out)
	case arrow.UINT64:
		unsignedBits(rowbuf.Values[uint64](col), out)
	case arrow.FLOAT32:
		floatBits(rowbuf.Values[float32](col), out)
	case arrow.FLOAT64:
		floatBits(rowbuf.Values[float64](col), out)
	case arrow.BOOL:
		b := make([]uint8, col.Len())
		rowbuf.Bools(col, 0, col.Len(), b)
		unsignedBits(b, out)
	}
	return out
}

func signedBits[T signed](vals []T, out []uint64) {
	for i, v := range vals {
		out[i] = uint64(int64(v)) ^ (1 << 63)
	}
}

func unsignedBits[T unsigned](vals []T, out []uint64) {
	for i, v := range vals {
		out[i] = uint64(v)
	}
}

func floatBits[T float](vals []T, out []uint64) {
	for i, v := range vals {
		f := float64(v)
		switch {
		case f != f:
			out[i] = math.MaxUint64
			continue
		case f == 0:
			f = 0
		}
		b := math.Float64bits(f)
		if b>>63 != 0 {
			b = ^b
		} else {
			b |= 1 << 63
		}
		out[i] = b
	}
}
