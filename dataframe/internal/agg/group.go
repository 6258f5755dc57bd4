package agg

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"slices"
)

// grouper gives each distinct tuple of key values a dense group id, in the
// order tuples are first seen. Each key column has its own keyTable; with
// several keys, the tuple of per-key ids is looked up in one more table.
type grouper struct {
	tables  []keyTable
	pair    *intTable   // two keys: the two per-key ids packed in 64 bits
	tuple   *tupleTable // three or more keys
	scratch [][]uint32
	hint    int // the number of groups reserved for

	// order lists the groups in the order of their first rows when radix
	// partitioning created some out of that order (nil: id order); noted
	// groups are placed in it.
	order []uint32
	noted uint32
	radix radixScratch
	keep  []arrow.Array // scattered columns accumulators may point into
}

// release releases what the grouper kept.
func (g *grouper) release() {
	releaseAll(g.keep)
	g.keep = nil
}

// noteCreated places the groups created in input order since the last note.
func (g *grouper) noteCreated() {
	n := uint32(g.size())
	if g.order != nil {
		for id := g.noted; id < n; id++ {
			g.order = append(g.order, id)
		}
	}
	g.noted = n
}

// noteRadix places groups created by a radix pass, sorted by first row.
func (g *grouper) noteRadix(sorted []uint32) {
	if len(sorted) == 0 {
		return
	}
	if g.order == nil {
		g.order = make([]uint32, g.noted, g.noted+uint32(len(sorted)))
		for i := range g.order {
			g.order[i] = uint32(i)
		}
	}
	g.order = append(g.order, sorted...)
	g.noted += uint32(len(sorted))
}

func newGrouper(types []arrow.DataType) *grouper {
	g := &grouper{}
	for _, t := range types {
		g.tables = append(g.tables, newKeyTable(t))
	}
	switch {
	case len(types) == 2:
		g.pair = newIntTable()
	case len(types) > 2:
		g.tuple = newTupleTable(len(types))
	}
	if len(types) > 1 {
		g.scratch = make([][]uint32, len(types))
	}
	return g
}

// prepare looks at whole key columns before their rows are grouped, so
// that integer keys in a small range get a direct lookup table.
func (g *grouper) prepare(cols []arrow.Array) {
	for i, t := range g.tables {
		if it, ok := t.(*intTable); ok {
			it.prepare(cols[i])
		}
	}
}

// reserve makes room for n groups. With several keys only the tuple table
// grows: one key alone may have few values.
func (g *grouper) reserve(n int) {
	g.hint = max(g.hint, n)
	switch {
	case len(g.tables) == 1:
		g.tables[0].reserve(n)
	case g.pair != nil:
		g.pair.reserve(n)
	case g.tuple != nil:
		g.tuple.reserve(n)
	}
}

// ids writes the group id of each row in [lo, hi) to out.
func (g *grouper) ids(cols []arrow.Array, lo, hi int, out []uint32) {
	if len(g.tables) == 1 {
		g.tables[0].ids(cols[0], lo, hi, out)
		return
	}
	n := hi - lo
	for i, t := range g.tables {
		if cap(g.scratch[i]) < n {
			g.scratch[i] = make([]uint32, n)
		}
		g.scratch[i] = g.scratch[i][:n]
		t.ids(cols[i], lo, hi, g.scratch[i])
	}
	if g.pair != nil {
		a, b := g.scratch[0], g.scratch[1][:len(g.scratch[0])]
		for j := range a {
			out[j] = g.pair.find(uint64(a[j])<<32 | uint64(b[j]))
		}
		return
	}
	g.tuple.ids(g.scratch, out[:n])
}

// size is the number of groups so far.
func (g *grouper) size() int {
	switch {
	case len(g.tables) == 1:
		return g.tables[0].size()
	case g.pair != nil:
		return g.pair.size()
	}
	return g.tuple.size()
}

// component returns the id of key j in group gid.
func (g *grouper) component(gid uint32, j int) uint32 {
	switch {
	case len(g.tables) == 1:
		return gid
	case g.pair != nil:
		v := g.pair.vals[gid]
		if j == 0 {
			return uint32(v >> 32)
		}
		return uint32(v)
	}
	return g.tuple.tuples[int(gid)*g.tuple.k+j]
}

// hasNullKey reports whether any key of group gid is null.
func (g *grouper) hasNullKey(gid uint32) bool {
	for j, t := range g.tables {
		if n := t.nullID(); n >= 0 && g.component(gid, j) == uint32(n) {
			return true
		}
	}
	return false
}

// keyColumns builds the key columns, of types types, for the groups in
// order (all groups when order is nil).
func (g *grouper) keyColumns(mem memory.Allocator, types []arrow.DataType, order []uint32) ([]arrow.Array, error) {
	n := g.size()
	if order != nil {
		n = len(order)
	}
	cols := make([]arrow.Array, 0, len(g.tables))
	ids := make([]uint32, n)
	for j, t := range g.tables {
		for r := range ids {
			gid := uint32(r)
			if order != nil {
				gid = order[r]
			}
			ids[r] = g.component(gid, j)
		}
		c, err := t.column(mem, types[j], ids)
		if err != nil {
			releaseAll(cols)
			return nil, err
		}
		cols = append(cols, c)
	}
	return cols, nil
}

func releaseAll(arrs []arrow.Array) {
	for _, a := range arrs {
		if a != nil {
			a.Release()
		}
	}
}

// tupleTable maps tuples of k uint32 to ids.
type tupleTable struct {
	k      int
	slots  []uint32 // id+1; 0 marks an empty slot
	mask   uint64
	tuples []uint32 // k per id
	hashes []uint64
}

func newTupleTable(k int) *tupleTable {
	return &tupleTable{k: k, slots: make([]uint32, minTableSize), mask: minTableSize - 1}
}

func (t *tupleTable) size() int { return len(t.hashes) }

func (t *tupleTable) ids(cols [][]uint32, out []uint32) {
	k := t.k
	tup := make([]uint32, k)
	for j := range out {
		h := uint64(hk0)
		for c := range k {
			tup[c] = cols[c][j]
			h = combineHash(h, uint64(tup[c]))
		}
		out[j] = t.find(tup, h)
	}
}

func (t *tupleTable) find(tup []uint32, h uint64) uint32 {
	k := t.k
	i := h & t.mask
outer:
	for {
		s := t.slots[i]
		if s == 0 {
			id := uint32(len(t.hashes))
			t.hashes = append(t.hashes, h)
			t.tuples = append(t.tuples, tup...)
			t.slots[i] = id + 1
			if 2*len(t.hashes) > len(t.slots) {
				t.grow()
			}
			return id
		}
		id := s - 1
		if t.hashes[id] == h {
			have := t.tuples[int(id)*k : int(id)*k+k]
			for c := range k {
				if have[c] != tup[c] {
					i = (i + 1) & t.mask
					continue outer
				}
			}
			return id
		}
		i = (i + 1) & t.mask
	}
}

func (t *tupleTable) grow() { t.resize(2 * len(t.slots)) }

func (t *tupleTable) reserve(n int) {
	if size := tableSize(n); size > len(t.slots) {
		t.resize(size)
	}
}

func (t *tupleTable) resize(n int) {
	slots := make([]uint32, n)
	mask := uint64(n - 1)
	for _, s := range t.slots {
		if s == 0 {
			continue
		}
		i := t.hashes[s-1] & mask
		for slots[i] != 0 {
			i = (i + 1) & mask
		}
		slots[i] = s
	}
	t.slots, t.mask = slots, mask
	// Room for the ids the table takes before it grows again, so that
	// appending to them does not copy them over and over (append grows
	// large slices by a quarter at a time).
	if ids := n / 2; cap(t.hashes) < ids {
		t.hashes = slices.Grow(t.hashes, ids-len(t.hashes))
		t.tuples = slices.Grow(t.tuples, ids*t.k-len(t.tuples))
	}
}
