package distinct

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/internal/distinct/rows"
)

// Keep says which of several equal rows to keep, as pandas' keep=.
type Keep string

const (
	KeepFirst Keep = "first" // the first in row order (the default, "")
	KeepLast  Keep = "last"  // the last in row order
	KeepNone  Keep = "none"  // none of them (pandas' keep=False); DropDuplicates only
	KeepAll   Keep = "all"   // all the rows tied with the last one kept; NLargest and NSmallest only
)

// DropDuplicates returns the rows of rec without duplicates on the
// columns subset (all columns when empty), in row order, as pandas'
// drop_duplicates(subset, keep): of equal rows, the first (KeepFirst), the
// last (KeepLast) or none (KeepNone) is kept. Nulls equal nulls and NaN
// equals NaN, as in pandas. The batch must hold every copy of a row (the
// lead shuffles by subset first); the input itself is returned (retained)
// when it has no duplicates.
func DropDuplicates(ctx context.Context, rec arrow.RecordBatch, subset []string, keep Keep, mem memory.Allocator) (arrow.RecordBatch, error) {
	if rec == nil {
		return nil, errors.New("distinct: DropDuplicates given a nil record batch")
	}
	if keep == "" {
		keep = KeepFirst
	}
	if keep != KeepFirst && keep != KeepLast && keep != KeepNone {
		return nil, fmt.Errorf("distinct: DropDuplicates: keep %q, want first, last or none: %w", keep, ErrBadSpec)
	}
	if len(subset) == 0 {
		for _, f := range rec.Schema().Fields() {
			subset = append(subset, f.Name)
		}
	}
	keyCols, err := keyColumns(rec.Schema(), subset, "drop_duplicates subset")
	if err != nil {
		return nil, err
	}
	if len(keyCols) == 0 { // no columns: at most one row is distinct
		n := min(rec.NumRows(), 1)
		if keep == KeepNone && rec.NumRows() > 1 {
			n = 0
		}
		return rec.NewSlice(0, n), nil
	}
	ids, n, err := encode(ctx, rec, keyCols, false)
	if err != nil {
		return nil, err
	}
	if n == len(ids) {
		rec.Retain()
		return rec, nil
	}
	var kept []int32
	switch keep {
	case KeepFirst:
		kept = rows.FirstRows(ids, n)
	case KeepLast:
		last := make([]int32, n)
		for r, g := range ids {
			last[g] = int32(r)
		}
		kept = make([]int32, 0, n)
		for r, g := range ids {
			if last[g] == int32(r) {
				kept = append(kept, int32(r))
			}
		}
	case KeepNone:
		count := make([]int32, n)
		for _, g := range ids {
			count[g]++
		}
		for r, g := range ids {
			if count[g] == 1 {
				kept = append(kept, int32(r))
			}
		}
	}
	out, err := rows.TakeRecord(ctx, mem, rec, kept)
	if err != nil {
		return nil, fmt.Errorf("distinct: DropDuplicates: %w", err)
	}
	return out, nil
}

// Unique returns the distinct values of arr in the order they first
// appear, null included once, as pandas' unique.
func Unique(ctx context.Context, arr arrow.Array, mem memory.Allocator) (arrow.Array, error) {
	if arr == nil {
		return nil, errors.New("distinct: Unique given a nil array")
	}
	if rows.KindOf(arr.DataType()) == rows.KindNone {
		return nil, fmt.Errorf("distinct: unique values of a %s column: cannot compare its values: %w", arr.DataType(), ErrBadColumn)
	}
	enc, err := rows.NewEncoder([]arrow.DataType{arr.DataType()}, true)
	if err != nil {
		return nil, fmt.Errorf("distinct: %w", err)
	}
	ids, err := enc.Insert(ctx, []arrow.Array{arr})
	if err != nil {
		return nil, fmt.Errorf("distinct: %w", err)
	}
	if enc.Len() == len(ids) {
		arr.Retain()
		return arr, nil
	}
	return rows.Take(ctx, mem, arr, rows.FirstRows(ids, enc.Len()))
}

// recordOf builds a record batch from named columns (it retains them).
func recordOf(fields []arrow.Field, cols []arrow.Array, n int) arrow.RecordBatch {
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(n))
}
