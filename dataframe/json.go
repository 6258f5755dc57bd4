package dataframe

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

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
	return jsonFormat.source(paths, plan), nil
}

var jsonFormat = &planFormat[jsonl.Plan, *jsonl.Plan]{name: "json", op: "ReadJSON", unit: "blocks",
	schema: func(p *jsonl.Plan) *arrow.Schema { return p.Schema },
	parts:  func(p *jsonl.Plan) int { return len(p.Parts) },
	read:   jsonl.ReadPart,
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
	readFuncs["json"] = jsonFormat.readPart
	writeFuncs["json"] = writeJSONPart
}
