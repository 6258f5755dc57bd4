package dataframe

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/internal/inproc"
)

// writeSpec says how a partition task writes its rows: the format, the
// file and the format's options.
type writeSpec struct {
	Format  string `json:"format"`
	Path    string `json:"path"`
	Options []byte `json:"options,omitempty"`
}

// writeFuncs holds the writers of every format, by format name. A writer
// returns the paths it wrote.
var writeFuncs = map[string]func(ctx context.Context, env *graph.Env, w *writeSpec, rec arrow.RecordBatch) ([]string, error){}

func (w *writeSpec) write(ctx context.Context, in graph.OpInput, rec arrow.RecordBatch) (any, error) {
	f, ok := writeFuncs[w.Format]
	if !ok {
		return nil, fmt.Errorf("no writer for format %q", w.Format)
	}
	paths, err := f(ctx, in.Env, w, rec)
	if err != nil {
		return nil, err
	}
	return paths, nil
}

// WriteOptions say where and how a DataFrame is written.
type WriteOptions struct {
	// Pattern names the files: "*" is replaced by the partition number.
	// Default "part-*.<format>".
	Pattern string
	// Options are the format's options: csv.WriteOptions,
	// parquet.WriteOptions or ipc.WriteOptions.
	Options any
}

// write lowers a write of every partition and runs it.
func (df DataFrame) write(ctx context.Context, exec graph.Executor, format, dir string, opts []WriteOptions) ([]string, error) {
	if err := df.Err(); err != nil {
		return nil, err
	}
	var o WriteOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	pattern := o.Pattern
	if pattern == "" {
		pattern = "part-*." + format
	}
	if !strings.Contains(pattern, "*") {
		return nil, fmt.Errorf("write %s: pattern %q has no * for the partition number", format, pattern)
	}
	var fo []byte
	if o.Options != nil {
		var err error
		if fo, err = json.Marshal(o.Options); err != nil {
			return nil, fmt.Errorf("write %s: options: %w", format, err)
		}
	}
	root, err := optimize(df.n)
	if err != nil {
		return nil, err
	}
	l := newLowerer(graph.Default(), root)
	l.inProcess = inproc.Runs(exec)
	defer func() { unhold(l.held) }()
	n := root.nparts
	width := len(fmt.Sprint(max(n-1, 0)))
	var keys []graph.Key
	// Each partition's pipeline gets a sink that writes its file.
	base, err := l.pipeline(root, sinkSpec{Kind: "write", Write: &writeSpec{Format: format}}, "write-"+format)
	if err != nil {
		return nil, err
	}
	for i, k := range base {
		t, _ := l.g.Get(k)
		p, err := unmarshalProgram(t.Params)
		if err != nil {
			return nil, err
		}
		p.Sink.Write = &writeSpec{Format: format, Options: fo,
			Path: filepath.Join(dir, strings.Replace(pattern, "*", fmt.Sprintf("%0*d", width, i), 1))}
		t.Params, err = marshalProgram(p)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	vals, err := exec.Compute(ctx, l.g, keys...)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, v := range vals {
		ps, _ := v.([]string)
		paths = append(paths, ps...)
	}
	return paths, nil
}
