package dataframe

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/expr"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/io/ipc"
	"github.com/shoal-data/shoal/io/storage"
)

// IPCOptions say how to read Arrow IPC files (the random-access "Feather
// v2" format or streams).
type IPCOptions = ipc.Options

// ReadIPC reads Arrow IPC files lazily: path is a file or a glob. Each
// group of record batches up to IPCOptions.TargetBytes of a file (a whole
// stream) is one partition; only the columns used are read.
func ReadIPC(ctx context.Context, path string, opts ...IPCOptions) (DataFrame, error) {
	return ReadIPCFiles(ctx, []string{path}, opts...)
}

// ReadIPCFiles is ReadIPC for several files or globs.
func ReadIPCFiles(ctx context.Context, paths []string, opts ...IPCOptions) (DataFrame, error) {
	var o ipc.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	plan, err := ipc.PlanRead(ctx, storage.Local{}, paths, o)
	if err != nil {
		return DataFrame{}, err
	}
	r := &ipcReader{paths: paths, plan: plan}
	return DataFrame{n: &node{kind: kindSource, schema: plan.Schema, nparts: len(plan.Parts), src: &source{r: r}}}, nil
}

type ipcReader struct {
	paths []string
	plan  *ipc.Plan
}

func (r *ipcReader) format() string        { return "ipc" }
func (r *ipcReader) schema() *arrow.Schema { return r.plan.Schema }
func (r *ipcReader) parts() int            { return len(r.plan.Parts) }

func (r *ipcReader) describe() string {
	return fmt.Sprintf("ReadIPC %s (%d parts)", strings.Join(r.paths, ", "), len(r.plan.Parts))
}

func (r *ipcReader) token() string {
	b, _ := json.Marshal(r.plan)
	return string(b)
}

func (r *ipcReader) prepare(columns []string, filter expr.Expr, hasFilter bool) (reader, string, error) {
	if columns == nil {
		return r, "", nil
	}
	plan, err := r.plan.Select(columns...)
	if err != nil {
		return nil, "", err
	}
	return &ipcReader{paths: r.paths, plan: plan}, "", nil
}

func (r *ipcReader) partParams(i int) ([]byte, error) {
	return json.Marshal(r.plan.Slice(i, i+1))
}

func readIPCPart(ctx context.Context, env *graph.Env, params []byte, columns []string, filter *expr.Expr,
	mem memory.Allocator) (arrow.RecordBatch, error) {
	var plan ipc.Plan
	if err := json.Unmarshal(params, &plan); err != nil {
		return nil, err
	}
	rec, err := ipc.ReadPart(ctx, storage.Local{}, &plan, 0, mem)
	if err != nil {
		return nil, err
	}
	if filter == nil {
		return rec, nil
	}
	defer rec.Release()
	return expr.Filter(ctx, rec, *filter, mem)
}

// WriteIPC computes the DataFrame and writes one Arrow IPC file per
// partition into dir, named by WriteOptions.Pattern ("part-*.arrow" by
// default), with ipc.WriteOptions as WriteOptions.Options.
func (df DataFrame) WriteIPC(ctx context.Context, exec graph.Executor, dir string, opts ...WriteOptions) ([]string, error) {
	if len(opts) == 0 || opts[0].Pattern == "" {
		o := WriteOptions{Pattern: "part-*.arrow"}
		if len(opts) > 0 {
			o.Options = opts[0].Options
		}
		opts = []WriteOptions{o}
	}
	return df.write(ctx, exec, "ipc", dir, opts)
}

func writeIPCPart(ctx context.Context, env *graph.Env, w *writeSpec, rec arrow.RecordBatch) ([]string, error) {
	var o ipc.WriteOptions
	if w.Options != nil {
		if err := json.Unmarshal(w.Options, &o); err != nil {
			return nil, fmt.Errorf("IPC write options: %w", err)
		}
	}
	if err := ipc.WriteFile(ctx, storage.Local{}, w.Path, []arrow.RecordBatch{rec}, o); err != nil {
		return nil, err
	}
	return []string{w.Path}, nil
}

func init() {
	readFuncs["ipc"] = readIPCPart
	writeFuncs["ipc"] = writeIPCPart
}
