package rows

// Group sorts row numbers by id (a counting sort, stable): the rows of id g
// are order[starts[g]:starts[g+1]], in ascending order. Rows whose id is
// NoID are left out. n is the number of ids.
func Group(ids []uint32, n int) (starts, order []int32) {
	starts = make([]int32, n+1)
	for _, g := range ids {
		if g != NoID {
			starts[g+1]++
		}
	}
	for g := 1; g <= n; g++ {
		starts[g] += starts[g-1]
	}
	order = make([]int32, starts[n])
	next := make([]int32, n)
	copy(next, starts[:n])
	for r, g := range ids {
		if g != NoID {
			order[next[g]] = int32(r)
			next[g]++
		}
	}
	return starts, order
}

// FirstRows returns, for ids given in the order of first occurrence (as an
// Encoder gives them), the first row of each id, in id order. n is the
// number of ids.
func FirstRows(ids []uint32, n int) []int32 {
	first := make([]int32, n)
	next := uint32(0)
	for r, g := range ids {
		if g == next {
			first[g] = int32(r)
			next++
		}
	}
	return first
}
