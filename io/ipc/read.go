package ipc

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/io/storage"
)

var (
	fileMagic        = []byte("ARROW1")
	streamContinuing = []byte{0xff, 0xff, 0xff, 0xff}
)

// maxBuffer is the largest single buffer a read may allocate. Compressed
// buffers declare their decompressed size; a damaged file may declare any
// size, and this keeps it from exhausting memory.
var maxBuffer = 8 << 30

// ReadPart reads part i of the plan into one record batch holding the
// plan's columns, allocating from mem (memory.DefaultAllocator when nil).
// The caller releases the record batch.
func ReadPart(ctx context.Context, fsys storage.FS, plan *Plan, i int, mem memory.Allocator) (arrow.RecordBatch, error) {
	if plan == nil || plan.Schema == nil {
		return nil, errors.New("ipc: ReadPart needs a plan from PlanRead")
	}
	if i < 0 || i >= len(plan.Parts) {
		return nil, fmt.Errorf("ipc: the plan has %d parts; there is no part %d", len(plan.Parts), i)
	}
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	part := plan.Parts[i]
	f, err := fsys.Open(ctx, part.Path)
	if err != nil {
		return nil, fmt.Errorf("ipc: %w", err)
	}
	defer f.Close()
	rec, err := readPart(ctx, f, part, plan.Schema, mem)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return rec, nil
}

// readPart reads a part from an open file, turning any panic of the Arrow
// library into an error.
func readPart(ctx context.Context, f storage.File, part Part, want *arrow.Schema, mem memory.Allocator) (rec arrow.RecordBatch, err error) {
	var recs []arrow.RecordBatch
	size := f.Size()
	alloc := &limitedAllocator{mem: mem, limit: maxBuffer}
	defer func() {
		if r := recover(); r != nil {
			rec, err = nil, fmt.Errorf("ipc: read %s: %w: %v", part.Path, ErrCorrupt, r)
		}
		if err != nil {
			for _, r := range recs {
				r.Release()
			}
			alloc.freeAll()
		}
	}()
	opts := []ipc.Option{
		ipc.WithAllocator(alloc),
		ipc.WithMetadataSizeLimit(max(size, 1)),
		ipc.WithBodySizeLimit(max(size, 1)),
	}
	corrupt := func(err error) error {
		return fmt.Errorf("ipc: read %s: %w: %w", part.Path, ErrCorrupt, err)
	}
	var idx []int
	var dropped bool // whether some columns of the file are not read
	resolve := func(s *arrow.Schema) (err error) {
		idx, err = fileColumns(s, want, part.Path)
		dropped = len(idx) < s.NumFields()
		return err
	}
	switch part.Format {
	case FileFormat:
		ft, err := readFooter(f, size)
		if err != nil {
			return nil, corrupt(err)
		}
		r, err := ipc.NewFileReader(io.NewSectionReader(f, 0, size), opts...)
		if err != nil {
			return nil, corrupt(err)
		}
		defer r.Close()
		if err := resolve(r.Schema()); err != nil {
			return nil, err
		}
		if part.FirstBatch < 0 || part.NumBatches < 0 || part.FirstBatch+part.NumBatches > min(r.NumRecords(), len(ft.records)) {
			return nil, fmt.Errorf("ipc: read %s: the plan reads record batches %d to %d, but the file has %d; has it changed since it was planned?",
				part.Path, part.FirstBatch, part.FirstBatch+part.NumBatches-1, r.NumRecords())
		}
		for k := part.FirstBatch; k < part.FirstBatch+part.NumBatches; k++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if err := verifyBlock(f, ft.records[k].offset, ft.records[k].meta); err != nil {
				return nil, corrupt(fmt.Errorf("record batch %d: %w", k, err))
			}
			b, err := r.RecordBatchAt(k)
			if err != nil {
				return nil, corrupt(fmt.Errorf("record batch %d: %w", k, err))
			}
			recs = append(recs, selectColumns(b, idx, want))
		}
	case StreamFormat:
		r, err := ipc.NewReaderFromMessageReader(newMessageReader(io.NewSectionReader(f, 0, size), alloc, size), opts...)
		if err != nil {
			return nil, corrupt(err)
		}
		defer r.Release()
		if err := resolve(r.Schema()); err != nil {
			return nil, err
		}
		for r.Next() {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			b := r.RecordBatch()
			b.Retain()
			recs = append(recs, selectColumns(b, idx, want))
		}
		if err := r.Err(); err != nil {
			return nil, corrupt(fmt.Errorf("record batch %d: %w", len(recs), err))
		}
	default:
		return nil, fmt.Errorf("ipc: read %s: the plan has an unknown format %d", part.Path, part.Format)
	}
	for k, b := range recs {
		for i, c := range b.Columns() {
			if err := validate(c, 0); err != nil {
				return nil, corrupt(fmt.Errorf("record batch %d, column %q: %w", part.FirstBatch+k, want.Field(i).Name, err))
			}
		}
	}
	rec, err = combine(recs, want, dropped, alloc)
	recs = nil // released by combine
	if err != nil {
		return nil, corrupt(err)
	}
	return rec, nil
}

// fileColumns finds the plan's columns in a file's schema and checks their
// types. A name that repeats matches by position among its namesakes.
func fileColumns(s, want *arrow.Schema, path string) ([]int, error) {
	idx := make([]int, want.NumFields())
	seen := map[string]int{}
	for i, f := range want.Fields() {
		k := seen[f.Name]
		seen[f.Name]++
		found := s.FieldIndices(f.Name)
		if n := len(want.FieldIndices(f.Name)); len(found) != n {
			if len(found) == 0 {
				return nil, fmt.Errorf("ipc: read %s: %w %q; has the file changed since it was planned?", path, ErrUnknownColumn, f.Name)
			}
			return nil, fmt.Errorf("ipc: read %s: %w: the file has %d columns named %q, the plan %d; has the file changed since it was planned?",
				path, ErrSchemaMismatch, len(found), f.Name, n)
		}
		j := found[k]
		if !arrow.TypeEqual(s.Field(j).Type, f.Type) {
			return nil, fmt.Errorf("ipc: read %s: %w: column %q is %s, but the plan expects %s; has the file changed since it was planned?",
				path, ErrSchemaMismatch, f.Name, s.Field(j).Type, f.Type)
		}
		idx[i] = j
	}
	return idx, nil
}

// selectColumns keeps the columns idx of b, under the plan's schema, and
// releases b.
func selectColumns(b arrow.RecordBatch, idx []int, want *arrow.Schema) arrow.RecordBatch {
	defer b.Release()
	cols := make([]arrow.Array, len(idx))
	for i, j := range idx {
		cols[i] = b.Column(j)
	}
	return array.NewRecordBatch(want, cols, b.NumRows())
}

// combine makes one record batch of recs, releasing them. The columns of
// an uncompressed record batch share one buffer, the body of its message;
// when only some columns were read (dropped), they are copied so that the
// memory of the others is freed.
func combine(recs []arrow.RecordBatch, want *arrow.Schema, dropped bool, mem memory.Allocator) (arrow.RecordBatch, error) {
	switch len(recs) {
	case 0:
		cols := make([]arrow.Array, want.NumFields())
		for i, f := range want.Fields() {
			cols[i] = array.MakeArrayOfNull(mem, f.Type, 0)
			defer cols[i].Release()
		}
		return array.NewRecordBatch(want, cols, 0), nil
	case 1:
		if !dropped {
			return recs[0], nil
		}
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	cols := make([]arrow.Array, want.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	chunks := make([]arrow.Array, len(recs))
	for i := range cols {
		for k, r := range recs {
			chunks[k] = r.Column(i)
		}
		c, err := array.Concatenate(chunks, mem)
		if err != nil {
			return nil, fmt.Errorf("join record batches of column %q: %w", want.Field(i).Name, err)
		}
		cols[i] = c
	}
	return array.NewRecordBatch(want, cols, rows), nil
}

// limitedAllocator refuses single allocations above limit, by panicking;
// reads recover the panic into an error. It also keeps the allocations
// not yet freed: when the Arrow library fails on a damaged file it can
// drop buffers without releasing them, and freeAll returns them.
type limitedAllocator struct {
	mem   memory.Allocator
	limit int
	mu    sync.Mutex
	live  map[*byte][]byte
}

func (a *limitedAllocator) check(size int) {
	if size > a.limit || size < 0 {
		panic(fmt.Sprintf("a buffer of %d bytes is declared, more than the limit of %d", size, a.limit))
	}
}

func (a *limitedAllocator) track(old, b []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.live == nil {
		a.live = map[*byte][]byte{}
	}
	if cap(old) > 0 {
		delete(a.live, unsafe.SliceData(old[:1]))
	}
	if cap(b) > 0 {
		a.live[unsafe.SliceData(b[:1])] = b
	}
}

func (a *limitedAllocator) Allocate(size int) []byte {
	a.check(size)
	b := a.mem.Allocate(size)
	a.track(nil, b)
	return b
}

func (a *limitedAllocator) Reallocate(size int, b []byte) []byte {
	a.check(size)
	nb := a.mem.Reallocate(size, b)
	a.track(b, nb)
	return nb
}

func (a *limitedAllocator) Free(b []byte) {
	a.track(b, nil)
	a.mem.Free(b)
}

// freeAll frees what is still allocated. Only for after a failed read,
// when nothing allocated is in use.
func (a *limitedAllocator) freeAll() {
	a.mu.Lock()
	live := a.live
	a.live = nil
	a.mu.Unlock()
	for _, b := range live {
		a.mem.Free(b)
	}
}

// inspect opens a file and learns its format, schema and record batches.
func inspect(ctx context.Context, fsys storage.FS, path string) (info *fileInfo, err error) {
	f, err := fsys.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("ipc: %w", err)
	}
	defer f.Close()
	defer func() {
		if r := recover(); r != nil {
			info, err = nil, fmt.Errorf("ipc: read %s: %w: %v", path, ErrCorrupt, r)
		}
	}()
	size := f.Size()
	format, err := detect(f, path)
	if err != nil {
		return nil, err
	}
	info = &fileInfo{format: format, size: size}
	alloc := &limitedAllocator{mem: memory.DefaultAllocator, limit: maxBuffer}
	opts := []ipc.Option{
		ipc.WithAllocator(alloc),
		ipc.WithMetadataSizeLimit(max(size, 1)),
		ipc.WithBodySizeLimit(max(size, 1)),
	}
	corrupt := func(err error) error {
		return fmt.Errorf("ipc: read %s: %w: %w", path, ErrCorrupt, err)
	}
	switch format {
	case FileFormat:
		ft, err := readFooter(f, size)
		if err != nil {
			return nil, corrupt(err)
		}
		r, err := ipc.NewFileReader(io.NewSectionReader(f, 0, size), opts...)
		if err != nil {
			return nil, corrupt(err)
		}
		defer r.Close()
		info.schema = r.Schema()
		if len(ft.records) != r.NumRecords() {
			return nil, corrupt(fmt.Errorf("the footer lists %d record batches, the reader %d", len(ft.records), r.NumRecords()))
		}
		for _, b := range ft.records {
			info.blocks = append(info.blocks, b.meta+b.body)
		}
	case StreamFormat:
		r, err := ipc.NewReaderFromMessageReader(newMessageReader(io.NewSectionReader(f, 0, size), alloc, size), opts...)
		if err != nil {
			return nil, corrupt(err)
		}
		defer r.Release()
		info.schema = r.Schema()
	}
	return info, nil
}

// detect tells the format from the first bytes of a file.
func detect(f storage.File, path string) (Format, error) {
	size := f.Size()
	if size == 0 {
		return 0, fmt.Errorf("ipc: read %s: %w (the file is empty)", path, ErrNotArrow)
	}
	head := make([]byte, min(size, 8))
	if _, err := f.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
		return 0, fmt.Errorf("ipc: read %s: %w", path, err)
	}
	switch {
	case bytes.HasPrefix(head, fileMagic):
		return FileFormat, nil
	case bytes.HasPrefix(head, streamContinuing):
		return StreamFormat, nil
	case len(head) >= 4:
		// Streams written before Arrow 0.15 start with the length of the
		// schema message.
		n := int64(int32(binary.LittleEndian.Uint32(head)))
		if n > 0 && n%8 == 0 && n <= size-4 {
			return StreamFormat, nil
		}
	}
	return 0, fmt.Errorf("ipc: read %s: %w (it starts with %q)", path, ErrNotArrow, head)
}

// block is where a message lies in a file in the random-access format.
type block struct{ offset, meta, body int64 }

// footer is the list of messages of a file in the random-access format.
type footer struct{ dicts, records []block }

// readFooter reads and checks the footer of a file in the random-access
// format, a flatbuffer:
//
//	table Footer { version: short; schema: Schema; dictionaries: [Block]; recordBatches: [Block]; ... }
//	struct Block { offset: long; metaDataLength: int; bodyLength: long; }
//
// and checks the metadata of the dictionary messages, which the Arrow
// library reads when it opens the file.
func readFooter(f io.ReaderAt, size int64) (*footer, error) {
	const tail = 10 // footer length (int32) and magic
	if size < int64(len(fileMagic))+2+tail {
		return nil, fmt.Errorf("the file is too short (%d bytes)", size)
	}
	var end [tail]byte
	if _, err := f.ReadAt(end[:], size-tail); err != nil {
		return nil, unexpected(err)
	}
	if !bytes.Equal(end[4:], fileMagic) {
		return nil, errors.New("the file does not end with the Arrow magic bytes; is it cut short?")
	}
	n := int64(int32(binary.LittleEndian.Uint32(end[:4])))
	if n <= 0 || n > size-tail-8 {
		return nil, fmt.Errorf("the footer length %d does not fit the file", n)
	}
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, size-tail-n); err != nil {
		return nil, unexpected(err)
	}
	fbuf := &fb{b: buf}
	if !fbuf.footer() {
		return nil, fmt.Errorf("the footer: %w", errMetadata)
	}
	root, _ := fbuf.ref(0)
	field, _ := fbuf.table(root)
	blocks := func(p int) ([]block, error) {
		if p == 0 {
			return nil, nil
		}
		start, count, _ := fbuf.vector(p, 24)
		out := make([]block, count)
		for i := range out {
			q := start + i*24
			b := block{
				offset: int64(binary.LittleEndian.Uint64(buf[q:])),
				meta:   int64(int32(binary.LittleEndian.Uint32(buf[q+8:]))),
				body:   int64(binary.LittleEndian.Uint64(buf[q+16:])),
			}
			if b.offset < 0 || b.meta < 0 || b.body < 0 || b.offset > size || b.meta > size-b.offset || b.body > size-b.offset-b.meta {
				return nil, fmt.Errorf("message %d of the footer lies outside the file", i)
			}
			out[i] = b
		}
		return out, nil
	}
	var ft footer
	var err error
	if ft.dicts, err = blocks(field(2)); err != nil {
		return nil, err
	}
	if ft.records, err = blocks(field(3)); err != nil {
		return nil, err
	}
	for _, d := range ft.dicts {
		if err := verifyBlock(f, d.offset, d.meta); err != nil {
			return nil, fmt.Errorf("dictionary: %w", err)
		}
	}
	return &ft, nil
}
