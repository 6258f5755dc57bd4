package array

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/shoal-data/shoal/graph"
)

// Functions of your own run on chunks when you register them by name with
// graph.RegisterFunc, so that a graph can name them and run on workers
// started from the same program:
//
//	var smooth = graph.MustRegisterFunc("myapp.smooth", func(ctx context.Context, b *array.Dense) (*array.Dense, error) { ... })
//	y := x.MapOverlap(smooth, []int{1, 1})

// applyParams are the params of an "array.apply" task: build the
// arguments from the task's inputs, call the registered function, cut the
// halo off its result and check it.
type applyParams struct {
	Fn       string     `json:"fn"`
	FnParams []byte     `json:"fn_params"`
	Args     []applyArg `json:"args"`
	List     bool       `json:"list,omitempty"` // the function takes []*Dense
	Trim     [][2]int   `json:"trim,omitempty"` // per axis: elements to cut before and after
	Shape    []int      `json:"shape"`          // expected result; -1 where any size goes
	DType    DType      `json:"dtype"`
	Block    []int      `json:"block"` // the result block's index, for errors
	Name     string     `json:"name"`  // MapBlocks, MapOverlap or Blockwise, for errors
}

// applyArg is one argument: task input Dep, or a block assembled from the
// task's inputs.
type applyArg struct {
	Dep      int             `json:"dep"`
	Assemble *assembleParams `json:"assemble,omitempty"`
}

func runApply(ctx context.Context, in graph.OpInput) (any, error) {
	var p applyParams
	if err := json.Unmarshal(in.Params, &p); err != nil {
		return nil, fmt.Errorf("decode apply params: %w", err)
	}
	if in.Env == nil || in.Env.Registry == nil {
		return nil, fmt.Errorf("%s: no registry to find %s in", p.Name, p.Fn)
	}
	op, err := in.Env.Registry.Op(p.Fn)
	if err != nil {
		return nil, err
	}
	args := make([]any, len(p.Args))
	deps := make([]graph.Key, len(p.Args))
	for i, a := range p.Args {
		deps[i] = in.Key
		if a.Assemble == nil {
			if a.Dep < 0 || a.Dep >= len(in.Inputs) {
				return nil, fmt.Errorf("argument %d reads input %d of %d", i, a.Dep, len(in.Inputs))
			}
			args[i] = in.Inputs[a.Dep]
			continue
		}
		b, err := json.Marshal(a.Assemble)
		if err != nil {
			return nil, err
		}
		v, err := runAssemble(ctx, graph.OpInput{Key: in.Key, Params: b, Inputs: in.Inputs, Deps: in.Deps, Env: in.Env})
		if err != nil {
			return nil, fmt.Errorf("argument %d: %w", i, err)
		}
		args[i] = v
	}
	v, err := graph.RunOp(ctx, op, &graph.Task{Key: in.Key, Op: p.Fn, Params: p.FnParams, Deps: deps}, args, in.Env)
	if err != nil {
		return nil, fmt.Errorf("%s %s on block %v: %w", p.Name, p.Fn, p.Block, err)
	}
	d, ok := v.(*Dense)
	if !ok || d == nil {
		return nil, fmt.Errorf("%s: %s returned a %T on block %v, want a *array.Dense", p.Name, p.Fn, v, p.Block)
	}
	if p.Trim != nil {
		if len(p.Trim) != len(d.shape) {
			return nil, fmt.Errorf("%s: %s returned shape %v on block %v, want %d dimensions", p.Name, p.Fn, d.shape, p.Block, len(p.Trim))
		}
		start, shape := make([]int, len(d.shape)), make([]int, len(d.shape))
		for ax, t := range p.Trim {
			start[ax] = t[0]
			shape[ax] = d.shape[ax] - t[0] - t[1]
			if shape[ax] < 0 {
				return nil, fmt.Errorf("%s: %s returned shape %v on block %v, too small for the halo", p.Name, p.Fn, d.shape, p.Block)
			}
		}
		d = subBlock(d, start, shape)
	}
	if d.dtype != p.DType {
		return nil, fmt.Errorf("%s: %s returned a %s block on block %v, but the result was declared %s (use WithDType)",
			p.Name, p.Fn, d.dtype, p.Block, p.DType)
	}
	ok = len(d.shape) == len(p.Shape)
	for ax := 0; ok && ax < len(d.shape); ax++ {
		ok = p.Shape[ax] == unknown || p.Shape[ax] == d.shape[ax]
	}
	if !ok {
		return nil, fmt.Errorf("%s: %s returned shape %v on block %v, want %v (declare other chunks with ChunkSizes)",
			p.Name, p.Fn, d.shape, p.Block, p.Shape)
	}
	return d, nil
}

// funcParams returns the params of a call of the registered function fn
// on the task inputs 0..n-1 (as one list when list is true).
func funcParams(fn string, n int, list bool) ([]byte, error) {
	var d graph.Delayed
	if list {
		items := make([]any, n)
		for i := range items {
			items[i] = graph.FromKey(graph.Key(fmt.Sprintf("arg-%d", i)))
		}
		d = graph.Call(fn, graph.List(items...))
	} else {
		d = graph.Call(fn, graph.FromKey("block"))
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	g, err := d.Graph()
	if err != nil {
		return nil, err
	}
	t, _ := g.Get(d.Key())
	return t.Params, nil
}

// applyOp runs a registered function on chunks.
type applyOp struct {
	name   string // MapBlocks, MapOverlap, Blockwise
	fn     string
	params []byte
	list   bool
	// plan returns, for the result block idx, the arguments and the task
	// inputs (node and block index), and the halo to trim.
	plan func(l *lowerer, n *node, idx []int) ([]applyArg, []graph.Key, [][2]int, error)
}

func (o *applyOp) prefix() string {
	s := o.fn
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		s = s[i+1:]
	}
	return strings.ToLower(o.name) + "-" + s
}

func (o *applyOp) lower(l *lowerer, n *node) ([]graph.Key, error) {
	grid := gridShape(n.chunks)
	keys := make([]graph.Key, numBlocks(n.chunks))
	for i := range keys {
		idx := blockIndex(grid, i)
		args, deps, trim, err := o.plan(l, n, idx)
		if err != nil {
			return nil, err
		}
		p := applyParams{Fn: o.fn, FnParams: o.params, Args: args, List: o.list, Trim: trim,
			Shape: blockShape(n.chunks, idx), DType: n.dtype, Block: idx, Name: o.name}
		keys[i] = n.key(idx...)
		if err := l.add(keys[i], opApply, p, deps); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// MapBlocks runs fn, a function registered with graph.RegisterFunc (in
// the default registry) that takes and returns a *Dense, on every chunk. By default the result has
// the chunks and dtype of a; say otherwise with WithDType, ChunkSizes (-1
// for sizes not known in advance), DropAxes (axes fn removes; they must
// be in one chunk) or NewAxis (an axis fn adds). A chunk fn returns that
// does not fit is an error naming the chunk.
func (a Array) MapBlocks(fn *graph.Func[*Dense, *Dense], opts ...Option) Array {
	if err := a.Err(); err != nil {
		return a
	}
	if fn == nil {
		return errorf("MapBlocks: nil function")
	}
	c, err := configure("MapBlocks", opts, "WithDType", "ChunkSizes", "DropAxes", "NewAxis")
	if err != nil {
		return errArray(wrapErr(err))
	}
	params, err := funcParams(fn.Name(), 1, false)
	if err != nil {
		return errorf("MapBlocks: %v", err)
	}
	nd := len(a.n.chunks)
	drop, err := normAxes(c.dropAxes, nd)
	if err != nil {
		return errorf("MapBlocks: DropAxes: %v", err)
	}
	var chunks [][]int
	var inOf []int // result axis -> input axis, -1 for a new axis
	for ax := range nd {
		if slices.Contains(drop, ax) {
			if len(a.n.chunks[ax]) != 1 {
				return errorf("MapBlocks: dropped axis %d has %d chunks; rechunk it into one first", ax, len(a.n.chunks[ax]))
			}
			continue
		}
		chunks = append(chunks, slices.Clone(a.n.chunks[ax]))
		inOf = append(inOf, ax)
	}
	for i, ax := range c.newAxes {
		if ax < 0 || ax > len(chunks) {
			return errorf("MapBlocks: NewAxis(%d, %d) is out of range for a result of %d dimensions", ax, c.newSizes[i], len(chunks)+1)
		}
		if c.newSizes[i] < 0 {
			return errorf("MapBlocks: NewAxis(%d, %d): the size must not be negative", ax, c.newSizes[i])
		}
		chunks = slices.Insert(chunks, ax, []int{c.newSizes[i]})
		inOf = slices.Insert(inOf, ax, -1)
	}
	if c.chunks != nil {
		e := c.chunks.explicit
		if e == nil {
			return errorf("MapBlocks: give the result's chunks with ChunkSizes")
		}
		if len(e) != len(chunks) {
			return errorf("MapBlocks: ChunkSizes gives %d axes, the result has %d", len(e), len(chunks))
		}
		for ax := range e {
			if len(e[ax]) != len(chunks[ax]) {
				return errorf("MapBlocks: ChunkSizes gives %d chunks for axis %d, the result has %d (one per input chunk)",
					len(e[ax]), ax, len(chunks[ax]))
			}
			for _, s := range e[ax] {
				if s < unknown {
					return errorf("MapBlocks: chunk size %d of axis %d: sizes are positive, or -1 for unknown", s, ax)
				}
			}
		}
		chunks = cloneChunks(e)
	}
	dt := a.n.dtype
	if c.dtype != 0 {
		dt = c.dtype
	}
	in := a.n
	op := &applyOp{name: "MapBlocks", fn: fn.Name(), params: params, plan: func(l *lowerer, n *node, idx []int) ([]applyArg, []graph.Key, [][2]int, error) {
		ii := make([]int, len(in.chunks))
		for o, ax := range inOf {
			if ax >= 0 {
				ii[ax] = idx[o]
			}
		}
		k, err := l.blockKey(in, ii)
		return []applyArg{{Dep: 0}}, []graph.Key{k}, nil, err
	}}
	return newArray(op, dt, chunks, []*node{a.n}, []any{"mapblocks", fn.Name(), inOf, c.dtype})
}

// Boundary says how MapOverlap fills the halo beyond the edges of the
// array.
type Boundary struct {
	mode  string
	value float64
}

var (
	// BoundaryReflect mirrors the array at its edges, the edge element
	// included: a halo of 2 before [a b c ...] is [b a].
	BoundaryReflect = Boundary{mode: "reflect"}
	// BoundaryPeriodic wraps around: the halo before the first element
	// comes from the end of the axis.
	BoundaryPeriodic = Boundary{mode: "periodic"}
	// BoundaryNearest repeats the edge element.
	BoundaryNearest = Boundary{mode: "nearest"}
	// BoundaryNone adds no halo at the edges of the array: the chunks there
	// are smaller when fn sees them.
	BoundaryNone = Boundary{mode: "none"}
)

// BoundaryConstant fills the halo with value.
func BoundaryConstant(value float64) Boundary { return Boundary{mode: "constant", value: value} }

func (b Boundary) String() string {
	if b.mode == "constant" {
		return fmt.Sprintf("constant(%g)", b.value)
	}
	return b.mode
}

// MapOverlap runs fn, registered as for MapBlocks, on every chunk extended
// by a halo of depth[i] elements along axis i taken from the neighbouring
// chunks (one depth applies to every axis), for stencils and filters. fn
// returns a block of the shape it was given; the halo is cut off its
// result. WithBoundary says what the halo holds beyond the edges of the
// array (BoundaryReflect by default); WithDType declares the result's
// type.
func (a Array) MapOverlap(fn *graph.Func[*Dense, *Dense], depth []int, opts ...Option) Array {
	if err := a.Err(); err != nil {
		return a
	}
	if fn == nil {
		return errorf("MapOverlap: nil function")
	}
	c, err := configure("MapOverlap", opts, "WithDType", "WithBoundary")
	if err != nil {
		return errArray(wrapErr(err))
	}
	params, err := funcParams(fn.Name(), 1, false)
	if err != nil {
		return errorf("MapOverlap: %v", err)
	}
	nd := len(a.n.chunks)
	if len(depth) == 1 && nd != 1 {
		depth = slices.Repeat(depth, nd)
	}
	if len(depth) != nd {
		return errorf("MapOverlap: %d depths for an array of %d dimensions", len(depth), nd)
	}
	for ax, d := range depth {
		if d < 0 {
			return errorf("MapOverlap: depth %d of axis %d must not be negative", d, ax)
		}
	}
	bound := BoundaryReflect
	if c.boundSet {
		bound = c.boundary
	}
	switch bound.mode {
	case "reflect", "periodic", "nearest", "none", "constant":
	default:
		return errorf("MapOverlap: unknown boundary %q", bound.mode)
	}
	if !allKnown(a.n.chunks) {
		return errorf("MapOverlap: the array has chunks of unknown size %s; call ComputeChunkSizes first", formatChunks(a.n.chunks))
	}
	dt := a.n.dtype
	if c.dtype != 0 {
		dt = c.dtype
	}
	in := a.n
	shape := a.Shape()
	depth = slices.Clone(depth)
	op := &applyOp{name: "MapOverlap", fn: fn.Name(), params: params, plan: func(l *lowerer, n *node, idx []int) ([]applyArg, []graph.Key, [][2]int, error) {
		coords := make([][]int, nd)
		trim := make([][2]int, nd)
		eshape := make([]int, nd)
		for ax := range nd {
			offs := offsets(in.chunks[ax])
			lo, hi := offs[idx[ax]], offs[idx[ax]+1]
			for i := lo - depth[ax]; i < hi+depth[ax]; i++ {
				j, ok := boundaryIndex(i, shape[ax], bound.mode)
				if !ok {
					continue
				}
				coords[ax] = append(coords[ax], j)
				if i < lo {
					trim[ax][0]++
				} else if i >= hi {
					trim[ax][1]++
				}
			}
			eshape[ax] = len(coords[ax])
		}
		var fill *num
		if bound.mode == "constant" {
			v := num(bound.value)
			fill = &v
		}
		p, deps, alias, err := l.planGather(in, coords, identityAxes(nd), eshape, in.dtype, fill)
		if err != nil {
			return nil, nil, nil, err
		}
		if alias != "" {
			// No halo: the chunk as it is.
			return []applyArg{{Dep: 0}}, []graph.Key{alias}, trim, nil
		}
		return []applyArg{{Assemble: p}}, deps, trim, nil
	}}
	return newArray(op, dt, cloneChunks(a.n.chunks), []*node{a.n}, []any{"mapoverlap", fn.Name(), depth, bound.mode, num(bound.value), c.dtype})
}

// boundaryIndex maps position i of an extended axis of length n to a
// position of the axis, or reports that it is outside (none) or filled
// (constant: -1).
func boundaryIndex(i, n int, mode string) (int, bool) {
	if i >= 0 && i < n {
		return i, true
	}
	switch mode {
	case "none":
		return 0, false
	case "constant":
		return -1, true
	case "nearest":
		return min(max(i, 0), n-1), true
	case "periodic":
		return ((i % n) + n) % n, true
	default: // reflect, the edge included
		p := 2 * n
		j := ((i % p) + p) % p
		if j >= n {
			j = p - 1 - j
		}
		return j, true
	}
}

// BlockwiseArg is an array with one letter per axis, for Blockwise.
type BlockwiseArg struct {
	Array Array
	Index string
}

// In pairs an array with the letters of its axes, for Blockwise.
func In(a Array, index string) BlockwiseArg { return BlockwiseArg{Array: a, Index: index} }

// Blockwise runs fn, a function registered with graph.RegisterFunc that
// takes a []*Dense (one block per argument, in order) and returns a
// *Dense, over blocks matched by index letters, as Dask's blockwise:
//
//	// z[i,j] = f(x[i,k] for all k, y[k,j] for all k): a blocked product
//	z := array.Blockwise(f, "ij", []array.BlockwiseArg{array.In(x, "ik"), array.In(y, "kj")})
//
// Axes with the same letter must have the same length (they are
// rechunked alike); a letter missing from out is contracted: fn gets the
// blocks along it joined into one. Every letter of out must appear in an
// argument. The result's chunks follow the letters' chunks; WithDType and
// ChunkSizes declare others.
func Blockwise(fn *graph.Func[[]*Dense, *Dense], out string, args []BlockwiseArg, opts ...Option) Array {
	if fn == nil {
		return errorf("Blockwise: nil function")
	}
	if len(args) == 0 {
		return errorf("Blockwise: no arguments")
	}
	for _, x := range args {
		if err := x.Array.Err(); err != nil {
			return x.Array
		}
	}
	c, err := configure("Blockwise", opts, "WithDType", "ChunkSizes")
	if err != nil {
		return errArray(wrapErr(err))
	}
	params, err := funcParams(fn.Name(), len(args), true)
	if err != nil {
		return errorf("Blockwise: %v", err)
	}
	// The length and chunks of every letter, from the first argument that
	// has it.
	length := map[rune]int{}
	chunksOf := map[rune][]int{}
	for i, x := range args {
		if len([]rune(x.Index)) != x.Array.NDim() {
			return errorf("Blockwise: argument %d has index %q for %d dimensions", i, x.Index, x.Array.NDim())
		}
		shape := x.Array.Shape()
		for ax, r := range []rune(x.Index) {
			if strings.Count(x.Index, string(r)) > 1 {
				return errorf("Blockwise: argument %d repeats letter %q in %q", i, r, x.Index)
			}
			if l, ok := length[r]; ok {
				if l != shape[ax] {
					return errorf("Blockwise: letter %q is %d long in an earlier argument and %d in argument %d (shape %s)",
						r, l, shape[ax], i, fmtShape(shape))
				}
				continue
			}
			if shape[ax] == unknown {
				return errorf("Blockwise: argument %d has chunks of unknown size; call ComputeChunkSizes first", i)
			}
			length[r] = shape[ax]
			chunksOf[r] = x.Array.n.chunks[ax]
		}
	}
	outRunes := []rune(out)
	var chunks [][]int
	for _, r := range outRunes {
		if strings.Count(out, string(r)) > 1 {
			return errorf("Blockwise: out %q repeats letter %q", out, r)
		}
		cs, ok := chunksOf[r]
		if !ok {
			return errorf("Blockwise: letter %q of out %q is in no argument", r, out)
		}
		chunks = append(chunks, slices.Clone(cs))
	}
	if c.chunks != nil {
		e := c.chunks.explicit
		if e == nil || len(e) != len(chunks) {
			return errorf("Blockwise: give the result's chunks with ChunkSizes, one list per letter of %q", out)
		}
		for ax := range e {
			if len(e[ax]) != len(chunks[ax]) {
				return errorf("Blockwise: ChunkSizes gives %d chunks for %q, the result has %d", len(e[ax]), outRunes[ax], len(chunks[ax]))
			}
		}
		chunks = cloneChunks(e)
	}
	nodes := make([]*node, len(args))
	idxs := make([][]rune, len(args))
	for i, x := range args {
		want := make([][]int, x.Array.NDim())
		for ax, r := range []rune(x.Index) {
			want[ax] = chunksOf[r]
		}
		y := rechunkTo(x.Array, want)
		if y.Err() != nil {
			return y
		}
		nodes[i] = y.n
		idxs[i] = []rune(x.Index)
	}
	dt := args[0].Array.n.dtype
	if c.dtype != 0 {
		dt = c.dtype
	}
	op := &applyOp{name: "Blockwise", fn: fn.Name(), params: params, list: true,
		plan: func(l *lowerer, n *node, idx []int) ([]applyArg, []graph.Key, [][2]int, error) {
			pos := map[rune]int{}
			for ax, r := range outRunes {
				pos[r] = idx[ax]
			}
			var deps []graph.Key
			var aargs []applyArg
			for i, in := range nodes {
				// The blocks of argument i: fixed along the letters of out,
				// all of them along contracted letters.
				lo, hi := make([]int, len(idxs[i])), make([]int, len(idxs[i]))
				contracted := false
				for ax, r := range idxs[i] {
					if p, ok := pos[r]; ok {
						lo[ax], hi[ax] = p, p+1
					} else {
						lo[ax], hi[ax] = 0, len(in.chunks[ax])
						contracted = contracted || hi[ax] > 1
					}
				}
				if !contracted {
					k, err := l.blockKey(in, lo)
					if err != nil {
						return nil, nil, nil, err
					}
					deps = append(deps, k)
					aargs = append(aargs, applyArg{Dep: len(deps) - 1})
					continue
				}
				shape := make([]int, len(lo))
				for ax := range lo {
					if hi[ax]-lo[ax] == 1 && lo[ax] < len(in.chunks[ax]) {
						shape[ax] = in.chunks[ax][lo[ax]]
					} else {
						shape[ax] = length[idxs[i][ax]]
					}
				}
				ap := &assembleParams{DType: in.dtype, Shape: shape}
				var ferr error
				forEachIndex(lo, hi, func(j []int) {
					if ferr != nil {
						return
					}
					k, err := l.blockKey(in, j)
					if err != nil {
						ferr = err
						return
					}
					deps = append(deps, k)
					runs := make([][]run, len(j))
					for ax := range j {
						dst := 0
						if hi[ax]-lo[ax] > 1 {
							dst = offsets(in.chunks[ax])[j[ax]]
						}
						runs[ax] = []run{{Src: 0, Step: 1, Dst: dst, N: in.chunks[ax][j[ax]]}}
					}
					ap.Pieces = append(ap.Pieces, piece{In: len(deps) - 1, Axes: identityAxes(len(j)), Runs: runs})
				})
				if ferr != nil {
					return nil, nil, nil, ferr
				}
				aargs = append(aargs, applyArg{Assemble: ap})
			}
			return aargs, deps, nil, nil
		}}
	desc := []any{"blockwise", fn.Name(), out, c.dtype}
	for _, x := range args {
		desc = append(desc, x.Index)
	}
	return newArray(op, dt, chunks, nodes, desc)
}
