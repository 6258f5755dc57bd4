package array

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	arrowarray "github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/graph"
)

// Frame is a partitioned table whose partitions are Arrow record batches
// computed by a task graph, such as a dataframe.DataFrame.
type Frame interface {
	// Graph returns the graph that computes the partitions and their keys,
	// in order.
	Graph() (*graph.Graph, []graph.Key, error)
	// Schema returns the columns of every partition.
	Schema() *arrow.Schema
}

type frameParams struct {
	Mode    string   `json:"mode"` // "to-array" or "to-record"
	Columns []string `json:"columns,omitempty"`
	DType   DType    `json:"dtype,omitempty"`
	TwoD    bool     `json:"twod,omitempty"`
	Schema  []string `json:"schema,omitempty"` // to-record: column names
}

type fromFrameOp struct {
	g       *graph.Graph
	keys    []graph.Key
	columns []string
	twoD    bool
}

func (o *fromFrameOp) prefix() string { return "from-frame" }

// FromFrame returns the columns of a frame as an array: one column gives a
// 1-D array, several (or none, meaning all) a 2-D array with one column of
// the array per column of the frame. Each partition of the frame is one
// chunk along axis 0, whose length is not known until it is computed
// (ComputeChunkSizes finds it). The columns must be numbers or bools;
// their types are promoted to one dtype (float64 if any is a float64 or
// the types differ). A null is NaN in a float array and an error
// otherwise.
func FromFrame(f Frame, columns ...string) Array {
	if f == nil {
		return errorf("FromFrame: nil frame")
	}
	schema := f.Schema()
	if schema == nil {
		return errorf("FromFrame: the frame has no schema")
	}
	if len(columns) == 0 {
		for _, fl := range schema.Fields() {
			columns = append(columns, fl.Name)
		}
		if len(columns) == 0 {
			return errorf("FromFrame: the frame has no columns")
		}
	}
	var dt DType
	for _, c := range columns {
		idx := schema.FieldIndices(c)
		if len(idx) == 0 {
			var names []string
			for _, fl := range schema.Fields() {
				names = append(names, fl.Name)
			}
			return errorf("FromFrame: column %q not found; columns are %q", c, names)
		}
		t, err := arrowDType(schema.Field(idx[0]).Type)
		if err != nil {
			return errorf("FromFrame: column %q: %v", c, err)
		}
		if dt == 0 {
			dt = t
		} else if dt != t {
			dt = promote(dt, t)
			if dt == Float32 || (dt != Float64 && dt != t) {
				dt = Float64
			}
		}
	}
	g, keys, err := f.Graph()
	if err != nil {
		return errArray(fmt.Errorf("array: FromFrame: %w", err))
	}
	chunks := [][]int{slices.Repeat([]int{unknown}, len(keys))}
	twoD := len(columns) > 1
	if len(columns) > 1 {
		chunks = append(chunks, []int{len(columns)})
	}
	if len(keys) == 0 {
		chunks[0] = []int{0}
	}
	ks := make([]string, len(keys))
	for i, k := range keys {
		ks[i] = string(k)
	}
	op := &fromFrameOp{g: g, keys: keys, columns: slices.Clone(columns), twoD: twoD}
	return newArray(op, dt, chunks, nil, []any{"frame", ks, columns})
}

func (o *fromFrameOp) lower(l *lowerer, n *node) ([]graph.Key, error) {
	if err := l.g.Merge(o.g); err != nil {
		return nil, fmt.Errorf("array: FromFrame: %w", err)
	}
	if len(o.keys) == 0 {
		// No partitions: one empty chunk.
		k := n.key(0)
		if o.twoD {
			k = n.key(0, 0)
		}
		shape := []int{0}
		if o.twoD {
			shape = append(shape, len(o.columns))
		}
		return []graph.Key{k}, l.add(k, opCreate, createParams{Kind: "full", DType: n.dtype, Shape: shape, Offset: make([]int, len(shape))}, nil)
	}
	keys := make([]graph.Key, len(o.keys))
	for i, pk := range o.keys {
		if o.twoD {
			keys[i] = n.key(i, 0)
		} else {
			keys[i] = n.key(i)
		}
		p := frameParams{Mode: "to-array", Columns: o.columns, DType: n.dtype, TwoD: o.twoD}
		if err := l.add(keys[i], opFrame, p, []graph.Key{pk}); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// arrowDType returns the dtype that an Arrow column of type t becomes.
func arrowDType(t arrow.DataType) (DType, error) {
	switch t.ID() {
	case arrow.FLOAT64:
		return Float64, nil
	case arrow.FLOAT32:
		return Float32, nil
	case arrow.INT64, arrow.INT32, arrow.INT16, arrow.INT8, arrow.UINT32, arrow.UINT16, arrow.UINT8:
		return Int64, nil
	case arrow.BOOL:
		return Bool, nil
	}
	return 0, fmt.Errorf("type %s is not a number or a bool", t)
}

// FrameParts returns a graph that computes the array as record batches,
// one per chunk along axis 0, with the columns named names (one per
// column of a 2-D array, or one for a 1-D array), their keys in order and
// their schema, for a DataFrame to be built on, lazily:
// dataframe.FromGraph(g, keys, schema).
func (a Array) FrameParts(names []string) (*graph.Graph, []graph.Key, *arrow.Schema, error) {
	if err := a.Err(); err != nil {
		return nil, nil, nil, err
	}
	nd := len(a.n.chunks)
	if nd != 1 && nd != 2 {
		return nil, nil, nil, fmt.Errorf("array: FrameParts: a frame holds a 1-D or 2-D array, not shape %s", fmtShape(a.Shape()))
	}
	ncol := 1
	if nd == 2 {
		ncol = a.Shape()[1]
		if ncol == unknown {
			return nil, nil, nil, fmt.Errorf("array: FrameParts: axis 1 has chunks of unknown size; call ComputeChunkSizes first")
		}
	}
	if len(names) != ncol {
		return nil, nil, nil, fmt.Errorf("array: FrameParts: %d names for %d columns (shape %s)", len(names), ncol, fmtShape(a.Shape()))
	}
	seen := map[string]bool{}
	for _, nm := range names {
		if seen[nm] {
			return nil, nil, nil, fmt.Errorf("array: FrameParts: column name %q repeats", nm)
		}
		seen[nm] = true
	}
	g, keys, err := a.Graph()
	if err != nil {
		return nil, nil, nil, err
	}
	schema := frameSchema(a.n.dtype, names)
	// Each record batch takes the chunks of one row of blocks, whose
	// columns it puts side by side.
	perRow := 1
	if nd == 2 {
		perRow = len(a.n.chunks[1])
	}
	b, err := json.Marshal(frameParams{Mode: "to-record", Schema: names})
	if err != nil {
		return nil, nil, nil, err
	}
	out := make([]graph.Key, len(keys)/perRow)
	for i := range out {
		out[i] = graph.NewKey("to-frame", a.n.token, i)
		deps := slices.Clone(keys[i*perRow : (i+1)*perRow])
		if err := g.Add(&graph.Task{Key: out[i], Op: opFrame, Params: b, Deps: deps}); err != nil {
			return nil, nil, nil, err
		}
	}
	return g, out, schema, nil
}

// ToRecords computes the array on exec as Arrow record batches, one per
// chunk along axis 0, with the columns named names (one per column of a
// 2-D array, or one for a 1-D array), as FrameParts describes them.
// dataframe.FromRecords(recs...) makes them a DataFrame. The caller owns
// the records and releases them.
func (a Array) ToRecords(ctx context.Context, exec graph.Executor, names ...string) ([]arrow.RecordBatch, error) {
	if exec == nil {
		return nil, fmt.Errorf("array: ToRecords needs an executor, such as local.New()")
	}
	g, keys, schema, err := a.FrameParts(names)
	if err != nil {
		return nil, err
	}
	vals, err := exec.Compute(ctx, g, keys...)
	if err != nil {
		return nil, err
	}
	recs := make([]arrow.RecordBatch, 0, len(vals))
	release := func() {
		for _, v := range vals {
			if r, ok := v.(arrow.RecordBatch); ok {
				r.Release()
			}
		}
	}
	for i, v := range vals {
		rec, ok := v.(arrow.RecordBatch)
		if !ok {
			release()
			return nil, fmt.Errorf("array: ToRecords: part %d is a %T, not an Arrow record batch", i, v)
		}
		if !rec.Schema().Equal(schema) {
			release()
			return nil, fmt.Errorf("array: ToRecords: part %d has schema %v, want %v", i, rec.Schema(), schema)
		}
		recs = append(recs, rec)
	}
	return recs, nil
}

func arrowType(t DType) arrow.DataType {
	switch t {
	case Float32:
		return arrow.PrimitiveTypes.Float32
	case Int64:
		return arrow.PrimitiveTypes.Int64
	case Bool:
		return arrow.FixedWidthTypes.Boolean
	}
	return arrow.PrimitiveTypes.Float64
}

func frameSchema(t DType, names []string) *arrow.Schema {
	fields := make([]arrow.Field, len(names))
	for i, nm := range names {
		fields[i] = arrow.Field{Name: nm, Type: arrowType(t)}
	}
	return arrow.NewSchema(fields, nil)
}

func runFrame(_ context.Context, in graph.OpInput) (any, error) {
	var p frameParams
	if err := json.Unmarshal(in.Params, &p); err != nil {
		return nil, fmt.Errorf("decode frame params: %w", err)
	}
	if len(in.Inputs) == 0 || (p.Mode != "to-record" && len(in.Inputs) != 1) {
		return nil, fmt.Errorf("frame conversion %q takes 1 input, got %d", p.Mode, len(in.Inputs))
	}
	switch p.Mode {
	case "to-array":
		rec, ok := in.Inputs[0].(arrow.RecordBatch)
		if !ok {
			return nil, fmt.Errorf("partition is a %T, not an arrow.RecordBatch", in.Inputs[0])
		}
		return recordToDense(rec, p)
	case "to-record":
		blocks, err := denseInputs(in)
		if err != nil {
			return nil, err
		}
		return denseToRecord(blocks, p.Schema)
	}
	return nil, fmt.Errorf("unknown frame mode %q", p.Mode)
}

func recordToDense(rec arrow.RecordBatch, p frameParams) (*Dense, error) {
	if !p.DType.valid() {
		return nil, fmt.Errorf("frame: invalid dtype %d", p.DType)
	}
	rows := int(rec.NumRows())
	ncol := len(p.Columns)
	shape := []int{rows}
	if p.TwoD {
		shape = append(shape, ncol)
	}
	out := newDense(p.DType, shape)
	for j, name := range p.Columns {
		idx := rec.Schema().FieldIndices(name)
		if len(idx) == 0 {
			return nil, fmt.Errorf("column %q is not in the partition (schema %s)", name, rec.Schema())
		}
		col := rec.Column(idx[0])
		vals := make([]float64, rows)
		ints := make([]int64, rows)
		isInt := false
		switch c := col.(type) {
		case *arrowarray.Float64:
			copy(vals, c.Float64Values())
		case *arrowarray.Float32:
			for i, v := range c.Float32Values() {
				vals[i] = float64(v)
			}
		case *arrowarray.Int64:
			isInt = true
			copy(ints, c.Int64Values())
		case *arrowarray.Int32:
			isInt = true
			for i, v := range c.Int32Values() {
				ints[i] = int64(v)
			}
		case *arrowarray.Int16:
			isInt = true
			for i, v := range c.Int16Values() {
				ints[i] = int64(v)
			}
		case *arrowarray.Int8:
			isInt = true
			for i, v := range c.Int8Values() {
				ints[i] = int64(v)
			}
		case *arrowarray.Uint32:
			isInt = true
			for i, v := range c.Uint32Values() {
				ints[i] = int64(v)
			}
		case *arrowarray.Uint16:
			isInt = true
			for i, v := range c.Uint16Values() {
				ints[i] = int64(v)
			}
		case *arrowarray.Uint8:
			isInt = true
			for i, v := range c.Uint8Values() {
				ints[i] = int64(v)
			}
		case *arrowarray.Boolean:
			isInt = true
			for i := range rows {
				if c.Value(i) {
					ints[i] = 1
				}
			}
		default:
			return nil, fmt.Errorf("column %q has type %s, not a number or a bool", name, col.DataType())
		}
		if isInt {
			for i, v := range ints {
				vals[i] = float64(v)
			}
		} else {
			for i, v := range vals {
				ints[i] = f2i(v)
			}
		}
		for i := range rows {
			if !col.IsNull(i) {
				continue
			}
			if !p.DType.isFloat() {
				return nil, fmt.Errorf("column %q is null at row %d of the partition; an array of %s has no NaN (fill nulls first, or use float columns)",
					name, i, p.DType)
			}
			vals[i] = math.NaN()
		}
		// Place the column.
		stride, off := 1, 0
		if p.TwoD {
			stride, off = ncol, j
		}
		switch d := out.data.(type) {
		case []float64:
			for i := range rows {
				d[off+i*stride] = vals[i]
			}
		case []float32:
			for i := range rows {
				d[off+i*stride] = float32(vals[i])
			}
		case []int64:
			for i := range rows {
				d[off+i*stride] = ints[i]
			}
		case []bool:
			for i := range rows {
				d[off+i*stride] = vals[i] != 0
			}
		}
	}
	return out, nil
}

// denseToRecord makes one record batch of the chunks of one row of
// blocks, left to right: their columns side by side.
func denseToRecord(blocks []*Dense, names []string) (arrow.RecordBatch, error) {
	if len(blocks) == 0 {
		return nil, fmt.Errorf("no chunks to make a record batch of")
	}
	rows, ncol := -1, 0
	dt := blocks[0].dtype
	for k, d := range blocks {
		r, nc := 0, 1
		switch len(d.shape) {
		case 1:
			r = d.shape[0]
			if len(blocks) > 1 {
				return nil, fmt.Errorf("chunk %d of shape %v: several chunks of a row must be 2-D", k, d.shape)
			}
		case 2:
			r, nc = d.shape[0], d.shape[1]
		default:
			return nil, fmt.Errorf("a chunk of shape %v is not a table", d.shape)
		}
		if rows >= 0 && r != rows {
			return nil, fmt.Errorf("chunk %d of the row has %d rows, chunk 0 has %d", k, r, rows)
		}
		if d.dtype != dt {
			return nil, fmt.Errorf("chunk %d of the row has dtype %s, chunk 0 has %s", k, d.dtype, dt)
		}
		rows = r
		ncol += nc
	}
	if ncol != len(names) {
		return nil, fmt.Errorf("chunks of shape %v have %d columns in all, want %d", blocks[0].shape, ncol, len(names))
	}
	mem := memory.DefaultAllocator
	cols := make([]arrow.Array, 0, ncol)
	defer func() {
		for _, col := range cols {
			col.Release()
		}
	}()
	for _, d := range blocks {
		c := d.contig()
		w := 1
		if len(c.shape) == 2 {
			w = c.shape[1]
		}
		for j := range w {
			switch x := c.data.(type) {
			case []float64:
				b := arrowarray.NewFloat64Builder(mem)
				for i := range rows {
					b.Append(x[i*w+j])
				}
				cols = append(cols, b.NewArray())
				b.Release()
			case []float32:
				b := arrowarray.NewFloat32Builder(mem)
				for i := range rows {
					b.Append(x[i*w+j])
				}
				cols = append(cols, b.NewArray())
				b.Release()
			case []int64:
				b := arrowarray.NewInt64Builder(mem)
				for i := range rows {
					b.Append(x[i*w+j])
				}
				cols = append(cols, b.NewArray())
				b.Release()
			case []bool:
				b := arrowarray.NewBooleanBuilder(mem)
				for i := range rows {
					b.Append(x[i*w+j])
				}
				cols = append(cols, b.NewArray())
				b.Release()
			default:
				return nil, fmt.Errorf("a chunk of dtype %s has no data", c.dtype)
			}
		}
	}
	return arrowarray.NewRecordBatch(frameSchema(dt, names), cols, int64(rows)), nil
}
