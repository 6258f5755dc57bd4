package window

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/internal/distinct/rows"
)

// Window is the extent of a rolling window, as pandas' rolling(window):
// a number of rows (Rows), or a span of time (Span) over a sorted time
// column.
type Window struct {
	// Rows: each row's window is that row and the Rows-1 rows before it.
	Rows int `json:"rows,omitempty"`
	// Span: each row's window is the rows whose time is after the row's
	// time minus Span, up to and including the row (pandas'
	// closed='right').
	Span time.Duration `json:"span,omitempty"`
	// MinPeriods is the number of non-null values a window needs for a
	// result; fewer give null. 0 means pandas' default: Rows for a window
	// of rows, 1 for a span.
	MinPeriods int `json:"min_periods,omitempty"`
}

func (w Window) minPeriods() int {
	switch {
	case w.MinPeriods > 0:
		return w.MinPeriods
	case w.Rows > 0:
		return w.Rows
	}
	return 1
}

func (w Window) String() string {
	if w.Rows > 0 {
		return fmt.Sprintf("%d rows", w.Rows)
	}
	return w.Span.String()
}

// RollingSpec describes rolling aggregates.
type RollingSpec struct {
	// Time is the time column, sorted ascending: required for a span,
	// optional for rows. When set, it is the first output column.
	Time   string    `json:"time,omitempty"`
	Window Window    `json:"window"`
	Aggs   []AggSpec `json:"aggs"` // of mean, sum, min, max, std, count
}

type rollingPlan struct {
	spec    RollingSpec
	time    timeCol
	timeIdx int   // in the input; -1 when no time column
	needed  []int // input columns that edges carry: the time column, then the aggregates' columns
	aggCols []int // input column of each aggregate
	edge    *arrow.Schema
	out     *arrow.Schema
}

func newRollingPlan(input *arrow.Schema, spec RollingSpec) (*rollingPlan, error) {
	w := spec.Window
	switch {
	case (w.Rows > 0) == (w.Span > 0):
		return nil, fmt.Errorf("window: rolling window %+v: set exactly one of Rows and Span, positive: %w", w, ErrBadSpec)
	case w.Rows < 0 || w.Span < 0 || w.MinPeriods < 0:
		return nil, fmt.Errorf("window: rolling window %+v: negative: %w", w, ErrBadSpec)
	case w.Rows > 0 && w.MinPeriods > w.Rows:
		return nil, fmt.Errorf("window: rolling window of %d rows: min periods %d is more than the window: %w", w.Rows, w.MinPeriods, ErrBadSpec)
	case w.Span > 0 && spec.Time == "":
		return nil, fmt.Errorf("window: rolling window of %s needs a time column: %w", w.Span, ErrBadSpec)
	}
	p := &rollingPlan{spec: spec, timeIdx: -1}
	var outFields []arrow.Field
	if spec.Time != "" {
		ti, err := columnIndex(input, spec.Time, "rolling time column")
		if err != nil {
			return nil, err
		}
		if p.time, err = newTimeCol(spec.Time, input.Field(ti).Type); err != nil {
			return nil, err
		}
		p.timeIdx = ti
		p.needed = append(p.needed, ti)
		outFields = append(outFields, input.Field(ti))
	}
	names := map[string]bool{spec.Time: true}
	for _, a := range spec.Aggs {
		what := fmt.Sprintf("rolling %s(%s)", a.Func, a.Column)
		c, err := columnIndex(input, a.Column, what)
		if err != nil {
			return nil, err
		}
		switch a.Func {
		case Mean, Sum, Min, Max, Std, Count:
		default:
			return nil, fmt.Errorf("window: %s: unknown function %q (mean, sum, min, max, std, count): %w", what, a.Func, ErrBadSpec)
		}
		t := input.Field(c).Type
		if c := classOf(t); a.Func != Count && c != classSigned && c != classUnsigned && c != classFloat {
			return nil, fmt.Errorf("window: %s: column %q has type %s, not a number: %w", what, a.Column, t, ErrBadColumn)
		}
		if names[a.name()] {
			return nil, fmt.Errorf("window: %s: output name %q is used twice (set AggSpec.Name): %w", what, a.name(), ErrBadSpec)
		}
		names[a.name()] = true
		p.aggCols = append(p.aggCols, c)
		if !slices.Contains(p.needed, c) {
			p.needed = append(p.needed, c)
		}
		outFields = append(outFields, arrow.Field{Name: a.name(), Type: tFloat64, Nullable: true})
	}
	edgeFields := make([]arrow.Field, len(p.needed))
	for i, c := range p.needed {
		edgeFields[i] = input.Field(c)
	}
	p.edge = arrow.NewSchema(edgeFields, nil)
	p.out = arrow.NewSchema(outFields, nil)
	return p, nil
}

// RollingSchema returns the schema of Rolling's result: the time column
// when spec names one, then one float64 column per aggregate (pandas'
// rolling results are floats).
func RollingSchema(input *arrow.Schema, spec RollingSpec) (*arrow.Schema, error) {
	p, err := newRollingPlan(input, spec)
	if err != nil {
		return nil, err
	}
	return p.out, nil
}

// Rolling computes rolling aggregates over the rows of rec, as pandas'
// rolling(window, min_periods).agg(...) on the whole series would: before
// holds the rows of the previous partitions that windows of rec's rows
// reach (EdgeRows of the previous partition; nil or empty for the first).
// The result has one row per row of rec.
//
// Nulls are skipped (they count neither as values nor for MinPeriods); NaN
// is a value (see Func), and so is infinity. std has one degree of
// freedom, and is 0 for a window of equal values. Sums and means slide
// with compensated (Neumaier) sums and std with Welford's updates, so a
// result may differ from a computation that starts elsewhere in the data
// in its last bits.
func Rolling(ctx context.Context, rec arrow.RecordBatch, spec RollingSpec, before arrow.RecordBatch, mem memory.Allocator) (arrow.RecordBatch, error) {
	if rec == nil {
		return nil, errors.New("window: Rolling given a nil record batch")
	}
	p, err := newRollingPlan(rec.Schema(), spec)
	if err != nil {
		return nil, err
	}
	bcols, err := p.beforeColumns(before)
	if err != nil {
		return nil, err
	}
	nb, n := 0, int(rec.NumRows())
	if bcols != nil {
		nb = bcols[0].Len()
	}
	starts, err := p.starts(ctx, bcols, rec, nb, n)
	if err != nil {
		return nil, err
	}
	cols := make([]arrow.Array, 0, len(p.out.Fields()))
	defer func() { rows.ReleaseAll(cols) }()
	if p.timeIdx >= 0 {
		tc := rec.Column(p.timeIdx)
		tc.Retain()
		cols = append(cols, tc)
	}
	minp := p.spec.Window.minPeriods()
	type series struct {
		v     []float64
		valid []bool
	}
	cache := map[int]series{}
	for i, a := range p.spec.Aggs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := p.aggCols[i]
		s, ok := cache[c]
		if !ok {
			var bc arrow.Array
			if bcols != nil {
				bc = bcols[slices.Index(p.needed, c)]
			}
			s.v, s.valid = floats(bc, rec.Column(c))
			cache[c] = s
		}
		buf, out := rows.NewBuffer[float64](mem, n)
		clear(out)
		valid := make([]bool, n)
		switch a.Func {
		case Sum, Mean:
			rollSum(s.v, s.valid, starts, nb, minp, a.Func == Mean, out, valid)
		case Std:
			rollStd(s.v, s.valid, starts, nb, minp, out, valid)
		case Min, Max:
			rollMinMax(s.v, s.valid, starts, nb, minp, a.Func == Max, out, valid)
		case Count:
			rollCount(s.valid, starts, nb, minp, out, valid)
		}
		vbuf, nulls := rows.ValidityFrom(mem, valid)
		cols = append(cols, rows.MakeArray(tFloat64, n, []*memory.Buffer{vbuf, buf}, nulls))
	}
	return array.NewRecordBatch(p.out, cols, int64(n)), nil
}

// beforeColumns returns the needed columns of before, checked, or nil.
func (p *rollingPlan) beforeColumns(before arrow.RecordBatch) ([]arrow.Array, error) {
	if before == nil || before.NumRows() == 0 || len(p.needed) == 0 {
		return nil, nil
	}
	cols := make([]arrow.Array, len(p.needed))
	for i, f := range p.edge.Fields() {
		is := before.Schema().FieldIndices(f.Name)
		if len(is) != 1 || !arrow.TypeEqual(before.Schema().Field(is[0]).Type, f.Type) {
			return nil, fmt.Errorf("window: rolling: the edge rows before the batch lack column %q of type %s (they have %s): %w",
				f.Name, f.Type, before.Schema(), ErrBadColumn)
		}
		cols[i] = before.Column(is[0])
	}
	return cols, nil
}

// starts returns, for each row of rec, the first row of its window, as an
// index into the rows of before followed by those of rec.
func (p *rollingPlan) starts(ctx context.Context, bcols []arrow.Array, rec arrow.RecordBatch, nb, n int) ([]int, error) {
	starts := make([]int, n)
	if w := p.spec.Window.Rows; w > 0 {
		for k := range starts {
			starts[k] = max(0, nb+k-w+1)
		}
		return starts, nil
	}
	times := p.times(bcols, rec, nb)
	if err := p.checkTimes(ctx, bcols, rec, times, nb); err != nil {
		return nil, err
	}
	span := p.time.spanUnits(p.spec.Window.Span)
	j := 0
	for k := range starts {
		i := nb + k
		for times[i]-times[j] >= span {
			j++
		}
		starts[k] = j
	}
	return starts, nil
}

// times returns the times of before's rows then rec's.
func (p *rollingPlan) times(bcols []arrow.Array, rec arrow.RecordBatch, nb int) []int64 {
	cur := p.time.values(rec.Column(p.timeIdx))
	if nb == 0 {
		return cur
	}
	return append(slices.Clip(p.time.values(bcols[0])), cur...)
}

// checkTimes reports null or decreasing times.
func (p *rollingPlan) checkTimes(ctx context.Context, bcols []arrow.Array, rec arrow.RecordBatch, times []int64, nb int) error {
	where := func(i int) string {
		if i < nb {
			return fmt.Sprintf("edge row %d before the batch", i)
		}
		return fmt.Sprintf("row %d", i-nb)
	}
	if nb > 0 && bcols[0].NullN() > 0 {
		return fmt.Errorf("window: rolling over %s: the edge rows hold null times: %w", p.spec.Time, ErrUnsorted)
	}
	if c := rec.Column(p.timeIdx); c.NullN() > 0 {
		bm, off := rows.Validity(c)
		for i := range c.Len() {
			if !rows.Bit(bm, off+i) {
				return fmt.Errorf("window: rolling over %s: %s has a null time; a rolling window needs times everywhere: %w",
					p.spec.Time, where(nb+i), ErrUnsorted)
			}
		}
	}
	for i := 1; i < len(times); i++ {
		if times[i] < times[i-1] {
			return fmt.Errorf("window: rolling over %s: times must increase, but %s (%s) comes after %s (%s): %w",
				p.spec.Time, where(i), p.time.toTime(times[i]), where(i-1), p.time.toTime(times[i-1]), ErrUnsorted)
		}
	}
	return ctx.Err()
}

// floats reads a numeric column (before's part, possibly nil, then rec's)
// as float64s and their validity (nil when all valid).
func floats(parts ...arrow.Array) ([]float64, []bool) {
	if len(parts) == 2 && parts[0] == nil && parts[1].DataType().ID() == arrow.FLOAT64 && parts[1].NullN() == 0 {
		return rows.Values[float64](parts[1]), nil // no copy
	}
	n, nulls := 0, 0
	for _, a := range parts {
		if a != nil {
			n += a.Len()
			nulls += a.NullN()
		}
	}
	v := make([]float64, 0, n)
	var valid []bool
	if nulls > 0 {
		valid = make([]bool, 0, n)
	}
	for _, a := range parts {
		if a == nil {
			continue
		}
		switch a.DataType().ID() {
		case arrow.INT8:
			v = appendFloats(v, rows.Values[int8](a))
		case arrow.UINT8:
			v = appendFloats(v, rows.Values[uint8](a))
		case arrow.INT16:
			v = appendFloats(v, rows.Values[int16](a))
		case arrow.UINT16:
			v = appendFloats(v, rows.Values[uint16](a))
		case arrow.INT32:
			v = appendFloats(v, rows.Values[int32](a))
		case arrow.UINT32:
			v = appendFloats(v, rows.Values[uint32](a))
		case arrow.INT64:
			v = appendFloats(v, rows.Values[int64](a))
		case arrow.UINT64:
			v = appendFloats(v, rows.Values[uint64](a))
		case arrow.FLOAT32:
			v = appendFloats(v, rows.Values[float32](a))
		case arrow.FLOAT64:
			v = append(v, rows.Values[float64](a)...)
		default: // count of another type: only validity matters
			v = append(v, make([]float64, a.Len())...)
		}
		if valid != nil {
			bm, off := rows.Validity(a)
			for i := range a.Len() {
				valid = append(valid, bm == nil || rows.Bit(bm, off+i))
			}
		}
	}
	return v, valid
}

func appendFloats[T rows.Number](dst []float64, src []T) []float64 {
	for _, x := range src {
		dst = append(dst, float64(x))
	}
	return dst
}

// nonFinite counts the NaNs and infinities of a window.
type nonFinite struct{ nan, pos, neg int }

func (c *nonFinite) add(x float64, d int) bool {
	switch {
	case x != x:
		c.nan += d
	case math.IsInf(x, 1):
		c.pos += d
	case math.IsInf(x, -1):
		c.neg += d
	default:
		return false
	}
	return true
}

func (c nonFinite) any() bool { return c.nan+c.pos+c.neg > 0 }

// sumResult is the sum of a window given its finite sum.
func (c nonFinite) sumResult(s float64) float64 {
	switch {
	case c.nan > 0 || (c.pos > 0 && c.neg > 0):
		return math.NaN()
	case c.pos > 0:
		return math.Inf(1)
	case c.neg > 0:
		return math.Inf(-1)
	}
	return s
}

// The kernels slide a window over rows: for output row k (row first+k of
// the values, before's rows first), the rows entering the window are
// added, those leaving it removed, then the result written to out[k]
// (ok[k] false: null).

func rollSum(v []float64, valid []bool, starts []int, first, minp int, mean bool, out []float64, ok []bool) {
	if len(starts) == 0 {
		return
	}
	var s, comp float64 // Neumaier: the sum is s + comp
	var nf nonFinite
	nobs := 0
	lo, hi := starts[0], starts[0]
	for k, st := range starts {
		for ; hi <= first+k; hi++ {
			if valid != nil && !valid[hi] {
				continue
			}
			nobs++
			x := v[hi]
			if x-x != 0 { // NaN or infinite
				nf.add(x, 1)
				continue
			}
			t := s + x
			if math.Abs(s) >= math.Abs(x) {
				comp += (s - t) + x
			} else {
				comp += (x - t) + s
			}
			s = t
		}
		for ; lo < st; lo++ {
			if valid != nil && !valid[lo] {
				continue
			}
			nobs--
			x := -v[lo]
			if x-x != 0 {
				nf.add(-x, -1)
			} else {
				t := s + x
				if math.Abs(s) >= math.Abs(x) {
					comp += (s - t) + x
				} else {
					comp += (x - t) + s
				}
				s = t
			}
			if nobs == 0 {
				s, comp = 0, 0
			}
		}
		if nobs < minp || (mean && nobs == 0) {
			continue
		}
		r := s + comp
		if nf.any() {
			r = nf.sumResult(r)
		}
		if mean {
			r /= float64(nobs)
		}
		out[k], ok[k] = r, true
	}
}

func rollStd(v []float64, valid []bool, starts []int, first, minp int, out []float64, ok []bool) {
	if len(starts) == 0 {
		return
	}
	var mean, ssq float64
	var nf nonFinite
	nobs, finite := 0, 0
	same, last := 0, math.NaN() // run of equal values ending with the newest
	lo, hi := starts[0], starts[0]
	for k, st := range starts {
		for ; hi <= first+k; hi++ {
			if valid != nil && !valid[hi] {
				continue
			}
			x := v[hi]
			nobs++
			if x == last {
				same++
			} else {
				same, last = 1, x
			}
			if x-x != 0 {
				nf.add(x, 1)
				continue
			}
			finite++
			d := x - mean
			mean += d / float64(finite)
			ssq += float64(finite-1) * d * d / float64(finite)
		}
		for ; lo < st; lo++ {
			if valid != nil && !valid[lo] {
				continue
			}
			x := v[lo]
			nobs--
			if x-x != 0 {
				nf.add(x, -1)
				continue
			}
			finite--
			if finite == 0 {
				mean, ssq = 0, 0
				continue
			}
			d := x - mean
			mean -= d / float64(finite)
			ssq -= float64(finite+1) * d * d / float64(finite)
		}
		if nobs < minp || nobs < 2 {
			continue
		}
		switch {
		case nf.any():
			out[k] = math.NaN()
		case same >= nobs:
			out[k] = 0
		default:
			out[k] = math.Sqrt(max(ssq, 0) / float64(nobs-1))
		}
		ok[k] = true
	}
}

// rollMinMax keeps a deque of the rows that can still be the window's
// minimum (maximum): increasing (decreasing) values, oldest first.
func rollMinMax(v []float64, valid []bool, starts []int, first, minp int, largest bool, out []float64, ok []bool) {
	if len(starts) == 0 {
		return
	}
	dq := make([]int, 0, 64)
	head := 0
	nobs, nans := 0, 0
	lo, hi := starts[0], starts[0]
	for k, st := range starts {
		for ; hi <= first+k; hi++ {
			if valid != nil && !valid[hi] {
				continue
			}
			nobs++
			x := v[hi]
			if x != x {
				nans++
				continue
			}
			if largest {
				for len(dq) > head && v[dq[len(dq)-1]] <= x {
					dq = dq[:len(dq)-1]
				}
			} else {
				for len(dq) > head && v[dq[len(dq)-1]] >= x {
					dq = dq[:len(dq)-1]
				}
			}
			if head > 0 && head == len(dq) {
				dq, head = dq[:0], 0
			}
			dq = append(dq, hi)
		}
		for ; lo < st; lo++ {
			if valid != nil && !valid[lo] {
				continue
			}
			nobs--
			if v[lo] != v[lo] {
				nans--
				continue
			}
			if head < len(dq) && dq[head] == lo {
				head++
			}
		}
		if nobs < minp || nobs == 0 {
			continue
		}
		switch {
		case head < len(dq):
			out[k] = v[dq[head]]
		case nans > 0:
			out[k] = math.NaN()
		default:
			continue
		}
		ok[k] = true
	}
}

func rollCount(valid []bool, starts []int, first, minp int, out []float64, ok []bool) {
	if len(starts) == 0 {
		return
	}
	nobs := 0
	lo, hi := starts[0], starts[0]
	for k, st := range starts {
		for ; hi <= first+k; hi++ {
			if valid == nil || valid[hi] {
				nobs++
			}
		}
		for ; lo < st; lo++ {
			if valid == nil || valid[lo] {
				nobs--
			}
		}
		if nobs >= minp {
			out[k], ok[k] = float64(nobs), true
		}
	}
}

// EdgeRows returns the rows that the windows of the next partition reach
// back to, from before (the edge rows this partition was given, nil for
// the first) followed by rec: the last Rows-1 rows, or the rows whose time
// is within Span of the last time. Give the result to Rolling and EdgeRows
// of the next partition: edges chain, so a window may reach back over
// several short or empty partitions. Only the columns Rolling reads are
// kept.
func EdgeRows(ctx context.Context, before, rec arrow.RecordBatch, spec RollingSpec, mem memory.Allocator) (arrow.RecordBatch, error) {
	if rec == nil {
		return nil, errors.New("window: EdgeRows given a nil record batch")
	}
	p, err := newRollingPlan(rec.Schema(), spec)
	if err != nil {
		return nil, err
	}
	bcols, err := p.beforeColumns(before)
	if err != nil {
		return nil, err
	}
	nb, n := 0, int(rec.NumRows())
	if bcols != nil {
		nb = bcols[0].Len()
	}
	total := nb + n
	cut := 0 // first row kept, in before's rows then rec's
	if w := spec.Window.Rows; w > 0 {
		cut = max(0, total-(w-1))
	} else if total > 0 {
		times := p.times(bcols, rec, nb)
		if err := p.checkTimes(ctx, bcols, rec, times, nb); err != nil {
			return nil, err
		}
		span := p.time.spanUnits(spec.Window.Span)
		last := times[total-1]
		cut = total
		for cut > 0 && last-times[cut-1] < span {
			cut--
		}
	}
	cols := make([]arrow.Array, len(p.needed))
	defer rows.ReleaseAll(cols)
	for i, c := range p.needed {
		var parts []arrow.Array
		if cut < nb {
			parts = append(parts, array.NewSlice(bcols[i], int64(cut), int64(nb)))
		}
		parts = append(parts, array.NewSlice(rec.Column(c), int64(max(cut-nb, 0)), int64(n)))
		a, err := array.Concatenate(parts, mem)
		rows.ReleaseAll(parts)
		if err != nil {
			return nil, fmt.Errorf("window: edge rows of column %q: %w", p.edge.Field(i).Name, err)
		}
		cols[i] = a
	}
	return array.NewRecordBatch(p.edge, cols, int64(total-cut)), nil
}
