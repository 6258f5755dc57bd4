package array

import (
	"fmt"
	"slices"
)

// unknown is the size of a chunk (and of an axis) that is not known until
// the array is computed, as after boolean indexing.
const unknown = -1

const defaultChunkBytes = 128 << 20

// normalizeChunks turns a chunk spec into explicit chunk sizes per axis.
func normalizeChunks(spec *chunkSpec, shape []int, dt DType) ([][]int, error) {
	for a, s := range shape {
		if s < 0 {
			return nil, fmt.Errorf("shape %v has a negative size %d on axis %d", shape, shape[a], a)
		}
	}
	if spec == nil {
		spec = &chunkSpec{bytes: defaultChunkBytes}
	}
	switch {
	case spec.explicit != nil:
		if len(spec.explicit) != len(shape) {
			return nil, fmt.Errorf("ChunkSizes gives sizes for %d axes, but the shape %s has %d", len(spec.explicit), fmtShape(shape), len(shape))
		}
		out := make([][]int, len(shape))
		for a, sizes := range spec.explicit {
			sum := 0
			for _, c := range sizes {
				if c < 0 || (c == 0 && shape[a] != 0) {
					return nil, fmt.Errorf("chunk sizes %v of axis %d: every chunk needs a positive size", sizes, a)
				}
				sum += c
			}
			if sum != shape[a] {
				return nil, fmt.Errorf("chunk sizes %v of axis %d add up to %d, but the axis has length %d (shape %s)", sizes, a, sum, shape[a], fmtShape(shape))
			}
			if len(sizes) == 0 {
				sizes = []int{0}
			}
			out[a] = slices.Clone(sizes)
		}
		return out, nil
	case spec.regular != nil:
		reg := spec.regular
		if len(reg) == 1 && len(shape) != 1 {
			reg = slices.Repeat(reg, len(shape))
		}
		if len(reg) != len(shape) {
			return nil, fmt.Errorf("Chunks%v gives %d sizes, but the shape %s has %d axes", spec.regular, len(reg), fmtShape(shape), len(shape))
		}
		out := make([][]int, len(shape))
		for a, c := range reg {
			if c == -1 {
				c = shape[a]
			}
			if c <= 0 && shape[a] > 0 {
				return nil, fmt.Errorf("Chunks%v: chunk size %d for axis %d must be positive (or -1 for the whole axis)", spec.regular, reg[a], a)
			}
			out[a] = regularChunks(shape[a], c)
		}
		return out, nil
	default:
		return autoChunks(shape, dt, spec.bytes)
	}
}

// regularChunks splits n into chunks of size c, the last one smaller.
func regularChunks(n, c int) []int {
	if n == 0 {
		return []int{0}
	}
	c = min(c, n)
	out := make([]int, 0, (n+c-1)/c)
	for s := 0; s < n; s += c {
		out = append(out, min(c, n-s))
	}
	return out
}

// autoChunks halves the longest chunk side until a chunk takes at most
// limit bytes.
func autoChunks(shape []int, dt DType, limit int64) ([][]int, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("ChunkBytes(%d): the limit must be positive", limit)
	}
	size := slices.Clone(shape)
	bytes := func() int64 {
		n := int64(dt.Size())
		for _, s := range size {
			n *= int64(max(s, 1))
		}
		return n
	}
	for bytes() > limit {
		a := 0
		for i, s := range size {
			if s > size[a] {
				a = i
			}
		}
		if size[a] <= 1 {
			break
		}
		size[a] = (size[a] + 1) / 2
	}
	out := make([][]int, len(shape))
	for a := range shape {
		out[a] = regularChunks(shape[a], max(size[a], 1))
	}
	return out, nil
}

// shapeOfChunks returns the length of every axis, unknown where a chunk
// size is unknown.
func shapeOfChunks(chunks [][]int) []int {
	shape := make([]int, len(chunks))
	for a, cs := range chunks {
		for _, c := range cs {
			if c == unknown {
				shape[a] = unknown
				break
			}
			shape[a] += c
		}
	}
	return shape
}

func knownAxis(cs []int) bool { return !slices.Contains(cs, unknown) }

func allKnown(chunks [][]int) bool {
	for _, cs := range chunks {
		if !knownAxis(cs) {
			return false
		}
	}
	return true
}

// offsets returns where each chunk of an axis starts, and the axis length
// last.
func offsets(cs []int) []int {
	out := make([]int, len(cs)+1)
	for i, c := range cs {
		out[i+1] = out[i] + c
	}
	return out
}

func gridShape(chunks [][]int) []int {
	g := make([]int, len(chunks))
	for a, cs := range chunks {
		g[a] = len(cs)
	}
	return g
}

func numBlocks(chunks [][]int) int {
	n := 1
	for _, cs := range chunks {
		n *= len(cs)
	}
	return n
}

// blockIndex returns the grid index of block number i in row-major order.
func blockIndex(grid []int, i int) []int {
	idx := make([]int, len(grid))
	for a := len(grid) - 1; a >= 0; a-- {
		idx[a] = i % grid[a]
		i /= grid[a]
	}
	return idx
}

// blockNumber is the inverse of blockIndex.
func blockNumber(grid, idx []int) int {
	n := 0
	for a := range grid {
		n = n*grid[a] + idx[a]
	}
	return n
}

func blockShape(chunks [][]int, idx []int) []int {
	s := make([]int, len(chunks))
	for a := range chunks {
		s[a] = chunks[a][idx[a]]
	}
	return s
}

func cloneChunks(chunks [][]int) [][]int {
	out := make([][]int, len(chunks))
	for a := range chunks {
		out[a] = slices.Clone(chunks[a])
	}
	return out
}

func equalChunks(a, b [][]int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// formatChunks writes chunks compactly: n chunks of size c as "n×c".
func formatChunks(chunks [][]int) string {
	s := "("
	for a, cs := range chunks {
		if a > 0 {
			s += ", "
		}
		s += formatAxisChunks(cs)
	}
	return s + ")"
}

func formatAxisChunks(cs []int) string {
	if len(cs) > 1 && !slices.Contains(cs, unknown) && slices.Max(cs) == slices.Min(cs) {
		return fmt.Sprintf("%d×%d", len(cs), cs[0])
	}
	s := "["
	for i, c := range cs {
		if i > 0 {
			s += " "
		}
		if c == unknown {
			s += "?"
		} else {
			s += fmt.Sprint(c)
		}
		if i == 8 && len(cs) > 10 {
			s += fmt.Sprintf(" ... (%d chunks)", len(cs))
			break
		}
	}
	return s + "]"
}

// normAxis turns a possibly negative axis into 0..nd-1.
func normAxis(axis, nd int) (int, error) {
	a := axis
	if a < 0 {
		a += nd
	}
	if a < 0 || a >= nd {
		return 0, fmt.Errorf("axis %d is out of range for an array of %d dimensions", axis, nd)
	}
	return a, nil
}

// normAxes normalizes, checks for repeats and sorts.
func normAxes(axes []int, nd int) ([]int, error) {
	out := make([]int, len(axes))
	for i, ax := range axes {
		a, err := normAxis(ax, nd)
		if err != nil {
			return nil, err
		}
		out[i] = a
	}
	s := slices.Clone(out)
	slices.Sort(s)
	if len(slices.Compact(slices.Clone(s))) != len(s) {
		return nil, fmt.Errorf("axes %v repeat an axis", axes)
	}
	return s, nil
}
