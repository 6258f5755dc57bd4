package dataframe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/internal/distinct"
	"github.com/shoal-data/shoal/dataframe/internal/sketch"
	"github.com/shoal-data/shoal/dataframe/internal/sortk"
	"github.com/shoal-data/shoal/graph"
)

// The operations that look at whole values: quantiles and medians (exact,
// and approximate through a KLL sketch), duplicate removal, value counts,
// unique values and the n largest or smallest rows, of a Series, a
// DataFrame and per group.
//
// How each runs:
//   - reductions whose result is small (ValueCounts, Unique, NLargest,
//     NSmallest, ApproxQuantile) compute a partial result per partition and
//     combine the partials in a tree, eight at a time, into one partition;
//   - operations that need every copy of a key in one place
//     (DropDuplicates, the GroupBy quantiles, GroupBy.NLargest) hash-shuffle
//     the rows by the key columns first (on disk, within the executor's
//     memory budget), then work on each shuffled partition alone;
//   - the exact quantiles of a Series gather the column's values in one
//     task (see Series.Quantile).

// Ops of the distinct-value operations.
const (
	OpDropDuplicates  = "dataframe.drop-duplicates"
	OpValueCounts     = "dataframe.value-counts"
	OpNLargest        = "dataframe.nlargest"
	OpQuantiles       = "dataframe.quantiles"
	OpQuantileSketch  = "dataframe.quantile-sketch"
	OpGroupQuantiles  = "dataframe.group-quantiles"
	OpGroupNLargest   = "dataframe.group-nlargest"
	OpSortByKeys      = "dataframe.sort-by-keys"
	distinctTreeWidth = 8
)

// QuantileName is the name of the column of the quantiles q in the result
// of Series.Quantile and Series.ApproxQuantile.
const QuantileName = "quantile"

// CountName is the name of the count column of ValueCounts.
const CountName = distinct.CountName

// distinctParams are the params of the ops of this file; each op reads
// the fields it needs.
type distinctParams struct {
	// Schema is of the op's inputs, for when there are none.
	Schema []byte `json:"schema,omitempty"`
	// Out is the schema of the result, for a reduction with no input.
	Out      []byte                  `json:"out,omitempty"`
	Stage    string                  `json:"stage,omitempty"` // "partial", "merge" or "final"
	Cols     []string                `json:"cols,omitempty"`
	Keys     []string                `json:"keys,omitempty"`
	Keep     distinct.Keep           `json:"keep,omitempty"`
	N        int                     `json:"n,omitempty"`
	Smallest bool                    `json:"smallest,omitempty"`
	Qs       []float64               `json:"qs,omitempty"`
	Specs    []distinct.QuantileSpec `json:"specs,omitempty"`
	Opts     distinct.GroupOptions   `json:"opts,omitzero"`
	Name     string                  `json:"name,omitempty"` // of the value column of quantiles
	Scalar   bool                    `json:"scalar,omitempty"`
	K        int                     `json:"k,omitempty"`
	Part     int                     `json:"part,omitempty"` // the partition a task works on
	Seed     uint64                  `json:"seed,omitempty"`
}

// ---- Series ----

// Median is the exact median of a numeric Series (the 0.5 quantile, with
// linear interpolation), as a float64; nulls and NaNs are skipped, and the
// median of no values is NaN, as in pandas. It runs as Quantile does.
func (s Series) Median() Scalar {
	d, err := s.quantiles("Median", []float64{0.5}, true)
	if err != nil {
		return Scalar{df: errFrame(err)}
	}
	return Scalar{df: d}
}

// Quantile computes exact quantiles of a numeric Series, as pandas'
// Series.quantile(qs) with linear interpolation: a frame of one row per q,
// in the order given, with the columns QuantileName (q) and the Series'
// name (the quantile, float64). Nulls and NaNs are skipped; the quantiles
// of no values are NaN. Each q must be in [0, 1].
//
// Memory: a Series of one partition is handled in one task, which copies
// the values (8 bytes each) and selects the quantiles in linear time. A
// Series of several partitions is sorted first (a range shuffle on disk,
// within the executor's memory budget, as SortValues); then each sorted
// partition counts its values and gives the few values at the ranks the
// quantiles need, so no task holds more than one sorted partition. That
// costs a sort, unless the column is the index (see SetIndex), whose
// partitions are sorted already; ApproxQuantile answers in one pass,
// within a documented rank error.
func (s Series) Quantile(qs ...float64) DataFrame {
	d, err := s.quantiles("Quantile", qs, false)
	if err != nil {
		return errFrame(err)
	}
	return d
}

// checkNumeric returns an error naming the column and its type when it is
// not numeric.
func checkNumeric(op string, schema *arrow.Schema, col string) error {
	i, err := fieldIndex(schema, col)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if t := schema.Field(i).Type; !isNumeric(t) {
		return fmt.Errorf("%s of column %q of type %s: want integers or floats", op, col, t)
	}
	return nil
}

func checkQs(op string, qs []float64) error {
	if len(qs) == 0 {
		return fmt.Errorf("%s: no quantiles given", op)
	}
	for _, q := range qs {
		if !(q >= 0 && q <= 1) {
			return fmt.Errorf("%s: quantile %v is not in [0, 1]", op, q)
		}
	}
	return nil
}

func (s Series) quantiles(op string, qs []float64, scalar bool) (DataFrame, error) {
	if err := s.df.Err(); err != nil {
		return DataFrame{}, err
	}
	name := s.Name()
	if err := checkNumeric(op, s.df.Schema(), name); err != nil {
		return DataFrame{}, err
	}
	if err := checkQs(op, qs); err != nil {
		return DataFrame{}, err
	}
	schema, err := quantileSchema(op, name, scalar)
	if err != nil {
		return DataFrame{}, err
	}
	in, err := encodeSchema(s.df.Schema())
	if err != nil {
		return DataFrame{}, err
	}
	p := distinctParams{Schema: in, Qs: slices.Clone(qs), Name: name, Scalar: scalar}
	if s.df.NPartitions() <= 1 {
		return custom(schema, &customPlan{
			what:   fmt.Sprintf("%s of %s %v (one partition: selection in one task)", op, name, qs),
			params: p,
			count:  func([]int) int { return 1 },
			lower: func(l *lowerer, token string, ins [][]graph.Key) ([]graph.Key, error) {
				k, err := l.task("quantiles", token, OpQuantiles, p, ins[0])
				return []graph.Key{k}, err
			},
		}, s.df.n), nil
	}
	// Only the values are sorted: nulls and NaNs are left out first.
	valid := Col(name).IsNotNull()
	if t := s.Type().ID(); t == arrow.FLOAT32 || t == arrow.FLOAT64 {
		valid = Col(name).IsNaN().Not()
	}
	sorted, how := s.df.Filter(valid), "already sorted by the index"
	if s.df.n.index != name || s.df.n.divisions == nil {
		sorted, how = sorted.SortValues(name), "sorted"
	}
	if err := sorted.Err(); err != nil {
		return DataFrame{}, fmt.Errorf("%s: %w", op, err)
	}
	return custom(schema, &customPlan{
		what:   fmt.Sprintf("%s of %s %v (%s, then the values at the ranks picked)", op, name, qs, how),
		params: p,
		count:  func([]int) int { return 1 },
		lower: func(l *lowerer, token string, ins [][]graph.Key) ([]graph.Key, error) {
			parts := ins[0]
			counts := make([]graph.Key, len(parts))
			pc := p
			pc.Stage = "count"
			for i, k := range parts {
				var err error
				if counts[i], err = l.task("quantile-count", token, OpQuantiles, pc, []graph.Key{k}, i); err != nil {
					return nil, err
				}
			}
			picks := make([]graph.Key, len(parts))
			for i, k := range parts {
				pp := p
				pp.Stage, pp.Part = "pick", i
				var err error
				deps := append([]graph.Key{k}, counts...)
				if picks[i], err = l.task("quantile-pick", token, OpQuantiles, pp, deps, i); err != nil {
					return nil, err
				}
			}
			pf := p
			pf.Stage = "final"
			k, err := l.task("quantile-final", token, OpQuantiles, pf, append(picks, counts...))
			return []graph.Key{k}, err
		},
	}, sorted.n), nil
}

// quantileRanks returns the ranks (0-based, among n sorted values) that
// the linear quantile q reads, and the position h between them, as
// numpy's percentile computes them.
func quantileRanks(n int64, q float64) (lo, hi int64, h float64) {
	h = float64(n)*q + (1 - q) - 1
	h = min(max(h, 0), float64(n-1))
	return int64(math.Floor(h)), int64(math.Ceil(h)), h
}

// lerpNumpy interpolates from the nearer end, as numpy does.
func lerpNumpy(a, b, t float64) float64 {
	d := b - a
	if t >= 0.5 {
		return b - d*(1-t)
	}
	return a + d*t
}

func quantileSchema(op, name string, scalar bool) (*arrow.Schema, error) {
	if scalar {
		return arrow.NewSchema([]arrow.Field{{Name: name, Type: arrow.PrimitiveTypes.Float64, Nullable: true}}, nil), nil
	}
	if name == QuantileName {
		return nil, fmt.Errorf("%s: the column is named %q like the column of the quantiles; rename it first", op, name)
	}
	return arrow.NewSchema([]arrow.Field{
		{Name: QuantileName, Type: arrow.PrimitiveTypes.Float64},
		{Name: name, Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil), nil
}

// quantileRecord makes the result of Quantile or Median.
func quantileRecord(p distinctParams, values []float64, mem memory.Allocator) arrow.RecordBatch {
	schema, _ := quantileSchema("", p.Name, p.Scalar)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	if p.Scalar {
		b.Field(0).(*array.Float64Builder).AppendValues(values, nil)
	} else {
		b.Field(0).(*array.Float64Builder).AppendValues(p.Qs, nil)
		b.Field(1).(*array.Float64Builder).AppendValues(values, nil)
	}
	return b.NewRecordBatch()
}

// DefaultSketchK is the accuracy parameter of the sketch of
// ApproxQuantile: its rank error is at most 1.33% of the values (see
// ApproxQuantile).
const DefaultSketchK = sketch.DefaultK

// ApproxQuantile computes approximate quantiles of a numeric Series in
// one pass over the data and little memory, as Quantile would give them
// (the same frame: QuantileName, then the Series' name), through a KLL
// sketch (Karnin, Lang and Liberty 2016) made per partition and merged.
//
// Error bound: the value returned for q has a rank (the fraction of the
// values at most it) within ε of q, with ε = 2.296/k^0.9723 = 1.33% for
// the sketch's k = DefaultSketchK, with 99% confidence for each quantile,
// whatever the distribution of the values (skewed, heavy-tailed, with
// duplicates) and however they are partitioned. The bound is on ranks,
// not values: between two far apart values the quantile may be anywhere in
// the gap. The answer is always one of the values (no interpolation); up
// to about 2k = 400 values the sketch holds them all and its rank is
// exact; q = 0 and q = 1 give the exact minimum and maximum. Each partition
// keeps about 3k values (5 KiB) whatever its size. Nulls and NaNs are
// skipped; with no values the quantiles are NaN.
func (s Series) ApproxQuantile(qs ...float64) DataFrame {
	if err := s.df.Err(); err != nil {
		return s.df
	}
	const op = "ApproxQuantile"
	name := s.Name()
	if err := checkNumeric(op, s.df.Schema(), name); err != nil {
		return errFrame(err)
	}
	if err := checkQs(op, qs); err != nil {
		return errFrame(err)
	}
	schema, err := quantileSchema(op, name, false)
	if err != nil {
		return errFrame(err)
	}
	in, err := encodeSchema(s.df.Schema())
	if err != nil {
		return errFrame(err)
	}
	p := distinctParams{Schema: in, Qs: slices.Clone(qs), Name: name, K: DefaultSketchK}
	return custom(schema, &customPlan{
		what:   fmt.Sprintf("ApproxQuantile of %s %v (KLL sketch, k=%d, rank error %.2f%%)", name, qs, p.K, 100*sketch.RankError(p.K)),
		params: p,
		count:  func([]int) int { return 1 },
		lower: func(l *lowerer, token string, ins [][]graph.Key) ([]graph.Key, error) {
			return stagedReduce(l, token, "quantile-sketch", "approx-quantile", OpQuantileSketch, p, ins[0], true)
		},
	}, s.df.n)
}

// Unique returns the distinct values of the Series, null included once,
// in the order they first appear, as pandas' unique: one partition. The
// distinct values of each partition are combined in a tree, so the
// distinct values (not the whole column) must fit in one task's memory.
func (s Series) Unique() Series {
	if s.df.err != nil {
		return s
	}
	return Series{df: s.df.reduceRows("Unique", "unique", OpDropDuplicates,
		distinctParams{Cols: []string{s.Name()}, Keep: distinct.KeepFirst}, s.df.Schema())}
}

// ValueCounts counts each distinct value of the Series, as pandas'
// value_counts: a frame of one partition with the Series' name and
// CountName (int64), largest count first (equal counts in the order the
// values first appear). Nulls are not counted. See DataFrame.ValueCounts.
func (s Series) ValueCounts() DataFrame {
	if s.df.err != nil {
		return s.df
	}
	return s.df.ValueCounts(s.Name())
}

// NLargest returns the n largest values of the Series, largest first, as
// pandas' nlargest (nulls and NaNs rank below every value); see
// DataFrame.NLargest.
func (s Series) NLargest(n int) Series {
	if s.df.err != nil {
		return s
	}
	return Series{df: s.df.NLargest(n, s.Name())}
}

// NSmallest returns the n smallest values of the Series, smallest first.
func (s Series) NSmallest(n int) Series {
	if s.df.err != nil {
		return s
	}
	return Series{df: s.df.NSmallest(n, s.Name())}
}

// ---- DataFrame ----

// reduceRows adds a tree reduction running op on each partition, then
// on the concatenation of up to eight results at a time, down to one
// partition whose schema is out. p.Schema is set to out.
func (df DataFrame) reduceRows(op, prefix, opName string, p distinctParams, out *arrow.Schema) DataFrame {
	b, err := encodeSchema(out)
	if err != nil {
		return df.fail(op, err)
	}
	p.Schema = b
	return custom(out, &customPlan{
		what:   fmt.Sprintf("%s %s", op, strings.Join(p.Cols, ", ")),
		params: p,
		count:  func([]int) int { return 1 },
		lower: func(l *lowerer, token string, ins [][]graph.Key) ([]graph.Key, error) {
			parts := make([]graph.Key, len(ins[0]))
			for i, k := range ins[0] {
				var err error
				if parts[i], err = l.task(prefix, token, opName, p, []graph.Key{k}, i); err != nil {
					return nil, err
				}
			}
			merged, err := l.tree(prefix+"-merge", token, opName, p, parts, distinctTreeWidth)
			if err != nil {
				return nil, err
			}
			if len(merged) == 1 {
				return merged, nil
			}
			k, err := l.task(prefix+"-final", token, opName, p, merged)
			return []graph.Key{k}, err
		},
	}, df.n)
}

// Keep values for DropDuplicates, as pandas' keep=.
const (
	KeepFirst = "first" // keep the first of equal rows (the default, "")
	KeepLast  = "last"  // keep the last
	KeepNone  = "none"  // drop every row that has a duplicate (pandas' keep=False)
)

// DropDuplicates removes the rows equal to another on the columns subset
// (all columns when empty), as pandas' drop_duplicates: of equal rows it
// keeps the first (keep KeepFirst or ""), the last (KeepLast) or none
// (KeepNone), in row order. Nulls equal nulls and NaN equals NaN.
//
// With several partitions, the rows are hash-shuffled by the subset (on
// disk, within the memory budget) so that equal rows meet; the result has
// as many partitions as the input, and the rows of each are in their
// original relative order, but the partitions no longer follow the input's
// order. With first or last, each partition drops its own duplicates
// before the shuffle.
func (df DataFrame) DropDuplicates(subset []string, keep string) DataFrame {
	if df.err != nil {
		return df
	}
	const op = "DropDuplicates"
	k := distinct.Keep(keep)
	switch keep {
	case "":
		k = distinct.KeepFirst
	case KeepFirst, KeepLast, KeepNone:
	default:
		return df.fail(op, fmt.Errorf("keep %q: want %q, %q or %q", keep, KeepFirst, KeepLast, KeepNone))
	}
	for _, c := range subset {
		if _, err := fieldIndex(df.Schema(), c); err != nil {
			return df.fail(op, err)
		}
	}
	cols := slices.Clone(subset)
	if len(cols) == 0 {
		cols = df.Columns()
	}
	if len(cols) == 0 {
		return df.fail(op, errors.New("the frame has no columns"))
	}
	schema, err := encodeSchema(df.Schema())
	if err != nil {
		return df.fail(op, err)
	}
	p := distinctParams{Schema: schema, Cols: cols, Keep: k}
	perPartition := func(in *node, what string) DataFrame {
		return custom(df.Schema(), &customPlan{
			what:   what,
			params: p,
			count:  func(ins []int) int { return ins[0] },
			lower: func(l *lowerer, token string, ins [][]graph.Key) ([]graph.Key, error) {
				out := make([]graph.Key, len(ins[0]))
				for i, key := range ins[0] {
					var err error
					if out[i], err = l.task("drop-duplicates", token, OpDropDuplicates, p, []graph.Key{key}, i); err != nil {
						return nil, err
					}
				}
				return out, nil
			},
		}, in)
	}
	desc := fmt.Sprintf("DropDuplicates on [%s] keep %s", strings.Join(cols, ", "), k)
	n := df.NPartitions()
	if n <= 1 {
		return perPartition(df.n, desc)
	}
	in := df.n
	if k != distinct.KeepNone {
		in = perPartition(in, desc+" (within each partition)").n
	}
	shuf := &node{kind: kindShuffle, schema: df.Schema(), inputs: []*node{in}, nparts: n,
		shuf: &shufflePlan{hash: cols, outputs: n}}
	return perPartition(shuf, desc+fmt.Sprintf(" (after a hash shuffle into %d partitions)", n))
}

// ValueCounts counts the rows of each distinct tuple of the columns, as
// pandas' DataFrame.value_counts(cols): a frame of one partition with the
// columns then CountName (int64), largest count first (equal counts in the
// order the tuples first appear). Rows with a null (or NaN) in any of the
// columns are not counted (pandas' dropna=True). Each partition is counted
// apart and the counts are added up in a tree, so the distinct tuples
// (not the rows) must fit in one task's memory.
func (df DataFrame) ValueCounts(cols ...string) DataFrame {
	if df.err != nil {
		return df
	}
	const op = "ValueCounts"
	if len(cols) == 0 {
		cols = df.Columns()
	}
	var fields []arrow.Field
	for _, c := range cols {
		i, err := fieldIndex(df.Schema(), c)
		if err != nil {
			return df.fail(op, err)
		}
		if c == CountName {
			return df.fail(op, fmt.Errorf("column %q has the name of the count column; rename it first", c))
		}
		fields = append(fields, df.Schema().Field(i))
	}
	fields = append(fields, arrow.Field{Name: CountName, Type: arrow.PrimitiveTypes.Int64})
	out := arrow.NewSchema(fields, nil)
	in := df.Select(toAny(cols)...)
	if in.err != nil {
		return df.fail(op, in.err)
	}
	inSchema, err := encodeSchema(in.Schema())
	if err != nil {
		return df.fail(op, err)
	}
	outSchema, err := encodeSchema(out)
	if err != nil {
		return df.fail(op, err)
	}
	p := distinctParams{Schema: inSchema, Out: outSchema, Cols: slices.Clone(cols)}
	return custom(out, &customPlan{
		what:   fmt.Sprintf("ValueCounts of [%s]", strings.Join(cols, ", ")),
		params: p,
		count:  func([]int) int { return 1 },
		lower: func(l *lowerer, token string, ins [][]graph.Key) ([]graph.Key, error) {
			return stagedReduce(l, token, "value-counts", "value-counts-final", OpValueCounts, p, ins[0], false)
		},
	}, in.n)
}

// stagedReduce adds the tasks of a reduction in three stages of op: a
// "partial" task per partition (each with its own seed when seeded), a
// tree of "merge" tasks and a "final" task, named prefix, prefix-merge and
// final.
func stagedReduce(l *lowerer, token, prefix, final, op string, p distinctParams, parts []graph.Key, seeded bool) ([]graph.Key, error) {
	partials := make([]graph.Key, len(parts))
	for i, k := range parts {
		pp := p
		pp.Stage = "partial"
		if seeded {
			pp.Seed = uint64(i) + 1
		}
		var err error
		if partials[i], err = l.task(prefix, token, op, pp, []graph.Key{k}, i); err != nil {
			return nil, err
		}
	}
	pm := p
	pm.Stage = "merge"
	merged, err := l.tree(prefix+"-merge", token, op, pm, partials, distinctTreeWidth)
	if err != nil {
		return nil, err
	}
	pf := p
	pf.Stage = "final"
	k, err := l.task(final, token, op, pf, merged)
	return []graph.Key{k}, err
}

func toAny(cols []string) []any {
	out := make([]any, len(cols))
	for i, c := range cols {
		out[i] = c
	}
	return out
}

// NLargest returns the n rows with the largest values of the columns
// cols, largest first, as pandas' nlargest(n, cols): rows compare on the
// first column, ties on the next; of rows equal on all of them, the first
// ones make the cut. Nulls and NaNs rank below every value. Each partition
// keeps its n largest rows and these are combined in a tree: one
// partition of at most n rows.
func (df DataFrame) NLargest(n int, cols ...string) DataFrame {
	return df.nBest("NLargest", n, cols, false)
}

// NSmallest returns the n rows with the smallest values of cols, smallest
// first, as pandas' nsmallest; see NLargest.
func (df DataFrame) NSmallest(n int, cols ...string) DataFrame {
	return df.nBest("NSmallest", n, cols, true)
}

func checkOrdered(op string, schema *arrow.Schema, cols []string) error {
	if len(cols) == 0 {
		return fmt.Errorf("%s: no columns given", op)
	}
	for _, c := range cols {
		i, err := fieldIndex(schema, c)
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		if t := schema.Field(i).Type; !isOrdered(t) {
			return fmt.Errorf("%s of column %q of type %s: its values cannot be ordered", op, c, t)
		}
	}
	return nil
}

func (df DataFrame) nBest(op string, n int, cols []string, smallest bool) DataFrame {
	if df.err != nil {
		return df
	}
	if err := checkOrdered(op, df.Schema(), cols); err != nil {
		return errFrame(err)
	}
	if n < 0 {
		return df.fail(op, fmt.Errorf("n is %d; want n >= 0", n))
	}
	return df.reduceRows(op+fmt.Sprintf(" %d of", n), strings.ToLower(op), OpNLargest,
		distinctParams{Cols: slices.Clone(cols), N: n, Smallest: smallest, Keep: distinct.KeepFirst}, df.Schema())
}

// ---- GroupBy ----

// Median computes the exact median per group of the given columns (all
// numeric non-key columns when none), as pandas' groupby(keys).median():
// one row per group, the keys then one float64 column per column. Nulls
// and NaNs are skipped; a group with no values gets null.
//
// The rows (keys and the columns only) are hash-shuffled by the keys on
// disk, so that each group is whole in one partition, and each shuffled
// partition computes the medians of its groups by selection: memory is
// bounded by the executor's budget and the size of one shuffled partition,
// not by the data (SplitOut(n) makes more, smaller partitions; one group
// must fit in a task's memory). The result is sorted by the keys, in one partition,
// unless Sort(false) or SplitOut(n) with n > 1 is set, when it keeps the
// shuffle's partitions.
func (g GroupBy) Median(cols ...string) DataFrame {
	return g.quantiles("GroupBy.Median", 0.5, cols)
}

// Quantile computes the exact q-quantile (linear interpolation) per group
// of the given columns (all numeric non-key columns when none), as
// pandas' groupby(keys).quantile(q); it runs as Median does.
func (g GroupBy) Quantile(q float64, cols ...string) DataFrame {
	return g.quantiles("GroupBy.Quantile", q, cols)
}

func (g GroupBy) quantiles(op string, q float64, cols []string) DataFrame {
	if g.err != nil {
		return errFrame(g.err)
	}
	if err := checkQs(op, []float64{q}); err != nil {
		return errFrame(err)
	}
	schema := g.df.Schema()
	if len(cols) == 0 {
		for _, f := range schema.Fields() {
			if !slices.Contains(g.keys, f.Name) && isNumeric(f.Type) {
				cols = append(cols, f.Name)
			}
		}
		if len(cols) == 0 {
			return errFrame(fmt.Errorf("%s: no numeric column besides the keys %v", op, g.keys))
		}
	}
	var specs []distinct.QuantileSpec
	fields := make([]arrow.Field, 0, len(g.keys)+len(cols))
	for _, k := range g.keys {
		i, _ := fieldIndex(schema, k)
		fields = append(fields, schema.Field(i))
	}
	seen := map[string]bool{}
	for _, k := range g.keys {
		seen[k] = true
	}
	var use []string
	for _, c := range cols {
		if err := checkNumeric(op, schema, c); err != nil {
			return errFrame(err)
		}
		if seen[c] {
			return errFrame(fmt.Errorf("%s: column %q is given twice or is a key", op, c))
		}
		seen[c] = true
		use = append(use, c)
		specs = append(specs, distinct.QuantileSpec{Column: c, Q: q})
		fields = append(fields, arrow.Field{Name: c, Type: arrow.PrimitiveTypes.Float64, Nullable: true})
	}
	in := g.df.Select(toAny(append(slices.Clone(g.keys), use...))...)
	if in.err != nil {
		return errFrame(in.err)
	}
	p := distinctParams{Keys: slices.Clone(g.keys), Specs: specs}
	return g.perGroup(op+fmt.Sprintf(" q=%v of [%s]", q, strings.Join(use, ", ")), in, arrow.NewSchema(fields, nil),
		"group-quantiles", OpGroupQuantiles, p)
}

// NLargest returns, for each group, the n rows with the largest values
// of col, largest first (of equal values, the first rows), as pandas'
// groupby(keys).apply(lambda g: g.nlargest(n, col)): every column, the
// rows of each group together. Nulls and NaNs rank below every value.
// Groups are whole in one partition after a hash shuffle by the keys (on
// disk); the result is in one partition sorted by the keys unless
// Sort(false) or SplitOut(n) with n > 1 is set.
func (g GroupBy) NLargest(n int, col string) DataFrame {
	return g.nBest("GroupBy.NLargest", n, col, false)
}

// NSmallest is NLargest for the n smallest values of col per group.
func (g GroupBy) NSmallest(n int, col string) DataFrame {
	return g.nBest("GroupBy.NSmallest", n, col, true)
}

func (g GroupBy) nBest(op string, n int, col string, smallest bool) DataFrame {
	if g.err != nil {
		return errFrame(g.err)
	}
	if err := checkOrdered(op, g.df.Schema(), []string{col}); err != nil {
		return errFrame(err)
	}
	if n < 0 {
		return errFrame(fmt.Errorf("%s: n is %d; want n >= 0", op, n))
	}
	p := distinctParams{Keys: slices.Clone(g.keys), Cols: []string{col}, N: n, Smallest: smallest, Keep: distinct.KeepFirst}
	return g.perGroup(fmt.Sprintf("%s %d of %s", op, n, col), g.df, g.df.Schema(), "group-nlargest", OpGroupNLargest, p)
}

// perGroup shuffles in by the keys (unless it has one partition) and runs
// opName on each partition; with sorting, one more task concatenates the
// results and sorts them by the keys.
func (g GroupBy) perGroup(what string, in DataFrame, out *arrow.Schema, prefix, opName string, p distinctParams) DataFrame {
	sorted := g.splitOut <= 1
	if g.sort != nil {
		sorted = *g.sort
	}
	p.Opts = distinct.GroupOptions{DropNullKeys: !g.keepNull}
	inSchema, err := encodeSchema(in.Schema())
	if err != nil {
		return errFrame(err)
	}
	outSchema, err := encodeSchema(out)
	if err != nil {
		return errFrame(err)
	}
	p.Schema = inSchema
	n := g.splitOut
	if n <= 0 {
		n = in.NPartitions()
	}
	base := in.n
	desc := what + " (one partition: no shuffle)"
	if in.NPartitions() > 1 || n > 1 {
		base = &node{kind: kindShuffle, schema: in.Schema(), inputs: []*node{in.n}, nparts: n,
			shuf: &shufflePlan{hash: slices.Clone(g.keys), outputs: n}}
		desc = what + fmt.Sprintf(" (hash shuffle by [%s] into %d partitions)", strings.Join(g.keys, ", "), n)
	}
	if sorted {
		desc += ", sorted by the keys"
	}
	keys := make([]SortKey, len(g.keys))
	for i, k := range g.keys {
		keys[i] = Asc(k)
	}
	return custom(out, &customPlan{
		what:   desc,
		params: p,
		count: func(ins []int) int {
			if sorted {
				return 1
			}
			return ins[0]
		},
		lower: func(l *lowerer, token string, ins [][]graph.Key) ([]graph.Key, error) {
			parts := make([]graph.Key, len(ins[0]))
			for i, k := range ins[0] {
				var err error
				if parts[i], err = l.task(prefix, token, opName, p, []graph.Key{k}, i); err != nil {
					return nil, err
				}
			}
			if !sorted {
				return parts, nil
			}
			k, err := l.task(prefix+"-sort", token, OpSortByKeys, sortParams{Schema: outSchema, Keys: keys}, parts)
			return []graph.Key{k}, err
		},
	}, base)
}

type sortParams struct {
	Schema []byte    `json:"schema"`
	Keys   []SortKey `json:"keys"`
}

// ---- ops ----

func decodeParams(in graph.OpInput) (distinctParams, error) {
	var p distinctParams
	if err := json.Unmarshal(in.Params, &p); err != nil {
		return p, fmt.Errorf("decode params: %w", err)
	}
	return p, nil
}

// concatOf concatenates the task's inputs, of the schema encoded in b.
func concatOf(in graph.OpInput, b []byte) (arrow.RecordBatch, error) {
	var schema *arrow.Schema
	if b != nil {
		var err error
		if schema, err = decodeSchema(b); err != nil {
			return nil, err
		}
	}
	return concatInputs(in.Inputs, schema, allocator)
}

func runDropDuplicates(ctx context.Context, in graph.OpInput) (any, error) {
	p, err := decodeParams(in)
	if err != nil {
		return nil, err
	}
	rec, err := concatOf(in, p.Schema)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	return distinct.DropDuplicates(ctx, rec, p.Cols, p.Keep, allocator)
}

func runNLargest(ctx context.Context, in graph.OpInput) (any, error) {
	p, err := decodeParams(in)
	if err != nil {
		return nil, err
	}
	rec, err := concatOf(in, p.Schema)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	if p.Smallest {
		return distinct.NSmallest(ctx, rec, p.N, p.Cols, p.Keep, allocator)
	}
	return distinct.NLargest(ctx, rec, p.N, p.Cols, p.Keep, allocator)
}

func runValueCounts(ctx context.Context, in graph.OpInput) (any, error) {
	p, err := decodeParams(in)
	if err != nil {
		return nil, err
	}
	if p.Stage == "partial" {
		rec, err := concatOf(in, p.Schema)
		if err != nil {
			return nil, err
		}
		defer rec.Release()
		return distinct.ValueCounts(ctx, rec, p.Cols, true, allocator)
	}
	recs, err := recordInputs(in)
	if err != nil {
		return nil, err
	}
	var merged arrow.RecordBatch
	if len(recs) == 0 {
		out, err := decodeSchema(p.Out)
		if err != nil {
			return nil, err
		}
		merged = emptyRecord(out, allocator)
	} else if merged, err = distinct.MergeCounts(ctx, recs, p.Cols, allocator); err != nil {
		return nil, err
	}
	if p.Stage != "final" {
		return merged, nil
	}
	defer merged.Release()
	return distinct.SortCounts(ctx, merged, false, allocator)
}

func runQuantiles(ctx context.Context, in graph.OpInput) (any, error) {
	p, err := decodeParams(in)
	if err != nil {
		return nil, err
	}
	switch p.Stage {
	case "count":
		return quantileCount(in, p)
	case "pick":
		return quantilePick(in, p)
	case "final":
		return quantileFinal(in, p)
	}
	rec, err := concatOf(in, p.Schema)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	if rec.NumCols() != 1 {
		return nil, fmt.Errorf("quantiles of %d columns, want 1", rec.NumCols())
	}
	qs, err := distinct.Quantiles(ctx, rec.Column(0), p.Qs, distinct.Linear)
	if err != nil {
		return nil, fmt.Errorf("quantiles of %q: %w", p.Name, err)
	}
	return quantileRecord(p, qs, allocator), nil
}

var (
	countSchema = arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil)
	pickSchema  = arrow.NewSchema([]arrow.Field{
		{Name: "rank", Type: arrow.PrimitiveTypes.Int64},
		{Name: "value", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
)

// sortedValue returns the value of row i of a numeric column as a
// float64, and whether it is a value (not null, not NaN).
func sortedValue(a arrow.Array, i int) (float64, bool) {
	if a.IsNull(i) {
		return 0, false
	}
	var x float64
	switch c := a.(type) {
	case *array.Int8:
		x = float64(c.Value(i))
	case *array.Int16:
		x = float64(c.Value(i))
	case *array.Int32:
		x = float64(c.Value(i))
	case *array.Int64:
		x = float64(c.Value(i))
	case *array.Uint8:
		x = float64(c.Value(i))
	case *array.Uint16:
		x = float64(c.Value(i))
	case *array.Uint32:
		x = float64(c.Value(i))
	case *array.Uint64:
		x = float64(c.Value(i))
	case *array.Float32:
		x = float64(c.Value(i))
	case *array.Float64:
		x = c.Value(i)
	default:
		return 0, false
	}
	return x, !math.IsNaN(x)
}

// quantileCount counts the values (not null, not NaN) of a sorted
// partition, which come first in it: numbers, then NaNs, then nulls.
func quantileCount(in graph.OpInput, p distinctParams) (any, error) {
	rec, err := concatOf(in, p.Schema)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	col := rec.Column(0)
	var n int64
	for i := range col.Len() {
		if _, ok := sortedValue(col, i); ok {
			n++
		}
	}
	b := array.NewRecordBuilder(allocator, countSchema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).Append(n)
	return b.NewRecordBatch(), nil
}

// countsOf adds up the counts of count records.
func countsOf(inputs []any) ([]int64, error) {
	out := make([]int64, len(inputs))
	for i, v := range inputs {
		r, ok := v.(arrow.RecordBatch)
		if !ok || r.NumCols() != 1 || r.NumRows() != 1 {
			return nil, fmt.Errorf("count input %d is a %T, not a one-value record", i, v)
		}
		c, ok := r.Column(0).(*array.Int64)
		if !ok {
			return nil, fmt.Errorf("count input %d holds a %s column", i, r.Column(0).DataType())
		}
		out[i] = c.Value(0)
	}
	return out, nil
}

// quantilePick gives the values of the sorted partition p.Part at the
// ranks (over all partitions) that the quantiles read. Its inputs are the
// partition, then the counts of every partition.
func quantilePick(in graph.OpInput, p distinctParams) (any, error) {
	if len(in.Inputs) < 1 {
		return nil, errors.New("quantile pick: no input")
	}
	counts, err := countsOf(in.Inputs[1:])
	if err != nil {
		return nil, err
	}
	if p.Part >= len(counts) {
		return nil, fmt.Errorf("quantile pick of partition %d of %d", p.Part, len(counts))
	}
	var total, off int64
	for i, c := range counts {
		if i < p.Part {
			off += c
		}
		total += c
	}
	rec, err := concatOf(graph.OpInput{Inputs: in.Inputs[:1]}, p.Schema)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	col := rec.Column(0)
	b := array.NewRecordBuilder(allocator, pickSchema)
	defer b.Release()
	seen := map[int64]bool{}
	for _, q := range p.Qs {
		if total == 0 {
			break
		}
		lo, hi, _ := quantileRanks(total, q)
		for _, r := range []int64{lo, hi} {
			if seen[r] || r < off || r >= off+counts[p.Part] {
				continue
			}
			seen[r] = true
			x, ok := sortedValue(col, int(r-off))
			if !ok {
				return nil, fmt.Errorf("quantile pick: row %d of sorted partition %d of %q is not a value", r-off, p.Part, p.Name)
			}
			b.Field(0).(*array.Int64Builder).Append(r)
			b.Field(1).(*array.Float64Builder).Append(x)
		}
	}
	return b.NewRecordBatch(), nil
}

// quantileFinal interpolates the quantiles from the values picked. Its
// inputs are the picks of every partition, then their counts.
func quantileFinal(in graph.OpInput, p distinctParams) (any, error) {
	m := len(in.Inputs) / 2
	counts, err := countsOf(in.Inputs[m:])
	if err != nil {
		return nil, err
	}
	var total int64
	for _, c := range counts {
		total += c
	}
	at := map[int64]float64{}
	for i, v := range in.Inputs[:m] {
		r, ok := v.(arrow.RecordBatch)
		if !ok || r.NumCols() != 2 {
			return nil, fmt.Errorf("pick input %d is a %T, not a record of ranks and values", i, v)
		}
		ranks, ok1 := r.Column(0).(*array.Int64)
		vals, ok2 := r.Column(1).(*array.Float64)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("pick input %d has columns %s", i, r.Schema())
		}
		for j := range ranks.Len() {
			at[ranks.Value(j)] = vals.Value(j)
		}
	}
	out := make([]float64, len(p.Qs))
	for i, q := range p.Qs {
		if total == 0 {
			out[i] = math.NaN()
			continue
		}
		lo, hi, h := quantileRanks(total, q)
		x, ok1 := at[lo]
		y, ok2 := at[hi]
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("quantile %v of %q: the values of ranks %d and %d were not picked", q, p.Name, lo, hi)
		}
		if lo == hi {
			out[i] = x
		} else {
			out[i] = lerpNumpy(x, y, h-float64(lo))
		}
	}
	return quantileRecord(p, out, allocator), nil
}

// sketchSchema holds an encoded sketch in the records that carry partial
// sketches between tasks.
var sketchSchema = arrow.NewSchema([]arrow.Field{{Name: "sketch", Type: arrow.BinaryTypes.Binary}}, nil)

func runQuantileSketch(ctx context.Context, in graph.OpInput) (any, error) {
	p, err := decodeParams(in)
	if err != nil {
		return nil, err
	}
	seed := p.Seed
	if p.Stage != "partial" { // the merges of a tree flip their own coins
		h := fnv.New64a()
		h.Write([]byte(in.Key))
		seed = h.Sum64()
	}
	s := sketch.New(p.K, seed)
	if p.Stage == "partial" {
		rec, err := concatOf(in, p.Schema)
		if err != nil {
			return nil, err
		}
		defer rec.Release()
		if err := s.AddArray(rec.Column(0)); err != nil {
			return nil, fmt.Errorf("sketch of %q: %w", p.Name, err)
		}
	} else {
		recs, err := recordInputs(in)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			col, ok := r.Column(0).(*array.Binary)
			if !ok {
				return nil, fmt.Errorf("sketch input holds a %s column", r.Column(0).DataType())
			}
			for i := range col.Len() {
				var o sketch.Quantiles
				if err := o.UnmarshalBinary(col.Value(i)); err != nil {
					return nil, fmt.Errorf("decode sketch: %w", err)
				}
				s.Merge(&o)
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if p.Stage == "final" {
		return quantileRecord(p, s.Quantiles(p.Qs...), allocator), nil
	}
	b, err := s.MarshalBinary()
	if err != nil {
		return nil, err
	}
	bld := array.NewRecordBuilder(allocator, sketchSchema)
	defer bld.Release()
	bld.Field(0).(*array.BinaryBuilder).Append(b)
	return bld.NewRecordBatch(), nil
}

func runGroupQuantiles(ctx context.Context, in graph.OpInput) (any, error) {
	p, err := decodeParams(in)
	if err != nil {
		return nil, err
	}
	rec, err := concatOf(in, p.Schema)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	return distinct.GroupQuantiles(ctx, rec, p.Keys, p.Specs, distinct.Linear, p.Opts, allocator)
}

func runGroupNLargest(ctx context.Context, in graph.OpInput) (any, error) {
	p, err := decodeParams(in)
	if err != nil {
		return nil, err
	}
	rec, err := concatOf(in, p.Schema)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	if p.Smallest {
		return distinct.GroupNSmallest(ctx, rec, p.Keys, p.N, p.Cols, p.Keep, p.Opts, allocator)
	}
	return distinct.GroupNLargest(ctx, rec, p.Keys, p.N, p.Cols, p.Keep, p.Opts, allocator)
}

func runSortByKeys(ctx context.Context, in graph.OpInput) (any, error) {
	var p sortParams
	if err := json.Unmarshal(in.Params, &p); err != nil {
		return nil, fmt.Errorf("decode params: %w", err)
	}
	rec, err := concatOf(in, p.Schema)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	return sortk.Sort(ctx, rec, p.Keys, allocator)
}
