package parquet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/shoal-data/shoal/io/storage"
)

// ReadPart reads part i of a plan into one record with the plan's schema.
// It may run in parallel with other calls, in this process or another.
// The caller releases the record.
func ReadPart(ctx context.Context, fsys storage.FS, plan *Plan, i int, mem memory.Allocator) (rec arrow.RecordBatch, err error) {
	if plan == nil || plan.Schema == nil {
		return nil, errors.New("parquet: ReadPart needs a plan from PlanRead")
	}
	if i < 0 || i >= len(plan.Parts) {
		return nil, fmt.Errorf("parquet: part %d of a plan with %d parts", i, len(plan.Parts))
	}
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	part := &plan.Parts[i]
	f, pf, err := openParquet(ctx, fsys, part.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := &partReader{ctx: ctx, path: part.Path, file: f, pf: pf, md: pf.Metadata(), mem: mem, part: part}
	if b, ok := chunkBufs.Get().(*[]byte); ok {
		r.buf = *b
	}
	defer func() {
		if cap(r.buf) > 0 && cap(r.buf) <= maxPooledChunk {
			b := r.buf[:0]
			chunkBufs.Put(&b)
		}
	}()
	defer func() {
		if p := recover(); p != nil {
			err = fileError(part.Path, fmt.Errorf("%w: %v", ErrCorrupt, p))
			rec = nil
		}
	}()
	return r.read(plan.Schema)
}

// chunkBufs recycles the buffers column chunks are read into: a fresh
// buffer of megabytes costs more in page faults than reading into it.
var chunkBufs sync.Pool

// maxPooledChunk bounds the buffers kept in chunkBufs.
const maxPooledChunk = 64 << 20

type partReader struct {
	ctx  context.Context
	path string
	file storage.File
	pf   *pq.File
	md   *format.FileMetaData
	mem  memory.Allocator
	part *Part
	buf  []byte // the column chunk bytes being decoded, reused
}

func (r *partReader) read(schema *arrow.Schema) (arrow.RecordBatch, error) {
	cols, err := columnsOf(r.md)
	if err != nil {
		return nil, fileError(r.path, err)
	}
	byName := make(map[string]int, len(cols))
	for i, c := range cols {
		byName[c.name] = i
	}
	// The row groups and the rows to read of each.
	groups := r.part.RowGroups
	ranges := make([][]rowRange, len(groups))
	var rows int64
	for k, g := range groups {
		if g < 0 || g >= len(r.md.RowGroups) {
			return nil, fileError(r.path, fmt.Errorf("row group %d of %d: the file changed since it was planned", g, len(r.md.RowGroups)))
		}
		n := r.md.RowGroups[g].NumRows
		for _, rr := range r.part.Ranges {
			if rr.RowGroup == g {
				if rr.Start < 0 || rr.End > n || rr.Start >= rr.End {
					return nil, fileError(r.path, fmt.Errorf("rows %d-%d of row group %d of %d rows: the file changed since it was planned", rr.Start, rr.End, g, n))
				}
				ranges[k] = append(ranges[k], rowRange{rr.Start, rr.End})
			}
		}
		if ranges[k] == nil {
			ranges[k] = []rowRange{{0, n}}
		}
		sort.Slice(ranges[k], func(a, b int) bool { return ranges[k][a].start < ranges[k][b].start })
		for _, rr := range ranges[k] {
			rows += rr.end - rr.start
		}
	}
	if rows != r.part.Rows {
		return nil, fileError(r.path, fmt.Errorf("%d rows to read, the plan says %d: the file changed since it was planned", rows, r.part.Rows))
	}
	if rows > int64(maxOffset) {
		return nil, fileError(r.path, fmt.Errorf("part of %d rows is too large for one record", rows))
	}
	arrays := make([]arrow.Array, 0, schema.NumFields())
	defer func() {
		// Released on error only; on success the record holds them.
		for _, a := range arrays {
			if a != nil {
				a.Release()
			}
		}
	}()
	for _, field := range schema.Fields() {
		if err := r.ctx.Err(); err != nil {
			return nil, err
		}
		var a arrow.Array
		if ci, ok := byName[field.Name]; ok {
			a, err = r.readColumn(&cols[ci], field, groups, ranges, int(rows))
		} else if v, ok := r.part.Partition[field.Name]; ok {
			a, err = constantColumn(r.mem, field, v, int(rows))
		} else {
			err = &ColumnError{Path: r.path, Column: field.Name, Problem: "no such column: the file changed since it was planned"}
		}
		if err != nil {
			return nil, err
		}
		arrays = append(arrays, a)
	}
	rec := array.NewRecordBatch(schema, arrays, rows)
	for _, a := range arrays {
		a.Release()
	}
	arrays = nil
	return rec, nil
}

// newDecoder returns the decoder of a file column into an Arrow type.
func (r *partReader) newDecoder(c *fileColumn, t arrow.DataType, n int) (columnDecoder, error) {
	exact := t.ID() == arrow.DECIMAL128
	ft, err := c.arrowType(exact)
	if err != nil {
		return nil, columnTypeError(r.path, c.name, err)
	}
	if dt, ok := t.(*arrow.DictionaryType); ok {
		if ft.ID() != arrow.STRING || !arrow.TypeEqual(dt.ValueType, arrow.BinaryTypes.String) || dt.IndexType.ID() != arrow.INT32 {
			return nil, r.changed(c.name, t, ft)
		}
	} else if !arrow.TypeEqual(ft, t) {
		return nil, r.changed(c.name, t, ft)
	}
	var maxDef byte
	if c.optional {
		maxDef = 1
	}
	e := &c.elem
	mem := r.mem
	if scale, _, isDec := decimalInfo(e); isDec {
		s := int(scale)
		width := int(e.TypeLength.V)
		if exact {
			switch e.Type.V {
			case format.Int32:
				return newFixedDecoder(mem, t, n, 4, maxDef, decimalInt32Exact), nil
			case format.Int64:
				return newFixedDecoder(mem, t, n, 8, maxDef, decimalInt64Exact), nil
			case format.FixedLenByteArray:
				return newFixedDecoder(mem, t, n, width, maxDef, fixedDecimalExact(width, c.name)), nil
			case format.ByteArray:
				return newBytesDecimalDecoder(mem, t, n, maxDef, c.name, s), nil
			}
		}
		switch e.Type.V {
		case format.Int32:
			return newFixedDecoder(mem, t, n, 4, maxDef, decimalInt32Float(s)), nil
		case format.Int64:
			return newFixedDecoder(mem, t, n, 8, maxDef, decimalInt64Float(s)), nil
		case format.FixedLenByteArray:
			return newFixedDecoder(mem, t, n, width, maxDef, fixedDecimalFloat(width, s)), nil
		case format.ByteArray:
			return newBytesDecimalDecoder(mem, t, n, maxDef, c.name, s), nil
		}
	}
	switch t.ID() {
	case arrow.BOOL:
		return newBoolDecoder(mem, n, maxDef), nil
	case arrow.INT8:
		return newFixedDecoder(mem, t, n, 4, maxDef, narrowInt32[int8]), nil
	case arrow.INT16:
		return newFixedDecoder(mem, t, n, 4, maxDef, narrowInt32[int16]), nil
	case arrow.UINT8:
		return newFixedDecoder(mem, t, n, 4, maxDef, narrowInt32[uint8]), nil
	case arrow.UINT16:
		return newFixedDecoder(mem, t, n, 4, maxDef, narrowInt32[uint16]), nil
	case arrow.INT32:
		return newFixedDecoder(mem, t, n, 4, maxDef, copyRaw[int32]), nil
	case arrow.UINT32:
		return newFixedDecoder(mem, t, n, 4, maxDef, copyRaw[uint32]), nil
	case arrow.DATE32:
		return newFixedDecoder(mem, t, n, 4, maxDef, copyRaw[arrow.Date32]), nil
	case arrow.TIME32:
		return newFixedDecoder(mem, t, n, 4, maxDef, copyRaw[arrow.Time32]), nil
	case arrow.INT64:
		return newFixedDecoder(mem, t, n, 8, maxDef, copyRaw[int64]), nil
	case arrow.UINT64:
		return newFixedDecoder(mem, t, n, 8, maxDef, copyRaw[uint64]), nil
	case arrow.TIME64:
		return newFixedDecoder(mem, t, n, 8, maxDef, copyRaw[arrow.Time64]), nil
	case arrow.TIMESTAMP:
		if e.Type.V == format.Int96 {
			return newFixedDecoder(mem, t, n, 12, maxDef, int96Timestamp), nil
		}
		return newFixedDecoder(mem, t, n, 8, maxDef, copyRaw[arrow.Timestamp]), nil
	case arrow.FLOAT32:
		return newFixedDecoder(mem, t, n, 4, maxDef, copyRaw[float32]), nil
	case arrow.FLOAT64:
		return newFixedDecoder(mem, t, n, 8, maxDef, copyRaw[float64]), nil
	case arrow.STRING, arrow.BINARY:
		return newBytesDecoder(mem, t, n, maxDef), nil
	case arrow.DICTIONARY:
		return newDictDecoder(mem, t.(*arrow.DictionaryType), n, maxDef), nil
	case arrow.FIXED_SIZE_BINARY:
		return newFixedBytesDecoder(mem, t.(*arrow.FixedSizeBinaryType), n, maxDef), nil
	}
	return nil, &ColumnError{Path: r.path, Column: c.name, Problem: "unsupported type " + t.String()}
}

func (r *partReader) changed(name string, want, got arrow.DataType) error {
	return &ColumnError{Path: r.path, Column: name,
		Problem: fmt.Sprintf("is %s, the plan says %s: the file changed since it was planned", got, want)}
}

// readColumn reads one column of the part.
func (r *partReader) readColumn(c *fileColumn, field arrow.Field, groups []int, ranges [][]rowRange, n int) (arrow.Array, error) {
	dec, err := r.newDecoder(c, field.Type, n)
	if err != nil {
		return nil, err
	}
	finished := false
	defer func() {
		if !finished { // an error, or a panic on its way up
			dec.release()
		}
	}()
	for k, g := range groups {
		if err := r.readChunk(c, g, ranges[k], dec); err != nil {
			return nil, fileError(r.path, fmt.Errorf("column %q, row group %d: %w", c.name, g, err))
		}
	}
	finished = true
	a, err := dec.finish()
	if err != nil {
		return nil, fileError(r.path, fmt.Errorf("column %q: %w", c.name, err))
	}
	if !field.Nullable && a.NullN() > 0 {
		a.Release()
		return nil, &ColumnError{Path: r.path, Column: c.name, Problem: "has nulls, the plan says it has none: the file changed since it was planned"}
	}
	return a, nil
}

// readChunk reads the rows of ranges of a column chunk into dec.
func (r *partReader) readChunk(c *fileColumn, g int, ranges []rowRange, dec columnDecoder) error {
	rg := &r.md.RowGroups[g]
	meta := &rg.Columns[c.leaf].MetaData
	chunk, ok := r.pf.RowGroups()[g].ColumnChunks()[c.leaf].(*pq.FileColumnChunk)
	if !ok {
		return fmt.Errorf("%w: no column chunk", ErrCorrupt)
	}
	switch meta.Codec {
	case format.Uncompressed, format.Snappy, format.Gzip, format.Zstd, format.Brotli:
	default:
		// LZ4_RAW is left out: the Parquet library loses the data of pages
		// that compress less than 3 to 1.
		return fmt.Errorf("compression %s is not supported (use snappy, zstd, gzip, brotli or none)", meta.Codec)
	}
	start := meta.DataPageOffset
	if meta.DictionaryPageOffset != 0 {
		start = meta.DictionaryPageOffset
	}
	end := start + meta.TotalCompressedSize
	if start < 4 || meta.TotalCompressedSize < 0 || end > r.file.Size() {
		return fmt.Errorf("%w: column chunk at %d+%d outside the file of %d bytes", ErrCorrupt, start, meta.TotalCompressedSize, r.file.Size())
	}
	whole := len(ranges) == 1 && ranges[0] == rowRange{0, rg.NumRows}

	// Which bytes to read: the whole chunk, or, when only some rows are
	// wanted and the offset index says where pages are, the dictionary and
	// the pages holding those rows.
	var firstRows []int64
	spans := []span{{start, end}}
	wideDelta := needsWideDelta(c, meta)
	if cc := &rg.Columns[c.leaf]; !whole && !wideDelta && cc.OffsetIndexOffset > 0 && r.checkIndex(cc.OffsetIndexOffset, cc.OffsetIndexLength) {
		oi, err := chunk.OffsetIndex()
		if err == nil && validOffsetIndex(oi, start, end, rg.NumRows) {
			spans, firstRows = pageSpans(oi, start, ranges, rg.NumRows)
		}
	}
	var total int64
	for _, s := range spans {
		total += s.end - s.start
	}
	if int64(cap(r.buf)) < total {
		r.buf = make([]byte, total)
	}
	rd := &spanReader{buf: r.buf[:total]}
	at := int64(0)
	for _, s := range spans {
		b := r.buf[at : at+s.end-s.start]
		if n, err := r.file.ReadAt(b, s.start); n < len(b) {
			if err == nil || errors.Is(err, io.EOF) {
				err = fmt.Errorf("%w: file ends inside a column chunk", ErrCorrupt)
			}
			return err
		}
		rd.spans = append(rd.spans, loaded{s.start, b})
		at += s.end - s.start
	}

	var maxDef byte
	if c.optional {
		maxDef = 1
	}
	if err := checkPages(rd.spans, meta, maxDef); err != nil {
		return err
	}
	var wide [][]int32
	if wideDelta {
		var err error
		if wide, err = wideDeltaPages(rd.buf, meta.Codec, maxDef); err != nil {
			return err
		}
	}

	pages := chunk.PagesFrom(rd)
	defer pages.Close()
	row := int64(0) // first row of the next page
	k := -1         // index of the data page
	for ri := 0; ri < len(ranges); {
		if firstRows != nil {
			// Jump to the page holding the next wanted row.
			p := sort.Search(len(firstRows), func(i int) bool { return firstRows[i] > ranges[ri].start }) - 1
			if p >= 0 && firstRows[p] > row {
				if err := pages.SeekToRow(firstRows[p]); err != nil {
					return fmt.Errorf("%w: %w", ErrCorrupt, err)
				}
				row = firstRows[p]
			}
		}
		page, err := pages.ReadPage()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("%w: column chunk ends at row %d of %d", ErrCorrupt, row, rg.NumRows)
			}
			if errors.Is(err, errOutside) {
				return err
			}
			return fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
		k++
		read := page // what to release
		if k < len(wide) && wide[k] != nil {
			if int64(len(wide[k])) != page.NumValues()-page.NumNulls() {
				pq.Release(read)
				return fmt.Errorf("%w: page %d has %d values, its levels say %d", ErrCorrupt, k, len(wide[k]), page.NumValues()-page.NumNulls())
			}
			page = &widePage{Page: page, vals: wide[k]}
		}
		n := page.NumRows()
		if n <= 0 && page.NumValues() > 0 {
			pq.Release(read)
			return fmt.Errorf("%w: page without rows", ErrCorrupt)
		}
		pageEnd := row + n
		for ri < len(ranges) && ranges[ri].start < pageEnd {
			lo, hi := max(ranges[ri].start, row)-row, min(ranges[ri].end, pageEnd)-row
			if lo < hi {
				if err := dec.page(page, int(lo), int(hi)); err != nil {
					pq.Release(read)
					return err
				}
			}
			if ranges[ri].end > pageEnd {
				break
			}
			ri++
		}
		pq.Release(read)
		row = pageEnd
		if err := r.ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// checkIndex reports whether the page index structure at off is sound
// enough to be handed to the Parquet library.
func (r *partReader) checkIndex(off int64, n int32) bool {
	if off <= 0 || n <= 0 || off+int64(n) > r.file.Size() {
		return false
	}
	b := make([]byte, n)
	if k, _ := r.file.ReadAt(b, off); k < len(b) {
		return false
	}
	k, err := checkThrift(b)
	return err == nil && k == len(b)
}

// span is a range [start, end) of bytes of a file.
type span struct{ start, end int64 }

type loaded struct {
	off  int64
	data []byte
}

// spanReader serves reads from the parts of a file that were loaded.
type spanReader struct {
	buf   []byte
	spans []loaded
}

var errOutside = errors.New("parquet: page outside the bytes read (offset index and pages disagree)")

func (s *spanReader) ReadAt(p []byte, off int64) (int, error) {
	for _, l := range s.spans {
		if off >= l.off && off < l.off+int64(len(l.data)) {
			n := copy(p, l.data[off-l.off:])
			if n < len(p) {
				return n, io.EOF
			}
			return n, nil
		}
	}
	if len(p) == 0 {
		return 0, nil
	}
	return 0, errOutside
}

func validOffsetIndex(oi pq.OffsetIndex, start, end, rows int64) bool {
	n := oi.NumPages()
	if n == 0 || oi.FirstRowIndex(0) != 0 {
		return false
	}
	for i := range n {
		off, size := oi.Offset(i), oi.CompressedPageSize(i)
		if off < start || size <= 0 || off+size > end {
			return false
		}
		if i > 0 && (oi.FirstRowIndex(i) <= oi.FirstRowIndex(i-1) || off <= oi.Offset(i-1)) {
			return false
		}
		if oi.FirstRowIndex(i) >= rows {
			return false
		}
	}
	return true
}

// pageSpans returns the bytes holding the dictionary and the pages that
// hold rows of ranges, and the first row of every page.
func pageSpans(oi pq.OffsetIndex, start int64, ranges []rowRange, rows int64) ([]span, []int64) {
	n := oi.NumPages()
	firstRows := make([]int64, n)
	for i := range n {
		firstRows[i] = oi.FirstRowIndex(i)
	}
	var spans []span
	add := func(s span) {
		if len(spans) > 0 && spans[len(spans)-1].end >= s.start {
			spans[len(spans)-1].end = max(spans[len(spans)-1].end, s.end)
			return
		}
		spans = append(spans, s)
	}
	if first := oi.Offset(0); first > start {
		add(span{start, first}) // the dictionary page
	}
	ri := 0
	for i := range n {
		pStart, pEnd := firstRows[i], rows
		if i+1 < n {
			pEnd = firstRows[i+1]
		}
		for ri < len(ranges) && ranges[ri].end <= pStart {
			ri++
		}
		if ri < len(ranges) && ranges[ri].start < pEnd {
			add(span{oi.Offset(i), oi.Offset(i) + oi.CompressedPageSize(i)})
		}
	}
	return spans, firstRows
}

// constantColumn makes the column of a partition key: value v in every row.
func constantColumn(mem memory.Allocator, field arrow.Field, v string, n int) (arrow.Array, error) {
	null := v == hiveNull
	switch t := field.Type.(type) {
	case *arrow.Int64Type:
		b := array.NewInt64Builder(mem)
		defer b.Release()
		if null {
			b.AppendNulls(n)
			return b.NewArray(), nil
		}
		x, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("parquet: partition %s=%s is not an integer: %w", field.Name, v, err)
		}
		b.Reserve(n)
		for range n {
			b.UnsafeAppend(x)
		}
		return b.NewArray(), nil
	case *arrow.StringType:
		b := array.NewStringBuilder(mem)
		defer b.Release()
		if null {
			b.AppendNulls(n)
			return b.NewArray(), nil
		}
		b.Reserve(n)
		b.ReserveData(n * len(v))
		for range n {
			b.Append(v)
		}
		return b.NewArray(), nil
	case *arrow.DictionaryType:
		b := array.NewStringBuilder(mem)
		if !null {
			b.Append(v)
		}
		dict := b.NewArray()
		b.Release()
		defer dict.Release()
		ib := array.NewInt32Builder(mem)
		defer ib.Release()
		if null {
			ib.AppendNulls(n)
		} else {
			ib.AppendValues(make([]int32, n), nil)
		}
		idx := ib.NewArray()
		defer idx.Release()
		return array.NewDictionaryArray(t, idx, dict), nil
	}
	return nil, fmt.Errorf("parquet: partition column %q of type %s", field.Name, field.Type)
}

// bytesDecimalDecoder reads DECIMAL values stored as variable-length
// BYTE_ARRAY, through a binary column.
type bytesDecimalDecoder struct {
	bin    *bytesDecoder
	typ    arrow.DataType
	mem    memory.Allocator
	column string
	scale  int
}

func newBytesDecimalDecoder(mem memory.Allocator, t arrow.DataType, n int, maxDef byte, column string, scale int) *bytesDecimalDecoder {
	return &bytesDecimalDecoder{bin: newBytesDecoder(mem, arrow.BinaryTypes.Binary, n, maxDef), typ: t, mem: mem, column: column, scale: scale}
}

func (d *bytesDecimalDecoder) page(p pq.Page, lo, hi int) error { return d.bin.page(p, lo, hi) }

func (d *bytesDecimalDecoder) release() { d.bin.release() }

func (d *bytesDecimalDecoder) finish() (arrow.Array, error) {
	a, err := d.bin.finish()
	if err != nil {
		return nil, err
	}
	defer a.Release()
	bin := a.(*array.Binary)
	switch d.typ.ID() {
	case arrow.DECIMAL128:
		b := array.NewDecimal128Builder(d.mem, d.typ.(*arrow.Decimal128Type))
		defer b.Release()
		for i := range bin.Len() {
			if bin.IsNull(i) {
				b.AppendNull()
				continue
			}
			v, ok := bigEndianDecimal(bin.Value(i))
			if !ok {
				return nil, fmt.Errorf("decimal value of column %q does not fit in 128 bits", d.column)
			}
			b.Append(v)
		}
		return b.NewArray(), nil
	default:
		b := array.NewFloat64Builder(d.mem)
		defer b.Release()
		for i := range bin.Len() {
			if bin.IsNull(i) {
				b.AppendNull()
				continue
			}
			b.Append(bytesDecimalFloat(bin.Value(i), d.scale))
		}
		return b.NewArray(), nil
	}
}
