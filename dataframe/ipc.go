package dataframe

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

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
	return ipcFormat.source(paths, plan), nil
}

var ipcFormat = &planFormat[ipc.Plan, *ipc.Plan]{name: "ipc", op: "ReadIPC", unit: "parts",
	schema: func(p *ipc.Plan) *arrow.Schema { return p.Schema },
	parts:  func(p *ipc.Plan) int { return len(p.Parts) },
	read:   ipc.ReadPart,
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
	readFuncs["ipc"] = ipcFormat.readPart
	writeFuncs["ipc"] = writeIPCPart
}
