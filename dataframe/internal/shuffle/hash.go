package shuffle

import (
	"encoding/binary"
	"math"
	"math/bits"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	rowbuf "github.com/shoal-data/shoal/dataframe/internal/distinct/rows"
)

// The hash of a row is a fixed function of its key values (no per-process
// seed), so that every process of a cluster sends equal keys to the same
// output. It is the hash of the group-by kernels (package agg, whose
// HashPartition splits rows the same way; a test checks it): wyhash-style
// loads of up to 8 bytes and a 64x64->128-bit multiply to mix.

const (
	hk0 = 0xa0761d6478bd642f
	hk1 = 0xe7037ed1a0b428db
	hk2 = 0x8ebc6af09c88c6e3
	hk3 = 0x589965cc75374cc3
)

// nullHash is the hash of a null key.
const nullHash = 0x2d358dccaa6c78a5

func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

func hashUint64(v uint64) uint64 { return mix(v^hk0, hk1) }

// combineHash folds the hash of one more key into the hash of a tuple.
func combineHash(h, k uint64) uint64 { return mix(h^hk2, k^hk3) }

// outputOf maps a row hash to one of n outputs.
func outputOf(h uint64, n int) int32 {
	return int32((mix(h^hk3, hk2) >> 32) * uint64(n) >> 32)
}

// hashBytes hashes the bytes of b.
func hashBytes(b []byte) uint64 {
	n := len(b)
	if n > 16 {
		seed := uint64(hk0)
		i := 0
		for ; n-i > 16; i += 16 {
			seed = mix(binary.LittleEndian.Uint64(b[i:])^hk1, binary.LittleEndian.Uint64(b[i+8:])^seed)
		}
		a := binary.LittleEndian.Uint64(b[n-16:])
		c := binary.LittleEndian.Uint64(b[n-8:])
		return mix(a^hk1^uint64(n), c^seed^hk3)
	}
	var w0, w1 uint64
	switch {
	case n == 16:
		w0, w1 = binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
	case n > 8:
		w0, w1 = binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[n-8:])>>(8*uint(16-n))
	case n == 8:
		w0 = binary.LittleEndian.Uint64(b)
	case n >= 4:
		lo, hi := uint64(binary.LittleEndian.Uint32(b)), uint64(binary.LittleEndian.Uint32(b[n-4:]))
		w0 = lo | (hi>>(8*uint(8-n)))<<32
	case n > 0:
		w0 = uint64(b[0])
		if n > 1 {
			w0 |= uint64(b[1]) << 8
		}
		if n > 2 {
			w0 |= uint64(b[2]) << 16
		}
	}
	return mix(w0^hk1, w1^hk2^uint64(n))
}

// floatKey is the value of a float that is hashed: -0 as 0, every NaN
// alike.
func floatKey(f float64) uint64 {
	switch {
	case f == 0:
		return 0
	case f != f:
		return 0x7ff8000000000001
	}
	return math.Float64bits(f)
}

// hashable reports whether a column of type t can be a hash key.
func hashable(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.DATE32, arrow.DATE64, arrow.TIME32, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION,
		arrow.FLOAT32, arrow.FLOAT64, arrow.BOOL,
		arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		return true
	case arrow.DICTIONARY:
		return hashable(t.(*arrow.DictionaryType).ValueType)
	}
	return false
}

// hashColumn writes (combine false) or folds (combine true) the hash of
// each row of col into hs.
func hashColumn(col arrow.Array, hs []uint64, combine bool) {
	if col.Len() == 0 {
		return
	}
	bm, boff := rowbuf.Validity(col)
	switch col.DataType().ID() {
	case arrow.INT8:
		hashInts(rowbuf.Values[int8](col), bm, boff, hs, combine)
	case arrow.UINT8:
		hashInts(rowbuf.Values[uint8](col), bm, boff, hs, combine)
	case arrow.INT16:
		hashInts(rowbuf.Values[int16](col), bm, boff, hs, combine)
	case arrow.UINT16:
		hashInts(rowbuf.Values[uint16](col), bm, boff, hs, combine)
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		hashInts(rowbuf.Values[int32](col), bm, boff, hs, combine)
	case arrow.UINT32:
		hashInts(rowbuf.Values[uint32](col), bm, boff, hs, combine)
	case arrow.INT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		hashInts(rowbuf.Values[int64](col), bm, boff, hs, combine)
	case arrow.UINT64:
		hashInts(rowbuf.Values[uint64](col), bm, boff, hs, combine)
	case arrow.FLOAT32:
		hashFloats(rowbuf.Values[float32](col), bm, boff, hs, combine)
	case arrow.FLOAT64:
		hashFloats(rowbuf.Values[float64](col), bm, boff, hs, combine)
	case arrow.BOOL:
		d := col.Data()
		vals := d.Buffers()[1].Bytes()
		voff := d.Offset()
		for j := range hs[:col.Len()] {
			h := uint64(nullHash)
			if bm == nil || rowbuf.Bit(bm, boff+j) {
				var v uint64
				if rowbuf.Bit(vals, voff+j) {
					v = 1
				}
				h = hashUint64(v)
			}
			put(hs, j, h, combine)
		}
	case arrow.STRING, arrow.BINARY:
		hashStrings(newOffsets[int32](col), col, bm, boff, hs, combine)
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		hashStrings(newOffsets[int64](col), col, bm, boff, hs, combine)
	case arrow.DICTIONARY:
		// Hash each entry once, then each row by its entry.
		d := col.(*array.Dictionary)
		dict := d.Dictionary()
		entries := make([]uint64, dict.Len())
		hashColumn(dict, entries, false)
		ebm, eoff := rowbuf.Validity(dict)
		for j := range hs[:col.Len()] {
			h := uint64(nullHash)
			if bm == nil || rowbuf.Bit(bm, boff+j) {
				e := d.GetValueIndex(j)
				if ebm == nil || rowbuf.Bit(ebm, eoff+e) {
					h = entries[e]
				}
			}
			put(hs, j, h, combine)
		}
	}
}

func put(hs []uint64, j int, h uint64, combine bool) {
	if combine {
		hs[j] = combineHash(hs[j], h)
	} else {
		hs[j] = h
	}
}

// hashInts hashes integers by value, whatever their width or signedness
// (uint64 values above MaxInt64 hash like the int64 of the same bits).
func hashInts[T signed | unsigned](vals []T, bm []byte, boff int, hs []uint64, combine bool) {
	for j, v := range vals {
		h := uint64(nullHash)
		if bm == nil || rowbuf.Bit(bm, boff+j) {
			h = hashUint64(uint64(int64(v)))
		}
		put(hs, j, h, combine)
	}
}

func hashFloats[T float32 | float64](vals []T, bm []byte, boff int, hs []uint64, combine bool) {
	for j, v := range vals {
		h := uint64(nullHash)
		if bm == nil || rowbuf.Bit(bm, boff+j) {
			h = hashUint64(floatKey(float64(v)))
		}
		put(hs, j, h, combine)
	}
}

func hashStrings[O int32 | int64](offs []O, col arrow.Array, bm []byte, boff int, hs []uint64, combine bool) {
	var data []byte
	if b := col.Data().Buffers()[2]; b != nil {
		data = b.Bytes()
	}
	for j := range hs[:col.Len()] {
		h := uint64(nullHash)
		if bm == nil || rowbuf.Bit(bm, boff+j) {
			h = hashBytes(data[offs[j]:offs[j+1]])
		}
		put(hs, j, h, combine)
	}
}

type signed interface {
	~int8 | ~int16 | ~int32 | ~int64
}

type unsigned interface {
	~uint8 | ~uint16 | ~uint32 | ~uint64
}

// newOffsets returns the len+1 offsets of a string-like array.
func newOffsets[O int32 | int64](col arrow.Array) []O {
	d := col.Data()
	return bufferAs[O](d.Buffers()[1].Bytes(), d.Offset(), d.Len()+1)
}

func bufferAs[T any](b []byte, off, n int) []T {
	if n == 0 {
		return nil
	}
	var zero T
	all := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/int(unsafe.Sizeof(zero)))
	return all[off : off+n]
}
