package dataframe

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/expr"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/io/parquet"
	"github.com/shoal-data/shoal/io/storage"
)

// ParquetOptions say how to read Parquet files. Columns and Filter need
// not be set: the columns a computation uses and the filters it applies
// are pushed into the reader by the optimizer.
type ParquetOptions = parquet.Options

// ReadParquet reads Parquet files lazily: path is a file, a glob, or a
// directory of hive-partitioned files ("data/**/*.parquet"). Each group of
// row groups up to ParquetOptions.TargetBytes becomes one partition; only
// the columns used are read, and row groups whose statistics rule out a
// filter's rows are skipped.
func ReadParquet(ctx context.Context, path string, opts ...ParquetOptions) (DataFrame, error) {
	return ReadParquetFiles(ctx, []string{path}, opts...)
}

// ReadParquetFiles is ReadParquet for several files or globs.
func ReadParquetFiles(ctx context.Context, paths []string, opts ...ParquetOptions) (DataFrame, error) {
	var o parquet.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	plan, err := parquet.PlanRead(ctx, storage.Local{}, paths, o)
	if err != nil {
		return DataFrame{}, err
	}
	r := &parquetReader{paths: paths, opts: o, plan: plan}
	return DataFrame{n: &node{kind: kindSource, schema: plan.Schema, nparts: len(plan.Parts), src: &source{r: r}}}, nil
}

type parquetReader struct {
	paths []string
	opts  parquet.Options
	plan  *parquet.Plan
}

func (r *parquetReader) format() string        { return "parquet" }
func (r *parquetReader) schema() *arrow.Schema { return r.plan.Schema }
func (r *parquetReader) parts() int            { return len(r.plan.Parts) }

func (r *parquetReader) describe() string {
	return fmt.Sprintf("ReadParquet %s (%d row groups in %d parts)", strings.Join(r.paths, ", "),
		r.plan.TotalRowGroups-r.plan.SkippedRowGroups, len(r.plan.Parts))
}

func (r *parquetReader) token() string {
	var b strings.Builder
	for _, p := range r.plan.Parts {
		fmt.Fprintf(&b, "%s:%v:%d;", p.Path, p.RowGroups, p.Rows)
	}
	o, _ := json.Marshal(r.opts)
	b.Write(o)
	return b.String()
}

// prepare plans the read again with the columns used and the bounds the
// filter implies, so that row groups the statistics rule out are skipped.
func (r *parquetReader) prepare(columns []string, filter expr.Expr, hasFilter bool) (reader, string, error) {
	o := r.opts
	o.Columns = columns
	var bounds []parquet.Bound
	if hasFilter {
		bounds = boundsOf(filter)
		o.Filter = append(o.Filter, bounds...)
	}
	if columns == nil && len(bounds) == 0 {
		return r, "", nil
	}
	plan, err := parquet.PlanRead(context.Background(), storage.Local{}, r.paths, o)
	if err != nil {
		return nil, "", err
	}
	note := ""
	if len(bounds) > 0 {
		note = fmt.Sprintf("statistics skip %d of %d row groups", plan.SkippedRowGroups, plan.TotalRowGroups)
	}
	return &parquetReader{paths: r.paths, opts: o, plan: plan}, note, nil
}

// boundsOf turns the conjuncts of a predicate that compare a column with
// a constant into bounds on the column's values.
func boundsOf(pred expr.Expr) []parquet.Bound {
	var out []parquet.Bound
	flip := map[string]string{"lt": ">", "le": ">=", "gt": "<", "ge": "<=", "eq": "==", "ne": "!="}
	direct := map[string]string{"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
	for _, c := range expr.Conjuncts(pred) {
		args := c.Args()
		switch op := c.Op(); op {
		case "lt", "le", "gt", "ge", "eq", "ne":
			if col, ok := args[0].ColumnName(); ok {
				if v, ok := boundValue(args[1]); ok {
					out = append(out, parquet.Bound{Column: col, Op: direct[op], Value: v})
				}
			} else if col, ok := args[1].ColumnName(); ok {
				if v, ok := boundValue(args[0]); ok {
					out = append(out, parquet.Bound{Column: col, Op: flip[op], Value: v})
				}
			}
		case "between":
			if col, ok := args[0].ColumnName(); ok {
				lo, ok1 := boundValue(args[1])
				hi, ok2 := boundValue(args[2])
				if ok1 && ok2 {
					out = append(out, parquet.Bound{Column: col, Op: ">=", Value: lo},
						parquet.Bound{Column: col, Op: "<=", Value: hi})
				}
			}
		}
	}
	return out
}

// boundValue returns the constant of a literal in a form the Parquet
// statistics compare with.
func boundValue(e expr.Expr) (any, bool) {
	v, ok := e.LiteralValue()
	if !ok || v == nil {
		return nil, false
	}
	switch x := v.(type) {
	case int64, float64, string, bool, time.Time:
		return x, true
	case float32:
		return float64(x), true
	case expr.Date:
		return time.Date(x.Year, x.Month, x.Day, 0, 0, 0, 0, time.UTC), true
	}
	return nil, false
}

func (r *parquetReader) partParams(i int) ([]byte, error) {
	return json.Marshal(r.plan.Part(i))
}

func readParquetPart(ctx context.Context, env *graph.Env, params []byte, columns []string, filter *expr.Expr,
	mem memory.Allocator) (arrow.RecordBatch, error) {
	var plan parquet.Plan
	if err := json.Unmarshal(params, &plan); err != nil {
		return nil, fmt.Errorf("decode Parquet part: %w", err)
	}
	rec, err := parquet.ReadPart(ctx, storage.Local{}, &plan, 0, mem)
	if err != nil {
		return nil, err
	}
	if filter == nil {
		return rec, nil
	}
	defer rec.Release()
	return expr.Filter(ctx, rec, *filter, mem)
}

func init() {
	readFuncs["parquet"] = readParquetPart
}

// WriteParquet computes the DataFrame and writes it as Parquet files into
// dir: one file per partition, named by WriteOptions.Pattern
// ("part-*.parquet" by default), with parquet.WriteOptions (compression,
// row group size, PartitionOn for hive-style key=value directories) as
// WriteOptions.Options. It returns the paths written.
func (df DataFrame) WriteParquet(ctx context.Context, exec graph.Executor, dir string, opts ...WriteOptions) ([]string, error) {
	return df.write(ctx, exec, "parquet", dir, opts)
}

func writeParquetPart(ctx context.Context, env *graph.Env, w *writeSpec, rec arrow.RecordBatch) ([]string, error) {
	var o parquet.WriteOptions
	if w.Options != nil {
		if err := json.Unmarshal(w.Options, &o); err != nil {
			return nil, fmt.Errorf("Parquet write options: %w", err)
		}
	}
	if len(o.PartitionOn) > 0 {
		return parquet.WritePartitioned(ctx, storage.Local{}, filepath.Dir(w.Path), filepath.Base(w.Path),
			[]arrow.RecordBatch{rec}, o)
	}
	if err := parquet.Write(ctx, storage.Local{}, w.Path, []arrow.RecordBatch{rec}, o); err != nil {
		return nil, err
	}
	return []string{w.Path}, nil
}

func init() {
	writeFuncs["parquet"] = writeParquetPart
}
