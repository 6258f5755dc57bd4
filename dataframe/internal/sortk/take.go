package sortk

import (
	"context"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	rowbuf "github.com/shoal-data/shoal/dataframe/internal/distinct/rows"
)

// Take returns the rows of rec at idx, in that order, in buffers from mem.
// Indices must be in [0, rec.NumRows()).
func Take(ctx context.Context, rec arrow.RecordBatch, idx []int32, mem memory.Allocator) (arrow.RecordBatch, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	n := rec.NumRows()
	for _, i := range idx {
		if i < 0 || int64(i) >= n {
			return nil, fmt.Errorf("sortk: take: index %d out of range [0, %d)", i, n)
		}
	}
	cols := make([]arrow.Array, 0, rec.NumCols())
	release := func() {
		for _, c := range cols {
			c.Release()
		}
	}
	for i, c := range rec.Columns() {
		if err := ctx.Err(); err != nil {
			release()
			return nil, err
		}
		t, err := takeArray(ctx, mem, c, idx)
		if err != nil {
			release()
			return nil, fmt.Errorf("sortk: take %d rows of column %q (%s): %w", len(idx), rec.ColumnName(i), c.DataType(), err)
		}
		cols = append(cols, t)
	}
	out := array.NewRecordBatch(rec.Schema(), cols, int64(len(idx)))
	release()
	return out, nil
}

// takeArray returns the values of arr at idx.
func takeArray(ctx context.Context, mem memory.Allocator, arr arrow.Array, idx []int32) (arrow.Array, error) {
	t := arr.DataType()
	switch t.ID() {
	case arrow.INT8, arrow.UINT8:
		return takeFixed[uint8](mem, arr, idx), nil
	case arrow.INT16, arrow.UINT16, arrow.FLOAT16:
		return takeFixed[uint16](mem, arr, idx), nil
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32, arrow.TIME32:
		return takeFixed[uint32](mem, arr, idx), nil
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		return takeFixed[uint64](mem, arr, idx), nil
	case arrow.BOOL:
		return takeBools(mem, []arrow.Array{arr}, len(idx), func(i int) (int, int) { return 0, int(idx[i]) }), nil
	case arrow.STRING, arrow.BINARY:
		if arr.Len() == 0 {
			return takeBytes[int32](mem, []arrow.Array{arr}, len(idx), nil)
		}
		return takeBytesOne(mem, arr, newBytesView(arr).offs32, idx)
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		if arr.Len() == 0 {
			return takeBytes[int64](mem, []arrow.Array{arr}, len(idx), nil)
		}
		return takeBytesOne(mem, arr, newBytesView(arr).offs64, idx)
	case arrow.DICTIONARY:
		d := arr.(*array.Dictionary)
		ind, err := takeArray(ctx, mem, d.Indices(), idx)
		if err != nil {
			return nil, err
		}
		defer ind.Release()
		data := array.NewDataWithDictionary(t, len(idx), ind.Data().Buffers(), ind.NullN(), 0, d.Data().Dictionary().(*array.Data))
		defer data.Release()
		return array.MakeFromData(data), nil
	}
	// Other types: Arrow's take kernel.
	ib, iv := rowbuf.NewBuffer[int32](mem, len(idx))
	copy(iv, idx)
	indices := rowbuf.MakeArray(arrow.PrimitiveTypes.Int32, len(idx), []*memory.Buffer{nil, ib}, 0)
	defer indices.Release()
	return compute.TakeArray(compute.WithAllocator(ctx, mem), arr, indices)
}

func takeFixed[T any](mem memory.Allocator, arr arrow.Array, idx []int32) arrow.Array {
	vals := rowbuf.Values[T](arr)
	buf, out := rowbuf.NewBuffer[T](mem, len(idx))
	for j, r := range idx {
		out[j] = vals[r]
	}
	var vbuf *memory.Buffer
	nulls := 0
	if bm, off := rowbuf.Validity(arr); bm != nil {
		var vb []byte
		vbuf, vb = rowbuf.NewBitmap(mem, len(idx))
		for j, r := range idx {
			if rowbuf.Bit(bm, off+int(r)) {
				vb[j>>3] |= 1 << (j & 7)
			} else {
				nulls++
			}
		}
	}
	return rowbuf.MakeArray(arr.DataType(), len(idx), []*memory.Buffer{vbuf, buf}, nulls)
}

// takeBytesOne is takeBytes from one array, whose offsets are offs.
func takeBytesOne[O int32 | int64](mem memory.Allocator, arr arrow.Array, offs []O, idx []int32) (arrow.Array, error) {
	data := newBytesView(arr).data
	total := 0
	for _, r := range idx {
		total += int(offs[r+1] - offs[r])
	}
	var zero O
	if _, ok := any(zero).(int32); ok && total > math.MaxInt32 {
		return nil, fmt.Errorf("%d bytes of values exceed the 2 GiB of a %s column", total, arr.DataType())
	}
	obuf, out := rowbuf.NewBuffer[O](mem, len(idx)+1)
	dbuf, dst := rowbuf.NewBuffer[byte](mem, total)
	pos := 0
	for j, r := range idx {
		out[j] = O(pos)
		a, b := offs[r], offs[r+1]
		if b-a <= 16 && pos+16 <= len(dst) && int(a)+16 <= len(data) {
			// Short values: a fixed-size copy, cheaper than a memmove call.
			*(*[16]byte)(dst[pos:]) = *(*[16]byte)(data[a:])
			pos += int(b - a)
			continue
		}
		pos += copy(dst[pos:], data[a:b])
	}
	out[len(idx)] = O(pos)
	var vbuf *memory.Buffer
	nulls := 0
	if bm, off := rowbuf.Validity(arr); bm != nil {
		var vb []byte
		vbuf, vb = rowbuf.NewBitmap(mem, len(idx))
		for j, r := range idx {
			if rowbuf.Bit(bm, off+int(r)) {
				vb[j>>3] |= 1 << (j & 7)
			} else {
				nulls++
			}
		}
	}
	return rowbuf.MakeArray(arr.DataType(), len(idx), []*memory.Buffer{vbuf, obuf, dbuf}, nulls), nil
}

// A source function names, for output row i, the source array and its row.
type sourceFunc func(i int) (src, row int)

// validityOf builds the validity bitmap of n rows picked by at from srcs.
func validityOf(mem memory.Allocator, srcs []arrow.Array, n int, at sourceFunc) (*memory.Buffer, int) {
	anyNulls := false
	for _, s := range srcs {
		if s.NullN() > 0 {
			anyNulls = true
		}
	}
	if !anyNulls {
		return nil, 0
	}
	bms := make([][]byte, len(srcs))
	offs := make([]int, len(srcs))
	for i, s := range srcs {
		bms[i], offs[i] = rowbuf.Validity(s)
	}
	buf, vb := rowbuf.NewBitmap(mem, n)
	nulls := 0
	for j := range n {
		s, r := at(j)
		if bms[s] == nil || rowbuf.Bit(bms[s], offs[s]+r) {
			vb[j>>3] |= 1 << (j & 7)
		} else {
			nulls++
		}
	}
	return buf, nulls
}

func takeBools(mem memory.Allocator, srcs []arrow.Array, n int, at sourceFunc) arrow.Array {
	bms := make([][]byte, len(srcs))
	offs := make([]int, len(srcs))
	for i, s := range srcs {
		d := s.Data()
		if b := d.Buffers()[1]; b != nil {
			bms[i], offs[i] = b.Bytes(), d.Offset()
		}
	}
	buf, out := rowbuf.NewBitmap(mem, n)
	for j := range n {
		s, r := at(j)
		if rowbuf.Bit(bms[s], offs[s]+r) {
			out[j>>3] |= 1 << (j & 7)
		}
	}
	vbuf, nulls := validityOf(mem, srcs, n, at)
	return rowbuf.MakeArray(srcs[0].DataType(), n, []*memory.Buffer{vbuf, buf}, nulls)
}

func takeBytes[O int32 | int64](mem memory.Allocator, srcs []arrow.Array, n int, at sourceFunc) (arrow.Array, error) {
	views := make([]bytesView, len(srcs))
	for i, s := range srcs {
		views[i] = newBytesView(s)
	}
	total := 0
	for j := range n {
		s, r := at(j)
		a, b := views[s].span(r)
		total += b - a
	}
	var zero O
	if _, ok := any(zero).(int32); ok && total > math.MaxInt32 {
		return nil, fmt.Errorf("%d bytes of values exceed the 2 GiB of a %s column", total, srcs[0].DataType())
	}
	obuf, offs := rowbuf.NewBuffer[O](mem, n+1)
	dbuf, data := rowbuf.NewBuffer[byte](mem, total)
	pos := 0
	for j := range n {
		s, r := at(j)
		offs[j] = O(pos)
		a, b := views[s].span(r)
		pos += copy(data[pos:], views[s].data[a:b])
	}
	offs[n] = O(pos)
	vbuf, nulls := validityOf(mem, srcs, n, at)
	return rowbuf.MakeArray(srcs[0].DataType(), n, []*memory.Buffer{vbuf, obuf, dbuf}, nulls), nil
}

// ref names a row of one of several batches.
type ref struct {
	src int32
	row int32
}

// gather returns the rows refs names of the arrays srcs (all of one type).
func gather(ctx context.Context, mem memory.Allocator, srcs []arrow.Array, refs []ref) (arrow.Array, error) {
	at := func(i int) (int, int) { return int(refs[i].src), int(refs[i].row) }
	n := len(refs)
	switch srcs[0].DataType().ID() {
	case arrow.INT8, arrow.UINT8:
		return gatherFixed[uint8](mem, srcs, refs), nil
	case arrow.INT16, arrow.UINT16, arrow.FLOAT16:
		return gatherFixed[uint16](mem, srcs, refs), nil
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32, arrow.TIME32:
		return gatherFixed[uint32](mem, srcs, refs), nil
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		return gatherFixed[uint64](mem, srcs, refs), nil
	case arrow.BOOL:
		return takeBools(mem, srcs, n, at), nil
	case arrow.STRING, arrow.BINARY:
		return takeBytes[int32](mem, srcs, n, at)
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		return takeBytes[int64](mem, srcs, n, at)
	}
	// Other types (dictionaries, whose sources may have different
	// dictionaries, nested types...): concatenate, then take.
	if len(srcs) == 1 {
		idx := make([]int32, n)
		for i, r := range refs {
			idx[i] = r.row
		}
		return takeArray(ctx, mem, srcs[0], idx)
	}
	all, err := array.Concatenate(srcs, mem)
	if err != nil {
		return nil, err
	}
	defer all.Release()
	starts := make([]int32, len(srcs))
	var sum int32
	for i, s := range srcs {
		starts[i] = sum
		sum += int32(s.Len())
	}
	idx := make([]int32, n)
	for i, r := range refs {
		idx[i] = starts[r.src] + r.row
	}
	return takeArray(ctx, mem, all, idx)
}

func gatherFixed[T any](mem memory.Allocator, srcs []arrow.Array, refs []ref) arrow.Array {
	vals := make([][]T, len(srcs))
	for i, s := range srcs {
		vals[i] = rowbuf.Values[T](s)
	}
	buf, out := rowbuf.NewBuffer[T](mem, len(refs))
	for j, r := range refs {
		out[j] = vals[r.src][r.row]
	}
	vbuf, nulls := validityOf(mem, srcs, len(refs), func(i int) (int, int) { return int(refs[i].src), int(refs[i].row) })
	return rowbuf.MakeArray(srcs[0].DataType(), len(refs), []*memory.Buffer{vbuf, buf}, nulls)
}
