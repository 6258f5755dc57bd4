package joink

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/internal/distinct/rows"
)

// Join joins two record batches in memory: a hash table of one side,
// probed by the other. spec.Build is ignored: inner, left and outer joins
// build the right side and probe with the left, right joins build the left
// side and probe with the right, so that the output keeps the order of the
// side whose rows are all kept:
//
//   - inner, left: left rows in order, each with its right matches in right
//     order (pandas' order for these joins);
//   - right: right rows in order, each with its left matches in left order
//     (pandas' order);
//   - outer: as a left join, then the right rows that matched nothing, in
//     right order (pandas sorts the keys of an outer join instead).
func Join(ctx context.Context, left, right arrow.RecordBatch, spec Spec, mem memory.Allocator) (arrow.RecordBatch, error) {
	if left == nil || right == nil {
		return nil, errors.New("joink: Join given a nil record batch")
	}
	build, probe, keys := right, left, spec.RightOn
	spec.Build = RightSide
	if spec.How == Right {
		build, probe, keys = left, right, spec.LeftOn
		spec.Build = LeftSide
	}
	if _, err := newPlan(left.Schema(), right.Schema(), spec); err != nil {
		return nil, err
	}
	ht, err := Build(ctx, build, keys, mem)
	if err != nil {
		return nil, err
	}
	defer ht.Release()
	out, err := Probe(ctx, ht, probe, spec, mem)
	if err != nil {
		return nil, err
	}
	if spec.How != Outer {
		return out, nil
	}
	rest, err := ht.Unmatched(ctx, probe.Schema(), spec, mem)
	if err != nil {
		out.Release()
		return nil, err
	}
	if rest.NumRows() == 0 {
		rest.Release()
		return out, nil
	}
	defer out.Release()
	defer rest.Release()
	return Concat(mem, out, rest)
}

// Concat concatenates record batches of one schema into one.
func Concat(mem memory.Allocator, recs ...arrow.RecordBatch) (arrow.RecordBatch, error) {
	if len(recs) == 0 {
		return nil, errors.New("joink: Concat given no record batches")
	}
	schema := recs[0].Schema()
	cols := make([]arrow.Array, schema.NumFields())
	defer rows.ReleaseAll(cols)
	var n int64
	for _, r := range recs {
		if !r.Schema().Equal(schema) {
			return nil, fmt.Errorf("joink: Concat of batches with schemas %s and %s", schema, r.Schema())
		}
		n += r.NumRows()
	}
	for i := range cols {
		parts := make([]arrow.Array, len(recs))
		for k, r := range recs {
			parts[k] = r.Column(i)
		}
		c, err := array.Concatenate(parts, mem)
		if err != nil {
			return nil, fmt.Errorf("joink: concatenate column %q: %w", schema.Field(i).Name, err)
		}
		cols[i] = c
	}
	return array.NewRecordBatch(schema, cols, n), nil
}
