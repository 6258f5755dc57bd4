package parquet

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/shoal-data/shoal/io/storage"
)

// dictionaryBytes is the size of dictionary beyond which a column chunk
// goes on with plain pages.
const dictionaryBytes = 1 << 20

// DefaultRowGroupRows is the number of rows per row group when
// WriteOptions.RowGroupRows is 0.
const DefaultRowGroupRows = 1 << 20

// WriteOptions says how to write Parquet files.
type WriteOptions struct {
	// Compression is "snappy" (the default), "zstd", "gzip" or "none".
	Compression string
	// RowGroupRows is the number of rows per row group; 0 means
	// DefaultRowGroupRows.
	RowGroupRows int64
	// PartitionOn lists the columns WritePartitioned splits the rows by.
	PartitionOn []string

	extra     []pq.WriterOption // for tests: page size, page version
	batchRows int               // for tests: rows per page at most
}

func (o *WriteOptions) codec() (compress.Codec, error) {
	switch strings.ToLower(o.Compression) {
	case "", "snappy":
		return &pq.Snappy, nil
	case "zstd":
		return &pq.Zstd, nil
	case "gzip":
		return &pq.Gzip, nil
	case "none", "uncompressed":
		return &pq.Uncompressed, nil
	}
	return nil, fmt.Errorf("parquet: unknown compression %q (use snappy, zstd, gzip or none)", o.Compression)
}

// Writer writes Arrow records to one Parquet file.
type Writer struct {
	path    string
	out     io.WriteCloser
	w       *pq.Writer
	schema  *arrow.Schema
	cols    []writeColumn
	rgRows  int64
	batch   int64 // rows handed to the Parquet writer at a time
	inGroup int64 // rows in the current row group
	values  []pq.Value
	closed  bool
}

// writeColumn says how an Arrow column is stored.
type writeColumn struct {
	name     string
	optional bool
	node     pq.Node
	// convert appends the Parquet values of rows [i, j) of a to vals.
	convert func(vals []pq.Value, a arrow.Array, i, j, col int) ([]pq.Value, error)
}

// NewWriter creates the file at path and returns a Writer of records with
// the given schema. Close finishes the file.
func NewWriter(ctx context.Context, fsys storage.FS, path string, schema *arrow.Schema, opts WriteOptions) (*Writer, error) {
	if len(opts.PartitionOn) > 0 {
		return nil, errors.New("parquet: PartitionOn is for WritePartitioned")
	}
	codec, err := opts.codec()
	if err != nil {
		return nil, err
	}
	cols, err := writeColumns(schema)
	if err != nil {
		return nil, fmt.Errorf("parquet: write %s: %w", path, err)
	}
	fields := make(group, len(cols))
	for i, c := range cols {
		fields[i] = &groupField{Node: c.node, name: c.name}
	}
	out, err := fsys.Create(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	rg := opts.RowGroupRows
	if rg <= 0 {
		rg = DefaultRowGroupRows
	}
	config, err := pq.NewWriterConfig(append([]pq.WriterOption{
		pq.NewSchema("schema", fields),
		pq.Compression(codec),
		pq.CreatedBy("shoal", "", ""),
		pq.DictionaryMaxBytes(dictionaryBytes),
	}, opts.extra...)...)
	if err != nil {
		out.Close()
		return nil, fmt.Errorf("parquet: write %s: %w", path, err)
	}
	batch := int64(opts.batchRows)
	if batch <= 0 {
		batch = 1 << 14
	}
	return &Writer{path: path, out: out, w: pq.NewWriter(out, config), schema: schema, cols: cols, rgRows: rg, batch: batch}, nil
}

// Write appends the rows of rec, which must have the writer's schema.
func (w *Writer) Write(rec arrow.RecordBatch) (err error) {
	if w.closed {
		return fmt.Errorf("parquet: write %s: writer is closed", w.path)
	}
	if !rec.Schema().Equal(w.schema) {
		return fmt.Errorf("parquet: write %s: record schema %s differs from the file's %s", w.path, rec.Schema(), w.schema)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("parquet: write %s: %v", w.path, r)
		}
	}()
	n := rec.NumRows()
	for i := int64(0); i < n; {
		j := min(n, i+w.batch, i+(w.rgRows-w.inGroup))
		for c := range w.cols {
			vals, err := w.cols[c].convert(w.values[:0], rec.Column(c), int(i), int(j), c)
			w.values = vals
			if err != nil {
				return fmt.Errorf("parquet: write %s: column %q: %w", w.path, w.cols[c].name, err)
			}
			if _, err := w.w.ColumnWriters()[c].WriteRowValues(vals); err != nil {
				return fmt.Errorf("parquet: write %s: column %q: %w", w.path, w.cols[c].name, err)
			}
		}
		w.inGroup += j - i
		i = j
		if w.inGroup >= w.rgRows {
			if err := w.w.Flush(); err != nil {
				return fmt.Errorf("parquet: write %s: %w", w.path, err)
			}
			w.inGroup = 0
		}
	}
	clear(w.values) // do not keep the record's memory alive
	return nil
}

// Close finishes the file. It must be called once, also after an error.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	err := w.w.Close()
	if cerr := w.out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("parquet: write %s: %w", w.path, err)
	}
	return nil
}

// Write writes records, all with the same schema, to one Parquet file.
func Write(ctx context.Context, fsys storage.FS, path string, recs []arrow.RecordBatch, opts WriteOptions) error {
	if len(recs) == 0 {
		return fmt.Errorf("parquet: write %s: no records (a Parquet file needs a schema)", path)
	}
	w, err := NewWriter(ctx, fsys, path, recs[0].Schema(), opts)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		if err := ctx.Err(); err != nil {
			w.Close()
			return err
		}
		if err := w.Write(rec); err != nil {
			w.Close()
			return err
		}
	}
	return w.Close()
}

// WritePartitioned writes records split by the values of the columns
// opts.PartitionOn, Hive style: the rows with values a and b of columns x
// and y go to dir/x=a/y=b/name, without columns x and y. Values are escaped
// (bytes other than letters, digits and "-_.~" become %XX) and a null is
// written as __HIVE_DEFAULT_PARTITION__; PlanRead reads them back as
// columns. It returns the files written, sorted.
//
// Several writers (one per partition of a dataframe, say) can write into
// the same dir with different names.
func WritePartitioned(ctx context.Context, fsys storage.FS, dir, name string, recs []arrow.RecordBatch, opts WriteOptions) ([]string, error) {
	if len(opts.PartitionOn) == 0 {
		return nil, errors.New("parquet: WritePartitioned needs WriteOptions.PartitionOn")
	}
	if len(recs) == 0 {
		return nil, nil
	}
	schema := recs[0].Schema()
	var keyIdx []int
	for _, k := range opts.PartitionOn {
		idx := schema.FieldIndices(k)
		if len(idx) != 1 {
			var names []string
			for _, f := range schema.Fields() {
				names = append(names, f.Name)
			}
			return nil, &ColumnError{Column: k, Problem: "no such column to partition on", Available: names}
		}
		keyIdx = append(keyIdx, idx[0])
	}
	var keep []int
	var fields []arrow.Field
	for i, f := range schema.Fields() {
		if !slices.Contains(keyIdx, i) {
			keep = append(keep, i)
			fields = append(fields, f)
		}
	}
	if len(keep) == 0 {
		return nil, errors.New("parquet: WritePartitioned needs a column besides the partition columns")
	}
	outSchema := arrow.NewSchema(fields, nil)
	fileOpts := opts
	fileOpts.PartitionOn = nil

	writers := map[string]*Writer{}
	var order []string
	closeAll := func() error {
		var first error
		for _, d := range order {
			if err := writers[d].Close(); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	for _, rec := range recs {
		if !rec.Schema().Equal(schema) {
			closeAll()
			return nil, fmt.Errorf("parquet: write %s: records have different schemas", dir)
		}
		// Group the rows by their partition directory.
		rows := map[string][]int{}
		var dirs []string
		for r := range int(rec.NumRows()) {
			var sb strings.Builder
			for _, k := range keyIdx {
				v, err := partitionValue(rec.Column(k), r)
				if err != nil {
					closeAll()
					return nil, fmt.Errorf("parquet: partition on %q: %w", schema.Field(k).Name, err)
				}
				sb.WriteString(escapePartition(schema.Field(k).Name))
				sb.WriteByte('=')
				sb.WriteString(v)
				sb.WriteByte('/')
			}
			d := sb.String()
			if _, ok := rows[d]; !ok {
				dirs = append(dirs, d)
			}
			rows[d] = append(rows[d], r)
		}
		for _, d := range dirs {
			w, ok := writers[d]
			if !ok {
				var err error
				w, err = NewWriter(ctx, fsys, path.Join(dir, d, name), outSchema, fileOpts)
				if err != nil {
					closeAll()
					return nil, err
				}
				writers[d] = w
				order = append(order, d)
			}
			sub, err := takeRows(rec, keep, outSchema, rows[d])
			if err != nil {
				closeAll()
				return nil, fmt.Errorf("parquet: write %s: %w", dir, err)
			}
			err = w.Write(sub)
			sub.Release()
			if err != nil {
				closeAll()
				return nil, err
			}
		}
	}
	if err := closeAll(); err != nil {
		return nil, err
	}
	var files []string
	for _, d := range order {
		files = append(files, writers[d].path)
	}
	slices.Sort(files)
	return files, nil
}

// partitionValue formats the value of row r of a as a directory name.
func partitionValue(a arrow.Array, r int) (string, error) {
	if a.IsNull(r) {
		return hiveNull, nil
	}
	var s string
	switch c := a.(type) {
	case *array.String:
		s = c.Value(r)
	case *array.LargeString:
		s = c.Value(r)
	case *array.Binary:
		s = string(c.Value(r))
	case *array.Boolean:
		s = strconv.FormatBool(c.Value(r))
	case *array.Int8:
		s = strconv.FormatInt(int64(c.Value(r)), 10)
	case *array.Int16:
		s = strconv.FormatInt(int64(c.Value(r)), 10)
	case *array.Int32:
		s = strconv.FormatInt(int64(c.Value(r)), 10)
	case *array.Int64:
		s = strconv.FormatInt(c.Value(r), 10)
	case *array.Uint8:
		s = strconv.FormatUint(uint64(c.Value(r)), 10)
	case *array.Uint16:
		s = strconv.FormatUint(uint64(c.Value(r)), 10)
	case *array.Uint32:
		s = strconv.FormatUint(uint64(c.Value(r)), 10)
	case *array.Uint64:
		s = strconv.FormatUint(c.Value(r), 10)
	case *array.Float32:
		s = strconv.FormatFloat(float64(c.Value(r)), 'g', -1, 32)
	case *array.Float64:
		s = strconv.FormatFloat(c.Value(r), 'g', -1, 64)
	case *array.Date32:
		s = c.Value(r).ToTime().Format(time.DateOnly)
	case *array.Dictionary:
		return partitionValue(c.Dictionary(), c.GetValueIndex(r))
	default:
		return "", fmt.Errorf("cannot partition on a column of type %s", a.DataType())
	}
	return escapePartition(s), nil
}

// takeRows returns the rows of the columns keep of rec.
func takeRows(rec arrow.RecordBatch, keep []int, schema *arrow.Schema, rows []int) (arrow.RecordBatch, error) {
	// Runs of consecutive rows are sliced and concatenated.
	cols := make([]arrow.Array, len(keep))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for ci, k := range keep {
		col := rec.Column(k)
		var pieces []arrow.Array
		for i := 0; i < len(rows); {
			j := i + 1
			for j < len(rows) && rows[j] == rows[j-1]+1 {
				j++
			}
			pieces = append(pieces, array.NewSlice(col, int64(rows[i]), int64(rows[j-1]+1)))
			i = j
		}
		c, err := array.Concatenate(pieces, memory.DefaultAllocator)
		for _, p := range pieces {
			p.Release()
		}
		if err != nil {
			return nil, err
		}
		cols[ci] = c
	}
	return array.NewRecordBatch(schema, cols, int64(len(rows))), nil
}

// group is a Parquet group node whose fields keep their order.
type group []pq.Field

type groupField struct {
	pq.Node
	name string
}

func (f *groupField) Name() string                           { return f.name }
func (f *groupField) Value(base reflect.Value) reflect.Value { return reflect.Value{} }

func (g group) ID() int                     { return 0 }
func (g group) String() string              { return "group" }
func (g group) Type() pq.Type               { return pq.Group{}.Type() }
func (g group) Optional() bool              { return false }
func (g group) Repeated() bool              { return false }
func (g group) Required() bool              { return true }
func (g group) Leaf() bool                  { return false }
func (g group) Fields() []pq.Field          { return g }
func (g group) Encoding() encoding.Encoding { return nil }
func (g group) Compression() compress.Codec { return nil }
func (g group) GoType() reflect.Type        { return reflect.TypeFor[struct{}]() }

// writeColumns maps an Arrow schema to Parquet columns.
func writeColumns(schema *arrow.Schema) ([]writeColumn, error) {
	var cols []writeColumn
	for _, f := range schema.Fields() {
		c, err := writeColumnOf(f)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", f.Name, err)
		}
		cols = append(cols, c)
	}
	return cols, nil
}

func writeColumnOf(f arrow.Field) (writeColumn, error) {
	c := writeColumn{name: f.Name, optional: f.Nullable}
	var node pq.Node
	t := f.Type
	if dt, ok := t.(*arrow.DictionaryType); ok {
		switch dt.ValueType.ID() {
		case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		default:
			return c, fmt.Errorf("unsupported type %s", t)
		}
		if dt.ValueType.ID() == arrow.STRING || dt.ValueType.ID() == arrow.LARGE_STRING {
			node = pq.Encoded(pq.String(), &pq.RLEDictionary)
		} else {
			node = pq.Encoded(pq.Leaf(pq.ByteArrayType), &pq.RLEDictionary)
		}
		c.convert = convertDictionary
	} else {
		var err error
		node, c.convert, err = leafOf(t)
		if err != nil {
			return c, err
		}
		// Columns are dictionary-encoded until the dictionary of a row
		// group outgrows dictionaryBytes: columns with few distinct values
		// get small and quick to read. Not booleans, nor floats: the
		// Parquet library gets the statistics of dictionary-encoded float
		// pages holding NaN wrong.
		switch t.ID() {
		case arrow.BOOL, arrow.FLOAT32, arrow.FLOAT64:
		default:
			if node.Encoding() == nil {
				node = pq.Encoded(node, &pq.RLEDictionary)
			}
		}
	}
	if f.Nullable {
		node = pq.Optional(node)
	} else {
		node = pq.Required(node)
		c.convert = required(c.convert)
	}
	c.node = node
	return c, nil
}

type convertFn = func(vals []pq.Value, a arrow.Array, i, j, col int) ([]pq.Value, error)

// values appends the values of rows [i, j) of a, made by mk, with levels.
func values[A interface {
	arrow.Array
}](vals []pq.Value, arr arrow.Array, i, j, col int, mk func(a A, r int) pq.Value) ([]pq.Value, error) {
	a, ok := arr.(A)
	if !ok {
		return vals, fmt.Errorf("array of type %T", arr)
	}
	nullable := arr.NullN() > 0
	for r := i; r < j; r++ {
		if nullable && arr.IsNull(r) {
			vals = append(vals, pq.Value{}.Level(0, 0, col))
			continue
		}
		vals = append(vals, mk(a, r).Level(0, 1, col))
	}
	return vals, nil
}

// required sets the definition level of the values of a required column
// to 0, and refuses nulls.
func required(fn convertFn) convertFn {
	return func(vals []pq.Value, a arrow.Array, i, j, col int) ([]pq.Value, error) {
		if a.NullN() > 0 {
			return vals, fmt.Errorf("has nulls but is not nullable")
		}
		start := len(vals)
		vals, err := fn(vals, a, i, j, col)
		for k := start; k < len(vals); k++ {
			vals[k] = vals[k].Level(0, 0, col)
		}
		return vals, err
	}
}

func leafOf(t arrow.DataType) (pq.Node, convertFn, error) {
	switch t := t.(type) {
	case *arrow.BooleanType:
		return pq.Leaf(pq.BooleanType), func(v []pq.Value, a arrow.Array, i, j, c int) ([]pq.Value, error) {
			return values(v, a, i, j, c, func(a *array.Boolean, r int) pq.Value { return pq.BooleanValue(a.Value(r)) })
		}, nil
	case *arrow.Int8Type:
		return pq.Int(8), func(v []pq.Value, a arrow.Array, i, j, c int) ([]pq.Value, error) {
			return values(v, a, i, j, c, func(a *array.Int8, r int) pq.Value { return pq.Int32Value(int32(a.Value(r))) })
		}, nil
	case *arrow.Int16Type:
		return pq.Int(16), func(v []pq.Value, a arrow.Array, i, j, c int) ([]pq.Value, error) {
			return values(v, a, i, j, c, func(a *array.Int16, r int) pq.Value { return pq.Int32Value(int32(a.Value(r))) })
		}, nil
	case *arrow.Int32Type:
		return pq.Int(32), func(v []pq.Value, a arrow.Array, i, j, c int) ([]pq.Value, error) {
			return values(v, a, i, j, c, func(a *array.Int32, r int) pq.Value { return pq.Int32Value(a.Value(r)) })
		}, nil
	case *arrow.Int64Type:
		return pq.Int(64), func(v []pq.Value, a arrow.Array, i, j, c int) ([]pq.Value, error) {
			return values(v, a, i, j, c, func(a *array.Int64, r int) pq.Value { return pq.Int64Value(a.Value(r)) })
		}, nil
	case *arrow.Uint8Type:
		return pq.Uint(8), func(v []pq.Value, a arrow.Array, i, j, c int) ([]pq.Value, error) {
			return values(v, a, i, j, c, func(a *array.Uint8, r int) pq.Value { return pq.Int32Value(int32(a.Value(r))) })
		}, nil
	case *arrow.Uint16Type:
		return pq.Uint(16), func(v []pq.Value, a arrow.Array, i, j, c int) ([]pq.Value, error) {
			return values(v, a, i, j, c, func(a *array.Uint16, r int) pq.Value { return pq.Int32Value(int32(a.Value(r))) })
		}, nil
	case *arrow.Uint32Type:
		return pq.Uint(32), func(v []pq.Value, a arrow.Array, i, j, c int) ([]pq.Value, error) {
			return values(v, a, i, j, c, func(a *array.Uint32, r int) pq.Value { return pq.Int32Value(int32(a.Value(r))) })
		}, nil
	case *arrow.Uint64Type:
		return pq.Uint(64), func(v []pq.Value, a arrow.Array, i, j, c int) ([]pq.Value, error) {
			return values(v, a, i, j, c, func(a *array.Uint64, r int) pq.Value { return pq.Int64Value(int64(a.Value(r))) })
		}, nil
	case *arrow.Float32Type:
		return pq.Leaf(pq.FloatType), func(v []pq.Value, a arrow.Array, i, j, c int) ([]pq.Value, error) {
			return values(v, a, i, j, c, func(a *array.Float32, r int) pq.Value { return pq.FloatValue(a.Value(r)) })
		}, nil
	case *arrow.Float64Type:
		return pq.Leaf(pq.DoubleType), func(v []pq.Value, a arrow.Array, i, j, c int) ([]pq.Value, error) {
			return values(v, a, i, j, c, func(a *array.Float64, r int) pq.Value { return pq.DoubleValue(a.Value(r)) })
		}, nil
	case *arrow.StringType:
		return pq.Encoded(pq.String(), &pq.RLEDictionary), func(v []pq.Value, a arrow.Array, i, j, c int) ([]pq.Value, error) {
			return values(v, a, i, j, c, func(a *array.String, r int) pq.Value { return pq.ByteArrayValue(strBytes(a.Value(r))) })
		}, nil
	case *arrow.LargeStringType:
		return pq.Encoded(pq.String(), &pq.RLEDictionary), func(v []pq.Value, a arrow.Array, i, j, c int) ([]pq.Value, error) {
			return values(v, a, i, j, c, func(a *array.LargeString, r int) pq.Value { return pq.ByteArrayValue(strBytes(a.Value(r))) })
		}, nil
	case *arrow.BinaryType:
		return pq.Leaf(pq.ByteArrayType), func(v []pq.Value, a arrow.Array, i, j, c int) ([]pq.Value, error) {
			return values(v, a, i, j, c, func(a *array.Binary, r int) pq.Value { return pq.ByteArrayValue(a.Value(r)) })
		}, nil
	case *arrow.LargeBinaryType:
		return pq.Leaf(pq.ByteArrayType), func(v []pq.Value, a arrow.Array, i, j, c int) ([]pq.Value, error) {
			return values(v, a, i, j, c, func(a *array.LargeBinary, r int) pq.Value { return pq.ByteArrayValue(a.Value(r)) })
		}, nil
	case *arrow.FixedSizeBinaryType:
		return pq.Leaf(pq.FixedLenByteArrayType(t.ByteWidth)), func(v []pq.Value, a arrow.Array, i, j, c int) ([]pq.Value, error) {
			return values(v, a, i, j, c, func(a *array.FixedSizeBinary, r int) pq.Value { return pq.FixedLenByteArrayValue(a.Value(r)) })
		}, nil
	case *arrow.Date32Type:
		return pq.Date(), func(v []pq.Value, a arrow.Array, i, j, c int) ([]pq.Value, error) {
			return values(v, a, i, j, c, func(a *array.Date32, r int) pq.Value { return pq.Int32Value(int32(a.Value(r))) })
		}, nil
	case *arrow.Date64Type:
		return pq.Date(), func(v []pq.Value, a arrow.Array, i, j, c int) ([]pq.Value, error) {
			return values(v, a, i, j, c, func(a *array.Date64, r int) pq.Value {
				ms := int64(a.Value(r))
				days := ms / 86400000
				if ms%86400000 < 0 {
					days--
				}
				return pq.Int32Value(int32(days))
			})
		}, nil
	case *arrow.TimestampType:
		unit, mult := pq.Nanosecond, int64(1)
		switch t.Unit {
		case arrow.Second:
			unit, mult = pq.Millisecond, 1000
		case arrow.Millisecond:
			unit = pq.Millisecond
		case arrow.Microsecond:
			unit = pq.Microsecond
		}
		return pq.TimestampAdjusted(unit, t.TimeZone != ""), func(v []pq.Value, a arrow.Array, i, j, c int) ([]pq.Value, error) {
			return values(v, a, i, j, c, func(a *array.Timestamp, r int) pq.Value { return pq.Int64Value(int64(a.Value(r)) * mult) })
		}, nil
	case *arrow.Time32Type:
		mult := int32(1)
		if t.Unit == arrow.Second {
			mult = 1000
		}
		return pq.TimeAdjusted(pq.Millisecond, false), func(v []pq.Value, a arrow.Array, i, j, c int) ([]pq.Value, error) {
			return values(v, a, i, j, c, func(a *array.Time32, r int) pq.Value { return pq.Int32Value(int32(a.Value(r)) * mult) })
		}, nil
	case *arrow.Time64Type:
		unit := pq.Nanosecond
		if t.Unit == arrow.Microsecond {
			unit = pq.Microsecond
		}
		return pq.TimeAdjusted(unit, false), func(v []pq.Value, a arrow.Array, i, j, c int) ([]pq.Value, error) {
			return values(v, a, i, j, c, func(a *array.Time64, r int) pq.Value { return pq.Int64Value(int64(a.Value(r))) })
		}, nil
	case *arrow.Decimal128Type:
		p, s := int(t.Precision), int(t.Scale)
		switch {
		case p <= 9:
			return pq.Decimal(s, p, pq.Int32Type), func(v []pq.Value, a arrow.Array, i, j, c int) ([]pq.Value, error) {
				return values(v, a, i, j, c, func(a *array.Decimal128, r int) pq.Value { return pq.Int32Value(int32(a.Value(r).LowBits())) })
			}, nil
		case p <= 18:
			return pq.Decimal(s, p, pq.Int64Type), func(v []pq.Value, a arrow.Array, i, j, c int) ([]pq.Value, error) {
				return values(v, a, i, j, c, func(a *array.Decimal128, r int) pq.Value { return pq.Int64Value(int64(a.Value(r).LowBits())) })
			}, nil
		}
		return pq.Decimal(s, p, pq.FixedLenByteArrayType(16)), func(v []pq.Value, a arrow.Array, i, j, c int) ([]pq.Value, error) {
			return values(v, a, i, j, c, func(a *array.Decimal128, r int) pq.Value { return pq.FixedLenByteArrayValue(decimalBytes(a.Value(r))) })
		}, nil
	}
	return nil, nil, fmt.Errorf("unsupported type %s", t)
}

// strBytes views a string held by an Arrow array as bytes, without a copy.
func strBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

func decimalBytes(n decimal128.Num) []byte {
	b := make([]byte, 16)
	binary.BigEndian.PutUint64(b, uint64(n.HighBits()))
	binary.BigEndian.PutUint64(b[8:], n.LowBits())
	return b
}

func convertDictionary(vals []pq.Value, arr arrow.Array, i, j, col int) ([]pq.Value, error) {
	a, ok := arr.(*array.Dictionary)
	if !ok {
		return vals, fmt.Errorf("array of type %T", arr)
	}
	var value func(k int) []byte
	switch d := a.Dictionary().(type) {
	case *array.String:
		value = func(k int) []byte { return strBytes(d.Value(k)) }
	case *array.LargeString:
		value = func(k int) []byte { return strBytes(d.Value(k)) }
	case *array.Binary:
		value = d.Value
	case *array.LargeBinary:
		value = d.Value
	default:
		return vals, fmt.Errorf("dictionary of type %s", d.DataType())
	}
	for r := i; r < j; r++ {
		if a.IsNull(r) {
			vals = append(vals, pq.Value{}.Level(0, 0, col))
			continue
		}
		vals = append(vals, pq.ByteArrayValue(value(a.GetValueIndex(r))).Level(0, 1, col))
	}
	return vals, nil
}
