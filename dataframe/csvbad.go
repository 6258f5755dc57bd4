package dataframe

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/expr"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/io/csv"
	"github.com/shoal-data/shoal/io/storage"
)

// badRowsSchema is the schema of ReadCSVBadRows' frame.
var badRowsSchema = arrow.NewSchema([]arrow.Field{
	{Name: "path", Type: arrow.BinaryTypes.String},
	{Name: "line", Type: arrow.PrimitiveTypes.Int64},
	{Name: "column", Type: arrow.PrimitiveTypes.Int64},
	{Name: "text", Type: arrow.BinaryTypes.String},
	{Name: "reason", Type: arrow.BinaryTypes.String},
}, nil)

// ReadCSVBadRows reads the same files as ReadCSV with the same options and
// returns the malformed rows: path, line (1-based, in the file), column
// (1-based, 0 when the row as a whole is wrong), the offending text
// (truncated) and the reason. Read the data with CSVOptions.BadRows set to
// csv.Skip to keep the good rows, and this frame to see, count or save the
// bad ones; each is computed on its own.
func ReadCSVBadRows(ctx context.Context, path string, opts ...CSVOptions) (DataFrame, error) {
	var o csv.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	o.BadRows = csv.Skip
	plan, err := csv.PlanRead(ctx, storage.Local{}, []string{path}, o)
	if err != nil {
		return DataFrame{}, err
	}
	r := &csvBadReader{csvReader{plan: plan, paths: []string{path}}}
	return DataFrame{n: &node{kind: kindSource, schema: badRowsSchema, nparts: len(plan.Blocks), src: &source{r: r}}}, nil
}

// csvBadReader reads the malformed rows of CSV blocks.
type csvBadReader struct{ csvReader }

func (r *csvBadReader) format() string        { return "csv-bad-rows" }
func (r *csvBadReader) schema() *arrow.Schema { return badRowsSchema }
func (r *csvBadReader) describe() string      { return "bad rows of " + r.csvReader.describe() }
func (r *csvBadReader) token() string         { return "bad rows|" + r.csvReader.token() }
func (r *csvBadReader) prepare([]string, expr.Expr, bool) (reader, string, error) {
	return r, "", nil
}

func readCSVBadRows(ctx context.Context, env *graph.Env, params []byte, columns []string, filter *expr.Expr,
	mem memory.Allocator) (arrow.RecordBatch, error) {
	plan := new(csv.Plan)
	if err := plan.UnmarshalBinary(params); err != nil {
		return nil, fmt.Errorf("decode CSV part: %w", err)
	}
	rec, bad, err := csv.ReadBlock(ctx, storage.Local{}, plan, 0, csv.ReadOptions{Allocator: mem})
	if err != nil {
		return nil, err
	}
	rec.Release()
	b := array.NewRecordBuilder(mem, badRowsSchema)
	defer b.Release()
	for _, r := range bad {
		b.Field(0).(*array.StringBuilder).Append(r.Path)
		b.Field(1).(*array.Int64Builder).Append(r.Line)
		b.Field(2).(*array.Int64Builder).Append(int64(r.Column))
		b.Field(3).(*array.StringBuilder).Append(r.Text)
		b.Field(4).(*array.StringBuilder).Append(r.Err)
	}
	out := b.NewRecordBatch()
	if columns == nil && filter == nil {
		return out, nil
	}
	src := sourceSpec{Columns: columns}
	if filter != nil {
		defer out.Release()
		narrowed, err := expr.Filter(ctx, out, *filter, mem)
		if err != nil {
			return nil, err
		}
		out = narrowed
	}
	return src.narrow(ctx, out, mem)
}

func init() {
	readFuncs["csv-bad-rows"] = readCSVBadRows
}
