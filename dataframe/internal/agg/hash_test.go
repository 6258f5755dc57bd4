package agg

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"unsafe"

	rowbuf "github.com/shoal-data/shoal/dataframe/internal/distinct/rows"
)

// TestWords checks the padded words of every length up to 16 against a
// zero-padded copy, for strings at the end of a buffer.
func TestWords(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for n := 0; n <= 16; n++ {
		for range 50 {
			buf := make([]byte, 32)
			for i := range buf {
				buf[i] = byte(r.Uint32())
			}
			s := buf[32-n:]
			var pad [16]byte
			copy(pad[:], s)
			w0, w1 := rowbuf.Words(unsafe.SliceData(s), n)
			if n == 0 {
				w0, w1 = 0, 0
			}
			if w0 != binary.LittleEndian.Uint64(pad[:8]) || w1 != binary.LittleEndian.Uint64(pad[8:]) {
				t.Fatalf("n=%d: words %x %x, want %x", n, w0, w1, pad)
			}
		}
	}
}

// TestHashString: equal strings hash equally, and the hash spreads over the
// low bits that index the tables.
func TestHashString(t *testing.T) {
	seen := map[uint64]int{}
	buckets := make([]int, 1024)
	n := 100000
	for i := range n {
		s := []byte("id0000000000")
		binary.BigEndian.PutUint32(s[8:], uint32(i))
		h := rowbuf.HashString(string(s))
		if rowbuf.HashString(string(append([]byte(nil), s...))) != h {
			t.Fatal("hash differs for equal strings")
		}
		seen[h]++
		buckets[h&1023]++
	}
	if len(seen) != n {
		t.Errorf("%d collisions of 64-bit hashes in %d strings", n-len(seen), n)
	}
	for b, c := range buckets {
		if c < n/1024/2 || c > n/1024*2 {
			t.Errorf("bucket %d has %d of %d strings", b, c, n)
		}
	}
	long := "a string that is longer than sixteen bytes"
	if rowbuf.HashString(long) == rowbuf.HashString(long[:len(long)-1]+"t") {
		t.Error("long strings differing in the last byte collide")
	}
}
