package dataframe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/dataframe/internal/joink"
	"github.com/shoal-data/shoal/graph"
)

// MergeOptions say how Merge joins two frames, as pandas' merge does.
type MergeOptions struct {
	// How is "inner" (the default), "left", "right" or "outer".
	How string
	// On names key columns that both frames have. Without On, LeftOn,
	// RightOn or an index, the keys are the columns both frames have.
	On []string
	// LeftOn and RightOn name the key columns of each side, matched by
	// position, for keys named differently.
	LeftOn, RightOn []string
	// LeftIndex and RightIndex join on that side's index (see SetIndex)
	// instead of columns.
	LeftIndex, RightIndex bool
	// Suffixes are added to the names of non-key columns that both frames
	// have; default "_x" and "_y".
	Suffixes [2]string
	// Indicator adds a column "_merge" saying where each row comes from:
	// "left_only", "right_only" or "both".
	Indicator bool
	// BroadcastBytes: a side whose estimated size is at most this many
	// bytes is joined whole with each partition of the other side, without
	// a shuffle (inner joins, left joins with a small right side, right
	// joins with a small left side). Default 32 MiB; negative never
	// broadcasts.
	BroadcastBytes int64
	// Partitions is the number of partitions of a shuffled join; default
	// the larger number of partitions of the two sides.
	Partitions int
}

// DefaultBroadcastBytes is MergeOptions.BroadcastBytes by default.
const DefaultBroadcastBytes = 32 << 20

// OpJoin joins a partition of each side.
const OpJoin = "dataframe.join"

type joinParams struct {
	Spec  joink.Spec `json:"spec"`
	Left  []byte     `json:"left"`  // schema of the left side
	Right []byte     `json:"right"` // schema of the right side
}

// Merge joins df (the left side) with right on key columns or indexes,
// like pandas' DataFrame.merge. Rows with a null key match nothing. The
// result has the left columns, then the right ones; key columns of the
// same name on both sides appear once.
//
// Merge picks how to run the join: when one side is small (see
// MergeOptions.BroadcastBytes), it is joined whole with every partition of
// the other; when both sides have an index with the same divisions and the
// join is on the indexes, partition i joins partition i; otherwise both
// sides are hash-shuffled on the keys (on disk, within the memory budget)
// and matching partitions are joined. Explain shows which.
func (df DataFrame) Merge(right DataFrame, opts ...MergeOptions) DataFrame {
	if df.err != nil {
		return df
	}
	if err := right.Err(); err != nil {
		return df.fail("Merge", fmt.Errorf("right side: %w", err))
	}
	var o MergeOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	how, err := joink.ParseHow(cmpOr(o.How, "inner"))
	if err != nil {
		return df.fail("Merge", err)
	}
	lkeys, rkeys, err := mergeKeys(df, right, o)
	if err != nil {
		return df.fail("Merge", err)
	}
	spec := joink.Spec{How: how, LeftOn: lkeys, RightOn: rkeys, Suffixes: o.Suffixes, Indicator: o.Indicator}
	if spec.Suffixes == [2]string{} {
		spec.Suffixes = [2]string{"_x", "_y"}
	}
	schema, err := joink.OutputSchema(df.Schema(), right.Schema(), spec)
	if err != nil {
		return df.fail("Merge", err)
	}
	ls, err := encodeSchema(df.Schema())
	if err != nil {
		return df.fail("Merge", err)
	}
	rs, err := encodeSchema(right.Schema())
	if err != nil {
		return df.fail("Merge", err)
	}
	params := joinParams{Spec: spec, Left: ls, Right: rs}
	threshold := o.BroadcastBytes
	if threshold == 0 {
		threshold = DefaultBroadcastBytes
	}
	desc := fmt.Sprintf("Merge %s on %s", cmpOr(o.How, "inner"), keyPairs(lkeys, rkeys))

	// Both sides partitioned alike on the keys: partition i with i.
	if o.LeftIndex && o.RightIndex && df.n.divisions != nil && reflect.DeepEqual(df.n.divisions, right.n.divisions) &&
		df.NPartitions() == right.NPartitions() {
		out := mergeZip(df.n, right.n, schema, params, desc+" (aligned partitions)")
		if how != joink.Outer && slices.Contains(schemaNames(schema), df.n.index) {
			out.n.index, out.n.divisions = df.n.index, df.n.divisions
		}
		return out
	}

	// A small side goes whole to every partition of the other.
	lsize, lok := estimateBytes(df.n)
	rsize, rok := estimateBytes(right.n)
	canRight := how == joink.Inner || how == joink.Left
	canLeft := how == joink.Inner || how == joink.Right
	broadcastRight := canRight && rok && threshold >= 0 && rsize <= threshold && (!canLeft || !lok || rsize <= lsize)
	broadcastLeft := !broadcastRight && canLeft && lok && threshold >= 0 && lsize <= threshold
	switch {
	case broadcastRight:
		out := mergeBroadcast(df.n, right.n, schema, params, 1, desc+fmt.Sprintf(" (broadcast right side, ~%s)", byteSize(rsize)))
		if df.n.index != "" && slices.Contains(schemaNames(schema), df.n.index) {
			// Left rows stay in their partitions, in order.
			out.n.index, out.n.divisions = df.n.index, df.n.divisions
		}
		return out
	case broadcastLeft:
		return mergeBroadcast(df.n, right.n, schema, params, 0, desc+fmt.Sprintf(" (broadcast left side, ~%s)", byteSize(lsize)))
	}

	// One partition on each side: nothing to move.
	if df.NPartitions() == 1 && right.NPartitions() == 1 {
		return mergeWhole(df.n, right.n, schema, params, desc+" (one partition each)")
	}

	// Otherwise hash-shuffle both sides on the keys.
	n := o.Partitions
	if n <= 0 {
		n = max(df.NPartitions(), right.NPartitions(), 1)
	}
	left, rightS := df, right
	if err := alignKeyTypes(&left, &rightS, lkeys, rkeys); err != nil {
		return df.fail("Merge", err)
	}
	ln := &node{kind: kindShuffle, schema: left.Schema(), inputs: []*node{left.n}, nparts: n,
		shuf: &shufflePlan{hash: lkeys, outputs: n}}
	rn := &node{kind: kindShuffle, schema: rightS.Schema(), inputs: []*node{rightS.n}, nparts: n,
		shuf: &shufflePlan{hash: rkeys, outputs: n}}
	if !left.Schema().Equal(df.Schema()) || !rightS.Schema().Equal(right.Schema()) {
		if params.Left, err = encodeSchema(left.Schema()); err != nil {
			return df.fail("Merge", err)
		}
		if params.Right, err = encodeSchema(rightS.Schema()); err != nil {
			return df.fail("Merge", err)
		}
		if schema, err = joink.OutputSchema(left.Schema(), rightS.Schema(), spec); err != nil {
			return df.fail("Merge", err)
		}
	}
	return mergeZip(ln, rn, schema, params, desc+fmt.Sprintf(" (hash shuffle into %d partitions)", n))
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func keyPairs(l, r []string) string {
	var b strings.Builder
	for i := range l {
		if i > 0 {
			b.WriteString(", ")
		}
		if l[i] == r[i] {
			b.WriteString(l[i])
		} else {
			fmt.Fprintf(&b, "%s=%s", l[i], r[i])
		}
	}
	return "[" + b.String() + "]"
}

// mergeKeys resolves the key columns of each side.
func mergeKeys(left, right DataFrame, o MergeOptions) ([]string, []string, error) {
	var lk, rk []string
	switch {
	case o.LeftIndex || o.RightIndex:
		if len(o.On) > 0 {
			return nil, nil, errors.New("give either On or an index, not both")
		}
		if o.LeftIndex {
			if left.Index() == "" {
				return nil, nil, errors.New("LeftIndex: the left frame has no index; use SetIndex first")
			}
			lk = []string{left.Index()}
		} else {
			lk = o.LeftOn
		}
		if o.RightIndex {
			if right.Index() == "" {
				return nil, nil, errors.New("RightIndex: the right frame has no index; use SetIndex first")
			}
			rk = []string{right.Index()}
		} else {
			rk = o.RightOn
		}
	case len(o.On) > 0:
		if len(o.LeftOn) > 0 || len(o.RightOn) > 0 {
			return nil, nil, errors.New("give either On or LeftOn and RightOn, not both")
		}
		lk, rk = o.On, o.On
	case len(o.LeftOn) > 0 || len(o.RightOn) > 0:
		lk, rk = o.LeftOn, o.RightOn
	default:
		for _, c := range left.Columns() {
			if slices.Contains(right.Columns(), c) {
				lk = append(lk, c)
			}
		}
		if len(lk) == 0 {
			return nil, nil, fmt.Errorf("no key columns given and the frames have no column in common (left %v, right %v)",
				left.Columns(), right.Columns())
		}
		rk = lk
	}
	if len(lk) == 0 || len(lk) != len(rk) {
		return nil, nil, fmt.Errorf("%d left keys %v and %d right keys %v: give as many on each side", len(lk), lk, len(rk), rk)
	}
	for _, k := range lk {
		if _, err := fieldIndex(left.Schema(), k); err != nil {
			return nil, nil, fmt.Errorf("left key: %w", err)
		}
	}
	for _, k := range rk {
		if _, err := fieldIndex(right.Schema(), k); err != nil {
			return nil, nil, fmt.Errorf("right key: %w", err)
		}
	}
	return slices.Clone(lk), slices.Clone(rk), nil
}

// alignKeyTypes casts key columns whose types compare by value but are
// stored differently (timestamps of different units, dates and
// timestamps), so that equal keys hash alike on both sides.
func alignKeyTypes(left, right *DataFrame, lk, rk []string) error {
	lcast := map[string]arrow.DataType{}
	rcast := map[string]arrow.DataType{}
	for i := range lk {
		lf, _ := fieldIndex(left.Schema(), lk[i])
		rf, _ := fieldIndex(right.Schema(), rk[i])
		lt, rt := left.Schema().Field(lf).Type, right.Schema().Field(rf).Type
		if arrow.TypeEqual(lt, rt) {
			continue
		}
		lTemporal, rTemporal := isTemporal(lt), isTemporal(rt)
		if lTemporal && rTemporal {
			ns := &arrow.TimestampType{Unit: arrow.Nanosecond}
			if tt, ok := lt.(*arrow.TimestampType); ok {
				ns.TimeZone = tt.TimeZone
			}
			lcast[lk[i]], rcast[rk[i]] = ns, ns
		}
	}
	if len(lcast) > 0 {
		*left = left.Astype(lcast)
	}
	if len(rcast) > 0 {
		*right = right.Astype(rcast)
	}
	if err := left.Err(); err != nil {
		return err
	}
	return right.Err()
}

func isTemporal(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.TIMESTAMP, arrow.DATE32, arrow.DATE64:
		return true
	}
	return false
}

// mergeBroadcast joins every partition of the big side with the whole
// small side (small is 0 for the left side, 1 for the right).
func mergeBroadcast(left, right *node, schema *arrow.Schema, params joinParams, small int, desc string) DataFrame {
	big := 1 - small
	return custom(schema, &customPlan{
		what:   desc,
		params: params,
		count: func(ins []int) int {
			return ins[big]
		},
		lower: func(l *lowerer, token string, ins [][]graph.Key) ([]graph.Key, error) {
			sch := params.Right
			if small == 0 {
				sch = params.Left
			}
			whole, err := l.task("merge-broadcast", token, OpConcat, concatParams{Schema: sch}, ins[small])
			if err != nil {
				return nil, err
			}
			out := make([]graph.Key, len(ins[big]))
			for i, k := range ins[big] {
				deps := []graph.Key{k, whole}
				if small == 0 {
					deps = []graph.Key{whole, k}
				}
				if out[i], err = l.task("merge", token, OpJoin, params, deps, i); err != nil {
					return nil, err
				}
			}
			return out, nil
		},
	}, left, right)
}

// mergeZip joins partition i of the left side with partition i of the
// right side.
func mergeZip(left, right *node, schema *arrow.Schema, params joinParams, desc string) DataFrame {
	return custom(schema, &customPlan{
		what:   desc,
		params: params,
		count:  func(ins []int) int { return max(ins[0], ins[1]) },
		lower: func(l *lowerer, token string, ins [][]graph.Key) ([]graph.Key, error) {
			if len(ins[0]) != len(ins[1]) {
				return nil, fmt.Errorf("merge: %d left and %d right partitions do not align", len(ins[0]), len(ins[1]))
			}
			out := make([]graph.Key, len(ins[0]))
			for i := range out {
				var err error
				if out[i], err = l.task("merge", token, OpJoin, params, []graph.Key{ins[0][i], ins[1][i]}, i); err != nil {
					return nil, err
				}
			}
			return out, nil
		},
	}, left, right)
}

// mergeWhole joins all the left partitions with all the right ones in one
// task (for sides of one partition each).
func mergeWhole(left, right *node, schema *arrow.Schema, params joinParams, desc string) DataFrame {
	return custom(schema, &customPlan{
		what:   desc,
		params: params,
		count:  func([]int) int { return 1 },
		lower: func(l *lowerer, token string, ins [][]graph.Key) ([]graph.Key, error) {
			deps := make([]graph.Key, 2)
			for i, sch := range [][]byte{params.Left, params.Right} {
				if len(ins[i]) == 1 {
					deps[i] = ins[i][0]
					continue
				}
				var err error
				if deps[i], err = l.task("merge-side", token, OpConcat, concatParams{Schema: sch}, ins[i], i); err != nil {
					return nil, err
				}
			}
			k, err := l.task("merge", token, OpJoin, params, deps)
			return []graph.Key{k}, err
		},
	}, left, right)
}

func runJoin(ctx context.Context, in graph.OpInput) (any, error) {
	var p joinParams
	if err := json.Unmarshal(in.Params, &p); err != nil {
		return nil, err
	}
	if len(in.Inputs) != 2 {
		return nil, fmt.Errorf("join takes 2 inputs, got %d", len(in.Inputs))
	}
	sides := [2]arrow.RecordBatch{}
	for i, sch := range [][]byte{p.Left, p.Right} {
		schema, err := decodeSchema(sch)
		if err != nil {
			return nil, err
		}
		rec, err := concatInputs(in.Inputs[i:i+1], schema, allocator)
		if err != nil {
			return nil, err
		}
		defer rec.Release()
		sides[i] = rec
	}
	return joink.Join(ctx, sides[0], sides[1], p.Spec, allocator)
}

// estimateBytes estimates the in-memory size of what n produces, when
// it can be known before computing: in-memory records, CSV files (their
// size) and Parquet files (rows times the width of the columns read),
// through filters (an upper bound) and projections.
func estimateBytes(n *node) (int64, bool) {
	switch n.kind {
	case kindSource:
		switch {
		case n.src.r != nil:
			if s, ok := n.src.r.(sizer); ok {
				return s.bytes(n.src.columns)
			}
			return 0, false
		case n.src.keys != nil:
			return 0, false
		}
		var total int64
		for _, r := range n.src.records {
			total += int64(graph.SizeOf(r))
		}
		return total, true
	case kindFilter, kindHead:
		return estimateBytes(n.input())
	case kindProject, kindMap:
		in, ok := estimateBytes(n.input())
		if !ok || n.input().schema.NumFields() == 0 {
			return in, ok
		}
		return in * int64(n.schema.NumFields()) / int64(n.input().schema.NumFields()), true
	case kindAgg:
		if len(n.agg.keys) == 0 {
			return 1 << 10, true
		}
	case kindConcat:
		var total int64
		for _, in := range n.inputs {
			s, ok := estimateBytes(in)
			if !ok {
				return 0, false
			}
			total += s
		}
		return total, true
	}
	return 0, false
}

// sizer is a reader that can estimate the bytes it produces.
type sizer interface {
	bytes(columns []string) (int64, bool)
}

// rowWidth estimates the bytes of a row of the columns.
func rowWidth(schema *arrow.Schema, columns []string) int64 {
	var w int64
	for _, f := range schema.Fields() {
		if columns != nil && !slices.Contains(columns, f.Name) {
			continue
		}
		if fw, ok := f.Type.(arrow.FixedWidthDataType); ok {
			w += int64(max(fw.BitWidth()/8, 1))
		} else {
			w += 16
		}
	}
	return max(w, 1)
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func (r *csvReader) bytes(columns []string) (int64, bool) {
	var total int64
	for _, b := range r.plan.Blocks {
		total += b.Length
	}
	if n := r.plan.Schema.NumFields(); columns != nil && n > 0 {
		total = total * int64(len(columns)) / int64(n)
	}
	return total, true
}

func (r *parquetReader) bytes(columns []string) (int64, bool) {
	var rows int64
	for _, p := range r.plan.Parts {
		rows += p.Rows
	}
	return rows * rowWidth(r.plan.Schema, columns), true
}
