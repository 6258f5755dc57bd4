package distinct

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/internal/distinct/rows"
)

// CountName is the name of the count column of ValueCounts.
const CountName = "count"

// ValueCounts counts the rows of each distinct tuple of the columns cols:
// one row per tuple, in the order tuples first appear, with the columns
// cols then CountName (int64). With dropNulls, rows with a null (or NaN)
// in any of cols are not counted, as pandas' value_counts(dropna=True),
// its default; otherwise null is a value. The result is a partial count:
// combine the counts of several batches with MergeCounts, and order the
// result with SortCounts.
func ValueCounts(ctx context.Context, rec arrow.RecordBatch, cols []string, dropNulls bool, mem memory.Allocator) (arrow.RecordBatch, error) {
	if rec == nil {
		return nil, errors.New("distinct: ValueCounts given a nil record batch")
	}
	keyCols, err := countColumns(rec.Schema(), cols)
	if err != nil {
		return nil, err
	}
	ids, n, err := encode(ctx, rec, keyCols, dropNulls)
	if err != nil {
		return nil, err
	}
	counts := make([]int64, n)
	for _, g := range ids {
		if g != rows.NoID {
			counts[g]++
		}
	}
	return countsRecord(ctx, rec, keyCols, rows.FirstRows(ids, n), counts, mem)
}

func countColumns(s *arrow.Schema, cols []string) ([]int, error) {
	if len(cols) == 0 {
		return nil, fmt.Errorf("distinct: value counts need at least one column: %w", ErrBadSpec)
	}
	for _, c := range cols {
		if c == CountName {
			return nil, fmt.Errorf("distinct: value counts of a column named %q, the name of the counts: %w", CountName, ErrBadSpec)
		}
	}
	return keyColumns(s, cols, "value_counts")
}

func countsRecord(ctx context.Context, rec arrow.RecordBatch, keyCols []int, first []int32, counts []int64, mem memory.Allocator) (arrow.RecordBatch, error) {
	out := make([]arrow.Array, 0, len(keyCols)+1)
	defer func() { rows.ReleaseAll(out) }()
	fields := make([]arrow.Field, 0, len(keyCols)+1)
	for _, c := range keyCols {
		a, err := rows.Take(ctx, mem, rec.Column(c), first)
		if err != nil {
			return nil, fmt.Errorf("distinct: value counts of %q: %w", rec.ColumnName(c), err)
		}
		out = append(out, a)
		fields = append(fields, rec.Schema().Field(c))
	}
	out = append(out, rows.Int64s(mem, counts, nil))
	fields = append(fields, arrow.Field{Name: CountName, Type: arrow.PrimitiveTypes.Int64})
	return recordOf(fields, out, len(first)), nil
}

// MergeCounts combines partial counts made by ValueCounts or MergeCounts
// for the same columns: the counts of equal tuples add up. Tuples come in
// the order they first appear, earlier partials first.
func MergeCounts(ctx context.Context, partials []arrow.RecordBatch, cols []string, mem memory.Allocator) (arrow.RecordBatch, error) {
	if len(partials) == 0 {
		return nil, errors.New("distinct: MergeCounts given no partial counts")
	}
	schema := partials[0].Schema()
	for i, p := range partials {
		if !p.Schema().Equal(schema) {
			return nil, fmt.Errorf("distinct: MergeCounts: partial %d has columns %s, partial 0 %s: %w", i, p.Schema(), schema, ErrBadColumn)
		}
	}
	keyCols, err := countColumns(schema, cols)
	if err != nil {
		return nil, err
	}
	ci, err := columnIndex(schema, CountName, "merge counts")
	if err != nil {
		return nil, err
	}
	if schema.Field(ci).Type.ID() != arrow.INT64 {
		return nil, fmt.Errorf("distinct: MergeCounts: column %q has type %s, want int64: %w", CountName, schema.Field(ci).Type, ErrBadColumn)
	}
	all := make([]arrow.Array, schema.NumFields())
	defer rows.ReleaseAll(all)
	var n int64
	for c := range all {
		parts := make([]arrow.Array, len(partials))
		for i, p := range partials {
			parts[i] = p.Column(c)
		}
		a, err := array.Concatenate(parts, mem)
		if err != nil {
			return nil, fmt.Errorf("distinct: MergeCounts: column %q: %w", schema.Field(c).Name, err)
		}
		all[c] = a
		n = int64(a.Len())
	}
	rec := array.NewRecordBatch(schema, all, n)
	defer rec.Release()
	ids, k, err := encode(ctx, rec, keyCols, false)
	if err != nil {
		return nil, err
	}
	in := rows.Values[int64](rec.Column(ci))
	counts := make([]int64, k)
	for r, g := range ids {
		counts[g] += in[r]
	}
	return countsRecord(ctx, rec, keyCols, rows.FirstRows(ids, k), counts, mem)
}

// SortCounts orders value counts by count, largest first (smallest first
// with ascending), as pandas' value_counts(sort=True); equal counts keep
// their order (first appearance), where pandas does not promise an order.
func SortCounts(ctx context.Context, counts arrow.RecordBatch, ascending bool, mem memory.Allocator) (arrow.RecordBatch, error) {
	if counts == nil {
		return nil, errors.New("distinct: SortCounts given a nil record batch")
	}
	ci, err := columnIndex(counts.Schema(), CountName, "sort counts")
	if err != nil {
		return nil, err
	}
	if counts.Schema().Field(ci).Type.ID() != arrow.INT64 {
		return nil, fmt.Errorf("distinct: SortCounts: column %q has type %s, want int64: %w", CountName, counts.Schema().Field(ci).Type, ErrBadColumn)
	}
	c := rows.Values[int64](counts.Column(ci))
	order := make([]int32, len(c))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		if ascending {
			return cmp.Compare(c[a], c[b])
		}
		return cmp.Compare(c[b], c[a])
	})
	return rows.TakeRecord(ctx, mem, counts, order)
}
