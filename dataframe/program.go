package dataframe

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/expr"
	"github.com/shoal-data/shoal/dataframe/internal/agg"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/internal/mempool"
)

// A program is what one partition task does: take rows from a source,
// run elementwise steps over them, and hand the result to a sink. Reading a
// CSV block, filtering it, computing columns and aggregating it is one
// task, and no intermediate result leaves it. Programs are the params of
// the "dataframe.partition" op, encoded as JSON.
type program struct {
	Source sourceSpec `json:"source"`
	Steps  []stepSpec `json:"steps,omitempty"`
	Sink   sinkSpec   `json:"sink,omitzero"`
	// Aux is the number of the task's last inputs that are not rows but
	// help the sink (the divisions of a range shuffle).
	Aux int `json:"aux,omitempty"`
}

type sourceSpec struct {
	// Kind is "input" (the task's inputs, concatenated), "held" (a record
	// held in this process), "read" (a part of
	// files) or "record" (a record encoded in the params).
	Kind    string   `json:"kind"`
	Format  string   `json:"format,omitempty"`
	Part    []byte   `json:"part,omitempty"`    // the format's description of the part
	Columns []string `json:"columns,omitempty"` // projection pushed into the read
	Filter  []byte   `json:"filter,omitempty"`  // predicate evaluated while reading
	Record  []byte   `json:"record,omitempty"`
	Held    uint64   `json:"held,omitempty"`   // a record held in this process (see held.go)
	Schema  []byte   `json:"schema,omitempty"` // of the input, when there may be no input rows
}

type stepSpec struct {
	Kind     string   `json:"kind"` // "filter", "project", "map", "head"
	Exprs    [][]byte `json:"exprs,omitempty"`
	N        int64    `json:"n,omitempty"`
	Fn       string   `json:"fn,omitempty"`
	FnParams []byte   `json:"fn_params,omitempty"`
	Schema   []byte   `json:"schema,omitempty"` // of a map step's result
}

type sinkSpec struct {
	// Kind is "" (the record itself), "partial" (a partial aggregation),
	// "split" (a partial aggregation split by hash of the keys into N),
	// "shuffle" (the input of a shuffle), "sample" (about N evenly spaced
	// rows of Keys) or "write" (a file).
	Kind  string      `json:"kind,omitempty"`
	Keys  []string    `json:"keys,omitempty"`
	Specs []agg.Spec  `json:"specs,omitempty"`
	Opts  agg.Options `json:"opts,omitzero"`
	N     int         `json:"n,omitempty"`
	Write *writeSpec  `json:"write,omitempty"`
	// Shuffle says where the rows go, for "shuffle".
	Shuffle *shuffleSink `json:"shuffle,omitempty"`
	// Fn names a function of sinkFuncs and Params are its params, for
	// "fn".
	Fn     string          `json:"fn,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	// keyToken, when set, is the token of the tasks' keys instead of one
	// made from the input and the sink: a shuffle's splits carry its ID,
	// so that whoever watches the tasks knows which shuffle they feed.
	keyToken string
}

// sinkFunc consumes a partition's record (and releases it).
type sinkFunc func(ctx context.Context, rec arrow.RecordBatch, params []byte, mem memory.Allocator) (any, error)

// sinkFuncs are the sinks of kind "fn", by name.
var sinkFuncs = map[string]sinkFunc{}

// allocator recycles the buffers of intermediate results: a block read,
// filtered and aggregated releases its buffers for the next block.
var allocator memory.Allocator = mempool.Default

// OpPartition is the op that runs a partition program.
const OpPartition = "dataframe.partition"

// programMagic starts the params of a program that carries a record: the
// record's bytes follow the JSON, so that megabytes of data are neither
// base64-encoded nor parsed as JSON.
const programMagic = "\x00shoal-program\x00"

// marshalProgram encodes a program as the params of OpPartition.
func marshalProgram(p program) ([]byte, error) {
	rec := p.Source.Record
	if rec == nil {
		return json.Marshal(p)
	}
	p.Source.Record = nil
	js, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(programMagic)+binary.MaxVarintLen64+len(js)+len(rec))
	b = append(b, programMagic...)
	b = binary.AppendUvarint(b, uint64(len(js)))
	b = append(b, js...)
	return append(b, rec...), nil
}

// unmarshalProgram decodes what marshalProgram encoded; the record's
// bytes are not copied.
func unmarshalProgram(b []byte) (program, error) {
	var p program
	if !bytes.HasPrefix(b, []byte(programMagic)) {
		return p, json.Unmarshal(b, &p)
	}
	b = b[len(programMagic):]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return p, errors.New("truncated program")
	}
	if err := json.Unmarshal(b[k:k+int(n)], &p); err != nil {
		return p, err
	}
	p.Source.Record = b[k+int(n):]
	return p, nil
}

func runPartition(ctx context.Context, in graph.OpInput) (any, error) {
	p, err := unmarshalProgram(in.Params)
	if err != nil {
		return nil, fmt.Errorf("decode partition program: %w", err)
	}
	mem := allocator
	var aux []any
	if p.Aux > 0 {
		if p.Aux > len(in.Inputs) {
			return nil, fmt.Errorf("partition program wants %d auxiliary inputs, has %d inputs", p.Aux, len(in.Inputs))
		}
		aux = in.Inputs[len(in.Inputs)-p.Aux:]
		in.Inputs = in.Inputs[:len(in.Inputs)-p.Aux]
	}
	rec, err := p.Source.open(ctx, in, mem)
	if err != nil {
		return nil, err
	}
	for i, st := range p.Steps {
		next, err := st.run(ctx, in, rec, mem)
		rec.Release()
		if err != nil {
			return nil, fmt.Errorf("step %d (%s): %w", i+1, st.Kind, err)
		}
		rec = next
	}
	return p.Sink.consume(ctx, in, rec, mem, aux)
}

func (s *sourceSpec) open(ctx context.Context, in graph.OpInput, mem memory.Allocator) (arrow.RecordBatch, error) {
	switch s.Kind {
	case "input":
		var schema *arrow.Schema
		if s.Schema != nil {
			var err error
			if schema, err = decodeSchema(s.Schema); err != nil {
				return nil, err
			}
		}
		rec, err := concatInputs(in.Inputs, schema, mem)
		if err != nil {
			return nil, err
		}
		return s.narrow(ctx, rec, mem)
	case "held":
		rec, err := s.openHeld(ctx)
		if err != nil {
			return nil, err
		}
		return s.narrow(ctx, rec, mem)
	case "record":
		v, err := in.Env.Registry.UnmarshalValue(s.Record)
		if err != nil {
			return nil, err
		}
		rec, ok := v.(arrow.RecordBatch)
		if !ok {
			return nil, fmt.Errorf("record source holds a %T", v)
		}
		return s.narrow(ctx, rec, mem)
	case "read":
		rf, ok := readFuncs[s.Format]
		if !ok {
			return nil, fmt.Errorf("no reader for format %q", s.Format)
		}
		var filter *expr.Expr
		if s.Filter != nil {
			e, err := expr.Unmarshal(s.Filter)
			if err != nil {
				return nil, err
			}
			filter = &e
		}
		return rf(ctx, in.Env, s.Part, s.Columns, filter, mem)
	}
	return nil, fmt.Errorf("unknown source kind %q", s.Kind)
}

// narrow applies the filter and the projection pushed into a source that
// is not a file reader (which applies them itself while reading).
func (s *sourceSpec) narrow(ctx context.Context, rec arrow.RecordBatch, mem memory.Allocator) (arrow.RecordBatch, error) {
	if s.Filter != nil {
		pred, err := expr.Unmarshal(s.Filter)
		if err != nil {
			rec.Release()
			return nil, err
		}
		f, err := expr.Filter(ctx, rec, pred, mem)
		rec.Release()
		if err != nil {
			return nil, err
		}
		rec = f
	}
	if s.Columns == nil {
		return rec, nil
	}
	defer rec.Release()
	cols := make([]arrow.Array, len(s.Columns))
	fields := make([]arrow.Field, len(s.Columns))
	for i, c := range s.Columns {
		j, err := fieldIndex(rec.Schema(), c)
		if err != nil {
			return nil, err
		}
		cols[i], fields[i] = rec.Column(j), rec.Schema().Field(j)
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows()), nil
}

func (st *stepSpec) run(ctx context.Context, in graph.OpInput, rec arrow.RecordBatch, mem memory.Allocator) (arrow.RecordBatch, error) {
	switch st.Kind {
	case "filter":
		pred, err := expr.Unmarshal(st.Exprs[0])
		if err != nil {
			return nil, err
		}
		return expr.Filter(ctx, rec, pred, mem)
	case "project":
		ev := expr.NewEvaluator(rec, mem)
		defer ev.Release()
		cols := make([]arrow.Array, len(st.Exprs))
		fields := make([]arrow.Field, len(st.Exprs))
		release := func() {
			for _, c := range cols {
				if c != nil {
					c.Release()
				}
			}
		}
		for i, b := range st.Exprs {
			e, err := expr.Unmarshal(b)
			if err != nil {
				release()
				return nil, err
			}
			a, err := ev.Eval(ctx, e)
			if err != nil {
				release()
				return nil, fmt.Errorf("column %q: %w", e.Name(), err)
			}
			cols[i] = a
			fields[i] = arrow.Field{Name: e.Name(), Type: a.DataType(), Nullable: true}
		}
		out := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
		release()
		return out, nil
	case "head":
		if rec.NumRows() <= st.N {
			rec.Retain()
			return rec, nil
		}
		return rec.NewSlice(0, st.N), nil
	case "map":
		op, err := in.Env.Registry.Op(st.Fn)
		if err != nil {
			return nil, err
		}
		v, err := graph.RunOp(ctx, op, &graph.Task{Key: in.Key, Op: st.Fn, Params: st.FnParams, Deps: []graph.Key{in.Key}},
			[]any{rec}, in.Env)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", st.Fn, err)
		}
		out, ok := v.(arrow.RecordBatch)
		if !ok {
			return nil, fmt.Errorf("%s returned a %T, not an arrow.RecordBatch", st.Fn, v)
		}
		if st.Schema != nil {
			want, err := decodeSchema(st.Schema)
			if err != nil {
				return nil, err
			}
			if !out.Schema().Equal(want) {
				return nil, fmt.Errorf("%s returned columns %s, but MapPartitions was told %s", st.Fn, out.Schema(), want)
			}
		}
		if out == rec {
			out.Retain()
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown step %q", st.Kind)
}

func (s *sinkSpec) consume(ctx context.Context, in graph.OpInput, rec arrow.RecordBatch, mem memory.Allocator, aux []any) (any, error) {
	switch s.Kind {
	case "":
		return rec, nil
	case "shuffle":
		defer rec.Release()
		return s.split(ctx, in, rec, aux)
	case "sample":
		defer rec.Release()
		return sampleRows(rec, s.Keys, s.N, mem)
	case "pieces":
		defer rec.Release()
		out := make([]any, s.N)
		rows := rec.NumRows()
		for j := range s.N {
			lo, hi := rows*int64(j)/int64(s.N), rows*int64(j+1)/int64(s.N)
			out[j] = rec.NewSlice(lo, hi)
		}
		return out, nil
	case "partial":
		defer rec.Release()
		return agg.Partial(ctx, rec, s.Keys, s.Specs, s.Opts, mem)
	case "split":
		defer rec.Release()
		st, err := agg.Partial(ctx, rec, s.Keys, s.Specs, s.Opts, mem)
		if err != nil {
			return nil, err
		}
		defer st.Release()
		parts, err := agg.HashPartition(ctx, st, s.Keys, s.N, mem)
		if err != nil {
			return nil, err
		}
		out := make([]any, len(parts))
		for i, p := range parts {
			out[i] = p
		}
		return out, nil
	case "write":
		defer rec.Release()
		return s.Write.write(ctx, in, rec)
	case "fn":
		f, ok := sinkFuncs[s.Fn]
		if !ok {
			rec.Release()
			return nil, fmt.Errorf("unknown sink function %q", s.Fn)
		}
		return f(ctx, rec, s.Params, mem)
	}
	return nil, fmt.Errorf("unknown sink %q", s.Kind)
}

// concatInputs concatenates the records among inputs into one record.
func concatInputs(inputs []any, schema *arrow.Schema, mem memory.Allocator) (arrow.RecordBatch, error) {
	var recs []arrow.RecordBatch
	for i, v := range inputs {
		rec, ok := v.(arrow.RecordBatch)
		if !ok {
			return nil, fmt.Errorf("input %d is a %T, not an arrow.RecordBatch", i, v)
		}
		recs = append(recs, rec)
	}
	return concatRecords(recs, schema, mem)
}

// concatRecords concatenates records with the same schema.
func concatRecords(recs []arrow.RecordBatch, schema *arrow.Schema, mem memory.Allocator) (arrow.RecordBatch, error) {
	if len(recs) == 1 {
		recs[0].Retain()
		return recs[0], nil
	}
	if len(recs) == 0 {
		if schema == nil {
			return nil, errors.New("no input records and no schema")
		}
		return emptyRecord(schema, mem), nil
	}
	if schema == nil {
		schema = recs[0].Schema()
	}
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	cols := make([]arrow.Array, schema.NumFields())
	for j := range cols {
		parts := make([]arrow.Array, len(recs))
		for i, r := range recs {
			if r.NumCols() != int64(len(cols)) {
				return nil, fmt.Errorf("record %d has %d columns, want %d", i, r.NumCols(), len(cols))
			}
			parts[i] = r.Column(j)
		}
		c, err := array.Concatenate(parts, mem)
		if err != nil {
			for _, x := range cols[:j] {
				x.Release()
			}
			return nil, fmt.Errorf("concatenate column %q: %w", schema.Field(j).Name, err)
		}
		cols[j] = c
	}
	out := array.NewRecordBatch(schema, cols, rows)
	for _, c := range cols {
		c.Release()
	}
	return out, nil
}

func emptyRecord(schema *arrow.Schema, mem memory.Allocator) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	return b.NewRecordBatch()
}

// Ops of the aggregation tree: merge partial states; finalize a state.
const (
	OpAggMerge = "dataframe.agg-merge"
	OpAggFinal = "dataframe.agg-final"
	OpConcat   = "dataframe.concat"
	OpHead     = "dataframe.head"
)

type aggParams struct {
	Keys  []string    `json:"keys,omitempty"`
	Specs []agg.Spec  `json:"specs"`
	Opts  agg.Options `json:"opts,omitzero"`
}

func recordInputs(in graph.OpInput) ([]arrow.RecordBatch, error) {
	recs := make([]arrow.RecordBatch, len(in.Inputs))
	for i, v := range in.Inputs {
		r, ok := v.(arrow.RecordBatch)
		if !ok {
			return nil, fmt.Errorf("input %d is a %T, not an arrow.RecordBatch", i, v)
		}
		recs[i] = r
	}
	return recs, nil
}

func runAggMerge(ctx context.Context, in graph.OpInput) (any, error) {
	var p aggParams
	if err := json.Unmarshal(in.Params, &p); err != nil {
		return nil, err
	}
	recs, err := recordInputs(in)
	if err != nil {
		return nil, err
	}
	return agg.Merge(ctx, recs, p.Keys, p.Specs, p.Opts, allocator)
}

func runAggFinal(ctx context.Context, in graph.OpInput) (any, error) {
	var p aggParams
	if err := json.Unmarshal(in.Params, &p); err != nil {
		return nil, err
	}
	recs, err := recordInputs(in)
	if err != nil {
		return nil, err
	}
	if len(recs) != 1 {
		return nil, fmt.Errorf("finalize takes 1 state, got %d", len(recs))
	}
	return agg.Finalize(ctx, recs[0], p.Keys, p.Specs, p.Opts, allocator)
}

type concatParams struct {
	Schema []byte `json:"schema,omitempty"`
	N      int64  `json:"n,omitempty"` // keep the first N rows (OpHead)
}

func runConcat(ctx context.Context, in graph.OpInput) (any, error) {
	var p concatParams
	if err := json.Unmarshal(in.Params, &p); err != nil {
		return nil, err
	}
	var schema *arrow.Schema
	if p.Schema != nil {
		var err error
		if schema, err = decodeSchema(p.Schema); err != nil {
			return nil, err
		}
	}
	return concatInputs(in.Inputs, schema, allocator)
}

func runHead(ctx context.Context, in graph.OpInput) (any, error) {
	var p concatParams
	if err := json.Unmarshal(in.Params, &p); err != nil {
		return nil, err
	}
	var schema *arrow.Schema
	if p.Schema != nil {
		var err error
		if schema, err = decodeSchema(p.Schema); err != nil {
			return nil, err
		}
	}
	// Take inputs in order only until n rows are there.
	var recs []any
	var rows int64
	for _, v := range in.Inputs {
		if rows >= p.N {
			break
		}
		recs = append(recs, v)
		if r, ok := v.(arrow.RecordBatch); ok {
			rows += r.NumRows()
		}
	}
	rec, err := concatInputs(recs, schema, allocator)
	if err != nil {
		return nil, err
	}
	if rec.NumRows() > p.N {
		s := rec.NewSlice(0, p.N)
		rec.Release()
		return s, nil
	}
	return rec, nil
}

// RegisterOps registers the dataframe ops into reg. The default registry
// has them; call it for a registry made with graph.NewRegistry.
func RegisterOps(reg *graph.Registry) error {
	if _, ok := reg.Codec(manifestCodec.Name()); !ok {
		if err := reg.RegisterCodec(manifestCodec); err != nil {
			return err
		}
	}
	ops := []graph.Op{
		{Name: OpPartition, Signature: "v1", Run: runPartition},
		{Name: OpAggMerge, Signature: "v1", Run: runAggMerge},
		{Name: OpAggFinal, Signature: "v1", Run: runAggFinal},
		{Name: OpConcat, Signature: "v1", Run: runConcat},
		{Name: OpHead, Signature: "v1", Run: runHead},
		{Name: OpShuffleCollect, Signature: "v1", Run: runShuffleCollect},
		{Name: OpDivisions, Signature: "v1", Run: runDivisions},
		{Name: OpIndexStats, Signature: "v1", Run: runIndexStats},
		{Name: OpJoin, Signature: "v1", Run: runJoin},
		{Name: OpPartitionSize, Signature: "v1", Run: runPartitionSize},
		{Name: OpDropDuplicates, Signature: "v1", Run: runDropDuplicates},
		{Name: OpValueCounts, Signature: "v1", Run: runValueCounts},
		{Name: OpNLargest, Signature: "v1", Run: runNLargest},
		{Name: OpQuantiles, Signature: "v1", Run: runQuantiles},
		{Name: OpQuantileSketch, Signature: "v1", Run: runQuantileSketch},
		{Name: OpGroupQuantiles, Signature: "v1", Run: runGroupQuantiles},
		{Name: OpGroupNLargest, Signature: "v1", Run: runGroupNLargest},
		{Name: OpSortByKeys, Signature: "v1", Run: runSortByKeys},
		{Name: OpResampleMerge, Signature: "v1", Run: runResampleMerge},
		{Name: OpResampleFinal, Signature: "v1", Run: runResampleFinal},
		{Name: OpRolling, Signature: "v1", Run: runRolling},
		{Name: OpRollingEdge, Signature: "v1", Run: runRollingEdge},
	}
	for _, op := range ops {
		if err := reg.Register(op); err != nil {
			return err
		}
	}
	return nil
}

func init() {
	if err := RegisterOps(graph.Default()); err != nil {
		panic(err)
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
