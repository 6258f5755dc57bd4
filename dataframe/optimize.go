package dataframe

import (
	"fmt"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/dataframe/expr"
)

// optimize rewrites a copy of the plan before it is lowered to tasks:
//
//   - predicate pushdown: filters move below projections that only pass
//     columns through, and into the readers, which evaluate them while
//     parsing (CSV) or use them to skip row groups (Parquet statistics);
//   - projection pushdown: readers read only the columns that something
//     uses, and projections drop outputs nobody uses;
//   - coalescing: after a selective filter, runs of small partitions are
//     concatenated into fewer;
//   - fusion and common subexpressions are the lowering's work: every run
//     of elementwise steps becomes one task per partition, and the same
//     sub-plan is the same tasks.
func optimize(root *node) (*node, error) {
	root = cloneTree(root, map[*node]*node{})
	parents := countParents(root)
	root = pushFilters(root, parents)
	parents = countParents(root)
	root = mergeProjects(root, parents, map[*node]bool{})
	parents = countParents(root)
	if err := prune(root); err != nil {
		return nil, err
	}
	if err := pushIntoReaders(root, map[*node]bool{}); err != nil {
		return nil, err
	}
	recount(root, map[*node]bool{})
	root = coalesceSelective(root, parents)
	return root, nil
}

func cloneTree(n *node, memo map[*node]*node) *node {
	if c, ok := memo[n]; ok {
		return c
	}
	c := *n
	if n.src != nil {
		s := *n.src
		c.src = &s
	}
	c.inputs = make([]*node, len(n.inputs))
	memo[n] = &c
	for i, in := range n.inputs {
		c.inputs[i] = cloneTree(in, memo)
	}
	return &c
}

func countParents(root *node) map[*node]int {
	counts := map[*node]int{root: 1}
	seen := map[*node]bool{}
	var walk func(n *node)
	walk = func(n *node) {
		if seen[n] {
			return
		}
		seen[n] = true
		for _, in := range n.inputs {
			counts[in]++
			walk(in)
		}
	}
	walk(root)
	return counts
}

// pushFilters moves each filter as far down as it can go: through
// projections that pass its columns through unchanged, merged with the
// filters below it, and into sources used by nobody else.
func pushFilters(n *node, parents map[*node]int) *node {
	for i, in := range n.inputs {
		n.inputs[i] = pushFilters(in, parents)
	}
	if n.kind != kindFilter {
		return n
	}
	in := n.input()
	if parents[in] > 1 {
		return n
	}
	switch in.kind {
	case kindSource:
		if in.src.hasFilt {
			in.src.filter = in.src.filter.And(n.pred)
		} else {
			in.src.filter, in.src.hasFilt = n.pred, true
		}
		return in
	case kindFilter:
		in.pred = in.pred.And(n.pred)
		return pushFilters(in, parents)
	case kindProject:
		renamed, ok := throughProject(n.pred, in)
		if !ok {
			return n
		}
		f := &node{kind: kindFilter, schema: in.input().schema, inputs: []*node{in.input()}, nparts: in.input().nparts, pred: renamed}
		parents[f] = 1
		in.inputs[0] = pushFilters(f, parents)
		return in
	}
	return n
}

// throughProject rewrites pred, written over p's output, over p's input,
// when every column pred uses is one that p passes through (maybe renamed).
func throughProject(pred expr.Expr, p *node) (expr.Expr, bool) {
	source := map[string]string{}
	for _, e := range p.exprs {
		if c, ok := passthrough(e); ok {
			source[e.Name()] = c
		}
	}
	for _, c := range pred.Columns() {
		if _, ok := source[c]; !ok {
			return pred, false
		}
	}
	return pred.Transform(func(e expr.Expr) (expr.Expr, bool) {
		if c, ok := e.ColumnName(); ok && e.Op() == "col" {
			return expr.Col(source[c]), true
		}
		return e, false
	}), true
}

// prune computes which columns each node must produce and drops the rest:
// sources read fewer columns, projections compute fewer outputs.
func prune(root *node) error {
	order := topo(root)
	req := map[*node]map[string]bool{root: set(schemaNames(root.schema))}
	add := func(n *node, cols ...string) {
		if req[n] == nil {
			req[n] = map[string]bool{}
		}
		for _, c := range cols {
			req[n][c] = true
		}
	}
	for _, n := range order { // parents first
		r := req[n]
		switch n.kind {
		case kindFilter:
			add(n.input(), keys(r)...)
			add(n.input(), n.pred.Columns()...)
		case kindProject:
			add(n.input())
			for _, e := range n.exprs {
				if r[e.Name()] {
					add(n.input(), e.Columns()...)
				}
			}
		case kindMap:
			add(n.input(), schemaNames(n.input().schema)...)
		case kindHead, kindCoalesce, kindConcat, kindSelect, kindPieces:
			for _, in := range n.inputs {
				add(in, keys(r)...)
			}
		case kindShuffle:
			add(n.input(), keys(r)...)
			add(n.input(), n.shuf.hash...)
			for _, k := range n.shuf.sort {
				add(n.input(), k.Column)
			}
		case kindCustom:
			for i, in := range n.inputs {
				var cols []string
				if n.custom.needs != nil {
					cols = n.custom.needs(i, r)
				}
				if cols == nil {
					cols = schemaNames(in.schema)
				}
				add(in, cols...)
			}
		case kindAgg:
			add(n.input(), n.agg.keys...)
			for _, s := range n.agg.specs {
				if s.Column != "" {
					add(n.input(), s.Column)
				}
			}
		}
	}
	for i := len(order) - 1; i >= 0; i-- { // children first
		n := order[i]
		r := req[n]
		switch n.kind {
		case kindSource:
			if n.src.hasFilt {
				for _, c := range n.src.filter.Columns() {
					r[c] = true
				}
			}
			cols := keepColumns(n.schema, r)
			if len(cols) < n.schema.NumFields() {
				if n.src.columns == nil || len(cols) < len(n.src.columns) {
					n.src.columns = cols
				}
				n.schema = subSchema(n.schema, cols)
			}
		case kindProject:
			var kept []expr.Expr
			for _, e := range n.exprs {
				if r[e.Name()] {
					kept = append(kept, e)
				}
			}
			if len(kept) == 0 && len(n.exprs) > 0 {
				kept = n.exprs[:1] // keep the rows: one column to carry them
			}
			if len(kept) < len(n.exprs) {
				n.exprs = kept
				names := make([]string, len(kept))
				for i, e := range kept {
					names[i] = e.Name()
				}
				n.schema = subSchema(n.schema, names)
			}
		case kindFilter, kindHead, kindCoalesce, kindShuffle, kindSelect, kindPieces:
			n.schema = n.input().schema
		case kindConcat:
			cols := keepColumns(n.schema, r)
			n.schema = subSchema(n.schema, cols)
			for j, in := range n.inputs {
				if !sameNames(in.schema, n.schema) {
					exprs := make([]expr.Expr, len(cols))
					for k, c := range cols {
						exprs[k] = expr.Col(c)
					}
					n.inputs[j] = &node{kind: kindProject, schema: n.schema, inputs: []*node{in}, nparts: in.nparts, exprs: exprs}
				}
			}
		}
	}
	return nil
}

// keepColumns lists the columns of s that are in r, in the schema's order;
// at least one, so that rows can still be counted.
func keepColumns(s *arrow.Schema, r map[string]bool) []string {
	var cols []string
	for _, f := range s.Fields() {
		if r[f.Name] {
			cols = append(cols, f.Name)
		}
	}
	if len(cols) == 0 && s.NumFields() > 0 {
		cols = []string{s.Field(0).Name}
	}
	return cols
}

func subSchema(s *arrow.Schema, cols []string) *arrow.Schema {
	fields := make([]arrow.Field, 0, len(cols))
	for _, c := range cols {
		if idx := s.FieldIndices(c); len(idx) > 0 {
			fields = append(fields, s.Field(idx[0]))
		}
	}
	return arrow.NewSchema(fields, nil)
}

// pushIntoReaders lets file readers use the filters pushed into them to
// skip parts (Parquet row groups) and tells them the columns to read.
func pushIntoReaders(n *node, seen map[*node]bool) error {
	if seen[n] {
		return nil
	}
	seen[n] = true
	for _, in := range n.inputs {
		if err := pushIntoReaders(in, seen); err != nil {
			return err
		}
	}
	if n.kind != kindSource || n.src.r == nil {
		return nil
	}
	r, note, err := n.src.r.prepare(n.src.columns, n.src.filter, n.src.hasFilt)
	if err != nil {
		return err
	}
	n.src.r = r
	n.nparts = r.parts()
	n.note = note
	// The nodes above share the count of partitions.
	return nil
}

// coalesceSelective concatenates runs of partitions after a selective
// filter when the result is materialized (not aggregated, which needs no
// coalescing: partial aggregates are small).
func coalesceSelective(root *node, parents map[*node]int) *node {
	base, _ := chain(root)
	if base.kind != kindSource || !base.src.hasFilt || base.nparts < 4 {
		return root
	}
	sel := selectivity(base.src.filter)
	if sel > 0.25 {
		return root
	}
	k := min(base.nparts, max(2, int(math.Round(1/sel))))
	return &node{kind: kindCoalesce, schema: root.schema, inputs: []*node{root}, groups: k,
		nparts: (root.nparts + k - 1) / k,
		note:   fmt.Sprintf("after a selective filter (estimated %.0f%% of rows kept)", sel*100)}
}

// selectivity estimates the fraction of rows a predicate keeps: equality
// 10% (10% per value of IsIn), a range 33%, inequality and IsNotNull 90%;
// conjunctions multiply, disjunctions add.
func selectivity(p expr.Expr) float64 {
	switch p.Op() {
	case "and":
		s := 1.0
		for _, a := range p.Args() {
			s *= selectivity(a)
		}
		return s
	case "or":
		s := 0.0
		for _, a := range p.Args() {
			s += selectivity(a)
		}
		return min(s, 1)
	case "eq":
		return 0.1
	case "is_in":
		return min(0.1*float64(len(p.Args())-1), 0.9)
	case "lt", "le", "gt", "ge", "between":
		return 0.33
	case "ne", "is_not_null":
		return 0.9
	case "is_null":
		return 0.1
	case "not":
		return 1 - selectivity(p.Args()[0])
	}
	return 0.5
}

func topo(root *node) []*node {
	var post []*node
	seen := map[*node]bool{}
	var walk func(n *node)
	walk = func(n *node) {
		if seen[n] {
			return
		}
		seen[n] = true
		for _, in := range n.inputs {
			walk(in)
		}
		post = append(post, n)
	}
	walk(root)
	slices.Reverse(post)
	return post
}

func set(xs []string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// passthrough returns the input column of an expression that only passes
// a column through, maybe renamed: col("a") or col("a").Alias("b").
func passthrough(e expr.Expr) (string, bool) {
	if c, ok := e.ColumnName(); ok {
		return c, true
	}
	if _, ok := e.AliasName(); ok {
		return e.Args()[0].ColumnName()
	}
	return "", false
}

// recount recomputes the partition counts after readers changed theirs.
func recount(n *node, seen map[*node]bool) int {
	if seen[n] {
		return n.nparts
	}
	seen[n] = true
	for _, in := range n.inputs {
		recount(in, seen)
	}
	switch n.kind {
	case kindSource:
		if n.src.r != nil {
			n.nparts = n.src.r.parts()
		}
	case kindFilter, kindProject, kindMap:
		n.nparts = n.input().nparts
	case kindConcat:
		n.nparts = 0
		for _, in := range n.inputs {
			n.nparts += in.nparts
		}
	case kindCoalesce:
		if n.spans == nil {
			n.nparts = (n.input().nparts + n.groups - 1) / n.groups
		}
	case kindHead:
		n.nparts = 1
	case kindShuffle:
		n.nparts = n.shuf.outputs
	case kindSelect:
		n.nparts = len(n.parts)
	case kindPieces:
		n.nparts = n.input().nparts * n.pieces
	case kindAgg:
		n.nparts = max(n.agg.splitOut, 1)
	case kindCustom:
		counts := make([]int, len(n.inputs))
		for i, in := range n.inputs {
			counts[i] = in.nparts
		}
		n.nparts = n.custom.count(counts)
	}
	return n.nparts
}

// mergeProjects folds a projection into the projection below it when
// nothing else uses the lower one: the upper expressions are rewritten over
// the lower one's input. One step computes both, and the evaluator computes
// an expression used twice only once.
func mergeProjects(n *node, parents map[*node]int, seen map[*node]bool) *node {
	if seen[n] {
		return n
	}
	seen[n] = true
	for i, in := range n.inputs {
		n.inputs[i] = mergeProjects(in, parents, seen)
	}
	if n.kind != kindProject || n.input().kind != kindProject || parents[n.input()] > 1 {
		return n
	}
	lower := n.input()
	defs := map[string]expr.Expr{}
	for _, e := range lower.exprs {
		d := e
		if _, ok := e.AliasName(); ok {
			d = e.Args()[0]
		}
		defs[e.Name()] = d
	}
	merged := make([]expr.Expr, len(n.exprs))
	for i, e := range n.exprs {
		name := e.Name()
		r := e.Transform(func(x expr.Expr) (expr.Expr, bool) {
			if c, ok := x.ColumnName(); ok && x.Op() == "col" {
				if d, ok := defs[c]; ok {
					return d, true
				}
			}
			return x, false
		})
		merged[i] = withName(r, name)
	}
	return &node{kind: kindProject, schema: n.schema, inputs: lower.inputs, nparts: n.nparts, exprs: merged}
}
