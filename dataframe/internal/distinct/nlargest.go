package distinct

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/internal/distinct/rows"
)

// NLargest returns the n rows of rec with the largest values of cols,
// largest first, as pandas' nlargest(n, columns, keep): rows are compared
// on the first column, ties on the second, and so on. Of rows equal on
// every column, keep says which make the cut: the first ones (KeepFirst,
// listed in row order), the last ones (KeepLast, listed last row first,
// as pandas does) or all of those equal to the n-th row (KeepAll, which
// may give more than n rows). Nulls and NaNs rank below every value: they
// fill the result only when there are not n values.
//
// The first column is cut with a typed heap of n values in one pass over
// the rows; only the rows tied at the cut are compared on the next
// columns, and only the rows kept are sorted.
func NLargest(ctx context.Context, rec arrow.RecordBatch, n int, cols []string, keep Keep, mem memory.Allocator) (arrow.RecordBatch, error) {
	return nBest(ctx, rec, nil, n, cols, keep, true, GroupOptions{}, mem)
}

// NSmallest is NLargest for the smallest values, smallest first.
func NSmallest(ctx context.Context, rec arrow.RecordBatch, n int, cols []string, keep Keep, mem memory.Allocator) (arrow.RecordBatch, error) {
	return nBest(ctx, rec, nil, n, cols, keep, false, GroupOptions{}, mem)
}

// GroupNLargest is NLargest within each group of the key columns keys,
// for a batch that holds whole groups: the rows of each group, groups in
// the order of their first row (or of their keys with opts.Sort).
func GroupNLargest(ctx context.Context, rec arrow.RecordBatch, keys []string, n int, cols []string, keep Keep, opts GroupOptions, mem memory.Allocator) (arrow.RecordBatch, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("distinct: GroupNLargest needs key columns: %w", ErrBadSpec)
	}
	return nBest(ctx, rec, keys, n, cols, keep, true, opts, mem)
}

// GroupNSmallest is GroupNLargest for the smallest values.
func GroupNSmallest(ctx context.Context, rec arrow.RecordBatch, keys []string, n int, cols []string, keep Keep, opts GroupOptions, mem memory.Allocator) (arrow.RecordBatch, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("distinct: GroupNSmallest needs key columns: %w", ErrBadSpec)
	}
	return nBest(ctx, rec, keys, n, cols, keep, false, opts, mem)
}

func nBest(ctx context.Context, rec arrow.RecordBatch, keys []string, n int, cols []string, keep Keep, largest bool, opts GroupOptions, mem memory.Allocator) (arrow.RecordBatch, error) {
	what := "nsmallest"
	if largest {
		what = "nlargest"
	}
	if rec == nil {
		return nil, fmt.Errorf("distinct: %s given a nil record batch", what)
	}
	if keep == "" {
		keep = KeepFirst
	}
	switch {
	case keep != KeepFirst && keep != KeepLast && keep != KeepAll:
		return nil, fmt.Errorf("distinct: %s: keep %q, want first, last or all: %w", what, keep, ErrBadSpec)
	case n < 0:
		return nil, fmt.Errorf("distinct: %s of %d rows: %w", what, n, ErrBadSpec)
	case len(cols) == 0:
		return nil, fmt.Errorf("distinct: %s needs at least one column to order by: %w", what, ErrBadSpec)
	}
	s := &selector{largest: largest, keep: keep, nrows: int(rec.NumRows())}
	for _, c := range cols {
		i, err := columnIndex(rec.Schema(), c, what)
		if err != nil {
			return nil, err
		}
		col := rec.Column(i)
		cmpf := rows.Comparator(col, largest)
		if cmpf == nil {
			return nil, fmt.Errorf("distinct: %s: column %q has type %s, which has no order: %w", what, c, col.DataType(), ErrBadColumn)
		}
		s.cols = append(s.cols, col)
		s.cmps = append(s.cmps, cmpf)
	}
	var chosen []int32
	if keys == nil {
		chosen = s.top(nil, true, n)
	} else {
		g, err := groupRows(ctx, rec, keys, opts)
		if err != nil {
			return nil, err
		}
		for j, gid := range g.groups {
			if j%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			chosen = append(chosen, s.top(g.rowsOf(gid), false, n)...)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out, err := rows.TakeRecord(ctx, mem, rec, chosen)
	if err != nil {
		return nil, fmt.Errorf("distinct: %s: %w", what, err)
	}
	return out, nil
}

// selector picks the best rows of a batch.
type selector struct {
	cols    []arrow.Array
	cmps    []func(a, b int32) int
	largest bool
	keep    Keep
	nrows   int
}

// top returns the n best rows among cands (every row when all), sorted.
func (s *selector) top(cands []int32, all bool, n int) []int32 {
	chosen := s.choose(cands, all, 0, n)
	slices.SortFunc(chosen, func(a, b int32) int {
		for _, c := range s.cmps {
			if r := c(a, b); r != 0 {
				return r
			}
		}
		if s.keep == KeepLast {
			return cmp.Compare(b, a)
		}
		return cmp.Compare(a, b)
	})
	return chosen
}

// choose returns the m best rows among cands (every row when all), as an
// unordered set, comparing from column level on.
func (s *selector) choose(cands []int32, all bool, level, m int) []int32 {
	if m <= 0 {
		return nil
	}
	if level == len(s.cols) { // tied on every column: by position
		if all {
			cands = iota32(s.nrows)
		}
		switch {
		case s.keep == KeepAll || len(cands) <= m:
			return cands
		case s.keep == KeepLast:
			return cands[len(cands)-m:]
		}
		return cands[:m]
	}
	better, tied, nulls, nvalid := s.split(s.cols[level], cands, all, m)
	if nvalid <= m {
		// Every value makes the cut; the nulls compete for the rest.
		return append(better, s.choose(nulls, false, level+1, m-nvalid)...)
	}
	return append(better, s.choose(tied, false, level+1, m-len(better))...)
}

// split cuts the candidates on one column: the rows strictly better than
// the m-th best value, the rows equal to it, and the rows with a null or
// NaN; nvalid is the number of rows with a value. When nvalid <= m, better
// holds every row with a value.
func (s *selector) split(col arrow.Array, cands []int32, all bool, m int) (better, tied, nulls []int32, nvalid int) {
	mask := nullMask{}
	mask.bm, mask.off = rows.Validity(col)
	switch col.DataType().ID() {
	case arrow.INT8:
		return splitBy(rows.Values[int8](col), mask, cands, all, m, s.largest)
	case arrow.UINT8:
		return splitBy(rows.Values[uint8](col), mask, cands, all, m, s.largest)
	case arrow.INT16:
		return splitBy(rows.Values[int16](col), mask, cands, all, m, s.largest)
	case arrow.UINT16:
		return splitBy(rows.Values[uint16](col), mask, cands, all, m, s.largest)
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		return splitBy(rows.Values[int32](col), mask, cands, all, m, s.largest)
	case arrow.UINT32:
		return splitBy(rows.Values[uint32](col), mask, cands, all, m, s.largest)
	case arrow.INT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		return splitBy(rows.Values[int64](col), mask, cands, all, m, s.largest)
	case arrow.UINT64:
		return splitBy(rows.Values[uint64](col), mask, cands, all, m, s.largest)
	case arrow.FLOAT32:
		return splitBy(rows.Values[float32](col), mask, cands, all, m, s.largest)
	case arrow.FLOAT64:
		return splitBy(rows.Values[float64](col), mask, cands, all, m, s.largest)
	case arrow.BOOL:
		b := make([]uint8, col.Len())
		rows.Bools(col, 0, col.Len(), b)
		return splitBy(b, mask, cands, all, m, s.largest)
	case arrow.DICTIONARY:
		strs, valid := dictStrings(col.(*array.Dictionary))
		return splitBy(strs, nullMask{valid: valid}, cands, all, m, s.largest)
	}
	v := rows.NewStringView(col)
	strs := make([]string, col.Len())
	for i := range strs {
		strs[i] = v.At(i)
	}
	return splitBy(strs, mask, cands, all, m, s.largest)
}

// dictStrings reads a dictionary of strings as strings and validity.
func dictStrings(d *array.Dictionary) ([]string, []bool) {
	dict := d.Dictionary()
	dv := rows.NewStringView(dict)
	dbm, doff := rows.Validity(dict)
	bm, off := rows.Validity(d)
	strs := make([]string, d.Len())
	valid := make([]bool, d.Len())
	for i := range strs {
		if bm != nil && !rows.Bit(bm, off+i) {
			continue
		}
		k := d.GetValueIndex(i)
		if dbm != nil && !rows.Bit(dbm, doff+k) {
			continue
		}
		strs[i], valid[i] = dv.At(k), true
	}
	return strs, valid
}

// nullMask tells null rows: a validity bitmap, or flags.
type nullMask struct {
	bm    []byte
	off   int
	valid []bool
}

func (m nullMask) null(i int32) bool {
	if m.valid != nil {
		return !m.valid[i]
	}
	return m.bm != nil && !rows.Bit(m.bm, m.off+int(i))
}

func splitBy[T cmp.Ordered](vals []T, mask nullMask, cands []int32, all bool, m int, largest bool) (better, tied, nulls []int32, nvalid int) {
	n := len(cands)
	if all {
		n = len(vals)
	}
	row := func(k int) int32 {
		if all {
			return int32(k)
		}
		return cands[k]
	}
	// worse reports whether a ranks below b.
	worse := func(a, b T) bool {
		if largest {
			return a < b
		}
		return a > b
	}
	// A heap of the m best values, the worst of them on top.
	h := &valueHeap[T]{worse: worse}
	for k := range n {
		r := row(k)
		x := vals[r]
		if x != x || mask.null(r) {
			continue
		}
		nvalid++
		switch {
		case len(h.v) < m:
			heap.Push(h, x)
		case worse(h.v[0], x):
			h.v[0] = x
			heap.Fix(h, 0)
		}
	}
	cut := nvalid > m
	var threshold T
	if cut {
		threshold = h.v[0]
	}
	for k := range n {
		r := row(k)
		x := vals[r]
		switch {
		case x != x || mask.null(r):
			nulls = append(nulls, r)
		case !cut || worse(threshold, x):
			better = append(better, r)
		case x == threshold:
			tied = append(tied, r)
		}
	}
	return better, tied, nulls, nvalid
}

type valueHeap[T cmp.Ordered] struct {
	v     []T
	worse func(a, b T) bool
}

func (h *valueHeap[T]) Len() int           { return len(h.v) }
func (h *valueHeap[T]) Less(i, j int) bool { return h.worse(h.v[i], h.v[j]) }
func (h *valueHeap[T]) Swap(i, j int)      { h.v[i], h.v[j] = h.v[j], h.v[i] }
func (h *valueHeap[T]) Push(x any)         { h.v = append(h.v, x.(T)) }
func (h *valueHeap[T]) Pop() any {
	x := h.v[len(h.v)-1]
	h.v = h.v[:len(h.v)-1]
	return x
}

func iota32(n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(i)
	}
	return out
}
