package rows

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// The hashes are fixed functions of the value, as in package agg: loads of
// up to 8 bytes and one 64x64->128 multiply to mix (after wyhash).

const (
	hk0 = 0xa0761d6478bd642f
	hk1 = 0xe7037ed1a0b428db
	hk2 = 0x8ebc6af09c88c6e3
	hk3 = 0x589965cc75374cc3
)

func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// HashUint64 hashes a 64-bit value.
func HashUint64(v uint64) uint64 { return mix(v^hk0, hk1) }

// HashString hashes the bytes of s.
func HashString(s string) uint64 {
	if len(s) > 16 {
		return HashLong(s)
	}
	w0, w1 := Words(unsafe.StringData(s), len(s))
	return HashWords(w0, w1, len(s))
}

// HashWords hashes a string of at most 16 bytes given as its Words.
func HashWords(w0, w1 uint64, n int) uint64 { return mix(w0^hk1, w1^hk2^uint64(n)) }

// Words returns the first 16 bytes at p, of which n are the string's,
// little-endian and zero-padded: two strings of at most 16 bytes are equal
// if and only if their lengths and words are. It reads no byte past p+n.
func Words(p *byte, n int) (w0, w1 uint64) {
	switch {
	case n >= 16:
		return load64(p, 0), load64(p, 8)
	case n > 8:
		return load64(p, 0), load64(p, n-8) >> (8 * uint(16-n))
	case n == 8:
		return load64(p, 0), 0
	case n >= 4:
		lo, hi := uint64(load32(p, 0)), uint64(load32(p, n-4))
		return lo | (hi>>(8*uint(8-n)))<<32, 0
	case n > 0:
		w0 = uint64(*p)
		if n > 1 {
			w0 |= uint64(*add(p, 1)) << 8
		}
		if n > 2 {
			w0 |= uint64(*add(p, 2)) << 16
		}
	}
	return w0, 0
}

// HashLong hashes a string of more than 16 bytes.
func HashLong(s string) uint64 {
	seed := uint64(hk0)
	n := len(s)
	b := unsafe.Slice(unsafe.StringData(s), n)
	i := 0
	for ; n-i > 16; i += 16 {
		seed = mix(binary.LittleEndian.Uint64(b[i:])^hk1, binary.LittleEndian.Uint64(b[i+8:])^seed)
	}
	a := binary.LittleEndian.Uint64(b[n-16:])
	c := binary.LittleEndian.Uint64(b[n-8:])
	return mix(a^hk1^uint64(n), c^seed^hk3)
}

func add(p *byte, i int) *byte { return (*byte)(unsafe.Add(unsafe.Pointer(p), i)) }

func load64(p *byte, i int) uint64 { return binary.LittleEndian.Uint64(unsafe.Slice(add(p, i), 8)) }

func load32(p *byte, i int) uint32 { return binary.LittleEndian.Uint32(unsafe.Slice(add(p, i), 4)) }
