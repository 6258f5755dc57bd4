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
	"github.com/shoal-data/shoal/io/csv"
	"github.com/shoal-data/shoal/io/storage"
)

// CSVOptions say how to read CSV files: delimiter, quoting, header,
// schema or type inference, dates, null markers, block size, what to do
// with malformed rows. The zero value reads comma-separated files with a
// header and infers the types. See the fields' documentation.
type CSVOptions = csv.Options

// ReadCSV reads CSV files lazily: path is a file or a glob ("data/*.csv",
// "logs/**/*.csv"). The files' columns and types are known at once (read
// from a sample of the first file); the rows are read when the DataFrame is
// computed, each file in blocks of CSVOptions.BlockSize bytes, one
// partition per block, only the columns that are used, with filters applied
// while parsing.
func ReadCSV(ctx context.Context, path string, opts ...CSVOptions) (DataFrame, error) {
	return ReadCSVFiles(ctx, []string{path}, opts...)
}

// ReadCSVFiles is ReadCSV for several files or globs, read in order.
func ReadCSVFiles(ctx context.Context, paths []string, opts ...CSVOptions) (DataFrame, error) {
	var o csv.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	plan, err := csv.PlanRead(ctx, storage.Local{}, paths, o)
	if err != nil {
		return DataFrame{}, err
	}
	r := &csvReader{plan: plan, paths: paths}
	if _, err := r.partParams(0); err != nil {
		return DataFrame{}, err
	}
	return DataFrame{n: &node{kind: kindSource, schema: plan.Schema, nparts: len(plan.Blocks), src: &source{r: r}}}, nil
}

type csvReader struct {
	plan  *csv.Plan
	paths []string
}

func (r *csvReader) format() string        { return "csv" }
func (r *csvReader) schema() *arrow.Schema { return r.plan.Schema }
func (r *csvReader) parts() int            { return len(r.plan.Blocks) }

func (r *csvReader) describe() string {
	return fmt.Sprintf("ReadCSV %s (%d files, %d blocks)", strings.Join(r.paths, ", "), len(r.plan.Files), len(r.plan.Blocks))
}

func (r *csvReader) token() string {
	var b strings.Builder
	for _, blk := range r.plan.Blocks {
		fmt.Fprintf(&b, "%s:%d:%d;", blk.Path, blk.Offset, blk.Length)
	}
	o, _ := r.plan.Options.MarshalBinary()
	b.Write(o)
	b.WriteString(r.plan.Schema.String())
	return b.String()
}

func (r *csvReader) prepare(columns []string, filter expr.Expr, hasFilter bool) (reader, string, error) {
	return r, "", nil
}

func (r *csvReader) partParams(i int) ([]byte, error) {
	return r.plan.ForBlock(i).MarshalBinary()
}

func readCSVPart(ctx context.Context, env *graph.Env, params []byte, columns []string, filter *expr.Expr,
	mem memory.Allocator) (arrow.RecordBatch, error) {
	plan := new(csv.Plan)
	if err := plan.UnmarshalBinary(params); err != nil {
		return nil, fmt.Errorf("decode CSV part: %w", err)
	}
	ro := csv.ReadOptions{Columns: columns, Allocator: mem}
	if filter != nil {
		pred := *filter
		ro.Filter = func(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
			return expr.Filter(ctx, rec, pred, mem)
		}
	}
	rec, bad, err := csv.ReadBlock(ctx, storage.Local{}, plan, 0, ro)
	if err != nil {
		return nil, err
	}
	for i, b := range bad {
		if i == 100 {
			env.Logger.Warn("more malformed CSV rows skipped", "path", b.Path, "count", len(bad)-100)
			break
		}
		env.Logger.Warn("malformed CSV row skipped", "path", b.Path, "line", b.Line, "column", b.Column,
			"text", b.Text, "reason", b.Err)
	}
	return rec, nil
}

func init() {
	readFuncs["csv"] = readCSVPart
}

// WriteCSV computes the DataFrame and writes one CSV file per partition
// into dir, named by WriteOptions.Pattern ("part-*.csv" by default), with
// csv.WriteOptions as WriteOptions.Options. It returns the paths written.
func (df DataFrame) WriteCSV(ctx context.Context, exec graph.Executor, dir string, opts ...WriteOptions) ([]string, error) {
	return df.write(ctx, exec, "csv", dir, opts)
}

func writeCSVPart(ctx context.Context, env *graph.Env, w *writeSpec, rec arrow.RecordBatch) ([]string, error) {
	var o csv.WriteOptions
	if w.Options != nil {
		if err := json.Unmarshal(w.Options, &o); err != nil {
			return nil, fmt.Errorf("CSV write options: %w", err)
		}
	}
	f, err := storage.Local{}.Create(ctx, w.Path)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := csv.Write(bw, rec, o); err != nil {
		f.Close()
		return nil, fmt.Errorf("write %s: %w", w.Path, err)
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return nil, fmt.Errorf("write %s: %w", w.Path, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("write %s: %w", w.Path, err)
	}
	return []string{w.Path}, nil
}

func init() {
	writeFuncs["csv"] = writeCSVPart
}
