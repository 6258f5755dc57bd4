package array

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/shoal-data/shoal/graph"
)

// NumPy's .npy format (version 1.0, 2.0 and 3.0): a magic string, a
// header that is a Python dict literal ({'descr': '<f8', 'fortran_order':
// False, 'shape': (3, 4), }), then the elements.

var npyMagic = []byte("\x93NUMPY")

// npyHeader is what the header of a .npy file says.
type npyHeader struct {
	Descr   string `json:"descr"`
	Fortran bool   `json:"fortran,omitempty"`
	Shape   []int  `json:"shape"`
	Offset  int64  `json:"offset"` // where the data starts
}

// NPYError is a .npy file that cannot be read: it names the file and what
// is wrong with it.
type NPYError struct {
	Path   string
	Reason string
}

func (e *NPYError) Error() string {
	return fmt.Sprintf("array: %s: not a .npy file Shoal can read: %s", e.Path, e.Reason)
}

// npyType describes an element type of the format.
type npyType struct {
	kind  byte // 'f', 'i', 'u', 'b'
	size  int
	big   bool
	dtype DType // what it is read as
}

func parseDescr(d string) (npyType, error) {
	if len(d) < 3 {
		return npyType{}, fmt.Errorf("element type %q", d)
	}
	var t npyType
	switch d[0] {
	case '<', '|', '=':
	case '>':
		t.big = true
	default:
		return t, fmt.Errorf("element type %q has no byte order", d)
	}
	t.kind = d[1]
	n, err := strconv.Atoi(d[2:])
	if err != nil {
		return t, fmt.Errorf("element type %q", d)
	}
	t.size = n
	switch {
	case t.kind == 'f' && n == 8:
		t.dtype = Float64
	case t.kind == 'f' && n == 4:
		t.dtype = Float32
	case t.kind == 'i' && (n == 1 || n == 2 || n == 4 || n == 8):
		t.dtype = Int64
	case t.kind == 'u' && (n == 1 || n == 2 || n == 4):
		t.dtype = Int64
	case t.kind == 'b' && n == 1:
		t.dtype = Bool
	default:
		return t, fmt.Errorf("element type %q is not supported (want float64, float32, signed integers, unsigned integers up to 32 bits, or bool)", d)
	}
	return t, nil
}

// readNPYHeader reads and checks the header of the .npy file at path, and
// returns it with the file's size and modification time, read from the
// same open file (the path may name another file, or none, a moment
// later).
func readNPYHeader(path string) (npyHeader, npyType, os.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return npyHeader{}, npyType{}, nil, fmt.Errorf("array: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return npyHeader{}, npyType{}, nil, fmt.Errorf("array: %w", err)
	}
	h, t, err := parseNPYHeader(f, path)
	if err != nil {
		return h, t, nil, err
	}
	n := int64(product(h.Shape)) * int64(t.size)
	if st.Size() < h.Offset+n {
		return h, t, nil, &NPYError{Path: path, Reason: fmt.Sprintf("the file has %d bytes of data, but shape %v of %s needs %d (truncated?)",
			st.Size()-h.Offset, h.Shape, h.Descr, n)}
	}
	return h, t, st, nil
}

func parseNPYHeader(r io.Reader, path string) (npyHeader, npyType, error) {
	bad := func(format string, args ...any) (npyHeader, npyType, error) {
		return npyHeader{}, npyType{}, &NPYError{Path: path, Reason: fmt.Sprintf(format, args...)}
	}
	pre := make([]byte, 8)
	if _, err := io.ReadFull(r, pre); err != nil {
		return bad("the file is too short for a header (%v)", err)
	}
	if !bytes.Equal(pre[:6], npyMagic) {
		return bad("it does not start with the magic string \\x93NUMPY")
	}
	var hlen int
	var off int64
	switch pre[6] {
	case 1:
		b := make([]byte, 2)
		if _, err := io.ReadFull(r, b); err != nil {
			return bad("truncated header length")
		}
		hlen, off = int(binary.LittleEndian.Uint16(b)), 10
	case 2, 3:
		b := make([]byte, 4)
		if _, err := io.ReadFull(r, b); err != nil {
			return bad("truncated header length")
		}
		hlen, off = int(binary.LittleEndian.Uint32(b)), 12
	default:
		return bad("format version %d.%d is not supported", pre[6], pre[7])
	}
	if hlen > 1<<20 {
		return bad("header length %d is implausible", hlen)
	}
	hb := make([]byte, hlen)
	if _, err := io.ReadFull(r, hb); err != nil {
		return bad("the header of %d bytes is truncated", hlen)
	}
	h, err := parseHeaderDict(string(hb))
	if err != nil {
		return bad("header %q: %v", strings.TrimSpace(string(hb)), err)
	}
	h.Offset = off + int64(hlen)
	t, err := parseDescr(h.Descr)
	if err != nil {
		return bad("%v", err)
	}
	if _, err := shapeSize(h.Shape); err != nil {
		return bad("shape %v", h.Shape)
	}
	return h, t, nil
}

// parseHeaderDict reads the Python dict literal of a header.
func parseHeaderDict(s string) (npyHeader, error) {
	var h npyHeader
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
		return h, errors.New("not a dict")
	}
	s = strings.TrimSpace(s[1 : len(s)-1])
	seen := map[string]bool{}
	for len(s) > 0 {
		key, rest, err := pyString(s)
		if err != nil {
			return h, err
		}
		rest = strings.TrimSpace(rest)
		if !strings.HasPrefix(rest, ":") {
			return h, fmt.Errorf("no ':' after key %q", key)
		}
		rest = strings.TrimSpace(rest[1:])
		switch key {
		case "descr":
			if h.Descr, rest, err = pyString(rest); err != nil {
				return h, fmt.Errorf("descr: %w", err)
			}
		case "fortran_order":
			switch {
			case strings.HasPrefix(rest, "True"):
				h.Fortran, rest = true, rest[4:]
			case strings.HasPrefix(rest, "False"):
				rest = rest[5:]
			default:
				return h, errors.New("fortran_order is neither True nor False")
			}
		case "shape":
			if !strings.HasPrefix(rest, "(") {
				return h, errors.New("shape is not a tuple")
			}
			end := strings.IndexByte(rest, ')')
			if end < 0 {
				return h, errors.New("shape tuple is not closed")
			}
			h.Shape = []int{}
			for _, f := range strings.Split(rest[1:end], ",") {
				f = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(f), "L"))
				if f == "" {
					continue
				}
				n, err := strconv.Atoi(f)
				if err != nil || n < 0 {
					return h, fmt.Errorf("shape has length %q", f)
				}
				h.Shape = append(h.Shape, n)
			}
			rest = rest[end+1:]
		default:
			return h, fmt.Errorf("unknown key %q", key)
		}
		seen[key] = true
		rest = strings.TrimSpace(rest)
		rest = strings.TrimPrefix(rest, ",")
		s = strings.TrimSpace(rest)
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return h, fmt.Errorf("key %q is missing", k)
		}
	}
	return h, nil
}

func pyString(s string) (string, string, error) {
	if len(s) == 0 || (s[0] != '\'' && s[0] != '"') {
		return "", s, errors.New("expected a quoted string")
	}
	end := strings.IndexByte(s[1:], s[0])
	if end < 0 {
		return "", s, errors.New("unterminated string")
	}
	return s[1 : 1+end], s[2+end:], nil
}

// npyHeaderBytes writes the magic string and header for dtype t and shape.
func npyHeaderBytes(t DType, shape []int) []byte {
	descr := map[DType]string{Float64: "<f8", Float32: "<f4", Int64: "<i8", Bool: "|b1"}[t]
	parts := make([]string, len(shape))
	for i, s := range shape {
		parts[i] = strconv.Itoa(s)
	}
	tuple := "(" + strings.Join(parts, ", ")
	if len(shape) == 1 {
		tuple += ","
	}
	tuple += ")"
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, tuple)
	version, pre := byte(1), 10
	if len(dict)+pre+1 > 65535 {
		version, pre = 2, 12
	}
	total := (pre + len(dict) + 1 + 63) / 64 * 64
	hlen := total - pre
	dict += strings.Repeat(" ", hlen-len(dict)-1) + "\n"
	b := append([]byte{}, npyMagic...)
	b = append(b, version, 0)
	if version == 1 {
		b = binary.LittleEndian.AppendUint16(b, uint16(hlen))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(hlen))
	}
	return append(b, dict...)
}

// npyParams are the params of an "array.npy" task.
type npyParams struct {
	Mode   string    `json:"mode"` // "read" or "write"
	Path   string    `json:"path"`
	Header npyHeader `json:"header"`
	Start  []int     `json:"start"` // of the block, in the array
	Shape  []int     `json:"shape"` // of the block
}

type npyReadOp struct {
	path   string
	header npyHeader
}

func (o *npyReadOp) prefix() string { return "read-npy" }

func (o *npyReadOp) lower(l *lowerer, n *node) ([]graph.Key, error) {
	grid := gridShape(n.chunks)
	offs := make([][]int, len(n.chunks))
	for a := range n.chunks {
		offs[a] = offsets(n.chunks[a])
	}
	keys := make([]graph.Key, numBlocks(n.chunks))
	for i := range keys {
		idx := blockIndex(grid, i)
		start := make([]int, len(idx))
		for a := range idx {
			start[a] = offs[a][idx[a]]
		}
		keys[i] = n.key(idx...)
		p := npyParams{Mode: "read", Path: o.path, Header: o.header, Start: start, Shape: blockShape(n.chunks, idx)}
		if err := l.add(keys[i], opNPY, p, nil); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// ReadNPY returns the array stored in the NumPy .npy file at path, as
// np.save writes it. Elements of type float64, float32, int8 to int64,
// uint8 to uint32 (read as int64) and bool are supported, little- or
// big-endian, C or Fortran order. The header is read now, so that a
// missing file or a corrupt header is an error at once; each chunk is read
// by its own task, so the file must be reachable where the tasks run.
// Options: Chunks, ChunkSizes, ChunkBytes.
func ReadNPY(path string, opts ...Option) Array {
	c, err := configure("ReadNPY", opts, chunkOptions...)
	if err != nil {
		return errArray(wrapErr(err))
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return errorf("ReadNPY: %v", err)
	}
	h, t, st, err := readNPYHeader(abs)
	if err != nil {
		return errArray(err)
	}
	chunks, err := normalizeChunks(c.chunks, h.Shape, t.dtype)
	if err != nil {
		return errorf("ReadNPY %s: %v", path, err)
	}
	return newArray(&npyReadOp{path: abs, header: h}, t.dtype, chunks, nil, []any{"npy", abs, h, st.ModTime().UnixNano(), st.Size()})
}

// ReadNPYStack reads .npy files that hold consecutive parts of one array
// along axis (as WriteNPYStack writes them) as that array: each file is
// one chunk along axis. The files must agree on the element type and on
// the lengths of the other axes.
func ReadNPYStack(paths []string, axis int) Array {
	if len(paths) == 0 {
		return errorf("ReadNPYStack: no files")
	}
	parts := make([]Array, len(paths))
	for i, p := range paths {
		h, _, _, err := readNPYHeader(p)
		if err != nil {
			return errArray(err)
		}
		parts[i] = ReadNPY(p, ChunkSizes(wholeChunks(h.Shape)...))
		if parts[i].Err() != nil {
			return parts[i]
		}
		if i > 0 && parts[i].DType() != parts[0].DType() {
			return errorf("ReadNPYStack: %s holds %s, %s holds %s", paths[i], parts[i].DType(), paths[0], parts[0].DType())
		}
	}
	r := Concatenate(parts, axis)
	if err := r.Err(); err != nil {
		return errorf("ReadNPYStack: %s", strings.TrimPrefix(unwrapArrayErr(err), "Concatenate: "))
	}
	return r
}

func wholeChunks(shape []int) [][]int {
	out := make([][]int, len(shape))
	for i, s := range shape {
		out[i] = []int{s}
	}
	return out
}

// WriteNPY computes the array and writes it to a .npy file at path that
// NumPy's np.load reads. Each chunk is computed and written by its own
// task, at its place in the file, so the array need not fit in memory;
// the file must be reachable where the tasks run (a shared file system
// for a cluster).
func WriteNPY(ctx context.Context, exec graph.Executor, path string, a Array) error {
	if err := a.Err(); err != nil {
		return err
	}
	if exec == nil {
		return errors.New("array: WriteNPY needs an executor, such as local.New()")
	}
	if !allKnown(a.n.chunks) {
		return fmt.Errorf("array: WriteNPY: the array has chunks of unknown size %s; call ComputeChunkSizes first", formatChunks(a.n.chunks))
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("array: WriteNPY: %w", err)
	}
	shape := a.Shape()
	hdr := npyHeaderBytes(a.n.dtype, shape)
	f, err := os.Create(abs)
	if err != nil {
		return fmt.Errorf("array: WriteNPY: %w", err)
	}
	_, werr := f.Write(hdr)
	if werr == nil {
		werr = f.Truncate(int64(len(hdr)) + int64(product(shape))*int64(a.n.dtype.Size()))
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("array: WriteNPY %s: %w", abs, werr)
	}
	g, keys, err := a.Graph()
	if err != nil {
		return err
	}
	h := npyHeader{Descr: "", Shape: shape, Offset: int64(len(hdr))}
	grid := gridShape(a.n.chunks)
	offs := make([][]int, len(shape))
	for ax := range shape {
		offs[ax] = offsets(a.n.chunks[ax])
	}
	wkeys := make([]graph.Key, len(keys))
	token := graph.TokenizeStrings(abs, a.n.token)
	for i, k := range keys {
		idx := blockIndex(grid, i)
		start := make([]int, len(idx))
		for ax := range idx {
			start[ax] = offs[ax][idx[ax]]
		}
		p := npyParams{Mode: "write", Path: abs, Header: h, Start: start, Shape: blockShape(a.n.chunks, idx)}
		b, err := json.Marshal(p)
		if err != nil {
			return err
		}
		wkeys[i] = graph.NewKey("write-npy", token, idx...)
		if err := g.Add(&graph.Task{Key: wkeys[i], Op: opNPY, Params: b, Deps: []graph.Key{k}}); err != nil {
			return err
		}
	}
	_, err = exec.Compute(ctx, g, wkeys...)
	return err
}

// WriteNPYStack computes the array and writes it as one .npy file per
// chunk along axis, named 0.npy, 1.npy, ... in dir (created if needed),
// and returns their paths; the other axes are brought into one chunk
// first. NumPy reads them back with
// np.concatenate([np.load(p) for p in paths], axis=axis), and ReadNPYStack
// with ReadNPYStack(paths, axis).
func WriteNPYStack(ctx context.Context, exec graph.Executor, dir string, a Array, axis int) ([]string, error) {
	if err := a.Err(); err != nil {
		return nil, err
	}
	ax, err := normAxis(axis, a.NDim())
	if err != nil {
		return nil, fmt.Errorf("array: WriteNPYStack: %w", err)
	}
	if !allKnown(a.n.chunks) {
		return nil, fmt.Errorf("array: WriteNPYStack: the array has chunks of unknown size %s; call ComputeChunkSizes first", formatChunks(a.n.chunks))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("array: WriteNPYStack: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("array: WriteNPYStack: %w", err)
	}
	want := wholeChunks(a.Shape())
	want[ax] = a.n.chunks[ax]
	a = rechunkTo(a, want)
	if err := a.Err(); err != nil {
		return nil, err
	}
	g, keys, err := a.Graph()
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(keys))
	wkeys := make([]graph.Key, len(keys))
	token := graph.TokenizeStrings(abs, a.n.token)
	for i, k := range keys {
		paths[i] = filepath.Join(abs, fmt.Sprintf("%d.npy", i))
		b, err := json.Marshal(npyParams{Mode: "write-file", Path: paths[i]})
		if err != nil {
			return nil, err
		}
		wkeys[i] = graph.NewKey("write-npy", token, i)
		if err := g.Add(&graph.Task{Key: wkeys[i], Op: opNPY, Params: b, Deps: []graph.Key{k}}); err != nil {
			return nil, err
		}
	}
	if _, err := exec.Compute(ctx, g, wkeys...); err != nil {
		return nil, err
	}
	return paths, nil
}

func runNPY(_ context.Context, in graph.OpInput) (any, error) {
	var p npyParams
	if err := json.Unmarshal(in.Params, &p); err != nil {
		return nil, fmt.Errorf("decode npy params: %w", err)
	}
	switch p.Mode {
	case "read":
		return readNPYBlock(p)
	case "write", "write-file":
		blocks, err := denseInputs(in)
		if err != nil {
			return nil, err
		}
		if len(blocks) != 1 {
			return nil, fmt.Errorf("write takes 1 chunk, got %d", len(blocks))
		}
		if p.Mode == "write-file" {
			return writeNPYFile(p.Path, blocks[0])
		}
		return writeNPYBlock(p, blocks[0])
	}
	return nil, fmt.Errorf("unknown npy mode %q", p.Mode)
}

// contiguousRuns calls f(blockOffset, fileElement, n) for every run of
// elements of a block of shape at start in a C-order array of shape full
// that are contiguous in the file.
func contiguousRuns(full, start, shape []int, f func(boff, foff, n int) error) error {
	nd := len(full)
	if product(shape) == 0 {
		return nil
	}
	// The axes from k on are whole: one run covers them.
	k := nd
	for k > 0 && (k == nd || shape[k] == full[k]) {
		k--
	}
	if nd == 0 {
		return f(0, 0, 1)
	}
	runLen := product(shape[k:])
	fs := rowMajorStrides(full)
	idx := make([]int, k)
	for boff := 0; boff < product(shape); boff += runLen {
		foff := start[k] * fs[k]
		for a := range k {
			foff += (start[a] + idx[a]) * fs[a]
		}
		for a := k + 1; a < nd; a++ {
			foff += start[a] * fs[a]
		}
		if err := f(boff, foff, runLen); err != nil {
			return err
		}
		for a := k - 1; a >= 0; a-- {
			idx[a]++
			if idx[a] < shape[a] {
				break
			}
			idx[a] = 0
		}
	}
	return nil
}

func readNPYBlock(p npyParams) (*Dense, error) {
	t, err := parseDescr(p.Header.Descr)
	if err != nil {
		return nil, &NPYError{Path: p.Path, Reason: err.Error()}
	}
	f, err := os.Open(p.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	full, start, shape := p.Header.Shape, p.Start, p.Shape
	if p.Header.Fortran {
		// The file holds the transpose in C order.
		full, start, shape = reversed(full), reversed(start), reversed(shape)
	}
	out := newDense(t.dtype, shape)
	buf := make([]byte, 0)
	err = contiguousRuns(full, start, shape, func(boff, foff, n int) error {
		need := n * t.size
		if cap(buf) < need {
			buf = make([]byte, need)
		}
		buf = buf[:need]
		if _, err := f.ReadAt(buf, p.Header.Offset+int64(foff)*int64(t.size)); err != nil {
			return fmt.Errorf("read %s at element %d: %w", p.Path, foff, err)
		}
		return decodeNPY(out.data, boff, buf, t)
	})
	if err != nil {
		return nil, err
	}
	if p.Header.Fortran {
		return out.T().contig(), nil
	}
	return out, nil
}

func reversed(s []int) []int {
	r := slices.Clone(s)
	slices.Reverse(r)
	return r
}

// decodeNPY converts the raw elements in b into dst from position at.
func decodeNPY(dst any, at int, b []byte, t npyType) error {
	var bo binary.ByteOrder = binary.LittleEndian
	if t.big {
		bo = binary.BigEndian
	}
	n := len(b) / t.size
	switch d := dst.(type) {
	case []float64:
		for i := range n {
			d[at+i] = math.Float64frombits(bo.Uint64(b[i*8:]))
		}
	case []float32:
		for i := range n {
			d[at+i] = math.Float32frombits(bo.Uint32(b[i*4:]))
		}
	case []bool:
		for i := range n {
			d[at+i] = b[i] != 0
		}
	case []int64:
		for i := range n {
			s := b[i*t.size:]
			var v int64
			switch {
			case t.kind == 'i' && t.size == 8:
				v = int64(bo.Uint64(s))
			case t.kind == 'i' && t.size == 4:
				v = int64(int32(bo.Uint32(s)))
			case t.kind == 'i' && t.size == 2:
				v = int64(int16(bo.Uint16(s)))
			case t.kind == 'i':
				v = int64(int8(s[0]))
			case t.size == 4:
				v = int64(bo.Uint32(s))
			case t.size == 2:
				v = int64(bo.Uint16(s))
			default:
				v = int64(s[0])
			}
			d[at+i] = v
		}
	default:
		return fmt.Errorf("cannot read %c%d into %T", t.kind, t.size, dst)
	}
	return nil
}

// encodeNPY returns the elements of d (row-major) little-endian.
func encodeNPY(d *Dense) []byte {
	switch x := d.flat().(type) {
	case []float64:
		b := make([]byte, 8*len(x))
		for i, v := range x {
			binary.LittleEndian.PutUint64(b[i*8:], math.Float64bits(v))
		}
		return b
	case []float32:
		b := make([]byte, 4*len(x))
		for i, v := range x {
			binary.LittleEndian.PutUint32(b[i*4:], math.Float32bits(v))
		}
		return b
	case []int64:
		b := make([]byte, 8*len(x))
		for i, v := range x {
			binary.LittleEndian.PutUint64(b[i*8:], uint64(v))
		}
		return b
	case []bool:
		b := make([]byte, len(x))
		for i, v := range x {
			if v {
				b[i] = 1
			}
		}
		return b
	}
	return nil
}

func writeNPYBlock(p npyParams, d *Dense) (int64, error) {
	if !slices.Equal(d.shape, p.Shape) {
		return 0, fmt.Errorf("write %s: chunk has shape %v, want %v", p.Path, d.shape, p.Shape)
	}
	f, err := os.OpenFile(p.Path, os.O_WRONLY, 0)
	if err != nil {
		return 0, err
	}
	data := encodeNPY(d)
	size := d.dtype.Size()
	err = contiguousRuns(p.Header.Shape, p.Start, p.Shape, func(boff, foff, n int) error {
		_, err := f.WriteAt(data[boff*size:(boff+n)*size], p.Header.Offset+int64(foff)*int64(size))
		return err
	})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", p.Path, err)
	}
	return int64(len(data)), nil
}

func writeNPYFile(path string, d *Dense) (int64, error) {
	b := append(npyHeaderBytes(d.dtype, d.shape), encodeNPY(d)...)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	return int64(len(b)), nil
}

// A .npy file's error keeps its type when it crosses a process boundary
// (see graph.RegisterError).
func init() { graph.RegisterError[NPYError]("array.NPYError") }
