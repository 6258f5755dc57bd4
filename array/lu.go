package array

import (
	"encoding/json"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"

	"github.com/shoal-data/shoal/graph"
)

// Solve runs Gaussian elimination on the augmented matrix [a | b] by
// blocks, as a right-looking blocked LU factorization: for each column of
// blocks k, a panel task factors the blocks of the column from row k down
// (gonum's Getrf, partial pivoting over the whole column), a task per
// later column applies the row swaps and computes that column's block of U,
// and a task per later block subtracts L_ik·U_kj. Back substitution then
// solves the block upper-triangular system one block of rows at a time.

// luParams are the params of an "array.linalg" task of the factorization.
type luParams struct {
	Kind string `json:"kind"`          // lu-panel, lu-col, lu-update, lu-back
	Rows []int  `json:"rows"`          // the sizes of the blocks of rows from the panel's row down
	Row  int    `json:"row"`           // lu-update: which of them (0 is the panel's own)
	K    int    `json:"k"`             // the panel's index, for errors
	Off  int    `json:"off,omitempty"` // lu-panel: the panel's first row and column in the matrix, for errors
}

type solveOp struct{}

func (o *solveOp) prefix() string { return "solve" }

// Solve solves a x = b for x, with a square (n×n) and b of shape (n,) or
// (n, k), by a blocked LU factorization with partial pivoting over each
// column of blocks (gonum's Getrf, Trsm and Gemm per block): a is
// rechunked to square chunks, and a task holds at most one column of
// blocks. A singular a is an error when computed, naming the column of
// blocks where it showed.
func Solve(a, b Array) Array {
	if err := a.Err(); err != nil {
		return a
	}
	if err := b.Err(); err != nil {
		return b
	}
	sa, sb := a.Shape(), b.Shape()
	if len(sa) != 2 || sa[0] != sa[1] || sa[0] == unknown {
		return errorf("Solve: a must be a square matrix, not shape %s", fmtShape(sa))
	}
	if (len(sb) != 1 && len(sb) != 2) || sb[0] != sa[0] {
		return errorf("Solve: b of shape %s does not fit a of shape %s (want (%d,) or (%d, k))", fmtShape(sb), fmtShape(sa), sa[0], sa[0])
	}
	if !allKnown(a.n.chunks) || !allKnown(b.n.chunks) {
		return errorf("Solve: chunks of unknown size; call ComputeChunkSizes first")
	}
	if sa[0] == 0 {
		return errorf("Solve: a is empty (shape %s)", fmtShape(sa))
	}
	rows := a.n.chunks[0]
	aa := rechunkTo(a.Astype(Float64), [][]int{rows, rows})
	bb := b.Astype(Float64)
	vec := len(sb) == 1
	if vec {
		bb = bb.ExpandDims(1)
	}
	bb = rechunkTo(bb, [][]int{rows, {bb.Shape()[1]}})
	if aa.Err() != nil {
		return aa
	}
	if bb.Err() != nil {
		return bb
	}
	x := newArray(&solveOp{}, Float64, [][]int{rows, {bb.Shape()[1]}}, []*node{aa.n, bb.n}, "solve")
	if vec {
		return x.Squeeze(1)
	}
	return x
}

func (o *solveOp) lower(l *lowerer, n *node) ([]graph.Key, error) {
	a, b := n.inputs[0], n.inputs[1]
	nb := len(a.chunks[0])
	rows := a.chunks[0]
	// cur[i][j] is the key of block (i, j) of [a | b] as eliminated so far;
	// column nb is b.
	cur := make([][]graph.Key, nb)
	for i := range nb {
		cur[i] = make([]graph.Key, nb+1)
		for j := range nb {
			k, err := l.blockKey(a, []int{i, j})
			if err != nil {
				return nil, err
			}
			cur[i][j] = k
		}
		k, err := l.blockKey(b, []int{i, 0})
		if err != nil {
			return nil, err
		}
		cur[i][nb] = k
	}
	panels := make([]graph.Key, nb)
	u := make([][]graph.Key, nb) // u[k][j]: the column task of panel k and column j
	for k := range nb {
		p := luParams{Kind: "lu-panel", Rows: rows[k:], K: k, Off: offsets(rows)[k]}
		panels[k] = graph.NewKey("solve-panel", n.token, k)
		var deps []graph.Key
		for i := k; i < nb; i++ {
			deps = append(deps, cur[i][k])
		}
		if err := l.add(panels[k], opLinalg, p, deps); err != nil {
			return nil, err
		}
		u[k] = make([]graph.Key, nb+1)
		for j := k + 1; j <= nb; j++ {
			u[k][j] = graph.NewKey("solve-col", n.token, k, j)
			deps := []graph.Key{panels[k]}
			for i := k; i < nb; i++ {
				deps = append(deps, cur[i][j])
			}
			if err := l.add(u[k][j], opLinalg, luParams{Kind: "lu-col", Rows: rows[k:], K: k}, deps); err != nil {
				return nil, err
			}
		}
		for i := k + 1; i < nb; i++ {
			for j := k + 1; j <= nb; j++ {
				key := graph.NewKey("solve-update", n.token, k, i, j)
				p := luParams{Kind: "lu-update", Rows: rows[k:], Row: i - k, K: k}
				if err := l.add(key, opLinalg, p, []graph.Key{panels[k], u[k][j]}); err != nil {
					return nil, err
				}
				cur[i][j] = key
			}
		}
	}
	// Back substitution, from the last block of rows up.
	x := make([]graph.Key, nb)
	for k := nb - 1; k >= 0; k-- {
		x[k] = n.key(k, 0)
		deps := []graph.Key{panels[k], u[k][nb]}
		for j := k + 1; j < nb; j++ {
			deps = append(deps, u[k][j], x[j])
		}
		if err := l.add(x[k], opLinalg, luParams{Kind: "lu-back", Rows: rows[k:], K: k}, deps); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// runLU runs one task of the blocked factorization.
func runLU(params []byte, blocks []any) (any, error) {
	var p luParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, fmt.Errorf("decode lu params: %w", err)
	}
	if len(p.Rows) == 0 {
		return nil, fmt.Errorf("lu: no rows")
	}
	dense := func(v any) (*Dense, error) {
		d, ok := v.(*Dense)
		if !ok {
			return nil, fmt.Errorf("lu: input is a %T", v)
		}
		return d.astype(Float64).contig(), nil
	}
	panel := func(v any) (*Dense, []int, error) {
		l, ok := v.([]any)
		if !ok || len(l) != 2 {
			return nil, nil, fmt.Errorf("lu: panel is a %T", v)
		}
		m, err := dense(l[0])
		if err != nil {
			return nil, nil, err
		}
		pv, err := dense(l[1])
		if err != nil {
			return nil, nil, err
		}
		piv := make([]int, pv.Size())
		for i, f := range pv.data.([]float64) {
			piv[i] = int(f)
		}
		return m, piv, nil
	}
	bs := p.Rows[0]
	switch p.Kind {
	case "lu-panel":
		ds := make([]*Dense, len(blocks))
		for i, v := range blocks {
			d, err := dense(v)
			if err != nil {
				return nil, err
			}
			ds[i] = d
		}
		m, err := stackRows(ds)
		if err != nil {
			return nil, err
		}
		r, c := m.shape[0], m.shape[1]
		if c != bs {
			return nil, fmt.Errorf("lu panel %d: blocks of %d columns, want %d", p.K, c, bs)
		}
		ipiv := make([]int, min(r, c))
		g := blas64.General{Rows: r, Cols: c, Stride: c, Data: m.data.([]float64)}
		ok := lapack64.Getrf(g, ipiv)
		md := m.data.([]float64)
		big := 0.0
		for i := range c {
			big = math.Max(big, math.Abs(md[i*c+i]))
		}
		for i := range c {
			if d := md[i*c+i]; math.Abs(d) <= big*float64(r)*2.220446049250313e-16 || d != d {
				return nil, fmt.Errorf("Solve: the matrix is singular: pivot %d (in the column of blocks %d) is %g, of at most %g", p.Off+i, p.K, d, big)
			}
		}
		if !ok {
			return nil, fmt.Errorf("Solve: the matrix is singular (in the column of blocks %d)", p.K)
		}
		pv := make([]float64, len(ipiv))
		for i, v := range ipiv {
			pv[i] = float64(v)
		}
		return []any{m, &Dense{dtype: Float64, shape: []int{len(pv)}, strides: []int{1}, data: pv}}, nil
	case "lu-col":
		if len(blocks) != 1+len(p.Rows) {
			return nil, fmt.Errorf("lu column: %d inputs for %d blocks", len(blocks), len(p.Rows))
		}
		m, piv, err := panel(blocks[0])
		if err != nil {
			return nil, err
		}
		ds := make([]*Dense, len(blocks)-1)
		for i, v := range blocks[1:] {
			if ds[i], err = dense(v); err != nil {
				return nil, err
			}
		}
		col, err := stackRows(ds)
		if err != nil {
			return nil, err
		}
		w := col.shape[1]
		cd := col.data.([]float64)
		for i, j := range piv {
			if j != i {
				for q := range w {
					cd[i*w+q], cd[j*w+q] = cd[j*w+q], cd[i*w+q]
				}
			}
		}
		if w > 0 {
			// U_kj = L_kk⁻¹ (the top bs rows), L_kk unit lower triangular.
			blas64.Trsm(blas.Left, blas.NoTrans, 1,
				blas64.Triangular{Uplo: blas.Lower, Diag: blas.Unit, N: bs, Stride: m.shape[1], Data: m.data.([]float64)},
				blas64.General{Rows: bs, Cols: w, Stride: w, Data: cd})
		}
		return col, nil
	case "lu-update":
		if len(blocks) != 2 {
			return nil, fmt.Errorf("lu update takes 2 inputs")
		}
		m, _, err := panel(blocks[0])
		if err != nil {
			return nil, err
		}
		col, err := dense(blocks[1])
		if err != nil {
			return nil, err
		}
		start := 0
		for _, r := range p.Rows[:p.Row] {
			start += r
		}
		h, w := p.Rows[p.Row], col.shape[1]
		out := subBlock(col, []int{start, 0}, []int{h, w})
		if h > 0 && w > 0 && bs > 0 {
			l := subBlock(m, []int{start, 0}, []int{h, bs})
			uk := subBlock(col, []int{0, 0}, []int{bs, w})
			blas64.Gemm(blas.NoTrans, blas.NoTrans, -1,
				blas64.General{Rows: h, Cols: bs, Stride: bs, Data: l.data.([]float64)},
				blas64.General{Rows: bs, Cols: w, Stride: w, Data: uk.data.([]float64)},
				1, blas64.General{Rows: h, Cols: w, Stride: w, Data: out.data.([]float64)})
		}
		return out, nil
	case "lu-back":
		if len(blocks) < 2 || len(blocks)%2 != 0 {
			return nil, fmt.Errorf("lu back substitution: %d inputs", len(blocks))
		}
		m, _, err := panel(blocks[0])
		if err != nil {
			return nil, err
		}
		bcol, err := dense(blocks[1])
		if err != nil {
			return nil, err
		}
		w := bcol.shape[1]
		y := subBlock(bcol, []int{0, 0}, []int{bs, w})
		yd := y.data.([]float64)
		for q := 2; q < len(blocks); q += 2 {
			ucol, err := dense(blocks[q])
			if err != nil {
				return nil, err
			}
			xj, err := dense(blocks[q+1])
			if err != nil {
				return nil, err
			}
			uj := subBlock(ucol, []int{0, 0}, []int{bs, ucol.shape[1]})
			if bs > 0 && w > 0 && uj.shape[1] > 0 {
				blas64.Gemm(blas.NoTrans, blas.NoTrans, -1,
					blas64.General{Rows: bs, Cols: uj.shape[1], Stride: uj.shape[1], Data: uj.data.([]float64)},
					blas64.General{Rows: xj.shape[0], Cols: w, Stride: w, Data: xj.data.([]float64)},
					1, blas64.General{Rows: bs, Cols: w, Stride: w, Data: yd})
			}
		}
		if bs > 0 && w > 0 {
			blas64.Trsm(blas.Left, blas.NoTrans, 1,
				blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: bs, Stride: m.shape[1], Data: m.data.([]float64)},
				blas64.General{Rows: bs, Cols: w, Stride: w, Data: yd})
		}
		return y, nil
	}
	return nil, fmt.Errorf("unknown lu kernel %q", p.Kind)
}
