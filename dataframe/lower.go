package dataframe

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/shoal-data/shoal/dataframe/expr"
	"github.com/shoal-data/shoal/dataframe/internal/shuffle"
	"github.com/shoal-data/shoal/graph"
)

// lowerer turns an optimized plan into a task graph: one task per
// partition for each source and its run of elementwise steps, and the
// tasks of aggregation trees, heads and coalescing. Keys are tokens of the
// plan, so the same sub-plan used twice (a column used in two places)
// is the same tasks and computed once.
type lowerer struct {
	shuffles []string // ids of the shuffles, whose files go when the computation ends
	g        *graph.Graph
	reg      *graph.Registry
	keys     map[*node][]graph.Key
	tokens   map[*node]string
	parents  map[*node]int // a node used by several is computed once, not fused into each
	// inProcess: tasks run in this process, so in-memory records are held
	// (see held.go), with these ids, instead of encoded.
	inProcess bool
	held      []uint64
}

func newLowerer(reg *graph.Registry, root *node) *lowerer {
	return &lowerer{g: graph.New(), reg: reg, keys: map[*node][]graph.Key{}, tokens: map[*node]string{},
		parents: countParents(root)}
}

// token returns a deterministic hash of the sub-plan rooted at n.
func (l *lowerer) token(n *node) string {
	if t, ok := l.tokens[n]; ok {
		return t
	}
	h := sha256.New()
	fmt.Fprintf(h, "%d|%s|%d|", n.kind, n.describe(), n.nparts)
	if n.kind == kindSource {
		fmt.Fprintf(h, "%s|", n.src.identity())
	}
	if n.kind == kindCustom {
		fmt.Fprintf(h, "%s|", n.custom.identity())
	}
	for _, f := range n.schema.Fields() {
		fmt.Fprintf(h, "%s:%s,", f.Name, f.Type)
	}
	for _, in := range n.inputs {
		fmt.Fprintf(h, "<%s>", l.token(in))
	}
	t := hex.EncodeToString(h.Sum(nil)[:8])
	l.tokens[n] = t
	return t
}

// partitions returns the keys of n's partitions, adding the tasks that
// compute them.
func (l *lowerer) partitions(n *node) ([]graph.Key, error) {
	if ks, ok := l.keys[n]; ok {
		return ks, nil
	}
	var ks []graph.Key
	var err error
	switch {
	case n.kind == kindSource && n.src.keys != nil:
		ks = n.src.keys
		if err := l.addSourceKeys(n.src); err != nil {
			return nil, err
		}
	case n.elementwise() || n.kind == kindSource:
		ks, err = l.pipeline(n, sinkSpec{}, "")
	case n.kind == kindConcat:
		for _, in := range n.inputs {
			k, err := l.partitions(in)
			if err != nil {
				return nil, err
			}
			ks = append(ks, k...)
		}
	case n.kind == kindCoalesce:
		ks, err = l.coalesce(n)
	case n.kind == kindHead:
		ks, err = l.head(n)
	case n.kind == kindAgg:
		ks, err = l.aggregate(n)
	case n.kind == kindShuffle:
		ks, err = l.shuffle(n)
	case n.kind == kindSelect:
		var in []graph.Key
		if in, err = l.partitions(n.input()); err == nil {
			for _, i := range n.parts {
				ks = append(ks, in[i])
			}
		}
	case n.kind == kindPieces:
		ks, err = l.pieces(n)
	case n.kind == kindCustom:
		ks, err = l.lowerCustom(n)
	default:
		err = fmt.Errorf("cannot lower a %s", n.describe())
	}
	if err != nil {
		return nil, err
	}
	l.keys[n] = ks
	return ks, nil
}

// chain returns the base below n's run of elementwise nodes and the run,
// bottom first.
func chain(n *node) (*node, []*node) {
	return chainShared(n, nil)
}

// chainShared is chain that also stops below a node that several nodes
// use: that one is computed once, as its own tasks, and its users take its
// partitions as input.
func chainShared(n *node, parents map[*node]int) (*node, []*node) {
	var run []*node
	for n.elementwise() {
		run = append(run, n)
		n = n.input()
		if parents[n] > 1 {
			break
		}
	}
	slices.Reverse(run)
	return n, run
}

// pipeline adds one task per partition that takes rows from the base
// below n, runs n's elementwise steps and hands the result to sink.
func (l *lowerer) pipeline(n *node, sink sinkSpec, prefix string) ([]graph.Key, error) {
	base, run := chainShared(n, l.parents)
	steps := make([]stepSpec, 0, len(run))
	for _, s := range run {
		st, err := lowerStep(s)
		if err != nil {
			return nil, err
		}
		steps = append(steps, st)
	}
	if prefix == "" {
		prefix = pipelinePrefix(base, run)
	}
	token := l.token(n)
	switch {
	case sink.keyToken != "":
		token = sink.keyToken
	case sink.Kind != "":
		sb, _ := json.Marshal(sink)
		token = graph.TokenizeStrings(token, string(sb))
	}
	var inputs [][]graph.Key
	var src []sourceSpec
	switch {
	case base.kind == kindSource && base.src.r != nil && (l.parents[base] <= 1 || base == n):
		r := base.src.r
		for i := range r.parts() {
			part, err := r.partParams(i)
			if err != nil {
				return nil, err
			}
			s := sourceSpec{Kind: "read", Format: r.format(), Part: part, Columns: base.src.columns}
			if base.src.hasFilt {
				if s.Filter, err = expr.Marshal(base.src.filter); err != nil {
					return nil, err
				}
			}
			src = append(src, s)
			inputs = append(inputs, nil)
		}
	case base.kind == kindSource && base.src.keys == nil && (l.parents[base] <= 1 || base == n):
		var filter []byte
		if base.src.hasFilt {
			var err error
			if filter, err = expr.Marshal(base.src.filter); err != nil {
				return nil, err
			}
		}
		for _, rec := range base.src.records {
			if l.inProcess {
				id := hold(rec)
				l.held = append(l.held, id)
				src = append(src, sourceSpec{Kind: "held", Held: id, Columns: base.src.columns, Filter: filter})
				inputs = append(inputs, nil)
				continue
			}
			b, err := l.reg.MarshalValue(rec)
			if err != nil {
				return nil, err
			}
			src = append(src, sourceSpec{Kind: "record", Record: b, Columns: base.src.columns, Filter: filter})
			inputs = append(inputs, nil)
		}
	default:
		in, err := l.partitions(base)
		if err != nil {
			return nil, err
		}
		schema, err := encodeSchema(base.schema)
		if err != nil {
			return nil, err
		}
		spec := sourceSpec{Kind: "input", Schema: schema}
		if base.kind == kindSource && base.src.keys != nil {
			// Held or given partitions: the pushed filter and projection
			// apply here.
			if err := l.addSourceKeys(base.src); err != nil {
				return nil, err
			}
			spec.Columns = base.src.columns
			if base.src.hasFilt {
				if spec.Filter, err = expr.Marshal(base.src.filter); err != nil {
					return nil, err
				}
			}
		}
		for _, k := range in {
			src = append(src, spec)
			inputs = append(inputs, []graph.Key{k})
		}
	}
	if len(steps) == 0 && sink.Kind == "" && base != n {
		return l.partitions(base) // nothing to do per partition
	}
	keys := make([]graph.Key, len(src))
	for i := range src {
		p := program{Source: src[i], Steps: steps, Sink: sink}
		params, err := marshalProgram(p)
		if err != nil {
			return nil, err
		}
		keys[i] = graph.NewKey(prefix, token, i)
		if err := l.g.Add(&graph.Task{Key: keys[i], Op: OpPartition, Params: params, Deps: inputs[i]}); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// addSourceKeys adds what computes a source's keys: the tasks of its graph
// (FromGraph), or the keys as external (Persist).
func (l *lowerer) addSourceKeys(s *source) error {
	if s.graph != nil {
		if err := l.g.Merge(s.graph); err != nil {
			return fmt.Errorf("FromGraph: %w", err)
		}
		return nil
	}
	l.g.AddExternal(s.keys...)
	return nil
}

// pipelinePrefix names the tasks of a pipeline by what they do.
func pipelinePrefix(base *node, run []*node) string {
	if base.kind == kindSource {
		switch {
		case base.src.r != nil:
			return "read-" + base.src.r.format()
		case base.src.keys != nil:
			if len(run) == 0 {
				return "persisted"
			}
		default:
			return "from-records"
		}
	}
	if len(run) == 0 {
		return "partition"
	}
	switch run[len(run)-1].kind {
	case kindFilter:
		return "filter"
	case kindProject:
		return "project"
	case kindMap:
		return "map-partitions"
	}
	return "partition"
}

func lowerStep(n *node) (stepSpec, error) {
	switch n.kind {
	case kindFilter:
		b, err := expr.Marshal(n.pred)
		return stepSpec{Kind: "filter", Exprs: [][]byte{b}}, err
	case kindProject:
		st := stepSpec{Kind: "project"}
		for _, e := range n.exprs {
			b, err := expr.Marshal(e)
			if err != nil {
				return st, err
			}
			st.Exprs = append(st.Exprs, b)
		}
		return st, nil
	case kindMap:
		schema, err := encodeSchema(n.schema)
		if err != nil {
			return stepSpec{}, err
		}
		params, err := recordFuncParams(n.fn)
		return stepSpec{Kind: "map", Fn: n.fn, FnParams: params, Schema: schema}, err
	}
	return stepSpec{}, fmt.Errorf("not an elementwise step: %s", n.describe())
}

func (l *lowerer) coalesce(n *node) ([]graph.Key, error) {
	in, err := l.partitions(n.input())
	if err != nil {
		return nil, err
	}
	schema, err := encodeSchema(n.schema)
	if err != nil {
		return nil, err
	}
	params, _ := json.Marshal(concatParams{Schema: schema})
	token := l.token(n)
	spans := n.spans
	if spans == nil {
		for i := 0; i < len(in); i += n.groups {
			spans = append(spans, i)
		}
		spans = append(spans, len(in))
	}
	var keys []graph.Key
	for i := 0; i+1 < len(spans); i++ {
		k := graph.NewKey("coalesce", token, i)
		if err := l.g.Add(&graph.Task{Key: k, Op: OpConcat, Params: params, Deps: in[spans[i]:spans[i+1]]}); err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, nil
}

func (l *lowerer) head(n *node) ([]graph.Key, error) {
	// Each partition stops at n rows; one task keeps the first n overall.
	per, err := l.pipelineHead(n.input(), n.n)
	if err != nil {
		return nil, err
	}
	schema, err := encodeSchema(n.schema)
	if err != nil {
		return nil, err
	}
	params, _ := json.Marshal(concatParams{Schema: schema, N: n.n})
	k := graph.NewKey("head", l.token(n))
	if err := l.g.Add(&graph.Task{Key: k, Op: OpHead, Params: params, Deps: per}); err != nil {
		return nil, err
	}
	return []graph.Key{k}, nil
}

// pipelineHead returns the partitions of n cut to their first rows rows:
// when n is a pipeline, its tasks get a final head step, so that no
// partition carries more rows than needed to the final task.
func (l *lowerer) pipelineHead(n *node, rows int64) ([]graph.Key, error) {
	base, run := chainShared(n, l.parents)
	if len(run) == 0 && base.kind != kindSource {
		return l.partitions(n)
	}
	keys, err := l.pipeline(n, sinkSpec{}, "")
	if err != nil {
		return nil, err
	}
	out := make([]graph.Key, len(keys))
	for i, k := range keys {
		t, _ := l.g.Get(k)
		p, err := unmarshalProgram(t.Params)
		if err != nil {
			return nil, err
		}
		p.Steps = append(p.Steps, stepSpec{Kind: "head", N: rows})
		params, err := marshalProgram(p)
		if err != nil {
			return nil, err
		}
		out[i] = graph.NewKey("head-partition", graph.TokenizeStrings(l.token(n), fmt.Sprint(rows)), i)
		if err := l.g.Add(&graph.Task{Key: out[i], Op: OpPartition, Params: params, Deps: t.Deps}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// aggregate adds a partial aggregation per input partition (fused with
// the input's pipeline), a tree of merges and a finalization; with
// SplitOut, one tree per output partition over the hash-split states.
func (l *lowerer) aggregate(n *node) ([]graph.Key, error) {
	a := n.agg
	in := n.input()
	sink := sinkSpec{Kind: "partial", Keys: a.keys, Specs: a.specs, Opts: a.opts}
	out := max(a.splitOut, 1)
	if out > 1 {
		sink.Kind, sink.N = "split", out
	}
	partials, err := l.pipeline(in, sink, "agg-partial")
	if err != nil {
		return nil, err
	}
	params, _ := json.Marshal(aggParams{Keys: a.keys, Specs: a.specs, Opts: a.opts})
	token := l.token(n)
	every := max(a.every, 2)
	var results []graph.Key
	for j := range out {
		level := partials
		if out > 1 {
			level = make([]graph.Key, len(partials))
			for i, p := range partials {
				level[i] = graph.NewKey("agg-split", token, i, j)
				if err := l.g.Add(&graph.Task{Key: level[i], Op: graph.OpGetItem, Params: graph.GetItemParams(j),
					Deps: []graph.Key{p}}); err != nil {
					return nil, err
				}
			}
		}
		depth := 0
		for len(level) > 1 {
			depth++
			var next []graph.Key
			for i := 0; i < len(level); i += every {
				k := graph.NewKey("agg-merge", token, j, depth, len(next))
				if err := l.g.Add(&graph.Task{Key: k, Op: OpAggMerge, Params: params,
					Deps: level[i:min(i+every, len(level))]}); err != nil {
					return nil, err
				}
				next = append(next, k)
			}
			level = next
		}
		k := graph.NewKey("agg-final", token, j)
		if err := l.g.Add(&graph.Task{Key: k, Op: OpAggFinal, Params: params, Deps: level}); err != nil {
			return nil, err
		}
		results = append(results, k)
	}
	return results, nil
}

// identity names a source for tokens: its files and options, or its
// records, or its keys.
func (s *source) identity() string {
	var b strings.Builder
	switch {
	case s.r != nil:
		b.WriteString(s.r.token())
	case s.keys != nil:
		for _, k := range s.keys {
			b.WriteString(string(k))
			b.WriteByte(',')
		}
	default:
		for _, r := range s.records {
			fmt.Fprintf(&b, "%p,", r)
		}
	}
	return b.String()
}

// patch rewrites the programs of tasks just added by pipeline.
func (l *lowerer) patch(keys []graph.Key, f func(i int, p *program, t *graph.Task)) error {
	for i, k := range keys {
		t, _ := l.g.Get(k)
		p, err := unmarshalProgram(t.Params)
		if err != nil {
			return err
		}
		f(i, &p, t)
		b, err := marshalProgram(p)
		if err != nil {
			return err
		}
		t.Params = b
	}
	return nil
}

// shuffle adds the tasks of a shuffle: a sample of the inputs and the
// divisions it gives (for a range shuffle without known divisions), one
// split per input partition (fused with its pipeline) and one collect per
// output.
func (l *lowerer) shuffle(n *node) ([]graph.Key, error) {
	sp := n.shuf
	in := n.input()
	token := l.token(n)
	id := token
	l.shuffles = append(l.shuffles, id)
	spec := shuffle.PartitionSpec{Hash: sp.hash}
	var divKey graph.Key
	if len(sp.sort) > 0 {
		spec.Range = sp.sort
		spec.Divisions = sp.divisions
		if sp.divisions == nil {
			cols := make([]string, len(sp.sort))
			for i, k := range sp.sort {
				cols[i] = k.Column
			}
			per := min(max(20*sp.outputs, 200), 20_000)
			samples, err := l.pipeline(in, sinkSpec{Kind: "sample", Keys: cols, N: per}, "sample")
			if err != nil {
				return nil, err
			}
			schema, err := encodeSchema(subSchema(in.schema, cols))
			if err != nil {
				return nil, err
			}
			params, _ := json.Marshal(divisionsParams{Sort: sp.sort, Outputs: sp.outputs, Schema: schema})
			divKey = graph.NewKey("divisions", token)
			if err := l.g.Add(&graph.Task{Key: divKey, Op: OpDivisions, Params: params, Deps: samples}); err != nil {
				return nil, err
			}
		}
	}
	sink := sinkSpec{Kind: "shuffle", Shuffle: &shuffleSink{ID: id, Outputs: sp.outputs, Spec: spec, Opts: sp.opts},
		keyToken: id}
	splits, err := l.pipeline(in, sink, "shuffle-split")
	if err != nil {
		return nil, err
	}
	err = l.patch(splits, func(i int, p *program, t *graph.Task) {
		p.Sink.Shuffle.Input = i
		if divKey != "" {
			p.Aux = 1
			t.Deps = append(slices.Clone(t.Deps), divKey)
		}
	})
	if err != nil {
		return nil, err
	}
	schema, err := encodeSchema(n.schema)
	if err != nil {
		return nil, err
	}
	var sortKeys []SortKey
	if sp.sorted {
		sortKeys = sp.sort
	}
	out := make([]graph.Key, sp.outputs)
	for j := range out {
		params, _ := json.Marshal(collectParams{ID: id, Output: j, Schema: schema, Sort: sortKeys, Opts: sp.opts})
		out[j] = graph.NewKey("shuffle-collect", token, j)
		if err := l.g.Add(&graph.Task{Key: out[j], Op: OpShuffleCollect, Params: params, Deps: splits}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pieces splits every partition into n.pieces row ranges.
func (l *lowerer) pieces(n *node) ([]graph.Key, error) {
	whole, err := l.pipeline(n.input(), sinkSpec{Kind: "pieces", N: n.pieces}, "pieces")
	if err != nil {
		return nil, err
	}
	token := l.token(n)
	var out []graph.Key
	for i, w := range whole {
		for j := range n.pieces {
			k := graph.NewKey("piece", token, i, j)
			if err := l.g.Add(&graph.Task{Key: k, Op: graph.OpGetItem, Params: graph.GetItemParams(j),
				Deps: []graph.Key{w}}); err != nil {
				return nil, err
			}
			out = append(out, k)
		}
	}
	return out, nil
}
