package agg

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
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

// fixedValues returns the values of a fixed-width array as a []T of length
// arr.Len(), the array's offset applied. T must have the type's byte width.
func fixedValues[T any](arr arrow.Array) []T {
	d := arr.Data()
	return bufferAs[T](d.Buffers()[1], d.Offset(), d.Len())
}

func bufferAs[T any](buf *memory.Buffer, off, n int) []T {
	if buf == nil || n == 0 {
		return nil
	}
	b := buf.Bytes()
	var zero T
	all := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/int(unsafe.Sizeof(zero)))
	return all[off : off+n]
}

// validity returns the array's validity bitmap and its bit offset, or nil
// when the array has no nulls.
func validity(arr arrow.Array) ([]byte, int) {
	if arr.NullN() == 0 {
		return nil, 0
	}
	d := arr.Data()
	if d.Buffers()[0] == nil {
		return nil, 0
	}
	return d.Buffers()[0].Bytes(), d.Offset()
}

func bitSet(bm []byte, i int) bool { return bm[uint(i)>>3]&(1<<(uint(i)&7)) != 0 }

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

// boolsOf unpacks rows [lo, hi) of a boolean array into out as 0 and 1.
func boolsOf(arr arrow.Array, lo, hi int, out []uint8) {
	d := arr.Data()
	bm := d.Buffers()[1].Bytes()
	off := d.Offset() + lo
	for j := range out[:hi-lo] {
		out[j] = (bm[uint(off+j)>>3] >> (uint(off+j) & 7)) & 1
	}
}

// newBuffer allocates a buffer for n values of T from mem and returns it with
// a typed view of its contents.
func newBuffer[T any](mem memory.Allocator, n int) (*memory.Buffer, []T) {
	var zero T
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(n * int(unsafe.Sizeof(zero)))
	return buf, bufferAs[T](buf, 0, n)
}

// newBitmap allocates a zeroed bitmap of n bits.
func newBitmap(mem memory.Allocator, n int) (*memory.Buffer, []byte) {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	b := buf.Bytes()
	clear(b)
	return buf, b
}

// makeArray assembles an array and releases the buffers (the array holds
// them). A nil validity buffer means no nulls.
func makeArray(typ arrow.DataType, n int, bufs []*memory.Buffer, nulls int) arrow.Array {
	if nulls == 0 && bufs[0] != nil {
		bufs[0].Release()
		bufs[0] = nil
	}
	data := array.NewData(typ, n, bufs, nil, nulls, 0)
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	arr := array.MakeFromData(data)
	data.Release()
	return arr
}

// validityFrom builds a validity bitmap from per-row flags, returning the
// buffer (nil if every row is valid) and the null count.
func validityFrom(mem memory.Allocator, valid []bool) (*memory.Buffer, int) {
	nulls := 0
	for _, v := range valid {
		if !v {
			nulls++
		}
	}
	if nulls == 0 {
		return nil, 0
	}
	buf, bm := newBitmap(mem, len(valid))
	for i, v := range valid {
		if v {
			bm[i>>3] |= 1 << (i & 7)
		}
	}
	return buf, nulls
}

// fixedArray builds an array of type typ (whose width is T's) from values
// picked by order (all of vals when order is nil), with validity from valid
// (nil: all valid).
func fixedArray[T any](mem memory.Allocator, typ arrow.DataType, vals []T, valid []bool, order []uint32) arrow.Array {
	n := len(vals)
	if order != nil {
		n = len(order)
	}
	buf, out := newBuffer[T](mem, n)
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
	vbuf, nulls := validityFrom(mem, flags)
	return makeArray(typ, n, []*memory.Buffer{vbuf, buf}, nulls)
}

// gather builds a non-null array of type typ holding at(g) for the groups
// in order (0..n-1 when order is nil).
func gather[T any](mem memory.Allocator, typ arrow.DataType, n int, order []uint32, at func(g uint32) T) arrow.Array {
	if order != nil {
		n = len(order)
	}
	buf, out := newBuffer[T](mem, n)
	if order == nil {
		for g := range out {
			out[g] = at(uint32(g))
		}
	} else {
		for j, g := range order {
			out[j] = at(g)
		}
	}
	return makeArray(typ, n, []*memory.Buffer{nil, buf}, 0)
}

// boolArray builds a boolean array from 0/1 bytes picked by order.
func boolArray(mem memory.Allocator, vals []uint8, valid []bool, order []uint32) arrow.Array {
	n := len(vals)
	if order != nil {
		n = len(order)
	}
	buf, bm := newBitmap(mem, n)
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
	vbuf, nulls := validityFrom(mem, flags)
	return makeArray(arrow.FixedWidthTypes.Boolean, n, []*memory.Buffer{vbuf, buf}, nulls)
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
	dbuf, data := newBuffer[byte](mem, total)
	var flags []bool
	if valid != nil {
		flags = make([]bool, n)
		for j := range n {
			flags[j] = valid[at(j)]
		}
	}
	vbuf, nulls := validityFrom(mem, flags)
	large := typ.ID() == arrow.LARGE_STRING || typ.ID() == arrow.LARGE_BINARY
	var obuf *memory.Buffer
	pos := 0
	if large {
		var offs []int64
		obuf, offs = newBuffer[int64](mem, n+1)
		for j := range n {
			offs[j] = int64(pos)
			pos += copy(data[pos:], vals[at(j)])
		}
		offs[n] = int64(pos)
	} else {
		var offs []int32
		obuf, offs = newBuffer[int32](mem, n+1)
		for j := range n {
			offs[j] = int32(pos)
			pos += copy(data[pos:], vals[at(j)])
		}
		offs[n] = int32(pos)
	}
	return makeArray(typ, n, []*memory.Buffer{vbuf, obuf, dbuf}, nulls)
}
