package sortk

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	rowbuf "github.com/shoal-data/shoal/dataframe/internal/distinct/rows"
)

// SortKey is one column of a sort order.
type SortKey struct {
	Column     string `json:"column"`
	Descending bool   `json:"descending,omitempty"`
	// NullsFirst puts nulls (and NaN, see the package documentation)
	// before the values instead of after them, in either direction.
	NullsFirst bool `json:"nulls_first,omitempty"`
}

func (k SortKey) String() string {
	s := k.Column
	if k.Descending {
		s += " desc"
	}
	if k.NullsFirst {
		s += " nulls first"
	}
	return s
}

// formatKeys writes keys as "a, b desc".
func formatKeys(keys []SortKey) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k.String()
	}
	return strings.Join(parts, ", ")
}

// ErrNoColumn is the cause of a KeyError about a column the record batch
// does not have.
var ErrNoColumn = errors.New("no such column")

// ErrUnsupportedType is the cause of a KeyError about a column whose type
// cannot be a sort key.
var ErrUnsupportedType = errors.New("type cannot be a sort key")

// KeyError reports a sort key the data cannot be sorted by: a missing
// column, a type with no order, or key columns of two batches that cannot
// be compared.
type KeyError struct {
	Op     string // "sort", "merge", "divisions"...
	Column string
	Type   arrow.DataType // nil when the column is missing
	Err    error          // ErrNoColumn, ErrUnsupportedType or a description
}

func (e *KeyError) Error() string {
	if e.Type == nil {
		return fmt.Sprintf("sortk: %s by %q: %v", e.Op, e.Column, e.Err)
	}
	return fmt.Sprintf("sortk: %s by %q (%s): %v", e.Op, e.Column, e.Type, e.Err)
}

func (e *KeyError) Unwrap() error { return e.Err }

// class is a family of key types whose values compare with each other.
type class uint8

const (
	classNone class = iota
	classSigned
	classUnsigned
	classFloat
	classBool
	classBytes
)

func classOf(t arrow.DataType) class {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.DATE32, arrow.DATE64, arrow.TIME32, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		return classSigned
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return classUnsigned
	case arrow.FLOAT32, arrow.FLOAT64:
		return classFloat
	case arrow.BOOL:
		return classBool
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		return classBytes
	case arrow.DICTIONARY:
		return classOf(t.(*arrow.DictionaryType).ValueType)
	}
	return classNone
}

// valueType is t, or the value type of a dictionary.
func valueType(t arrow.DataType) arrow.DataType {
	if d, ok := t.(*arrow.DictionaryType); ok {
		return d.ValueType
	}
	return t
}

// comparableTypes reports whether values of types a and b compare: the
// same class, and for dates, times and durations the same type.
func comparableTypes(a, b arrow.DataType) bool {
	ca := classOf(a)
	if ca == classNone || ca != classOf(b) {
		return false
	}
	va, vb := valueType(a), valueType(b)
	switch va.ID() {
	case arrow.DATE32, arrow.DATE64, arrow.TIME32, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		return arrow.TypeEqual(va, vb)
	}
	switch vb.ID() {
	case arrow.DATE32, arrow.DATE64, arrow.TIME32, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		return false
	}
	return true
}

// keyColumns returns the key columns of rec, checking that they exist and
// can be sorted.
func keyColumns(op string, rec arrow.RecordBatch, keys []SortKey) ([]arrow.Array, error) {
	if rec == nil {
		return nil, fmt.Errorf("sortk: %s: nil record batch", op)
	}
	if err := checkKeys(op, rec.Schema(), keys); err != nil {
		return nil, err
	}
	cols := make([]arrow.Array, len(keys))
	for i, k := range keys {
		cols[i] = rec.Column(rec.Schema().FieldIndices(k.Column)[0])
	}
	return cols, nil
}

// checkKeys reports an error when schema lacks a key column or has one of
// a type with no order.
func checkKeys(op string, schema *arrow.Schema, keys []SortKey) error {
	if len(keys) == 0 {
		return fmt.Errorf("sortk: %s: no sort keys", op)
	}
	for _, k := range keys {
		idx := schema.FieldIndices(k.Column)
		if len(idx) == 0 {
			return &KeyError{Op: op, Column: k.Column, Err: fmt.Errorf("%w (the columns are %s)", ErrNoColumn, columnNames(schema))}
		}
		if t := schema.Field(idx[0]).Type; classOf(t) == classNone {
			return &KeyError{Op: op, Column: k.Column, Type: t, Err: ErrUnsupportedType}
		}
	}
	return nil
}

func columnNames(s *arrow.Schema) string {
	names := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// column is a key column prepared for comparisons: numbers, booleans and
// (for sorting) dictionary ranks as order-preserving uint64s with the
// direction applied, byte strings as views.
type column struct {
	bytes      bool
	u          []uint64  // !bytes: one key per row
	v          bytesView // bytes: the values (the dictionary's when idx != nil)
	idx        []int32   // bytes dictionaries: each row's entry
	valid      []bool    // nil when no row is null
	desc       bool
	nullsFirst bool
}

func (c *column) isNull(i int) bool { return c.valid != nil && !c.valid[i] }

// str returns the bytes of row i of a bytes column.
func (c *column) str(i int) []byte {
	if c.idx != nil {
		return c.v.at(int(c.idx[i]))
	}
	return c.v.at(i)
}

// newColumn prepares arr for comparisons by key. With forSort, a
// dictionary of strings becomes the ranks of its entries (fast, but only
// comparable within arr); without, rows compare by value with those of
// any other column of a comparable type.
func newColumn(arr arrow.Array, key SortKey, forSort bool) *column {
	c := &column{desc: key.Descending, nullsFirst: key.NullsFirst, valid: validBools(arr)}
	if d, ok := arr.(*array.Dictionary); ok {
		idx := dictIndices(d)
		dict := d.Dictionary()
		entryValid := validBools(dict)
		if entryValid != nil {
			if c.valid == nil {
				c.valid = make([]bool, arr.Len())
				for i := range c.valid {
					c.valid[i] = true
				}
			}
			for i, e := range idx {
				if c.valid[i] && !entryValid[e] {
					c.valid[i] = false
				}
			}
		}
		if classOf(dict.DataType()) == classBytes {
			if !forSort {
				c.bytes, c.v, c.idx = true, newBytesView(dict), idx
				return c
			}
			ranks := dictRanks(dict, key)
			c.u = make([]uint64, len(idx))
			for i, e := range idx {
				if c.valid == nil || c.valid[i] {
					c.u[i] = ranks[e]
				}
			}
			return c
		}
		entries := orderedKeys(dict, key)
		c.u = make([]uint64, len(idx))
		for i, e := range idx {
			if c.valid == nil || c.valid[i] {
				c.u[i] = entries[e]
			}
		}
		return c
	}
	if classOf(arr.DataType()) == classBytes {
		c.bytes, c.v = true, newBytesView(arr)
		return c
	}
	c.u = orderedKeys(arr, key)
	return c
}

// dictIndices returns the indices of a dictionary array as int32s (null
// rows read as 0).
func dictIndices(d *array.Dictionary) []int32 {
	ind := d.Indices()
	out := make([]int32, ind.Len())
	bm, off := rowbuf.Validity(ind)
	switch ind.DataType().ID() {
	case arrow.INT8:
		widen(rowbuf.Values[int8](ind), out)
	case arrow.UINT8:
		widen(rowbuf.Values[uint8](ind), out)
	case arrow.INT16:
		widen(rowbuf.Values[int16](ind), out)
	case arrow.UINT16:
		widen(rowbuf.Values[uint16](ind), out)
	case arrow.INT32:
		widen(rowbuf.Values[int32](ind), out)
	case arrow.UINT32:
		widen(rowbuf.Values[uint32](ind), out)
	case arrow.INT64:
		widen(rowbuf.Values[int64](ind), out)
	case arrow.UINT64:
		widen(rowbuf.Values[uint64](ind), out)
	}
	if bm != nil {
		for i := range out {
			if !rowbuf.Bit(bm, off+i) {
				out[i] = 0
			}
		}
	}
	return out
}

func widen[T signed | unsigned](in []T, out []int32) {
	for i, v := range in {
		out[i] = int32(v)
	}
}

// dictRanks returns, for each entry of a dictionary of strings, its rank
// among the distinct entries in the key's order: equal entries get equal
// ranks.
func dictRanks(dict arrow.Array, key SortKey) []uint64 {
	n := dict.Len()
	v := newBytesView(dict)
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	// Dictionaries are small next to the data: a comparison sort will do.
	slices.SortFunc(order, func(a, b int32) int { return bytes.Compare(v.at(int(a)), v.at(int(b))) })
	ranks := make([]uint64, n)
	var r uint64
	for i, e := range order {
		if i > 0 && !bytes.Equal(v.at(int(order[i-1])), v.at(int(e))) {
			r++
		}
		ranks[e] = r
	}
	if key.Descending {
		for i := range ranks {
			ranks[i] = ^ranks[i]
		}
	}
	return ranks
}

// orderedKeys maps the values of a numeric, temporal or boolean column to
// uint64s in the key's order: ascending or descending, NaN on the nulls'
// side of every number (after them unless NullsFirst), -0 equal to 0.
func orderedKeys(arr arrow.Array, key SortKey) []uint64 {
	out := make([]uint64, arr.Len())
	if len(out) == 0 {
		return out
	}
	switch arr.DataType().ID() {
	case arrow.INT8:
		signedKeys(rowbuf.Values[int8](arr), out)
	case arrow.INT16:
		signedKeys(rowbuf.Values[int16](arr), out)
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		signedKeys(rowbuf.Values[int32](arr), out)
	case arrow.INT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		signedKeys(rowbuf.Values[int64](arr), out)
	case arrow.UINT8:
		unsignedKeys(rowbuf.Values[uint8](arr), out)
	case arrow.UINT16:
		unsignedKeys(rowbuf.Values[uint16](arr), out)
	case arrow.UINT32:
		unsignedKeys(rowbuf.Values[uint32](arr), out)
	case arrow.UINT64:
		unsignedKeys(rowbuf.Values[uint64](arr), out)
	case arrow.FLOAT32:
		floatKeys(rowbuf.Values[float32](arr), out, key)
		return out
	case arrow.FLOAT64:
		floatKeys(rowbuf.Values[float64](arr), out, key)
		return out
	case arrow.BOOL:
		d := arr.Data()
		bm := d.Buffers()[1].Bytes()
		off := d.Offset()
		for i := range out {
			if rowbuf.Bit(bm, off+i) {
				out[i] = 1
			}
		}
	}
	if key.Descending {
		for i := range out {
			out[i] = ^out[i]
		}
	}
	return out
}

func signedKeys[T signed](vals []T, out []uint64) {
	for i, v := range vals {
		out[i] = uint64(int64(v)) ^ (1 << 63)
	}
}

func unsignedKeys[T unsigned](vals []T, out []uint64) {
	for i, v := range vals {
		out[i] = uint64(v)
	}
}

// floatKeys: the bits of a float with the sign bit flipped (positive) or
// all bits flipped (negative) order like the floats. No number maps to 0 or
// to MaxUint64, which NaN takes.
func floatKeys[T float](vals []T, out []uint64, key SortKey) {
	nan := uint64(math.MaxUint64)
	if key.NullsFirst {
		nan = 0
	}
	var flip uint64
	if key.Descending {
		flip = math.MaxUint64
	}
	for i, v := range vals {
		f := float64(v)
		if f != f {
			out[i] = nan
			continue
		}
		if f == 0 {
			f = 0
		}
		b := math.Float64bits(f)
		if b>>63 != 0 {
			b = ^b
		} else {
			b |= 1 << 63
		}
		out[i] = b ^ flip
	}
}

// compareRows compares row i of the columns a with row j of the columns b
// (prepared for the same keys) in the sort order.
func compareRows(a []*column, i int, b []*column, j int) int {
	for k, ca := range a {
		cb := b[k]
		an, bn := ca.isNull(i), cb.isNull(j)
		if an || bn {
			if an && bn {
				continue
			}
			if an == ca.nullsFirst {
				return -1
			}
			return 1
		}
		var c int
		if ca.bytes {
			c = bytes.Compare(ca.str(i), cb.str(j))
			if ca.desc {
				c = -c
			}
		} else {
			c = cmp.Compare(ca.u[i], cb.u[j])
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// prepare returns rec's key columns prepared for comparisons by value.
func prepare(op string, rec arrow.RecordBatch, keys []SortKey) ([]*column, error) {
	arrs, err := keyColumns(op, rec, keys)
	if err != nil {
		return nil, err
	}
	cols := make([]*column, len(arrs))
	for i, a := range arrs {
		cols[i] = newColumn(a, keys[i], false)
	}
	return cols, nil
}

// checkComparable reports a KeyError when a key column of b cannot be
// compared with the same key column of a.
func checkComparable(op string, a, b *arrow.Schema, keys []SortKey) error {
	for _, k := range keys {
		ia, ib := a.FieldIndices(k.Column), b.FieldIndices(k.Column)
		if len(ia) == 0 || len(ib) == 0 {
			continue // keyColumns reports it
		}
		ta, tb := a.Field(ia[0]).Type, b.Field(ib[0]).Type
		if !comparableTypes(ta, tb) {
			return &KeyError{Op: op, Column: k.Column, Type: ta, Err: fmt.Errorf("cannot compare with %s", tb)}
		}
	}
	return nil
}
