package rows

import (
	"context"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// ChunkRows is how many rows the kernels take at a time: the ids of a chunk
// stay in cache while every key column runs over it, and the context is
// checked between chunks.
const ChunkRows = 1 << 16

// Kind is how a key column is hashed and compared.
type Kind int

const (
	KindNone   Kind = iota // not usable as a key
	KindInt                // integers of any width and sign, and temporal types stored as integers
	KindFloat              // float32, float64
	KindBool               // boolean
	KindString             // utf8, large utf8, binary, large binary, and dictionaries of them
)

// KindOf returns how columns of type t are keyed.
func KindOf(t arrow.DataType) Kind {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP, arrow.DURATION, arrow.TIME32, arrow.TIME64:
		return KindInt
	case arrow.FLOAT32, arrow.FLOAT64:
		return KindFloat
	case arrow.BOOL:
		return KindBool
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		return KindString
	case arrow.DICTIONARY:
		if KindOf(t.(*arrow.DictionaryType).ValueType) == KindString {
			return KindString
		}
	}
	return KindNone
}

// family is the set of types whose values compare with each other.
func family(t arrow.DataType) string {
	if d, ok := t.(*arrow.DictionaryType); ok {
		t = d.ValueType
	}
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return "integer"
	case arrow.FLOAT32, arrow.FLOAT64:
		return "float"
	case arrow.BOOL:
		return "boolean"
	case arrow.STRING, arrow.LARGE_STRING:
		return "string"
	case arrow.BINARY, arrow.LARGE_BINARY:
		return "binary"
	case arrow.DATE32, arrow.DATE64:
		return "date"
	case arrow.TIME32, arrow.TIME64:
		return "time of day"
	case arrow.DURATION:
		return "duration"
	case arrow.TIMESTAMP:
		if t.(*arrow.TimestampType).TimeZone == "" {
			return "timestamp without time zone"
		}
		return "timestamp with time zone"
	}
	return ""
}

// Comparable returns an error when values of types a and b cannot be
// compared as keys: both must be integers (any width and sign), floats,
// booleans, strings (plain, large or dictionary-encoded), binaries, dates,
// times of day, durations, or timestamps (any unit; both with a time zone,
// compared as instants, or both without).
func Comparable(a, b arrow.DataType) error {
	if KindOf(a) == KindNone {
		return fmt.Errorf("%s cannot be a key", a)
	}
	if KindOf(b) == KindNone {
		return fmt.Errorf("%s cannot be a key", b)
	}
	fa, fb := family(a), family(b)
	if fa != fb {
		return fmt.Errorf("%s (%s) and %s (%s) do not compare", a, fa, b, fb)
	}
	return nil
}

// unitOf is the size of one unit of an integer-stored type, in the base
// unit of its family (nanoseconds for times, milliseconds for dates, 1 for
// integers).
func unitOf(t arrow.DataType) int64 {
	switch t := t.(type) {
	case *arrow.TimestampType:
		return int64(t.Unit.Multiplier())
	case *arrow.DurationType:
		return int64(t.Unit.Multiplier())
	case *arrow.Time32Type:
		return int64(t.Unit.Multiplier())
	case *arrow.Time64Type:
		return int64(t.Unit.Multiplier())
	case *arrow.Date32Type:
		return 86400000
	}
	return 1
}

func isSigned(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return false
	}
	return true
}

// conv turns values of a looked-up column into the values of the column
// the table was built from.
type conv struct {
	mul, div int64 // scale: multiply, or divide exactly (else absent)
	negAbs   bool  // values that read negative as int64 are absent
}

func (c conv) identity() bool { return c.mul == 1 && c.div == 1 && !c.negAbs }

func convFor(from, to arrow.DataType) conv {
	c := conv{mul: 1, div: 1}
	uf, ut := unitOf(from), unitOf(to)
	switch {
	case uf > ut:
		c.mul = uf / ut
	case uf < ut:
		c.div = ut / uf
	}
	// A uint64 above MaxInt64 must not meet a negative signed value with
	// the same bits, either way round.
	if (from.ID() == arrow.UINT64) != (to.ID() == arrow.UINT64) && (from.ID() == arrow.UINT64 || isSigned(from)) {
		c.negAbs = true
	}
	return c
}

// An Encoder gives each distinct tuple of key values a dense id, in the
// order tuples are first inserted. With nullsEqual, null is one more value
// of each column (and all NaNs are one value), as pandas' group-by with
// dropna=False and drop_duplicates do; otherwise a row with a null or NaN
// key gets NoID and matches nothing, as in SQL joins. -0 equals 0.
//
// Integers compare by value whatever their width and sign; strings by
// their bytes, plain, large or dictionary-encoded. Lookup accepts columns of
// other types than the encoder's when Comparable says they compare:
// timestamps, durations and times are converted to the encoder's unit,
// and a value that the unit cannot hold exactly is absent.
//
// Insert changes the encoder and must not run at the same time as another
// call; Lookup only reads it, and several lookups may run at once.
type Encoder struct {
	cols       []*keyCol
	tuples     []*IntTable
	nullsEqual bool
	ins        *scratch // the scratch space of Insert
}

// scratch is the working space of one Insert or Lookup call.
type scratch struct {
	ids   [][]uint32  // ids of a chunk for each key column but the first
	bools []uint8     // a chunk of a boolean column
	keys  []uint64    // a chunk's keys for the integer tables
	marks []uint8     // and their marks (MarkKey, MarkSkip, MarkNull)
	pos   []uint64    // their home slots
	dicts []dictCache // per key column: ids of the last dictionary's entries
}

// dictCache holds the ids of the entries of a dictionary: id+1, NoID when
// absent, 0 until looked up.
type dictCache struct {
	dict arrow.ArrayData
	ids  []uint32
}

func newScratch(ncols int) *scratch {
	return &scratch{ids: make([][]uint32, ncols), dicts: make([]dictCache, ncols)}
}

// chunk returns the key and mark buffers for a chunk of n rows.
func (sc *scratch) chunk(n int) ([]uint64, []uint8) {
	if cap(sc.keys) < n {
		sc.keys = make([]uint64, max(n, ChunkRows))
		sc.marks = make([]uint8, max(n, ChunkRows))
	}
	return sc.keys[:n], sc.marks[:n]
}

type keyCol struct {
	typ  arrow.DataType
	kind Kind
	ints *IntTable
	strs *StrTable
	null uint32 // string columns: id of null once inserted with nullsEqual; NoID otherwise
}

// NewEncoder returns an encoder for key columns of the given types.
func NewEncoder(types []arrow.DataType, nullsEqual bool) (*Encoder, error) {
	if len(types) == 0 {
		return nil, fmt.Errorf("an encoder needs at least one key column")
	}
	e := &Encoder{nullsEqual: nullsEqual}
	for i, t := range types {
		k := KindOf(t)
		if k == KindNone {
			return nil, fmt.Errorf("key %d: %s cannot be a key", i, t)
		}
		c := &keyCol{typ: t, kind: k, null: NoID}
		if k == KindString {
			c.strs = NewStrTable()
		} else {
			c.ints = NewIntTable()
		}
		e.cols = append(e.cols, c)
		if i > 0 {
			e.tuples = append(e.tuples, NewIntTable())
		}
	}
	e.ins = newScratch(len(types))
	return e, nil
}

// Len is the number of ids given.
func (e *Encoder) Len() int {
	if len(e.tuples) > 0 {
		return e.tuples[len(e.tuples)-1].Len()
	}
	c := e.cols[0]
	if c.strs != nil {
		return c.strs.Len()
	}
	return c.ints.Len()
}

// Insert returns the id of each row of cols (equal lengths, of the
// encoder's types), giving new tuples the next ids.
func (e *Encoder) Insert(ctx context.Context, cols []arrow.Array) ([]uint32, error) {
	return e.run(ctx, cols, true)
}

// Lookup returns the id of each row of cols, or NoID for a tuple never
// inserted. cols may have other types than the encoder's if they compare
// (see Comparable).
func (e *Encoder) Lookup(ctx context.Context, cols []arrow.Array) ([]uint32, error) {
	return e.run(ctx, cols, false)
}

func (e *Encoder) run(ctx context.Context, cols []arrow.Array, insert bool) ([]uint32, error) {
	if len(cols) != len(e.cols) {
		return nil, fmt.Errorf("encoder of %d key columns given %d", len(e.cols), len(cols))
	}
	n := 0
	for i, c := range cols {
		if i == 0 {
			n = c.Len()
		} else if c.Len() != n {
			return nil, fmt.Errorf("key columns of %d and %d rows", n, c.Len())
		}
		if insert {
			if !arrow.TypeEqual(c.DataType(), e.cols[i].typ) {
				return nil, fmt.Errorf("key %d: inserting %s into an encoder of %s", i, c.DataType(), e.cols[i].typ)
			}
			if e.cols[i].kind == KindInt {
				if lo, hi, ok := intRange(c); ok {
					e.cols[i].ints.Prepare(lo, hi, n)
				}
			}
		} else if err := Comparable(e.cols[i].typ, c.DataType()); err != nil {
			return nil, fmt.Errorf("key %d: %w", i, err)
		}
	}
	sc := e.ins
	if !insert {
		sc = newScratch(len(cols))
	}
	out := make([]uint32, n)
	for lo := 0; lo < n; lo += ChunkRows {
		if insert && lo == ChunkRows {
			e.reserve(n)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := min(lo+ChunkRows, n)
		dst := out[lo:hi]
		for i, c := range cols {
			ids := dst
			if i > 0 {
				if cap(sc.ids[i]) < hi-lo {
					sc.ids[i] = make([]uint32, ChunkRows)
				}
				ids = sc.ids[i][:hi-lo]
			}
			e.colIDs(sc, i, c, lo, hi, ids, insert)
		}
		for k, t := range e.tuples {
			ids := sc.ids[k+1][:hi-lo]
			keys, marks := sc.chunk(hi - lo)
			anySkip := false
			for j, a := range dst {
				b := ids[j]
				keys[j] = uint64(a)<<32 | uint64(b)
				marks[j] = MarkKey
				if a == NoID || b == NoID {
					dst[j], marks[j], anySkip = NoID, MarkSkip, true
				}
			}
			t.all(sc, keys, marks, anySkip, insert, dst)
		}
	}
	return out, nil
}

// reserve sizes the tables for a batch of n rows after its first chunk,
// so that a batch of many distinct keys does not grow its tables a dozen
// times (each growth rehashes every key): each table gets room for the
// number of distinct values estimated from its first chunk.
func (e *Encoder) reserve(n int) {
	for _, c := range e.cols {
		if c.strs != nil {
			c.strs.Reserve(estimateDistinct(c.strs.Len(), ChunkRows, n))
		} else if c.ints.lut == nil {
			c.ints.Reserve(estimateDistinct(c.ints.Len(), ChunkRows, n))
		}
	}
	for _, t := range e.tuples {
		t.Reserve(estimateDistinct(t.Len(), ChunkRows, n))
	}

}

// estimateDistinct estimates the number of distinct values of n rows
// whose first k rows hold d: the D for which k draws from D values show d
// of them on average, D(1-exp(-k/D)) = d, at most n. When fewer than half
// of the k rows brought a new value, values repeat enough for the table to
// grow as it goes: d.
func estimateDistinct(d, k, n int) int {
	switch {
	case 2*d < k:
		return d
	case d >= k:
		return n
	}
	seen := func(D float64) float64 { return D * -math.Expm1(-float64(k)/D) }
	lo, hi := float64(d), float64(n)
	if seen(hi) <= float64(d) {
		return n
	}
	for range 60 {
		mid := (lo + hi) / 2
		if seen(mid) < float64(d) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return int(hi) + 1
}

// nullID returns the id of null in column c, giving it one on insert.
func (e *Encoder) nullID(c *keyCol, insert bool) uint32 {
	if !e.nullsEqual {
		return NoID
	}
	if c.ints != nil {
		return c.ints.NullID(insert)
	}
	if c.null == NoID && insert {
		c.null = c.strs.NewID()
	}
	return c.null
}

func (e *Encoder) colIDs(sc *scratch, ci int, col arrow.Array, lo, hi int, out []uint32, insert bool) {
	c := e.cols[ci]
	bm, boff := Validity(col)
	boff += lo
	switch c.kind {
	case KindInt:
		cv := conv{mul: 1, div: 1}
		if !insert {
			cv = convFor(col.DataType(), c.typ)
		}
		null := e.nullMark()
		keys, skip := sc.chunk(hi - lo)
		var anySkip bool
		switch col.DataType().ID() {
		case arrow.INT8:
			anySkip = intKeys(Values[int8](col)[lo:hi], bm, boff, cv, null, keys, skip, out)
		case arrow.UINT8:
			anySkip = intKeys(Values[uint8](col)[lo:hi], bm, boff, cv, null, keys, skip, out)
		case arrow.INT16:
			anySkip = intKeys(Values[int16](col)[lo:hi], bm, boff, cv, null, keys, skip, out)
		case arrow.UINT16:
			anySkip = intKeys(Values[uint16](col)[lo:hi], bm, boff, cv, null, keys, skip, out)
		case arrow.INT32, arrow.DATE32, arrow.TIME32:
			anySkip = intKeys(Values[int32](col)[lo:hi], bm, boff, cv, null, keys, skip, out)
		case arrow.UINT32:
			anySkip = intKeys(Values[uint32](col)[lo:hi], bm, boff, cv, null, keys, skip, out)
		case arrow.UINT64:
			anySkip = intKeys(Values[uint64](col)[lo:hi], bm, boff, cv, null, keys, skip, out)
		default: // int64 and the temporal types stored as int64
			anySkip = intKeys(Values[int64](col)[lo:hi], bm, boff, cv, null, keys, skip, out)
		}
		c.ints.all(sc, keys, skip, anySkip, insert, out)
	case KindFloat:
		null := e.nullMark()
		keys, skip := sc.chunk(hi - lo)
		var anySkip bool
		if col.DataType().ID() == arrow.FLOAT32 {
			anySkip = floatKeys(Values[float32](col)[lo:hi], bm, boff, e.nullsEqual, null, keys, skip, out)
		} else {
			anySkip = floatKeys(Values[float64](col)[lo:hi], bm, boff, e.nullsEqual, null, keys, skip, out)
		}
		c.ints.all(sc, keys, skip, anySkip, insert, out)
	case KindBool:
		null := e.nullMark()
		if cap(sc.bools) < hi-lo {
			sc.bools = make([]uint8, ChunkRows)
		}
		b := sc.bools[:hi-lo]
		Bools(col, lo, hi, b)
		keys, skip := sc.chunk(hi - lo)
		anySkip := intKeys(b, bm, boff, conv{mul: 1, div: 1}, null, keys, skip, out)
		c.ints.all(sc, keys, skip, anySkip, insert, out)
	case KindString:
		if d, ok := col.(*array.Dictionary); ok {
			e.dictIDs(c, &sc.dicts[ci], d, lo, hi, out, insert)
			return
		}
		v := NewStringView(col)
		for j := range out {
			if bm != nil && !Bit(bm, boff+j) {
				out[j] = e.nullID(c, insert)
				continue
			}
			if insert {
				out[j] = c.strs.Insert(v.At(lo + j))
			} else {
				out[j] = c.strs.Lookup(v.At(lo + j))
			}
		}
	}
}

// all inserts or looks up a chunk's keys.
func (t *IntTable) all(sc *scratch, keys []uint64, marks []uint8, anyMarked, insert bool, out []uint32) {
	if !anyMarked {
		marks = nil
	}
	if insert {
		t.InsertAll(keys, marks, out)
		return
	}
	if cap(sc.pos) < len(keys) {
		sc.pos = make([]uint64, max(len(keys), ChunkRows))
	}
	t.LookupAll(keys, marks, out, sc.pos[:len(keys)])
}

// nullMark is how null rows are marked: MarkNull when null is a value,
// else MarkSkip (with NoID).
func (e *Encoder) nullMark() uint8 {
	if e.nullsEqual {
		return MarkNull
	}
	return MarkSkip
}

// intKeys writes the table value of each integer to keys and marks the
// rows that have none: a null row with null (its id NoID when null is
// MarkSkip), a value that the conversion cannot hold with MarkSkip (and
// NoID). It returns whether it marked any.
func intKeys[T Integer](vals []T, bm []byte, boff int, cv conv, null uint8, keys []uint64, marks []uint8, out []uint32) bool {
	if cv.identity() && bm == nil {
		for j, v := range vals {
			keys[j] = uint64(int64(v))
		}
		return false
	}
	any := false
	for j, v := range vals {
		marks[j] = MarkKey
		if bm != nil && !Bit(bm, boff+j) {
			marks[j], out[j], any = null, NoID, true
			continue
		}
		x := int64(v)
		if cv.negAbs && x < 0 {
			marks[j], out[j], any = MarkSkip, NoID, true
			continue
		}
		if cv.div > 1 {
			if x%cv.div != 0 {
				marks[j], out[j], any = MarkSkip, NoID, true
				continue
			}
			x /= cv.div
		}
		if cv.mul > 1 {
			y := x * cv.mul
			if y/cv.mul != x {
				marks[j], out[j], any = MarkSkip, NoID, true
				continue
			}
			x = y
		}
		keys[j] = uint64(x)
	}
	return any
}

// FloatKey is the table value of a float key: its bits, with -0 as 0 and
// every NaN as one NaN.
func FloatKey(f float64) uint64 {
	switch {
	case f == 0:
		return 0
	case f != f:
		return 0x7ff8000000000001
	}
	return math.Float64bits(f)
}

// floatKeys is intKeys for floats: NaN is a value when nanIsValue, else
// it matches nothing.
func floatKeys[T Float](vals []T, bm []byte, boff int, nanIsValue bool, null uint8, keys []uint64, marks []uint8, out []uint32) bool {
	any := false
	for j, v := range vals {
		marks[j] = MarkKey
		if bm != nil && !Bit(bm, boff+j) {
			marks[j], out[j], any = null, NoID, true
			continue
		}
		f := float64(v)
		if f != f && !nanIsValue {
			marks[j], out[j], any = MarkSkip, NoID, true
			continue
		}
		keys[j] = FloatKey(f)
	}
	return any
}

// dictIDs gives ids to the rows of a dictionary array: each entry is
// looked up once, the first time a row uses it, so that ids still follow
// the order of first rows.
func (e *Encoder) dictIDs(c *keyCol, cache *dictCache, d *array.Dictionary, lo, hi int, out []uint32, insert bool) {
	dd := d.Data().Dictionary()
	if dd != cache.dict {
		cache.dict = dd
		cache.ids = make([]uint32, dd.Len())
	}
	dict := d.Dictionary()
	dv := NewStringView(dict)
	dbm, doff := Validity(dict)
	bm, boff := Validity(d)
	idx := d.Indices()
	s := dictScan{e: e, c: c, m: cache.ids, dv: &dv, dbm: dbm, doff: doff, bm: bm, boff: boff + lo, insert: insert}
	switch idx.DataType().ID() {
	case arrow.INT8:
		dictRows(&s, Values[int8](idx)[lo:hi], out)
	case arrow.UINT8:
		dictRows(&s, Values[uint8](idx)[lo:hi], out)
	case arrow.INT16:
		dictRows(&s, Values[int16](idx)[lo:hi], out)
	case arrow.UINT16:
		dictRows(&s, Values[uint16](idx)[lo:hi], out)
	case arrow.INT32:
		dictRows(&s, Values[int32](idx)[lo:hi], out)
	case arrow.UINT32:
		dictRows(&s, Values[uint32](idx)[lo:hi], out)
	case arrow.INT64:
		dictRows(&s, Values[int64](idx)[lo:hi], out)
	case arrow.UINT64:
		dictRows(&s, Values[uint64](idx)[lo:hi], out)
	}
}

type dictScan struct {
	e      *Encoder
	c      *keyCol
	m      []uint32 // the dictionary's cache
	dv     *StringView
	dbm    []byte
	doff   int
	bm     []byte
	boff   int
	insert bool
}

func dictRows[T Integer](s *dictScan, idx []T, out []uint32) {
	m := s.m
	for j, x := range idx {
		if s.bm != nil && !Bit(s.bm, s.boff+j) {
			out[j] = s.e.nullID(s.c, s.insert)
			continue
		}
		k := int(x)
		if id := m[k]; id != 0 {
			if id != NoID {
				id--
			}
			out[j] = id
			continue
		}
		var id uint32
		switch {
		case s.dbm != nil && !Bit(s.dbm, s.doff+k):
			id = s.e.nullID(s.c, s.insert)
		case s.insert:
			id = s.c.strs.Insert(s.dv.At(k))
		default:
			id = s.c.strs.Lookup(s.dv.At(k))
		}
		if id != NoID {
			m[k] = id + 1
		} else {
			m[k] = NoID
		}
		out[j] = id
	}
}

// intRange returns the smallest and largest values of an integer-stored
// column (nulls' slots included: they only widen the range), or ok false
// when the column is not one or is empty.
func intRange(col arrow.Array) (lo, hi int64, ok bool) {
	switch col.DataType().ID() {
	case arrow.INT8:
		return rangeOf(Values[int8](col))
	case arrow.UINT8:
		return rangeOf(Values[uint8](col))
	case arrow.INT16:
		return rangeOf(Values[int16](col))
	case arrow.UINT16:
		return rangeOf(Values[uint16](col))
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		return rangeOf(Values[int32](col))
	case arrow.UINT32:
		return rangeOf(Values[uint32](col))
	case arrow.INT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		return rangeOf(Values[int64](col))
	}
	return 0, 0, false // uint64: values above MaxInt64 would wrap
}

func rangeOf[T Integer](vals []T) (lo, hi int64, ok bool) {
	if len(vals) == 0 {
		return 0, 0, false
	}
	mn, mx := int64(vals[0]), int64(vals[0])
	for _, v := range vals {
		x := int64(v)
		mn = min(mn, x)
		mx = max(mx, x)
	}
	if mx-mn < 0 { // overflow: a huge range
		return 0, 0, false
	}
	return mn, mx, true
}
