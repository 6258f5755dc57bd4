package parquet

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/shoal-data/shoal/io/storage"

	"github.com/shoal-data/shoal/graph"
)

// DefaultTargetBytes is the size, uncompressed, up to which consecutive row
// groups of a file are read as one part when Options.TargetBytes is 0.
const DefaultTargetBytes = 128 << 20

// Options says what to read.
type Options struct {
	// Columns lists the columns to read, in the order wanted. Nil reads all
	// columns of the files, in the first file's order, followed by the
	// partition columns taken from key=value directories.
	Columns []string

	// Filter is a conjunction of bounds on column values. Row groups (and
	// pages, where files have a page index) whose statistics show that no
	// row can satisfy every bound are not read, and files whose partition
	// directories exclude them are not opened. Rows are not filtered: a part
	// may hold rows outside the bounds, and the caller filters them.
	Filter []Bound

	// TargetBytes is the size, uncompressed, up to which consecutive row
	// groups of a file are read together as one part. Zero means
	// DefaultTargetBytes; a negative value makes one part per row group.
	TargetBytes int64

	// ExactDecimals reads DECIMAL columns as Arrow decimal128 (precision at
	// most 38). By default they are read as float64, the nearest double to
	// each value.
	ExactDecimals bool

	// PlainStrings reads every string column as utf8. By default, string
	// columns that are dictionary-encoded in all the row groups read (as
	// most writers store columns with few distinct values) are read as
	// dictionary<int32, utf8> arrays, and so are string partition columns.
	PlainStrings bool

	// NoPartitionColumns ignores key=value directories instead of adding
	// them as columns.
	NoPartitionColumns bool
}

// Bound is a condition "Column Op Value" on the values of a column.
//
// Op is one of "==", "!=", "<", "<=", ">", ">=". Value is a Go scalar
// comparable with the column: an integer or float type for numeric and
// decimal columns, a string (or []byte) for text and binary columns, a bool
// for booleans, a time.Time for dates and timestamps (timestamps without a
// time zone compare as if in UTC). A null satisfies no bound, and NaN
// satisfies only "!=", as in SQL and Go.
type Bound struct {
	Column string
	Op     string
	Value  any
}

// Plan says how a set of Parquet files is read: the schema of the result
// and the parts, each read with one call to ReadPart.
//
// A Plan is plain data: it encodes with encoding/gob and encoding/json, so
// that parts can be read in other processes. To hand one part to a worker,
// send p.Part(i).
type Plan struct {
	// Schema is the schema of every record ReadPart returns.
	Schema *arrow.Schema
	// Parts are the pieces to read, in file and row order.
	Parts []Part

	// TotalRowGroups counts the non-empty row groups of the files opened.
	TotalRowGroups int
	// SkippedRowGroups counts those that statistics excluded.
	SkippedRowGroups int
	// SkippedFiles counts the files that partition directories excluded;
	// they were not opened.
	SkippedFiles int
	// SkippedRows counts the rows not read because statistics (of row
	// groups or pages) excluded them, in the files opened.
	SkippedRows int64
}

// Part is a piece of one file: some of its row groups.
type Part struct {
	Path      string
	RowGroups []int // row group numbers, increasing
	Rows      int64 // rows ReadPart returns
	// Ranges, when not empty, restricts some row groups to ranges of rows
	// (the rest of them lies in pages that statistics excluded). Row groups
	// without a range are read whole.
	Ranges []RowRange `json:",omitempty"`
	// Partition holds the key=value directories of the file, unescaped.
	Partition map[string]string `json:",omitempty"`
}

// RowRange is the range of rows [Start, End) of row group RowGroup.
type RowRange struct {
	RowGroup   int
	Start, End int64
}

// Part returns a plan holding only part i, to send to whoever reads it.
func (p *Plan) Part(i int) *Plan {
	return &Plan{Schema: p.Schema, Parts: []Part{p.Parts[i]}}
}

// Rows returns the number of rows of all parts.
func (p *Plan) Rows() int64 {
	var n int64
	for i := range p.Parts {
		n += p.Parts[i].Rows
	}
	return n
}

// planWire is how a Plan travels: the schema as Arrow IPC bytes.
type planWire struct {
	Schema           []byte
	Parts            []Part
	TotalRowGroups   int   `json:",omitempty"`
	SkippedRowGroups int   `json:",omitempty"`
	SkippedFiles     int   `json:",omitempty"`
	SkippedRows      int64 `json:",omitempty"`
}

func (p *Plan) wire() (*planWire, error) {
	w := &planWire{Parts: p.Parts, TotalRowGroups: p.TotalRowGroups, SkippedRowGroups: p.SkippedRowGroups,
		SkippedFiles: p.SkippedFiles, SkippedRows: p.SkippedRows}
	if p.Schema != nil {
		var buf bytes.Buffer
		iw := ipc.NewWriter(&buf, ipc.WithSchema(p.Schema))
		if err := iw.Close(); err != nil {
			return nil, fmt.Errorf("parquet: encode plan schema: %w", err)
		}
		w.Schema = buf.Bytes()
	}
	return w, nil
}

func (p *Plan) fromWire(w *planWire) error {
	*p = Plan{Parts: w.Parts, TotalRowGroups: w.TotalRowGroups, SkippedRowGroups: w.SkippedRowGroups,
		SkippedFiles: w.SkippedFiles, SkippedRows: w.SkippedRows}
	if len(w.Schema) > 0 {
		r, err := graph.NewArrowReader(bytes.NewReader(w.Schema), int64(len(w.Schema)))
		if err != nil {
			return fmt.Errorf("parquet: decode plan schema: %w", err)
		}
		p.Schema = r.Schema()
		r.Release()
	}
	return nil
}

// MarshalBinary encodes the plan (encoding/gob uses it).
func (p *Plan) MarshalBinary() ([]byte, error) {
	w, err := p.wire()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(w); err != nil {
		return nil, fmt.Errorf("parquet: encode plan: %w", err)
	}
	return buf.Bytes(), nil
}

// UnmarshalBinary decodes a plan encoded by MarshalBinary.
func (p *Plan) UnmarshalBinary(b []byte) error {
	var w planWire
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&w); err != nil {
		return fmt.Errorf("parquet: decode plan: %w", err)
	}
	return p.fromWire(&w)
}

// MarshalJSON encodes the plan; the schema is base64 Arrow IPC.
func (p *Plan) MarshalJSON() ([]byte, error) {
	w, err := p.wire()
	if err != nil {
		return nil, err
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes a plan encoded by MarshalJSON.
func (p *Plan) UnmarshalJSON(b []byte) error {
	var w planWire
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("parquet: decode plan: %w", err)
	}
	return p.fromWire(&w)
}

// fileInfo is what planning learns about one file.
type fileInfo struct {
	path      string
	md        *format.FileMetaData
	cols      []fileColumn
	byName    map[string]int
	partition map[string]string
}

// openParquet opens a Parquet file and reads its metadata. Panics in the
// Parquet library become errors naming the file.
func openParquet(ctx context.Context, fsys storage.FS, p string) (_ storage.File, pf *pq.File, err error) {
	f, err := fsys.Open(ctx, p)
	if err != nil {
		return nil, nil, fmt.Errorf("parquet: %w", err)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrCorrupt, r)
		}
		if err != nil {
			f.Close()
			pf = nil
			err = fileError(p, err)
		}
	}()
	size := f.Size()
	var head, tail [8]byte
	if size < 12 {
		if n, _ := f.ReadAt(head[:4], 0); n == 4 && string(head[:4]) == "PAR1" {
			return nil, nil, fmt.Errorf("%w: only %d bytes long (truncated?)", ErrCorrupt, size)
		}
		return nil, nil, fmt.Errorf("%w: only %d bytes long", ErrNotParquet, size)
	}
	if _, err := f.ReadAt(head[:4], 0); err != nil {
		return nil, nil, err
	}
	if _, err := f.ReadAt(tail[:], size-8); err != nil {
		return nil, nil, err
	}
	switch {
	case string(head[:4]) == "PARE" || string(tail[4:]) == "PARE":
		return nil, nil, fmt.Errorf("%w: encrypted Parquet files are not supported", ErrNotParquet)
	case string(head[:4]) != "PAR1":
		return nil, nil, fmt.Errorf("%w: it does not start with the magic bytes PAR1", ErrNotParquet)
	case string(tail[4:]) != "PAR1":
		return nil, nil, fmt.Errorf("%w: it does not end with the magic bytes PAR1 (truncated?)", ErrCorrupt)
	}
	footer := int64(uint32(tail[0]) | uint32(tail[1])<<8 | uint32(tail[2])<<16 | uint32(tail[3])<<24)
	if footer > size-12 {
		return nil, nil, fmt.Errorf("%w: footer of %d bytes in a file of %d", ErrCorrupt, footer, size)
	}
	meta := make([]byte, footer)
	if n, err := f.ReadAt(meta, size-8-footer); n < len(meta) {
		return nil, nil, fmt.Errorf("read footer: %w", err)
	}
	if n, err := checkThrift(meta); err != nil {
		return nil, nil, fmt.Errorf("footer: %w", err)
	} else if n != len(meta) {
		return nil, nil, fmt.Errorf("%w: footer of %d bytes holds %d of metadata", ErrCorrupt, len(meta), n)
	}
	pf, err = pq.OpenFile(f, size, pq.SkipPageIndex(true), pq.SkipBloomFilters(true), pq.ReadBufferSize(64<<10))
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return f, pf, nil
}

func readInfo(ctx context.Context, fsys storage.FS, p string) (*fileInfo, error) {
	f, pf, err := openParquet(ctx, fsys, p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info := &fileInfo{path: p, md: pf.Metadata()}
	if info.cols, err = columnsOf(info.md); err != nil {
		return nil, fileError(p, err)
	}
	info.byName = make(map[string]int, len(info.cols))
	for i, c := range info.cols {
		if _, dup := info.byName[c.name]; dup {
			return nil, fileError(p, fmt.Errorf("%w: two columns named %q", ErrCorrupt, c.name))
		}
		info.byName[c.name] = i
	}
	return info, nil
}

// parallel runs fn(0..n-1) on up to workers goroutines and returns the
// first error. It returns when every call has returned.
func parallel(ctx context.Context, n, workers int, fn func(i int) error) error {
	if n == 0 {
		return nil
	}
	workers = min(workers, n)
	var (
		mu    sync.Mutex
		first error
		next  int
		wg    sync.WaitGroup
	)
	take := func() int {
		mu.Lock()
		defer mu.Unlock()
		if first != nil || next >= n {
			return -1
		}
		next++
		return next - 1
	}
	for range workers {
		wg.Go(func() {
			for i := take(); i >= 0; i = take() {
				err := ctx.Err()
				if err == nil {
					err = fn(i)
				}
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return first
}

// planColumn is a column of the plan's schema.
type planColumn struct {
	name   string
	typ    arrow.DataType // before the dictionary decision
	hive   int            // index among partition keys, or -1
	col    *fileColumn    // in the first file
	stats  bool
	isText bool
}

// PlanRead plans the reading of Parquet files: paths are files or patterns
// (see storage.Expand). It reads the footer of every file, checks that
// the files have the same columns, skips row groups and pages by the
// filter and groups the rest into parts of about opts.TargetBytes.
func PlanRead(ctx context.Context, fsys storage.FS, paths []string, opts Options) (*Plan, error) {
	files, err := storage.Expand(ctx, fsys, paths...)
	if err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	bounds, err := checkBounds(opts.Filter)
	if err != nil {
		return nil, err
	}

	// Partition directories, from the paths alone.
	var hiveKeys []string
	partitions := make([]map[string]string, len(files))
	hiveVals := make([][]string, len(files))
	if !opts.NoPartitionColumns {
		if hiveKeys, hiveVals, err = partitionsOf(paths, files); err != nil {
			return nil, err
		}
		for i := range files {
			if len(hiveKeys) > 0 {
				partitions[i] = make(map[string]string, len(hiveKeys))
				for k, key := range hiveKeys {
					partitions[i][key] = hiveVals[i][k]
				}
			}
		}
	}

	// The first file defines the columns.
	first, err := readInfo(ctx, fsys, files[0])
	if err != nil {
		return nil, err
	}
	hiveTypes := make([]arrow.DataType, len(hiveKeys))
	var keys []string // partition keys that are not also file columns
	for k, key := range hiveKeys {
		if _, inFile := first.byName[key]; inFile {
			continue
		}
		keys = append(keys, key)
		hiveTypes[k] = hiveType(hiveVals, k, opts.PlainStrings)
	}

	// Files excluded by bounds on partition columns are not opened.
	keep := make([]bool, len(files))
	skippedFiles := 0
	for i := range files {
		keep[i] = true
		for _, b := range bounds {
			k := slices.Index(hiveKeys, b.Column)
			if k < 0 || hiveTypes[k] == nil {
				continue
			}
			if !b.mayMatch(hiveStats(hiveVals[i][k], hiveTypes[k])) {
				keep[i] = false
				break
			}
		}
		if !keep[i] {
			skippedFiles++
		}
	}

	infos := make([]*fileInfo, len(files))
	infos[0] = first
	err = parallel(ctx, len(files)-1, 8, func(i int) error {
		if !keep[i+1] {
			return nil
		}
		info, err := readInfo(ctx, fsys, files[i+1])
		infos[i+1] = info
		return err
	})
	if err != nil {
		return nil, err
	}
	for i, info := range infos {
		if info != nil {
			info.partition = partitions[i]
		}
	}

	// The columns of the result.
	cols, err := planColumns(first, keys, hiveKeys, hiveTypes, opts)
	if err != nil {
		return nil, err
	}
	for _, info := range infos[1:] {
		if info != nil {
			if err := sameSchema(first, info, opts.ExactDecimals); err != nil {
				return nil, err
			}
		}
	}
	fileBounds, err := resolveBounds(bounds, first, keys, opts.ExactDecimals)
	if err != nil {
		return nil, err
	}

	plan := &Plan{SkippedFiles: skippedFiles}
	target := opts.TargetBytes
	if target == 0 {
		target = DefaultTargetBytes
	}
	// Row groups kept per file, with their ranges.
	type fileParts struct {
		parts        []Part
		total, skip  int
		skippedRows  int64
		dictionaries map[string]bool // string column -> dictionary-encoded everywhere read
	}
	results := make([]fileParts, len(infos))
	err = parallel(ctx, len(infos), 8, func(i int) (err error) {
		info := infos[i]
		if info == nil || (i == 0 && !keep[0]) {
			return nil
		}
		defer func() {
			if r := recover(); r != nil {
				err = fileError(info.path, fmt.Errorf("%w: %v", ErrCorrupt, r))
			}
		}()
		sel, err := selectRowGroups(ctx, fsys, info, fileBounds)
		if err != nil {
			return fileError(info.path, err)
		}
		res := &results[i]
		res.total, res.skip, res.skippedRows = sel.total, sel.skipped, sel.skippedRows
		res.parts = coalesce(info, cols, sel, target)
		res.dictionaries = map[string]bool{}
		for _, c := range cols {
			if c.isText && c.col != nil {
				fc := &info.cols[info.byName[c.name]]
				res.dictionaries[c.name] = allDictionary(info.md, fc.leaf, sel.groups)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	dictionary := map[string]bool{}
	for _, c := range cols {
		dictionary[c.name] = !opts.PlainStrings
	}
	for i := range results {
		r := &results[i]
		plan.Parts = append(plan.Parts, r.parts...)
		plan.TotalRowGroups += r.total
		plan.SkippedRowGroups += r.skip
		plan.SkippedRows += r.skippedRows
		for name, d := range r.dictionaries {
			dictionary[name] = dictionary[name] && d
		}
	}
	for i := range plan.Parts {
		plan.Parts[i].Partition = partitionOf(plan.Parts[i].Partition, keys)
	}

	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		t := c.typ
		if c.isText && dictionary[c.name] {
			t = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
		}
		nullable := true
		if c.col != nil {
			nullable = false
			for _, info := range infos {
				if info != nil && info.cols[info.byName[c.name]].optional {
					nullable = true
				}
			}
		}
		fields[i] = arrow.Field{Name: c.name, Type: t, Nullable: nullable}
	}
	plan.Schema = arrow.NewSchema(fields, nil)
	return plan, nil
}

// partitionOf keeps the partition values of the plan's partition columns.
func partitionOf(all map[string]string, keys []string) map[string]string {
	if len(keys) == 0 {
		return nil
	}
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		out[k] = all[k]
	}
	return out
}

// partitionsOf finds the key=value directories of the files, below the
// static part of the pattern that matched each. All files must have the
// same keys in the same order.
func partitionsOf(patterns, files []string) (keys []string, vals [][]string, err error) {
	roots := make([]string, len(patterns))
	for i, p := range patterns {
		roots[i] = staticPrefix(p)
	}
	vals = make([][]string, len(files))
	for i, f := range files {
		fs := path.Clean(strings.ReplaceAll(f, "\\", "/"))
		root := ""
		for _, r := range roots {
			rc := r
			if rc != "" {
				rc = path.Clean(rc) + "/"
				if rc == "./" {
					rc = ""
				}
			}
			if strings.HasPrefix(fs, rc) && len(rc) > len(root) {
				root = rc
			}
		}
		k, v, err := hiveSegments(root, fs)
		if err != nil {
			return nil, nil, fmt.Errorf("parquet: %s: %w", f, err)
		}
		if i == 0 {
			keys = k
		} else if !slices.Equal(keys, k) {
			return nil, nil, fmt.Errorf("parquet: %s and %s have different partition directories (%s and %s)",
				files[0], f, describeKeys(keys), describeKeys(k))
		}
		vals[i] = v
	}
	if len(keys) == 0 {
		return nil, nil, nil
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			return nil, nil, fmt.Errorf("parquet: %s: partition key %q appears twice", files[0], k)
		}
		seen[k] = true
	}
	return keys, vals, nil
}

func describeKeys(keys []string) string {
	if len(keys) == 0 {
		return "none"
	}
	return strings.Join(keys, "/")
}

// hiveType is int64 when every value of partition key k is an integer,
// and text otherwise.
func hiveType(vals [][]string, k int, plainStrings bool) arrow.DataType {
	ints, any := true, false
	for _, v := range vals {
		if v[k] == hiveNull {
			continue
		}
		any = true
		if _, err := strconv.ParseInt(v[k], 10, 64); err != nil {
			ints = false
		}
	}
	if ints && any {
		return arrow.PrimitiveTypes.Int64
	}
	if plainStrings {
		return arrow.BinaryTypes.String
	}
	return &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
}

// hiveStats are the statistics of a partition column in one file: one
// value, or all nulls.
func hiveStats(v string, t arrow.DataType) stats {
	if v == hiveNull {
		return stats{allNull: true}
	}
	var s scalar
	if t.ID() == arrow.INT64 {
		i, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return stats{}
		}
		s = intScalar(i)
	} else {
		s = scalar{kind: kindStr, str: v}
	}
	return stats{min: s, max: s, minMax: true}
}

// checkBounds checks the operators and value types of a filter.
func checkBounds(filter []Bound) ([]*bound, error) {
	out := make([]*bound, len(filter))
	for i, f := range filter {
		o, ok := ops[f.Op]
		if !ok {
			return nil, fmt.Errorf("parquet: filter %q %s %v: unknown operator %q (use ==, !=, <, <=, >, >=)", f.Column, f.Op, f.Value, f.Op)
		}
		v, ok := boundValue(f.Value)
		if !ok {
			return nil, fmt.Errorf("parquet: filter %q %s %v: value of type %T is not a number, string, bool or time.Time", f.Column, f.Op, f.Value, f.Value)
		}
		out[i] = &bound{Bound: f, op: o, val: v}
	}
	return out, nil
}

// fileBound is a bound on a column of the files.
type fileBound struct {
	*bound
	name string
}

// resolveBounds checks that bounds name known columns of suitable types,
// and returns those on file columns.
func resolveBounds(bounds []*bound, first *fileInfo, keys []string, exact bool) ([]*fileBound, error) {
	var out []*fileBound
	for _, b := range bounds {
		var t arrow.DataType
		if k := slices.Index(keys, b.Column); k >= 0 {
			continue // checked against partition values
		}
		i, ok := first.byName[b.Column]
		if !ok {
			return nil, &ColumnError{Path: first.path, Column: b.Column, Problem: "no such column (in filter)", Available: available(first, keys)}
		}
		c := &first.cols[i]
		t, err := c.arrowType(exact)
		if err != nil {
			return nil, columnTypeError(first.path, c.name, err)
		}
		dom := domainOf(t)
		if dom == kindNone {
			continue // statistics of this type are not used
		}
		if dom != b.val.kind {
			return nil, fmt.Errorf("parquet: filter %s: column %q of %s is %s, the value is %s", b, b.Column, first.path, t, b.val.kind)
		}
		out = append(out, &fileBound{bound: b, name: b.Column})
	}
	return out, nil
}

func available(first *fileInfo, keys []string) []string {
	var names []string
	for _, c := range first.cols {
		names = append(names, c.name)
	}
	return append(names, keys...)
}

func columnTypeError(path, name string, err error) error {
	if errors.Is(err, ErrCorrupt) {
		return fileError(path, fmt.Errorf("column %q: %w", name, err))
	}
	return &ColumnError{Path: path, Column: name, Problem: err.Error() + "; leave it out of Options.Columns"}
}

// planColumns returns the columns of the result.
func planColumns(first *fileInfo, keys, hiveKeys []string, hiveTypes []arrow.DataType, opts Options) ([]planColumn, error) {
	names := opts.Columns
	if names == nil {
		for _, c := range first.cols {
			names = append(names, c.name)
		}
		names = append(names, keys...)
	}
	seen := map[string]bool{}
	var cols []planColumn
	for _, name := range names {
		if seen[name] {
			return nil, fmt.Errorf("parquet: column %q is asked for twice", name)
		}
		seen[name] = true
		if i, ok := first.byName[name]; ok {
			c := &first.cols[i]
			t, err := c.arrowType(opts.ExactDecimals)
			if err != nil {
				return nil, columnTypeError(first.path, name, err)
			}
			cols = append(cols, planColumn{name: name, typ: t, hive: -1, col: c, isText: t.ID() == arrow.STRING})
			continue
		}
		if slices.Contains(keys, name) {
			k := slices.Index(hiveKeys, name)
			cols = append(cols, planColumn{name: name, typ: hiveTypes[k], hive: k})
			continue
		}
		return nil, &ColumnError{Path: first.path, Column: name, Problem: "no such column", Available: available(first, keys)}
	}
	return cols, nil
}

// sameSchema checks that two files have the same columns, in any order.
func sameSchema(a, b *fileInfo, exact bool) error {
	mismatch := func(format string, args ...any) error {
		return &SchemaMismatchError{First: a.path, Other: b.path, Detail: fmt.Sprintf(format, args...)}
	}
	for _, ca := range a.cols {
		j, ok := b.byName[ca.name]
		if !ok {
			return mismatch("column %q is missing from %s", ca.name, b.path)
		}
		cb := &b.cols[j]
		ta, erra := ca.arrowType(exact)
		tb, errb := cb.arrowType(exact)
		switch {
		case erra != nil || errb != nil:
			if (erra == nil) != (errb == nil) || erra.Error() != errb.Error() {
				return mismatch("column %q has different types", ca.name)
			}
		case !arrow.TypeEqual(ta, tb):
			return mismatch("column %q is %s in one and %s in the other", ca.name, ta, tb)
		}
	}
	for _, cb := range b.cols {
		if _, ok := a.byName[cb.name]; !ok {
			return mismatch("column %q is missing from %s", cb.name, a.path)
		}
	}
	return nil
}

// selection is the row groups of a file that the filter keeps.
type selection struct {
	groups      []int
	ranges      map[int][]rowRange // partial row groups
	total       int
	skipped     int
	skippedRows int64
}

func selectRowGroups(ctx context.Context, fsys storage.FS, info *fileInfo, bounds []*fileBound) (*selection, error) {
	sel := &selection{ranges: map[int][]rowRange{}}
	md := info.md
	type colBound struct {
		*fileBound
		c        *fileColumn
		dec      statDecoder
		legacyOK bool
		orderOK  bool
	}
	var cbs []colBound
	for _, b := range bounds {
		c := &info.cols[info.byName[b.name]]
		t, err := c.arrowType(false)
		if err != nil {
			return nil, err
		}
		if _, _, isDec := decimalInfo(&c.elem); isDec {
			t = arrow.PrimitiveTypes.Float64
		}
		dec, legacy := statsDecoder(c, t)
		cbs = append(cbs, colBound{b, c, dec, legacy, typeDefinedOrder(md, c.leaf)})
	}
	var file storage.File // opened when a page index is needed
	defer func() {
		if file != nil {
			file.Close()
		}
	}()
	for g := range md.RowGroups {
		rg := &md.RowGroups[g]
		if rg.NumRows <= 0 {
			continue
		}
		sel.total++
		keep := true
		for _, b := range cbs {
			dec := b.dec
			if badFloatBounds(md, b.c, &rg.Columns[b.c.leaf].MetaData) {
				dec = nil
			}
			s := chunkStats(&rg.Columns[b.c.leaf].MetaData, dec, b.legacyOK, b.orderOK)
			if !b.mayMatch(s) {
				keep = false
				break
			}
		}
		var ranges []rowRange
		if keep {
			all := []rowRange{{0, rg.NumRows}}
			ranges = all
			for _, b := range cbs {
				cc := &rg.Columns[b.c.leaf]
				if cc.ColumnIndexOffset <= 0 || cc.OffsetIndexOffset <= 0 || !b.orderOK || badFloatBounds(md, b.c, &cc.MetaData) {
					continue
				}
				if file == nil {
					f, err := fsys.Open(ctx, info.path)
					if err != nil {
						return nil, err
					}
					file = f
				}
				ci, oi, err := readPageIndex(file, cc)
				if err != nil {
					return nil, err
				}
				pr, ok := pageRanges(b.bound, ci, oi, b.dec, rg.NumRows)
				if !ok {
					continue
				}
				ranges = intersect(ranges, pr)
			}
			keep = len(ranges) > 0
		}
		if !keep {
			sel.skipped++
			sel.skippedRows += rg.NumRows
			continue
		}
		sel.groups = append(sel.groups, g)
		if len(ranges) != 1 || ranges[0] != (rowRange{0, rg.NumRows}) {
			sel.ranges[g] = ranges
			var n int64
			for _, r := range ranges {
				n += r.end - r.start
			}
			sel.skippedRows += rg.NumRows - n
		}
	}
	return sel, nil
}

// badFloatBounds reports whether the min/max statistics of a column chunk
// may be wrong: the Parquet library Shoal uses computes the bounds of
// dictionary-encoded FLOAT and DOUBLE pages holding NaN wrongly, so
// statistics of such chunks in files it wrote are not used.
func badFloatBounds(md *format.FileMetaData, c *fileColumn, m *format.ColumnMetaData) bool {
	if t := c.elem.Type.V; t != format.Float && t != format.Double {
		return false
	}
	if !strings.Contains(md.CreatedBy, "parquet-go") && !strings.Contains(md.CreatedBy, "shoal") {
		return false
	}
	return slices.ContainsFunc(m.Encoding, isDictEncoding)
}

// readPageIndex reads the column index and offset index of a column chunk.
func readPageIndex(f storage.File, cc *format.ColumnChunk) (*format.ColumnIndex, *format.OffsetIndex, error) {
	read := func(off int64, n int32, v any, what string) error {
		if n <= 0 || off < 0 || off+int64(n) > f.Size() {
			return fmt.Errorf("%w: %s at %d+%d outside the file", ErrCorrupt, what, off, n)
		}
		b := make([]byte, n)
		if _, err := f.ReadAt(b, off); err != nil && !(errors.Is(err, io.EOF)) {
			return err
		}
		if _, err := checkThrift(b); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if err := thrift.Unmarshal(&thrift.CompactProtocol{}, b, v); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrCorrupt, what, err)
		}
		return nil
	}
	ci, oi := new(format.ColumnIndex), new(format.OffsetIndex)
	if err := read(cc.ColumnIndexOffset, cc.ColumnIndexLength, ci, "column index"); err != nil {
		return nil, nil, err
	}
	if err := read(cc.OffsetIndexOffset, cc.OffsetIndexLength, oi, "offset index"); err != nil {
		return nil, nil, err
	}
	return ci, oi, nil
}

// allDictionary reports whether a column is dictionary-encoded in every
// row group of groups.
func allDictionary(md *format.FileMetaData, leaf int, groups []int) bool {
	for _, g := range groups {
		if !dictionaryEncoded(&md.RowGroups[g].Columns[leaf].MetaData) {
			return false
		}
	}
	return true
}

func isDictEncoding(e format.Encoding) bool {
	return e == format.PlainDictionary || e == format.RLEDictionary
}

func dictionaryEncoded(m *format.ColumnMetaData) bool {
	if len(m.EncodingStats) > 0 {
		dict := false
		for _, s := range m.EncodingStats {
			switch s.PageType {
			case format.DictionaryPage:
				dict = true
			case format.DataPage, format.DataPageV2:
				if s.Count > 0 && !isDictEncoding(s.Encoding) {
					return false
				}
			}
		}
		return dict
	}
	return slices.ContainsFunc(m.Encoding, isDictEncoding)
}

// coalesce groups the selected row groups of a file into parts.
func coalesce(info *fileInfo, cols []planColumn, sel *selection, target int64) []Part {
	var parts []Part
	var cur *Part
	var curBytes int64
	for _, g := range sel.groups {
		rg := &info.md.RowGroups[g]
		rows := rg.NumRows
		var size int64
		for _, c := range cols {
			if c.col != nil {
				// What the column takes in memory: at least its values'
				// width per row (dictionary-encoded pages are far smaller
				// than the column they hold, which would make one part of
				// a whole file, read by one thread).
				s := rg.Columns[info.cols[info.byName[c.name]].leaf].MetaData.TotalUncompressedSize
				if fw, ok := c.typ.(arrow.FixedWidthDataType); ok {
					s = max(s, rows*int64(max(fw.BitWidth()/8, 1)))
				}
				size += s
			}
		}
		var ranges []RowRange
		if rr, ok := sel.ranges[g]; ok {
			var n int64
			for _, r := range rr {
				ranges = append(ranges, RowRange{RowGroup: g, Start: r.start, End: r.end})
				n += r.end - r.start
			}
			size = size * n / rows
			rows = n
		}
		if cur == nil || target < 0 || curBytes+size > target {
			parts = append(parts, Part{Path: info.path, Partition: info.partition})
			cur = &parts[len(parts)-1]
			curBytes = 0
		}
		cur.RowGroups = append(cur.RowGroups, g)
		cur.Rows += rows
		cur.Ranges = append(cur.Ranges, ranges...)
		curBytes += size
	}
	return parts
}
