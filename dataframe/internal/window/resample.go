package window

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/internal/distinct/rows"
)

// Func names an aggregate function of a resample or a rolling window.
type Func string

// The functions. Nulls are skipped by all of them (count counts the
// non-null values). NaN is a value, as in package agg: it propagates
// through sum, mean and std, and loses to any number in min and max
// (pandas treats NaN as missing instead).
const (
	Min   Func = "min"   // smallest value
	Max   Func = "max"   // largest value
	Mean  Func = "mean"  // arithmetic mean, float64
	Sum   Func = "sum"   // sum: int64 for signed integers, uint64 for unsigned, float64 for floats; 0 for an empty bin
	Count Func = "count" // number of non-null values, int64
	First Func = "first" // first non-null value in row order
	Last  Func = "last"  // last non-null value in row order
	Std   Func = "std"   // sample standard deviation (one degree of freedom, pandas' default), float64
)

// AggSpec is one aggregate: a function of an input column, written to an
// output column.
type AggSpec struct {
	Column string `json:"column"`
	Func   Func   `json:"func"`
	// Name is the output column's name; empty means Column.
	Name string `json:"name,omitempty"`
}

func (s AggSpec) name() string {
	if s.Name != "" {
		return s.Name
	}
	return s.Column
}

// Errors that callers can test for with errors.Is.
var (
	// ErrBadColumn: an unknown column, or a column whose type the
	// function does not accept (the sum of a string column).
	ErrBadColumn = errors.New("bad column")
	// ErrBadSpec: an unknown function or duplicate output names.
	ErrBadSpec = errors.New("bad window spec")
	// ErrBadState: a partial state that Resample or MergeResample did not
	// make with the same time column and aggregates.
	ErrBadState = errors.New("bad resample state")
	// ErrUnsorted: a rolling window over a time column that is not sorted.
	ErrUnsorted = errors.New("time column not sorted")
)

type valueClass int

const (
	classOther    valueClass = iota
	classSigned              // signed integers
	classUnsigned            // unsigned integers
	classFloat               // float32, float64
	classOrdered             // temporal types and strings: min and max, no arithmetic
)

func classOf(t arrow.DataType) valueClass {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		return classSigned
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return classUnsigned
	case arrow.FLOAT32, arrow.FLOAT64:
		return classFloat
	case arrow.TIMESTAMP, arrow.DATE32, arrow.DATE64, arrow.DURATION, arrow.TIME32, arrow.TIME64,
		arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		return classOrdered
	}
	return classOther
}

// accepts reports whether f applies to values of class c.
func (f Func) accepts(c valueClass) bool {
	switch f {
	case Count, First, Last:
		return true
	case Min, Max:
		return c != classOther
	case Sum, Mean, Std:
		return c == classSigned || c == classUnsigned || c == classFloat
	}
	return false
}

func sumType(c valueClass) arrow.DataType {
	switch c {
	case classSigned:
		return arrow.PrimitiveTypes.Int64
	case classUnsigned:
		return arrow.PrimitiveTypes.Uint64
	}
	return arrow.PrimitiveTypes.Float64
}

// resultType is the type of f's result over values of type t.
func (f Func) resultType(t arrow.DataType) arrow.DataType {
	switch f {
	case Count:
		return arrow.PrimitiveTypes.Int64
	case Sum:
		return sumType(classOf(t))
	case Mean, Std:
		return arrow.PrimitiveTypes.Float64
	}
	return t
}

var (
	tInt64   = arrow.PrimitiveTypes.Int64
	tFloat64 = arrow.PrimitiveTypes.Float64
)

// stateFields are the columns of a partial state of one aggregate whose
// input has type t.
func (s AggSpec) stateFields(t arrow.DataType) []arrow.Field {
	n := s.name()
	f := func(part string, typ arrow.DataType) arrow.Field {
		return arrow.Field{Name: n + ":" + part, Type: typ, Nullable: true}
	}
	switch s.Func {
	case Count:
		return []arrow.Field{f("count", tInt64)}
	case Sum:
		return []arrow.Field{f("sum", sumType(classOf(t)))}
	case Mean:
		return []arrow.Field{f("sum", tFloat64), f("count", tInt64)}
	case Std:
		return []arrow.Field{f("count", tInt64), f("mean", tFloat64), f("m2", tFloat64)}
	}
	return []arrow.Field{f("value", t)}
}

// resamplePlan is a resample checked against its input (or state) schema.
type resamplePlan struct {
	time     timeCol
	timeName string
	rule     Rule
	aggs     []AggSpec
	inputs   []int            // input column of each aggregate (-1 for a state)
	types    []arrow.DataType // input type of each aggregate
	state    *arrow.Schema
	out      *arrow.Schema
	first    []int // first state column of each aggregate
}

// newResamplePlan checks a resample of input: the time column and the
// aggregates' columns and functions.
func newResamplePlan(input *arrow.Schema, timeName string, rule Rule, aggs []AggSpec) (*resamplePlan, error) {
	ti, err := columnIndex(input, timeName, "time column")
	if err != nil {
		return nil, err
	}
	types := make([]arrow.DataType, len(aggs))
	inputs := make([]int, len(aggs))
	for i, a := range aggs {
		c, err := columnIndex(input, a.Column, fmt.Sprintf("%s(%s)", a.Func, a.Column))
		if err != nil {
			return nil, err
		}
		inputs[i], types[i] = c, input.Field(c).Type
	}
	return buildPlan(input.Field(ti).Type, timeName, rule, aggs, types, inputs)
}

func buildPlan(timeType arrow.DataType, timeName string, rule Rule, aggs []AggSpec, types []arrow.DataType, inputs []int) (*resamplePlan, error) {
	tc, err := newTimeCol(timeName, timeType)
	if err != nil {
		return nil, err
	}
	if rule.text == "" {
		return nil, fmt.Errorf("window: resample needs a rule (ParseRule): %w", ErrBadRule)
	}
	if tc.date && !rule.Calendar() {
		return nil, fmt.Errorf("window: rule %q is finer than a day, but the time column %q holds dates (%s): %w",
			rule, timeName, timeType, ErrBadRule)
	}
	if tc.date {
		rule.loc = time.UTC // dates are calendar days, not instants
	} else if rule.loc == nil {
		rule.loc = tc.loc
	}
	tc.loc = rule.loc
	p := &resamplePlan{time: tc, timeName: timeName, rule: rule, aggs: aggs, inputs: inputs, types: types}
	stateFields := []arrow.Field{{Name: timeName, Type: timeType, Nullable: false}}
	outFields := []arrow.Field{{Name: timeName, Type: timeType, Nullable: false}}
	names := map[string]bool{timeName: true}
	for i, a := range aggs {
		if !slices.Contains([]Func{Min, Max, Mean, Sum, Count, First, Last, Std}, a.Func) {
			return nil, fmt.Errorf("window: %s(%s): unknown function %q (min, max, mean, sum, count, first, last, std): %w",
				a.Func, a.Column, a.Func, ErrBadSpec)
		}
		if !a.Func.accepts(classOf(types[i])) {
			return nil, fmt.Errorf("window: %s(%s): column %q has type %s, which %s does not accept: %w",
				a.Func, a.Column, a.Column, types[i], a.Func, ErrBadColumn)
		}
		if names[a.name()] {
			return nil, fmt.Errorf("window: %s(%s): output name %q is used twice (set AggSpec.Name): %w",
				a.Func, a.Column, a.name(), ErrBadSpec)
		}
		names[a.name()] = true
		p.first = append(p.first, len(stateFields))
		stateFields = append(stateFields, a.stateFields(types[i])...)
		outFields = append(outFields, arrow.Field{Name: a.name(), Type: a.Func.resultType(types[i]), Nullable: true})
	}
	p.state = arrow.NewSchema(stateFields, nil)
	p.out = arrow.NewSchema(outFields, nil)
	return p, nil
}

// planFromState recovers the plan from a partial state's schema.
func planFromState(state *arrow.Schema, timeName string, rule Rule, aggs []AggSpec) (*resamplePlan, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("window: partial state: %s (states come from Resample or MergeResample with the same time column and aggregates): %w",
			fmt.Sprintf(format, args...), ErrBadState)
	}
	if state.NumFields() == 0 || state.Field(0).Name != timeName {
		return nil, bad("the first column should be the time column %q", timeName)
	}
	types := make([]arrow.DataType, len(aggs))
	inputs := make([]int, len(aggs))
	k := 1
	for i, a := range aggs {
		inputs[i] = -1
		want := a.stateFields(arrow.Null)
		if k+len(want) > state.NumFields() {
			return nil, bad("missing the columns of %s(%s)", a.Func, a.Column)
		}
		// The input type shows in the value column, or the sum's class.
		f := state.Field(k)
		switch a.Func {
		case Sum:
			types[i] = f.Type
		case Count, Mean, Std:
			types[i] = tFloat64
		default:
			types[i] = f.Type
		}
		k += len(want)
	}
	p, err := buildPlan(state.Field(0).Type, timeName, rule, aggs, types, inputs)
	if err != nil {
		return nil, err
	}
	if !p.state.Equal(state) {
		return nil, bad("columns %s, want %s", state, p.state)
	}
	return p, nil
}

func columnIndex(s *arrow.Schema, name, what string) (int, error) {
	is := s.FieldIndices(name)
	if len(is) != 1 {
		var names []string
		for _, f := range s.Fields() {
			names = append(names, f.Name)
		}
		if len(is) == 0 {
			return 0, fmt.Errorf("window: %s: no column %q (columns: %v): %w", what, name, names, ErrBadColumn)
		}
		return 0, fmt.Errorf("window: %s: %d columns are named %q: %w", what, len(is), name, ErrBadColumn)
	}
	return is[0], nil
}

// ResampleSchema returns the schema of the result of resampling input
// (through Resample, MergeResample and FinalizeResample): the time column
// (bin labels, of the time column's type), then one column per aggregate.
func ResampleSchema(input *arrow.Schema, timeCol string, rule Rule, aggs []AggSpec) (*arrow.Schema, error) {
	p, err := newResamplePlan(input, timeCol, rule, aggs)
	if err != nil {
		return nil, err
	}
	return p.out, nil
}

// Resample aggregates one batch into a partial state: one row per bin
// that holds rows of rec, sorted by bin, with the bin's start in the time
// column and the state of each aggregate. Rows whose time is null are
// left out (as pandas drops NaT). rec need not be sorted, but sorted rows
// are the fast path (one bin lookup per bin instead of per row).
//
// A bin may hold rows of several partitions: combine the states of all
// partitions, in partition order (first and last depend on it), with
// MergeResample, and make the result with FinalizeResample.
func Resample(ctx context.Context, rec arrow.RecordBatch, timeCol string, rule Rule, aggs []AggSpec, mem memory.Allocator) (arrow.RecordBatch, error) {
	if rec == nil {
		return nil, errors.New("window: Resample given a nil record batch")
	}
	p, err := newResamplePlan(rec.Schema(), timeCol, rule, aggs)
	if err != nil {
		return nil, err
	}
	ti, _ := columnIndex(rec.Schema(), timeCol, "")
	runs, starts, err := p.assignBins(ctx, rec.Column(ti))
	if err != nil {
		return nil, err
	}
	inputs := make([]arrow.Array, len(aggs))
	for i, c := range p.inputs {
		inputs[i] = rec.Column(c)
	}
	return p.reduce(ctx, inputs, nil, runs, starts, mem)
}

// assignBins cuts the valid rows of a time column into runs of rows in one
// bin, and returns the runs and the start of each bin (slot).
func (p *resamplePlan) assignBins(ctx context.Context, col arrow.Array) ([]run, []int64, error) {
	vals := p.time.values(col)
	bm, off := rows.Validity(col)
	var runs []run
	var starts []int64
	slotOf := map[int64]int32{}
	cur := run{slot: -1}
	var lo, hi int64 // bounds of the current bin, in column units: [lo, hi)
	for i, v := range vals {
		if i%rows.ChunkRows == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
		if bm != nil && !rows.Bit(bm, off+i) {
			if cur.slot >= 0 {
				cur.hi = int32(i)
				runs = append(runs, cur)
				cur.slot = -1
			}
			continue
		}
		if cur.slot >= 0 && v >= lo && v < hi {
			continue
		}
		if cur.slot >= 0 {
			cur.hi = int32(i)
			runs = append(runs, cur)
		}
		s, e := p.rule.Bin(p.time.toTime(v))
		var ok1, ok2 bool
		lo, ok1 = p.time.ceil(s)
		hi, ok2 = p.time.ceil(e)
		if !ok1 || !ok2 {
			return nil, nil, fmt.Errorf("window: resample %q by %s: the bin of %s does not fit %s", p.timeName, p.rule, p.time.toTime(v), p.time.typ)
		}
		slot, ok := slotOf[lo]
		if !ok {
			slot = int32(len(starts))
			slotOf[lo] = slot
			starts = append(starts, lo)
		}
		cur = run{slot: slot, lo: int32(i)}
	}
	if cur.slot >= 0 {
		cur.hi = int32(len(vals))
		runs = append(runs, cur)
	}
	return runs, starts, nil
}

// ceil is fromTime rounded up: an integer value v is at or after t
// exactly when v >= ceil(t).
func (c timeCol) ceil(t time.Time) (int64, bool) {
	v, ok := c.fromTime(t)
	if ok && !c.toTime(v).Equal(t) {
		v++
	}
	return v, ok
}

// reduce aggregates runs of inputs (raw columns when states is nil, else
// the state columns of each aggregate, concatenated) into a state batch
// sorted by bin.
func (p *resamplePlan) reduce(ctx context.Context, inputs []arrow.Array, states [][]arrow.Array, runs []run, starts []int64, mem memory.Allocator) (arrow.RecordBatch, error) {
	n := len(starts)
	cols := make([]arrow.Array, 0, p.state.NumFields())
	ok := false
	defer func() {
		if !ok {
			rows.ReleaseAll(cols)
		}
	}()
	// Slots in order of their bins.
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return cmpInt64(starts[a], starts[b]) })
	sorted := make([]int64, n)
	for i, s := range order {
		sorted[i] = starts[s]
	}
	cols = append(cols, p.timeArray(mem, sorted))
	for i, a := range p.aggs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var in []arrow.Array // the columns read: the input, or its state columns
		if states == nil {
			in = []arrow.Array{inputs[i]}
		} else {
			in = states[i]
		}
		out, err := p.reduceOne(ctx, a, p.types[i], in, states != nil, runs, n, order, mem)
		if err != nil {
			return nil, fmt.Errorf("window: %s(%s): %w", a.Func, a.Column, err)
		}
		cols = append(cols, out...)
	}
	rec := array.NewRecordBatch(p.state, cols, int64(n))
	rows.ReleaseAll(cols)
	ok = true
	return rec, nil
}

// reduceOne makes the state columns of one aggregate, slots in order.
func (p *resamplePlan) reduceOne(ctx context.Context, a AggSpec, typ arrow.DataType, in []arrow.Array, merging bool, runs []run, n int, order []int32, mem memory.Allocator) ([]arrow.Array, error) {
	switch a.Func {
	case Count:
		counts := make([]int64, n)
		if merging {
			sumOf(in[0], runs, counts)
		} else {
			countRuns(in[0], runs, counts)
		}
		return []arrow.Array{rows.Int64s(mem, permute(counts, order), nil)}, nil
	case Sum:
		switch st := sumType(classOf(typ)); st.ID() {
		case arrow.INT64:
			s := make([]int64, n)
			sumOf(in[0], runs, s)
			return []arrow.Array{rows.FromSlice(mem, st, permute(s, order), nil)}, nil
		case arrow.UINT64:
			s := make([]uint64, n)
			sumOf(in[0], runs, s)
			return []arrow.Array{rows.FromSlice(mem, st, permute(s, order), nil)}, nil
		default:
			s := make([]float64, n)
			sumOf(in[0], runs, s)
			return []arrow.Array{rows.FromSlice(mem, st, permute(s, order), nil)}, nil
		}
	case Mean:
		sums, counts := make([]float64, n), make([]int64, n)
		sumOf(in[0], runs, sums)
		if merging {
			sumOf(in[1], runs, counts)
		} else {
			countRuns(in[0], runs, counts)
		}
		return []arrow.Array{rows.Float64s(mem, permute(sums, order), nil), rows.Int64s(mem, permute(counts, order), nil)}, nil
	case Std:
		ms := make([]moments, n)
		if merging {
			cnt, mean, m2 := rows.Values[int64](in[0]), rows.Values[float64](in[1]), rows.Values[float64](in[2])
			for _, r := range runs {
				for i := r.lo; i < r.hi; i++ {
					ms[r.slot].combine(moments{n: cnt[i], mean: mean[i], m2: m2[i]})
				}
			}
		} else {
			momentsOf(in[0], runs, ms)
		}
		ms = permute(ms, order)
		cnt, mean, m2 := make([]int64, n), make([]float64, n), make([]float64, n)
		for i, m := range ms {
			cnt[i], mean[i], m2[i] = m.n, m.mean, m.m2
		}
		return []arrow.Array{rows.Int64s(mem, cnt, nil), rows.Float64s(mem, mean, nil), rows.Float64s(mem, m2, nil)}, nil
	}
	// min, max, first, last: the row holding the value, then a gather.
	pick := make([]int32, n)
	for i := range pick {
		pick[i] = -1
	}
	switch a.Func {
	case Min, Max:
		bestOf(in[0], runs, pick, a.Func == Max)
	case First, Last:
		edgeRuns(in[0], runs, pick, a.Func == Last)
	}
	v, err := rows.Take(ctx, mem, in[0], permute(pick, order))
	if err != nil {
		return nil, err
	}
	return []arrow.Array{v}, nil
}

func permute[T any](vals []T, order []int32) []T {
	out := make([]T, len(order))
	for i, s := range order {
		out[i] = vals[s]
	}
	return out
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// timeArray builds the time column from values in column units.
func (p *resamplePlan) timeArray(mem memory.Allocator, vals []int64) arrow.Array {
	if p.time.typ.ID() == arrow.DATE32 {
		v := make([]int32, len(vals))
		for i, x := range vals {
			v[i] = int32(x)
		}
		return rows.FromSlice(mem, p.time.typ, v, nil)
	}
	return rows.FromSlice(mem, p.time.typ, vals, nil)
}

// MergeResample combines partial states made by Resample or MergeResample
// with the same time column, rule and aggregates, in order: the states of
// earlier partitions first.
func MergeResample(ctx context.Context, states []arrow.RecordBatch, timeCol string, rule Rule, aggs []AggSpec, mem memory.Allocator) (arrow.RecordBatch, error) {
	if len(states) == 0 {
		return nil, errors.New("window: MergeResample given no states")
	}
	p, err := planFromState(states[0].Schema(), timeCol, rule, aggs)
	if err != nil {
		return nil, err
	}
	for i, s := range states[1:] {
		if !s.Schema().Equal(states[0].Schema()) {
			return nil, fmt.Errorf("window: MergeResample: state %d has columns %s, state 0 %s: %w", i+1, s.Schema(), states[0].Schema(), ErrBadState)
		}
	}
	// Concatenate each state column, and map every state row to a slot.
	cols := make([]arrow.Array, p.state.NumFields())
	defer rows.ReleaseAll(cols)
	for c := range cols {
		parts := make([]arrow.Array, len(states))
		for i, s := range states {
			parts[i] = s.Column(c)
		}
		a, err := array.Concatenate(parts, mem)
		if err != nil {
			return nil, fmt.Errorf("window: MergeResample: column %q: %w", p.state.Field(c).Name, err)
		}
		cols[c] = a
	}
	times := p.time.values(cols[0])
	slotOf := map[int64]int32{}
	var starts []int64
	runs := make([]run, len(times))
	for i, v := range times {
		slot, ok := slotOf[v]
		if !ok {
			slot = int32(len(starts))
			slotOf[v] = slot
			starts = append(starts, v)
		}
		runs[i] = run{slot: slot, lo: int32(i), hi: int32(i) + 1}
	}
	in := make([][]arrow.Array, len(aggs))
	for i, a := range aggs {
		k := len(a.stateFields(arrow.Null))
		in[i] = cols[p.first[i] : p.first[i]+k]
	}
	return p.reduce(ctx, nil, in, runs, starts, mem)
}

// FillRange widens the bins FinalizeResample produces: bins from the bin
// of From (when not zero) and to the bin of To (when not zero), even when
// no row falls there.
type FillRange struct {
	From, To time.Time
}

// FinalizeResample turns a partial state into the result: one row per
// bin, from the first bin holding rows to the last (widened by fill),
// empty bins included, labelled as the rule says (see Rule). In an empty
// bin count and sum are 0 and the other aggregates null, as in pandas.
func FinalizeResample(ctx context.Context, state arrow.RecordBatch, timeCol string, rule Rule, aggs []AggSpec, fill FillRange, mem memory.Allocator) (arrow.RecordBatch, error) {
	if state == nil {
		return nil, errors.New("window: FinalizeResample given a nil state")
	}
	p, err := planFromState(state.Schema(), timeCol, rule, aggs)
	if err != nil {
		return nil, err
	}
	times := p.time.values(state.Column(0))
	for i := 1; i < len(times); i++ {
		if times[i] <= times[i-1] {
			return nil, fmt.Errorf("window: FinalizeResample: bins of the state are not in order at row %d: %w", i, ErrBadState)
		}
	}
	// Enumerate the bins: the state row of each (-1 when empty) and labels.
	var first, last time.Time
	switch {
	case len(times) > 0:
		first, last = p.time.toTime(times[0]), p.time.toTime(times[len(times)-1])
		if !fill.From.IsZero() && fill.From.Before(first) {
			first = fill.From
		}
		if !fill.To.IsZero() && fill.To.After(last) {
			last = fill.To
		}
	case !fill.From.IsZero() && !fill.To.IsZero() && !fill.To.Before(fill.From):
		first, last = fill.From, fill.To
	default:
		return p.emptyResult(mem), nil
	}
	var idx []int32
	var labels []int64
	k := 0
	lastStart, _ := p.rule.Bin(last)
	for s, e := p.rule.Bin(first); !s.After(lastStart); s, e = p.rule.Bin(e) {
		if len(labels)%rows.ChunkRows == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		sv, ok := p.time.ceil(s)
		lv, ok2 := p.time.fromTime(p.rule.Label(s, e))
		if !ok || !ok2 {
			return nil, fmt.Errorf("window: FinalizeResample: the bin from %s does not fit %s", s, p.time.typ)
		}
		for k < len(times) && times[k] < sv {
			k++ // a state row before the range: cannot happen for states made by Resample
		}
		if k < len(times) && times[k] == sv {
			idx = append(idx, int32(k))
			k++
		} else {
			idx = append(idx, -1)
		}
		labels = append(labels, lv)
	}
	cols := []arrow.Array{p.timeArray(mem, labels)}
	defer func() { rows.ReleaseAll(cols) }()
	for i, a := range aggs {
		sc := state.Columns()[p.first[i]:]
		c, err := finalizeOne(ctx, a, sc, idx, mem)
		if err != nil {
			return nil, fmt.Errorf("window: %s(%s): %w", a.Func, a.Column, err)
		}
		cols = append(cols, c)
	}
	return array.NewRecordBatch(p.out, cols, int64(len(idx))), nil
}

func (p *resamplePlan) emptyResult(mem memory.Allocator) arrow.RecordBatch {
	cols := make([]arrow.Array, p.out.NumFields())
	for i, f := range p.out.Fields() {
		cols[i] = rows.Nulls(mem, f.Type, 0)
	}
	defer rows.ReleaseAll(cols)
	return array.NewRecordBatch(p.out, cols, 0)
}

// finalizeOne makes the result column of one aggregate from its state
// columns sc, for the state rows idx (-1: an empty bin).
func finalizeOne(ctx context.Context, a AggSpec, sc []arrow.Array, idx []int32, mem memory.Allocator) (arrow.Array, error) {
	n := len(idx)
	switch a.Func {
	case Count:
		c := rows.Values[int64](sc[0])
		out := make([]int64, n)
		for j, r := range idx {
			if r >= 0 {
				out[j] = c[r]
			}
		}
		return rows.Int64s(mem, out, nil), nil
	case Sum:
		switch sc[0].DataType().ID() {
		case arrow.INT64:
			return gatherZero(mem, sc[0].DataType(), rows.Values[int64](sc[0]), idx), nil
		case arrow.UINT64:
			return gatherZero(mem, sc[0].DataType(), rows.Values[uint64](sc[0]), idx), nil
		}
		return gatherZero(mem, sc[0].DataType(), rows.Values[float64](sc[0]), idx), nil
	case Mean:
		s, c := rows.Values[float64](sc[0]), rows.Values[int64](sc[1])
		out, valid := make([]float64, n), make([]bool, n)
		for j, r := range idx {
			if r >= 0 && c[r] > 0 {
				out[j], valid[j] = s[r]/float64(c[r]), true
			}
		}
		return rows.Float64s(mem, out, valid), nil
	case Std:
		c, m, m2 := rows.Values[int64](sc[0]), rows.Values[float64](sc[1]), rows.Values[float64](sc[2])
		out, valid := make([]float64, n), make([]bool, n)
		for j, r := range idx {
			if r >= 0 {
				out[j], valid[j] = moments{n: c[r], mean: m[r], m2: m2[r]}.std()
			}
		}
		return rows.Float64s(mem, out, valid), nil
	}
	return rows.Take(ctx, mem, sc[0], idx)
}

func gatherZero[T int64 | uint64 | float64](mem memory.Allocator, typ arrow.DataType, vals []T, idx []int32) arrow.Array {
	out := make([]T, len(idx))
	for j, r := range idx {
		if r >= 0 {
			out[j] = vals[r]
		}
	}
	return rows.FromSlice(mem, typ, out, nil)
}
