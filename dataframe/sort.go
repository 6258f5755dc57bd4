package dataframe

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/shoal-data/shoal/dataframe/internal/sortk"
	"github.com/shoal-data/shoal/graph"
)

// Asc orders by a column, smallest first, nulls last.
func Asc(col string) SortKey { return SortKey{Column: col} }

// Desc orders by a column, largest first, nulls last.
func Desc(col string) SortKey { return SortKey{Column: col, Descending: true} }

func sortKeysOf(op string, schema *arrow.Schema, by []any) ([]SortKey, error) {
	if len(by) == 0 {
		return nil, fmt.Errorf("%s: no sort keys given", op)
	}
	keys := make([]SortKey, len(by))
	for i, b := range by {
		switch x := b.(type) {
		case string:
			keys[i] = Asc(x)
		case SortKey:
			keys[i] = x
		default:
			return nil, fmt.Errorf("%s: argument %d is a %T; pass column names or SortKeys (Asc, Desc)", op, i, b)
		}
		if _, err := fieldIndex(schema, keys[i].Column); err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
	}
	return keys, nil
}

// SortValues sorts the rows by columns (names sort ascending; use Asc,
// Desc or a SortKey for more), over all partitions: the rows of partition
// i all come before those of partition i+1. It samples the keys, computes
// boundaries from the sample and range-shuffles the rows into as many
// partitions, each sorted. Data larger than memory is sorted on disk.
func (df DataFrame) SortValues(by ...any) DataFrame {
	if df.err != nil {
		return df
	}
	keys, err := sortKeysOf("SortValues", df.Schema(), by)
	if err != nil {
		return errFrame(err)
	}
	return df.derive(&node{kind: kindShuffle, schema: df.Schema(), nparts: df.NPartitions(),
		shuf: &shufflePlan{sort: keys, outputs: df.NPartitions(), sorted: true}})
}

// Shuffle moves rows so that rows with equal values of the columns are
// in the same partition, spread over n partitions (n <= 0: as many as
// now).
func (df DataFrame) Shuffle(n int, cols ...string) DataFrame {
	if df.err != nil {
		return df
	}
	if len(cols) == 0 {
		return df.fail("Shuffle", fmt.Errorf("no columns given"))
	}
	for _, c := range cols {
		if _, err := fieldIndex(df.Schema(), c); err != nil {
			return df.fail("Shuffle", err)
		}
	}
	if n <= 0 {
		n = df.NPartitions()
	}
	return df.derive(&node{kind: kindShuffle, schema: df.Schema(), nparts: n,
		shuf: &shufflePlan{hash: cols, outputs: n}})
}

// Repartition returns n partitions: runs of partitions are concatenated
// when n is smaller, partitions are cut into row ranges when n is larger.
// Rows keep their order.
func (df DataFrame) Repartition(n int) DataFrame {
	if df.err != nil {
		return df
	}
	have := df.NPartitions()
	switch {
	case n < 1:
		return df.fail("Repartition", fmt.Errorf("%d partitions", n))
	case n == have:
		return df
	case n < have:
		// n runs of consecutive partitions, of sizes differing by one.
		spans := make([]int, n+1)
		for i := range spans {
			spans[i] = i * have / n
		}
		return df.derive(&node{kind: kindCoalesce, schema: df.Schema(), spans: spans, nparts: n})
	}
	k := (n + have - 1) / have
	return df.derive(&node{kind: kindPieces, schema: df.Schema(), pieces: k, nparts: have * k})
}

// IndexOptions tune SetIndex.
type IndexOptions struct {
	// Partitions is the number of partitions of the result; default as
	// many as the input.
	Partitions int
	// Sorted promises that the data is sorted by the column across
	// partitions, which is then only checked, not shuffled.
	Sorted bool
}

// SetIndex sorts the rows by a column and makes it the index: the
// DataFrame then knows its divisions, the range of index values in each
// partition, so that Loc reads only the partitions that can match, and
// time-series operations (Resample, Rolling) need no shuffle.
//
// It computes now, with exec: a pass over the data finds each partition's
// range and a sample of values. Data that is already sorted across
// partitions keeps its partitions; otherwise the divisions come from the
// sample and the rows are range-shuffled and sorted when the result is
// computed.
func (df DataFrame) SetIndex(ctx context.Context, exec graph.Executor, col string, opts ...IndexOptions) (DataFrame, error) {
	if err := df.Err(); err != nil {
		return DataFrame{}, err
	}
	var o IndexOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	i, err := fieldIndex(df.Schema(), col)
	if err != nil {
		return DataFrame{}, fmt.Errorf("SetIndex: %w", err)
	}
	typ := df.Schema().Field(i).Type
	if !isOrdered(typ) || typ.ID() == arrow.BOOL {
		return DataFrame{}, fmt.Errorf("SetIndex: column %q of type %s cannot be an index", col, typ)
	}
	stats, err := df.indexStats(ctx, exec, col)
	if err != nil {
		return DataFrame{}, fmt.Errorf("SetIndex(%q): %w", col, err)
	}
	out := o.Partitions
	if out <= 0 {
		out = df.NPartitions()
	}
	if divs, ok := stats.sortedDivisions(); ok && (o.Sorted || out == df.NPartitions()) {
		n := *df.n
		n.index, n.divisions = col, divs
		n.note = "already sorted by " + col + ": no shuffle"
		return DataFrame{n: &n}, nil
	}
	if o.Sorted {
		return DataFrame{}, fmt.Errorf("SetIndex(%q): the data is not sorted by %s across partitions (partition ranges overlap or rows are out of order)", col, col)
	}
	// Divisions from the sample, then a range shuffle into sorted parts.
	keys := []SortKey{Asc(col)}
	div, err := sortk.Divisions(ctx, stats.sample, keys, out, allocator)
	if err != nil {
		return DataFrame{}, fmt.Errorf("SetIndex(%q): %w", col, err)
	}
	defer div.Release()
	divBytes, err := encodeRecord(div)
	if err != nil {
		return DataFrame{}, err
	}
	bounds := make([]any, 0, div.NumRows()+2)
	bounds = append(bounds, stats.min)
	for r := range int(div.NumRows()) {
		v, err := goValue(div.Column(0), r)
		if err != nil {
			return DataFrame{}, err
		}
		bounds = append(bounds, v)
	}
	bounds = append(bounds, stats.max)
	m := int(div.NumRows()) + 1
	d := df.derive(&node{kind: kindShuffle, schema: df.Schema(), nparts: m,
		shuf: &shufflePlan{sort: keys, divisions: divBytes, outputs: m, sorted: true}})
	d.n.index, d.n.divisions = col, bounds
	return d, nil
}

// indexStats are what SetIndex learns in one pass over the data.
type indexStats struct {
	sorted   []bool // per partition: sorted by the column
	min, max any    // over all partitions (non-null)
	mins     []any  // per partition, nil when empty
	maxs     []any
	nulls    int64
	sample   arrow.RecordBatch
}

// sortedDivisions returns divisions when the partitions are each sorted
// and their ranges follow each other.
func (s *indexStats) sortedDivisions() ([]any, bool) {
	if s.nulls > 0 || len(s.mins) == 0 {
		return nil, false
	}
	var divs []any
	var prevMax any
	for i := range s.mins {
		if !s.sorted[i] || s.mins[i] == nil {
			return nil, false
		}
		// Strictly after the previous partition, so that each partition
		// holds [divisions[i], divisions[i+1]).
		if prevMax != nil && compareValues(s.mins[i], prevMax) <= 0 {
			return nil, false
		}
		divs = append(divs, s.mins[i])
		prevMax = s.maxs[i]
	}
	return append(divs, prevMax), true
}

// compareValues orders two Go values of an index column.
func compareValues(a, b any) int {
	switch x := a.(type) {
	case int64:
		return cmpOrdered(x, b.(int64))
	case uint64:
		return cmpOrdered(x, b.(uint64))
	case float64:
		return cmpOrdered(x, b.(float64))
	case string:
		return cmpOrdered(x, b.(string))
	case time.Time:
		return x.Compare(b.(time.Time))
	case time.Duration:
		return cmpOrdered(x, b.(time.Duration))
	}
	return 0
}

func cmpOrdered[T int64 | uint64 | float64 | string | time.Duration](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// indexStats computes, per partition, whether it is sorted by col, its
// range, and a sample of col.
func (df DataFrame) indexStats(ctx context.Context, exec graph.Executor, col string) (*indexStats, error) {
	sel := df.Select(col)
	// Per partition: the minimum and maximum, the sortedness, a sample.
	l, parts, done, err := sel.lowerFor(exec)
	if err != nil {
		return nil, err
	}
	defer done()
	n := len(parts)
	per := min(max(20*n, 200), 20_000)
	statKeys := make([]graph.Key, n)
	for i, p := range parts {
		statKeys[i] = graph.NewKey("index-stats", graph.TokenizeStrings(string(p), col), i)
		params := []byte(fmt.Sprintf(`{"column":%q,"sample":%d}`, col, per))
		if err := l.g.Add(&graph.Task{Key: statKeys[i], Op: OpIndexStats, Params: params, Deps: []graph.Key{p}}); err != nil {
			return nil, err
		}
	}
	vals, err := exec.Compute(ctx, l.g, statKeys...)
	cleanupShuffles(exec, l.shuffles)
	if err != nil {
		return nil, err
	}
	st := &indexStats{}
	var samples []arrow.RecordBatch
	for _, v := range vals {
		rec, ok := v.(arrow.RecordBatch)
		if !ok {
			return nil, fmt.Errorf("index stats: a %T", v)
		}
		// Rows: 0 = min, 1 = max, then the sample; metadata: sorted, nulls.
		md := rec.Schema().Metadata()
		sorted := md.FindKey("sorted") >= 0 && md.Values()[md.FindKey("sorted")] == "true"
		var nulls int64
		if i := md.FindKey("nulls"); i >= 0 {
			fmt.Sscan(md.Values()[i], &nulls)
		}
		st.nulls += nulls
		st.sorted = append(st.sorted, sorted)
		var lo, hi any
		if rec.NumRows() >= 2 {
			if lo, err = goValue(rec.Column(0), 0); err != nil {
				return nil, err
			}
			if hi, err = goValue(rec.Column(0), 1); err != nil {
				return nil, err
			}
			samples = append(samples, rec.NewSlice(2, rec.NumRows()))
		}
		st.mins = append(st.mins, lo)
		st.maxs = append(st.maxs, hi)
		if lo != nil && (st.min == nil || compareValues(lo, st.min) < 0) {
			st.min = lo
		}
		if hi != nil && (st.max == nil || compareValues(hi, st.max) > 0) {
			st.max = hi
		}
	}
	schema := arrow.NewSchema([]arrow.Field{sel.Schema().Field(0)}, nil)
	clean := make([]arrow.RecordBatch, len(samples))
	for i, s := range samples {
		clean[i] = array.NewRecordBatch(schema, s.Columns(), s.NumRows())
	}
	if st.sample, err = concatRecords(clean, schema, allocator); err != nil {
		return nil, err
	}
	return st, nil
}

// OpIndexStats computes one partition's range, sortedness and sample for
// SetIndex.
const OpIndexStats = "dataframe.index-stats"

func runIndexStats(ctx context.Context, in graph.OpInput) (any, error) {
	var p struct {
		Column string `json:"column"`
		Sample int    `json:"sample"`
	}
	if err := jsonUnmarshal(in.Params, &p); err != nil {
		return nil, err
	}
	rec, ok := in.Inputs[0].(arrow.RecordBatch)
	if !ok {
		return nil, fmt.Errorf("index stats: input is a %T", in.Inputs[0])
	}
	col, err := projectRecord(rec, []string{p.Column})
	if err != nil {
		return nil, err
	}
	defer col.Release()
	keys := []SortKey{Asc(p.Column)}
	sorted, err := sortk.IsSorted(ctx, col, keys)
	if err != nil {
		return nil, err
	}
	nulls := int64(col.Column(0).NullN())
	// The minimum and maximum come from sorting the non-null values'
	// indices; a sorted partition needs no sort.
	var idx []int32
	if n := int(col.NumRows()) - int(nulls); n > 0 {
		if sorted {
			idx = []int32{0, int32(n - 1)}
		} else {
			order, err := sortk.SortIndices(ctx, col, keys)
			if err != nil {
				return nil, err
			}
			idx = []int32{order[0], order[n-1]}
		}
	}
	sample, err := sampleRows(col, []string{p.Column}, p.Sample, allocator)
	if err != nil {
		return nil, err
	}
	defer sample.Release()
	bounds, err := sortk.Take(ctx, col, idx, allocator)
	if err != nil {
		return nil, err
	}
	defer bounds.Release()
	parts := []arrow.RecordBatch{bounds}
	if len(idx) > 0 {
		parts = append(parts, sample)
	}
	out, err := concatRecords(parts, col.Schema(), allocator)
	if err != nil {
		return nil, err
	}
	md := arrow.NewMetadata([]string{"sorted", "nulls"}, []string{fmt.Sprint(sorted), fmt.Sprint(nulls)})
	schema := arrow.NewSchema(col.Schema().Fields(), &md)
	res := array.NewRecordBatch(schema, out.Columns(), out.NumRows())
	out.Release()
	return res, nil
}

// Index returns the name of the index column, or "" when there is none.
func (df DataFrame) Index() string {
	if df.n == nil {
		return ""
	}
	return df.n.index
}

// Divisions returns the index values that bound the partitions:
// partition i holds the index values from Divisions()[i] up to, not
// including, Divisions()[i+1] (the last partition includes its upper
// bound). Nil without an index (see SetIndex).
func (df DataFrame) Divisions() []any {
	if df.n == nil {
		return nil
	}
	return slices.Clone(df.n.divisions)
}

// Loc keeps the rows whose index is between lo and hi, both included (nil
// means unbounded), reading only the partitions whose divisions can hold
// such rows.
func (df DataFrame) Loc(lo, hi any) DataFrame {
	if df.err != nil {
		return df
	}
	if df.n.index == "" {
		return df.fail("Loc", fmt.Errorf("the frame has no index; use SetIndex first"))
	}
	idx := df.n.index
	divs := df.n.divisions
	if len(divs) > 0 && divs[0] != nil {
		if lo != nil {
			lo = normalize(lo, divs[0])
		}
		if hi != nil {
			hi = normalize(hi, divs[0])
		}
	}
	var pred Expr
	if lo != nil {
		pred = Col(idx).Ge(lo)
	}
	if hi != nil {
		p := Col(idx).Le(hi)
		if lo != nil {
			pred = pred.And(p)
		} else {
			pred = p
		}
	}
	var parts []int
	var kept []any
	for i := 0; i+1 < len(divs); i++ {
		a, b := divs[i], divs[i+1]
		last := i+2 == len(divs)
		if lo != nil && b != nil && (compareValues(b, lo) < 0 || !last && compareValues(b, lo) == 0) {
			continue
		}
		if hi != nil && a != nil && compareValues(a, hi) > 0 {
			continue
		}
		parts = append(parts, i)
		if len(kept) == 0 {
			kept = append(kept, a)
		}
		kept = append(kept, b)
	}
	sel := df.derive(&node{kind: kindSelect, schema: df.Schema(), parts: parts, nparts: len(parts)})
	sel.n.index, sel.n.divisions = idx, kept
	if pred.Op() == "" {
		return sel
	}
	return sel.Filter(pred)
}

// normalize converts a bound given by the user to the Go type of the
// index values it is compared with.
func normalize(v, like any) any {
	switch like.(type) {
	case int64:
		switch x := v.(type) {
		case int:
			return int64(x)
		case int32:
			return int64(x)
		case float64:
			return int64(x)
		}
	case float64:
		switch x := v.(type) {
		case int:
			return float64(x)
		case int64:
			return float64(x)
		}
	case time.Time:
		if s, ok := v.(string); ok {
			if t, err := time.Parse(time.RFC3339, s); err == nil {
				return t
			}
			if t, err := time.Parse(time.DateOnly, s); err == nil {
				return t
			}
		}
	}
	return v
}
