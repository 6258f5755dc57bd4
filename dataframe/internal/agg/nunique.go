package agg

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	rowbuf "github.com/shoal-data/shoal/dataframe/internal/distinct/rows"
)

// nunique keeps the distinct (group, value) pairs: exact counts across
// partitions. The state is one list of distinct values per group.

// nuniqueAcc handles fixed-width values, held as 64-bit keys (integers
// widened, floats as floatKey, booleans as 0 and 1).
type nuniqueAcc struct {
	typ     arrow.DataType // value type
	set     pairSet
	ngroups int
	scratch scratches
	lists   listScratch
}

type pairSet struct {
	slots []pairSlot
	mask  uint64
	gids  []uint32 // entries in insertion order
	vals  []uint64
}

type pairSlot struct {
	val uint64
	gid uint32
	use uint32 // entry index + 1; 0 marks an empty slot
}

func (s *pairSet) add(g uint32, v uint64) {
	if s.slots == nil {
		s.slots = make([]pairSlot, minTableSize)
		s.mask = minTableSize - 1
	}
	i := mix(v^hk0, uint64(g)^hk1) & s.mask
	for {
		sl := &s.slots[i]
		if sl.use == 0 {
			s.gids = append(s.gids, g)
			s.vals = append(s.vals, v)
			sl.val, sl.gid, sl.use = v, g, uint32(len(s.gids))
			if 2*len(s.gids) > len(s.slots) {
				s.grow()
			}
			return
		}
		if sl.val == v && sl.gid == g {
			return
		}
		i = (i + 1) & s.mask
	}
}

func (s *pairSet) grow() {
	n := 2 * len(s.slots)
	slots := make([]pairSlot, n)
	mask := uint64(n - 1)
	for _, sl := range s.slots {
		if sl.use == 0 {
			continue
		}
		i := mix(sl.val^hk0, uint64(sl.gid)^hk1) & mask
		for slots[i].use != 0 {
			i = (i + 1) & mask
		}
		slots[i] = sl
	}
	s.slots, s.mask = slots, mask
}

func (a *nuniqueAcc) grow(n, _ int) { a.ngroups = max(a.ngroups, n) }

func (a *nuniqueAcc) update(col arrow.Array, s span, gids []uint32) {
	bm, boff := validOf(col, s)
	switch col.DataType().ID() {
	case arrow.INT8:
		addInts(&a.set, load(col, s, &a.scratch.i8), bm, boff, gids)
	case arrow.UINT8, arrow.BOOL:
		addInts(&a.set, load(col, s, &a.scratch.u8), bm, boff, gids)
	case arrow.INT16:
		addInts(&a.set, load(col, s, &a.scratch.i16), bm, boff, gids)
	case arrow.UINT16:
		addInts(&a.set, load(col, s, &a.scratch.u16), bm, boff, gids)
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		addInts(&a.set, load(col, s, &a.scratch.i32), bm, boff, gids)
	case arrow.UINT32:
		addInts(&a.set, load(col, s, &a.scratch.u32), bm, boff, gids)
	case arrow.INT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		addInts(&a.set, load(col, s, &a.scratch.i64), bm, boff, gids)
	case arrow.UINT64:
		addInts(&a.set, load(col, s, &a.scratch.u64), bm, boff, gids)
	case arrow.FLOAT32:
		addFloats(&a.set, load(col, s, &a.scratch.f32), bm, boff, gids)
	case arrow.FLOAT64:
		addFloats(&a.set, load(col, s, &a.scratch.f64), bm, boff, gids)
	}
}

// scratches holds a gather buffer per value type.
type scratches struct {
	i8  []int8
	u8  []uint8
	i16 []int16
	u16 []uint16
	i32 []int32
	u32 []uint32
	i64 []int64
	u64 []uint64
	f32 []float32
	f64 []float64
}

func addInts[T integer](s *pairSet, vals []T, bm []byte, boff int, gids []uint32) {
	for j, v := range vals {
		if bm != nil && !rowbuf.Bit(bm, boff+j) {
			continue
		}
		var g uint32
		if gids != nil {
			g = gids[j]
		}
		s.add(g, uint64(int64(v)))
	}
}

func addFloats[T float](s *pairSet, vals []T, bm []byte, boff int, gids []uint32) {
	for j, v := range vals {
		if bm != nil && !rowbuf.Bit(bm, boff+j) {
			continue
		}
		var g uint32
		if gids != nil {
			g = gids[j]
		}
		s.add(g, floatKey(float64(v)))
	}
}

// merge adds the values of each state row's list to the row's group.
func (a *nuniqueAcc) merge(cols []arrow.Array, s span, gids []uint32) {
	child, cs, cgids := a.lists.expand(cols[0], s, gids)
	a.update(child, cs, cgids)
}

// listOffsets returns the offsets of a list array, its offset applied.
func listOffsets(list *array.List) []int32 {
	d := list.Data()
	return bufferAs[int32](d.Buffers()[1], d.Offset(), d.Len()+1)
}

// listScratch turns a span of list rows into the span of their values,
// each with the group of its row.
type listScratch struct {
	gids []uint32
}

func (l *listScratch) expand(col arrow.Array, s span, gids []uint32) (arrow.Array, span, []uint32) {
	list := col.(*array.List)
	child := list.ListValues()
	if s.len() == 0 {
		return child, rowRange(0, 0), nil
	}
	offs := listOffsets(list)
	lo, hi := int(offs[s.lo]), int(offs[s.hi])
	if gids == nil {
		return child, rowRange(lo, hi), nil
	}
	out := ensure(&l.gids, hi-lo)
	for j, g := range gids[:s.len()] {
		r := s.lo + j
		for k := offs[r]; k < offs[r+1]; k++ {
			out[int(k)-lo] = g
		}
	}
	return child, rowRange(lo, hi), out
}

// listLayout sorts the entries (given by their groups) into one list per
// group of order: it returns the list offsets and, for each list position,
// the entry it holds.
func listLayout(entryGids []uint32, ngroups int, order []uint32) (offs []int32, entries []uint32) {
	counts := make([]int32, ngroups+1)
	for _, g := range entryGids {
		counts[g]++
	}
	n := ngroups
	if order != nil {
		n = len(order)
	}
	offs = make([]int32, n+1)
	start := make([]int32, ngroups) // where group g's values start; -1 if not output
	for i := range start {
		start[i] = -1
	}
	pos := int32(0)
	for r := range n {
		g := uint32(r)
		if order != nil {
			g = order[r]
		}
		offs[r] = pos
		start[g] = pos
		pos += counts[g]
	}
	offs[n] = pos
	entries = make([]uint32, pos)
	for e, g := range entryGids {
		if p := start[g]; p >= 0 {
			entries[p] = uint32(e)
			start[g]++
		}
	}
	return offs, entries
}

func (a *nuniqueAcc) state(mem memory.Allocator, order []uint32) []arrow.Array {
	offs, entries := listLayout(a.set.gids, a.ngroups, order)
	vals := a.set.vals
	var child arrow.Array
	switch a.typ.ID() {
	case arrow.INT8:
		child = listChild[int8](mem, a.typ, vals, entries)
	case arrow.UINT8:
		child = listChild[uint8](mem, a.typ, vals, entries)
	case arrow.INT16:
		child = listChild[int16](mem, a.typ, vals, entries)
	case arrow.UINT16:
		child = listChild[uint16](mem, a.typ, vals, entries)
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		child = listChild[int32](mem, a.typ, vals, entries)
	case arrow.UINT32:
		child = listChild[uint32](mem, a.typ, vals, entries)
	case arrow.FLOAT32:
		f := make([]float32, len(entries))
		for i, e := range entries {
			f[i] = float32(math.Float64frombits(vals[e]))
		}
		child = fixedArray(mem, a.typ, f, nil, nil)
	case arrow.FLOAT64:
		f := make([]float64, len(entries))
		for i, e := range entries {
			f[i] = math.Float64frombits(vals[e])
		}
		child = fixedArray(mem, a.typ, f, nil, nil)
	case arrow.BOOL:
		b := make([]uint8, len(entries))
		for i, e := range entries {
			b[i] = uint8(vals[e])
		}
		child = boolArray(mem, b, nil, nil)
	default: // 64-bit integers and temporal types
		child = listChild[uint64](mem, a.typ, vals, entries)
	}
	return []arrow.Array{listArray(mem, a.typ, offs, child)}
}

func listChild[T integer](mem memory.Allocator, typ arrow.DataType, vals []uint64, entries []uint32) arrow.Array {
	buf, out := rowbuf.NewBuffer[T](mem, len(entries))
	for i, e := range entries {
		out[i] = T(vals[e])
	}
	return rowbuf.MakeArray(typ, len(entries), []*memory.Buffer{nil, buf}, 0)
}

// listArray builds a list<elem> array from offsets and its values; it takes
// over child.
func listArray(mem memory.Allocator, elem arrow.DataType, offs []int32, child arrow.Array) arrow.Array {
	defer child.Release()
	n := len(offs) - 1
	obuf, o := rowbuf.NewBuffer[int32](mem, len(offs))
	copy(o, offs)
	data := array.NewData(arrow.ListOf(elem), n, []*memory.Buffer{nil, obuf}, []arrow.ArrayData{child.Data()}, 0, 0)
	obuf.Release()
	defer data.Release()
	return array.MakeFromData(data)
}

// nuniqueStrAcc handles strings and dictionaries of strings; the values
// point into the input's buffers until the state is built.
type nuniqueStrAcc struct {
	typ     arrow.DataType // value type (a string type)
	ngroups int
	slots   []uint64 // tag<<32 | entry+1
	mask    uint64
	gids    []uint32
	vals    []string
	hashes  []uint64
	in      strLoader
	lists   listScratch
}

func (a *nuniqueStrAcc) grow(n, _ int) { a.ngroups = max(a.ngroups, n) }

func (a *nuniqueStrAcc) add(g uint32, s string) {
	if a.slots == nil {
		a.slots = make([]uint64, minTableSize)
		a.mask = minTableSize - 1
	}
	h := combineHash(rowbuf.HashString(s), uint64(g))
	tag := h >> 32
	i := h & a.mask
	for {
		e := a.slots[i]
		if e == 0 {
			a.gids = append(a.gids, g)
			a.vals = append(a.vals, s)
			a.hashes = append(a.hashes, h)
			a.slots[i] = tag<<32 | uint64(len(a.gids))
			if 2*len(a.gids) > len(a.slots) {
				a.growSlots()
			}
			return
		}
		if e>>32 == tag {
			k := uint32(e) - 1
			if a.gids[k] == g && a.vals[k] == s {
				return
			}
		}
		i = (i + 1) & a.mask
	}
}

func (a *nuniqueStrAcc) growSlots() {
	n := 2 * len(a.slots)
	slots := make([]uint64, n)
	mask := uint64(n - 1)
	for _, e := range a.slots {
		if e == 0 {
			continue
		}
		i := a.hashes[uint32(e)-1] & mask
		for slots[i] != 0 {
			i = (i + 1) & mask
		}
		slots[i] = e
	}
	a.slots, a.mask = slots, mask
}

func (a *nuniqueStrAcc) update(col arrow.Array, s span, gids []uint32) {
	strs, valid := a.in.load(col, s)
	for j, s := range strs {
		if valid != nil && !valid[j] {
			continue
		}
		var g uint32
		if gids != nil {
			g = gids[j]
		}
		a.add(g, s)
	}
}

func (a *nuniqueStrAcc) merge(cols []arrow.Array, s span, gids []uint32) {
	child, cs, cgids := a.lists.expand(cols[0], s, gids)
	a.update(child, cs, cgids)
}

func (a *nuniqueStrAcc) state(mem memory.Allocator, order []uint32) []arrow.Array {
	offs, entries := listLayout(a.gids, a.ngroups, order)
	vals := make([]string, len(entries))
	for i, e := range entries {
		vals[i] = a.vals[e]
	}
	child := stringArray(mem, a.typ, vals, nil, nil)
	return []arrow.Array{listArray(mem, a.typ, offs, child)}
}
