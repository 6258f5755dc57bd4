package dataframe

import (
	"encoding/json"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/graph"
)

// customPlan is a node whose tasks its own lowering adds: joins, resampling,
// rolling windows and the distinct-value operations. Its inputs are other
// nodes; the optimizer treats it as a barrier (filters are not pushed
// through it, and it needs every column of its inputs unless needs says
// otherwise).
type customPlan struct {
	// what describes the node in Explain and, with params, identifies it
	// in task keys: two nodes with the same what, params and inputs are
	// the same tasks.
	what   string
	params any
	// count returns the number of output partitions from the inputs'.
	count func(ins []int) int
	// lower adds the tasks, given the keys of the inputs' partitions,
	// and returns the keys of the output partitions.
	lower func(l *lowerer, token string, ins [][]graph.Key) ([]graph.Key, error)
	// lowerFrom, when set instead of lower, adds the tasks given the input
	// nodes, so that it can fuse its first step into the inputs' pipelines
	// (see lowerer.pipeline).
	lowerFrom func(l *lowerer, token string, inputs []*node) ([]graph.Key, error)
	// needs returns the columns of input i that computing the required
	// output columns needs; nil means all of them.
	needs func(i int, required map[string]bool) []string
}

// custom derives a node with a custom lowering from the given inputs.
func custom(schema *arrow.Schema, p *customPlan, inputs ...*node) DataFrame {
	n := &node{kind: kindCustom, schema: schema, custom: p, inputs: inputs}
	counts := make([]int, len(inputs))
	for i, in := range inputs {
		counts[i] = in.nparts
	}
	n.nparts = p.count(counts)
	return DataFrame{n: n}
}

func (l *lowerer) lowerCustom(n *node) ([]graph.Key, error) {
	if n.custom.lowerFrom != nil {
		return n.custom.lowerFrom(l, l.token(n), n.inputs)
	}
	ins := make([][]graph.Key, len(n.inputs))
	for i, in := range n.inputs {
		ks, err := l.partitions(in)
		if err != nil {
			return nil, err
		}
		ins[i] = ks
	}
	return n.custom.lower(l, l.token(n), ins)
}

// task adds a task running op with params encoded as JSON.
func (l *lowerer) task(prefix, token, op string, params any, deps []graph.Key, index ...int) (graph.Key, error) {
	var b []byte
	if params != nil {
		var err error
		if b, err = json.Marshal(params); err != nil {
			return "", fmt.Errorf("%s: encoding params: %w", prefix, err)
		}
	}
	k := graph.NewKey(prefix, token, index...)
	if _, ok := l.g.Get(k); ok {
		return k, nil
	}
	return k, l.g.Add(&graph.Task{Key: k, Op: op, Params: b, Deps: deps})
}

// tree reduces keys with op, every at a time, to one key.
func (l *lowerer) tree(prefix, token, op string, params any, keys []graph.Key, every int) ([]graph.Key, error) {
	every = max(every, 2)
	depth := 0
	for len(keys) > every {
		depth++
		var next []graph.Key
		for i := 0; i < len(keys); i += every {
			k, err := l.task(prefix, token, op, params, keys[i:min(i+every, len(keys))], depth, len(next))
			if err != nil {
				return nil, err
			}
			next = append(next, k)
		}
		keys = next
	}
	return keys, nil
}

func (p *customPlan) describe() string { return p.what }

// identity is what, with the params, for task keys.
func (p *customPlan) identity() string {
	if p.params == nil {
		return p.what
	}
	b, _ := json.Marshal(p.params)
	return p.what + " " + string(b)
}
