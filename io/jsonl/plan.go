package jsonl

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

	"github.com/shoal-data/shoal/graph"
)

// Defaults for Options.
const (
	DefaultBlockSize   = 64 << 20
	DefaultSampleBytes = 1 << 20
)

// TimestampType is the type of columns read as timestamps when the schema
// is inferred: microseconds, UTC.
var TimestampType = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}

// Options control PlanRead.
type Options struct {
	// Schema gives the columns and their types. Supported types: int64,
	// float64, bool, string, large string, timestamp (any unit and time
	// zone; values are RFC 3339 strings), date32 ("2024-03-01") and null.
	// When nil, the schema is inferred from the first SampleBytes of the
	// first file: columns in the order their keys first appear; int64 for
	// integers, float64 for numbers with a fraction or exponent (or
	// integers mixed with them), bool for true and false, string for
	// strings and for keys whose values are of mixed kinds (numbers and
	// booleans are kept as their JSON text), null when every value seen is
	// null.
	Schema *arrow.Schema
	// Columns are the columns to read, in this order; nil reads all.
	Columns []string
	// ParseDates names the columns to read as timestamps (TimestampType)
	// when the schema is inferred; their values must be RFC 3339 strings
	// or dates. With an explicit Schema, give those columns a timestamp
	// type instead.
	ParseDates []string
	// NestedAsJSON keeps objects and arrays as their JSON text in string
	// columns. Without it, a nested value is an error naming its key.
	NestedAsJSON bool
	// IgnoreUnknownKeys skips keys that are not in the schema. Without it,
	// such a key is an error: it usually means that the schema inferred
	// from the sample missed a column.
	IgnoreUnknownKeys bool
	// BlockSize is about how many bytes of a file one part reads; parts
	// split files between lines. Zero means DefaultBlockSize.
	BlockSize int64
	// SampleBytes is how much of the first file schema inference reads
	// (always whole lines). Zero means DefaultSampleBytes.
	SampleBytes int64
}

// Plan is the work of reading a set of JSON-lines files, split into parts
// that ReadPart reads independently. It encodes with encoding/json and
// encoding/gob. Make plans with PlanRead, Select and Slice: a Plan also
// carries options that its fields do not show.
type Plan struct {
	// Schema is the schema of the record batches ReadPart returns: the
	// requested columns.
	Schema *arrow.Schema
	// Parts are the units of reading, in file order.
	Parts []Part

	known         []string // every column of the files, read or not
	ignoreUnknown bool
	nestedAsJSON  bool
}

// Part is a part of a Plan: the lines of a file that start in the byte
// range [Offset, Offset+Length).
type Part struct {
	Path   string `json:"path"`
	Offset int64  `json:"offset"`
	Length int64  `json:"length"`
}

// PlanRead plans reading the files that paths name; paths may hold glob
// patterns (with "**" for any number of directories). Only the sample for
// schema inference is read; the rest of the files are split by size.
func PlanRead(ctx context.Context, fsys storage.FS, paths []string, opts Options) (*Plan, error) {
	if opts.BlockSize < 0 || opts.SampleBytes < 0 {
		return nil, fmt.Errorf("jsonl: BlockSize and SampleBytes must not be negative (they are %d and %d)", opts.BlockSize, opts.SampleBytes)
	}
	block := cmpOr(opts.BlockSize, DefaultBlockSize)
	if dup := firstDuplicate(opts.Columns); dup != "" {
		return nil, fmt.Errorf("jsonl: column %q is requested twice", dup)
	}
	files, err := storage.Expand(ctx, fsys, paths...)
	if err != nil {
		return nil, fmt.Errorf("jsonl: %w", err)
	}
	schema := opts.Schema
	if schema != nil {
		if len(opts.ParseDates) > 0 {
			return nil, errors.New("jsonl: ParseDates applies when the schema is inferred; with Options.Schema, give those columns a timestamp type")
		}
		if err := checkSchema(schema); err != nil {
			return nil, err
		}
	} else {
		if schema, err = infer(ctx, fsys, files, opts); err != nil {
			return nil, err
		}
	}
	plan := &Plan{ignoreUnknown: opts.IgnoreUnknownKeys, nestedAsJSON: opts.NestedAsJSON}
	for _, f := range schema.Fields() {
		plan.known = append(plan.known, f.Name)
	}
	where := "the schema"
	if opts.Schema == nil {
		where = files[0]
	}
	if plan.Schema, err = project(schema, opts.Columns, where); err != nil {
		return nil, err
	}
	for _, path := range files {
		size, err := fsys.Stat(ctx, path)
		if err != nil {
			return nil, fmt.Errorf("jsonl: %w", err)
		}
		plan.Parts = append(plan.Parts, Part{Path: path, Length: min(size, block)})
		for off := block; off < size; off += block {
			plan.Parts = append(plan.Parts, Part{Path: path, Offset: off, Length: min(block, size-off)})
		}
	}
	return plan, nil
}

func cmpOr(v, def int64) int64 {
	if v == 0 {
		return def
	}
	return v
}

// checkSchema checks that the reader supports a given schema.
func checkSchema(s *arrow.Schema) error {
	seen := map[string]bool{}
	for _, f := range s.Fields() {
		if seen[f.Name] {
			return fmt.Errorf("jsonl: the schema has two columns named %q", f.Name)
		}
		seen[f.Name] = true
		if _, err := kindOf(f.Type); err != nil {
			return fmt.Errorf("jsonl: column %q: %w", f.Name, err)
		}
	}
	return nil
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
func project(s *arrow.Schema, columns []string, where string) (*arrow.Schema, error) {
	if columns == nil {
		return s, nil
	}
	fields := make([]arrow.Field, len(columns))
	for i, name := range columns {
		j := s.FieldIndices(name)
		if len(j) == 0 {
			return nil, unknownColumn(name, s, where)
		}
		fields[i] = s.Field(j[0])
	}
	md := s.Metadata()
	return arrow.NewSchema(fields, &md), nil
}

func unknownColumn(name string, s *arrow.Schema, where string) error {
	names := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		names[i] = f.Name
	}
	hint := ""
	if c := suggest.Closest(name, names); c != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", c)
	}
	list := "no columns"
	if len(names) > 0 {
		q := make([]string, len(names))
		for i, n := range names {
			q[i] = fmt.Sprintf("%q", n)
		}
		list = strings.Join(q, ", ")
	}
	return fmt.Errorf("jsonl: %w %q in %s%s; it has %s", ErrUnknownColumn, name, where, hint, list)
}

// Select returns a plan that reads only the given columns of p, in this
// order, without looking at the files again.
func (p *Plan) Select(columns ...string) (*Plan, error) {
	if p == nil || p.Schema == nil {
		return nil, errors.New("jsonl: Select needs a plan from PlanRead")
	}
	if dup := firstDuplicate(columns); dup != "" {
		return nil, fmt.Errorf("jsonl: column %q is selected twice", dup)
	}
	s, err := project(p.Schema, columns, "the plan")
	if err != nil {
		return nil, err
	}
	q := *p
	q.Schema = s
	return &q, nil
}

// planJSON is how a Plan is encoded: the schema as an Arrow IPC schema
// message.
type planJSON struct {
	Schema            []byte   `json:"schema"`
	Parts             []Part   `json:"parts"`
	Known             []string `json:"known"`
	IgnoreUnknownKeys bool     `json:"ignore_unknown_keys,omitempty"`
	NestedAsJSON      bool     `json:"nested_as_json,omitempty"`
}

// MarshalJSON encodes the plan; the schema is an Arrow IPC schema
// message, in base64.
func (p Plan) MarshalJSON() ([]byte, error) {
	if p.Schema == nil {
		return nil, errors.New("jsonl: encode plan: the plan has no schema")
	}
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(p.Schema))
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("jsonl: encode plan schema: %w", err)
	}
	parts := p.Parts
	if parts == nil {
		parts = []Part{}
	}
	return json.Marshal(planJSON{Schema: buf.Bytes(), Parts: parts, Known: p.known,
		IgnoreUnknownKeys: p.ignoreUnknown, NestedAsJSON: p.nestedAsJSON})
}

// UnmarshalJSON decodes a plan encoded by MarshalJSON.
func (p *Plan) UnmarshalJSON(b []byte) (err error) {
	var pj planJSON
	if err := json.Unmarshal(b, &pj); err != nil {
		return fmt.Errorf("jsonl: decode plan: %w", err)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("jsonl: decode plan schema: %v", r)
		}
	}()
	r, err := graph.NewArrowReader(bytes.NewReader(pj.Schema), int64(len(pj.Schema)))
	if err != nil {
		return fmt.Errorf("jsonl: decode plan schema: %w", err)
	}
	defer r.Release()
	*p = Plan{Schema: r.Schema(), Parts: pj.Parts, known: pj.Known,
		ignoreUnknown: pj.IgnoreUnknownKeys, nestedAsJSON: pj.NestedAsJSON}
	return nil
}

// MarshalBinary encodes the plan, for encoding/gob. It is the JSON
// encoding.
func (p Plan) MarshalBinary() ([]byte, error) { return p.MarshalJSON() }

// UnmarshalBinary decodes a plan encoded by MarshalBinary.
func (p *Plan) UnmarshalBinary(b []byte) error { return p.UnmarshalJSON(b) }

// Slice returns a plan that reads parts i to j-1 of p: p.Slice(i, i+1)
// is the least there is to send to a task that reads part i (as its part
// 0).
func (p *Plan) Slice(i, j int) *Plan {
	q := *p
	q.Parts = p.Parts[i:j:j]
	return &q
}
