package csv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/internal/units"
	"github.com/shoal-data/shoal/io/storage"
)

// Plan is how to read a set of CSV files: their schema and the blocks they
// are split into. Each block can be read on its own, in any order, in any
// process (Plan implements encoding.BinaryMarshaler).
type Plan struct {
	// Schema has every column of the files, in file order, with the types
	// ReadBlock produces.
	Schema *arrow.Schema
	// Files are the files read, in order.
	Files []string
	// Blocks are byte ranges of the files, each a whole number of rows, in
	// file order. There is at least one block (empty if no file has rows).
	Blocks []Block
	// Options are the options the plan was made with, defaults filled in.
	Options Options
	// RowBytes is the average size of a row in the sample, 0 if there was
	// none: a block has about Length/RowBytes rows.
	RowBytes float64

	fieldBytes []float64 // average bytes per field of each column in the sample
	inferred   []bool    // whether each column's type was inferred
}

// ForBlock returns a plan with only block i of p, as its block 0: smaller
// to send with a task that reads one block.
func (p *Plan) ForBlock(i int) *Plan {
	q := *p
	q.Blocks = []Block{p.Blocks[i]}
	return &q
}

// Block is a byte range of a file that starts at the beginning of a row and
// ends at the end of a row. A header line is never part of a block.
type Block struct {
	Path   string
	File   int   // index in Plan.Files
	Offset int64 // offset of the first byte
	Length int64 // length in bytes
}

// fileHead is what planning learns from the start of a file.
type fileHead struct {
	path      string
	size      int64
	dataStart int64    // after BOM and header
	names     []string // header fields, nil without header
	empty     bool     // nothing but possibly a BOM
}

const bom = "\xef\xbb\xbf"

// PlanRead plans reading the CSV files named by paths, which may be glob
// patterns (see storage.Expand): it reads each file's header, infers the
// column types from a sample of the first file with rows, and splits the
// files into blocks of about opts.BlockSize bytes.
func PlanRead(ctx context.Context, fsys storage.FS, paths []string, opts Options) (*Plan, error) {
	o, err := opts.normalize()
	if err != nil {
		return nil, err
	}
	files, err := storage.Expand(ctx, fsys, paths...)
	if err != nil {
		return nil, fmt.Errorf("csv: %w", err)
	}
	heads := make([]fileHead, len(files))
	for i, path := range files {
		if heads[i], err = readHead(ctx, fsys, path, o); err != nil {
			return nil, err
		}
	}
	if o.BlockSize <= 0 {
		var total int64
		for _, h := range heads {
			total += h.size
		}
		o.BlockSize = defaultBlockSize
		if small := total / int64(2*runtime.GOMAXPROCS(0)); small < o.BlockSize {
			o.BlockSize = max(small, minDefaultBlock)
		}
	}
	names, err := columnNames(heads, o)
	if err != nil {
		return nil, err
	}
	plan := &Plan{Files: files, Options: o}
	if plan.Schema, err = planSchema(ctx, fsys, heads, names, o, plan); err != nil {
		return nil, err
	}
	for i, h := range heads {
		if h.empty || h.dataStart >= h.size {
			continue
		}
		blocks, err := splitFile(ctx, fsys, h, i, o)
		if err != nil {
			return nil, err
		}
		plan.Blocks = append(plan.Blocks, blocks...)
	}
	if len(plan.Blocks) == 0 {
		h := heads[0]
		plan.Blocks = []Block{{Path: h.path, File: 0, Offset: min(h.dataStart, h.size)}}
	}
	return plan, nil
}

// readHead opens a file and reads its BOM and header line.
func readHead(ctx context.Context, fsys storage.FS, path string, o Options) (fileHead, error) {
	h := fileHead{path: path}
	f, err := fsys.Open(ctx, path)
	if err != nil {
		return h, fmt.Errorf("csv: %w", err)
	}
	defer f.Close()
	h.size = f.Size()
	want := int64(64 << 10)
	for {
		n := min(want, h.size)
		buf := make([]byte, n)
		if _, err := f.ReadAt(buf, 0); err != nil && !(errors.Is(err, io.EOF) && n == h.size) {
			return h, fmt.Errorf("csv: read %s: %w", path, err)
		}
		start := 0
		if bytes.HasPrefix(buf, []byte(bom)) {
			start = len(bom)
		}
		h.dataStart = int64(start)
		rest := buf[start:]
		// A file of nothing but line breaks is empty too.
		if len(bytes.Trim(rest, "\r\n")) == 0 && n == h.size {
			h.empty = true
			return h, nil
		}
		if o.NoHeader {
			return h, nil
		}
		fields, used, err := readRecord(rest, o.Delimiter, o.Quote, n == h.size)
		if err != nil {
			return h, fmt.Errorf("csv: %s line 1: header: %w", path, err)
		}
		if fields != nil {
			h.names = fields
			h.dataStart += int64(used)
			return h, nil
		}
		if len(rest) > o.MaxLineBytes {
			return h, fmt.Errorf("csv: %s line 1: header: %w: no end of line in its first %s (Options.MaxLineBytes; raise it if the header is that long)",
				path, ErrLineTooLong, units.Bytes(int64(o.MaxLineBytes)))
		}
		// The header line is longer than what was read.
		want = min(want*4, int64(start+o.MaxLineBytes+2))
	}
}

// readRecord splits the first record of buf, skipping blank lines. It
// returns the fields and the bytes used through the line break, or nil
// fields if buf ends before the record does and !final.
func readRecord(buf []byte, delim, quote byte, final bool) ([]string, int, error) {
	pos := 0
	for pos < len(buf) && (buf[pos] == '\n' || buf[pos] == '\r') {
		pos++
	}
	var fields []string
	var field []byte
	for {
		field = field[:0]
		if pos < len(buf) && buf[pos] == quote {
			pos++
			for {
				k := bytes.IndexByte(buf[pos:], quote)
				if k < 0 {
					if final {
						return nil, 0, fmt.Errorf("%w: quoted field not terminated", ErrQuote)
					}
					return nil, 0, nil
				}
				field = append(field, buf[pos:pos+k]...)
				pos += k + 1
				if pos < len(buf) && buf[pos] == quote {
					field = append(field, quote)
					pos++
					continue
				}
				if pos == len(buf) && !final {
					return nil, 0, nil
				}
				break
			}
			if pos < len(buf) && buf[pos] == '\r' {
				switch {
				case pos+1 < len(buf) && buf[pos+1] == '\n':
					pos++
				case pos+1 == len(buf) && !final:
					return nil, 0, nil
				case pos+1 == len(buf):
					pos++
				}
			}
			if pos < len(buf) && buf[pos] != delim && buf[pos] != '\n' {
				return nil, 0, fmt.Errorf("%w: text after the closing quote: %q", ErrQuote, lineText(buf, pos))
			}
		} else {
			j := pos
			for j < len(buf) && buf[j] != delim && buf[j] != '\n' {
				if buf[j] == quote {
					return nil, 0, fmt.Errorf("%w: quote in an unquoted field: %q", ErrQuote, lineText(buf, pos))
				}
				j++
			}
			if j == len(buf) && !final {
				return nil, 0, nil
			}
			field = append(field, buf[pos:j]...)
			if (j == len(buf) || buf[j] == '\n') && len(field) > 0 && field[len(field)-1] == '\r' {
				field = field[:len(field)-1]
			}
			pos = j
		}
		fields = append(fields, string(field))
		if pos < len(buf) && buf[pos] == delim {
			pos++
			continue
		}
		if pos < len(buf) {
			pos++
		}
		return fields, pos, nil
	}
}

// columnNames returns the column names and checks that every file has the
// same header.
func columnNames(heads []fileHead, o Options) ([]string, error) {
	var first *fileHead
	for i := range heads {
		h := &heads[i]
		if h.empty || o.NoHeader {
			continue
		}
		if first == nil {
			first = h
			continue
		}
		if !slices.Equal(h.names, first.names) {
			return nil, fmt.Errorf("csv: %w: %s has columns %s, %s has %s%s", ErrHeaderMismatch,
				first.path, quoteNames(first.names), h.path, quoteNames(h.names), diffNames(first.names, h.names))
		}
	}
	var names []string
	switch {
	case first != nil:
		names = first.names
		if len(o.Columns) > 0 {
			if len(o.Columns) != len(names) {
				return nil, fmt.Errorf("csv: %d names in Options.Columns, but %s has %d columns: %s",
					len(o.Columns), first.path, len(names), quoteNames(names))
			}
			names = o.Columns
		}
	case len(o.Columns) > 0:
		names = o.Columns
	case o.Schema != nil:
		for _, f := range o.Schema.Fields() {
			names = append(names, f.Name)
		}
	case o.NoHeader:
		return nil, nil // from the first row, while sampling
	default:
		return nil, fmt.Errorf("csv: %s: %w: no header line (give Options.Schema to read empty files)", heads[0].path, ErrEmptyFile)
	}
	if o.Schema != nil && first != nil {
		if len(o.Schema.Fields()) != len(names) {
			return nil, fmt.Errorf("csv: Options.Schema has %d fields, but %s has %d columns: %s",
				len(o.Schema.Fields()), first.path, len(names), quoteNames(names))
		}
		for i, f := range o.Schema.Fields() {
			if f.Name != names[i] {
				return nil, fmt.Errorf("csv: column %d of %s is %q, but Options.Schema calls it %q", i+1, first.path, names[i], f.Name)
			}
		}
	}
	return uniqueNames(names), nil
}

// uniqueNames names unnamed columns "column_<i>" and renames repeated names
// "name.1", "name.2", ... as pandas does.
func uniqueNames(names []string) []string {
	out := slices.Clone(names)
	seen := map[string]bool{}
	for i, n := range out {
		if n == "" {
			n = fmt.Sprintf("column_%d", i)
		}
		base := n
		for k := 1; seen[n]; k++ {
			n = fmt.Sprintf("%s.%d", base, k)
		}
		seen[n] = true
		out[i] = n
	}
	return out
}

func quoteNames(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return "[" + strings.Join(q, " ") + "]"
}

func diffNames(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf(" (column %d: %q vs %q)", i+1, a[i], b[i])
		}
	}
	return fmt.Sprintf(" (%d vs %d columns)", len(a), len(b))
}
