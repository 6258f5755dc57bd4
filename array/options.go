package array

import (
	"fmt"
	"slices"
	"strings"
)

// Option configures a function of this package: how an array is chunked,
// its element type, the axes of a reduction and so on. Each function says
// which options it takes; passing another one is an error naming it.
type Option struct {
	name  string
	apply func(*config)
}

type config struct {
	chunks     *chunkSpec
	dtype      DType
	axes       []int
	axesSet    bool
	keepDims   bool
	splitEvery int
	ddof       int
	boundary   Boundary
	boundSet   bool
	dropAxes   []int
	newAxes    []int
	newSizes   []int
}

// chunkSpec says how to chunk an array: regular sizes per axis, explicit
// sizes per axis, or automatically up to a number of bytes per chunk.
type chunkSpec struct {
	regular  []int
	explicit [][]int
	bytes    int64
}

// Chunks chunks an array regularly: sizes[i] elements along axis i (the
// last chunk may be smaller); -1 means the whole axis in one chunk. One
// size applies to every axis.
func Chunks(sizes ...int) Option {
	s := slices.Clone(sizes)
	return Option{name: "Chunks", apply: func(c *config) { c.chunks = &chunkSpec{regular: s} }}
}

// ChunkSizes gives the size of every chunk along every axis: perAxis[i]
// lists the sizes along axis i, which must add up to its length.
func ChunkSizes(perAxis ...[]int) Option {
	e := make([][]int, len(perAxis))
	for i, p := range perAxis {
		e[i] = slices.Clone(p)
	}
	return Option{name: "ChunkSizes", apply: func(c *config) { c.chunks = &chunkSpec{explicit: e} }}
}

// ChunkBytes chunks an array automatically into chunks of at most about n
// bytes (the default is 128 MiB), splitting the largest axes first.
func ChunkBytes(n int64) Option {
	return Option{name: "ChunkBytes", apply: func(c *config) { c.chunks = &chunkSpec{bytes: n} }}
}

// WithDType sets the element type of a created array (Float64 by default).
func WithDType(t DType) Option {
	return Option{name: "WithDType", apply: func(c *config) { c.dtype = t }}
}

// Axis sets the axes a reduction runs along (all axes by default).
// Negative axes count from the end: -1 is the last axis.
func Axis(axes ...int) Option {
	a := slices.Clone(axes)
	return Option{name: "Axis", apply: func(c *config) { c.axes, c.axesSet = a, true }}
}

// KeepDims keeps the reduced axes in the result, with size 1, so that it
// broadcasts against the input.
func KeepDims() Option {
	return Option{name: "KeepDims", apply: func(c *config) { c.keepDims = true }}
}

// SplitEvery sets how many partial results a reduction combines in one
// task of its tree (default 8). Smaller values make a deeper tree with
// smaller tasks.
func SplitEvery(n int) Option {
	return Option{name: "SplitEvery", apply: func(c *config) { c.splitEvery = n }}
}

// Ddof sets the delta degrees of freedom of Var and Std: the divisor is
// N - ddof (default 0, as in NumPy).
func Ddof(n int) Option {
	return Option{name: "Ddof", apply: func(c *config) { c.ddof = n }}
}

// DropAxes tells MapBlocks and Blockwise that the function removes these
// axes of its input blocks (which must be in one chunk).
func DropAxes(axes ...int) Option {
	a := slices.Clone(axes)
	return Option{name: "DropAxes", apply: func(c *config) { c.dropAxes = a }}
}

// NewAxis tells MapBlocks that the function adds an axis at position axis
// of its output blocks, of the given size.
func NewAxis(axis, size int) Option {
	return Option{name: "NewAxis", apply: func(c *config) {
		c.newAxes = append(c.newAxes, axis)
		c.newSizes = append(c.newSizes, size)
	}}
}

// WithBoundary sets how MapOverlap fills the halo beyond the edges of the
// array (BoundaryReflect by default).
func WithBoundary(b Boundary) Option {
	return Option{name: "WithBoundary", apply: func(c *config) { c.boundary, c.boundSet = b, true }}
}

const defaultSplitEvery = 8

// configure applies opts for the function fn, which accepts the options
// named in allowed.
func configure(fn string, opts []Option, allowed ...string) (config, error) {
	c := config{splitEvery: defaultSplitEvery}
	for _, o := range opts {
		if o.apply == nil {
			return c, fmt.Errorf("%s: zero Option", fn)
		}
		if !slices.Contains(allowed, o.name) {
			if len(allowed) == 0 {
				return c, fmt.Errorf("%s takes no options, got %s", fn, o.name)
			}
			return c, fmt.Errorf("%s does not take option %s (it takes %s)", fn, o.name, strings.Join(allowed, ", "))
		}
		o.apply(&c)
	}
	if c.splitEvery < 2 {
		return c, fmt.Errorf("%s: SplitEvery(%d): a tree needs to combine at least 2 results per task", fn, c.splitEvery)
	}
	if c.dtype != 0 && !c.dtype.valid() {
		return c, fmt.Errorf("%s: invalid dtype %d", fn, c.dtype)
	}
	return c, nil
}

var chunkOptions = []string{"Chunks", "ChunkSizes", "ChunkBytes"}

func withChunkOptions(names ...string) []string { return append(names, chunkOptions...) }
