package dataframe

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/dataframe/expr"
)

// DataFrame is a lazy, partitioned table: each partition is an Arrow
// record batch. Its columns and their types are known without computing
// anything; operations build a plan, and Compute runs it on an executor.
//
// A DataFrame is an immutable value: every operation returns a new one.
// An operation that the schema shows to be wrong (an unknown column, adding
// a string to a float) returns a DataFrame that carries the error: Err
// reports it at once, and Compute returns it.
type DataFrame struct {
	n   *node
	err error
}

// Expr is a column expression; see Col, Lit and When.
type Expr = expr.Expr

// Col refers to a column by name.
func Col(name string) Expr { return expr.Col(name) }

// Lit is a constant: nil, a bool, a number, a string, a time.Time or a
// time.Duration.
func Lit(v any) Expr { return expr.Lit(v) }

// When starts a conditional expression:
// When(cond).Then(a).When(cond2).Then(b).Otherwise(c).
func When(cond Expr) *expr.WhenThen { return expr.When(cond) }

func errFrame(err error) DataFrame { return DataFrame{err: err} }

// Err returns the error that building the DataFrame met, if any.
func (df DataFrame) Err() error {
	if df.err == nil && df.n == nil {
		return errors.New("dataframe: zero DataFrame; build one with a constructor such as ReadCSV or FromRecords")
	}
	return df.err
}

// Schema returns the columns and their types.
func (df DataFrame) Schema() *arrow.Schema {
	if df.n == nil {
		return arrow.NewSchema(nil, nil)
	}
	return df.n.schema
}

// Columns returns the column names in order.
func (df DataFrame) Columns() []string { return schemaNames(df.Schema()) }

// NPartitions returns the number of partitions.
func (df DataFrame) NPartitions() int {
	if df.n == nil {
		return 0
	}
	return df.n.nparts
}

// String describes the DataFrame: its columns, types and partitions.
func (df DataFrame) String() string {
	if df.err != nil {
		return "DataFrame(error: " + df.err.Error() + ")"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "DataFrame(%d partitions)", df.NPartitions())
	for _, f := range df.Schema().Fields() {
		fmt.Fprintf(&b, "\n  %s: %s", f.Name, f.Type)
	}
	return b.String()
}

// derive builds a new DataFrame from a node whose input is df. Filters
// and projections that keep the index column keep the index.
func (df DataFrame) derive(n *node) DataFrame {
	n.inputs = append([]*node{df.n}, n.inputs...)
	if n.nparts == 0 {
		n.nparts = df.n.nparts
	}
	if df.n.index != "" && n.index == "" {
		keep := false
		switch n.kind {
		case kindFilter:
			keep = true
		case kindProject:
			for _, e := range n.exprs {
				if c, ok := passthrough(e); ok && c == df.n.index && e.Name() == c {
					keep = true
				}
			}
		}
		if keep {
			n.index, n.divisions = df.n.index, df.n.divisions
		}
	}
	return DataFrame{n: n}
}

// check returns df's error, or wraps err with the operation's name.
func (df DataFrame) fail(op string, err error) DataFrame {
	return errFrame(fmt.Errorf("%s: %w", op, err))
}

// Select keeps the given columns or expressions, in that order. Strings
// name columns; expressions are computed, named by their alias (see
// Expr.Alias) or the first column they use.
func (df DataFrame) Select(cols ...any) DataFrame {
	if df.err != nil {
		return df
	}
	exprs, err := toExprs(cols)
	if err != nil {
		return df.fail("Select", err)
	}
	return df.project("Select", exprs)
}

func toExprs(cols []any) ([]Expr, error) {
	out := make([]Expr, 0, len(cols))
	for i, c := range cols {
		switch x := c.(type) {
		case string:
			out = append(out, Col(x))
		case Expr:
			out = append(out, x)
		case []string:
			for _, s := range x {
				out = append(out, Col(s))
			}
		default:
			return nil, fmt.Errorf("argument %d is a %T; pass column names or expressions", i, c)
		}
	}
	return out, nil
}

// project checks expressions against the schema and adds a projection.
func (df DataFrame) project(op string, exprs []Expr) DataFrame {
	fields := make([]arrow.Field, len(exprs))
	seen := map[string]bool{}
	named := make([]Expr, len(exprs))
	for i, e := range exprs {
		if err := e.Err(); err != nil {
			return df.fail(op, err)
		}
		t, err := e.Type(df.Schema())
		if err != nil {
			return df.fail(op, err)
		}
		name := e.Name()
		if seen[name] {
			return df.fail(op, fmt.Errorf("two output columns are named %q; give one another name with Alias", name))
		}
		seen[name] = true
		nullable := true
		if c, ok := e.ColumnName(); ok {
			if j, err := fieldIndex(df.Schema(), c); err == nil {
				nullable = df.Schema().Field(j).Nullable
			}
		}
		fields[i] = arrow.Field{Name: name, Type: t, Nullable: nullable}
		named[i] = withName(e, name)
	}
	return df.derive(&node{kind: kindProject, schema: arrow.NewSchema(fields, nil), exprs: named})
}

// WithColumns adds or replaces columns computed by expressions, each named
// by its alias (or the first column it uses). Replaced columns keep their
// position; new ones come last.
func (df DataFrame) WithColumns(exprs ...Expr) DataFrame {
	if df.err != nil {
		return df
	}
	cols := df.Columns()
	out := make([]Expr, len(cols))
	for i, c := range cols {
		out[i] = Col(c)
	}
	for _, e := range exprs {
		if err := e.Err(); err != nil {
			return df.fail("WithColumns", err)
		}
		name := e.Name()
		if i := slices.Index(cols, name); i >= 0 {
			out[i] = withName(e, name)
		} else {
			out = append(out, withName(e, name))
			cols = append(cols, name)
		}
	}
	return df.project("WithColumns", out)
}

// WithColumn adds or replaces one column.
func (df DataFrame) WithColumn(name string, e Expr) DataFrame {
	return df.WithColumns(e.Alias(name))
}

// Filter keeps the rows where the predicate, a boolean expression, is true;
// rows where it is false or null are dropped.
func (df DataFrame) Filter(pred Expr) DataFrame {
	if df.err != nil {
		return df
	}
	if err := pred.Err(); err != nil {
		return df.fail("Filter", err)
	}
	t, err := pred.Type(df.Schema())
	if err != nil {
		return df.fail("Filter", err)
	}
	if t.ID() != arrow.BOOL {
		return df.fail("Filter", fmt.Errorf("the predicate %s is %s, not boolean", pred, t))
	}
	return df.derive(&node{kind: kindFilter, schema: df.Schema(), pred: pred})
}

// Rename renames columns: Rename(map[string]string{"old": "new"}).
func (df DataFrame) Rename(names map[string]string) DataFrame {
	if df.err != nil {
		return df
	}
	cols := df.Columns()
	for old := range names {
		if !slices.Contains(cols, old) {
			return df.fail("Rename", columnError(old, cols))
		}
	}
	out := make([]Expr, len(cols))
	for i, c := range cols {
		if n, ok := names[c]; ok {
			out[i] = Col(c).Alias(n)
		} else {
			out[i] = Col(c)
		}
	}
	return df.project("Rename", out)
}

// Drop removes columns.
func (df DataFrame) Drop(cols ...string) DataFrame {
	if df.err != nil {
		return df
	}
	have := df.Columns()
	for _, c := range cols {
		if !slices.Contains(have, c) {
			return df.fail("Drop", columnError(c, have))
		}
	}
	var out []Expr
	for _, c := range have {
		if !slices.Contains(cols, c) {
			out = append(out, Col(c))
		}
	}
	return df.project("Drop", out)
}

// Astype converts columns to other types: Astype(map[string]arrow.DataType{"x": arrow.PrimitiveTypes.Float64}).
func (df DataFrame) Astype(types map[string]arrow.DataType) DataFrame {
	if df.err != nil {
		return df
	}
	cols := df.Columns()
	for c := range types {
		if !slices.Contains(cols, c) {
			return df.fail("Astype", columnError(c, cols))
		}
	}
	out := make([]Expr, len(cols))
	for i, c := range cols {
		if t, ok := types[c]; ok {
			out[i] = Col(c).Cast(t).Alias(c)
		} else {
			out[i] = Col(c)
		}
	}
	return df.project("Astype", out)
}

// FillNull replaces nulls: FillNull(0) fills every column whose type fits
// the value; FillNull(map[string]any{"a": 0, "b": "none"}) fills the named
// columns.
func (df DataFrame) FillNull(value any) DataFrame {
	if df.err != nil {
		return df
	}
	cols := df.Columns()
	out := make([]Expr, len(cols))
	byCol, isMap := value.(map[string]any)
	if isMap {
		for c := range byCol {
			if !slices.Contains(cols, c) {
				return df.fail("FillNull", columnError(c, cols))
			}
		}
	}
	for i, c := range cols {
		out[i] = Col(c)
		if isMap {
			if v, ok := byCol[c]; ok {
				out[i] = Col(c).FillNull(v).Alias(c)
			}
			continue
		}
		e := Col(c).FillNull(value).Alias(c)
		if _, err := e.Type(df.Schema()); err == nil {
			out[i] = e
		}
	}
	return df.project("FillNull", out)
}

// DropNull drops the rows with a null in any of the given columns (all
// columns when none are given).
func (df DataFrame) DropNull(cols ...string) DataFrame {
	if df.err != nil {
		return df
	}
	if len(cols) == 0 {
		cols = df.Columns()
	}
	var pred Expr
	for i, c := range cols {
		if _, err := fieldIndex(df.Schema(), c); err != nil {
			return df.fail("DropNull", err)
		}
		p := Col(c).IsNotNull()
		if i == 0 {
			pred = p
		} else {
			pred = pred.And(p)
		}
	}
	if len(cols) == 0 {
		return df
	}
	return df.Filter(pred)
}

// Head returns a DataFrame of the first n rows, in one partition.
func (df DataFrame) Head(n int) DataFrame {
	if df.err != nil {
		return df
	}
	if n < 0 {
		return df.fail("Head", fmt.Errorf("negative row count %d", n))
	}
	return df.derive(&node{kind: kindHead, schema: df.Schema(), n: int64(n), nparts: 1})
}

// Repartition concatenates runs of k consecutive partitions, giving
// ceil(NPartitions()/k) larger ones. Use it after a selective filter.
func (df DataFrame) Coalesce(k int) DataFrame {
	if df.err != nil {
		return df
	}
	if k < 1 {
		return df.fail("Coalesce", fmt.Errorf("group size %d", k))
	}
	if k == 1 {
		return df
	}
	return df.derive(&node{kind: kindCoalesce, schema: df.Schema(), groups: k,
		nparts: (df.NPartitions() + k - 1) / k})
}

// Concat returns the rows of all frames, in order, as the partitions of
// one frame. Frames with different columns are aligned by name: a column
// missing from a frame is null there; a column's types must agree.
func Concat(dfs ...DataFrame) DataFrame {
	if len(dfs) == 0 {
		return errFrame(errors.New("Concat: no frames"))
	}
	var fields []arrow.Field
	index := map[string]int{}
	for i, df := range dfs {
		if err := df.Err(); err != nil {
			return errFrame(fmt.Errorf("Concat: frame %d: %w", i, err))
		}
		for _, f := range df.Schema().Fields() {
			j, ok := index[f.Name]
			if !ok {
				index[f.Name] = len(fields)
				fields = append(fields, arrow.Field{Name: f.Name, Type: f.Type, Nullable: true})
				continue
			}
			if !arrow.TypeEqual(fields[j].Type, f.Type) {
				return errFrame(fmt.Errorf("Concat: column %q is %s in an earlier frame and %s in frame %d; use Astype first",
					f.Name, fields[j].Type, f.Type, i))
			}
		}
	}
	schema := arrow.NewSchema(fields, nil)
	n := &node{kind: kindConcat, schema: schema}
	for _, df := range dfs {
		in := df
		if !sameNames(df.Schema(), schema) {
			exprs := make([]Expr, len(fields))
			for j, f := range fields {
				if len(df.Schema().FieldIndices(f.Name)) > 0 {
					exprs[j] = Col(f.Name)
				} else {
					exprs[j] = Lit(nil).Cast(f.Type).Alias(f.Name)
				}
			}
			in = df.project("Concat", exprs)
			if in.err != nil {
				return in
			}
		}
		n.inputs = append(n.inputs, in.n)
		n.nparts += in.NPartitions()
	}
	return DataFrame{n: n}
}

func sameNames(a, b *arrow.Schema) bool {
	if a.NumFields() != b.NumFields() {
		return false
	}
	for i := range a.NumFields() {
		if a.Field(i).Name != b.Field(i).Name {
			return false
		}
	}
	return true
}

// MapPartitions runs a registered function on every partition. The
// function takes and returns an arrow.RecordBatch; register it with
// graph.RegisterFunc at package level:
//
//	var clean = graph.MustRegisterFunc("myapp.clean", func(ctx context.Context, rec arrow.RecordBatch) (arrow.RecordBatch, error) { ... })
//	df.MapPartitions(clean.Name(), outSchema)
//
// The schema of the result must be given (nil means unchanged).
func (df DataFrame) MapPartitions(fn string, schema *arrow.Schema) DataFrame {
	if df.err != nil {
		return df
	}
	if err := checkRecordFunc(fn); err != nil {
		return df.fail("MapPartitions", err)
	}
	if schema == nil {
		schema = df.Schema()
	}
	return df.derive(&node{kind: kindMap, schema: schema, fn: fn})
}

// Apply computes one expression over every partition and returns it as a
// one-column frame named by the expression.
func (df DataFrame) Apply(e Expr) DataFrame { return df.Select(e) }

// withName returns e named name: e itself when it already is (a column of
// that name, or an expression with that alias), else e.Alias(name).
func withName(e Expr, name string) Expr {
	if c, ok := e.ColumnName(); ok && c == name {
		return e
	}
	if a, ok := e.AliasName(); ok && a == name {
		return e
	}
	return e.Alias(name)
}
