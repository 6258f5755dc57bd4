package graph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// Arrow's IPC reader trusts the counts and lengths in a message's
// metadata (a flatbuffer): a message of a hundred bytes that claims a
// billion key-value pairs of custom metadata makes it allocate tens of
// gigabytes before it notices anything. Data that comes from another
// process, or from a file, is checked first: every table, vector and
// string of the metadata must lie within it, so that nothing claims more
// elements than the message could hold.

// maxFieldDepth bounds the nesting of a schema's fields.
const maxFieldDepth = 64

// CheckArrowMessage checks meta, the metadata of one Arrow IPC message
// (the flatbuffer of a Message: a Flight message's DataHeader), before an
// Arrow reader reads it: every table, vector and string in it must lie
// within it. It returns the length of the message's body.
func CheckArrowMessage(meta []byte) (bodyLength int64, err error) {
	c := fbCheck{b: meta}
	msg, err := c.root()
	if err != nil {
		return 0, err
	}
	if err := c.keyValues(msg, 4); err != nil {
		return 0, fmt.Errorf("message metadata: %w", err)
	}
	bodyLength, err = c.int64Field(msg, 3)
	if err != nil || bodyLength < 0 {
		return 0, fmt.Errorf("message body length: %w", errOr(err, "negative"))
	}
	kind, err := c.uint8Field(msg, 1)
	if err != nil {
		return 0, err
	}
	hdr, ok, err := c.tableField(msg, 2)
	if err != nil || !ok {
		return 0, fmt.Errorf("message header: %w", errOr(err, "missing"))
	}
	switch kind {
	case 1: // Schema
		err = c.schema(hdr)
	case 2: // DictionaryBatch
		var data int
		data, ok, err = c.tableField(hdr, 1)
		if err == nil && ok {
			err = c.recordBatch(data)
		}
	case 3: // RecordBatch
		err = c.recordBatch(hdr)
	default:
		err = fmt.Errorf("message of kind %d, which Shoal does not read", kind)
	}
	if err != nil {
		return 0, fmt.Errorf("arrow message: %w", err)
	}
	return bodyLength, nil
}

func errOr(err error, s string) error {
	if err != nil {
		return err
	}
	return errors.New(s)
}

// fbCheck reads a flatbuffer, checking every position it reads.
type fbCheck struct{ b []byte }

var errOutside = errors.New("malformed: reaches outside the message")

func (c fbCheck) u32(at int) (uint32, error) {
	if at < 0 || at+4 > len(c.b) {
		return 0, errOutside
	}
	return binary.LittleEndian.Uint32(c.b[at:]), nil
}

func (c fbCheck) u16(at int) (uint16, error) {
	if at < 0 || at+2 > len(c.b) {
		return 0, errOutside
	}
	return binary.LittleEndian.Uint16(c.b[at:]), nil
}

func (c fbCheck) root() (int, error) {
	off, err := c.u32(0)
	if err != nil {
		return 0, err
	}
	return c.table(int(off))
}

// table checks the table at pos and its vtable, and returns pos.
func (c fbCheck) table(pos int) (int, error) {
	soff, err := c.u32(pos)
	if err != nil {
		return 0, err
	}
	vt := pos - int(int32(soff))
	size, err := c.u16(vt)
	if err != nil || size < 4 || size%2 != 0 || vt+int(size) > len(c.b) {
		return 0, errOutside
	}
	obj, _ := c.u16(vt + 2)
	if pos+int(obj) > len(c.b) {
		return 0, errOutside
	}
	return pos, nil
}

// field returns where field slot of the table at pos is, or 0 when it is
// absent.
func (c fbCheck) field(pos, slot int) (int, error) {
	soff, _ := c.u32(pos) // checked by table
	vt := pos - int(int32(soff))
	size, _ := c.u16(vt)
	if 4+2*slot+2 > int(size) {
		return 0, nil
	}
	off, _ := c.u16(vt + 4 + 2*slot)
	if off == 0 {
		return 0, nil
	}
	return pos + int(off), nil
}

func (c fbCheck) int64Field(pos, slot int) (int64, error) {
	at, err := c.field(pos, slot)
	if err != nil || at == 0 {
		return 0, err
	}
	if at+8 > len(c.b) {
		return 0, errOutside
	}
	return int64(binary.LittleEndian.Uint64(c.b[at:])), nil
}

func (c fbCheck) uint8Field(pos, slot int) (uint8, error) {
	at, err := c.field(pos, slot)
	if err != nil || at == 0 {
		return 0, err
	}
	if at >= len(c.b) {
		return 0, errOutside
	}
	return c.b[at], nil
}

// ref follows the offset stored at field slot of the table at pos.
func (c fbCheck) ref(pos, slot int) (int, bool, error) {
	at, err := c.field(pos, slot)
	if err != nil || at == 0 {
		return 0, false, err
	}
	off, err := c.u32(at)
	if err != nil {
		return 0, false, err
	}
	return at + int(off), true, nil
}

func (c fbCheck) tableField(pos, slot int) (int, bool, error) {
	at, ok, err := c.ref(pos, slot)
	if err != nil || !ok {
		return 0, ok, err
	}
	t, err := c.table(at)
	return t, true, err
}

// vector checks the vector of field slot, of elements of size elem, and
// returns where its elements start and how many there are.
func (c fbCheck) vector(pos, slot, elem int) (start, n int, err error) {
	at, ok, err := c.ref(pos, slot)
	if err != nil || !ok {
		return 0, 0, err
	}
	l, err := c.u32(at)
	if err != nil {
		return 0, 0, err
	}
	if uint64(l)*uint64(elem) > uint64(len(c.b)-at-4) {
		return 0, 0, fmt.Errorf("malformed: a vector of %d elements in %d bytes", l, len(c.b))
	}
	return at + 4, int(l), nil
}

// tables checks a vector of tables and calls fn with each.
func (c fbCheck) tables(pos, slot int, fn func(int) error) error {
	start, n, err := c.vector(pos, slot, 4)
	if err != nil {
		return err
	}
	for i := range n {
		at := start + 4*i
		off, _ := c.u32(at)
		t, err := c.table(at + int(off))
		if err != nil {
			return err
		}
		if fn != nil {
			if err := fn(t); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c fbCheck) keyValues(pos, slot int) error {
	return c.tables(pos, slot, func(kv int) error {
		if _, _, err := c.vector(kv, 0, 1); err != nil {
			return err
		}
		_, _, err := c.vector(kv, 1, 1)
		return err
	})
}

func (c fbCheck) schema(pos int) error {
	if err := c.keyValues(pos, 2); err != nil {
		return err
	}
	if _, _, err := c.vector(pos, 3, 8); err != nil { // features
		return err
	}
	return c.tables(pos, 1, func(f int) error { return c.fieldOf(f, 0) })
}

func (c fbCheck) fieldOf(pos, depth int) error {
	if depth > maxFieldDepth {
		return fmt.Errorf("malformed: fields nested deeper than %d", maxFieldDepth)
	}
	if _, _, err := c.vector(pos, 0, 1); err != nil { // name
		return err
	}
	kind, err := c.uint8Field(pos, 2)
	if err != nil {
		return err
	}
	if typ, ok, err := c.tableField(pos, 3); err != nil {
		return err
	} else if ok {
		switch kind {
		case 10: // Timestamp: its time zone
			_, _, err = c.vector(typ, 1, 1)
		case 14: // Union: its type ids
			_, _, err = c.vector(typ, 1, 4)
		}
		if err != nil {
			return err
		}
	}
	if dict, ok, err := c.tableField(pos, 4); err != nil {
		return err
	} else if ok {
		if _, _, err := c.tableField(dict, 1); err != nil { // its index type
			return err
		}
	}
	if err := c.keyValues(pos, 6); err != nil {
		return err
	}
	return c.tables(pos, 5, func(ch int) error { return c.fieldOf(ch, depth+1) })
}

func (c fbCheck) recordBatch(pos int) error {
	for _, v := range []struct{ slot, elem int }{{1, 16}, {2, 16}, {4, 8}} { // nodes, buffers, variadic counts
		if _, _, err := c.vector(pos, v.slot, v.elem); err != nil {
			return err
		}
	}
	_, _, err := c.tableField(pos, 3) // compression
	return err
}

// NewArrowReader is ipc.NewReader for an Arrow IPC stream from another
// process or a file: the metadata of each message is checked with
// CheckArrowMessage before the reader reads it, and no message may
// claim more than limit bytes of metadata or body (limit <= 0: 1 GiB).
func NewArrowReader(r io.Reader, limit int64, opts ...ipc.Option) (*ipc.Reader, error) {
	if limit <= 0 {
		limit = 1 << 30
	}
	cr := &checkedStream{r: r, limit: limit}
	return ipc.NewReader(cr, append([]ipc.Option{ipc.WithMetadataSizeLimit(limit), ipc.WithBodySizeLimit(limit)}, opts...)...)
}

// checkedStream passes an IPC stream through, checking each message's
// metadata before it lets it go.
type checkedStream struct {
	r     io.Reader
	limit int64
	out   []byte // checked bytes not yet read
	body  int64  // bytes of the current body still to pass through
	err   error
}

func (s *checkedStream) Read(p []byte) (int, error) {
	for len(s.out) == 0 && s.body == 0 {
		if s.err != nil {
			return 0, s.err
		}
		s.err = s.next()
	}
	if len(s.out) > 0 {
		n := copy(p, s.out)
		s.out = s.out[n:]
		return n, nil
	}
	if int64(len(p)) > s.body {
		p = p[:s.body]
	}
	n, err := s.r.Read(p)
	s.body -= int64(n)
	if err == io.EOF && s.body > 0 {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		s.err = err
		if n > 0 {
			err = nil
		}
	}
	return n, err
}

// next reads the prefix and metadata of the next message into out.
func (s *checkedStream) next() error {
	var pre [8]byte
	if _, err := io.ReadFull(s.r, pre[:4]); err != nil {
		return err // io.EOF at the end of the stream
	}
	head := pre[:4]
	size := binary.LittleEndian.Uint32(pre[:4])
	if size == 0xFFFFFFFF { // continuation marker, then the size
		if _, err := io.ReadFull(s.r, pre[4:8]); err != nil {
			return noEOF(err)
		}
		head = pre[:8]
		size = binary.LittleEndian.Uint32(pre[4:8])
	}
	if size == 0 { // end of stream
		s.out = append(s.out[:0], head...)
		return nil
	}
	if int64(size) > s.limit {
		return fmt.Errorf("arrow message: %d bytes of metadata, more than the limit of %d", size, s.limit)
	}
	meta := make([]byte, size)
	if _, err := io.ReadFull(s.r, meta); err != nil {
		return noEOF(err)
	}
	body, err := CheckArrowMessage(meta)
	if err != nil {
		return err
	}
	if body > s.limit {
		return fmt.Errorf("arrow message: a body of %d bytes, more than the limit of %d", body, s.limit)
	}
	s.out = append(append(s.out[:0], head...), meta...)
	s.body = body
	return nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
