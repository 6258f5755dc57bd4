package sortk

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	rowbuf "github.com/shoal-data/shoal/dataframe/internal/distinct/rows"
)

// Typed views of Arrow buffers and builders of arrays from Go slices: the
// kernels read and write buffers directly, with no per-value interface call.

type signed interface {
	~int8 | ~int16 | ~int32 | ~int64
}

type unsigned interface {
	~uint8 | ~uint16 | ~uint32 | ~uint64
}

type float interface{ ~float32 | ~float64 }

func bufferAs[T any](buf *memory.Buffer, off, n int) []T {
	if buf == nil || n == 0 {
		return nil
	}
	b := buf.Bytes()
	var zero T
	all := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/int(unsafe.Sizeof(zero)))
	return all[off : off+n]
}

// validBools returns whether each row of arr is valid, or nil when no row
// is null.
func validBools(arr arrow.Array) []bool {
	bm, off := rowbuf.Validity(arr)
	if bm == nil {
		return nil
	}
	out := make([]bool, arr.Len())
	for i := range out {
		out[i] = rowbuf.Bit(bm, off+i)
	}
	return out
}

// bytesView is a string-like array (utf8, binary and their large variants)
// seen as offsets into its data.
type bytesView struct {
	offs32 []int32
	offs64 []int64
	data   []byte
}

func newBytesView(arr arrow.Array) bytesView {
	d := arr.Data()
	bufs := d.Buffers()
	var v bytesView
	if bufs[2] != nil {
		v.data = bufs[2].Bytes()
	}
	if d.Len() == 0 {
		return v
	}
	switch arr.DataType().ID() {
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		v.offs64 = bufferAs[int64](bufs[1], d.Offset(), d.Len()+1)
	default:
		v.offs32 = bufferAs[int32](bufs[1], d.Offset(), d.Len()+1)
	}
	return v
}

// at returns value i without copying; it is valid while the array lives.
func (v *bytesView) at(i int) []byte {
	var lo, hi int
	if v.offs32 != nil {
		lo, hi = int(v.offs32[i]), int(v.offs32[i+1])
	} else {
		lo, hi = int(v.offs64[i]), int(v.offs64[i+1])
	}
	return v.data[lo:hi:hi]
}

// span returns the offsets of value i.
func (v *bytesView) span(i int) (int, int) {
	if v.offs32 != nil {
		return int(v.offs32[i]), int(v.offs32[i+1])
	}
	return int(v.offs64[i]), int(v.offs64[i+1])
}
