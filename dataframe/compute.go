package dataframe

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/shoal-data/shoal/graph"
)

// Graph returns the task graph that computes the DataFrame after
// optimization, and the keys of its partitions in order.
func (df DataFrame) Graph() (*graph.Graph, []graph.Key, error) {
	l, keys, err := df.lower()
	if err != nil {
		return nil, nil, err
	}
	return l.g, keys, nil
}

// lower optimizes the plan and lowers it to tasks.
func (df DataFrame) lower() (*lowerer, []graph.Key, error) {
	if err := df.Err(); err != nil {
		return nil, nil, err
	}
	root, err := optimize(df.n)
	if err != nil {
		return nil, nil, err
	}
	l := newLowerer(graph.Default(), root)
	keys, err := l.partitions(root)
	if err != nil {
		return nil, nil, err
	}
	return l, keys, nil
}

// Explain returns the optimized plan as text: what is read (which
// columns, which filter is pushed into the reader, which row groups are
// skipped), which steps are fused into one task per partition, and how
// aggregations are split. Outputs first, sources last.
func (df DataFrame) Explain() string {
	if err := df.Err(); err != nil {
		return "error: " + err.Error()
	}
	root, err := optimize(df.n)
	if err != nil {
		return "error: " + err.Error()
	}
	var b strings.Builder
	root.explain(&b, 0)
	return b.String()
}

// Compute runs the DataFrame on exec and returns its rows as an Arrow
// table, partitions in order.
func (df DataFrame) Compute(ctx context.Context, exec graph.Executor) (arrow.Table, error) {
	recs, err := df.computeRecords(ctx, exec)
	if err != nil {
		return nil, err
	}
	t := array.NewTableFromRecords(df.Schema(), recs)
	for _, r := range recs {
		r.Release()
	}
	return t, nil
}

func (df DataFrame) computeRecords(ctx context.Context, exec graph.Executor) ([]arrow.RecordBatch, error) {
	if exec == nil {
		return nil, errors.New("dataframe: Compute needs an executor, such as local.New()")
	}
	l, keys, done, err := df.lowerFor(exec)
	if err != nil {
		return nil, err
	}
	defer done()
	vals, err := exec.Compute(ctx, l.g, keys...)
	if cerr := cleanupShuffles(exec, l.shuffles); err == nil && cerr != nil {
		return nil, fmt.Errorf("remove shuffle files: %w", cerr)
	}
	if err != nil {
		return nil, err
	}
	recs := make([]arrow.RecordBatch, 0, len(vals))
	for i, v := range vals {
		rec, ok := v.(arrow.RecordBatch)
		if !ok {
			return nil, fmt.Errorf("partition %d is a %T, not a record batch", i, v)
		}
		if !rec.Schema().Equal(df.Schema()) {
			fixed, err := conform(rec, df.Schema())
			if err != nil {
				return nil, fmt.Errorf("partition %d: %w", i, err)
			}
			rec = fixed
		} else {
			rec.Retain()
		}
		recs = append(recs, rec)
	}
	return recs, nil
}

// conform checks that rec has the columns and types of schema and gives it
// schema's field metadata and nullability.
func conform(rec arrow.RecordBatch, schema *arrow.Schema) (arrow.RecordBatch, error) {
	if int(rec.NumCols()) != schema.NumFields() {
		return nil, fmt.Errorf("%d columns, want %d (%v)", rec.NumCols(), schema.NumFields(), schemaNames(schema))
	}
	for i, f := range schema.Fields() {
		got := rec.Schema().Field(i)
		if got.Name != f.Name || !arrow.TypeEqual(got.Type, f.Type) {
			return nil, fmt.Errorf("column %d is %s %s, want %s %s", i, got.Name, got.Type, f.Name, f.Type)
		}
	}
	return array.NewRecordBatch(schema, rec.Columns(), rec.NumRows()), nil
}

// Persist computes the DataFrame and keeps its partitions on the executor.
// The returned DataFrame reads them from there, so that several
// computations share the work; call its Release when done.
func (df DataFrame) Persist(ctx context.Context, exec graph.Executor) (DataFrame, error) {
	l, keys, done, err := df.lowerFor(exec)
	if err != nil {
		return DataFrame{}, err
	}
	defer done() // every partition is computed before Persist returns
	fs, err := exec.Submit(ctx, l.g, keys...)
	if err != nil {
		cleanupShuffles(exec, l.shuffles)
		return DataFrame{}, err
	}
	defer cleanupShuffles(exec, l.shuffles)
	for _, f := range fs {
		select {
		case <-f.Done():
		case <-ctx.Done():
			releaseAll(fs)
			return DataFrame{}, ctx.Err()
		}
		if _, err := f.Result(ctx); err != nil {
			releaseAll(fs)
			return DataFrame{}, err
		}
	}
	n := &node{kind: kindSource, schema: df.Schema(), nparts: len(keys), src: &source{keys: keys, futures: fs},
		index: df.n.index, divisions: df.n.divisions}
	return DataFrame{n: n}, nil
}

func releaseAll(fs []graph.Future) {
	for _, f := range fs {
		f.Release()
	}
}

// Release frees the partitions a persisted DataFrame holds on its
// executor. Other DataFrames do nothing.
func (df DataFrame) Release() {
	if df.n != nil && df.n.kind == kindSource && df.n.src.futures != nil {
		releaseAll(df.n.src.futures)
	}
}
