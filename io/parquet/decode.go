package parquet

// This file turns Parquet pages into Arrow arrays, column at a time. Each
// page is converted with typed loops over its decoded buffers: values of a
// page without nulls or dictionary are copied in one go, pages with nulls
// are copied compactly and then spread out by their definition levels, and
// dictionary-encoded pages are gathered through the dictionary. Nothing
// here makes an interface call per value.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/parquet-go/parquet-go"
)

// columnDecoder accumulates the rows of one column of a part.
type columnDecoder interface {
	// page appends rows [lo, hi) of p.
	page(p pq.Page, lo, hi int) error
	// finish returns the column; the decoder must not be used afterwards.
	finish() (arrow.Array, error)
	// release frees what the decoder holds, after an error.
	release()
}

// levels describes the rows [lo, hi) of a page: where their values start
// among the page's non-null values, how many are non-null, and their
// definition levels (nil when none is null).
type levels struct {
	vlo, nn int
	def     []byte
	maxDef  byte
}

func pageLevels(p pq.Page, lo, hi int, maxDef byte) levels {
	def := p.DefinitionLevels()
	if len(def) == 0 || maxDef == 0 {
		return levels{vlo: lo, nn: hi - lo}
	}
	if hi > len(def) {
		hi = len(def)
	}
	sel := []byte{maxDef}
	l := levels{vlo: bytes.Count(def[:lo], sel), maxDef: maxDef}
	l.nn = bytes.Count(def[lo:hi], sel)
	if l.nn != hi-lo {
		l.def = def[lo:hi]
	}
	return l
}

// validity is the null bitmap of a column being built; it is allocated at
// the first null.
type validity struct {
	mem   memory.Allocator
	n     int // rows the column will have
	buf   *memory.Buffer
	bits  []byte
	nulls int
}

// mark records rows [pos, pos+len(def)) as valid where def == maxDef, or
// all valid when def is nil.
func (v *validity) mark(pos, n int, def []byte, maxDef byte) {
	if def == nil {
		if v.bits != nil {
			bitutil.SetBitsTo(v.bits, int64(pos), int64(n), true)
		}
		return
	}
	if v.bits == nil {
		v.buf = memory.NewResizableBuffer(v.mem)
		v.buf.Resize(int(bitutil.BytesForBits(int64(v.n))))
		v.bits = v.buf.Bytes()
		clear(v.bits)
		bitutil.SetBitsTo(v.bits, 0, int64(pos), true)
	}
	for i, d := range def {
		if d == maxDef {
			bitutil.SetBit(v.bits, pos+i)
		} else {
			v.nulls++
		}
	}
}

func (v *validity) release() {
	if v.buf != nil {
		v.buf.Release()
		v.buf = nil
		v.bits = nil
	}
}

// allocate returns a buffer of n values of type T from mem.
func allocate[T any](mem memory.Allocator, n int) (*memory.Buffer, []T) {
	var zero T
	buf := memory.NewResizableBuffer(mem)
	size := n * int(unsafe.Sizeof(zero))
	buf.Resize(size)
	if n == 0 {
		return buf, nil
	}
	return buf, unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(buf.Bytes()))), n)
}

// asBytes views a slice of fixed-size values as bytes.
func asBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
}

// convertFunc converts the values [from, to) of a page's raw values (each
// size bytes) into dst.
type convertFunc[T any] func(dst []T, raw []byte, from, to int) error

// fixedDecoder builds a column of fixed-width values.
type fixedDecoder[T any] struct {
	typ    arrow.DataType
	size   int // bytes of one stored value
	conv   convertFunc[T]
	maxDef byte
	valid  validity
	buf    *memory.Buffer
	vals   []T
	pos    int

	dict     pq.Dictionary // the dictionary dictVals was made from
	dictVals []T
}

func newFixedDecoder[T any](mem memory.Allocator, typ arrow.DataType, n, size int, maxDef byte, conv convertFunc[T]) *fixedDecoder[T] {
	d := &fixedDecoder[T]{typ: typ, size: size, conv: conv, maxDef: maxDef, valid: validity{mem: mem, n: n}}
	d.buf, d.vals = allocate[T](mem, n)
	return d
}

func rawValues(p pq.Page) []byte {
	v := p.Data()
	raw, _ := v.Data()
	return raw
}

func (d *fixedDecoder[T]) page(p pq.Page, lo, hi int) error {
	n := hi - lo
	if d.pos+n > len(d.vals) {
		return fmt.Errorf("%w: more rows than the metadata says", ErrCorrupt)
	}
	l := pageLevels(p, lo, hi, d.maxDef)
	dst := d.vals[d.pos : d.pos+n]
	if dict := p.Dictionary(); dict != nil {
		if err := d.gather(dst[:l.nn], dict, p, l); err != nil {
			return err
		}
	} else {
		raw := rawValues(p)
		if (l.vlo+l.nn)*d.size > len(raw) {
			return fmt.Errorf("%w: page has fewer values than its levels say", ErrCorrupt)
		}
		if err := d.conv(dst[:l.nn], raw, l.vlo, l.vlo+l.nn); err != nil {
			return err
		}
	}
	if l.def != nil {
		expand(dst, l.nn, l.def, l.maxDef)
	}
	d.valid.mark(d.pos, n, l.def, l.maxDef)
	d.pos += n
	return nil
}

// gather looks the page's dictionary indices up.
func (d *fixedDecoder[T]) gather(dst []T, dict pq.Dictionary, p pq.Page, l levels) error {
	if dict != d.dict {
		raw := rawValues(dict.Page())
		n := dict.Len()
		if n*d.size > len(raw) {
			return fmt.Errorf("%w: dictionary has fewer values than it says", ErrCorrupt)
		}
		d.dictVals = make([]T, n)
		if err := d.conv(d.dictVals, raw, 0, n); err != nil {
			return err
		}
		d.dict = dict
	}
	idx, err := pageIndexes(p, l)
	if err != nil {
		return err
	}
	return gatherIndexes(dst, d.dictVals, idx)
}

func pageIndexes(p pq.Page, l levels) ([]int32, error) {
	v := p.Data()
	idx := v.Int32()
	if l.vlo+l.nn > len(idx) {
		return nil, fmt.Errorf("%w: page has fewer values than its levels say", ErrCorrupt)
	}
	return idx[l.vlo : l.vlo+l.nn], nil
}

func gatherIndexes[T any](dst, dict []T, idx []int32) error {
	n := uint32(len(dict))
	for i, x := range idx {
		if uint32(x) >= n {
			return fmt.Errorf("%w: dictionary index %d out of range [0, %d)", ErrCorrupt, x, n)
		}
		dst[i] = dict[x]
	}
	return nil
}

// expand spreads the nn compact values at the start of dst out to the
// positions of def that hold a value, leaving zero values at nulls. It runs
// backwards so that no value is overwritten before it is moved.
func expand[T any](dst []T, nn int, def []byte, maxDef byte) {
	var zero T
	k := nn - 1
	for i := len(def) - 1; i >= 0; i-- {
		if def[i] == maxDef {
			dst[i] = dst[k]
			k--
		} else {
			dst[i] = zero
		}
	}
}

func (d *fixedDecoder[T]) finish() (arrow.Array, error) {
	if d.pos != len(d.vals) {
		d.release()
		return nil, fmt.Errorf("%w: %d rows read, the metadata says %d", ErrCorrupt, d.pos, len(d.vals))
	}
	data := array.NewData(d.typ, d.pos, []*memory.Buffer{d.valid.buf, d.buf}, nil, d.valid.nulls, 0)
	d.release()
	defer data.Release()
	return array.MakeFromData(data), nil
}

func (d *fixedDecoder[T]) release() {
	d.valid.release()
	if d.buf != nil {
		d.buf.Release()
		d.buf = nil
	}
}

// Converters from raw little-endian Parquet values.

// copyRaw copies values stored with the same bytes as T.
func copyRaw[T any](dst []T, raw []byte, from, to int) error {
	var zero T
	size := int(unsafe.Sizeof(zero))
	copy(asBytes(dst), raw[from*size:to*size])
	return nil
}

func viewInt32(raw []byte) []int32 {
	return unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(raw))), len(raw)/4)
}

func viewInt64(raw []byte) []int64 {
	return unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(raw))), len(raw)/8)
}

// narrowInt32 converts INT32 values to a narrower integer type.
func narrowInt32[T ~int8 | ~int16 | ~uint8 | ~uint16](dst []T, raw []byte, from, to int) error {
	src := viewInt32(raw)[from:to]
	for i, x := range src {
		dst[i] = T(x)
	}
	return nil
}

// int96Timestamp converts legacy INT96 timestamps (nanoseconds of the day
// and a Julian day) to nanoseconds since the epoch.
func int96Timestamp(dst []arrow.Timestamp, raw []byte, from, to int) error {
	const julianEpoch = 2440588
	for i := range dst[:to-from] {
		b := raw[(from+i)*12:]
		nanos := int64(binary.LittleEndian.Uint64(b))
		day := int64(binary.LittleEndian.Uint32(b[8:]))
		dst[i] = arrow.Timestamp((day-julianEpoch)*86400e9 + nanos)
	}
	return nil
}

var pow10f = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// decimalFloat returns the float64 nearest to unscaled / 10^scale.
func decimalFloat(unscaled int64, scale int) float64 {
	const exact = 1 << 53
	if scale >= 0 && scale < len(pow10f) && unscaled <= exact && unscaled >= -exact {
		// Both operands are exact, so the quotient is correctly rounded.
		return float64(unscaled) / pow10f[scale]
	}
	return bigDecimalFloat(big.NewInt(unscaled), scale)
}

func bigDecimalFloat(unscaled *big.Int, scale int) float64 {
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)
	f, _ := new(big.Rat).SetFrac(unscaled, den).Float64()
	return f
}

func decimalInt32Float(scale int) convertFunc[float64] {
	return func(dst []float64, raw []byte, from, to int) error {
		for i, x := range viewInt32(raw)[from:to] {
			dst[i] = decimalFloat(int64(x), scale)
		}
		return nil
	}
}

func decimalInt64Float(scale int) convertFunc[float64] {
	return func(dst []float64, raw []byte, from, to int) error {
		for i, x := range viewInt64(raw)[from:to] {
			dst[i] = decimalFloat(x, scale)
		}
		return nil
	}
}

func decimalInt32Exact(dst []decimal128.Num, raw []byte, from, to int) error {
	for i, x := range viewInt32(raw)[from:to] {
		dst[i] = decimal128.FromI64(int64(x))
	}
	return nil
}

func decimalInt64Exact(dst []decimal128.Num, raw []byte, from, to int) error {
	for i, x := range viewInt64(raw)[from:to] {
		dst[i] = decimal128.FromI64(x)
	}
	return nil
}

// bigEndianDecimal reads a big-endian two's complement integer of up to 16
// bytes.
func bigEndianDecimal(b []byte) (decimal128.Num, bool) {
	if len(b) == 0 {
		return decimal128.Num{}, true
	}
	neg := b[0]&0x80 != 0
	// Leading bytes beyond 16 must be sign extension.
	for len(b) > 16 {
		if (neg && b[0] != 0xFF) || (!neg && b[0] != 0) {
			return decimal128.Num{}, false
		}
		b = b[1:]
	}
	var full [16]byte
	if neg {
		for i := range full {
			full[i] = 0xFF
		}
	}
	copy(full[16-len(b):], b)
	hi := int64(binary.BigEndian.Uint64(full[:8]))
	lo := binary.BigEndian.Uint64(full[8:])
	return decimal128.New(hi, lo), true
}

func bigEndianInt(b []byte) *big.Int {
	x := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(len(b))*8))
	}
	return x
}

func bytesDecimalFloat(b []byte, scale int) float64 {
	if len(b) <= 8 {
		var v int64
		if len(b) > 0 && b[0]&0x80 != 0 {
			v = -1
		}
		for _, c := range b {
			v = v<<8 | int64(c)
		}
		return decimalFloat(v, scale)
	}
	return bigDecimalFloat(bigEndianInt(b), scale)
}

func fixedDecimalFloat(width, scale int) convertFunc[float64] {
	return func(dst []float64, raw []byte, from, to int) error {
		for i := range dst[:to-from] {
			o := (from + i) * width
			dst[i] = bytesDecimalFloat(raw[o:o+width], scale)
		}
		return nil
	}
}

func fixedDecimalExact(width int, column string) convertFunc[decimal128.Num] {
	return func(dst []decimal128.Num, raw []byte, from, to int) error {
		for i := range dst[:to-from] {
			o := (from + i) * width
			v, ok := bigEndianDecimal(raw[o : o+width])
			if !ok {
				return fmt.Errorf("decimal value of column %q does not fit in 128 bits", column)
			}
			dst[i] = v
		}
		return nil
	}
}

// boolDecoder builds a boolean column.
type boolDecoder struct {
	maxDef byte
	valid  validity
	buf    *memory.Buffer
	bits   []byte
	n, pos int
	dict   pq.Dictionary
	dbits  []byte
}

func newBoolDecoder(mem memory.Allocator, n int, maxDef byte) *boolDecoder {
	d := &boolDecoder{maxDef: maxDef, valid: validity{mem: mem, n: n}, n: n}
	d.buf = memory.NewResizableBuffer(mem)
	d.buf.Resize(int(bitutil.BytesForBits(int64(n))))
	d.bits = d.buf.Bytes()
	clear(d.bits)
	return d
}

func (d *boolDecoder) page(p pq.Page, lo, hi int) error {
	n := hi - lo
	if d.pos+n > d.n {
		return fmt.Errorf("%w: more rows than the metadata says", ErrCorrupt)
	}
	l := pageLevels(p, lo, hi, d.maxDef)
	src, from := rawValues(p), l.vlo
	if dict := p.Dictionary(); dict != nil {
		if dict != d.dict {
			d.dict, d.dbits = dict, rawValues(dict.Page())
		}
		idx, err := pageIndexes(p, l)
		if err != nil {
			return err
		}
		src, from = make([]byte, bitutil.BytesForBits(int64(len(idx)))), 0
		for i, x := range idx {
			if x < 0 || int(x) >= d.dict.Len() || int(x) >= len(d.dbits)*8 {
				return fmt.Errorf("%w: dictionary index %d out of range", ErrCorrupt, x)
			}
			bitutil.SetBitTo(src, i, bitutil.BitIsSet(d.dbits, int(x)))
		}
	}
	if (from+l.nn+7)/8 > len(src) {
		return fmt.Errorf("%w: page has fewer values than its levels say", ErrCorrupt)
	}
	if l.def == nil {
		bitutil.CopyBitmap(src, from, l.nn, d.bits, d.pos)
	} else {
		k := from
		for i, lv := range l.def {
			if lv == l.maxDef {
				bitutil.SetBitTo(d.bits, d.pos+i, bitutil.BitIsSet(src, k))
				k++
			}
		}
	}
	d.valid.mark(d.pos, n, l.def, l.maxDef)
	d.pos += n
	return nil
}

func (d *boolDecoder) finish() (arrow.Array, error) {
	if d.pos != d.n {
		d.release()
		return nil, fmt.Errorf("%w: %d rows read, the metadata says %d", ErrCorrupt, d.pos, d.n)
	}
	data := array.NewData(arrow.FixedWidthTypes.Boolean, d.n, []*memory.Buffer{d.valid.buf, d.buf}, nil, d.valid.nulls, 0)
	d.release()
	defer data.Release()
	return array.MakeFromData(data), nil
}

func (d *boolDecoder) release() {
	d.valid.release()
	if d.buf != nil {
		d.buf.Release()
		d.buf = nil
	}
}

// byteBuffer is a growable byte buffer from an Arrow allocator.
type byteBuffer struct {
	buf *memory.Buffer
	n   int
}

func (b *byteBuffer) grow(mem memory.Allocator, more int) []byte {
	if b.buf == nil {
		b.buf = memory.NewResizableBuffer(mem)
	}
	need := b.n + more
	if need > b.buf.Cap() {
		b.buf.Reserve(max(need, 2*b.buf.Cap(), 4096))
	}
	b.buf.ResizeNoShrink(need)
	out := b.buf.Bytes()[b.n:need]
	b.n = need
	return out
}

func (b *byteBuffer) release() {
	if b.buf != nil {
		b.buf.Release()
		b.buf = nil
	}
}

// byteArrayPage returns the values and offsets of a BYTE_ARRAY page or
// dictionary: value i is data[offsets[i]:offsets[i+1]].
func byteArrayPage(p pq.Page) (data []byte, offsets []uint32, err error) {
	v := p.Data()
	data, offsets = v.ByteArray()
	if len(offsets) == 0 {
		return data, []uint32{0}, nil
	}
	if int(offsets[len(offsets)-1]) > len(data) {
		return nil, nil, fmt.Errorf("%w: byte array offsets beyond the page", ErrCorrupt)
	}
	return data, offsets, nil
}

const maxOffset = math.MaxInt32

// bytesDecoder builds a utf8 or binary column.
type bytesDecoder struct {
	mem    memory.Allocator
	typ    arrow.DataType
	maxDef byte
	valid  validity
	offBuf *memory.Buffer
	offs   []int32
	data   byteBuffer
	n, pos int

	dict      pq.Dictionary
	dictData  []byte
	dictOffs  []uint32
	dictBytes int
}

func newBytesDecoder(mem memory.Allocator, typ arrow.DataType, n int, maxDef byte) *bytesDecoder {
	d := &bytesDecoder{mem: mem, typ: typ, maxDef: maxDef, valid: validity{mem: mem, n: n}, n: n}
	d.offBuf, d.offs = allocate[int32](mem, n+1)
	d.offs[0] = 0
	return d
}

var errTooLarge = fmt.Errorf("more than 2 GiB of strings in one column of one batch; plan smaller parts (Options.TargetBytes)")

func (d *bytesDecoder) page(p pq.Page, lo, hi int) error {
	n := hi - lo
	if d.pos+n > d.n {
		return fmt.Errorf("%w: more rows than the metadata says", ErrCorrupt)
	}
	l := pageLevels(p, lo, hi, d.maxDef)
	base := d.data.n
	offs := d.offs[d.pos+1 : d.pos+1+n]
	if dict := p.Dictionary(); dict != nil {
		if dict != d.dict {
			data, o, err := byteArrayPage(dict.Page())
			if err != nil {
				return err
			}
			d.dict, d.dictData, d.dictOffs = dict, data, o
		}
		idx, err := pageIndexes(p, l)
		if err != nil {
			return err
		}
		nd := uint32(len(d.dictOffs) - 1)
		total := 0
		for _, x := range idx {
			if uint32(x) >= nd {
				return fmt.Errorf("%w: dictionary index %d out of range [0, %d)", ErrCorrupt, x, nd)
			}
			total += int(d.dictOffs[x+1] - d.dictOffs[x])
		}
		if base+total > maxOffset {
			return errTooLarge
		}
		out := d.data.grow(d.mem, total)
		at := 0
		for i, x := range idx {
			at += copy(out[at:], d.dictData[d.dictOffs[x]:d.dictOffs[x+1]])
			offs[i] = int32(base + at)
		}
	} else {
		data, o, err := byteArrayPage(p)
		if err != nil {
			return err
		}
		if l.vlo+l.nn >= len(o) {
			return fmt.Errorf("%w: page has fewer values than its levels say", ErrCorrupt)
		}
		first, last := o[l.vlo], o[l.vlo+l.nn]
		if first > last {
			return fmt.Errorf("%w: byte array offsets decrease", ErrCorrupt)
		}
		if base+int(last-first) > maxOffset {
			return errTooLarge
		}
		copy(d.data.grow(d.mem, int(last-first)), data[first:last])
		shift := int32(base) - int32(first)
		for i, x := range o[l.vlo+1 : l.vlo+l.nn+1] {
			offs[i] = int32(x) + shift
		}
	}
	if l.def != nil {
		// Spread the end offsets out; a null's end is its predecessor's.
		k := l.nn - 1
		for i := n - 1; i >= 0; i-- {
			if l.def[i] == l.maxDef {
				offs[i] = offs[k]
				k--
			} else if k >= 0 {
				offs[i] = offs[k]
			} else {
				offs[i] = int32(base)
			}
		}
	}
	d.valid.mark(d.pos, n, l.def, l.maxDef)
	d.pos += n
	return nil
}

func (d *bytesDecoder) finish() (arrow.Array, error) {
	if d.pos != d.n {
		d.release()
		return nil, fmt.Errorf("%w: %d rows read, the metadata says %d", ErrCorrupt, d.pos, d.n)
	}
	if d.data.buf == nil {
		d.data.buf = memory.NewResizableBuffer(d.mem)
	}
	data := array.NewData(d.typ, d.n, []*memory.Buffer{d.valid.buf, d.offBuf, d.data.buf}, nil, d.valid.nulls, 0)
	d.release()
	defer data.Release()
	return array.MakeFromData(data), nil
}

func (d *bytesDecoder) release() {
	d.valid.release()
	if d.offBuf != nil {
		d.offBuf.Release()
		d.offBuf = nil
	}
	d.data.release()
}

// fixedBytesDecoder builds a fixed_size_binary column.
type fixedBytesDecoder struct {
	typ    *arrow.FixedSizeBinaryType
	maxDef byte
	valid  validity
	buf    *memory.Buffer
	vals   []byte
	n, pos int
}

func newFixedBytesDecoder(mem memory.Allocator, typ *arrow.FixedSizeBinaryType, n int, maxDef byte) *fixedBytesDecoder {
	d := &fixedBytesDecoder{typ: typ, maxDef: maxDef, valid: validity{mem: mem, n: n}, n: n}
	d.buf, d.vals = allocate[byte](mem, n*typ.ByteWidth)
	return d
}

func (d *fixedBytesDecoder) page(p pq.Page, lo, hi int) error {
	n, w := hi-lo, d.typ.ByteWidth
	if d.pos+n > d.n {
		return fmt.Errorf("%w: more rows than the metadata says", ErrCorrupt)
	}
	l := pageLevels(p, lo, hi, d.maxDef)
	dst := d.vals[d.pos*w : (d.pos+n)*w]
	if dict := p.Dictionary(); dict != nil {
		raw := rawValues(dict.Page())
		idx, err := pageIndexes(p, l)
		if err != nil {
			return err
		}
		nd := min(dict.Len(), len(raw)/w)
		for i, x := range idx {
			if x < 0 || int(x) >= nd {
				return fmt.Errorf("%w: dictionary index %d out of range [0, %d)", ErrCorrupt, x, nd)
			}
			copy(dst[i*w:(i+1)*w], raw[int(x)*w:])
		}
	} else {
		raw := rawValues(p)
		if (l.vlo+l.nn)*w > len(raw) {
			return fmt.Errorf("%w: page has fewer values than its levels say", ErrCorrupt)
		}
		copy(dst, raw[l.vlo*w:(l.vlo+l.nn)*w])
	}
	if l.def != nil {
		k := l.nn - 1
		for i := n - 1; i >= 0; i-- {
			if l.def[i] == l.maxDef {
				copy(dst[i*w:(i+1)*w], dst[k*w:(k+1)*w])
				k--
			} else {
				clear(dst[i*w : (i+1)*w])
			}
		}
	}
	d.valid.mark(d.pos, n, l.def, l.maxDef)
	d.pos += n
	return nil
}

func (d *fixedBytesDecoder) finish() (arrow.Array, error) {
	if d.pos != d.n {
		d.release()
		return nil, fmt.Errorf("%w: %d rows read, the metadata says %d", ErrCorrupt, d.pos, d.n)
	}
	data := array.NewData(d.typ, d.n, []*memory.Buffer{d.valid.buf, d.buf}, nil, d.valid.nulls, 0)
	d.release()
	defer data.Release()
	return array.MakeFromData(data), nil
}

func (d *fixedBytesDecoder) release() {
	d.valid.release()
	if d.buf != nil {
		d.buf.Release()
		d.buf = nil
	}
}

// dictDecoder builds a dictionary<int32, utf8> column. The Parquet
// dictionaries of the row groups of a part are merged into one Arrow
// dictionary of distinct values; values of pages that are not
// dictionary-encoded are looked up and added to it.
type dictDecoder struct {
	mem    memory.Allocator
	typ    *arrow.DictionaryType
	maxDef byte
	valid  validity
	idxBuf *memory.Buffer
	idx    []int32
	n, pos int

	// The merged dictionary.
	values byteBuffer
	offs   []int32
	lookup map[string]int32 // built when a second source of values comes

	dict     pq.Dictionary // the Parquet dictionary remap is for
	remap    []int32
	identity bool
}

func newDictDecoder(mem memory.Allocator, typ *arrow.DictionaryType, n int, maxDef byte) *dictDecoder {
	d := &dictDecoder{mem: mem, typ: typ, maxDef: maxDef, valid: validity{mem: mem, n: n}, n: n, offs: []int32{0}}
	d.idxBuf, d.idx = allocate[int32](mem, n)
	return d
}

// add returns the index of value v in the merged dictionary.
func (d *dictDecoder) add(v []byte) (int32, error) {
	if d.lookup == nil {
		d.lookup = make(map[string]int32, len(d.offs)-1)
		vals := d.values.bytes()
		for i := range len(d.offs) - 1 {
			s := string(vals[d.offs[i]:d.offs[i+1]])
			if _, dup := d.lookup[s]; !dup {
				d.lookup[s] = int32(i)
			}
		}
	}
	if i, ok := d.lookup[string(v)]; ok {
		return i, nil
	}
	if d.values.n+len(v) > maxOffset {
		return 0, errTooLarge
	}
	copy(d.values.grow(d.mem, len(v)), v)
	i := int32(len(d.offs) - 1)
	d.offs = append(d.offs, int32(d.values.n))
	d.lookup[string(v)] = i
	return i, nil
}

func (b *byteBuffer) bytes() []byte {
	if b.buf == nil {
		return nil
	}
	return b.buf.Bytes()[:b.n]
}

// useDictionary prepares remap for a Parquet dictionary.
func (d *dictDecoder) useDictionary(dict pq.Dictionary) error {
	data, o, err := byteArrayPage(dict.Page())
	if err != nil {
		return err
	}
	n := len(o) - 1
	d.dict = dict
	if len(d.offs) == 1 && d.lookup == nil {
		// The first dictionary is taken as it is.
		if d.values.n+len(data) > maxOffset {
			return errTooLarge
		}
		copy(d.values.grow(d.mem, int(o[n]-o[0])), data[o[0]:o[n]])
		for _, x := range o[1:] {
			d.offs = append(d.offs, int32(x-o[0]))
		}
		d.identity = true
		return nil
	}
	d.identity = false
	d.remap = d.remap[:0]
	for i := range n {
		j, err := d.add(data[o[i]:o[i+1]])
		if err != nil {
			return err
		}
		d.remap = append(d.remap, j)
	}
	return nil
}

func (d *dictDecoder) page(p pq.Page, lo, hi int) error {
	n := hi - lo
	if d.pos+n > d.n {
		return fmt.Errorf("%w: more rows than the metadata says", ErrCorrupt)
	}
	l := pageLevels(p, lo, hi, d.maxDef)
	dst := d.idx[d.pos : d.pos+n]
	if dict := p.Dictionary(); dict != nil {
		if dict != d.dict {
			if err := d.useDictionary(dict); err != nil {
				return err
			}
		}
		idx, err := pageIndexes(p, l)
		if err != nil {
			return err
		}
		if d.identity {
			nd := uint32(len(d.offs) - 1)
			for _, x := range idx {
				if uint32(x) >= nd {
					return fmt.Errorf("%w: dictionary index %d out of range [0, %d)", ErrCorrupt, x, nd)
				}
			}
			copy(dst, idx)
		} else if err := gatherIndexes(dst, d.remap, idx); err != nil {
			return err
		}
	} else {
		data, o, err := byteArrayPage(p)
		if err != nil {
			return err
		}
		if l.vlo+l.nn >= len(o) {
			return fmt.Errorf("%w: page has fewer values than its levels say", ErrCorrupt)
		}
		for i := range l.nn {
			a, b := o[l.vlo+i], o[l.vlo+i+1]
			if a > b {
				return fmt.Errorf("%w: byte array offsets decrease", ErrCorrupt)
			}
			j, err := d.add(data[a:b])
			if err != nil {
				return err
			}
			dst[i] = j
		}
	}
	if l.def != nil {
		expand(dst, l.nn, l.def, l.maxDef)
	}
	d.valid.mark(d.pos, n, l.def, l.maxDef)
	d.pos += n
	return nil
}

func (d *dictDecoder) finish() (arrow.Array, error) {
	if d.pos != d.n {
		d.release()
		return nil, fmt.Errorf("%w: %d rows read, the metadata says %d", ErrCorrupt, d.pos, d.n)
	}
	offBuf, offs := allocate[int32](d.mem, len(d.offs))
	copy(offs, d.offs)
	if d.values.buf == nil {
		d.values.buf = memory.NewResizableBuffer(d.mem)
	}
	d.values.buf.ResizeNoShrink(d.values.n)
	dictData := array.NewData(d.typ.ValueType, len(d.offs)-1, []*memory.Buffer{nil, offBuf, d.values.buf}, nil, 0, 0)
	offBuf.Release()
	defer dictData.Release()
	data := array.NewDataWithDictionary(d.typ, d.n, []*memory.Buffer{d.valid.buf, d.idxBuf}, d.valid.nulls, 0, dictData)
	d.release()
	defer data.Release()
	return array.MakeFromData(data), nil
}

func (d *dictDecoder) release() {
	d.valid.release()
	if d.idxBuf != nil {
		d.idxBuf.Release()
		d.idxBuf = nil
	}
	d.values.release()
}
