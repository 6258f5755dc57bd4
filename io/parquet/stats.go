package parquet

// This file decides, from min/max statistics, which row groups and pages
// may hold rows that satisfy the filter. It must never exclude one that
// might: when in doubt (no statistics, NaN, an order it does not know) it
// keeps the data.

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/parquet-go/parquet-go/format"
)

type op uint8

const (
	opEq op = iota
	opNe
	opLt
	opLe
	opGt
	opGe
)

var ops = map[string]op{"==": opEq, "=": opEq, "!=": opNe, "<>": opNe, "<": opLt, "<=": opLe, ">": opGt, ">=": opGe}

type scalarKind uint8

const (
	kindNone scalarKind = iota
	kindNum
	kindStr
	kindBool
	kindTime
)

func (k scalarKind) String() string {
	switch k {
	case kindNum:
		return "a number"
	case kindStr:
		return "a string"
	case kindBool:
		return "a bool"
	case kindTime:
		return "a time.Time"
	}
	return "nothing comparable"
}

// scalar is a value in a domain where statistics and bounds compare
// exactly: numbers as rationals, text as bytes, times as instants.
type scalar struct {
	kind scalarKind
	num  *big.Rat // finite numbers
	inf  int      // -1 or +1 for infinite numbers (num is nil)
	nan  bool
	str  string
	b    bool
	t    time.Time
}

func numScalar(r *big.Rat) scalar { return scalar{kind: kindNum, num: r} }

func floatScalar(f float64) scalar {
	switch {
	case math.IsNaN(f):
		return scalar{kind: kindNum, nan: true}
	case math.IsInf(f, 1):
		return scalar{kind: kindNum, inf: 1}
	case math.IsInf(f, -1):
		return scalar{kind: kindNum, inf: -1}
	}
	return numScalar(new(big.Rat).SetFloat64(f))
}

func intScalar(i int64) scalar { return numScalar(new(big.Rat).SetInt64(i)) }

func uintScalar(u uint64) scalar {
	return numScalar(new(big.Rat).SetInt(new(big.Int).SetUint64(u)))
}

func decimalScalar(unscaled *big.Int, scale int32) scalar {
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)
	return numScalar(new(big.Rat).SetFrac(unscaled, den))
}

// compare orders a and b; ok is false when they do not compare (NaN,
// different kinds).
func compare(a, b scalar) (c int, ok bool) {
	if a.kind != b.kind || a.kind == kindNone {
		return 0, false
	}
	switch a.kind {
	case kindNum:
		if a.nan || b.nan {
			return 0, false
		}
		if a.inf != 0 || b.inf != 0 {
			ai, bi := a.inf, b.inf
			switch {
			case ai == bi:
				return 0, true
			case ai < bi:
				return -1, true
			}
			return 1, true
		}
		return a.num.Cmp(b.num), true
	case kindStr:
		return strings.Compare(a.str, b.str), true
	case kindBool:
		switch {
		case a.b == b.b:
			return 0, true
		case !a.b:
			return -1, true
		}
		return 1, true
	case kindTime:
		return a.t.Compare(b.t), true
	}
	return 0, false
}

// bound is a Bound checked and put in the domain of its column.
type bound struct {
	Bound
	op  op
	val scalar
}

func (b *bound) String() string { return fmt.Sprintf("%s %s %v", b.Column, b.Op, b.Value) }

// boundValue puts a filter value in its comparison domain.
func boundValue(v any) (scalar, bool) {
	switch x := v.(type) {
	case int:
		return intScalar(int64(x)), true
	case int8:
		return intScalar(int64(x)), true
	case int16:
		return intScalar(int64(x)), true
	case int32:
		return intScalar(int64(x)), true
	case int64:
		return intScalar(x), true
	case uint:
		return uintScalar(uint64(x)), true
	case uint8:
		return uintScalar(uint64(x)), true
	case uint16:
		return uintScalar(uint64(x)), true
	case uint32:
		return uintScalar(uint64(x)), true
	case uint64:
		return uintScalar(x), true
	case float32:
		return floatScalar(float64(x)), true
	case float64:
		return floatScalar(x), true
	case string:
		return scalar{kind: kindStr, str: x}, true
	case []byte:
		return scalar{kind: kindStr, str: string(x)}, true
	case bool:
		return scalar{kind: kindBool, b: x}, true
	case time.Time:
		return scalar{kind: kindTime, t: x}, true
	}
	return scalar{}, false
}

// domainOf returns how values of an Arrow type compare; kindNone for types
// whose statistics are not used.
func domainOf(t arrow.DataType) scalarKind {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128:
		return kindNum
	case arrow.STRING, arrow.BINARY, arrow.FIXED_SIZE_BINARY, arrow.DICTIONARY:
		return kindStr
	case arrow.BOOL:
		return kindBool
	case arrow.DATE32, arrow.TIMESTAMP:
		return kindTime
	}
	return kindNone
}

// stats are the statistics of a column chunk or page.
type stats struct {
	min, max scalar
	minMax   bool // min and max are known and usable
	allNull  bool // every value is null
}

// mayMatch reports whether data with statistics s may hold a row for which
// "value op b.val" is true. Nulls satisfy no bound.
func (b *bound) mayMatch(s stats) bool {
	if s.allNull {
		return false
	}
	if !s.minMax || b.val.kind == kindNone {
		return true
	}
	if b.val.kind == kindNum && b.val.nan {
		return true
	}
	cmin, ok1 := compare(s.min, b.val)
	cmax, ok2 := compare(s.max, b.val)
	if !ok1 || !ok2 {
		return true
	}
	switch b.op {
	case opEq:
		return cmin <= 0 && cmax >= 0
	case opNe:
		return !(cmin == 0 && cmax == 0)
	case opLt:
		return cmin < 0
	case opLe:
		return cmin <= 0
	case opGt:
		return cmax > 0
	case opGe:
		return cmax >= 0
	}
	return true
}

// statDecoder turns the plain-encoded min/max bytes of a column into
// scalars; nil when the column's statistics are not used.
type statDecoder func(b []byte) (scalar, bool)

// statsDecoder returns the decoder for a column, and whether the
// deprecated min/max fields (sorted by signed comparison) may be used.
func statsDecoder(c *fileColumn, t arrow.DataType) (dec statDecoder, legacyOK bool) {
	e := &c.elem
	scale, _, isDecimal := decimalInfo(e)
	switch e.Type.V {
	case format.Boolean:
		return func(b []byte) (scalar, bool) {
			if len(b) != 1 {
				return scalar{}, false
			}
			return scalar{kind: kindBool, b: b[0] != 0}, true
		}, true
	case format.Int32:
		return func(b []byte) (scalar, bool) {
			if len(b) != 4 {
				return scalar{}, false
			}
			v := int32(binary.LittleEndian.Uint32(b))
			switch {
			case isDecimal:
				return decimalScalar(big.NewInt(int64(v)), scale), true
			case t.ID() == arrow.DATE32:
				return scalar{kind: kindTime, t: time.Unix(int64(v)*86400, 0).UTC()}, true
			case t.ID() == arrow.UINT8 || t.ID() == arrow.UINT16 || t.ID() == arrow.UINT32:
				return uintScalar(uint64(uint32(v))), true
			case domainOf(t) == kindNum:
				return intScalar(int64(v)), true
			}
			return scalar{}, false
		}, isSigned(t)
	case format.Int64:
		return func(b []byte) (scalar, bool) {
			if len(b) != 8 {
				return scalar{}, false
			}
			v := int64(binary.LittleEndian.Uint64(b))
			switch {
			case isDecimal:
				return decimalScalar(big.NewInt(v), scale), true
			case t.ID() == arrow.TIMESTAMP:
				return scalar{kind: kindTime, t: unitTime(v, t.(*arrow.TimestampType).Unit)}, true
			case t.ID() == arrow.UINT64:
				return uintScalar(uint64(v)), true
			case domainOf(t) == kindNum:
				return intScalar(v), true
			}
			return scalar{}, false
		}, isSigned(t)
	case format.Float:
		return func(b []byte) (scalar, bool) {
			if len(b) != 4 {
				return scalar{}, false
			}
			s := floatScalar(float64(math.Float32frombits(binary.LittleEndian.Uint32(b))))
			return s, !s.nan
		}, true
	case format.Double:
		return func(b []byte) (scalar, bool) {
			if len(b) != 8 {
				return scalar{}, false
			}
			s := floatScalar(math.Float64frombits(binary.LittleEndian.Uint64(b)))
			return s, !s.nan
		}, true
	case format.ByteArray, format.FixedLenByteArray:
		if isDecimal {
			return func(b []byte) (scalar, bool) {
				if len(b) == 0 {
					return scalar{}, false
				}
				return decimalScalar(bigEndianInt(b), scale), true
			}, false
		}
		return func(b []byte) (scalar, bool) {
			return scalar{kind: kindStr, str: string(b)}, true
		}, false
	}
	return nil, false
}

// isSigned reports whether the deprecated, signed-order statistics of an
// integer column order it correctly.
func isSigned(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return false
	}
	return true
}

func unitTime(v int64, u arrow.TimeUnit) time.Time {
	switch u {
	case arrow.Second:
		return time.Unix(v, 0).UTC()
	case arrow.Millisecond:
		return time.UnixMilli(v).UTC()
	case arrow.Microsecond:
		return time.UnixMicro(v).UTC()
	}
	return time.Unix(0, v).UTC()
}

// chunkStats reads the statistics of a column chunk.
func chunkStats(md *format.ColumnMetaData, dec statDecoder, legacyOK, orderOK bool) stats {
	st := &md.Statistics
	var s stats
	if md.NumValues > 0 && st.NullCount == md.NumValues {
		s.allNull = true
	}
	if dec == nil {
		return s
	}
	minB, maxB := st.MinValue, st.MaxValue
	if !orderOK || minB == nil || maxB == nil {
		minB, maxB = nil, nil
		if legacyOK && st.Min != nil && st.Max != nil {
			minB, maxB = st.Min, st.Max
		}
	}
	if minB == nil || maxB == nil {
		return s
	}
	s.min, s.max, s.minMax = minMax(dec, minB, maxB)
	return s
}

// minMax decodes a minimum and a maximum. A maximum made only of 0xFF
// bytes may be a truncated value that could not be rounded up (writers
// truncate long strings and increment the last byte), so it bounds
// nothing.
func minMax(dec statDecoder, minB, maxB []byte) (lo, hi scalar, ok bool) {
	lo, ok1 := dec(minB)
	hi, ok2 := dec(maxB)
	if !ok1 || !ok2 {
		return lo, hi, false
	}
	if hi.kind == kindStr && allFF(hi.str) {
		return lo, hi, false
	}
	c, ok := compare(lo, hi)
	return lo, hi, ok && c <= 0
}

func allFF(s string) bool {
	for i := range len(s) {
		if s[i] != 0xFF {
			return false
		}
	}
	return len(s) > 0
}

// pageStats reads the statistics of page i from a column index.
func pageStats(ci *format.ColumnIndex, i int, dec statDecoder) stats {
	var s stats
	if ci.NullPages[i] {
		s.allNull = true
		return s
	}
	if dec == nil {
		return s
	}
	s.min, s.max, s.minMax = minMax(dec, ci.MinValues[i], ci.MaxValues[i])
	return s
}

// rowRange is a range [start, end) of rows of a row group.
type rowRange struct{ start, end int64 }

// intersect returns the rows in both a and b, both sorted and disjoint.
func intersect(a, b []rowRange) []rowRange {
	var out []rowRange
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		lo, hi := max(a[i].start, b[j].start), min(a[i].end, b[j].end)
		if lo < hi {
			out = append(out, rowRange{lo, hi})
		}
		if a[i].end < b[j].end {
			i++
		} else {
			j++
		}
	}
	return out
}

// pageRanges returns the rows of a row group whose pages may match b,
// from the column and offset indexes of its column; ok is false when the
// indexes do not make sense, and then they are not used.
func pageRanges(b *bound, ci *format.ColumnIndex, oi *format.OffsetIndex, dec statDecoder, numRows int64) (out []rowRange, ok bool) {
	n := len(oi.PageLocations)
	if n == 0 || len(ci.NullPages) != n || len(ci.MinValues) != n || len(ci.MaxValues) != n {
		return nil, false
	}
	if oi.PageLocations[0].FirstRowIndex != 0 {
		return nil, false
	}
	for i := range n {
		start := oi.PageLocations[i].FirstRowIndex
		end := numRows
		if i+1 < n {
			end = oi.PageLocations[i+1].FirstRowIndex
		}
		if end <= start || end > numRows {
			return nil, false
		}
		if !b.mayMatch(pageStats(ci, i, dec)) {
			continue
		}
		if len(out) > 0 && out[len(out)-1].end == start {
			out[len(out)-1].end = end
		} else {
			out = append(out, rowRange{start, end})
		}
	}
	return out, true
}

// typeDefinedOrder reports whether the file says min_value and max_value
// of leaf column i follow the type's own order (or says nothing, which
// writers of those fields always mean).
func typeDefinedOrder(md *format.FileMetaData, leaf int) bool {
	if len(md.ColumnOrders) == 0 {
		return true
	}
	if leaf >= len(md.ColumnOrders) {
		return false
	}
	_, ok := md.ColumnOrders[leaf].Value.(*format.TypeDefinedOrder)
	return ok
}
