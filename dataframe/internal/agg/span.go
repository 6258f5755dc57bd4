package agg

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	rowbuf "github.com/shoal-data/shoal/dataframe/internal/distinct/rows"
)

// span is the rows a kernel reads: [lo, hi).
type span struct {
	lo, hi int
}

func rowRange(lo, hi int) span { return span{lo: lo, hi: hi} }

func (s span) len() int { return s.hi - s.lo }

// ensure returns (*buf)[:n], reallocating when it is too small.
func ensure[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, n)
	}
	return (*buf)[:n]
}

// load returns the values of span s of a numeric or boolean column as a
// []T: a slice of the column's buffer. Booleans (T is then uint8) are
// unpacked into scratch as 0 and 1.
func load[T any](col arrow.Array, s span, scratch *[]T) []T {
	if col.DataType().ID() == arrow.BOOL {
		out := ensure(scratch, s.len())
		b := unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(out))), len(out))
		d := col.Data()
		bm := d.Buffers()[1].Bytes()
		off := d.Offset()
		for j := range b {
			i := uint(off + s.lo + j)
			b[j] = bm[i>>3] >> (i & 7) & 1
		}
		return out
	}
	return rowbuf.Values[T](col)[s.lo:s.hi]
}

// validOf returns the validity bitmap of span s and the bit of its first
// row, or nil when the column has no nulls.
func validOf(col arrow.Array, s span) ([]byte, int) {
	bm, off := rowbuf.Validity(col)
	if bm == nil {
		return nil, 0
	}
	return bm, off + s.lo
}

// strLoader reads rows of a string-like or dictionary-of-strings column as
// strings that point into the column's buffers (valid while it lives), with
// their validity. It keeps the strings of the last dictionary it saw, so a
// dictionary is read once, not once per chunk.
type strLoader struct {
	dict       arrow.ArrayData
	entries    []string
	entryValid []bool // nil when no entry is null
	strs       []string
	valid      []bool
}

// load returns the rows of span s and their validity, nil when every row
// is valid. Null rows read as "".
func (l *strLoader) load(col arrow.Array, s span) ([]string, []bool) {
	n := s.len()
	strs, valid := ensure(&l.strs, n), ensure(&l.valid, n)
	bm, boff := rowbuf.Validity(col)
	anyNull := bm != nil
	if anyNull {
		for j := range valid {
			valid[j] = rowbuf.Bit(bm, boff+s.lo+j)
		}
	}
	d, ok := col.(*array.Dictionary)
	if !ok {
		v := newStringView(col)
		switch {
		case v.offs32 != nil:
			o := v.offs32[s.lo : s.hi+1]
			for j := range strs {
				a, b := o[j], o[j+1]
				if a == b {
					strs[j] = ""
				} else {
					strs[j] = unsafe.String(&v.data[a], int(b-a))
				}
			}
		default:
			for j := range strs {
				strs[j] = v.str(s.lo + j)
			}
		}
		if !anyNull {
			return strs, nil
		}
		return strs, valid
	}
	l.readDict(d)
	if l.entryValid != nil && !anyNull {
		for j := range valid {
			valid[j] = true
		}
		anyNull = true
	}
	var rowValid []bool
	if anyNull {
		rowValid = valid
	}
	idx := d.Indices()
	lo, hi := s.lo, s.hi
	switch idx.DataType().ID() {
	case arrow.INT8:
		dictStrings(rowbuf.Values[int8](idx)[lo:hi], l.entries, l.entryValid, strs, rowValid)
	case arrow.UINT8:
		dictStrings(rowbuf.Values[uint8](idx)[lo:hi], l.entries, l.entryValid, strs, rowValid)
	case arrow.INT16:
		dictStrings(rowbuf.Values[int16](idx)[lo:hi], l.entries, l.entryValid, strs, rowValid)
	case arrow.UINT16:
		dictStrings(rowbuf.Values[uint16](idx)[lo:hi], l.entries, l.entryValid, strs, rowValid)
	case arrow.INT32:
		dictStrings(rowbuf.Values[int32](idx)[lo:hi], l.entries, l.entryValid, strs, rowValid)
	case arrow.UINT32:
		dictStrings(rowbuf.Values[uint32](idx)[lo:hi], l.entries, l.entryValid, strs, rowValid)
	case arrow.INT64:
		dictStrings(rowbuf.Values[int64](idx)[lo:hi], l.entries, l.entryValid, strs, rowValid)
	case arrow.UINT64:
		dictStrings(rowbuf.Values[uint64](idx)[lo:hi], l.entries, l.entryValid, strs, rowValid)
	}
	return strs, rowValid
}

// readDict caches the entries of d's dictionary.
func (l *strLoader) readDict(d *array.Dictionary) {
	dd := d.Data().Dictionary()
	if dd == l.dict {
		return
	}
	l.dict = dd
	dict := d.Dictionary()
	v := newStringView(dict)
	l.entries = make([]string, dict.Len())
	for i := range l.entries {
		l.entries[i] = v.str(i)
	}
	l.entryValid = nil
	if bm, boff := rowbuf.Validity(dict); bm != nil {
		l.entryValid = make([]bool, dict.Len())
		for i := range l.entryValid {
			l.entryValid[i] = rowbuf.Bit(bm, boff+i)
		}
	}
}

// dictStrings looks up the entries of rows; valid (nil when every row and
// entry is valid) holds the rows' validity and gets the entries' folded in.
// The index of a null row can be anything: it is not looked up.
func dictStrings[T integer](idx []T, entries []string, entryValid []bool, strs []string, valid []bool) {
	if valid == nil {
		for j, k := range idx {
			strs[j] = entries[k]
		}
		return
	}
	for j, k := range idx {
		if !valid[j] {
			strs[j] = ""
			continue
		}
		strs[j] = entries[k]
		if entryValid != nil && !entryValid[k] {
			valid[j] = false
		}
	}
}
