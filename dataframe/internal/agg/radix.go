package agg

import (
	"context"
	"math/bits"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	rowbuf "github.com/shoal-data/shoal/dataframe/internal/distinct/rows"
)

// Radix partitioning. When the groups are many, their hash table and
// accumulators outgrow the caches and every row costs several cache misses.
// Then a block of rows is grouped in two passes. The first computes, for
// each row, which slice of the hash table its key hashes into (a radix
// partition) and scatters the keys and the aggregated columns into
// partition order, keeping the input order within a partition. The second
// looks the keys up partition by partition, so that each partition touches
// a slice of the table small enough to stay in cache and creates its new
// groups together, so that their accumulators are close too; the kernels
// then run over the scattered columns in order. All rows of a group are in
// one partition, in input order, so first and last are unchanged. Groups
// are created in partition order rather than input order: the grouper
// keeps the order of their first rows, so the state still lists groups in
// input order.

// Tuning: partition when the table takes more than radixTableBytes, in
// partitions of about radixPartBytes of table each, at most radixBlockRows
// rows at a time. Tests lower them.
var (
	radixTableBytes = 4 << 20
	radixPartBytes  = 256 << 10
	radixBlockRows  = 1 << 20
)

// radixPasses counts radix passes, for tests.
var radixPasses atomic.Int64

// radixScratch holds the buffers of one radix pass.
type radixScratch struct {
	part  []uint16
	pos   []uint32 // partitioned position of each row
	perm  []uint32 // row (from the block's first) at each position
	gids  []uint32 // group id at each position
	vals  []uint64 // integer keys, by row
	vals2 []uint64 // integer keys, by position
	skeys []strKey // string keys, by position
	first []uint32
	order []uint32
	ids   []uint32
}

// strKey is a string key scattered for the second pass: its first 16
// bytes as words (enough to compare and insert strings of up to 16 bytes
// without reading the input again), and the string.
type strKey struct {
	w0, w1 uint64
	s      string
}

// radixParts returns the number of partitions (a power of two, or 0 when
// partitioning does not pay) and the shift that takes a slot index to its
// partition, for a table of slots slots of slotBytes bytes.
func radixParts(slots, slotBytes int) (int, uint) {
	size := slots * slotBytes
	if size <= radixTableBytes || slots < 2 {
		return 0, 0
	}
	p := min(1<<bits.Len(uint(max(size/max(radixPartBytes, 1)-1, 1))), 1024, slots)
	return p, uint(bits.TrailingZeros(uint(slots)) - bits.TrailingZeros(uint(p)))
}

// radixIDs groups rows [lo, hi) by radix partitions when the grouper's
// table is large enough; ok is false when it is not (or the keys do not
// allow it) and the caller groups the rows in order. It returns the
// partitioned position of each row (pos), the row (from lo) at each
// position (perm), the group id at each position (gids) and the first row
// of each group it created, in the order of the groups.
func (g *grouper) radixIDs(cols []arrow.Array, lo, hi int, sc *radixScratch) (pos, perm, gids, first []uint32, ok bool) {
	n := hi - lo
	var str *strTable
	var it *intTable
	switch {
	case g.pair != nil:
		it = g.pair
	case len(g.tables) == 1:
		switch t := g.tables[0].(type) {
		case *strTable:
			if cols[0].DataType().ID() == arrow.DICTIONARY {
				return nil, nil, nil, nil, false // one lookup per dictionary entry already
			}
			str = t
		case *intTable:
			if cols[0].DataType().ID() == arrow.BOOL {
				return nil, nil, nil, nil, false
			}
			it = t
		}
	default:
		return nil, nil, nil, nil, false
	}
	var parts int
	var shift uint
	var mask uint64
	if str != nil {
		parts, shift = radixParts(len(str.slots), 32)
		mask = str.mask
	} else {
		parts, shift = radixParts(len(it.slots), 16)
		mask = it.mask
	}
	if parts == 0 {
		return nil, nil, nil, nil, false
	}
	radixPasses.Add(1)

	// Pass 1: the partition of each row (nulls in partition parts), then
	// each row's position, then the keys scattered to their positions.
	part := ensure(&sc.part, n)
	counts := make([]int, parts+2)
	var bm []byte
	var boff int
	if g.pair == nil {
		bm, boff = rowbuf.Validity(cols[0])
	}
	var sv stringView
	var vals []uint64
	switch {
	case str != nil:
		sv = newStringView(cols[0])
		for j := range n {
			if bm != nil && !rowbuf.Bit(bm, boff+lo+j) {
				part[j] = uint16(parts)
				counts[parts+1]++
				continue
			}
			q := uint16((rowbuf.HashString(sv.str(lo+j)) & mask) >> shift)
			part[j] = q
			counts[q+1]++
		}
	default:
		vals = ensure(&sc.vals, n)
		if g.pair != nil {
			g.pairKeys(cols, lo, hi, vals)
		} else {
			widen(cols[0], lo, hi, vals)
		}
		for j, v := range vals {
			if bm != nil && !rowbuf.Bit(bm, boff+lo+j) {
				part[j] = uint16(parts)
				counts[parts+1]++
				continue
			}
			q := uint16((rowbuf.HashUint64(v) & mask) >> shift)
			part[j] = q
			counts[q+1]++
		}
	}
	for q := 1; q <= parts+1; q++ {
		counts[q] += counts[q-1]
	}
	nonNull := counts[parts] // the nulls come after
	pos = ensure(&sc.pos, n)
	perm = ensure(&sc.perm, n)
	next := counts[:parts+1] // counts are spent
	for j, q := range part {
		p := next[q]
		next[q]++
		pos[j] = uint32(p)
		perm[p] = uint32(j)
	}
	if str != nil {
		keys := ensure(&sc.skeys, n)
		for j, p := range pos {
			if int(p) < nonNull {
				s := sv.str(lo + j)
				k := &keys[p]
				k.s = s
				if len(s) > 0 {
					k.w0, k.w1 = rowbuf.Words(unsafe.StringData(s), len(s))
				} else {
					k.w0, k.w1 = 0, 0
				}
			}
		}
		defer clear(keys) // drop the references to the input
	} else {
		pv := ensure(&sc.vals2, n)
		for j, p := range pos {
			pv[p] = vals[j]
		}
		vals = pv
	}

	// Pass 2: look the keys up, partition by partition.
	gids = ensure(&sc.gids, n)
	first = sc.first[:0]
	created := uint32(g.size())
	for k := range nonNull {
		var id uint32
		switch {
		case str != nil:
			key := &sc.skeys[k]
			id = str.findWords(key.s, key.w0, key.w1)
		case it.lut != nil:
			id = it.lookup(vals[k])
		default:
			id = it.find(vals[k])
		}
		gids[k] = id
		if id == created {
			first = append(first, uint32(lo)+perm[k])
			created++
		}
	}
	if nonNull < n {
		var id uint32
		if str != nil {
			id = str.nullIDAssign()
		} else {
			id = it.nullIDAssign()
		}
		for k := nonNull; k < n; k++ {
			gids[k] = id
		}
		if id == created {
			first = append(first, uint32(lo)+perm[nonNull])
		}
	}
	sc.first = first
	return pos, perm, gids, first, true
}

// pairKeys writes the packed per-key ids of rows [lo, hi) to out.
func (g *grouper) pairKeys(cols []arrow.Array, lo, hi int, out []uint64) {
	for c := lo; c < hi; c += chunkRows {
		e := min(c+chunkRows, hi)
		for i, t := range g.tables {
			g.scratch[i] = ensure(&g.scratch[i], e-c)
			t.ids(cols[i], c, e, g.scratch[i])
		}
		a, b := g.scratch[0], g.scratch[1]
		for j := range e - c {
			out[c-lo+j] = uint64(a[j])<<32 | uint64(b[j])
		}
	}
}

// lookup returns the id of v through the direct lookup table when v is in
// its range, else through the hash table.
func (t *intTable) lookup(v uint64) uint32 {
	if k := v - t.lutMin; k < uint64(len(t.lut)) {
		if id := t.lut[k]; id != 0 {
			return id - 1
		}
		id := t.newUnhashed(v)
		t.lut[k] = id + 1
		return id
	}
	return t.find(v)
}

// widen writes the table values of rows [lo, hi) of an integer or float
// column to out.
func widen(col arrow.Array, lo, hi int, out []uint64) {
	switch col.DataType().ID() {
	case arrow.INT8:
		widenInts(rowbuf.Values[int8](col)[lo:hi], out)
	case arrow.UINT8:
		widenInts(rowbuf.Values[uint8](col)[lo:hi], out)
	case arrow.INT16:
		widenInts(rowbuf.Values[int16](col)[lo:hi], out)
	case arrow.UINT16:
		widenInts(rowbuf.Values[uint16](col)[lo:hi], out)
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		widenInts(rowbuf.Values[int32](col)[lo:hi], out)
	case arrow.UINT32:
		widenInts(rowbuf.Values[uint32](col)[lo:hi], out)
	case arrow.INT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		widenInts(rowbuf.Values[int64](col)[lo:hi], out)
	case arrow.UINT64:
		widenInts(rowbuf.Values[uint64](col)[lo:hi], out)
	case arrow.FLOAT32:
		for j, v := range rowbuf.Values[float32](col)[lo:hi] {
			out[j] = floatKey(float64(v))
		}
	case arrow.FLOAT64:
		for j, v := range rowbuf.Values[float64](col)[lo:hi] {
			out[j] = floatKey(v)
		}
	}
}

func widenInts[T integer](vals []T, out []uint64) {
	for j, v := range vals {
		out[j] = uint64(int64(v))
	}
}

// byFirstRow returns the groups created in a radix pass, from id base on,
// in the order of their first rows (first, all in [lo, hi)).
func byFirstRow(first []uint32, base uint32, lo, hi int, sc *radixScratch) []uint32 {
	out := make([]uint32, 0, len(first))
	if len(first)*8 < hi-lo {
		ids := ensure(&sc.ids, len(first))
		for i := range ids {
			ids[i] = uint32(i)
		}
		slices.SortFunc(ids, func(a, b uint32) int { return int(first[a]) - int(first[b]) })
		for _, i := range ids {
			out = append(out, base+i)
		}
		return out
	}
	at := ensure(&sc.order, hi-lo)
	clear(at)
	for i, r := range first {
		at[int(r)-lo] = uint32(i) + 1
	}
	for _, p := range at {
		if p != 0 {
			out = append(out, base+p-1)
		}
	}
	return out
}

// scatterColumn returns rows [lo, hi) of col moved to their positions pos:
// sequential reads and writes into one stream per partition. Types
// without a scatter here are gathered with take.
func scatterColumn(ctx context.Context, mem memory.Allocator, col arrow.Array, lo, hi int, pos, perm []uint32) (arrow.Array, error) {
	n := hi - lo
	typ := col.DataType()
	var vbuf *memory.Buffer
	nulls := 0
	if bm, boff := rowbuf.Validity(col); bm != nil {
		var dst []byte
		vbuf, dst = rowbuf.NewBitmap(mem, n)
		for j, p := range pos {
			if rowbuf.Bit(bm, boff+lo+j) {
				dst[p>>3] |= 1 << (p & 7)
			} else {
				nulls++
			}
		}
	}
	var buf *memory.Buffer
	switch typ.ID() {
	case arrow.INT8, arrow.UINT8:
		buf = scatterFixed[uint8](mem, col, lo, pos)
	case arrow.INT16, arrow.UINT16:
		buf = scatterFixed[uint16](mem, col, lo, pos)
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32, arrow.TIME32:
		buf = scatterFixed[uint32](mem, col, lo, pos)
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		buf = scatterFixed[uint64](mem, col, lo, pos)
	case arrow.BOOL:
		var dst []byte
		buf, dst = rowbuf.NewBitmap(mem, n)
		d := col.Data()
		src, off := d.Buffers()[1].Bytes(), d.Offset()+lo
		for j, p := range pos {
			if rowbuf.Bit(src, off+j) {
				dst[p>>3] |= 1 << (p & 7)
			}
		}
	default:
		if vbuf != nil {
			vbuf.Release()
		}
		sl := array.NewSlice(col, int64(lo), int64(hi))
		defer sl.Release()
		return take(ctx, mem, sl, perm)
	}
	if nulls == 0 && vbuf != nil {
		vbuf.Release()
		vbuf = nil
	}
	return rowbuf.MakeArray(typ, n, []*memory.Buffer{vbuf, buf}, nulls), nil
}

func scatterFixed[T any](mem memory.Allocator, col arrow.Array, lo int, pos []uint32) *memory.Buffer {
	src := rowbuf.Values[T](col)[lo : lo+len(pos)]
	buf, dst := rowbuf.NewBuffer[T](mem, len(pos))
	for j, p := range pos {
		dst[p] = src[j]
	}
	return buf
}
