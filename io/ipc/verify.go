package ipc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The Arrow library trusts the counts in a file's metadata: a damaged
// file can make it allocate without bound, or recurse through a cycle of
// fields until the stack overflows, which no recover catches. So the
// metadata (flatbuffers) is checked here before the library reads it:
// every table and vector must lie inside its buffer, fields may nest at
// most maxDepth deep, and a schema may hold at most maxFields fields.

const (
	maxDepth  = 64
	maxFields = 1 << 16
)

var errMetadata = errors.New("the metadata is damaged")

// fb is a flatbuffer being checked.
type fb struct {
	b      []byte
	fields int // fields seen, against maxFields
}

func (f *fb) u32(p int) (int, bool) {
	if p < 0 || p > len(f.b)-4 {
		return 0, false
	}
	return int(binary.LittleEndian.Uint32(f.b[p:])), true
}

func (f *fb) u16(p int) (int, bool) {
	if p < 0 || p > len(f.b)-2 {
		return 0, false
	}
	return int(binary.LittleEndian.Uint16(f.b[p:])), true
}

// table checks the table at p and returns a function giving the position
// of its field i (0 when absent).
func (f *fb) table(p int) (func(i int) int, bool) {
	soff, ok := f.u32(p)
	if !ok {
		return nil, false
	}
	vt := p - int(int32(soff))
	vlen, ok1 := f.u16(vt)
	tlen, ok2 := f.u16(vt + 2)
	if !ok1 || !ok2 || vlen < 4 || vlen%2 != 0 || vt < 0 || vt+vlen > len(f.b) || tlen < 4 || p+tlen > len(f.b) {
		return nil, false
	}
	// The library follows any field the vtable lists, so all must lie
	// inside the table.
	for q := vt + 4; q < vt+vlen; q += 2 {
		if off, _ := f.u16(q); off >= tlen {
			return nil, false
		}
	}
	return func(i int) int {
		if 4+2*i+2 > vlen {
			return 0
		}
		off, _ := f.u16(vt + 4 + 2*i)
		if off == 0 {
			return 0
		}
		return p + off
	}, true
}

// ref follows the offset stored at p (a field holding a table or vector).
func (f *fb) ref(p int) (int, bool) {
	rel, ok := f.u32(p)
	if !ok {
		return 0, false
	}
	q := p + rel
	return q, q >= 0 && q < len(f.b)
}

// vector checks the vector referenced at p, of elements of size bytes,
// and returns its first element and length.
func (f *fb) vector(p, size int) (start, n int, ok bool) {
	v, ok := f.ref(p)
	if !ok {
		return 0, 0, false
	}
	n, ok = f.u32(v)
	if !ok || n > (len(f.b)-v-4)/size {
		return 0, 0, false
	}
	return v + 4, n, true
}

// tables checks a vector of tables at field position p (0: absent) with
// check applied to each.
func (f *fb) tables(p int, check func(q int) bool) bool {
	if p == 0 {
		return true
	}
	start, n, ok := f.vector(p, 4)
	if !ok {
		return false
	}
	for i := 0; i < n; i++ {
		q, ok := f.ref(start + 4*i)
		if !ok || !check(q) {
			return false
		}
	}
	return true
}

// structs checks a vector of structs of size bytes at field position p.
func (f *fb) structs(p, size int) bool {
	if p == 0 {
		return true
	}
	_, _, ok := f.vector(p, size)
	return ok
}

func (f *fb) keyValue(q int) bool {
	_, ok := f.table(q)
	return ok
}

// schema checks a Schema table: fields (1), custom_metadata (2).
func (f *fb) schema(p int) bool {
	field, ok := f.table(p)
	if !ok {
		return false
	}
	return f.tables(field(1), func(q int) bool { return f.field(q, 1) }) &&
		f.tables(field(2), f.keyValue)
}

// field checks a Field table: type (3), dictionary (4), children (5),
// custom_metadata (6).
func (f *fb) field(p, depth int) bool {
	f.fields++
	if depth > maxDepth || f.fields > maxFields {
		return false
	}
	field, ok := f.table(p)
	if !ok {
		return false
	}
	for _, i := range []int{3, 4} {
		if q := field(i); q != 0 {
			if t, ok := f.ref(q); !ok {
				return false
			} else if _, ok := f.table(t); !ok {
				return false
			}
		}
	}
	return f.tables(field(5), func(q int) bool { return f.field(q, depth+1) }) &&
		f.tables(field(6), f.keyValue)
}

// recordBatch checks a RecordBatch table: nodes (1), buffers (2),
// compression (3), variadicBufferCounts (4).
func (f *fb) recordBatch(p int) bool {
	field, ok := f.table(p)
	if !ok {
		return false
	}
	if q := field(3); q != 0 {
		if t, ok := f.ref(q); !ok {
			return false
		} else if _, ok := f.table(t); !ok {
			return false
		}
	}
	return f.structs(field(1), 16) && f.structs(field(2), 16) && f.structs(field(4), 8)
}

// message checks a Message table: header_type (1), header (2),
// custom_metadata (4).
func (f *fb) message() bool {
	root, ok := f.ref(0)
	if !ok {
		return false
	}
	field, ok := f.table(root)
	if !ok {
		return false
	}
	if !f.tables(field(4), f.keyValue) {
		return false
	}
	hp := field(2)
	if hp == 0 {
		return true
	}
	h, ok := f.ref(hp)
	if !ok {
		return false
	}
	typ := 0
	if tp := field(1); tp != 0 {
		if tp >= len(f.b) {
			return false
		}
		typ = int(f.b[tp])
	}
	switch ipc.MessageType(typ) {
	case ipc.MessageSchema:
		return f.schema(h)
	case ipc.MessageDictionaryBatch:
		dfield, ok := f.table(h)
		if !ok {
			return false
		}
		if q := dfield(1); q != 0 {
			rb, ok := f.ref(q)
			return ok && f.recordBatch(rb)
		}
		return true
	case ipc.MessageRecordBatch:
		return f.recordBatch(h)
	}
	_, ok = f.table(h)
	return ok
}

// footer checks a Footer table: schema (1), dictionaries (2),
// recordBatches (3), custom_metadata (4).
func (f *fb) footer() bool {
	root, ok := f.ref(0)
	if !ok {
		return false
	}
	field, ok := f.table(root)
	if !ok {
		return false
	}
	if q := field(1); q != 0 {
		s, ok := f.ref(q)
		if !ok || !f.schema(s) {
			return false
		}
	}
	return f.structs(field(2), 24) && f.structs(field(3), 24) && f.tables(field(4), f.keyValue)
}

// verifyMessage checks the flatbuffer of a message's metadata.
func verifyMessage(meta []byte) error {
	f := &fb{b: meta}
	if !f.message() {
		return errMetadata
	}
	return nil
}

// messageBodyLength reads bodyLength (field 3) of a checked Message.
func messageBodyLength(meta []byte) int64 {
	f := &fb{b: meta}
	root, _ := f.ref(0)
	field, _ := f.table(root)
	p := field(3)
	if p == 0 || p+8 > len(meta) {
		return 0
	}
	return int64(binary.LittleEndian.Uint64(meta[p:]))
}

// messageReader reads the messages of a stream, checking each one's
// metadata before the Arrow library sees it. It mirrors the library's
// own message reader, including streams written before Arrow 0.15 (no
// continuation marker).
type messageReader struct {
	r     io.Reader
	mem   memory.Allocator
	limit int64 // the largest metadata or body: the file's size
	msg   *ipc.Message
	refs  atomic.Int64
}

func newMessageReader(r io.Reader, mem memory.Allocator, limit int64) *messageReader {
	mr := &messageReader{r: r, mem: mem, limit: limit}
	mr.refs.Add(1)
	return mr
}

func (r *messageReader) Retain() { r.refs.Add(1) }

func (r *messageReader) Release() {
	if r.refs.Add(-1) == 0 && r.msg != nil {
		r.msg.Release()
		r.msg = nil
	}
}

func (r *messageReader) Message() (*ipc.Message, error) {
	if r.msg != nil {
		r.msg.Release()
		r.msg = nil
	}
	var head [4]byte
	if _, err := io.ReadFull(r.r, head[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF // a stream may end without its end marker
		}
		return nil, fmt.Errorf("message length: %w", err)
	}
	n := int64(int32(binary.LittleEndian.Uint32(head[:])))
	if uint32(n) == 0xffffffff {
		if _, err := io.ReadFull(r.r, head[:]); err != nil {
			return nil, fmt.Errorf("message length: %w", unexpected(err))
		}
		n = int64(int32(binary.LittleEndian.Uint32(head[:])))
	}
	if n == 0 {
		return nil, io.EOF
	}
	if n < 4 || n > r.limit {
		return nil, fmt.Errorf("impossible message metadata length %d", n)
	}
	meta := make([]byte, n)
	if _, err := io.ReadFull(r.r, meta); err != nil {
		return nil, fmt.Errorf("message metadata: %w", unexpected(err))
	}
	if err := verifyMessage(meta); err != nil {
		return nil, err
	}
	bodyLen := messageBodyLength(meta)
	if bodyLen < 0 || bodyLen > r.limit {
		return nil, fmt.Errorf("impossible message body length %d", bodyLen)
	}
	body := memory.NewResizableBuffer(r.mem)
	defer body.Release()
	body.Resize(int(bodyLen))
	if _, err := io.ReadFull(r.r, body.Bytes()); err != nil {
		return nil, fmt.Errorf("message body: %w", unexpected(err))
	}
	mb := memory.NewBufferBytes(meta)
	defer mb.Release()
	r.msg = ipc.NewMessage(mb, body)
	return r.msg, nil
}

func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// verifyBlock checks the metadata of a message at a block of a file:
// a continuation marker (or none, before Arrow 0.15), a length and the
// flatbuffer.
func verifyBlock(f io.ReaderAt, offset, metaLen int64) error {
	if metaLen < 8 || metaLen > 64<<20 {
		return fmt.Errorf("impossible metadata length %d at offset %d", metaLen, offset)
	}
	buf := make([]byte, metaLen)
	if _, err := f.ReadAt(buf, offset); err != nil {
		return fmt.Errorf("message at offset %d: %w", offset, unexpected(err))
	}
	p := 0
	if binary.LittleEndian.Uint32(buf) == 0xffffffff {
		p = 4
	}
	n := int(int32(binary.LittleEndian.Uint32(buf[p:])))
	p += 4
	if n < 4 || n > len(buf)-p {
		return fmt.Errorf("impossible message metadata length %d at offset %d", n, offset)
	}
	if err := verifyMessage(buf[p : p+n]); err != nil {
		return fmt.Errorf("message at offset %d: %w", offset, err)
	}
	return nil
}
