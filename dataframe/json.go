package dataframe

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/expr"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/io/jsonl"
	"github.com/shoal-data/shoal/io/storage"
)

// JSONOptions say how to read JSON-lines files: schema or inference,
// timestamp columns, nested values, block size.
type JSONOptions = jsonl.Options

// ReadJSON reads JSON-lines files (one object per line) lazily: path is a
// file or a glob. Files are read in blocks of JSONOptions.BlockSize bytes,
// one partition each; keys missing from a line are null.
func ReadJSON(ctx context.Context, path string, opts ...JSONOptions) (DataFrame, error) {
	return ReadJSONFiles(ctx, []string{path}, opts...)
}

// ReadJSONFiles is ReadJSON for several files or globs.
func ReadJSONFiles(ctx context.Context, paths []string, opts ...JSONOptions) (DataFrame, error) {
	var o jsonl.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	plan, err := jsonl.PlanRead(ctx, storage.Local{}, paths, o)
	if err != nil {
		return DataFrame{}, err
	}
	r := &jsonReader{paths: paths, plan: plan}
	return DataFrame{n: &node{kind: kindSource, schema: plan.Schema, nparts: len(plan.Parts), src: &source{r: r}}}, nil
}

type jsonReader struct {
	paths []string
	plan  *jsonl.Plan
}

func (r *jsonReader) format() string        { return "json" }
func (r *jsonReader) schema() *arrow.Schema { return r.plan.Schema }
func (r *jsonReader) parts() int            { return len(r.plan.Parts) }

func (r *jsonReader) describe() string {
	return fmt.Sprintf("ReadJSON %s (%d blocks)", strings.Join(r.paths, ", "), len(r.plan.Parts))
}

func (r *jsonReader) token() string {
	b, _ := json.Marshal(r.plan)
	return string(b)
}

func (r *jsonReader) prepare(columns []string, filter expr.Expr, hasFilter bool) (reader, string, error) {
	if columns == nil {
		return r, "", nil
	}
	plan, err := r.plan.Select(columns...)
	if err != nil {
		return nil, "", err
	}
	return &jsonReader{paths: r.paths, plan: plan}, "", nil
}

func (r *jsonReader) partParams(i int) ([]byte, error) {
	return json.Marshal(r.plan.Slice(i, i+1))
}

func readJSONPart(ctx context.Context, env *graph.Env, params []byte, columns []string, filter *expr.Expr,
	mem memory.Allocator) (arrow.RecordBatch, error) {
	var plan jsonl.Plan
	if err := json.Unmarshal(params, &plan); err != nil {
		return nil, err
	}
	rec, err := jsonl.ReadPart(ctx, storage.Local{}, &plan, 0, mem)
	if err != nil {
		return nil, err
	}
	if filter == nil {
		return rec, nil
	}
	defer rec.Release()
	return expr.Filter(ctx, rec, *filter, mem)
}

// WriteJSON computes the DataFrame and writes one JSON-lines file per
// partition into dir, named by WriteOptions.Pattern ("part-*.jsonl" by
// default), with jsonl.WriteOptions as WriteOptions.Options.
func (df DataFrame) WriteJSON(ctx context.Context, exec graph.Executor, dir string, opts ...WriteOptions) ([]string, error) {
	if len(opts) == 0 || opts[0].Pattern == "" {
		o := WriteOptions{Pattern: "part-*.jsonl"}
		if len(opts) > 0 {
			o.Options = opts[0].Options
		}
		opts = []WriteOptions{o}
	}
	return df.write(ctx, exec, "json", dir, opts)
}

func writeJSONPart(ctx context.Context, env *graph.Env, w *writeSpec, rec arrow.RecordBatch) ([]string, error) {
	var o jsonl.WriteOptions
	if w.Options != nil {
		if err := json.Unmarshal(w.Options, &o); err != nil {
			return nil, fmt.Errorf("JSON write options: %w", err)
		}
	}
	f, err := storage.Local{}.Create(ctx, w.Path)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	err = jsonl.Write(bw, []arrow.RecordBatch{rec}, o)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", w.Path, err)
	}
	return []string{w.Path}, nil
}

func init() {
	readFuncs["json"] = readJSONPart
	writeFuncs["json"] = writeJSONPart
}
