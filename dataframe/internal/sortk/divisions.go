package sortk

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// IsSorted reports whether rec's rows are in the order of keys.
func IsSorted(ctx context.Context, rec arrow.RecordBatch, keys []SortKey) (bool, error) {
	cols, err := prepare("check order", rec, keys)
	if err != nil {
		return false, err
	}
	n := int(rec.NumRows())
	for i := 1; i < n; i++ {
		if i&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return false, err
			}
		}
		if compareRows(cols, i-1, cols, i) > 0 {
			return false, nil
		}
	}
	return true, nil
}

// Divisions returns the boundaries that split rows distributed like those
// of sample into m ranges of about equal size, for a range partitioning:
// at most m-1 rows of the key columns (in the order of keys), strictly
// increasing in the order of keys. They are chosen over the sorted sample
// one after the other, each at the next 1/k of the rows left, with k the
// ranges left, and moved to the start of the run of its value: so no
// range is empty in the sample, and a value holding more rows than a range
// should gets a range of its own (the skew stays there) while the other
// values still split evenly. A sample of fewer than m distinct values
// gives fewer boundaries; an empty one none (one range).
//
// With the boundaries d[0] < d[1] < ..., range 0 holds the rows below d[0]
// and range j the rows r with d[j-1] <= r < d[j]: a row equal to a
// boundary belongs to the range the boundary starts (SearchDivisions).
// Nulls and NaN are ordered as in a sort, so they may be boundaries too.
func Divisions(ctx context.Context, sample arrow.RecordBatch, keys []SortKey, m int, mem memory.Allocator) (arrow.RecordBatch, error) {
	if m < 1 {
		return nil, fmt.Errorf("sortk: divisions into %d ranges: want at least 1", m)
	}
	arrs, err := keyColumns("divisions", sample, keys)
	if err != nil {
		return nil, err
	}
	fields := make([]arrow.Field, len(keys))
	for i, k := range keys {
		fields[i] = sample.Schema().Field(sample.Schema().FieldIndices(k.Column)[0])
	}
	keyRec := array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, sample.NumRows())
	defer keyRec.Release()
	order, err := SortIndices(ctx, keyRec, keys)
	if err != nil {
		return nil, err
	}
	cols, err := prepare("divisions", keyRec, keys)
	if err != nil {
		return nil, err
	}
	n := len(order)
	same := func(a, b int) bool { return compareRows(cols, int(order[a]), cols, int(order[b])) == 0 }
	var picked []int32
	for pos := 0; len(picked) < m-1; {
		left := m - len(picked) // ranges left, the current one included
		at := pos + (n-pos+left-1)/left
		if at >= n {
			break
		}
		// Start the next range where at's value starts; if that is where
		// the current range starts, the value fills the current range:
		// start the next one after it.
		for at > pos && same(at-1, at) {
			at--
		}
		if at == pos {
			for at < n && same(pos, at) {
				at++
			}
			if at == n {
				break
			}
		}
		picked = append(picked, order[at])
		pos = at
	}
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	return Take(ctx, keyRec, picked, mem)
}

// SearchDivisions returns, for each row of rec, the range of divisions it
// falls in: the number of boundaries at or below the row, from 0 to
// divisions.NumRows(). divisions holds the key columns, strictly increasing
// in the order of keys (as Divisions returns them). To find the partitions
// that may hold rows between a and b, search a batch of the two rows.
func SearchDivisions(ctx context.Context, rec, divisions arrow.RecordBatch, keys []SortKey) ([]int32, error) {
	if err := checkComparable("search divisions", divisions.Schema(), rec.Schema(), keys); err != nil {
		return nil, err
	}
	dcols, err := prepare("search divisions", divisions, keys)
	if err != nil {
		return nil, err
	}
	rcols, err := prepare("search divisions", rec, keys)
	if err != nil {
		return nil, err
	}
	nd := int(divisions.NumRows())
	for j := 1; j < nd; j++ {
		if compareRows(dcols, j-1, dcols, j) >= 0 {
			return nil, fmt.Errorf("sortk: search divisions: the %d divisions are not strictly increasing by %s (rows %d and %d)", nd, formatKeys(keys), j-1, j)
		}
	}
	n := int(rec.NumRows())
	out := make([]int32, n)
	if nd == 0 {
		return out, nil
	}
	if len(keys) == 1 && !dcols[0].bytes && dcols[0].valid == nil && rcols[0].valid == nil {
		d := dcols[0].u
		for i, x := range rcols[0].u {
			lo, hi := 0, nd // first boundary above x
			for lo < hi {
				mid := int(uint(lo+hi) >> 1)
				if d[mid] <= x {
					lo = mid + 1
				} else {
					hi = mid
				}
			}
			out[i] = int32(lo)
		}
		return out, nil
	}
	for i := range n {
		if i&0xffff == 0xffff {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		lo, hi := 0, nd
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if compareRows(dcols, mid, rcols, i) <= 0 {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		out[i] = int32(lo)
	}
	return out, nil
}
