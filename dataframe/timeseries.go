package dataframe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/internal/window"
	"github.com/shoal-data/shoal/graph"
)

// Resampler groups the rows of a frame into bins of time; see
// DataFrame.Resample.
type Resampler struct {
	df   DataFrame
	col  string
	rule window.Rule
	fill window.FillRange
	err  error
}

// ResampleOptions tune Resample.
type ResampleOptions struct {
	// On is the time column; default the index (see SetIndex).
	On string
	// Location is the time zone of calendar rules (days, weeks, months,
	// quarters, years); default the column's zone, or UTC.
	Location *time.Location
	// Origin is where bins are counted from; default 1970-01-01 in the
	// zone, which gives pandas' bins whenever the rule divides a day or is
	// a single week, month, quarter or year.
	Origin time.Time
	// From and To widen the result to the bins holding these times, even
	// when no row falls there.
	From, To time.Time
}

// Resample groups rows into bins of time by a rule, as pandas' resample:
// "30s", "15min", "1h", "1D", "W" (weeks ending on Sunday, "W-MON" ...),
// "ME" (calendar months, labelled by their last day), "QE" (quarters),
// "YE" (years), each with an optional multiple ("2h", "3ME"). Calendar
// bins follow the time zone, so a day is 23 or 25 hours long across a
// daylight-saving change. Aggregate with Agg (or Mean, Min, ...): the
// result has one row per bin from the first to the last bin holding rows,
// empty bins included (count and sum 0, other aggregates null), labelled
// as pandas labels them, in one partition.
//
// Each partition is reduced to per-bin states where it is read, and the
// states are merged in a tree: the data is never collected in one place
// and needs no sorting.
func (df DataFrame) Resample(rule string, opts ...ResampleOptions) Resampler {
	var o ResampleOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	r := Resampler{df: df, col: o.On, fill: window.FillRange{From: o.From, To: o.To}}
	if df.err != nil {
		r.err = df.err
		return r
	}
	if r.col == "" {
		r.col = df.Index()
		if r.col == "" {
			r.err = errors.New("Resample: the frame has no index; use SetIndex or ResampleOptions.On")
			return r
		}
	}
	i, err := fieldIndex(df.Schema(), r.col)
	if err != nil {
		r.err = fmt.Errorf("Resample: %w", err)
		return r
	}
	t := df.Schema().Field(i).Type
	if t.ID() != arrow.TIMESTAMP && t.ID() != arrow.DATE32 && t.ID() != arrow.DATE64 {
		r.err = fmt.Errorf("Resample: column %q is %s, not a timestamp or date", r.col, t)
		return r
	}
	if r.rule, err = window.ParseRule(rule); err != nil {
		r.err = fmt.Errorf("Resample: %w", err)
		return r
	}
	if o.Location != nil {
		r.rule = r.rule.In(o.Location)
	}
	if !o.Origin.IsZero() {
		r.rule = r.rule.WithOrigin(o.Origin)
	}
	return r
}

// Ops of resampling and rolling windows.
const (
	OpResampleMerge = "dataframe.resample-merge"
	OpResampleFinal = "dataframe.resample-final"
	OpRollingEdge   = "dataframe.rolling-edge"
	OpRolling       = "dataframe.rolling"
)

type resampleParams struct {
	Time string           `json:"time"`
	Rule window.Rule      `json:"rule"`
	Aggs []window.AggSpec `json:"aggs"`
	Fill window.FillRange `json:"fill,omitzero"`
	Sch  []byte           `json:"schema,omitempty"` // of the result
}

// windowAggs turns aggregations into window aggregates, checking names.
func windowAggs(op string, aggs []Agg, keys ...string) ([]window.AggSpec, error) {
	if len(aggs) == 0 {
		return nil, errors.New("no aggregations given")
	}
	names := map[string]bool{}
	for _, k := range keys {
		names[k] = true
	}
	out := make([]window.AggSpec, len(aggs))
	for i, a := range aggs {
		switch a.fn {
		case "min", "max", "mean", "sum", "count", "first", "last", "std":
		default:
			return nil, fmt.Errorf("%s cannot %s: use min, max, mean, sum, count, first, last or std", op, a.fn)
		}
		if a.fn == "std" && a.ddof != 1 {
			return nil, fmt.Errorf("%s: std with ddof %d; only ddof 1 is supported here", op, a.ddof)
		}
		s := a.spec()
		if names[s.Name] {
			return nil, fmt.Errorf("two output columns are named %q; name one with As, e.g. %s(%q).As(%q)",
				s.Name, a.fn, a.col, a.col+"_"+string(a.fn))
		}
		names[s.Name] = true
		out[i] = window.AggSpec{Column: a.col, Func: window.Func(a.fn), Name: s.Name}
	}
	return out, nil
}

// Agg aggregates each bin: Agg(Min("x"), Max("x").As("x_max")). The
// functions are min, max, mean, sum, count, first, last and std.
func (r Resampler) Agg(aggs ...Agg) DataFrame {
	if r.err != nil {
		return errFrame(r.err)
	}
	specs, err := windowAggs("Resample", aggs, r.col)
	if err != nil {
		return errFrame(fmt.Errorf("Resample: %w", err))
	}
	schema, err := window.ResampleSchema(r.df.Schema(), r.col, r.rule, specs)
	if err != nil {
		return errFrame(fmt.Errorf("Resample: %w", err))
	}
	sch, err := encodeSchema(schema)
	if err != nil {
		return errFrame(err)
	}
	p := resampleParams{Time: r.col, Rule: r.rule, Aggs: specs, Fill: r.fill, Sch: sch}
	out := custom(schema, &customPlan{
		what:   fmt.Sprintf("Resample %s by %s", r.col, r.rule),
		params: p,
		count:  func([]int) int { return 1 },
		needs: func(int, map[string]bool) []string {
			cols := []string{r.col}
			for _, s := range specs {
				cols = append(cols, s.Column)
			}
			return cols
		},
		lowerFrom: func(l *lowerer, token string, inputs []*node) ([]graph.Key, error) {
			b, _ := json.Marshal(p)
			states, err := l.pipeline(inputs[0], sinkSpec{Kind: "fn", Fn: "resample", Params: b}, "resample-partial")
			if err != nil {
				return nil, err
			}
			level, err := l.tree("resample-merge", token, OpResampleMerge, p, states, 8)
			if err != nil {
				return nil, err
			}
			k, err := l.task("resample-final", token, OpResampleFinal, p, level)
			return []graph.Key{k}, err
		},
	}, r.df.n)
	out.n.index = r.col
	return out
}

func (r Resampler) each(fn func(string) Agg, cols []string) DataFrame {
	if r.err != nil {
		return errFrame(r.err)
	}
	if len(cols) == 0 {
		for _, f := range r.df.Schema().Fields() {
			if f.Name != r.col && isNumeric(f.Type) {
				cols = append(cols, f.Name)
			}
		}
	}
	aggs := make([]Agg, len(cols))
	for i, c := range cols {
		aggs[i] = fn(c)
	}
	return r.Agg(aggs...)
}

// Mean of each bin, of the given columns (default every numeric column).
func (r Resampler) Mean(cols ...string) DataFrame { return r.each(Mean, cols) }

// Sum of each bin.
func (r Resampler) Sum(cols ...string) DataFrame { return r.each(Sum, cols) }

// Min of each bin.
func (r Resampler) Min(cols ...string) DataFrame { return r.each(Min, cols) }

// Max of each bin.
func (r Resampler) Max(cols ...string) DataFrame { return r.each(Max, cols) }

// Count of non-null values in each bin.
func (r Resampler) Count(cols ...string) DataFrame { return r.each(Count, cols) }

// First non-null value of each bin.
func (r Resampler) First(cols ...string) DataFrame { return r.each(First, cols) }

// Last non-null value of each bin.
func (r Resampler) Last(cols ...string) DataFrame { return r.each(Last, cols) }

// Std of each bin (one degree of freedom).
func (r Resampler) Std(cols ...string) DataFrame { return r.each(Std, cols) }

func sinkResample(ctx context.Context, rec arrow.RecordBatch, params []byte, mem memory.Allocator) (any, error) {
	defer rec.Release()
	var p resampleParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	return window.Resample(ctx, rec, p.Time, p.Rule, p.Aggs, mem)
}

func runResampleMerge(ctx context.Context, in graph.OpInput) (any, error) {
	var p resampleParams
	if err := json.Unmarshal(in.Params, &p); err != nil {
		return nil, err
	}
	recs, err := recordInputs(in)
	if err != nil {
		return nil, err
	}
	return window.MergeResample(ctx, recs, p.Time, p.Rule, p.Aggs, allocator)
}

func runResampleFinal(ctx context.Context, in graph.OpInput) (any, error) {
	var p resampleParams
	if err := json.Unmarshal(in.Params, &p); err != nil {
		return nil, err
	}
	recs, err := recordInputs(in)
	if err != nil {
		return nil, err
	}
	state := recs[0]
	if len(recs) > 1 {
		if state, err = window.MergeResample(ctx, recs, p.Time, p.Rule, p.Aggs, allocator); err != nil {
			return nil, err
		}
		defer state.Release()
	}
	return window.FinalizeResample(ctx, state, p.Time, p.Rule, p.Aggs, p.Fill, allocator)
}

// Roller computes rolling-window aggregates; see DataFrame.Rolling.
type Roller struct {
	df   DataFrame
	spec window.RollingSpec
	err  error
}

// RollingOptions tune Rolling.
type RollingOptions struct {
	// On is the time column of a window given as a time span; default the
	// index.
	On string
	// MinPeriods is the number of non-null values a window needs for a
	// result; fewer give null. Default: the number of rows of a window of
	// rows, 1 for a span.
	MinPeriods int
}

// Rolling computes aggregates over a sliding window, as pandas'
// rolling(window).agg(...): window is a number of rows (an int: each row's
// window is that row and the window-1 rows before it) or a time span (a
// time.Duration: the rows whose time is after the row's time minus the
// span, up to the row; the time column must be the index or sorted, see
// RollingOptions.On). The result has a row per input row: the time column
// when there is one, then one column per aggregate.
//
// Windows reach back across partitions: each partition is computed with
// the last rows of the partitions before it, never by collecting
// everything.
func (df DataFrame) Rolling(win any, opts ...RollingOptions) Roller {
	var o RollingOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	r := Roller{df: df, err: df.err}
	if r.err != nil {
		return r
	}
	r.spec.Window.MinPeriods = o.MinPeriods
	switch w := win.(type) {
	case int:
		if w < 1 {
			r.err = fmt.Errorf("Rolling: a window of %d rows", w)
		}
		r.spec.Window.Rows = w
		r.spec.Time = o.On
		if r.spec.Time == "" {
			r.spec.Time = df.Index()
		}
	case time.Duration:
		if w <= 0 {
			r.err = fmt.Errorf("Rolling: a window of %v", w)
		}
		r.spec.Window.Span = w
		r.spec.Time = o.On
		if r.spec.Time == "" {
			if r.spec.Time = df.Index(); r.spec.Time == "" {
				r.err = errors.New("Rolling: a window of time needs a time column: use SetIndex or RollingOptions.On")
			}
		}
	default:
		r.err = fmt.Errorf("Rolling: window is a %T; give an int (rows) or a time.Duration", win)
	}
	if r.err == nil && r.spec.Time != "" {
		if _, err := fieldIndex(df.Schema(), r.spec.Time); err != nil {
			r.err = fmt.Errorf("Rolling: %w", err)
		}
	}
	return r
}

type rollingParams struct {
	Spec window.RollingSpec `json:"spec"`
	In   []byte             `json:"in"`  // schema of the input
	Out  []byte             `json:"out"` // schema of the result
}

// Agg computes aggregates of each window: mean, sum, min, max, std and
// count.
func (r Roller) Agg(aggs ...Agg) DataFrame {
	if r.err != nil {
		return errFrame(r.err)
	}
	specs, err := windowAggs("Rolling", aggs, r.spec.Time)
	if err != nil {
		return errFrame(fmt.Errorf("Rolling: %w", err))
	}
	for _, s := range specs {
		if s.Func == window.First || s.Func == window.Last {
			return errFrame(fmt.Errorf("Rolling: %s is not a rolling aggregate; use mean, sum, min, max, std or count", s.Func))
		}
	}
	spec := r.spec
	spec.Aggs = specs
	schema, err := window.RollingSchema(r.df.Schema(), spec)
	if err != nil {
		return errFrame(fmt.Errorf("Rolling: %w", err))
	}
	in, err := encodeSchema(r.df.Schema())
	if err != nil {
		return errFrame(err)
	}
	out, err := encodeSchema(schema)
	if err != nil {
		return errFrame(err)
	}
	p := rollingParams{Spec: spec, In: in, Out: out}
	res := custom(schema, &customPlan{
		what:   fmt.Sprintf("Rolling %s (with the edge rows of the previous partitions)", spec.Window),
		params: p,
		count:  func(ins []int) int { return ins[0] },
		lower: func(l *lowerer, token string, ins [][]graph.Key) ([]graph.Key, error) {
			parts := ins[0]
			out := make([]graph.Key, len(parts))
			var edge graph.Key
			for i, k := range parts {
				deps := []graph.Key{k}
				if edge != "" {
					deps = append(deps, edge)
				}
				var err error
				if out[i], err = l.task("rolling", token, OpRolling, p, deps, i); err != nil {
					return nil, err
				}
				if i+1 < len(parts) {
					if edge, err = l.task("rolling-edge", token, OpRollingEdge, p, deps, i); err != nil {
						return nil, err
					}
				}
			}
			return out, nil
		},
	}, r.df.n)
	if spec.Time != "" && spec.Time == r.df.n.index {
		res.n.index, res.n.divisions = r.df.n.index, r.df.n.divisions
	}
	return res
}

func (r Roller) each(fn func(string) Agg, cols []string) DataFrame {
	if r.err != nil {
		return errFrame(r.err)
	}
	if len(cols) == 0 {
		for _, f := range r.df.Schema().Fields() {
			if f.Name != r.spec.Time && isNumeric(f.Type) {
				cols = append(cols, f.Name)
			}
		}
	}
	aggs := make([]Agg, len(cols))
	for i, c := range cols {
		aggs[i] = fn(c)
	}
	return r.Agg(aggs...)
}

// Mean of each window, of the given columns (default every numeric column).
func (r Roller) Mean(cols ...string) DataFrame { return r.each(Mean, cols) }

// Sum of each window.
func (r Roller) Sum(cols ...string) DataFrame { return r.each(Sum, cols) }

// Min of each window.
func (r Roller) Min(cols ...string) DataFrame { return r.each(Min, cols) }

// Max of each window.
func (r Roller) Max(cols ...string) DataFrame { return r.each(Max, cols) }

// Std of each window (one degree of freedom).
func (r Roller) Std(cols ...string) DataFrame { return r.each(Std, cols) }

// Count of non-null values in each window.
func (r Roller) Count(cols ...string) DataFrame { return r.each(Count, cols) }

// rollingInputs returns a task's partition and the edge rows before it.
func rollingInputs(in graph.OpInput) (rollingParams, arrow.RecordBatch, arrow.RecordBatch, func(), error) {
	var p rollingParams
	if err := json.Unmarshal(in.Params, &p); err != nil {
		return p, nil, nil, nil, err
	}
	schema, err := decodeSchema(p.In)
	if err != nil {
		return p, nil, nil, nil, err
	}
	rec, err := concatInputs(in.Inputs[:1], schema, allocator)
	if err != nil {
		return p, nil, nil, nil, err
	}
	var before arrow.RecordBatch
	if len(in.Inputs) > 1 {
		b, ok := in.Inputs[1].(arrow.RecordBatch)
		if !ok {
			rec.Release()
			return p, nil, nil, nil, fmt.Errorf("rolling: edge rows are a %T", in.Inputs[1])
		}
		before = b
	}
	return p, rec, before, rec.Release, nil
}

func runRolling(ctx context.Context, in graph.OpInput) (any, error) {
	p, rec, before, done, err := rollingInputs(in)
	if err != nil {
		return nil, err
	}
	defer done()
	return window.Rolling(ctx, rec, p.Spec, before, allocator)
}

func runRollingEdge(ctx context.Context, in graph.OpInput) (any, error) {
	p, rec, before, done, err := rollingInputs(in)
	if err != nil {
		return nil, err
	}
	defer done()
	return window.EdgeRows(ctx, before, rec, p.Spec, allocator)
}

func init() {
	sinkFuncs["resample"] = sinkResample
}
