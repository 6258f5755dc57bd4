package array

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/shoal-data/shoal/graph"
)

// A cumulative sum runs in three steps: every chunk is scanned on its own
// (fused with the elementwise work before it); the carry into chunk k
// along the axis is the carry into chunk k-1 combined with the last slice
// of scanned chunk k-1, a chain of small tasks; chunk k of the result is
// its scan combined with its carry.

type scanSpec struct {
	Kind string `json:"kind"` // "sum" or "prod"
	Axis int    `json:"axis"`
	OutT DType  `json:"out"`
}

type scanParams struct {
	Mode string   `json:"mode"` // "carry" or "apply"
	Spec scanSpec `json:"spec"`
}

type scanOp struct {
	kind string
	axis int
}

func (o *scanOp) prefix() string { return "cum" + o.kind }

// CumSum returns the cumulative sum along axis, as NumPy's cumsum; ints
// and bools sum to int64.
func (a Array) CumSum(axis int) Array { return a.cumulative("CumSum", "sum", axis) }

// CumProd returns the cumulative product along axis.
func (a Array) CumProd(axis int) Array { return a.cumulative("CumProd", "prod", axis) }

func (a Array) cumulative(fn, kind string, axis int) Array {
	if err := a.Err(); err != nil {
		return a
	}
	ax, err := normAxis(axis, len(a.n.chunks))
	if err != nil {
		return errorf("%s: %v (shape %s)", fn, err, fmtShape(a.Shape()))
	}
	out := a.n.dtype
	if !out.isFloat() {
		out = Int64
	}
	return newArray(&scanOp{kind: kind, axis: ax}, out, cloneChunks(a.n.chunks), []*node{a.n}, []any{kind, ax})
}

func (o *scanOp) lower(l *lowerer, n *node) ([]graph.Key, error) {
	in := n.inputs[0]
	spec := scanSpec{Kind: o.kind, Axis: o.axis, OutT: n.dtype}
	grid := gridShape(n.chunks)
	scanned, err := l.mapTasks(in.chunks, l.consumerProgram(in), func(idx []int) graph.Key {
		if idx[o.axis] == 0 {
			return n.key(idx...)
		}
		return graph.NewKey(o.prefix()+"-block", n.token, idx...)
	}, func([]int) *sinkSpec { return &sinkSpec{Scan: &spec} })
	if err != nil {
		return nil, err
	}
	keys := slices.Clone(scanned)
	for i := range keys {
		idx := blockIndex(grid, i)
		k := idx[o.axis]
		if k == 0 {
			continue
		}
		prev := slices.Clone(idx)
		prev[o.axis] = k - 1
		deps := []graph.Key{scanned[blockNumber(grid, prev)]}
		if k > 1 {
			deps = append([]graph.Key{graph.NewKey(o.prefix()+"-carry", n.token, prev...)}, deps...)
		}
		carry := graph.NewKey(o.prefix()+"-carry", n.token, idx...)
		if err := l.add(carry, opScan, scanParams{Mode: "carry", Spec: spec}, deps); err != nil {
			return nil, err
		}
		keys[i] = n.key(idx...)
		if err := l.add(keys[i], opScan, scanParams{Mode: "apply", Spec: spec}, []graph.Key{carry, scanned[i]}); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// scanBlock computes the cumulative sum or product of a block along the
// axis.
func scanBlock(b *Dense, s *scanSpec) (any, error) {
	if s.Axis < 0 || s.Axis >= len(b.shape) {
		return nil, fmt.Errorf("scan axis %d of a block of shape %v", s.Axis, b.shape)
	}
	if !s.OutT.valid() {
		return nil, fmt.Errorf("scan: invalid dtype %d", s.OutT)
	}
	out := b.astype(s.OutT)
	if out == b {
		out = b.Copy()
	}
	n := b.shape[s.Axis]
	inner := product(b.shape[s.Axis+1:])
	outer := product(b.shape[:s.Axis])
	switch x := out.data.(type) {
	case []float64:
		scanInPlace(x, outer, n, inner, s.Kind == "prod")
	case []float32:
		scanInPlace(x, outer, n, inner, s.Kind == "prod")
	case []int64:
		scanInPlace(x, outer, n, inner, s.Kind == "prod")
	default:
		return nil, fmt.Errorf("cannot scan a %s block", out.dtype)
	}
	return out, nil
}

func scanInPlace[T float64 | float32 | int64](x []T, outer, n, inner int, prod bool) {
	for o := range outer {
		base := o * n * inner
		for k := 1; k < n; k++ {
			cur := x[base+k*inner : base+(k+1)*inner]
			prev := x[base+(k-1)*inner : base+k*inner]
			if prod {
				for i := range cur {
					cur[i] *= prev[i]
				}
			} else {
				for i := range cur {
					cur[i] += prev[i]
				}
			}
		}
	}
}

func runScan(_ context.Context, in graph.OpInput) (any, error) {
	var p scanParams
	if err := json.Unmarshal(in.Params, &p); err != nil {
		return nil, fmt.Errorf("decode scan params: %w", err)
	}
	blocks, err := denseInputs(in)
	if err != nil {
		return nil, err
	}
	ax := p.Spec.Axis
	prod := p.Spec.Kind == "prod"
	switch p.Mode {
	case "carry":
		if len(blocks) < 1 || len(blocks) > 2 {
			return nil, fmt.Errorf("scan carry takes 1 or 2 inputs, got %d", len(blocks))
		}
		b := blocks[len(blocks)-1]
		if ax >= len(b.shape) {
			return nil, fmt.Errorf("scan carry: a block of shape %v has no axis %d", b.shape, ax)
		}
		if b.shape[ax] == 0 {
			// An empty chunk (rows a mask dropped) passes the carry on.
			if len(blocks) == 2 {
				return blocks[0].Copy(), nil
			}
			shape := slices.Clone(b.shape)
			shape[ax] = 1
			c := newDense(b.dtype, shape)
			if prod {
				one := newDense(Float64, []int{1})
				one.data.([]float64)[0] = 1
				fillWith(c.data, one.astype(b.dtype).data)
			}
			return c, nil
		}
		// The last slice of the scanned block.
		start := make([]int, len(b.shape))
		start[ax] = b.shape[ax] - 1
		shape := slices.Clone(b.shape)
		shape[ax] = 1
		c := subBlock(b, start, shape)
		if len(blocks) == 2 {
			if err := combineInPlace(c, blocks[0], prod); err != nil {
				return nil, fmt.Errorf("scan carry: %w", err)
			}
		}
		return c, nil
	case "apply":
		if len(blocks) != 2 {
			return nil, fmt.Errorf("scan apply takes 2 inputs, got %d", len(blocks))
		}
		carry, b := blocks[0], blocks[1].Copy()
		if len(carry.shape) != len(b.shape) || carry.dtype != b.dtype {
			return nil, fmt.Errorf("scan apply: carry of shape %v does not fit a block of shape %v", carry.shape, b.shape)
		}
		n := b.shape[ax]
		inner := product(b.shape[ax+1:])
		outer := product(b.shape[:ax])
		c := carry.contig()
		if c.Size() != outer*inner {
			return nil, fmt.Errorf("scan apply: carry of shape %v does not fit a block of shape %v", carry.shape, b.shape)
		}
		switch x := b.data.(type) {
		case []float64:
			applyCarry(x, c.data.([]float64), outer, n, inner, prod)
		case []float32:
			applyCarry(x, c.data.([]float32), outer, n, inner, prod)
		case []int64:
			applyCarry(x, c.data.([]int64), outer, n, inner, prod)
		}
		return b, nil
	}
	return nil, fmt.Errorf("unknown scan mode %q", p.Mode)
}

// combineInPlace adds src to dst (contiguous), or multiplies.
func combineInPlace(dst, src *Dense, prod bool) error {
	s := src.contig()
	if dst.dtype != s.dtype || dst.Size() != s.Size() {
		return fmt.Errorf("cannot combine a %s block of shape %v with a %s block of shape %v", dst.dtype, dst.shape, s.dtype, s.shape)
	}
	switch x := dst.data.(type) {
	case []float64:
		applyCarry(x, s.data.([]float64), 1, 1, len(x), prod)
	case []float32:
		applyCarry(x, s.data.([]float32), 1, 1, len(x), prod)
	case []int64:
		applyCarry(x, s.data.([]int64), 1, 1, len(x), prod)
	}
	return nil
}

func applyCarry[T float64 | float32 | int64](x, c []T, outer, n, inner int, prod bool) {
	for o := range outer {
		cc := c[o*inner : (o+1)*inner]
		for k := range n {
			row := x[(o*n+k)*inner : (o*n+k+1)*inner]
			for i := range row {
				if prod {
					row[i] *= cc[i]
				} else {
					row[i] += cc[i]
				}
			}
		}
	}
}
