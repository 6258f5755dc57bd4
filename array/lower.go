package array

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/shoal-data/shoal/graph"
)

// lowerer turns array nodes into graph tasks. Identical sub-expressions
// (the same token) are lowered once; elementwise nodes used by only one
// other node are fused into it, so that a chain of elementwise operations
// (and the first step of a reduction) is one task per chunk.
type lowerer struct {
	g     *graph.Graph
	done  map[string][]graph.Key
	users map[string]int
	roots map[string]bool
	// inProcess: tasks run in this process, so arrays given in memory are
	// held (see held.go), with these ids, instead of encoded.
	inProcess bool
	held      []uint64
}

func newLowerer(roots ...*node) *lowerer {
	l := &lowerer{g: graph.New(), done: map[string][]graph.Key{}, users: map[string]int{}, roots: map[string]bool{}}
	seen := map[string]bool{}
	var visit func(n *node)
	visit = func(n *node) {
		if seen[n.token] {
			return
		}
		seen[n.token] = true
		for _, in := range n.inputs {
			l.users[in.token]++
			visit(in)
		}
	}
	for _, r := range roots {
		l.roots[r.token] = true
		visit(r)
	}
	return l
}

// blocks returns the keys of n's chunks, adding the tasks that compute
// them.
func (l *lowerer) blocks(n *node) ([]graph.Key, error) {
	if k, ok := l.done[n.token]; ok {
		return k, nil
	}
	keys, err := n.op.lower(l, n)
	if err != nil {
		return nil, err
	}
	if len(keys) != numBlocks(n.chunks) {
		return nil, fmt.Errorf("array: internal error: %s lowered to %d keys for %d chunks", n.op.prefix(), len(keys), numBlocks(n.chunks))
	}
	l.done[n.token] = keys
	return keys, nil
}

// blockKey returns the key of n's block at grid index idx.
func (l *lowerer) blockKey(n *node, idx []int) (graph.Key, error) {
	keys, err := l.blocks(n)
	if err != nil {
		return "", err
	}
	return keys[blockNumber(gridShape(n.chunks), idx)], nil
}

func (l *lowerer) add(key graph.Key, op string, params any, deps []graph.Key) error {
	var p []byte
	switch x := params.(type) {
	case []byte:
		p = x
	case nil:
	default:
		var err error
		if p, err = json.Marshal(params); err != nil {
			return fmt.Errorf("array: encode params of %s: %w", key, err)
		}
	}
	return l.g.Add(&graph.Task{Key: key, Op: op, Params: p, Deps: deps})
}

// fusable reports whether n's computation can be copied into the task of
// its only user.
func (l *lowerer) fusable(n *node) bool {
	_, isMap := n.op.(*mapOp)
	return isMap && l.users[n.token] <= 1 && !l.roots[n.token]
}

// prog is a fused elementwise computation: an expression over leaves,
// each a node whose chunks are task inputs, seen through axes (for each
// output axis, the leaf's axis, or -1 for a new axis).
type prog struct {
	leaves []progLeaf
	expr   []exprNode
}

type progLeaf struct {
	n    *node
	axes []int
}

// program returns the fused computation of n's chunks: n's own
// expression when it is elementwise, with its fusable inputs inlined, or n
// itself as the only leaf.
func (l *lowerer) program(n *node) prog {
	var p prog
	l.inline(&p, n, identityAxes(len(n.chunks)), true)
	return p
}

// consumerProgram returns the computation of n's chunks for a task of its
// user: n's expression when it can be fused into that task, or n itself
// as the only leaf.
func (l *lowerer) consumerProgram(n *node) prog {
	var p prog
	l.inline(&p, n, identityAxes(len(n.chunks)), false)
	return p
}

func identityAxes(nd int) []int {
	a := make([]int, nd)
	for i := range a {
		a[i] = i
	}
	return a
}

// inline adds n's expression (seen through axes) to p and returns the
// index of its result.
func (l *lowerer) inline(p *prog, n *node, axes []int, force bool) int {
	m, isMap := n.op.(*mapOp)
	if !isMap || !(force || l.fusable(n)) {
		for i, lf := range p.leaves {
			if lf.n.token == n.token && slices.Equal(lf.axes, axes) {
				for j, e := range p.expr {
					if e.Op == "leaf" && e.Leaf == i {
						return j
					}
				}
			}
		}
		p.leaves = append(p.leaves, progLeaf{n: n, axes: axes})
		p.expr = append(p.expr, exprNode{Op: "leaf", Leaf: len(p.leaves) - 1, T: n.dtype})
		return len(p.expr) - 1
	}
	at := make([]int, len(m.expr))
	for i, e := range m.expr {
		if e.Op == "leaf" {
			at[i] = l.inline(p, n.inputs[e.Leaf], composeAxes(axes, m.views[e.Leaf]), false)
			continue
		}
		c := e
		c.Args = make([]int, len(e.Args))
		for j, a := range e.Args {
			c.Args[j] = at[a]
		}
		p.expr = append(p.expr, c)
		at[i] = len(p.expr) - 1
	}
	return at[len(m.expr)-1]
}

// composeAxes maps output axes through outer (output axis -> middle axis)
// then inner (middle axis -> leaf axis).
func composeAxes(outer, inner []int) []int {
	out := make([]int, len(outer))
	for o, m := range outer {
		if m < 0 {
			out[o] = -1
		} else {
			out[o] = inner[m]
		}
	}
	return out
}

// leafBlock returns the grid index of the leaf's block used for the
// output block idx.
func leafBlock(lf progLeaf, idx []int) []int {
	grid := gridShape(lf.n.chunks)
	li := make([]int, len(grid))
	for o, a := range lf.axes {
		if a >= 0 && grid[a] > 1 {
			li[a] = idx[o]
		}
	}
	return li
}

// mapTasks adds one "array.map" task per block of the grid chunks, which
// computes p and hands the result to the sink that sinkOf returns (nil for
// the block itself), under the key keyOf returns.
func (l *lowerer) mapTasks(chunks [][]int, p prog, keyOf func(idx []int) graph.Key, sinkOf func(idx []int) *sinkSpec) ([]graph.Key, error) {
	return l.mapTasksWith(chunks, p, keyOf, sinkOf, nil)
}

// mapTasksWith is mapTasks whose tasks also take the keys extraOf returns
// (if not nil), after the chunks of the leaves, for their sinks.
func (l *lowerer) mapTasksWith(chunks [][]int, p prog, keyOf func(idx []int) graph.Key, sinkOf func(idx []int) *sinkSpec,
	extraOf func(idx []int) []graph.Key) ([]graph.Key, error) {
	grid := gridShape(chunks)
	keys := make([]graph.Key, numBlocks(chunks))
	outT := p.expr[len(p.expr)-1].T
	for i := range keys {
		idx := blockIndex(grid, i)
		var deps []graph.Key
		inputs := make([]inputSpec, len(p.leaves))
		for j, lf := range p.leaves {
			if c, ok := l.drawnInTask(lf, chunks); ok {
				gp := c.blockParams(lf.n, leafBlock(lf, idx))
				inputs[j] = inputSpec{Dep: -1, Axes: lf.axes, Gen: &gp}
				continue
			}
			k, err := l.blockKey(lf.n, leafBlock(lf, idx))
			if err != nil {
				return nil, err
			}
			d := slices.Index(deps, k)
			if d < 0 {
				d = len(deps)
				deps = append(deps, k)
			}
			inputs[j] = inputSpec{Dep: d, Axes: lf.axes, Strict: strictAxes(lf, chunks, idx)}
		}
		if extraOf != nil {
			deps = append(deps, extraOf(idx)...)
		}
		params := mapParams{Inputs: inputs, Expr: p.expr, Shape: blockShape(chunks, idx), DType: outT}
		if sinkOf != nil {
			params.Sink = sinkOf(idx)
		}
		keys[i] = keyOf(idx)
		if err := l.add(keys[i], opMap, params, deps); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// drawnInTask reports whether the leaf's chunks are generated (random
// numbers, constants, ranges) and the map tasks over chunks can make them
// themselves, a run at a time, rather than read them from tasks of their
// own: the leaf's array has no other use, and each of its chunks is read
// by exactly one map task.
func (l *lowerer) drawnInTask(lf progLeaf, chunks [][]int) (*createOp, bool) {
	c, ok := lf.n.op.(*createOp)
	if !ok || !c.streams() || l.users[lf.n.token] > 1 || l.roots[lf.n.token] {
		return nil, false
	}
	if numBlocks(lf.n.chunks) != numBlocks(chunks) {
		return nil, false
	}
	grid := gridShape(lf.n.chunks)
	for a, g := range grid {
		if g > 1 && !slices.Contains(lf.axes, a) {
			return nil, false
		}
	}
	return c, true
}

// strictAxes returns the axes of the result block idx whose length is not
// known and along which the leaf is not broadcast (its axis is not of
// length 1): there its chunk must have the result's length.
func strictAxes(lf progLeaf, chunks [][]int, idx []int) []int {
	var out []int
	for o, a := range lf.axes {
		if a < 0 || chunks[o][idx[o]] != unknown {
			continue
		}
		if lf.n.chunks[a][0] == 1 && len(lf.n.chunks[a]) == 1 {
			continue
		}
		out = append(out, o)
	}
	return out
}
