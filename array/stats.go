package array

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/shoal-data/shoal/graph"
)

// tree merges keys with the op "array.reduce", split at a time, until one
// is left, which gets the key final. params gives the params of a merge
// (the last one finalizes).
func (l *lowerer) tree(keys []graph.Key, split int, prefix, token string, final graph.Key, params func(last bool) any) error {
	for level := 1; ; level++ {
		n := (len(keys) + split - 1) / split
		last := n == 1
		next := make([]graph.Key, n)
		for i := range next {
			group := keys[i*split : min((i+1)*split, len(keys))]
			if last {
				next[i] = final
			} else {
				next[i] = graph.NewKey(prefix, token, level, i)
			}
			if err := l.add(next[i], opReduce, params(last), slices.Clone(group)); err != nil {
				return err
			}
		}
		if last {
			return nil
		}
		keys = next
	}
}

type histSpec struct {
	Edges   []num `json:"edges"`
	Uniform bool  `json:"uniform,omitempty"`
}

type histOp struct{ spec histSpec }

func (o *histOp) prefix() string { return "histogram" }

// Histogram counts the elements of a that fall in each of bins equal bins
// between lo and hi, as NumPy's histogram: every bin includes its left
// edge, the last one its right edge too; elements outside [lo, hi] and NaN
// are not counted. It returns the counts (int64, length bins) and the
// edges (float64, length bins+1).
func Histogram(a Array, bins int, lo, hi float64) (counts, edges Array) {
	if err := a.Err(); err != nil {
		return a, a
	}
	if bins <= 0 || !(lo < hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		e := errorf("Histogram: want bins > 0 (got %d) and finite lo < hi (got %g, %g)", bins, lo, hi)
		return e, e
	}
	ed := make([]float64, bins+1)
	step := (hi - lo) / float64(bins)
	for i := range ed {
		ed[i] = lo + float64(i)*step
	}
	ed[bins] = hi
	c := histogram(a, ed, true)
	return c, FromSlice(ed, []int{bins + 1})
}

// HistogramEdges counts the elements of a in the bins between consecutive
// edges, which must increase.
func HistogramEdges(a Array, edges []float64) Array {
	if err := a.Err(); err != nil {
		return a
	}
	if len(edges) < 2 {
		return errorf("HistogramEdges: want at least 2 edges, got %d", len(edges))
	}
	for i := 1; i < len(edges); i++ {
		if !(edges[i] > edges[i-1]) {
			return errorf("HistogramEdges: edges must increase, but edge %d is %g after %g", i, edges[i], edges[i-1])
		}
	}
	return histogram(a, edges, false)
}

func histogram(a Array, edges []float64, uniform bool) Array {
	e := make([]num, len(edges))
	for i, v := range edges {
		e[i] = num(v)
	}
	op := &histOp{spec: histSpec{Edges: e, Uniform: uniform}}
	return newArray(op, Int64, [][]int{{len(edges) - 1}}, []*node{a.n}, op.spec)
}

func (o *histOp) lower(l *lowerer, n *node) ([]graph.Key, error) {
	in := n.inputs[0]
	final := n.key(0)
	partial, err := l.mapTasks(in.chunks, l.consumerProgram(in), func(idx []int) graph.Key {
		return graph.NewKey("histogram-partial", n.token, idx...)
	}, func([]int) *sinkSpec { return &sinkSpec{Hist: &o.spec} })
	if err != nil {
		return nil, err
	}
	err = l.tree(partial, defaultSplitEvery, "histogram-combine", n.token, final, func(last bool) any {
		p := combineParams{Kind: "sum", InT: Int64}
		if last {
			p.Final = &finalSpec{Axes: []int{}, OutT: Int64}
		}
		return p
	})
	return []graph.Key{final}, err
}

// histBlock counts the values of a block into a sum state of the bins.
func histBlock(b *Dense, s *histSpec) (any, error) {
	nb := len(s.Edges) - 1
	if nb < 1 {
		return nil, fmt.Errorf("histogram with %d edges", len(s.Edges))
	}
	edges := make([]float64, len(s.Edges))
	for i, e := range s.Edges {
		edges[i] = float64(e)
	}
	counts := make([]int64, nb)
	vals := b.flat()
	var fv []float64
	if x, ok := vals.([]float64); ok {
		fv = x
	} else {
		fv = make([]float64, b.Size())
		convertInto(fv, vals)
	}
	lo, hi := edges[0], edges[nb]
	norm := float64(nb) / (hi - lo)
	for _, v := range fv {
		if !(v >= lo && v <= hi) {
			continue
		}
		var i int
		if s.Uniform {
			// As NumPy: compute the bin, then correct it against the
			// edges, which are what decides.
			i = int((v - lo) * norm)
			if i >= nb {
				i = nb - 1
			}
			if v < edges[i] {
				i--
			} else if i != nb-1 && v >= edges[i+1] {
				i++
			}
		} else {
			i = sort.SearchFloat64s(edges, v)
			if i == len(edges) || edges[i] != v {
				i--
			}
			if i == nb {
				i = nb - 1
			}
		}
		counts[i]++
	}
	return &Dense{dtype: Int64, shape: []int{1, nb}, strides: []int{nb, 1}, data: counts}, nil
}
