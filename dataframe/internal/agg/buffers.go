package agg

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	rowbuf "github.com/shoal-data/shoal/dataframe/internal/distinct/rows"
)

// Typed views of Arrow buffers and builders of arrays from Go slices. The
// kernels read and write buffers directly: no per-value interface calls.

type integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

type signed interface {
	~int8 | ~int16 | ~int32 | ~int64
}

type unsigned interface {
	~uint8 | ~uint16 | ~uint32 | ~uint64
}

type float interface{ ~float32 | ~float64 }

type number interface{ integer | float }

func bufferAs[T any](buf *memory.Buffer, off, n int) []T {
	if buf == nil || n == 0 {
		return nil
	}
	b := buf.Bytes()
	var zero T
	all := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/int(unsafe.Sizeof(zero)))
	return all[off : off+n]
}

// stringView is a string-like array (utf8, binary, large variants) seen as
// offsets into its data. Offsets are widened to int64 only for large types.
type stringView struct {
	offs32 []int32
	offs64 []int64
	data   []byte
}

func newStringView(arr arrow.Array) stringView {
	d := arr.Data()
	bufs := d.Buffers()
	var v stringView
	if bufs[2] != nil {
		v.data = bufs[2].Bytes()
	}
	switch arr.DataType().ID() {
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		v.offs64 = bufferAs[int64](bufs[1], d.Offset(), d.Len()+1)
	default:
		v.offs32 = bufferAs[int32](bufs[1], d.Offset(), d.Len()+1)
	}
	return v
}

// str returns value i without copying; it is valid while the array lives.
func (v *stringView) str(i int) string {
	var lo, hi int
	if v.offs32 != nil {
		lo, hi = int(v.offs32[i]), int(v.offs32[i+1])
	} else if v.offs64 != nil {
		lo, hi = int(v.offs64[i]), int(v.offs64[i+1])
	}
	if lo == hi {
		return ""
	}
	return unsafe.String(&v.data[lo], hi-lo)
}

// bytesToString views b as a string without copying.
func bytesToString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// fixedArray builds an array of type typ (whose width is T's) from values
// picked by order (all of vals when order is nil), with validity from valid
// (nil: all valid).
func fixedArray[T any](mem memory.Allocator, typ arrow.DataType, vals []T, valid []bool, order []uint32) arrow.Array {
	n := len(vals)
	if order != nil {
		n = len(order)
	}
	buf, out := rowbuf.NewBuffer[T](mem, n)
	var flags []bool
	if order == nil {
		copy(out, vals)
		flags = valid
	} else {
		for j, g := range order {
			out[j] = vals[g]
		}
		if valid != nil {
			flags = make([]bool, n)
			for j, g := range order {
				flags[j] = valid[g]
			}
		}
	}
	vbuf, nulls := rowbuf.ValidityFrom(mem, flags)
	return rowbuf.MakeArray(typ, n, []*memory.Buffer{vbuf, buf}, nulls)
}

// gather builds a non-null array of type typ holding at(g) for the groups
// in order (0..n-1 when order is nil).
func gather[T any](mem memory.Allocator, typ arrow.DataType, n int, order []uint32, at func(g uint32) T) arrow.Array {
	if order != nil {
		n = len(order)
	}
	buf, out := rowbuf.NewBuffer[T](mem, n)
	if order == nil {
		for g := range out {
			out[g] = at(uint32(g))
		}
	} else {
		for j, g := range order {
			out[j] = at(g)
		}
	}
	return rowbuf.MakeArray(typ, n, []*memory.Buffer{nil, buf}, 0)
}

// boolArray builds a boolean array from 0/1 bytes picked by order.
func boolArray(mem memory.Allocator, vals []uint8, valid []bool, order []uint32) arrow.Array {
	n := len(vals)
	if order != nil {
		n = len(order)
	}
	buf, bm := rowbuf.NewBitmap(mem, n)
	var flags []bool
	if order == nil {
		for i, v := range vals {
			bm[i>>3] |= (v & 1) << (i & 7)
		}
		flags = valid
	} else {
		for j, g := range order {
			bm[j>>3] |= (vals[g] & 1) << (j & 7)
		}
		if valid != nil {
			flags = make([]bool, n)
			for j, g := range order {
				flags[j] = valid[g]
			}
		}
	}
	vbuf, nulls := rowbuf.ValidityFrom(mem, flags)
	return rowbuf.MakeArray(arrow.FixedWidthTypes.Boolean, n, []*memory.Buffer{vbuf, buf}, nulls)
}

// stringArray builds a string-like array of type typ from values picked by
// order.
func stringArray(mem memory.Allocator, typ arrow.DataType, vals []string, valid []bool, order []uint32) arrow.Array {
	n := len(vals)
	if order != nil {
		n = len(order)
	}
	at := func(j int) int {
		if order == nil {
			return j
		}
		return int(order[j])
	}
	total := 0
	for j := range n {
		total += len(vals[at(j)])
	}
	dbuf, data := rowbuf.NewBuffer[byte](mem, total)
	var flags []bool
	if valid != nil {
		flags = make([]bool, n)
		for j := range n {
			flags[j] = valid[at(j)]
		}
	}
	vbuf, nulls := rowbuf.ValidityFrom(mem, flags)
	large := typ.ID() == arrow.LARGE_STRING || typ.ID() == arrow.LARGE_BINARY
	var obuf *memory.Buffer
	pos := 0
	if large {
		var offs []int64
		obuf, offs = rowbuf.NewBuffer[int64](mem, n+1)
		for j := range n {
			offs[j] = int64(pos)
			pos += copy(data[pos:], vals[at(j)])
		}
		offs[n] = int64(pos)
	} else {
		var offs []int32
		obuf, offs = rowbuf.NewBuffer[int32](mem, n+1)
		for j := range n {
			offs[j] = int32(pos)
			pos += copy(data[pos:], vals[at(j)])
		}
		offs[n] = int32(pos)
	}
	return rowbuf.MakeArray(typ, n, []*memory.Buffer{vbuf, obuf, dbuf}, nulls)
}
