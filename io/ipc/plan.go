package ipc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/shoal-data/shoal/internal/suggest"
	"github.com/shoal-data/shoal/io/storage"
)

// Errors that callers may test for with errors.Is. The errors returned
// wrap them and say which file and what exactly is wrong.
var (
	// ErrNotArrow: the file is neither an Arrow IPC file nor a stream.
	ErrNotArrow = errors.New("not an Arrow IPC file or stream")
	// ErrCorrupt: the file is truncated or damaged.
	ErrCorrupt = errors.New("damaged or truncated Arrow data")
	// ErrSchemaMismatch: files to be read together have different columns.
	ErrSchemaMismatch = errors.New("schemas differ")
	// ErrUnknownColumn: a requested column does not exist.
	ErrUnknownColumn = errors.New("no such column")
)

// DefaultTargetBytes is the size of the parts a file is split into when
// Options.TargetBytes is zero.
const DefaultTargetBytes = 64 << 20

// Options control PlanRead.
type Options struct {
	// Columns are the columns to read, in this order; nil reads all.
	Columns []string
	// TargetBytes is about how many bytes of a file in the random-access
	// format one part reads: consecutive record batches are grouped up to
	// this size (a part holds at least one batch). Zero means
	// DefaultTargetBytes. A stream is always read whole, as one part.
	TargetBytes int64
}

// Format is an Arrow IPC format.
type Format uint8

const (
	// FileFormat is the random-access file format (Feather version 2).
	FileFormat Format = iota + 1
	// StreamFormat is the streaming format.
	StreamFormat
)

// String returns "file" or "stream".
func (f Format) String() string {
	switch f {
	case FileFormat:
		return "file"
	case StreamFormat:
		return "stream"
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// MarshalText encodes the format as its name.
func (f Format) MarshalText() ([]byte, error) {
	if f != FileFormat && f != StreamFormat {
		return nil, fmt.Errorf("ipc: unknown format %d", uint8(f))
	}
	return []byte(f.String()), nil
}

// UnmarshalText decodes "file" or "stream".
func (f *Format) UnmarshalText(b []byte) error {
	switch string(b) {
	case "file":
		*f = FileFormat
	case "stream":
		*f = StreamFormat
	default:
		return fmt.Errorf("ipc: unknown format %q; want \"file\" or \"stream\"", b)
	}
	return nil
}

// Plan is the work of reading a set of Arrow IPC files, split into parts
// that ReadPart reads independently. It encodes with encoding/json and
// encoding/gob.
type Plan struct {
	// Schema is the schema of the record batches ReadPart returns: the
	// requested columns.
	Schema *arrow.Schema
	// Parts are the units of reading, in file order.
	Parts []Part
}

// Part is a part of a Plan: some record batches of one file.
type Part struct {
	Path   string `json:"path"`
	Format Format `json:"format"`
	// FirstBatch and NumBatches select the record batches of a file in
	// the random-access format. For a stream, both are zero and the whole
	// stream is read.
	FirstBatch int `json:"first_batch,omitempty"`
	NumBatches int `json:"num_batches,omitempty"`
	// Bytes is about how many bytes of the file the part reads.
	Bytes int64 `json:"bytes"`
}

// PlanRead plans reading the files that paths name; paths may hold glob
// patterns (with "**" for any number of directories). Every file is
// opened to read its schema, and for files in the random-access format
// the list of record batches, but no data is read.
func PlanRead(ctx context.Context, fsys storage.FS, paths []string, opts Options) (*Plan, error) {
	if opts.TargetBytes < 0 {
		return nil, fmt.Errorf("ipc: TargetBytes is %d; want a positive size or zero for the default", opts.TargetBytes)
	}
	target := opts.TargetBytes
	if target == 0 {
		target = DefaultTargetBytes
	}
	if dup := firstDuplicate(opts.Columns); dup != "" {
		return nil, fmt.Errorf("ipc: column %q is requested twice", dup)
	}
	files, err := storage.Expand(ctx, fsys, paths...)
	if err != nil {
		return nil, fmt.Errorf("ipc: %w", err)
	}
	plan := &Plan{}
	var firstPath string
	var firstSchema *arrow.Schema
	for _, path := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		info, err := inspect(ctx, fsys, path)
		if err != nil {
			return nil, err
		}
		if firstSchema == nil {
			firstPath, firstSchema = path, info.schema
			if plan.Schema, err = project(info.schema, opts.Columns, path); err != nil {
				return nil, err
			}
		} else if err := sameColumns(firstSchema, info.schema, opts.Columns, firstPath, path); err != nil {
			return nil, err
		}
		plan.Parts = append(plan.Parts, info.parts(path, target)...)
	}
	return plan, nil
}

func firstDuplicate(names []string) string {
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return n
		}
		seen[n] = true
	}
	return ""
}

// project returns the schema of the requested columns.
func project(s *arrow.Schema, columns []string, path string) (*arrow.Schema, error) {
	if columns == nil {
		return s, nil
	}
	idx, err := columnIndices(s, columns, path)
	if err != nil {
		return nil, err
	}
	fields := make([]arrow.Field, len(idx))
	for i, j := range idx {
		fields[i] = s.Field(j)
	}
	md := s.Metadata()
	return arrow.NewSchema(fields, &md), nil
}

// columnIndices finds the requested columns in s.
func columnIndices(s *arrow.Schema, columns []string, path string) ([]int, error) {
	idx := make([]int, len(columns))
	for i, name := range columns {
		found := s.FieldIndices(name)
		switch len(found) {
		case 0:
			return nil, unknownColumn(name, s, path)
		case 1:
			idx[i] = found[0]
		default:
			return nil, fmt.Errorf("ipc: %s has %d columns named %q; cannot tell which to read", path, len(found), name)
		}
	}
	return idx, nil
}

func unknownColumn(name string, s *arrow.Schema, path string) error {
	names := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		names[i] = f.Name
	}
	hint := ""
	if c := suggest.Closest(name, names); c != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", c)
	}
	return fmt.Errorf("ipc: %w %q in %s%s; it has %s", ErrUnknownColumn, name, path, hint, quoteList(names))
}

func quoteList(names []string) string {
	if len(names) == 0 {
		return "no columns"
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// sameColumns checks that file b can be read with file a: the requested
// columns (all of them when columns is nil) have the same names and
// types. Nullability and metadata may differ.
func sameColumns(a, b *arrow.Schema, columns []string, pathA, pathB string) error {
	mismatch := func(format string, args ...any) error {
		return fmt.Errorf("ipc: %w: %s and %s: %s", ErrSchemaMismatch, pathA, pathB, fmt.Sprintf(format, args...))
	}
	if columns == nil {
		for i := 0; i < max(a.NumFields(), b.NumFields()); i++ {
			switch {
			case i >= a.NumFields():
				return mismatch("column %q of %s is not in %s", b.Field(i).Name, pathB, pathA)
			case i >= b.NumFields():
				return mismatch("column %q of %s is not in %s", a.Field(i).Name, pathA, pathB)
			}
			fa, fb := a.Field(i), b.Field(i)
			if fa.Name != fb.Name {
				if a.HasField(fb.Name) && b.HasField(fa.Name) {
					return mismatch("the columns are in another order (column %d is %q in one, %q in the other)", i, fa.Name, fb.Name)
				}
				if !b.HasField(fa.Name) {
					return mismatch("column %q of %s is not in %s", fa.Name, pathA, pathB)
				}
				return mismatch("column %q of %s is not in %s", fb.Name, pathB, pathA)
			}
			if !arrow.TypeEqual(fa.Type, fb.Type) {
				return mismatch("column %q is %s in %s but %s in %s", fa.Name, fa.Type, pathA, fb.Type, pathB)
			}
		}
		return nil
	}
	ia, err := columnIndices(a, columns, pathA)
	if err != nil {
		return err
	}
	ib, err := columnIndices(b, columns, pathB)
	if err != nil {
		return err
	}
	for k := range ia {
		fa, fb := a.Field(ia[k]), b.Field(ib[k])
		if !arrow.TypeEqual(fa.Type, fb.Type) {
			return mismatch("column %q is %s in %s but %s in %s", fa.Name, fa.Type, pathA, fb.Type, pathB)
		}
	}
	return nil
}

// planJSON is how a Plan is encoded: the schema as an Arrow IPC schema
// message.
type planJSON struct {
	Schema []byte `json:"schema"`
	Parts  []Part `json:"parts"`
}

// MarshalJSON encodes the plan; the schema is an Arrow IPC schema
// message, in base64.
func (p Plan) MarshalJSON() ([]byte, error) {
	s, err := encodeSchema(p.Schema)
	if err != nil {
		return nil, err
	}
	parts := p.Parts
	if parts == nil {
		parts = []Part{}
	}
	return json.Marshal(planJSON{Schema: s, Parts: parts})
}

// UnmarshalJSON decodes a plan encoded by MarshalJSON.
func (p *Plan) UnmarshalJSON(b []byte) error {
	var pj planJSON
	if err := json.Unmarshal(b, &pj); err != nil {
		return fmt.Errorf("ipc: decode plan: %w", err)
	}
	s, err := decodeSchema(pj.Schema)
	if err != nil {
		return err
	}
	*p = Plan{Schema: s, Parts: pj.Parts}
	return nil
}

// MarshalBinary encodes the plan, for encoding/gob. It is the JSON
// encoding.
func (p Plan) MarshalBinary() ([]byte, error) { return p.MarshalJSON() }

// UnmarshalBinary decodes a plan encoded by MarshalBinary.
func (p *Plan) UnmarshalBinary(b []byte) error { return p.UnmarshalJSON(b) }

func encodeSchema(s *arrow.Schema) ([]byte, error) {
	if s == nil {
		return nil, errors.New("ipc: encode plan: the plan has no schema")
	}
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(s))
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("ipc: encode plan schema: %w", err)
	}
	return buf.Bytes(), nil
}

func decodeSchema(b []byte) (s *arrow.Schema, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("ipc: decode plan schema: %w: %v", ErrCorrupt, r)
		}
	}()
	r, err := ipc.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("ipc: decode plan schema: %w", err)
	}
	defer r.Release()
	return r.Schema(), nil
}

// fileInfo is what planning learns about one file.
type fileInfo struct {
	format Format
	schema *arrow.Schema
	size   int64
	blocks []int64 // bytes of each record batch (file format)
}

// parts splits a file into parts of about target bytes.
func (fi *fileInfo) parts(path string, target int64) []Part {
	if fi.format == StreamFormat || len(fi.blocks) == 0 {
		return []Part{{Path: path, Format: fi.format, Bytes: fi.size}}
	}
	var out []Part
	cur := Part{Path: path, Format: FileFormat}
	for i, b := range fi.blocks {
		if cur.NumBatches > 0 && cur.Bytes+b > target {
			out = append(out, cur)
			cur = Part{Path: path, Format: FileFormat, FirstBatch: i}
		}
		cur.NumBatches++
		cur.Bytes += b
	}
	return append(out, cur)
}

// Select returns a plan that reads only the given columns of p, in this
// order, without opening the files again.
func (p *Plan) Select(columns ...string) (*Plan, error) {
	if p == nil || p.Schema == nil {
		return nil, errors.New("ipc: Select needs a plan from PlanRead")
	}
	if dup := firstDuplicate(columns); dup != "" {
		return nil, fmt.Errorf("ipc: column %q is selected twice", dup)
	}
	where := "the plan"
	if len(p.Parts) > 0 {
		where = p.Parts[0].Path
	}
	s, err := project(p.Schema, columns, where)
	if err != nil {
		return nil, err
	}
	return &Plan{Schema: s, Parts: p.Parts}, nil
}

// Slice returns a plan that reads parts i to j-1 of p: p.Slice(i, i+1)
// is the least there is to send to a task that reads part i (as its part
// 0).
func (p *Plan) Slice(i, j int) *Plan {
	q := *p
	q.Parts = p.Parts[i:j:j]
	return &q
}
