package array

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/shoal-data/shoal/graph"
)

// An "array.assemble" task builds one chunk out of pieces of other chunks:
// it serves slicing (with steps and negative indices), integer indexing,
// rechunking, the halos of MapOverlap and reshaping.

type assembleParams struct {
	DType   DType   `json:"dtype"`
	Shape   []int   `json:"shape"`
	Fill    *num    `json:"fill,omitempty"` // value of the elements no piece covers
	Pieces  []piece `json:"pieces,omitempty"`
	Reshape bool    `json:"reshape,omitempty"` // the result is input 0 with Shape
}

// piece copies the elements of input In selected by Runs (one list per
// input axis) into the result. Axes maps every input axis to a result
// axis, or -1 for an axis that is dropped (it selects one element).
type piece struct {
	In   int     `json:"in"`
	Axes []int   `json:"axes"`
	Runs [][]run `json:"runs"`
}

// run selects N elements along an axis: input positions Src, Src+Step, ...
// go to result positions Dst, Dst+1, ...
type run struct {
	Src  int `json:"s"`
	Step int `json:"k,omitempty"`
	Dst  int `json:"d"`
	N    int `json:"n"`
}

func runAssemble(ctx context.Context, in graph.OpInput) (any, error) {
	var p assembleParams
	if err := json.Unmarshal(in.Params, &p); err != nil {
		return nil, fmt.Errorf("decode assemble params: %w", err)
	}
	blocks, err := denseInputs(in)
	if err != nil {
		return nil, err
	}
	if p.Reshape {
		if len(blocks) != 1 {
			return nil, fmt.Errorf("reshape takes 1 input, got %d", len(blocks))
		}
		if product(p.Shape) != blocks[0].Size() {
			return nil, fmt.Errorf("cannot reshape a block of shape %v into %v", blocks[0].shape, p.Shape)
		}
		return blocks[0].reshaped(p.Shape), nil
	}
	if !p.DType.valid() {
		return nil, fmt.Errorf("assemble: invalid dtype")
	}
	if _, err := shapeSize(p.Shape); err != nil {
		return nil, err
	}
	out := newDense(p.DType, p.Shape)
	if p.Fill != nil && *p.Fill != 0 {
		f := newDense(Float64, []int{1})
		f.data.([]float64)[0] = float64(*p.Fill)
		fillWith(out.data, f.astype(p.DType).data)
	}
	for i, pc := range p.Pieces {
		if pc.In < 0 || pc.In >= len(blocks) {
			return nil, fmt.Errorf("piece %d reads input %d of %d", i, pc.In, len(blocks))
		}
		src := blocks[pc.In].contig()
		if src.dtype != p.DType {
			src = src.astype(p.DType)
		}
		if err := checkPiece(pc, src.shape, p.Shape); err != nil {
			return nil, fmt.Errorf("piece %d: %w", i, err)
		}
		copyPiece(out, src, pc)
	}
	return out, nil
}

// checkPiece makes sure that a piece stays within its input and the
// result.
func checkPiece(pc piece, in, out []int) error {
	if len(pc.Axes) != len(in) || len(pc.Runs) != len(in) {
		return fmt.Errorf("piece maps %d axes and has runs for %d, but its input has shape %v", len(pc.Axes), len(pc.Runs), in)
	}
	for a, runs := range pc.Runs {
		o := pc.Axes[a]
		if o >= len(out) {
			return fmt.Errorf("piece maps axis %d to axis %d of a result of shape %v", a, o, out)
		}
		for _, r := range runs {
			if r.N <= 0 {
				continue
			}
			first, last := r.Src, r.Src+(r.N-1)*r.Step
			if first < 0 || first >= in[a] || last < 0 || last >= in[a] {
				return fmt.Errorf("run %+v is out of range for axis %d of the input of shape %v", r, a, in)
			}
			if o < 0 {
				if r.N != 1 {
					return fmt.Errorf("a dropped axis selects %d elements", r.N)
				}
				continue
			}
			if r.Dst < 0 || r.Dst+r.N > out[o] {
				return fmt.Errorf("run %+v is out of range for axis %d of the result of shape %v", r, o, out)
			}
		}
	}
	return nil
}

func copyPiece(out, src *Dense, pc piece) {
	os := rowMajorStrides(out.shape)
	is := rowMajorStrides(src.shape)
	ostr := make([]int, len(pc.Axes))
	for a, o := range pc.Axes {
		if o >= 0 {
			ostr[a] = os[o]
		}
	}
	switch d := out.data.(type) {
	case []float64:
		copyRuns(d, src.data.([]float64), pc.Runs, is, ostr, 0, 0, 0)
	case []float32:
		copyRuns(d, src.data.([]float32), pc.Runs, is, ostr, 0, 0, 0)
	case []int64:
		copyRuns(d, src.data.([]int64), pc.Runs, is, ostr, 0, 0, 0)
	case []bool:
		copyRuns(d, src.data.([]bool), pc.Runs, is, ostr, 0, 0, 0)
	}
}

// copyRuns copies along axis a and the axes after it.
func copyRuns[T any](dst, src []T, runs [][]run, is, os []int, a, ioff, ooff int) {
	if a == len(runs) {
		dst[ooff] = src[ioff]
		return
	}
	last := a == len(runs)-1
	for _, r := range runs[a] {
		if last && r.Step == 1 && os[a] == 1 {
			s := ioff + r.Src*is[a]
			d := ooff + r.Dst*os[a]
			copy(dst[d:d+r.N], src[s:s+r.N])
			continue
		}
		for k := range r.N {
			copyRuns(dst, src, runs, is, os, a+1, ioff+(r.Src+k*r.Step)*is[a], ooff+(r.Dst+k)*os[a])
		}
	}
}

// assembleOp is a node whose chunks are put together from pieces of its
// input's chunks. sels gives, for every result chunk, the coordinates
// along every input axis that it takes (see selection).
type assembleOp struct {
	name string
	// sel returns, for the result block idx, the input coordinates along
	// every input axis (-1 where the fill value goes), which input axes
	// are dropped, and how input axes map to result axes.
	sel  func(idx []int) [][]int
	axes []int // input axis -> result axis, -1 for dropped
	fill *num
}

func (o *assembleOp) prefix() string { return o.name }

func (o *assembleOp) lower(l *lowerer, n *node) ([]graph.Key, error) {
	in := n.inputs[0]
	grid := gridShape(n.chunks)
	keys := make([]graph.Key, numBlocks(n.chunks))
	for i := range keys {
		idx := blockIndex(grid, i)
		k, err := l.gatherBlock(in, o.sel(idx), o.axes, blockShape(n.chunks, idx), n.dtype, o.fill,
			func() graph.Key { return n.key(idx...) })
		if err != nil {
			return nil, err
		}
		keys[i] = k
	}
	return keys, nil
}

// gatherBlock adds a task that builds a block of the given shape from the
// input coordinates coords (one list per input axis, -1 for fill), unless
// the block is exactly one of in's chunks, whose key it then returns.
func (l *lowerer) gatherBlock(in *node, coords [][]int, axes []int, shape []int, dt DType, fill *num, key func() graph.Key) (graph.Key, error) {
	p, deps, alias, err := l.planGather(in, coords, axes, shape, dt, fill)
	if err != nil || alias != "" {
		return alias, err
	}
	k := key()
	return k, l.add(k, opAssemble, p, deps)
}

// planGather returns the params and inputs of the task that gatherBlock
// adds, or the key of the chunk of in that the block is.
func (l *lowerer) planGather(in *node, coords [][]int, axes []int, shape []int, dt DType, fill *num) (*assembleParams, []graph.Key, graph.Key, error) {
	nd := len(in.chunks)
	type axisPlan struct {
		blocks []int
		runs   [][]run
	}
	plans := make([]axisPlan, nd)
	filled := false
	for a := range nd {
		offs := offsets(in.chunks[a])
		byBlock := map[int][]run{}
		for p, c := range coords[a] {
			if c < 0 {
				filled = true
				continue
			}
			b := sort.SearchInts(offs, c+1) - 1
			local := c - offs[b]
			rs := byBlock[b]
			if len(rs) > 0 {
				r := &rs[len(rs)-1]
				if r.Dst+r.N == p {
					if r.N == 1 {
						r.Step, r.N = local-r.Src, 2
						continue
					}
					if r.Src+r.N*r.Step == local {
						r.N++
						continue
					}
				}
			}
			byBlock[b] = append(rs, run{Src: local, Step: 1, Dst: p, N: 1})
		}
		for b := range byBlock {
			plans[a].blocks = append(plans[a].blocks, b)
		}
		slices.Sort(plans[a].blocks)
		for _, b := range plans[a].blocks {
			plans[a].runs = append(plans[a].runs, byBlock[b])
		}
	}
	// A block that is one input chunk as it is needs no task.
	if !filled && dt == in.dtype {
		whole := true
		for a := range nd {
			if len(plans[a].blocks) != 1 || axes[a] != a || len(axes) != len(shape) {
				whole = false
				break
			}
			rs := plans[a].runs[0]
			b := plans[a].blocks[0]
			if len(rs) != 1 || rs[0].Src != 0 || rs[0].Dst != 0 || rs[0].Step != 1 || rs[0].N != in.chunks[a][b] || rs[0].N != shape[a] {
				whole = false
				break
			}
		}
		if whole {
			idx := make([]int, nd)
			for a := range nd {
				idx[a] = plans[a].blocks[0]
			}
			k, err := l.blockKey(in, idx)
			return nil, nil, k, err
		}
	}
	p := &assembleParams{DType: dt, Shape: shape}
	if filled && fill != nil {
		p.Fill = fill
	}
	var deps []graph.Key
	lo, hi := make([]int, nd), make([]int, nd)
	for a := range nd {
		hi[a] = len(plans[a].blocks)
	}
	var err error
	forEachIndex(lo, hi, func(j []int) {
		if err != nil {
			return
		}
		idx := make([]int, nd)
		runs := make([][]run, nd)
		for a := range nd {
			idx[a] = plans[a].blocks[j[a]]
			runs[a] = plans[a].runs[j[a]]
		}
		var k graph.Key
		if k, err = l.blockKey(in, idx); err != nil {
			return
		}
		deps = append(deps, k)
		p.Pieces = append(p.Pieces, piece{In: len(deps) - 1, Axes: axes, Runs: runs})
	})
	if err != nil {
		return nil, nil, "", err
	}
	return p, deps, "", nil
}
