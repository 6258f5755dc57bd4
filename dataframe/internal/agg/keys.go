package agg

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	rowbuf "github.com/shoal-data/shoal/dataframe/internal/distinct/rows"
)

// A keyTable gives each distinct value of one key column a dense id, in the
// order values are first seen, across all the batches it is shown. Null is
// one more value, with its own id.
type keyTable interface {
	// ids writes the id of each row of col[lo:hi] to out (len hi-lo).
	ids(col arrow.Array, lo, hi int, out []uint32)
	// size is the number of ids given so far.
	size() int
	// nullID is the id of null, or -1 if no null was seen.
	nullID() int32
	// column builds an array of type typ holding the value of each id.
	column(mem memory.Allocator, typ arrow.DataType, ids []uint32) (arrow.Array, error)
	// reserve makes room for n distinct values without growing.
	reserve(n int)
}

// tableSize is the number of slots for n values: a power of two, at most
// half full.
func tableSize(n int) int {
	size := minTableSize
	for size < 2*n {
		size *= 2
	}
	return size
}

func newKeyTable(t arrow.DataType) keyTable {
	switch classify(t) {
	case classString, classDict:
		return newStrTable()
	default:
		return newIntTable()
	}
}

// minTableSize is the initial number of slots of a hash table.
const minTableSize = 64

// intTable maps 64-bit values (integers widened, float and boolean bits) to
// ids: open addressing, power-of-two size, linear probing, at most half full.
type intTable struct {
	slots []intSlot
	mask  uint64
	vals  []uint64 // value of each id; unused for the null id
	null  int32

	// lut maps v-lutMin to id+1 for values in a small range, in front of
	// the hash table (see prepare). Values first seen through it get their
	// id without entering the hash table, which is then stale: rebuilt
	// from vals when next needed.
	lut    []uint32
	lutMin uint64
	stale  bool
}

type intSlot struct {
	key uint64
	id  uint32 // id+1; 0 marks an empty slot
}

func newIntTable() *intTable {
	return &intTable{slots: make([]intSlot, minTableSize), mask: minTableSize - 1, null: -1}
}

func (t *intTable) size() int     { return len(t.vals) }
func (t *intTable) nullID() int32 { return t.null }

func (t *intTable) nullIDAssign() uint32 {
	if t.null < 0 {
		t.null = int32(len(t.vals))
		t.vals = append(t.vals, 0)
	}
	return uint32(t.null)
}

// find returns the id of v, giving it the next id if it is new.
func (t *intTable) find(v uint64) uint32 {
	if t.stale {
		t.rehash()
	}
	i := rowbuf.HashUint64(v) & t.mask
	for {
		s := &t.slots[i]
		if s.id == 0 {
			id := uint32(len(t.vals))
			t.vals = append(t.vals, v)
			s.key, s.id = v, id+1
			if 2*len(t.vals) > len(t.slots) {
				t.grow()
			}
			return id
		}
		if s.key == v {
			return s.id - 1
		}
		i = (i + 1) & t.mask
	}
}

// rehash rebuilds the hash table from vals.
func (t *intTable) rehash() {
	t.stale = false
	size := tableSize(len(t.vals))
	if size > len(t.slots) {
		t.slots = make([]intSlot, size)
		t.mask = uint64(size - 1)
	} else {
		clear(t.slots)
	}
	for id, v := range t.vals {
		if int32(id) == t.null {
			continue
		}
		i := rowbuf.HashUint64(v) & t.mask
		for t.slots[i].id != 0 {
			i = (i + 1) & t.mask
		}
		t.slots[i] = intSlot{key: v, id: uint32(id) + 1}
	}
}

// newUnhashed gives v, seen through the lookup table, the next id.
func (t *intTable) newUnhashed(v uint64) uint32 {
	id := uint32(len(t.vals))
	t.vals = append(t.vals, v)
	t.stale = true
	return id
}

func (t *intTable) grow() { t.resize(2 * len(t.slots)) }

func (t *intTable) reserve(n int) {
	if size := tableSize(n); size > len(t.slots) && !t.stale {
		t.resize(size)
	}
	if n > len(t.vals) {
		t.vals = slices.Grow(t.vals, n-len(t.vals))
	}
}

func (t *intTable) resize(n int) {
	slots := make([]intSlot, n)
	mask := uint64(n - 1)
	for _, s := range t.slots {
		if s.id == 0 {
			continue
		}
		i := rowbuf.HashUint64(s.key) & mask
		for slots[i].id != 0 {
			i = (i + 1) & mask
		}
		slots[i] = s
	}
	t.slots, t.mask = slots, mask
}

func (t *intTable) ids(col arrow.Array, lo, hi int, out []uint32) {
	bm, boff := rowbuf.Validity(col)
	switch col.DataType().ID() {
	case arrow.INT8:
		intIDs(t, rowbuf.Values[int8](col)[lo:hi], bm, boff+lo, out)
	case arrow.UINT8:
		intIDs(t, rowbuf.Values[uint8](col)[lo:hi], bm, boff+lo, out)
	case arrow.INT16:
		intIDs(t, rowbuf.Values[int16](col)[lo:hi], bm, boff+lo, out)
	case arrow.UINT16:
		intIDs(t, rowbuf.Values[uint16](col)[lo:hi], bm, boff+lo, out)
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		intIDs(t, rowbuf.Values[int32](col)[lo:hi], bm, boff+lo, out)
	case arrow.UINT32:
		intIDs(t, rowbuf.Values[uint32](col)[lo:hi], bm, boff+lo, out)
	case arrow.INT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		intIDs(t, rowbuf.Values[int64](col)[lo:hi], bm, boff+lo, out)
	case arrow.UINT64:
		intIDs(t, rowbuf.Values[uint64](col)[lo:hi], bm, boff+lo, out)
	case arrow.FLOAT32:
		floatIDs(t, rowbuf.Values[float32](col)[lo:hi], bm, boff+lo, out)
	case arrow.FLOAT64:
		floatIDs(t, rowbuf.Values[float64](col)[lo:hi], bm, boff+lo, out)
	case arrow.BOOL:
		vals := make([]uint8, hi-lo)
		rowbuf.Bools(col, lo, hi, vals)
		intIDs(t, vals, bm, boff+lo, out)
	default:
		panic(fmt.Sprintf("agg: integer key table given %s", col.DataType()))
	}
}

// intIDs gives ids to integer values; bm (bit offset boff) is the validity.
func intIDs[T integer](t *intTable, vals []T, bm []byte, boff int, out []uint32) {
	out = out[:len(vals)]
	if t.lut != nil {
		lut, lmin := t.lut, t.lutMin
		for j, v := range vals {
			if bm != nil && !rowbuf.Bit(bm, boff+j) {
				out[j] = t.nullIDAssign()
				continue
			}
			k := uint64(int64(v)) - lmin
			if k < uint64(len(lut)) {
				if id := lut[k]; id != 0 {
					out[j] = id - 1
					continue
				}
				id := t.newUnhashed(uint64(int64(v)))
				lut[k] = id + 1
				out[j] = id
				continue
			}
			out[j] = t.find(uint64(int64(v)))
		}
		return
	}
	if bm == nil {
		for j, v := range vals {
			out[j] = t.find(uint64(int64(v)))
		}
		return
	}
	for j, v := range vals {
		if !rowbuf.Bit(bm, boff+j) {
			out[j] = t.nullIDAssign()
			continue
		}
		out[j] = t.find(uint64(int64(v)))
	}
}

// floatKey is the table value of a float key: its bits, with -0 as 0 and
// every NaN as one NaN, so that equal keys (and all NaNs) group together.
func floatKey(f float64) uint64 {
	switch {
	case f == 0:
		return 0
	case f != f:
		return 0x7ff8000000000001
	}
	return math.Float64bits(f)
}

func floatIDs[T float](t *intTable, vals []T, bm []byte, boff int, out []uint32) {
	for j, v := range vals {
		if bm != nil && !rowbuf.Bit(bm, boff+j) {
			out[j] = t.nullIDAssign()
			continue
		}
		out[j] = t.find(floatKey(float64(v)))
	}
}

// prepare puts a direct lookup table in front of the hash table when the
// values of col (an integer column) lie in a small range: one load per row
// instead of a hash and a probe.
func (t *intTable) prepare(col arrow.Array) {
	lo, hi, ok := intRange(col)
	if !ok {
		return
	}
	span := hi - lo + 1
	if span == 0 || span > uint64(max(2*col.Len(), 1<<16)) || span > 1<<24 {
		return
	}
	if t.lut != nil && t.lutMin <= lo && hi-t.lutMin < uint64(len(t.lut)) {
		return // the current table covers the range
	}
	if t.stale {
		t.rehash()
	}
	t.lut = make([]uint32, span)
	t.lutMin = lo
	// Values seen before keep their ids.
	for id, v := range t.vals {
		if int32(id) != t.null && v-lo < span {
			t.lut[v-lo] = uint32(id) + 1
		}
	}
}

// intRange returns the smallest and largest non-null values of an integer
// column widened to int64 (as uint64 bits), or ok false when the column is
// not an integer column or has no values.
func intRange(col arrow.Array) (lo, hi uint64, ok bool) {
	switch col.DataType().ID() {
	case arrow.INT8:
		return rangeOf(rowbuf.Values[int8](col))
	case arrow.UINT8:
		return rangeOf(rowbuf.Values[uint8](col))
	case arrow.INT16:
		return rangeOf(rowbuf.Values[int16](col))
	case arrow.UINT16:
		return rangeOf(rowbuf.Values[uint16](col))
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		return rangeOf(rowbuf.Values[int32](col))
	case arrow.UINT32:
		return rangeOf(rowbuf.Values[uint32](col))
	case arrow.INT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		return rangeOf(rowbuf.Values[int64](col))
	}
	return 0, 0, false
}

// rangeOf returns the range of vals (nulls included: their slots hold some
// value too, which only widens the range).
func rangeOf[T integer](vals []T) (lo, hi uint64, ok bool) {
	if len(vals) == 0 {
		return 0, 0, false
	}
	mn, mx := int64(vals[0]), int64(vals[0])
	for _, v := range vals {
		x := int64(v)
		mn = min(mn, x)
		mx = max(mx, x)
	}
	if mx-mn < 0 { // overflow: huge range
		return 0, 0, false
	}
	return uint64(mn), uint64(mx), true
}

func (t *intTable) column(mem memory.Allocator, typ arrow.DataType, ids []uint32) (arrow.Array, error) {
	valid := make([]bool, len(ids))
	for j, id := range ids {
		valid[j] = int32(id) != t.null
	}
	switch typ.ID() {
	case arrow.INT8:
		return intColumn[int8](mem, typ, t.vals, ids, valid), nil
	case arrow.UINT8:
		return intColumn[uint8](mem, typ, t.vals, ids, valid), nil
	case arrow.INT16:
		return intColumn[int16](mem, typ, t.vals, ids, valid), nil
	case arrow.UINT16:
		return intColumn[uint16](mem, typ, t.vals, ids, valid), nil
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		return intColumn[int32](mem, typ, t.vals, ids, valid), nil
	case arrow.UINT32:
		return intColumn[uint32](mem, typ, t.vals, ids, valid), nil
	case arrow.INT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION, arrow.UINT64:
		return intColumn[uint64](mem, typ, t.vals, ids, valid), nil
	case arrow.FLOAT32:
		f := make([]float32, len(ids))
		for j, id := range ids {
			f[j] = float32(math.Float64frombits(t.vals[id]))
		}
		return fixedArray(mem, typ, f, valid, nil), nil
	case arrow.FLOAT64:
		f := make([]float64, len(ids))
		for j, id := range ids {
			f[j] = math.Float64frombits(t.vals[id])
		}
		return fixedArray(mem, typ, f, valid, nil), nil
	case arrow.BOOL:
		b := make([]uint8, len(ids))
		for j, id := range ids {
			b[j] = uint8(t.vals[id])
		}
		return boolArray(mem, b, valid, nil), nil
	}
	return nil, fmt.Errorf("agg: cannot build a key column of type %s", typ)
}

func intColumn[T integer](mem memory.Allocator, typ arrow.DataType, vals []uint64, ids []uint32, valid []bool) arrow.Array {
	buf, out := rowbuf.NewBuffer[T](mem, len(ids))
	nullAt := -1
	for j, id := range ids {
		if !valid[j] {
			nullAt = j
			out[j] = 0
			continue
		}
		out[j] = T(vals[id])
	}
	if nullAt < 0 {
		valid = nil
	}
	vbuf, nulls := rowbuf.ValidityFrom(mem, valid)
	return rowbuf.MakeArray(typ, len(ids), []*memory.Buffer{vbuf, buf}, nulls)
}

// strTable maps byte strings to ids. A slot holds the hash, the length
// and the first 16 bytes of its string, so that looking up a string of at
// most 16 bytes reads one slot and nothing else; longer strings are then
// compared with their bytes in the arena, which also serves to build the
// key column.
type strTable struct {
	slots []strSlot
	mask  uint64
	offs  []int64 // offs[id], offs[id+1] bound id's bytes in arena
	arena []byte
	n     int // number of ids, null included
	null  int32

	// The dictionary last seen and the id of each of its entries (id+1,
	// 0 until the entry is first used).
	dict    arrow.ArrayData
	dictIDs []uint32
}

type strSlot struct {
	w0, w1 uint64 // the first 16 bytes, zero-padded
	hash   uint64
	id     uint32 // id+1; 0 marks an empty slot
	len    uint32
}

func newStrTable() *strTable {
	return &strTable{slots: make([]strSlot, minTableSize), mask: minTableSize - 1, offs: []int64{0}, null: -1}
}

func (t *strTable) size() int     { return t.n }
func (t *strTable) nullID() int32 { return t.null }

func (t *strTable) nullIDAssign() uint32 {
	if t.null < 0 {
		t.null = int32(t.n)
		t.n++
		t.offs = append(t.offs, int64(len(t.arena)))
	}
	return uint32(t.null)
}

// value returns the bytes of id as a string pointing into the arena.
func (t *strTable) value(id uint32) string {
	return bytesToString(t.arena[t.offs[id]:t.offs[id+1]])
}

// find returns the id of s, giving it the next id if it is new.
func (t *strTable) find(s string) uint32 {
	var w0, w1 uint64
	if len(s) > 0 {
		w0, w1 = rowbuf.Words(unsafe.StringData(s), len(s))
	}
	return t.findWords(s, w0, w1)
}

// findWords is find for a string whose words (see words) are known.
func (t *strTable) findWords(s string, w0, w1 uint64) uint32 {
	n := len(s)
	var h uint64
	if n <= 16 {
		h = rowbuf.HashWords(w0, w1, n)
	} else {
		h = rowbuf.HashLong(s)
	}
	i := h & t.mask
	for {
		sl := &t.slots[i]
		if sl.id == 0 {
			return t.insert(sl, s, w0, w1, h)
		}
		if sl.hash == h && sl.w0 == w0 && sl.w1 == w1 && int(sl.len) == n &&
			(n <= 16 || t.value(sl.id-1) == s) {
			return sl.id - 1
		}
		i = (i + 1) & t.mask
	}
}

func (t *strTable) insert(sl *strSlot, s string, w0, w1, h uint64) uint32 {
	id := uint32(t.n)
	t.n++
	if n := len(s); n <= 16 {
		// From the words: the input's bytes may be far away in memory.
		t.arena = binary.LittleEndian.AppendUint64(t.arena, w0)
		t.arena = binary.LittleEndian.AppendUint64(t.arena, w1)
		t.arena = t.arena[:len(t.arena)-16+n]
	} else {
		t.arena = append(t.arena, s...)
	}
	t.offs = append(t.offs, int64(len(t.arena)))
	*sl = strSlot{w0: w0, w1: w1, hash: h, id: id + 1, len: uint32(len(s))}
	if 2*t.n > len(t.slots) {
		t.grow()
	}
	return id
}

func (t *strTable) grow() { t.resize(2 * len(t.slots)) }

func (t *strTable) reserve(n int) {
	if size := tableSize(n); size > len(t.slots) {
		t.resize(size)
	}
	if t.n > 0 && n > t.n {
		t.arena = slices.Grow(t.arena, len(t.arena)/t.n*(n-t.n))
		t.offs = slices.Grow(t.offs, n-t.n)
	}
}

func (t *strTable) resize(n int) {
	slots := make([]strSlot, n)
	mask := uint64(n - 1)
	for _, sl := range t.slots {
		if sl.id == 0 {
			continue
		}
		i := sl.hash & mask
		for slots[i].id != 0 {
			i = (i + 1) & mask
		}
		slots[i] = sl
	}
	t.slots, t.mask = slots, mask
}

func (t *strTable) ids(col arrow.Array, lo, hi int, out []uint32) {
	out = out[:hi-lo]
	bm, boff := rowbuf.Validity(col)
	if d, ok := col.(*array.Dictionary); ok {
		t.dictIDsOf(d, lo, hi, out)
		return
	}
	v := newStringView(col)
	if v.offs32 != nil {
		o := v.offs32[lo : hi+1]
		for j := range out {
			if bm != nil && !rowbuf.Bit(bm, boff+lo+j) {
				out[j] = t.nullIDAssign()
				continue
			}
			a, b := o[j], o[j+1]
			s := bytesToString(v.data[a:b])
			var w0, w1 uint64
			if n := len(s); n > 0 {
				w0, w1 = rowbuf.Words(unsafe.StringData(s), n)
				if n <= 16 {
					// The first slot, inline: most lookups end there.
					h := rowbuf.HashWords(w0, w1, n)
					if sl := &t.slots[h&t.mask]; sl.hash == h && sl.w0 == w0 && sl.w1 == w1 && int(sl.len) == n {
						out[j] = sl.id - 1
						continue
					}
				}
			}
			out[j] = t.findWords(s, w0, w1)
		}
		return
	}
	for j := range out {
		if bm != nil && !rowbuf.Bit(bm, boff+lo+j) {
			out[j] = t.nullIDAssign()
			continue
		}
		out[j] = t.find(v.str(lo + j))
	}
}

// dictIDsOf gives ids to the rows of a dictionary array: each entry of the
// dictionary is looked up once, the first time a row uses it.
func (t *strTable) dictIDsOf(d *array.Dictionary, lo, hi int, out []uint32) {
	dd := d.Data().Dictionary()
	if dd != t.dict {
		t.dict = dd
		t.dictIDs = make([]uint32, dd.Len())
	}
	dict := d.Dictionary()
	dv := newStringView(dict)
	dbm, doff := rowbuf.Validity(dict)
	bm, boff := rowbuf.Validity(d)
	idx := d.Indices()
	switch idx.DataType().ID() {
	case arrow.INT8:
		dictIDs(t, rowbuf.Values[int8](idx)[lo:hi], bm, boff+lo, &dv, dbm, doff, out)
	case arrow.UINT8:
		dictIDs(t, rowbuf.Values[uint8](idx)[lo:hi], bm, boff+lo, &dv, dbm, doff, out)
	case arrow.INT16:
		dictIDs(t, rowbuf.Values[int16](idx)[lo:hi], bm, boff+lo, &dv, dbm, doff, out)
	case arrow.UINT16:
		dictIDs(t, rowbuf.Values[uint16](idx)[lo:hi], bm, boff+lo, &dv, dbm, doff, out)
	case arrow.INT32:
		dictIDs(t, rowbuf.Values[int32](idx)[lo:hi], bm, boff+lo, &dv, dbm, doff, out)
	case arrow.UINT32:
		dictIDs(t, rowbuf.Values[uint32](idx)[lo:hi], bm, boff+lo, &dv, dbm, doff, out)
	case arrow.INT64:
		dictIDs(t, rowbuf.Values[int64](idx)[lo:hi], bm, boff+lo, &dv, dbm, doff, out)
	case arrow.UINT64:
		dictIDs(t, rowbuf.Values[uint64](idx)[lo:hi], bm, boff+lo, &dv, dbm, doff, out)
	}
}

func dictIDs[T integer](t *strTable, idx []T, bm []byte, boff int, dv *stringView, dbm []byte, doff int, out []uint32) {
	m := t.dictIDs
	for j, x := range idx {
		if bm != nil && !rowbuf.Bit(bm, boff+j) {
			out[j] = t.nullIDAssign()
			continue
		}
		k := int(x)
		if id := m[k]; id != 0 {
			out[j] = id - 1
			continue
		}
		var id uint32
		if dbm != nil && !rowbuf.Bit(dbm, doff+k) {
			id = t.nullIDAssign()
		} else {
			id = t.find(dv.str(k))
		}
		m[k] = id + 1
		out[j] = id
	}
}

func (t *strTable) column(mem memory.Allocator, typ arrow.DataType, ids []uint32) (arrow.Array, error) {
	if dt, ok := typ.(*arrow.DictionaryType); ok {
		return t.dictColumn(mem, dt, ids)
	}
	vals := make([]string, len(ids))
	var valid []bool
	for j, id := range ids {
		if int32(id) == t.null {
			if valid == nil {
				valid = make([]bool, len(ids))
				for i := range j {
					valid[i] = true
				}
			}
			continue
		}
		vals[j] = t.value(id)
		if valid != nil {
			valid[j] = true
		}
	}
	return stringArray(mem, typ, vals, valid, nil), nil
}

// dictColumn builds a dictionary array whose dictionary is every value of
// the table (nulls aside) and whose indices are ids.
func (t *strTable) dictColumn(mem memory.Allocator, dt *arrow.DictionaryType, ids []uint32) (arrow.Array, error) {
	n := t.size()
	if maxIndex(dt.IndexType) < uint64(n) {
		return nil, fmt.Errorf("agg: %d distinct values do not fit the dictionary index type %s", n, dt.IndexType)
	}
	entries := make([]string, n)
	for id := range n {
		if int32(id) != t.null {
			entries[id] = t.value(uint32(id))
		}
	}
	dict := stringArray(mem, dt.ValueType, entries, nil, nil)
	defer dict.Release()
	valid := make([]bool, len(ids))
	for j, id := range ids {
		valid[j] = int32(id) != t.null
	}
	var idx arrow.Array
	switch dt.IndexType.ID() {
	case arrow.INT8:
		idx = indexColumn[int8](mem, dt.IndexType, ids, valid)
	case arrow.UINT8:
		idx = indexColumn[uint8](mem, dt.IndexType, ids, valid)
	case arrow.INT16:
		idx = indexColumn[int16](mem, dt.IndexType, ids, valid)
	case arrow.UINT16:
		idx = indexColumn[uint16](mem, dt.IndexType, ids, valid)
	case arrow.INT32:
		idx = indexColumn[int32](mem, dt.IndexType, ids, valid)
	case arrow.UINT32:
		idx = indexColumn[uint32](mem, dt.IndexType, ids, valid)
	case arrow.INT64:
		idx = indexColumn[int64](mem, dt.IndexType, ids, valid)
	case arrow.UINT64:
		idx = indexColumn[uint64](mem, dt.IndexType, ids, valid)
	default:
		return nil, fmt.Errorf("agg: dictionary index type %s", dt.IndexType)
	}
	defer idx.Release()
	data := array.NewDataWithDictionary(dt, len(ids), idx.Data().Buffers(), idx.NullN(), 0, dict.Data().(*array.Data))
	defer data.Release()
	return array.MakeFromData(data), nil
}

func indexColumn[T integer](mem memory.Allocator, typ arrow.DataType, ids []uint32, valid []bool) arrow.Array {
	buf, out := rowbuf.NewBuffer[T](mem, len(ids))
	hasNull := false
	for j, id := range ids {
		if !valid[j] {
			out[j] = 0
			hasNull = true
			continue
		}
		out[j] = T(id)
	}
	if !hasNull {
		valid = nil
	}
	vbuf, nulls := rowbuf.ValidityFrom(mem, valid)
	return rowbuf.MakeArray(typ, len(ids), []*memory.Buffer{vbuf, buf}, nulls)
}

func maxIndex(t arrow.DataType) uint64 {
	switch t.ID() {
	case arrow.INT8:
		return math.MaxInt8
	case arrow.UINT8:
		return math.MaxUint8
	case arrow.INT16:
		return math.MaxInt16
	case arrow.UINT16:
		return math.MaxUint16
	case arrow.INT32:
		return math.MaxInt32
	case arrow.UINT32:
		return math.MaxUint32
	}
	return math.MaxInt64
}
