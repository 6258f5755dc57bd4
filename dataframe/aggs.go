package dataframe

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/shoal-data/shoal/dataframe/internal/agg"
	"github.com/shoal-data/shoal/graph"
)

// Agg is one aggregation of a column: Sum("v1"), Mean("v3").As("avg").
type Agg struct {
	fn   agg.Func
	col  string
	name string
	ddof int
}

// Sum adds up the non-null values of a column (0 for none).
func Sum(col string) Agg { return Agg{fn: agg.Func("sum"), col: col} }

// Mean averages the non-null values.
func Mean(col string) Agg { return Agg{fn: agg.Func("mean"), col: col} }

// Min is the smallest non-null value.
func Min(col string) Agg { return Agg{fn: agg.Func("min"), col: col} }

// Max is the largest non-null value.
func Max(col string) Agg { return Agg{fn: agg.Func("max"), col: col} }

// Count counts the non-null values.
func Count(col string) Agg { return Agg{fn: agg.Func("count"), col: col} }

// Size counts rows, nulls included.
func Size() Agg { return Agg{fn: agg.Func("size"), name: "size"} }

// Std is the standard deviation with ddof 1 (see DDOF).
func Std(col string) Agg { return Agg{fn: agg.Func("std"), col: col, ddof: 1} }

// Var is the variance with ddof 1 (see DDOF).
func Var(col string) Agg { return Agg{fn: agg.Func("var"), col: col, ddof: 1} }

// First is the first non-null value, in row order.
func First(col string) Agg { return Agg{fn: agg.Func("first"), col: col} }

// Last is the last non-null value, in row order.
func Last(col string) Agg { return Agg{fn: agg.Func("last"), col: col} }

// NUnique counts the distinct non-null values, exactly.
func NUnique(col string) Agg { return Agg{fn: agg.Func("nunique"), col: col} }

// Any is true when some non-null value of a boolean column is true.
func Any(col string) Agg { return Agg{fn: agg.Func("any"), col: col} }

// All is true when every non-null value of a boolean column is true.
func All(col string) Agg { return Agg{fn: agg.Func("all"), col: col} }

// As names the output column (by default the input column's name, or
// "size").
func (a Agg) As(name string) Agg { a.name = name; return a }

// DDOF sets the delta degrees of freedom of Std and Var: the divisor is
// count - ddof.
func (a Agg) DDOF(d int) Agg { a.ddof = d; return a }

func (a Agg) spec() agg.Spec {
	name := a.name
	if name == "" {
		name = a.col
	}
	return agg.Spec{Func: a.fn, Column: a.col, Name: name, DDOF: a.ddof}
}

// aggregate adds an aggregation node.
func (df DataFrame) aggregate(op string, keys []string, aggs []Agg, opts agg.Options, splitOut int) DataFrame {
	if df.err != nil {
		return df
	}
	if len(aggs) == 0 {
		return df.fail(op, fmt.Errorf("no aggregations given"))
	}
	specs := make([]agg.Spec, len(aggs))
	names := map[string]bool{}
	for _, k := range keys {
		names[k] = true
	}
	for i, a := range aggs {
		specs[i] = a.spec()
		if names[specs[i].Name] {
			return df.fail(op, fmt.Errorf("two output columns are named %q; name one with As, e.g. %s(%q).As(%q)",
				specs[i].Name, a.fn, a.col, a.col+"_"+string(a.fn)))
		}
		names[specs[i].Name] = true
	}
	schema, err := agg.ResultSchema(df.Schema(), keys, specs)
	if err != nil {
		return df.fail(op, err)
	}
	return df.derive(&node{kind: kindAgg, schema: schema, nparts: max(splitOut, 1),
		agg: &aggPlan{keys: keys, specs: specs, opts: opts, splitOut: splitOut, every: 8}})
}

func aggOptions() agg.Options { return agg.Options{} }

// Agg reduces the whole frame to one row: df.Agg(Sum("v1"), Mean("v3")).
func (df DataFrame) Agg(aggs ...Agg) DataFrame {
	return df.aggregate("Agg", nil, aggs, agg.Options{}, 0)
}

// reduceAll applies f to every column that suits it.
func (df DataFrame) reduceAll(op string, f func(string) Agg, suits func(arrow.DataType) bool) DataFrame {
	if df.err != nil {
		return df
	}
	var aggs []Agg
	for _, fld := range df.Schema().Fields() {
		if suits(fld.Type) {
			aggs = append(aggs, f(fld.Name))
		}
	}
	if len(aggs) == 0 {
		return df.fail(op, fmt.Errorf("no column suits it (columns: %s)", df.Schema()))
	}
	return df.aggregate(op, nil, aggs, agg.Options{}, 0)
}

// Sum adds up every numeric column: a one-row frame.
func (df DataFrame) Sum() DataFrame { return df.reduceAll("Sum", Sum, isNumeric) }

// Mean averages every numeric column: a one-row frame.
func (df DataFrame) Mean() DataFrame { return df.reduceAll("Mean", Mean, isNumeric) }

// Min of every column that can be ordered: a one-row frame.
func (df DataFrame) Min() DataFrame { return df.reduceAll("Min", Min, isOrdered) }

// Max of every column that can be ordered: a one-row frame.
func (df DataFrame) Max() DataFrame { return df.reduceAll("Max", Max, isOrdered) }

// Count of non-null values of every column: a one-row frame.
func (df DataFrame) Count() DataFrame {
	return df.reduceAll("Count", Count, func(arrow.DataType) bool { return true })
}

// Std of every numeric column (ddof 1): a one-row frame.
func (df DataFrame) Std() DataFrame { return df.reduceAll("Std", Std, isNumeric) }

// Var of every numeric column (ddof 1): a one-row frame.
func (df DataFrame) Var() DataFrame { return df.reduceAll("Var", Var, isNumeric) }

// NUnique counts the distinct values of every column: a one-row frame.
func (df DataFrame) NUnique() DataFrame {
	return df.reduceAll("NUnique", NUnique, func(arrow.DataType) bool { return true })
}

// Len is the number of rows.
func (df DataFrame) Len() Scalar {
	if df.err != nil {
		return Scalar{df: df}
	}
	if df.Schema().NumFields() == 0 {
		return Scalar{df: df.fail("Len", fmt.Errorf("the frame has no columns"))}
	}
	return Scalar{df: df.aggregate("Len", nil, []Agg{Size().As("len")}, agg.Options{}, 0)}
}

func isNumeric(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32,
		arrow.UINT64, arrow.FLOAT32, arrow.FLOAT64:
		return true
	}
	return false
}

func isOrdered(t arrow.DataType) bool {
	if isNumeric(t) {
		return true
	}
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.DATE32, arrow.TIMESTAMP, arrow.BOOL, arrow.DURATION:
		return true
	}
	return false
}

// GroupBy groups rows by the values of key columns; see GroupBy.Agg.
type GroupBy struct {
	df       DataFrame
	keys     []string
	splitOut int
	keepNull bool
	sort     *bool
	err      error
}

// GroupBy groups the rows by one or more key columns (strings, integers,
// dates, timestamps, booleans). Rows with a null key are dropped, as in
// pandas, unless KeepNullKeys is set.
func (df DataFrame) GroupBy(keys ...string) GroupBy {
	g := GroupBy{df: df, keys: keys}
	if df.err != nil {
		g.err = df.err
		return g
	}
	if len(keys) == 0 {
		g.err = fmt.Errorf("GroupBy: no key columns given")
	}
	for _, k := range keys {
		if _, err := fieldIndex(df.Schema(), k); err != nil {
			g.err = fmt.Errorf("GroupBy: %w", err)
		}
	}
	return g
}

// SplitOut spreads the result over n partitions by hash of the keys, for
// results with many groups.
func (g GroupBy) SplitOut(n int) GroupBy {
	if n < 1 && g.err == nil {
		g.err = fmt.Errorf("SplitOut: %d partitions", n)
	}
	g.splitOut = n
	return g
}

// KeepNullKeys makes rows with null keys form their own group instead of
// being dropped.
func (g GroupBy) KeepNullKeys() GroupBy { g.keepNull = true; return g }

// Sort sets whether the result is sorted by the keys: by default it is,
// unless the result is split out.
func (g GroupBy) Sort(sort bool) GroupBy { g.sort = &sort; return g }

// Agg computes aggregations per group: one row per group, the key columns
// first, then one column per aggregation.
func (g GroupBy) Agg(aggs ...Agg) DataFrame {
	if g.err != nil {
		return errFrame(g.err)
	}
	sort := g.splitOut <= 1
	if g.sort != nil {
		sort = *g.sort
	}
	return g.df.aggregate("GroupBy.Agg", g.keys, aggs, agg.Options{DropNullKeys: !g.keepNull, Sort: sort}, g.splitOut)
}

// each applies f to the given columns, or to every non-key column that
// suits it when none are given.
func (g GroupBy) each(f func(string) Agg, suits func(arrow.DataType) bool, cols []string) DataFrame {
	if g.err != nil {
		return errFrame(g.err)
	}
	if len(cols) == 0 {
		for _, fld := range g.df.Schema().Fields() {
			if !slices.Contains(g.keys, fld.Name) && suits(fld.Type) {
				cols = append(cols, fld.Name)
			}
		}
	}
	aggs := make([]Agg, len(cols))
	for i, c := range cols {
		aggs[i] = f(c)
	}
	return g.Agg(aggs...)
}

func anyType(arrow.DataType) bool { return true }

// Sum per group of the given columns (all numeric non-key columns when none).
func (g GroupBy) Sum(cols ...string) DataFrame { return g.each(Sum, isNumeric, cols) }

// Mean per group.
func (g GroupBy) Mean(cols ...string) DataFrame { return g.each(Mean, isNumeric, cols) }

// Min per group.
func (g GroupBy) Min(cols ...string) DataFrame { return g.each(Min, isOrdered, cols) }

// Max per group.
func (g GroupBy) Max(cols ...string) DataFrame { return g.each(Max, isOrdered, cols) }

// Count of non-null values per group.
func (g GroupBy) Count(cols ...string) DataFrame { return g.each(Count, anyType, cols) }

// Std per group (ddof 1).
func (g GroupBy) Std(cols ...string) DataFrame { return g.each(Std, isNumeric, cols) }

// Var per group (ddof 1).
func (g GroupBy) Var(cols ...string) DataFrame { return g.each(Var, isNumeric, cols) }

// First non-null value per group.
func (g GroupBy) First(cols ...string) DataFrame { return g.each(First, anyType, cols) }

// Last non-null value per group.
func (g GroupBy) Last(cols ...string) DataFrame { return g.each(Last, anyType, cols) }

// NUnique per group.
func (g GroupBy) NUnique(cols ...string) DataFrame { return g.each(NUnique, anyType, cols) }

// Size is the number of rows per group, in a column named "size".
func (g GroupBy) Size() DataFrame { return g.Agg(Size()) }

// Series is one column of a DataFrame.
type Series struct {
	df DataFrame
}

// Column returns one column as a Series.
func (df DataFrame) Column(name string) Series {
	if df.err != nil {
		return Series{df: df}
	}
	if _, err := fieldIndex(df.Schema(), name); err != nil {
		return Series{df: df.fail("Column", err)}
	}
	return Series{df: df.Select(name)}
}

// Name returns the column's name.
func (s Series) Name() string {
	if s.df.n == nil || s.df.Schema().NumFields() == 0 {
		return ""
	}
	return s.df.Schema().Field(0).Name
}

// Type returns the column's type.
func (s Series) Type() arrow.DataType {
	if s.df.n == nil || s.df.Schema().NumFields() == 0 {
		return nil
	}
	return s.df.Schema().Field(0).Type
}

// Frame returns the Series as a one-column DataFrame.
func (s Series) Frame() DataFrame { return s.df }

// Err returns the error building the Series met.
func (s Series) Err() error { return s.df.Err() }

// Agg computes one aggregation of the Series; the aggregation's column is
// ignored: s.Agg(Std("").DDOF(0)).
func (s Series) Agg(a Agg) Scalar {
	if s.df.err != nil {
		return Scalar{df: s.df}
	}
	a.col = s.Name()
	a.name = s.Name()
	if a.fn == "size" {
		a.name = "size"
	}
	return Scalar{df: s.df.aggregate("Series."+string(a.fn), nil, []Agg{a}, agg.Options{}, 0)}
}

func (s Series) Sum() Scalar     { return s.Agg(Sum("")) }
func (s Series) Mean() Scalar    { return s.Agg(Mean("")) }
func (s Series) Min() Scalar     { return s.Agg(Min("")) }
func (s Series) Max() Scalar     { return s.Agg(Max("")) }
func (s Series) Count() Scalar   { return s.Agg(Count("")) }
func (s Series) Std() Scalar     { return s.Agg(Std("")) }
func (s Series) Var() Scalar     { return s.Agg(Var("")) }
func (s Series) NUnique() Scalar { return s.Agg(NUnique("")) }
func (s Series) Any() Scalar     { return s.Agg(Any("")) }
func (s Series) All() Scalar     { return s.Agg(All("")) }
func (s Series) First() Scalar   { return s.Agg(First("")) }
func (s Series) Last() Scalar    { return s.Agg(Last("")) }

// Compute returns the values of the Series as an Arrow array.
func (s Series) Compute(ctx context.Context, exec graph.Executor) (arrow.Array, error) {
	t, err := s.df.Compute(ctx, exec)
	if err != nil {
		return nil, err
	}
	defer t.Release()
	return array.Concatenate(t.Column(0).Data().Chunks(), defaultMem)
}

// Scalar is one lazily computed value, such as the sum of a column.
type Scalar struct {
	df DataFrame // one row, one column
}

// Err returns the error building the Scalar met.
func (s Scalar) Err() error { return s.df.Err() }

// Frame returns the Scalar as a one-row, one-column DataFrame.
func (s Scalar) Frame() DataFrame { return s.df }

// Compute returns the value as a Go value: nil for null, bool, int64,
// uint64, float64, string, time.Time or time.Duration.
func (s Scalar) Compute(ctx context.Context, exec graph.Executor) (any, error) {
	t, err := s.df.Compute(ctx, exec)
	if err != nil {
		return nil, err
	}
	defer t.Release()
	if t.NumRows() != 1 || t.NumCols() != 1 {
		return nil, fmt.Errorf("scalar result has %d rows and %d columns", t.NumRows(), t.NumCols())
	}
	for _, c := range t.Column(0).Data().Chunks() {
		if c.Len() == 1 {
			return goValue(c, 0)
		}
	}
	return nil, fmt.Errorf("scalar result has no value")
}

// Float64 computes the value as a float64 (null is NaN? no: an error).
func (s Scalar) Float64(ctx context.Context, exec graph.Executor) (float64, error) {
	v, err := s.Compute(ctx, exec)
	if err != nil {
		return 0, err
	}
	switch x := v.(type) {
	case float64:
		return x, nil
	case int64:
		return float64(x), nil
	case uint64:
		return float64(x), nil
	case nil:
		return 0, ErrNull
	}
	return 0, fmt.Errorf("the value is a %T, not a number", v)
}

// Int64 computes the value as an int64.
func (s Scalar) Int64(ctx context.Context, exec graph.Executor) (int64, error) {
	v, err := s.Compute(ctx, exec)
	if err != nil {
		return 0, err
	}
	switch x := v.(type) {
	case int64:
		return x, nil
	case uint64:
		return int64(x), nil
	case nil:
		return 0, ErrNull
	}
	return 0, fmt.Errorf("the value is a %T, not an integer", v)
}

// Time computes the value as a time.Time (a date or a timestamp).
func (s Scalar) Time(ctx context.Context, exec graph.Executor) (time.Time, error) {
	v, err := s.Compute(ctx, exec)
	if err != nil {
		return time.Time{}, err
	}
	switch x := v.(type) {
	case time.Time:
		return x, nil
	case nil:
		return time.Time{}, ErrNull
	}
	return time.Time{}, fmt.Errorf("the value is a %T, not a time", v)
}
