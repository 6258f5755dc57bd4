package agg

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	rowbuf "github.com/shoal-data/shoal/dataframe/internal/distinct/rows"
)

// HashPartition splits the rows of rec into n record batches by the hash of
// their keys: rows with equal keys always land in the same part, whatever
// batch or process they come from, because the hash is a fixed function of
// the key values (a string hashes the same as utf8, large_utf8 or in a
// dictionary; integers hash by value whatever their width). Rows keep their
// order within a part. Every part has rec's schema; some may be empty.
func HashPartition(ctx context.Context, rec arrow.RecordBatch, keys []string, n int, mem memory.Allocator) ([]arrow.RecordBatch, error) {
	if rec == nil {
		return nil, errors.New("agg: HashPartition given a nil record batch")
	}
	if n < 1 {
		return nil, fmt.Errorf("agg: HashPartition into %d parts, want at least 1", n)
	}
	if len(keys) == 0 {
		return nil, errors.New("agg: HashPartition needs at least one key column")
	}
	p, err := newPlan(rec.Schema(), keys, nil)
	if err != nil {
		return nil, err
	}
	if n == 1 {
		rec.Retain()
		return []arrow.RecordBatch{rec}, nil
	}
	rows := int(rec.NumRows())
	keyCols, _ := p.keyColumns(rec)
	hashes := make([]uint64, rows)
	loaders := make([]strLoader, len(keyCols))
	for lo := 0; lo < rows; lo += chunkRows {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := min(lo+chunkRows, rows)
		for i, c := range keyCols {
			hashColumn(c, lo, hi, hashes[lo:hi], i > 0, &loaders[i])
		}
	}
	// Counting sort of the rows by part.
	parts := make([]uint32, rows)
	counts := make([]int, n+1)
	for i, h := range hashes {
		q := uint32((mix(h^hk3, hk2) >> 32) * uint64(n) >> 32)
		parts[i] = q
		counts[q+1]++
	}
	for q := 1; q <= n; q++ {
		counts[q] += counts[q-1]
	}
	order := make([]uint32, rows)
	next := make([]int, n)
	copy(next, counts[:n])
	for i, q := range parts {
		order[next[q]] = uint32(i)
		next[q]++
	}
	out := make([]arrow.RecordBatch, 0, n)
	fail := func(err error) ([]arrow.RecordBatch, error) {
		for _, r := range out {
			r.Release()
		}
		return nil, err
	}
	for q := range n {
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		idx := order[counts[q]:counts[q+1]:counts[q+1]]
		cols := make([]arrow.Array, 0, rec.NumCols())
		for _, c := range rec.Columns() {
			t, err := take(ctx, mem, c, idx)
			if err != nil {
				releaseAll(cols)
				return fail(fmt.Errorf("agg: HashPartition: column of type %s: %w", c.DataType(), err))
			}
			cols = append(cols, t)
		}
		out = append(out, array.NewRecordBatch(rec.Schema(), cols, int64(len(idx))))
		releaseAll(cols)
	}
	return out, nil
}

// hashColumn writes (combine false) or folds (combine true) the hash of
// each row of col[lo:hi] into hs; l reads strings.
func hashColumn(col arrow.Array, lo, hi int, hs []uint64, combine bool, l *strLoader) {
	bm, boff := rowbuf.Validity(col)
	boff += lo
	switch col.DataType().ID() {
	case arrow.INT8:
		hashInts(rowbuf.Values[int8](col)[lo:hi], bm, boff, hs, combine)
	case arrow.UINT8:
		hashInts(rowbuf.Values[uint8](col)[lo:hi], bm, boff, hs, combine)
	case arrow.INT16:
		hashInts(rowbuf.Values[int16](col)[lo:hi], bm, boff, hs, combine)
	case arrow.UINT16:
		hashInts(rowbuf.Values[uint16](col)[lo:hi], bm, boff, hs, combine)
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		hashInts(rowbuf.Values[int32](col)[lo:hi], bm, boff, hs, combine)
	case arrow.UINT32:
		hashInts(rowbuf.Values[uint32](col)[lo:hi], bm, boff, hs, combine)
	case arrow.INT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		hashInts(rowbuf.Values[int64](col)[lo:hi], bm, boff, hs, combine)
	case arrow.UINT64:
		hashInts(rowbuf.Values[uint64](col)[lo:hi], bm, boff, hs, combine)
	case arrow.FLOAT32:
		hashFloats(rowbuf.Values[float32](col)[lo:hi], bm, boff, hs, combine)
	case arrow.FLOAT64:
		hashFloats(rowbuf.Values[float64](col)[lo:hi], bm, boff, hs, combine)
	case arrow.BOOL:
		b := make([]uint8, hi-lo)
		rowbuf.Bools(col, lo, hi, b)
		hashInts(b, bm, boff, hs, combine)
	default: // strings and dictionaries of strings
		strs, valid := l.load(col, rowRange(lo, hi))
		for j, s := range strs {
			h := uint64(nullHash)
			if valid == nil || valid[j] {
				h = rowbuf.HashString(s)
			}
			put(hs, j, h, combine)
		}
	}
}

func put(hs []uint64, j int, h uint64, combine bool) {
	if combine {
		hs[j] = combineHash(hs[j], h)
	} else {
		hs[j] = h
	}
}

func hashInts[T integer](vals []T, bm []byte, boff int, hs []uint64, combine bool) {
	for j, v := range vals {
		h := uint64(nullHash)
		if bm == nil || rowbuf.Bit(bm, boff+j) {
			h = rowbuf.HashUint64(uint64(int64(v)))
		}
		put(hs, j, h, combine)
	}
}

func hashFloats[T float](vals []T, bm []byte, boff int, hs []uint64, combine bool) {
	for j, v := range vals {
		h := uint64(nullHash)
		if bm == nil || rowbuf.Bit(bm, boff+j) {
			h = rowbuf.HashUint64(floatKey(float64(v)))
		}
		put(hs, j, h, combine)
	}
}
