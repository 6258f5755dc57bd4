package sortk

import (
	"cmp"
	"math/bits"
	"slices"
)

// Sorting (key, row) pairs by key, ties by row: radix sorts for large
// inputs, comparison sorts for small ones. The rows of equal keys arrive in
// ascending order and stay so, which makes every sort here stable.

const (
	insertionMax = 24   // up to this many pairs: insertion sort
	radixMin     = 1024 // from this many pairs: radix sort
	digitMax     = 11   // widest radix digit, in bits
)

type pair struct {
	k uint64
	r int32
}

// pairSorter holds scratch space reused between sorts.
type pairSorter struct {
	pairs []pair
	hist  []int
	tmp   []uint64 // radix scratch for packed keys
}

// sortPairs sorts keys ascending, permuting rows alongside; among equal
// keys, rows stay in the order they came in. tk and tr are scratch space of
// the same length.
func (p *pairSorter) sortPairs(keys []uint64, rows []int32, tk []uint64, tr []int32) {
	n := len(keys)
	switch {
	case n < 2:
		return
	case n <= insertionMax:
		insertionSort(keys, rows)
		return
	case n < radixMin:
		p.comparisonSort(keys, rows)
		return
	}
	lo, hi := keys[0], keys[0]
	for _, k := range keys[1:] {
		lo = min(lo, k)
		hi = max(hi, k)
	}
	if lo == hi {
		return
	}
	nbits := bits.Len64(hi - lo)
	pb := bits.Len(uint(n - 1)) // bits of a position
	// Pack the key's top bits (all of them when they fit) and the position
	// into one word, and sort the words by their key bits only: the sort
	// is stable, so positions stay ascending among equal keys.
	shift := max(0, nbits-(64-pb))
	packed := tk
	for i, k := range keys {
		packed[i] = (k-lo)>>shift<<pb | uint64(i)
	}
	mask := uint64(1)<<pb - 1
	copy(tr, rows)
	if shift == 0 {
		// The words hold the whole keys: keys is free to be the radix
		// scratch, and gets the keys back from the words.
		radixWords(packed, keys, pb, nbits, &p.hist)
		for i, w := range packed {
			rows[i] = tr[w&mask]
			keys[i] = w>>pb + lo
		}
		return
	}
	if cap(p.tmp) < n {
		p.tmp = make([]uint64, n)
	}
	tmp := p.tmp[:n]
	radixWords(packed, tmp, pb, nbits-shift, &p.hist)
	for i, w := range packed {
		j := w & mask
		rows[i] = tr[j]
		tmp[i] = keys[j]
	}
	copy(keys, tmp)
	// Keys that share their top bits: sort those runs by the whole key.
	for a := 0; a < n; {
		top := (keys[a] - lo) >> shift
		b := a + 1
		for b < n && (keys[b]-lo)>>shift == top {
			b++
		}
		if b-a > 1 {
			p.sortPairs(keys[a:b], rows[a:b], tk[a:b], tr[a:b])
		}
		a = b
	}
}

func insertionSort(keys []uint64, rows []int32) {
	for i := 1; i < len(keys); i++ {
		k, r := keys[i], rows[i]
		j := i
		for ; j > 0 && keys[j-1] > k; j-- {
			keys[j], rows[j] = keys[j-1], rows[j-1]
		}
		keys[j], rows[j] = k, r
	}
}

func (p *pairSorter) comparisonSort(keys []uint64, rows []int32) {
	if cap(p.pairs) < len(keys) {
		p.pairs = make([]pair, len(keys))
	}
	ps := p.pairs[:len(keys)]
	for i := range ps {
		ps[i] = pair{keys[i], rows[i]}
	}
	slices.SortFunc(ps, func(a, b pair) int {
		if c := cmp.Compare(a.k, b.k); c != 0 {
			return c
		}
		return cmp.Compare(a.r, b.r)
	})
	for i, q := range ps {
		keys[i], rows[i] = q.k, q.r
	}
}

// digits splits nbits into passes of at most digitMax bits.
func digits(nbits int) (passes, width int) {
	passes = (nbits + digitMax - 1) / digitMax
	width = (nbits + passes - 1) / passes
	return passes, width
}

// radixWords sorts words stably by bits [shift, shift+nbits), LSD first.
func radixWords(a, tmp []uint64, shift, nbits int, hist *[]int) {
	passes, width := digits(nbits)
	buckets := 1 << width
	if cap(*hist) < passes*buckets {
		*hist = make([]int, passes*buckets)
	}
	h := (*hist)[:passes*buckets]
	clear(h)
	mask := uint64(buckets - 1)
	for _, w := range a {
		w >>= shift
		for p := range passes {
			h[p*buckets+int(w>>(uint(p*width))&mask)]++
		}
	}
	n := len(a)
	src, dst := a, tmp
	for p := range passes {
		c := h[p*buckets : (p+1)*buckets]
		if skipPass(c, n) {
			continue
		}
		prefix(c)
		s := uint(shift + p*width)
		for _, w := range src {
			d := int(w >> s & mask)
			dst[c[d]] = w
			c[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &a[0] {
		copy(a, src)
	}
}

// skipPass reports whether every value has the same digit.
func skipPass(c []int, n int) bool {
	for _, x := range c {
		if x != 0 {
			return x == n
		}
	}
	return true
}

// prefix turns counts into starting positions.
func prefix(c []int) {
	sum := 0
	for i, x := range c {
		c[i] = sum
		sum += x
	}
}
