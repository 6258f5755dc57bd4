package csv

import (
	"bytes"
	"hash/maphash"
)

// dictTable maps the distinct values of a dictionary column to their
// indexes. The values are kept one after another in data (offsets in offs);
// the open-addressing table holds each value's index and part of its hash,
// so that a lookup touches the table and, on a likely match, the value's
// bytes, with no allocation and no pointer to follow.
type dictTable struct {
	seed  maphash.Seed
	slots []dictSlot // a power of two, at most half full
	offs  []int32    // value i is data[offs[i]:offs[i+1]]
	data  []byte
}

type dictSlot struct {
	hash uint32 // high bits of the value's hash
	idx  int32  // index + 1; 0: empty
}

func newDictTable() *dictTable {
	return &dictTable{seed: maphash.MakeSeed(), slots: make([]dictSlot, 64), offs: []int32{0}}
}

// len returns the number of distinct values.
func (d *dictTable) len() int { return len(d.offs) - 1 }

// index returns the index of value v, adding it if new.
func (d *dictTable) index(v []byte) int32 {
	h := maphash.Bytes(d.seed, v)
	tag := uint32(h >> 32)
	mask := uint64(len(d.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &d.slots[i]
		if s.idx == 0 {
			idx := int32(d.len())
			d.data = append(d.data, v...)
			d.offs = append(d.offs, int32(len(d.data)))
			s.hash, s.idx = tag, idx+1
			if 2*d.len() > len(d.slots) {
				d.grow()
			}
			return idx
		}
		if s.hash == tag {
			k := s.idx - 1
			if bytes.Equal(d.data[d.offs[k]:d.offs[k+1]], v) {
				return k
			}
		}
	}
}

// grow doubles the table.
func (d *dictTable) grow() {
	slots := make([]dictSlot, 2*len(d.slots))
	mask := uint64(len(slots) - 1)
	for k := range d.len() {
		h := maphash.Bytes(d.seed, d.data[d.offs[k]:d.offs[k+1]])
		i := h & mask
		for slots[i].idx != 0 {
			i = (i + 1) & mask
		}
		slots[i] = dictSlot{hash: uint32(h >> 32), idx: int32(k) + 1}
	}
	d.slots = slots
}
