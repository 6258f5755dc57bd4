package dataframe

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/dataframe/expr"
	"github.com/shoal-data/shoal/dataframe/internal/agg"
	"github.com/shoal-data/shoal/graph"
)

// The logical plan: a tree of nodes, each with a schema known without
// computing anything. Building a DataFrame only builds nodes; Compute
// optimizes the tree (see optimize.go) and lowers it to a task graph (see
// lower.go), one task per partition for each run of elementwise steps.

type nodeKind uint8

const (
	kindSource   nodeKind = iota // partitions from files, records or held keys
	kindFilter                   // keep rows where pred is true
	kindProject                  // compute exprs (each named by its alias)
	kindMap                      // a registered function per partition
	kindHead                     // the first n rows
	kindConcat                   // the partitions of all inputs, in order
	kindAgg                      // a reduction or a group-by
	kindCoalesce                 // concatenate runs of partitions into fewer
	kindShuffle                  // move rows between partitions by hash or range
	kindSelect                   // some of the input's partitions
	kindPieces                   // split each partition into row ranges
	kindCustom                   // tasks added by the node's own lowering
)

type node struct {
	kind   nodeKind
	schema *arrow.Schema
	inputs []*node
	nparts int // partitions it produces

	src    *source      // kindSource
	pred   expr.Expr    // kindFilter
	exprs  []expr.Expr  // kindProject: each expression's Name() is its output column
	fn     string       // kindMap: registered op name
	n      int64        // kindHead
	agg    *aggPlan     // kindAgg
	groups int          // kindCoalesce: input partitions per output partition, or
	spans  []int        // kindCoalesce: output i is input partitions spans[i] to spans[i+1]
	shuf   *shufflePlan // kindShuffle
	parts  []int        // kindSelect: the input partitions kept
	pieces int          // kindPieces: pieces per input partition
	custom *customPlan  // kindCustom
	note   string       // why the optimizer added or changed the node, for Explain

	// index is the column the rows are sorted by with known divisions
	// (SetIndex): partition i holds the values in [divisions[i],
	// divisions[i+1]) (the last one including its upper end).
	index     string
	divisions []any
}

// aggPlan describes an aggregation.
type aggPlan struct {
	keys     []string
	specs    []agg.Spec
	opts     agg.Options
	splitOut int // number of output partitions (1 when 0)
	every    int // how many partial results each merge task combines
}

func (n *node) input() *node { return n.inputs[0] }

// elementwise reports whether the node works on each partition alone,
// row by row or partition by partition, so it fuses with its input.
func (n *node) elementwise() bool {
	switch n.kind {
	case kindFilter, kindProject, kindMap:
		return true
	}
	return false
}

// explain writes the plan as indented text, outputs first.
func (n *node) explain(b *strings.Builder, depth int) {
	pad := strings.Repeat("  ", depth)
	fmt.Fprintf(b, "%s%s", pad, n.describe())
	if n.note != "" {
		fmt.Fprintf(b, "  -- %s", n.note)
	}
	fmt.Fprintf(b, "  [%d partitions]\n", n.nparts)
	for _, in := range n.inputs {
		in.explain(b, depth+1)
	}
}

func (n *node) describe() string {
	switch n.kind {
	case kindSource:
		return n.src.describe()
	case kindFilter:
		return "Filter " + n.pred.String()
	case kindProject:
		parts := make([]string, len(n.exprs))
		for i, e := range n.exprs {
			s := e.String()
			if c, ok := passthrough(e); ok {
				s = c
				if c != e.Name() {
					s += " as " + e.Name()
				}
			}
			parts[i] = s
		}
		return "Project " + strings.Join(parts, ", ")
	case kindMap:
		return "MapPartitions " + n.fn
	case kindHead:
		return fmt.Sprintf("Head %d", n.n)
	case kindConcat:
		return fmt.Sprintf("Concat %d frames", len(n.inputs))
	case kindAgg:
		a := n.agg
		var specs []string
		for _, s := range a.specs {
			col := s.Column
			specs = append(specs, fmt.Sprintf("%s(%s) as %s", s.Func, col, s.Name))
		}
		if len(a.keys) == 0 {
			return fmt.Sprintf("Reduce %s (tree, %d per merge)", strings.Join(specs, ", "), a.every)
		}
		s := fmt.Sprintf("GroupBy %s: %s (partial per partition, tree merge %d per task", strings.Join(a.keys, ", "),
			strings.Join(specs, ", "), a.every)
		if a.splitOut > 1 {
			s += fmt.Sprintf(", split out in %d", a.splitOut)
		}
		return s + ")"
	case kindCoalesce:
		if n.spans != nil {
			return fmt.Sprintf("Coalesce into %d partitions", len(n.spans)-1)
		}
		return fmt.Sprintf("Coalesce every %d partitions", n.groups)
	case kindShuffle:
		sp := n.shuf
		if len(sp.hash) > 0 {
			return fmt.Sprintf("Shuffle by hash of %s into %d", strings.Join(sp.hash, ", "), sp.outputs)
		}
		var keys []string
		for _, k := range sp.sort {
			s := k.Column
			if k.Descending {
				s += " desc"
			}
			keys = append(keys, s)
		}
		how := "divisions from a sample"
		if sp.divisions != nil {
			how = "known divisions"
		}
		s := fmt.Sprintf("Shuffle by ranges of %s into %d (%s)", strings.Join(keys, ", "), sp.outputs, how)
		if sp.sorted {
			s += ", each sorted"
		}
		return s
	case kindSelect:
		return fmt.Sprintf("Partitions %v", n.parts)
	case kindCustom:
		return n.custom.describe()
	case kindPieces:
		return fmt.Sprintf("Split every partition in %d", n.pieces)
	}
	return "?"
}

// source is where partitions come from.
type source struct {
	r       reader              // files
	records []arrow.RecordBatch // in memory
	keys    []graph.Key         // held by an executor (Persist), or computed by graph
	graph   *graph.Graph        // FromGraph: the tasks that compute keys
	futures []graph.Future      // that hold keys
	columns []string            // projection pushed down; nil means all
	filter  expr.Expr           // predicate pushed down; evaluated while reading
	hasFilt bool
}

func (s *source) describe() string {
	var b strings.Builder
	switch {
	case s.r != nil:
		b.WriteString(s.r.describe())
	case s.graph != nil:
		fmt.Fprintf(&b, "FromGraph %d partitions", len(s.keys))
	case s.keys != nil:
		fmt.Fprintf(&b, "Persisted %d partitions", len(s.keys))
	default:
		fmt.Fprintf(&b, "FromRecords %d partitions", len(s.records))
	}
	if s.columns != nil {
		fmt.Fprintf(&b, " columns=[%s]", strings.Join(s.columns, ", "))
	}
	if s.hasFilt {
		fmt.Fprintf(&b, " filter=%s", s.filter.String())
	}
	return b.String()
}
