package expr

import (
	"math/bits"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// fixed is the set of Go types stored in Arrow fixed-width buffers.
type fixed interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// number is the set of types arithmetic kernels run on.
type number interface {
	~int64 | ~uint64 | ~float32 | ~float64
}

// allocValues allocates a buffer of n values of T.
func allocValues[T fixed](mem memory.Allocator, n int) (*memory.Buffer, []T) {
	buf := memory.NewResizableBuffer(mem)
	var zero T
	buf.Resize(n * int(unsafe.Sizeof(zero)))
	return buf, castBytes[T](buf.Bytes(), n)
}

// allocBitmap allocates a zeroed bitmap of n bits.
func allocBitmap(mem memory.Allocator, n int) (*memory.Buffer, []byte) {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	b := buf.Bytes()
	clear(b)
	return buf, b
}

func castBytes[T fixed](b []byte, n int) []T {
	if n == 0 || len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
}

// values is the typed view of the values of a fixed-width array, offset
// applied.
func values[T fixed](a arrow.Array) []T {
	d := a.Data()
	buf := d.Buffers()[1]
	if buf == nil || d.Len() == 0 {
		return nil
	}
	var zero T
	size := int(unsafe.Sizeof(zero))
	b := buf.Bytes()
	all := castBytes[T](b, len(b)/size)
	return all[d.Offset() : d.Offset()+d.Len()]
}

// validity gives the validity bitmap and its bit offset, or nil when a has
// no nulls.
func validity(a arrow.Array) ([]byte, int) {
	if a.NullN() == 0 {
		return nil, 0
	}
	d := a.Data()
	if d.Buffers()[0] == nil {
		return nil, 0
	}
	return d.Buffers()[0].Bytes(), d.Offset()
}

// bitsOf gives the value bitmap of a boolean array and its bit offset.
func bitsOf(a arrow.Array) ([]byte, int) {
	d := a.Data()
	return d.Buffers()[1].Bytes(), d.Offset()
}

// newArray wraps buffers in an array; validity may be nil. nulls may be
// array.UnknownNullCount.
func newArray(t arrow.DataType, n int, validity, vals *memory.Buffer, nulls int) arrow.Array {
	if validity == nil {
		nulls = 0
	}
	d := array.NewData(t, n, []*memory.Buffer{validity, vals}, nil, nulls, 0)
	defer d.Release()
	if validity != nil {
		validity.Release()
	}
	vals.Release()
	return array.MakeFromData(d)
}

// newStringArray wraps offsets and data in a utf8 (or large_utf8) array.
func newStringArray(t arrow.DataType, n int, validity, offsets, data *memory.Buffer, nulls int) arrow.Array {
	if validity == nil {
		nulls = 0
	}
	d := array.NewData(t, n, []*memory.Buffer{validity, offsets, data}, nil, nulls, 0)
	defer d.Release()
	for _, b := range []*memory.Buffer{validity, offsets, data} {
		if b != nil {
			b.Release()
		}
	}
	return array.MakeFromData(d)
}

// copyValidity returns a fresh copy of the validity of a (nil if none) and
// its null count.
func copyValidity(mem memory.Allocator, a arrow.Array) (*memory.Buffer, int) {
	bm, off := validity(a)
	if bm == nil {
		return nil, 0
	}
	n := a.Len()
	buf, out := allocBitmap(mem, n)
	bitutil.CopyBitmap(bm, off, n, out, 0)
	return buf, a.NullN()
}

// andValidity combines the validity of arrays (nil entries and broadcast
// arrays are skipped) into a new bitmap of n bits; nil when none has nulls.
func andValidity(mem memory.Allocator, n int, arrs ...arrow.Array) (*memory.Buffer, int) {
	var buf *memory.Buffer
	var out []byte
	for _, a := range arrs {
		if a == nil || a.Len() != n {
			continue
		}
		bm, off := validity(a)
		if bm == nil {
			continue
		}
		if buf == nil {
			buf, out = allocBitmap(mem, n)
			bitutil.CopyBitmap(bm, off, n, out, 0)
			continue
		}
		bitutil.BitmapAnd(out, bm, 0, int64(off), out, 0, int64(n))
	}
	if buf == nil {
		return nil, 0
	}
	return buf, n - bitutil.CountSetBits(out, 0, n)
}

// alignedBits returns n bits of bm from bit offset off as a byte-aligned
// bitmap, copying only when off is not a multiple of 8.
func alignedBits(bm []byte, off, n int) []byte {
	if off%8 == 0 {
		return bm[off/8 : off/8+int(bitutil.BytesForBits(int64(n)))]
	}
	out := make([]byte, bitutil.BytesForBits(int64(n)))
	bitutil.CopyBitmap(bm, off, n, out, 0)
	return out
}

// countOnes counts the set bits among the first n bits of an aligned bitmap.
func countOnes(bm []byte, n int) int {
	c := 0
	full := n / 8
	i := 0
	for ; i+8 <= full; i += 8 {
		c += bits.OnesCount64(le64(bm[i:]))
	}
	for ; i < full; i++ {
		c += bits.OnesCount8(bm[i])
	}
	if r := n % 8; r != 0 {
		c += bits.OnesCount8(bm[full] & byte(1<<r-1))
	}
	return c
}

func le64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// strView reads the strings of a utf8 or large_utf8 array.
type strView[O int32 | int64] struct {
	offs []O // n+1 offsets into data
	data []byte
}

func newStrView[O int32 | int64](a arrow.Array) strView[O] {
	d := a.Data()
	var v strView[O]
	if d.Buffers()[1] != nil && d.Buffers()[1].Len() > 0 {
		v.offs = values1[O](d.Buffers()[1].Bytes(), d.Offset(), d.Len()+1)
	} else {
		v.offs = make([]O, d.Len()+1)
	}
	if d.Buffers()[2] != nil {
		v.data = d.Buffers()[2].Bytes()
	}
	return v
}

func values1[O int32 | int64](b []byte, off, n int) []O {
	var zero O
	all := unsafe.Slice((*O)(unsafe.Pointer(&b[0])), len(b)/int(unsafe.Sizeof(zero)))
	return all[off : off+n]
}

func (v strView[O]) at(i int) []byte { return v.data[v.offs[i]:v.offs[i+1]] }

func (v strView[O]) len() int { return len(v.offs) - 1 }

// bytesAt gives the i-th string of a utf8 or large_utf8 array without
// copying. It is for occasional use; kernels use strView.
func bytesAt(a arrow.Array, i int) []byte {
	if a.DataType().ID() == arrow.LARGE_STRING {
		return newStrView[int64](a).at(i)
	}
	return newStrView[int32](a).at(i)
}

func b2s(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
