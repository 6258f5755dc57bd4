package sortk

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// SortIndices returns the order of rec's rows by keys: the row numbers,
// first row first. The sort is stable: rows with equal keys keep their
// order.
func SortIndices(ctx context.Context, rec arrow.RecordBatch, keys []SortKey) ([]int32, error) {
	arrs, err := keyColumns("sort", rec, keys)
	if err != nil {
		return nil, err
	}
	n := int(rec.NumRows())
	if int64(n) != rec.NumRows() || n > maxRows {
		return nil, fmt.Errorf("sortk: sort of %d rows: at most %d rows per batch", rec.NumRows(), maxRows)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := &sorter{ctx: ctx, cols: make([]*column, len(arrs))}
	for i, a := range arrs {
		s.cols[i] = newColumn(a, keys[i], true)
	}
	rows := make([]int32, n)
	for i := range rows {
		rows[i] = int32(i)
	}
	if n < 2 {
		return rows, nil
	}
	var kb []uint64
	if c := s.cols[0]; !c.bytes && c.valid == nil {
		// The first key's values are the keys to sort, in row order: sort
		// them in place (the column is not read again).
		kb, s.inPlace = c.u, true
	} else {
		kb = make([]uint64, n)
	}
	tk := make([]uint64, n)
	tr := make([]int32, n)
	s.sortKey(0, rows, kb, tk, tr)
	if s.err != nil {
		return nil, fmt.Errorf("sortk: sort of %d rows by %s: %w", n, formatKeys(keys), s.err)
	}
	return rows, nil
}

// Sort returns rec's rows sorted by keys (stable), in buffers from mem, or
// rec itself (retained) when it is in order already.
func Sort(ctx context.Context, rec arrow.RecordBatch, keys []SortKey, mem memory.Allocator) (arrow.RecordBatch, error) {
	idx, err := SortIndices(ctx, rec, keys)
	if err != nil {
		return nil, err
	}
	if isIdentity(idx) {
		rec.Retain()
		return rec, nil
	}
	return Take(ctx, rec, idx, mem)
}

func isIdentity(idx []int32) bool {
	for i, r := range idx {
		if int(r) != i {
			return false
		}
	}
	return true
}

// maxRows is the most rows a batch may have to be sorted (row numbers are
// int32s).
const maxRows = 1<<31 - 1

// sorter sorts row numbers by its columns: by the first key, then each run
// of ties by the next key, and so on. Within a run the rows are always in
// ascending order, which makes each step's sort stable.
type sorter struct {
	ctx     context.Context
	cols    []*column
	ps      pairSorter
	err     error
	steps   int
	inPlace bool // the first key's column is the scratch of its keys
}

// bytesSmall is the size of a run of strings sorted by comparisons rather
// than by 7-byte chunks.
const bytesSmall = 32

// checkEvery is how often (in sorted runs) the context is checked.
const checkEvery = 1 << 12

func (s *sorter) cancelled() bool {
	if s.err != nil {
		return true
	}
	s.steps++
	if s.steps%checkEvery == 0 {
		s.err = s.ctx.Err()
	}
	return s.err != nil
}

// sortKey sorts rows by key k and the keys after it; kb, tk and tr are
// scratch space as long as rows.
func (s *sorter) sortKey(k int, rows []int32, kb, tk []uint64, tr []int32) {
	if s.cancelled() {
		return
	}
	c := s.cols[k]
	lo, hi := 0, len(rows)
	if c.valid != nil {
		// Move the null rows to their end, keeping both sides in order.
		nulls := tr[:0]
		w := 0
		for _, r := range rows {
			if c.valid[r] {
				rows[w] = r
				w++
			} else {
				nulls = append(nulls, r)
			}
		}
		if c.nullsFirst {
			copy(rows[len(nulls):], rows[:w])
			copy(rows, nulls)
			lo = len(nulls)
			s.ties(k, rows[:lo], kb[:lo], tk[:lo], tr[:lo])
		} else {
			copy(rows[w:], nulls)
			hi = w
			s.ties(k, rows[hi:], kb[hi:], tk[hi:], tr[hi:])
		}
	}
	rows, kb, tk, tr = rows[lo:hi], kb[lo:hi], tk[lo:hi], tr[lo:hi]
	if len(rows) < 2 {
		return
	}
	if c.bytes {
		s.sortBytes(k, 0, rows, kb, tk, tr)
		return
	}
	if s.inPlace {
		s.inPlace = false // only the first call, on all the rows
	} else {
		for i, r := range rows {
			kb[i] = c.u[r]
		}
	}
	s.ps.sortPairs(kb, rows, tk, tr)
	s.runs(k, rows, kb, tk, tr)
}

// ties sorts a run of rows equal by key k by the keys after it.
func (s *sorter) ties(k int, rows []int32, kb, tk []uint64, tr []int32) {
	if len(rows) > 1 && k+1 < len(s.cols) {
		s.sortKey(k+1, rows, kb, tk, tr)
	}
}

// runs sorts each run of equal keys in kb (sorted) by the next keys.
func (s *sorter) runs(k int, rows []int32, kb, tk []uint64, tr []int32) {
	if k+1 == len(s.cols) {
		return
	}
	for a := 0; a < len(rows); {
		b := a + 1
		for b < len(rows) && kb[b] == kb[a] {
			b++
		}
		if b-a > 1 {
			s.sortKey(k+1, rows[a:b], kb[a:b], tk[a:b], tr[a:b])
		}
		a = b
	}
}

// sortBytes sorts rows, whose values of key k agree on their first
// 7*depth bytes, by those values: by a 64-bit key of each value's next 7
// bytes (zero-padded, big-endian) and how many bytes remain (0 to 7, or 8
// for more), a radix sort. That key orders a value before the values it
// is a prefix of. Then each run of equal keys is either equal values
// (fewer than 8 bytes remained: ties for the next sort key) or sorted by
// the bytes after.
func (s *sorter) sortBytes(k, depth int, rows []int32, kb, tk []uint64, tr []int32) {
	if s.cancelled() {
		return
	}
	c := s.cols[k]
	if len(rows) <= bytesSmall {
		s.sortBytesSmall(k, depth, rows, kb, tk, tr)
		return
	}
	if c.v.offs32 != nil {
		chunkKeys(c.v.offs32, c.v.data, rows, depth, kb)
	} else {
		chunkKeys(c.v.offs64, c.v.data, rows, depth, kb)
	}
	if c.desc {
		for i := range kb {
			kb[i] = ^kb[i]
		}
	}
	s.ps.sortPairs(kb, rows, tk, tr)
	var flip uint64
	if c.desc {
		flip = ^uint64(0)
	}
	for a := 0; a < len(rows); {
		b := a + 1
		for b < len(rows) && kb[b] == kb[a] {
			b++
		}
		if b-a > 1 {
			if (kb[a]^flip)&0xff == 8 {
				s.sortBytes(k, depth+1, rows[a:b], kb[a:b], tk[a:b], tr[a:b])
			} else {
				s.ties(k, rows[a:b], kb[a:b], tk[a:b], tr[a:b])
			}
		}
		a = b
	}
}

// chunkKeys writes the sort key of the bytes from 7*depth on of each row:
// 7 bytes, big-endian and zero-padded, then the count of bytes left (8 for
// more than 7).
func chunkKeys[O int32 | int64](offs []O, data []byte, rows []int32, depth int, out []uint64) {
	base := 7 * depth
	for i, r := range rows {
		lo, hi := int(offs[r])+base, int(offs[r+1])
		var key uint64
		if rem := hi - lo; rem >= 8 {
			key = binary.BigEndian.Uint64(data[lo:])&^0xff | 8
		} else {
			for j := range rem {
				key |= uint64(data[lo+j]) << (56 - 8*j)
			}
			key |= uint64(rem)
		}
		out[i] = key
	}
}

// sortBytesSmall sorts a few rows by comparing their values from byte
// 8*depth on, with a stable insertion sort.
func (s *sorter) sortBytesSmall(k, depth int, rows []int32, kb, tk []uint64, tr []int32) {
	c := s.cols[k]
	off := 7 * depth
	less := func(a, b int32) bool {
		x := c.str(int(a))[off:]
		y := c.str(int(b))[off:]
		if c.desc {
			return bytes.Compare(y, x) < 0
		}
		return bytes.Compare(x, y) < 0
	}
	for i := 1; i < len(rows); i++ {
		r := rows[i]
		j := i
		for ; j > 0 && less(r, rows[j-1]); j-- {
			rows[j] = rows[j-1]
		}
		rows[j] = r
	}
	if k+1 == len(s.cols) {
		return
	}
	for a := 0; a < len(rows); {
		b := a + 1
		for b < len(rows) && bytes.Equal(c.str(int(rows[a])), c.str(int(rows[b]))) {
			b++
		}
		if b-a > 1 {
			s.sortKey(k+1, rows[a:b], kb[a:b], tk[a:b], tr[a:b])
		}
		a = b
	}
}
