package csv

import (
	"fmt"
	"math"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// kind is how a column's text is converted.
type kind uint8

const (
	kSkip            kind = iota // not selected: fields are split but not converted
	kString                      // utf8
	kDict                        // dictionary<int32, utf8>
	kInt                         // int8, int16, int64, range-checked
	kInt32                       // int32, stored as such (no narrowing copy)
	kUint                        // uint8..uint64, range-checked
	kFloat64                     // float64
	kFloat32                     // float32
	kBool                        // bool
	kDate                        // ISO 8601 date -> date32
	kTimestamp                   // ISO 8601 date or timestamp -> timestamp(unit)
	kDateLayout                  // Go layout -> date32
	kTimestampLayout             // Go layout -> timestamp(unit)
)

// column accumulates the values of one column. Every selected column gets
// one value per row, stored at the row's index; only the parser's row count
// says how many are valid. Buffers come from an Arrow allocator and become
// the buffers of the column's array.
type column struct {
	kind   kind
	name   string
	typ    arrow.DataType
	minInt int64 // kInt range
	maxInt int64
	maxU   uint64 // kUint range
	unit   arrow.TimeUnit
	layout string
	mem    memory.Allocator

	i64     vec[int64]   // kInt, kUint (bits), timestamps
	f64     vec[float64] // kFloat64, kFloat32
	i32     vec[int32]   // kInt32, dates, dictionary indices
	bools   vec[byte]    // kBool values, a bitmap
	offs    vec[int32]   // kString offsets
	data    vec[byte]    // kString bytes
	dataLen int

	dict *dictTable // kDict: the values so far

	valid    vec[byte] // validity bitmap, made at the first null
	hasNulls bool
}

// vec is a growable array of T in an allocator's buffer.
type vec[T int64 | float64 | int32 | byte] struct {
	buf *memory.Buffer
	s   []T // the whole buffer
}

func viewOf[T int64 | float64 | int32 | byte](b []byte) []T {
	var zero T
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/int(unsafe.Sizeof(zero)))
}

func (v *vec[T]) init(mem memory.Allocator, n int) {
	v.release()
	var zero T
	size := max(n, 1) * int(unsafe.Sizeof(zero))
	if u, ok := mem.(uninitAllocator); ok {
		// Every value is written before it is read (bitmaps too: bits are
		// set or cleared one by one), so recycled memory need not be
		// zeroed first.
		v.buf = memory.NewBufferWithAllocator(u.AllocateUninit(roundUp64(size)), mem)
	} else {
		v.buf = memory.NewResizableBuffer(mem)
		v.buf.Reserve(size)
	}
	v.s = viewOf[T](v.buf.Buf())
}

// uninitAllocator hands out memory without zeroing it (see
// mempool.Allocator.AllocateUninit).
type uninitAllocator interface {
	AllocateUninit(size int) []byte
}

func roundUp64(n int) int { return (n + 63) &^ 63 }

// grow makes index i valid, keeping the contents.
func (v *vec[T]) grow(i int) {
	var zero T
	v.buf.Reserve(max(2*len(v.s), i+1, 256) * int(unsafe.Sizeof(zero)))
	v.s = viewOf[T](v.buf.Buf())
}

// growTo makes room for n values, exactly, if there is less.
func (v *vec[T]) growTo(n int) {
	if n > len(v.s) {
		var zero T
		v.buf.Reserve(n * int(unsafe.Sizeof(zero)))
		v.s = viewOf[T](v.buf.Buf())
	}
}

// take returns the buffer holding the first n values and forgets it.
func (v *vec[T]) take(n int) *memory.Buffer {
	var zero T
	b := v.buf
	if b == nil {
		return nil
	}
	b.ResizeNoShrink(n * int(unsafe.Sizeof(zero)))
	v.buf, v.s = nil, nil
	return b
}

func (v *vec[T]) release() {
	if v.buf != nil {
		v.buf.Release()
		v.buf, v.s = nil, nil
	}
}

// setBit sets bit i of a bitmap to b.
func setBit(v *vec[byte], i int, b bool) {
	if i>>3 >= len(v.s) {
		v.grow(i >> 3)
	}
	if b {
		v.s[i>>3] |= 1 << (i & 7)
	} else {
		v.s[i>>3] &^= 1 << (i & 7)
	}
}

func bitOf(v *vec[byte], i int) bool {
	return i>>3 < len(v.s) && v.s[i>>3]&(1<<(i&7)) != 0
}

// newColumn returns the column for field f, converting values as t says.
func newColumn(f arrow.Field, layout string, hasLayout bool) (column, error) {
	c := column{name: f.Name, typ: f.Type}
	switch t := f.Type.(type) {
	case *arrow.StringType:
		c.kind = kString
	case *arrow.DictionaryType:
		if t.IndexType.ID() != arrow.INT32 || t.ValueType.ID() != arrow.STRING {
			return c, fmt.Errorf("csv: column %q: dictionary type %s not supported; use dictionary<values=utf8, indices=int32>", f.Name, t)
		}
		c.kind = kDict
	case *arrow.Int8Type:
		c.kind, c.minInt, c.maxInt = kInt, math.MinInt8, math.MaxInt8
	case *arrow.Int16Type:
		c.kind, c.minInt, c.maxInt = kInt, math.MinInt16, math.MaxInt16
	case *arrow.Int32Type:
		c.kind, c.minInt, c.maxInt = kInt32, math.MinInt32, math.MaxInt32
	case *arrow.Int64Type:
		c.kind, c.minInt, c.maxInt = kInt, math.MinInt64, math.MaxInt64
	case *arrow.Uint8Type:
		c.kind, c.maxU = kUint, math.MaxUint8
	case *arrow.Uint16Type:
		c.kind, c.maxU = kUint, math.MaxUint16
	case *arrow.Uint32Type:
		c.kind, c.maxU = kUint, math.MaxUint32
	case *arrow.Uint64Type:
		c.kind, c.maxU = kUint, math.MaxUint64
	case *arrow.Float64Type:
		c.kind = kFloat64
	case *arrow.Float32Type:
		c.kind = kFloat32
	case *arrow.BooleanType:
		c.kind = kBool
	case *arrow.Date32Type:
		c.kind = kDate
	case *arrow.TimestampType:
		c.kind, c.unit = kTimestamp, t.Unit
		if _, err := t.GetZone(); err != nil {
			return c, fmt.Errorf("csv: column %q: time zone %q: %w", f.Name, t.TimeZone, err)
		}
	default:
		return c, fmt.Errorf("csv: column %q: reading type %s is not supported (use int8..int64, uint8..uint64, float32, float64, bool, string, date32, timestamp or dictionary<int32, utf8>)", f.Name, f.Type)
	}
	if hasLayout && layout != "" {
		switch c.kind {
		case kDate:
			c.kind = kDateLayout
		case kTimestamp:
			c.kind = kTimestampLayout
		default:
			return c, fmt.Errorf("csv: column %q has a date layout but type %s; use date32 or timestamp", f.Name, f.Type)
		}
		c.layout = layout
	}
	return c, nil
}

// reserve starts a batch with room for about rows values of about
// bytesPerRow bytes.
func (c *column) reserve(rows int, bytesPerRow float64) {
	if c.mem == nil {
		c.mem = memory.DefaultAllocator
	}
	rows = max(rows, 16)
	switch c.kind {
	case kString:
		c.offs.init(c.mem, rows+1)
		c.offs.s[0] = 0
		c.data.init(c.mem, int(float64(rows)*bytesPerRow)+64)
		c.dataLen = 0
	case kDict:
		c.i32.init(c.mem, rows)
		if c.dict == nil {
			c.dict = newDictTable()
		}
	case kInt, kUint, kTimestamp, kTimestampLayout:
		c.i64.init(c.mem, rows)
	case kFloat64, kFloat32:
		c.f64.init(c.mem, rows)
	case kInt32, kDate, kDateLayout:
		c.i32.init(c.mem, rows)
	case kBool:
		c.bools.init(c.mem, rows/8+1)
	}
	c.valid.release()
	c.hasNulls = false
}

// release frees the column's buffers.
func (c *column) release() {
	c.i64.release()
	c.f64.release()
	c.i32.release()
	c.bools.release()
	c.offs.release()
	c.data.release()
	c.valid.release()
}

func (c *column) putI64(row int, v int64) {
	if row >= len(c.i64.s) {
		c.i64.grow(row)
	}
	c.i64.s[row] = v
}

func (c *column) putF64(row int, v float64) {
	if row >= len(c.f64.s) {
		c.f64.grow(row)
	}
	c.f64.s[row] = v
}

func (c *column) putI32(row int, v int32) {
	if row >= len(c.i32.s) {
		c.i32.grow(row)
	}
	c.i32.s[row] = v
}

// putString appends the bytes of row.
func (c *column) putString(row int, f []byte) {
	n := c.dataLen + len(f)
	if n > len(c.data.s) {
		c.data.grow(n - 1)
	}
	copy(c.data.s[c.dataLen:], f)
	c.dataLen = n
	if row+1 >= len(c.offs.s) {
		c.offs.grow(row + 1)
	}
	c.offs.s[row+1] = int32(n)
}

// ensure makes room for the values of rows < rows.
func (c *column) ensure(rows int) {
	switch c.kind {
	case kString:
		if len(c.offs.s) <= rows {
			c.offs.grow(rows)
		}
	case kInt, kUint, kTimestamp, kTimestampLayout:
		if len(c.i64.s) < rows {
			c.i64.grow(rows - 1)
		}
	case kFloat64, kFloat32:
		if len(c.f64.s) < rows {
			c.f64.grow(rows - 1)
		}
	case kInt32, kDate, kDateLayout, kDict:
		if len(c.i32.s) < rows {
			c.i32.grow(rows - 1)
		}
	}
}

// expect makes room for rows values in all, and for string bytes scale
// times those so far.
func (c *column) expect(rows int, scale float64) {
	switch c.kind {
	case kString:
		c.offs.growTo(rows + 1)
		c.data.growTo(int(float64(c.dataLen) * scale))
	case kInt, kUint, kTimestamp, kTimestampLayout:
		c.i64.growTo(rows)
	case kFloat64, kFloat32:
		c.f64.growTo(rows)
	case kInt32, kDate, kDateLayout, kDict:
		c.i32.growTo(rows)
	}
}

// move copies the value of row from to row to < from, when bad rows
// between them are dropped. Rows before to are in place.
func (c *column) move(from, to int) {
	if from == to {
		return
	}
	switch c.kind {
	case kString:
		offs := c.offs.s
		n := copy(c.data.s[offs[to]:], c.data.s[offs[from]:offs[from+1]])
		offs[to+1] = offs[to] + int32(n)
	case kInt, kUint, kTimestamp, kTimestampLayout:
		c.i64.s[to] = c.i64.s[from]
	case kFloat64, kFloat32:
		c.f64.s[to] = c.f64.s[from]
	case kInt32, kDate, kDateLayout, kDict:
		c.i32.s[to] = c.i32.s[from]
	case kBool:
		setBit(&c.bools, to, bitOf(&c.bools, from))
	}
	if c.hasNulls {
		setBit(&c.valid, to, bitOf(&c.valid, from))
	}
}

// truncateData drops string bytes after the first rows rows.
func (c *column) truncateData(rows int) {
	if c.kind == kString {
		c.dataLen = int(c.offs.s[rows])
	}
}

// setNull marks row as null, making the validity bitmap on the first null.
func (c *column) setNull(row int) {
	if !c.hasNulls {
		c.hasNulls = true
		c.valid.init(c.mem, max(len(c.i64.s), len(c.f64.s), len(c.i32.s), len(c.offs.s), row+1)/8+1)
		bm := c.valid.s
		for i := range row >> 3 {
			bm[i] = 0xff
		}
		for i := row &^ 7; i < row; i++ {
			bm[i>>3] |= 1 << (i & 7)
		}
	}
	setBit(&c.valid, row, false)
}

// appendNull appends a null to row.
func (c *column) appendNull(row int) {
	switch c.kind {
	case kString:
		c.putString(row, nil)
	case kInt, kUint, kTimestamp, kTimestampLayout:
		c.putI64(row, 0)
	case kFloat64, kFloat32:
		c.putF64(row, 0)
	case kInt32, kDate, kDateLayout, kDict:
		c.putI32(row, 0)
	case kBool:
		setBit(&c.bools, row, false)
	}
	c.setNull(row)
}

// valueError says why a text is not a value of the column's type.
func (c *column) valueError(what string) error {
	return fmt.Errorf("%w: not %s", ErrValue, what)
}

// appendValue converts text f (unescaped) for row and appends it; null
// says whether f is a null marker.
func (c *column) appendValue(row int, f []byte, null bool) error {
	if null {
		c.appendNull(row)
		return nil
	}
	switch c.kind {
	case kString:
		c.putString(row, f)
	case kDict:
		c.putI32(row, c.dict.index(f))
	case kInt, kInt32:
		v, ok := parseInt(f)
		if !ok || v < c.minInt || v > c.maxInt {
			if ok {
				return fmt.Errorf("%w: out of range for %s", ErrValue, c.typ)
			}
			return c.valueError("an integer")
		}
		if c.kind == kInt32 {
			c.putI32(row, int32(v))
		} else {
			c.putI64(row, v)
		}
	case kUint:
		v, ok := parseUint(f)
		if !ok || v > c.maxU {
			if ok {
				return fmt.Errorf("%w: out of range for %s", ErrValue, c.typ)
			}
			return c.valueError("an unsigned integer")
		}
		c.putI64(row, int64(v))
	case kFloat64:
		v, ok := parseFloat(f)
		if !ok {
			return c.valueError("a number")
		}
		c.putF64(row, v)
	case kFloat32:
		v, ok := parseFloat(f)
		if !ok || (math.Abs(v) > math.MaxFloat32 && !math.IsInf(v, 0)) {
			return c.valueError("a float32 number")
		}
		c.putF64(row, v)
	case kBool:
		v, ok := parseBool(f, true)
		if !ok {
			return c.valueError("true or false")
		}
		setBit(&c.bools, row, v)
	case kDate:
		t, ok := parseISO(f)
		if !ok || t.hasTime {
			return c.valueError("a date (YYYY-MM-DD)")
		}
		if t.days < math.MinInt32 || t.days > math.MaxInt32 {
			return fmt.Errorf("%w: out of range for date32", ErrValue)
		}
		c.putI32(row, int32(t.days))
	case kTimestamp:
		t, ok := parseISO(f)
		if !ok {
			return c.valueError("an ISO 8601 timestamp")
		}
		v, ok := toUnit(t.unixSeconds(), t.nanos, c.unit)
		if !ok {
			return fmt.Errorf("%w: out of range for %s", ErrValue, c.typ)
		}
		c.putI64(row, v)
	case kDateLayout, kTimestampLayout:
		t, err := time.Parse(c.layout, string(f))
		if err != nil {
			return fmt.Errorf("%w: does not fit layout %q", ErrValue, c.layout)
		}
		if c.kind == kDateLayout {
			y, m, d := t.Date()
			c.putI32(row, int32(daysFromCivil(int64(y), int64(m), int64(d))))
			break
		}
		v, ok := toUnit(t.Unix(), int64(t.Nanosecond()), c.unit)
		if !ok {
			return fmt.Errorf("%w: out of range for %s", ErrValue, c.typ)
		}
		c.putI64(row, v)
	}
	if c.hasNulls {
		setBit(&c.valid, row, true)
	}
	return nil
}

// toUnit converts seconds and nanoseconds since the epoch to a count of
// unit, reporting overflow.
func toUnit(secs, nanos int64, unit arrow.TimeUnit) (int64, bool) {
	var mul, div int64
	switch unit {
	case arrow.Second:
		return secs, true
	case arrow.Millisecond:
		mul, div = 1e3, 1e6
	case arrow.Microsecond:
		mul, div = 1e6, 1e3
	default:
		mul, div = 1e9, 1
	}
	if secs > math.MaxInt64/mul-1 || secs < math.MinInt64/mul+1 {
		return 0, false
	}
	return secs*mul + nanos/div, true
}

// narrow copies int64 values into a new buffer of T.
func narrow[T int8 | int16 | int32 | uint8 | uint16 | uint32](v []int64, mem memory.Allocator) *memory.Buffer {
	var zero T
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(len(v) * int(unsafe.Sizeof(zero)))
	if len(v) > 0 {
		out := unsafe.Slice((*T)(unsafe.Pointer(&buf.Bytes()[0])), len(v))
		for i, x := range v {
			out[i] = T(x)
		}
	}
	return buf
}

// copyBuffer copies b into a new buffer from mem.
func copyBuffer(b []byte, mem memory.Allocator) *memory.Buffer {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(len(b))
	copy(buf.Bytes(), b)
	return buf
}

// finish returns the first rows values as an array, which takes over the
// buffers. If next > 0, a new batch starts with room for next rows.
func (c *column) finish(rows int, next int, bytesPerRow float64) arrow.Array {
	if c.mem == nil {
		c.mem = memory.DefaultAllocator
	}
	var validBuf *memory.Buffer
	nulls := 0
	if c.hasNulls {
		c.valid.ensureBits(rows)
		nulls = rows - bitutil.CountSetBits(c.valid.s, 0, rows)
		if nulls > 0 {
			clearTail(c.valid.s, rows)
			validBuf = c.valid.take(int(bitutil.BytesForBits(int64(rows))))
		}
	}
	c.ensure(rows)
	var bufs []*memory.Buffer
	var dict arrow.ArrayData
	switch c.kind {
	case kString:
		bufs = []*memory.Buffer{validBuf, c.offs.take(rows + 1), c.data.take(c.dataLen)}
	case kDict:
		bufs = []*memory.Buffer{validBuf, c.i32.take(rows)}
		// Each batch gets a copy of the dictionary so far: later batches
		// share its first values.
		dict = array.NewData(arrow.BinaryTypes.String, c.dict.len(),
			[]*memory.Buffer{nil, copyBuffer(arrow.Int32Traits.CastToBytes(c.dict.offs), c.mem), copyBuffer(c.dict.data, c.mem)}, nil, 0, 0)
		defer dict.Release()
		for _, b := range dict.Buffers()[1:] {
			defer b.Release()
		}
	case kInt, kUint:
		v := c.i64.s[:rows]
		switch c.typ.ID() {
		case arrow.INT8:
			bufs = []*memory.Buffer{validBuf, narrow[int8](v, c.mem)}
		case arrow.INT16:
			bufs = []*memory.Buffer{validBuf, narrow[int16](v, c.mem)}
		case arrow.UINT8:
			bufs = []*memory.Buffer{validBuf, narrow[uint8](v, c.mem)}
		case arrow.UINT16:
			bufs = []*memory.Buffer{validBuf, narrow[uint16](v, c.mem)}
		case arrow.UINT32:
			bufs = []*memory.Buffer{validBuf, narrow[uint32](v, c.mem)}
		default:
			bufs = []*memory.Buffer{validBuf, c.i64.take(rows)}
		}
	case kTimestamp, kTimestampLayout:
		bufs = []*memory.Buffer{validBuf, c.i64.take(rows)}
	case kFloat64:
		bufs = []*memory.Buffer{validBuf, c.f64.take(rows)}
	case kFloat32:
		buf := memory.NewResizableBuffer(c.mem)
		buf.Resize(rows * 4)
		out := arrow.Float32Traits.CastFromBytes(buf.Bytes())
		for i, v := range c.f64.s[:rows] {
			out[i] = float32(v)
		}
		bufs = []*memory.Buffer{validBuf, buf}
	case kInt32, kDate, kDateLayout:
		bufs = []*memory.Buffer{validBuf, c.i32.take(rows)}
	case kBool:
		c.bools.ensureBits(rows)
		clearTail(c.bools.s, rows)
		bufs = []*memory.Buffer{validBuf, c.bools.take(int(bitutil.BytesForBits(int64(rows))))}
	}
	data := array.NewData(c.typ, rows, bufs, nil, nulls, 0)
	if dict != nil {
		data.SetDictionary(dict)
	}
	arr := array.MakeFromData(data)
	data.Release()
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	c.release() // buffers not taken (narrowed values)
	if next > 0 {
		c.reserve(next, bytesPerRow)
	}
	return arr
}

// clearTail clears the bits at and after bit n of the byte holding it:
// recycled memory may have left them set.
func clearTail(bm []byte, n int) {
	if n&7 != 0 {
		bm[n>>3] &= byte(1)<<(n&7) - 1
	}
}

// ensureBits makes a bitmap vec hold at least n bits.
func (v *vec[T]) ensureBits(n int) {
	if need := int(bitutil.BytesForBits(int64(n))); need > len(v.s) {
		v.grow(need - 1)
	}
}
