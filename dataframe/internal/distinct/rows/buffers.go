package rows

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Typed views of Arrow buffers and builders of arrays from Go slices: the
// kernels read and write buffers directly, never through a per-value
// interface call.

// Integer is the set of Go integer types that back Arrow integer and
// temporal columns.
type Integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// Float is the set of Go floating-point types.
type Float interface{ ~float32 | ~float64 }

// Number is an integer or a float.
type Number interface{ Integer | Float }

// Values returns the values of a fixed-width array as a []T of length
// arr.Len(), its offset applied. T must have the type's byte width.
func Values[T any](arr arrow.Array) []T {
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

// Validity returns the array's validity bitmap and its bit offset, or nil
// when the array has no nulls.
func Validity(arr arrow.Array) ([]byte, int) {
	if arr.NullN() == 0 {
		return nil, 0
	}
	d := arr.Data()
	if d.Buffers()[0] == nil {
		return nil, 0
	}
	return d.Buffers()[0].Bytes(), d.Offset()
}

// Bit reports whether bit i of bm is set.
func Bit(bm []byte, i int) bool { return bm[uint(i)>>3]&(1<<(uint(i)&7)) != 0 }

// StringView is a string-like array (utf8, binary and their large
// variants) seen as offsets into its data.
type StringView struct {
	offs32 []int32
	offs64 []int64
	data   []byte
}

// NewStringView views a utf8, large utf8, binary or large binary array.
func NewStringView(arr arrow.Array) StringView {
	d := arr.Data()
	bufs := d.Buffers()
	var v StringView
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

// At returns value i without copying; it is valid while the array lives.
func (v *StringView) At(i int) string {
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

// Len returns the byte length of value i.
func (v *StringView) Len(i int) int {
	if v.offs32 != nil {
		return int(v.offs32[i+1] - v.offs32[i])
	}
	if v.offs64 != nil {
		return int(v.offs64[i+1] - v.offs64[i])
	}
	return 0
}

// Bools unpacks rows [lo, hi) of a boolean array into out as 0 and 1.
func Bools(arr arrow.Array, lo, hi int, out []uint8) {
	d := arr.Data()
	bm := d.Buffers()[1].Bytes()
	off := d.Offset() + lo
	for j := range out[:hi-lo] {
		out[j] = (bm[uint(off+j)>>3] >> (uint(off+j) & 7)) & 1
	}
}

// NewBuffer allocates a buffer for n values of T from mem and returns it
// with a typed view of its contents (not zeroed).
func NewBuffer[T any](mem memory.Allocator, n int) (*memory.Buffer, []T) {
	var zero T
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(n * int(unsafe.Sizeof(zero)))
	return buf, bufferAs[T](buf, 0, n)
}

// NewBitmap allocates a zeroed bitmap of n bits.
func NewBitmap(mem memory.Allocator, n int) (*memory.Buffer, []byte) {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	b := buf.Bytes()
	clear(b)
	return buf, b
}

// MakeArray assembles an array and releases the buffers (the array holds
// them). A nil validity buffer, or nulls == 0, means no nulls.
func MakeArray(typ arrow.DataType, n int, bufs []*memory.Buffer, nulls int) arrow.Array {
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

// ValidityFrom builds a validity bitmap from per-row flags, returning the
// buffer (nil if every row is valid or valid is nil) and the null count.
func ValidityFrom(mem memory.Allocator, valid []bool) (*memory.Buffer, int) {
	nulls := 0
	for _, v := range valid {
		if !v {
			nulls++
		}
	}
	if nulls == 0 {
		return nil, 0
	}
	buf, bm := NewBitmap(mem, len(valid))
	for i, v := range valid {
		if v {
			bm[i>>3] |= 1 << (i & 7)
		}
	}
	return buf, nulls
}

// FromSlice builds an array of type typ, whose width must be T's, from
// vals, with validity from valid (nil: all valid).
func FromSlice[T any](mem memory.Allocator, typ arrow.DataType, vals []T, valid []bool) arrow.Array {
	buf, out := NewBuffer[T](mem, len(vals))
	copy(out, vals)
	vbuf, nulls := ValidityFrom(mem, valid)
	return MakeArray(typ, len(vals), []*memory.Buffer{vbuf, buf}, nulls)
}

// Float64s builds a float64 array.
func Float64s(mem memory.Allocator, vals []float64, valid []bool) arrow.Array {
	return FromSlice(mem, arrow.PrimitiveTypes.Float64, vals, valid)
}

// Int64s builds an int64 array.
func Int64s(mem memory.Allocator, vals []int64, valid []bool) arrow.Array {
	return FromSlice(mem, arrow.PrimitiveTypes.Int64, vals, valid)
}

// Strings builds a string-like array of type typ (utf8, large utf8, binary,
// large binary) from vals.
func Strings(mem memory.Allocator, typ arrow.DataType, vals []string, valid []bool) arrow.Array {
	total := 0
	for _, s := range vals {
		total += len(s)
	}
	dbuf, data := NewBuffer[byte](mem, total)
	large := typ.ID() == arrow.LARGE_STRING || typ.ID() == arrow.LARGE_BINARY
	var obuf *memory.Buffer
	pos := 0
	if large {
		var offs []int64
		obuf, offs = NewBuffer[int64](mem, len(vals)+1)
		for j, s := range vals {
			offs[j] = int64(pos)
			pos += copy(data[pos:], s)
		}
		offs[len(vals)] = int64(pos)
	} else {
		var offs []int32
		obuf, offs = NewBuffer[int32](mem, len(vals)+1)
		for j, s := range vals {
			offs[j] = int32(pos)
			pos += copy(data[pos:], s)
		}
		offs[len(vals)] = int32(pos)
	}
	vbuf, nulls := ValidityFrom(mem, valid)
	return MakeArray(typ, len(vals), []*memory.Buffer{vbuf, obuf, dbuf}, nulls)
}

// BoolArray builds a boolean array from 0/1 bytes.
func BoolArray(mem memory.Allocator, vals []uint8, valid []bool) arrow.Array {
	buf, bm := NewBitmap(mem, len(vals))
	for i, v := range vals {
		bm[i>>3] |= (v & 1) << (i & 7)
	}
	vbuf, nulls := ValidityFrom(mem, valid)
	return MakeArray(arrow.FixedWidthTypes.Boolean, len(vals), []*memory.Buffer{vbuf, buf}, nulls)
}

// Nulls returns an array of n nulls of type typ.
func Nulls(mem memory.Allocator, typ arrow.DataType, n int) arrow.Array {
	return array.MakeArrayOfNull(mem, typ, n)
}

// ReleaseAll releases every non-nil array of arrs.
func ReleaseAll(arrs []arrow.Array) {
	for _, a := range arrs {
		if a != nil {
			a.Release()
		}
	}
}

// bytesToString views b as a string without copying.
func bytesToString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}
