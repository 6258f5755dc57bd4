package dataframe

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/shoal-data/shoal/graph"
)

// OpPartitionSize returns the bytes of memory a partition takes.
const OpPartitionSize = "dataframe.partition-size"

func runPartitionSize(ctx context.Context, in graph.OpInput) (any, error) {
	var total int64
	for _, v := range in.Inputs {
		total += graph.SizeOf(v)
	}
	return total, nil
}

// RepartitionSize returns partitions of about target bytes of memory each:
// partitions larger than that are cut into row ranges, runs of smaller ones
// are concatenated. Rows keep their order. It computes the frame now, with
// exec, to measure its partitions (as Dask's repartition(partition_size=)
// does); Persist the frame first to avoid computing it twice.
func (df DataFrame) RepartitionSize(ctx context.Context, exec graph.Executor, target int64) (DataFrame, error) {
	if err := df.Err(); err != nil {
		return DataFrame{}, err
	}
	if target <= 0 {
		return DataFrame{}, fmt.Errorf("RepartitionSize: a target of %d bytes", target)
	}
	l, parts, done, err := df.lowerFor(exec)
	if err != nil {
		return DataFrame{}, err
	}
	defer done()
	keys := make([]graph.Key, len(parts))
	for i, p := range parts {
		keys[i] = graph.NewKey("partition-size", string(p), i)
		if err := l.g.Add(&graph.Task{Key: keys[i], Op: OpPartitionSize, Deps: []graph.Key{p}}); err != nil {
			return DataFrame{}, err
		}
	}
	vals, err := exec.Compute(ctx, l.g, keys...)
	cleanupShuffles(exec, l.shuffles)
	if err != nil {
		return DataFrame{}, fmt.Errorf("RepartitionSize: %w", err)
	}
	sizes := make([]int64, len(vals))
	var k int64 = 1
	for i, v := range vals {
		sizes[i] = v.(int64)
		k = max(k, (sizes[i]+target-1)/target)
	}
	// Cut every partition in k pieces, then concatenate runs of pieces up
	// to the target.
	pieces := df
	if k > 1 {
		pieces = df.derive(&node{kind: kindPieces, schema: df.Schema(), pieces: int(k), nparts: df.NPartitions() * int(k)})
	}
	spans := []int{0}
	var cur int64
	for i := range len(sizes) * int(k) {
		s := sizes[i/int(k)] / k
		if cur > 0 && cur+s > target {
			spans = append(spans, i)
			cur = 0
		}
		cur += s
	}
	spans = append(spans, len(sizes)*int(k))
	out := pieces.derive(&node{kind: kindCoalesce, schema: df.Schema(), spans: spans, nparts: len(spans) - 1})
	out.n.note = fmt.Sprintf("partitions of about %s", byteSize(target))
	return out, nil
}

// RepartitionDivisions range-partitions the rows by the index (see
// SetIndex) at the given values: partition i holds the index values from
// divisions[i] up to, not including, divisions[i+1], sorted; len(divisions)-1
// partitions. Rows below the first division are kept in the first
// partition and rows above the last in the last one, so the first and last
// divisions of the result are nil (unbounded).
func (df DataFrame) RepartitionDivisions(divisions ...any) DataFrame {
	if df.err != nil {
		return df
	}
	idx := df.n.index
	if idx == "" {
		return df.fail("RepartitionDivisions", fmt.Errorf("the frame has no index; use SetIndex first"))
	}
	if len(divisions) < 2 {
		return df.fail("RepartitionDivisions", fmt.Errorf("%d divisions; give at least 2 (the bounds of one partition)", len(divisions)))
	}
	i, _ := fieldIndex(df.Schema(), idx)
	typ := df.Schema().Field(i).Type
	like := any(nil)
	if len(df.n.divisions) > 0 {
		like = df.n.divisions[0]
		if like == nil && len(df.n.divisions) > 1 {
			like = df.n.divisions[1]
		}
	}
	divs := make([]any, len(divisions))
	for j, d := range divisions {
		if d == nil {
			return df.fail("RepartitionDivisions", fmt.Errorf("division %d is nil", j))
		}
		if like != nil {
			d = normalize(d, like)
		}
		divs[j] = d
		if j > 0 && compareValues(divs[j-1], d) >= 0 {
			return df.fail("RepartitionDivisions", fmt.Errorf("divisions must increase: %v then %v", divs[j-1], d))
		}
	}
	inner, err := valuesArray(typ, divs[1:len(divs)-1])
	if err != nil {
		return df.fail("RepartitionDivisions", fmt.Errorf("index %q: %w", idx, err))
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: idx, Type: typ, Nullable: true}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{inner}, int64(inner.Len()))
	inner.Release()
	b, err := encodeRecord(rec)
	rec.Release()
	if err != nil {
		return df.fail("RepartitionDivisions", err)
	}
	m := len(divs) - 1
	out := df.derive(&node{kind: kindShuffle, schema: df.Schema(), nparts: m,
		shuf: &shufflePlan{sort: []SortKey{Asc(idx)}, divisions: b, outputs: m, sorted: true}})
	bounds := append([]any{nil}, divs[1:len(divs)-1]...)
	out.n.index, out.n.divisions = idx, append(bounds, nil)
	return out
}

// valuesArray builds an array of type typ from Go values as Divisions
// returns them.
func valuesArray(typ arrow.DataType, vals []any) (arrow.Array, error) {
	b := array.NewBuilder(allocator, typ)
	defer b.Release()
	for _, v := range vals {
		bad := func() error { return fmt.Errorf("division %v (%T) does not fit a %s index", v, v, typ) }
		switch b := b.(type) {
		case *array.Int64Builder:
			x, ok := v.(int64)
			if !ok {
				return nil, bad()
			}
			b.Append(x)
		case *array.Int32Builder:
			x, ok := v.(int64)
			if !ok {
				return nil, bad()
			}
			b.Append(int32(x))
		case *array.Float64Builder:
			x, ok := v.(float64)
			if !ok {
				return nil, bad()
			}
			b.Append(x)
		case *array.StringBuilder:
			x, ok := v.(string)
			if !ok {
				return nil, bad()
			}
			b.Append(x)
		case *array.TimestampBuilder:
			x, ok := v.(time.Time)
			if !ok {
				return nil, bad()
			}
			ts, err := arrow.TimestampFromTime(x, typ.(*arrow.TimestampType).Unit)
			if err != nil {
				return nil, err
			}
			b.Append(ts)
		case *array.Date32Builder:
			x, ok := v.(time.Time)
			if !ok {
				return nil, bad()
			}
			b.Append(arrow.Date32FromTime(x))
		default:
			return nil, fmt.Errorf("cannot repartition a %s index by divisions", typ)
		}
	}
	return b.NewArray(), nil
}
