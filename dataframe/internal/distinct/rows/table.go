package rows

import (
	"unsafe"
)

// NoID marks a row that has no id: its key is absent from the table on a
// lookup, or null when nulls do not match.
const NoID = ^uint32(0)

const minTableSize = 64

// grow when more than 7/10 of the slots are used.
func tooFull(n, slots int) bool { return 10*n > 7*slots }

// IntTable maps 64-bit values to dense ids, in the order values are first
// inserted: open addressing, power-of-two size, linear probing. A direct
// lookup table can stand in front of it for values in a small range (see
// Prepare).
type IntTable struct {
	slots  []intSlot
	mask   uint64
	hashed int // values in slots
	n      int // ids given

	lut    []uint32 // id+1 of value lutMin+i; 0 when absent
	lutMin uint64

	pos  []uint64 // scratch of InsertAll
	null uint32   // id+1 of null; 0 until NullID gives it one
}

type intSlot struct {
	key uint64
	id  uint32 // id+1; 0 marks an empty slot
}

// NewIntTable returns an empty table.
func NewIntTable() *IntTable {
	return &IntTable{slots: make([]intSlot, minTableSize), mask: minTableSize - 1}
}

// Len is the number of ids given.
func (t *IntTable) Len() int { return t.n }

// NewID gives the next id to something that is not a value (a null).
func (t *IntTable) NewID() uint32 {
	id := uint32(t.n)
	t.n++
	return id
}

// Prepare puts a direct lookup table in front of an empty table when the
// values to come lie in [lo, hi] and that range is small next to the
// number of rows: one load per row instead of a hash and a probe.
func (t *IntTable) Prepare(lo, hi int64, rows int) {
	if t.n > 0 || hi < lo {
		return
	}
	span := uint64(hi) - uint64(lo) + 1
	if span == 0 || span > uint64(2*rows+1<<16) || span > 1<<25 {
		return
	}
	t.lut = make([]uint32, span)
	t.lutMin = uint64(lo)
}

// Insert returns the id of v, giving it the next id if it is new.
func (t *IntTable) Insert(v uint64) uint32 {
	if t.lut != nil {
		if k := v - t.lutMin; k < uint64(len(t.lut)) {
			if id := t.lut[k]; id != 0 {
				return id - 1
			}
			id := uint32(t.n)
			t.n++
			t.lut[k] = id + 1
			return id
		}
	}
	i := HashUint64(v) & t.mask
	for {
		s := &t.slots[i]
		if s.id == 0 {
			id := uint32(t.n)
			t.n++
			s.key, s.id = v, id+1
			t.hashed++
			if tooFull(t.hashed, len(t.slots)) {
				t.resize(2 * len(t.slots))
			}
			return id
		}
		if s.key == v {
			return s.id - 1
		}
		i = (i + 1) & t.mask
	}
}

// Lookup returns the id of v, or NoID.
func (t *IntTable) Lookup(v uint64) uint32 {
	if t.lut != nil {
		if k := v - t.lutMin; k < uint64(len(t.lut)) {
			return t.lut[k] - 1 // 0-1 is NoID
		}
		if t.hashed == 0 {
			return NoID
		}
	}
	i := HashUint64(v) & t.mask
	for {
		s := &t.slots[i]
		if s.id == 0 {
			return NoID
		}
		if s.key == v {
			return s.id - 1
		}
		i = (i + 1) & t.mask
	}
}

// Reserve makes room for n values in the hash table without growing.
func (t *IntTable) Reserve(n int) {
	if size := tableSize(n); size > len(t.slots) {
		t.resize(size)
	}
}

// tableSize is the number of slots for n values.
func tableSize(n int) int {
	size := minTableSize
	for tooFull(n, size) {
		size *= 2
	}
	return size
}

// Marks of the rows given to InsertAll and LookupAll.
const (
	MarkKey  uint8 = iota // the row's key is in keys
	MarkSkip              // leave the row alone (its id is written already)
	MarkNull              // the row is null: the table's null id (NullID)
)

// NullID returns the id of null, giving it the next id when insert is
// true and it has none; NoID when it has none.
func (t *IntTable) NullID(insert bool) uint32 {
	if t.null == 0 && insert {
		t.null = t.NewID() + 1
	}
	return t.null - 1
}

// InsertAll gives ids to the rows of a batch, in row order, writing them
// to out: keys[j] for a row that marks (nil: all MarkKey) marks MarkKey,
// the null id for MarkNull. It hashes the whole batch first and then
// probes, so that the cache misses of many rows overlap.
func (t *IntTable) InsertAll(keys []uint64, marks []uint8, out []uint32) {
	if t.lut != nil {
		lut, lmin := t.lut, t.lutMin
		for j, v := range keys {
			switch {
			case marks == nil || marks[j] == MarkKey:
				if k := v - lmin; k < uint64(len(lut)) {
					if id := lut[k]; id != 0 {
						out[j] = id - 1
						continue
					}
				}
				out[j] = t.Insert(v)
			case marks[j] == MarkNull:
				out[j] = t.NullID(true)
			}
		}
		return
	}
	if cap(t.pos) < len(keys) {
		t.pos = make([]uint64, max(len(keys), ChunkRows))
	}
	pos := positions(t.mask, keys, t.pos[:len(keys)])
	mask := t.mask
	for j, v := range keys {
		if marks != nil && marks[j] != MarkKey {
			if marks[j] == MarkNull {
				out[j] = t.NullID(true)
			}
			continue
		}
		i := pos[j]
		for {
			s := &t.slots[i]
			if s.id == 0 {
				id := uint32(t.n)
				t.n++
				s.key, s.id = v, id+1
				t.hashed++
				out[j] = id
				if tooFull(t.hashed, len(t.slots)) {
					t.resize(2 * len(t.slots))
					mask = t.mask
					for k := j + 1; k < len(keys); k++ {
						pos[k] = HashUint64(keys[k]) & mask
					}
				}
				break
			}
			if s.key == v {
				out[j] = s.id - 1
				break
			}
			i = (i + 1) & mask
		}
	}
}

// LookupAll writes the id of each row, or NoID, to out; see InsertAll.
// pos is scratch space for as many values as keys (allocated when nil or
// short), so that lookups of one table may run concurrently.
func (t *IntTable) LookupAll(keys []uint64, marks []uint8, out []uint32, pos []uint64) {
	if t.lut != nil {
		lut, lmin := t.lut, t.lutMin
		for j, v := range keys {
			switch {
			case marks == nil || marks[j] == MarkKey:
				if k := v - lmin; k < uint64(len(lut)) {
					out[j] = lut[k] - 1 // 0-1 is NoID
				} else {
					out[j] = t.Lookup(v)
				}
			case marks[j] == MarkNull:
				out[j] = t.NullID(false)
			}
		}
		return
	}
	if cap(pos) < len(keys) {
		pos = make([]uint64, len(keys))
	}
	pos = positions(t.mask, keys, pos[:len(keys)])
	mask := t.mask
	slots := t.slots
	for j, v := range keys {
		if marks != nil && marks[j] != MarkKey {
			if marks[j] == MarkNull {
				out[j] = t.NullID(false)
			}
			continue
		}
		i := pos[j]
		for {
			s := &slots[i]
			if s.id == 0 {
				out[j] = NoID
				break
			}
			if s.key == v {
				out[j] = s.id - 1
				break
			}
			i = (i + 1) & mask
		}
	}
}

// positions writes the home slot of each key to pos.
func positions(mask uint64, keys, pos []uint64) []uint64 {
	for j, v := range keys {
		pos[j] = HashUint64(v) & mask
	}
	return pos
}

func (t *IntTable) resize(n int) {
	slots := make([]intSlot, n)
	mask := uint64(n - 1)
	for _, s := range t.slots {
		if s.id == 0 {
			continue
		}
		i := HashUint64(s.key) & mask
		for slots[i].id != 0 {
			i = (i + 1) & mask
		}
		slots[i] = s
	}
	t.slots, t.mask = slots, mask
}

// StrTable maps byte strings to dense ids. A slot holds the hash, the
// length and the first 16 bytes of its string, so that a string of at most
// 16 bytes is found by reading one slot; longer strings are compared with
// their bytes, kept in an arena.
type StrTable struct {
	slots []strSlot
	mask  uint64
	offs  []int64 // bytes of the i-th string inserted: arena[offs[i]:offs[i+1]]
	arena []byte
	n     int // ids given (strings and NewID)
	nstr  int // strings held
}

type strSlot struct {
	w0, w1 uint64
	hash   uint64
	id     uint32 // id+1; 0 marks an empty slot
	len    uint32
	str    uint32 // index of the string in offs
}

// NewStrTable returns an empty table.
func NewStrTable() *StrTable {
	return &StrTable{slots: make([]strSlot, minTableSize), mask: minTableSize - 1, offs: []int64{0}}
}

// Len is the number of ids given.
func (t *StrTable) Len() int { return t.n }

// NewID gives the next id to something that is not a string (a null).
func (t *StrTable) NewID() uint32 {
	id := uint32(t.n)
	t.n++
	return id
}

func (t *StrTable) stored(k uint32) string {
	return bytesToString(t.arena[t.offs[k]:t.offs[k+1]])
}

func strKey(s string) (w0, w1, h uint64) {
	n := len(s)
	if n > 0 {
		w0, w1 = Words(unsafe.StringData(s), n)
	}
	if n <= 16 {
		h = HashWords(w0, w1, n)
	} else {
		h = HashLong(s)
	}
	return w0, w1, h
}

// Insert returns the id of s, giving it the next id if it is new.
func (t *StrTable) Insert(s string) uint32 {
	w0, w1, h := strKey(s)
	i := h & t.mask
	for {
		sl := &t.slots[i]
		if sl.id == 0 {
			id := uint32(t.n)
			t.n++
			var k uint32
			if len(s) > 16 {
				k = uint32(t.nstr)
				t.nstr++
				t.arena = append(t.arena, s...)
				t.offs = append(t.offs, int64(len(t.arena)))
			}
			*sl = strSlot{w0: w0, w1: w1, hash: h, id: id + 1, len: uint32(len(s)), str: k}
			if tooFull(t.n, len(t.slots)) {
				t.resize(2 * len(t.slots))
			}
			return id
		}
		if sl.hash == h && sl.w0 == w0 && sl.w1 == w1 && int(sl.len) == len(s) &&
			(len(s) <= 16 || t.stored(sl.str) == s) {
			return sl.id - 1
		}
		i = (i + 1) & t.mask
	}
}

// Lookup returns the id of s, or NoID.
func (t *StrTable) Lookup(s string) uint32 {
	w0, w1, h := strKey(s)
	i := h & t.mask
	for {
		sl := &t.slots[i]
		if sl.id == 0 {
			return NoID
		}
		if sl.hash == h && sl.w0 == w0 && sl.w1 == w1 && int(sl.len) == len(s) &&
			(len(s) <= 16 || t.stored(sl.str) == s) {
			return sl.id - 1
		}
		i = (i + 1) & t.mask
	}
}

// Reserve makes room for n strings without growing.
func (t *StrTable) Reserve(n int) {
	if size := tableSize(n); size > len(t.slots) {
		t.resize(size)
	}
}

func (t *StrTable) resize(n int) {
	slots := make([]strSlot, n)
	mask := uint64(n - 1)
	for _, sl := range t.slots {
		if sl.id == 0 {
			continue
		}
		i := sl.hash & mask
		for slots[i].id != 0 {
			i = (i + 1) & mask
		}
		slots[i] = sl
	}
	t.slots, t.mask = slots, mask
}
