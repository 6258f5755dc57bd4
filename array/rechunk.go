package array

import (
	"slices"
)

// Rechunk returns the array with other chunks: Chunks, ChunkSizes or
// ChunkBytes say which. Each new chunk is put together by one task from
// the pieces of the old chunks it overlaps. When that would make a task
// read much more than a chunk (from row chunks to column chunks, say),
// the old chunks are first split, one task per old chunk, then the pieces
// put together, so that no task holds more than about one old and one new
// chunk.
func (a Array) Rechunk(opts ...Option) Array {
	if err := a.Err(); err != nil {
		return a
	}
	c, err := configure("Rechunk", opts, chunkOptions...)
	if err != nil {
		return errArray(wrapErr(err))
	}
	if c.chunks == nil {
		return errorf("Rechunk: say how, with Chunks, ChunkSizes or ChunkBytes")
	}
	if !allKnown(a.n.chunks) {
		return errorf("Rechunk: the array has chunks of unknown size %s; call ComputeChunkSizes first", formatChunks(a.n.chunks))
	}
	chunks, err := normalizeChunks(c.chunks, a.Shape(), a.n.dtype)
	if err != nil {
		return errorf("Rechunk: %v", err)
	}
	return rechunkTo(a, chunks)
}

// rechunkTo rechunks a (whose chunks are known) to chunks, which cover the
// same shape.
func rechunkTo(a Array, chunks [][]int) Array {
	if err := a.Err(); err != nil {
		return a
	}
	if equalChunks(a.n.chunks, chunks) {
		return a
	}
	if !allKnown(a.n.chunks) {
		return errorf("Rechunk: the array has chunks of unknown size %s; call ComputeChunkSizes first", formatChunks(a.n.chunks))
	}
	item := int64(a.n.dtype.Size())
	maxIn, maxOut, maxRead := item, item, item
	for ax := range chunks {
		maxIn *= int64(slices.Max(append([]int{1}, a.n.chunks[ax]...)))
		maxOut *= int64(slices.Max(append([]int{1}, chunks[ax]...)))
		maxRead *= int64(maxTouched(a.n.chunks[ax], chunks[ax]))
	}
	if maxRead > 4*max(maxIn, maxOut) {
		// Split first: along the axes where the new chunks are finer, cut
		// the old chunks at the new boundaries too.
		mid := make([][]int, len(chunks))
		for ax := range chunks {
			if len(chunks[ax]) > len(a.n.chunks[ax]) {
				mid[ax] = refine(a.n.chunks[ax], chunks[ax])
			} else {
				mid[ax] = a.n.chunks[ax]
			}
		}
		if !equalChunks(mid, a.n.chunks) && !equalChunks(mid, chunks) {
			a = directRechunk(a, mid)
		}
	}
	return directRechunk(a, chunks)
}

func directRechunk(a Array, chunks [][]int) Array {
	sels := make([]axisSel, len(chunks))
	for ax := range chunks {
		sels[ax] = rangeSel(chunks[ax])
	}
	return selectCoords(a, "rechunk", sels, nil, []any{"rechunk", chunks})
}

// maxTouched returns the largest total length of the old chunks that one
// new chunk overlaps.
func maxTouched(old, new []int) int {
	oo, no := offsets(old), offsets(new)
	best := 0
	for k := range new {
		lo, hi := no[k], no[k+1]
		if hi == lo {
			continue
		}
		b0 := blockOf(oo, lo)
		b1 := blockOf(oo, hi-1)
		best = max(best, oo[b1+1]-oo[b0])
	}
	return best
}

// refine returns the chunks cut at the boundaries of both a and b.
func refine(a, b []int) []int {
	bounds := append(offsets(a), offsets(b)...)
	slices.Sort(bounds)
	bounds = slices.Compact(bounds)
	var out []int
	for i := 1; i < len(bounds); i++ {
		out = append(out, bounds[i]-bounds[i-1])
	}
	if len(out) == 0 {
		out = []int{0}
	}
	return out
}
