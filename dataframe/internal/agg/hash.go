package agg

import "math/bits"

// The hashes of values are those of package rows: fixed functions of the
// value (no per-process seed), so that every process of a cluster sends
// equal keys to the same partition. Tuples fold them with combineHash.

const (
	hk0 = 0xa0761d6478bd642f
	hk1 = 0xe7037ed1a0b428db
	hk2 = 0x8ebc6af09c88c6e3
	hk3 = 0x589965cc75374cc3
)

// mix folds the 128-bit product of a and b into 64 bits.
func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// combineHash folds the hash of one more key into the hash of a tuple.
func combineHash(h, k uint64) uint64 {
	return mix(h^hk2, k^hk3)
}

// nullHash is the hash of a null key.
const nullHash = 0x2d358dccaa6c78a5
