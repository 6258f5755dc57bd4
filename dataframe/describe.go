package dataframe

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/graph"
)

// describeStats are the statistics Describe computes, in row order.
var describeStats = []struct {
	name string
	agg  func(string) Agg
}{
	{"count", Count}, {"null_count", nil}, {"mean", Mean}, {"std", Std}, {"min", Min}, {"max", Max},
}

// Describe summarizes every numeric column: one row per statistic (count,
// null_count, mean, std, min, max), a "statistic" column naming it, then
// one float64 column per numeric column, as pandas' describe does.
func (df DataFrame) Describe() DataFrame {
	if df.err != nil {
		return df
	}
	var cols []string
	var aggs []Agg
	for _, f := range df.Schema().Fields() {
		if !isNumeric(f.Type) {
			continue
		}
		cols = append(cols, f.Name)
		for _, st := range describeStats {
			if st.agg != nil {
				aggs = append(aggs, st.agg(f.Name).As(f.Name+"\x00"+st.name))
			}
		}
	}
	if len(cols) == 0 {
		return df.fail("Describe", fmt.Errorf("no numeric column (columns: %v)", df.Columns()))
	}
	aggs = append(aggs, Size().As("\x00size"))
	stats := df.aggregate("Describe", nil, aggs, aggOptions(), 0)
	if stats.err != nil {
		return stats
	}
	fields := []arrow.Field{{Name: "statistic", Type: arrow.BinaryTypes.String}}
	for _, c := range cols {
		fields = append(fields, arrow.Field{Name: c, Type: arrow.PrimitiveTypes.Float64, Nullable: true})
	}
	return stats.derive(&node{kind: kindMap, schema: arrow.NewSchema(fields, nil), fn: describeReshape.Name()})
}

// describeReshape turns the one-row result of Describe's aggregation
// (columns "<column>\x00<statistic>") into one row per statistic.
var describeReshape = graph.MustRegisterFunc("dataframe.describe-reshape",
	func(_ context.Context, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
		if rec.NumRows() != 1 {
			return nil, fmt.Errorf("describe: want one row of statistics, got %d", rec.NumRows())
		}
		value := func(name string) (float64, bool, error) {
			idx := rec.Schema().FieldIndices(name)
			if len(idx) == 0 {
				return 0, false, fmt.Errorf("describe: no column %q", name)
			}
			v, err := goValue(rec.Column(idx[0]), 0)
			if err != nil || v == nil {
				return 0, false, err
			}
			switch x := v.(type) {
			case float64:
				return x, true, nil
			case int64:
				return float64(x), true, nil
			case uint64:
				return float64(x), true, nil
			}
			return 0, false, fmt.Errorf("describe: %q is a %T", name, v)
		}
		size, _, err := value("\x00size")
		if err != nil {
			return nil, err
		}
		var cols []string
		for _, f := range rec.Schema().Fields() {
			if c, st, ok := strings.Cut(f.Name, "\x00"); ok && st == "count" && c != "" {
				cols = append(cols, c)
			}
		}
		names := array.NewStringBuilder(memory.DefaultAllocator)
		defer names.Release()
		builders := make([]*array.Float64Builder, len(cols))
		for i := range builders {
			builders[i] = array.NewFloat64Builder(memory.DefaultAllocator)
			defer builders[i].Release()
		}
		for _, st := range describeStats {
			names.Append(st.name)
			for i, c := range cols {
				if st.name == "null_count" {
					n, _, err := value(c + "\x00count")
					if err != nil {
						return nil, err
					}
					builders[i].Append(size - n)
					continue
				}
				v, ok, err := value(c + "\x00" + st.name)
				if err != nil {
					return nil, err
				}
				if ok {
					builders[i].Append(v)
				} else {
					builders[i].AppendNull()
				}
			}
		}
		fields := []arrow.Field{{Name: "statistic", Type: arrow.BinaryTypes.String}}
		arrs := []arrow.Array{names.NewArray()}
		for i, c := range cols {
			fields = append(fields, arrow.Field{Name: c, Type: arrow.PrimitiveTypes.Float64, Nullable: true})
			arrs = append(arrs, builders[i].NewArray())
		}
		out := array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, int64(len(describeStats)))
		for _, a := range arrs {
			a.Release()
		}
		return out, nil
	})
