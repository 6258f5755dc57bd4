package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/dataframe"
)

// ioSuite reads the group-by table into memory, whole and two columns of
// it, from CSV and from Parquet. DuckDB's side materializes the read into a
// temporary table (CREATE TABLE AS), Shoal's into an Arrow table. Answers
// are compared through a fingerprint of each column: count, nulls, sum (or
// total bytes of text), min and max.
func ioSuite(ctx context.Context, h *harness) ([]*benchCase, string, func(), error) {
	d, err := h.groupbyData(ctx)
	if err != nil {
		return nil, "", nil, err
	}
	data := fmt.Sprintf("%s: %s rows, CSV %s, Parquet %s", d.name, rowsName(d.rows), fmtBytes(d.bytes), fileSize(d.parquet))
	projected := []string{"id1", "v3"}
	var cases []*benchCase
	for _, format := range []string{"csv", "parquet"} {
		for _, cols := range [][]string{nil, projected} {
			name, note := format+" full", "all 9 columns"
			if cols != nil {
				name, note = format+" projected", "columns "+strings.Join(cols, ", ")
			}
			cases = append(cases, &benchCase{suite: "io", name: name, note: note,
				shoal: h.shoalRead(d, format, cols), peerName: "duckdb", peer: h.duckRead(d, format, cols)})
		}
	}
	return cases, data, func() {}, nil
}

// shoalFrame is the lazy frame reading d in format ("csv" or "parquet").
func shoalFrame(ctx context.Context, d *dataset, format string) (dataframe.DataFrame, error) {
	if format == "csv" {
		return dataframe.ReadCSV(ctx, d.csv, dataframe.CSVOptions{Schema: d.schema, BlockSize: csvBlockSize(d.bytes)})
	}
	return dataframe.ReadParquet(ctx, d.parquet)
}

func (h *harness) shoalRead(d *dataset, format string, cols []string) *engine {
	return &engine{
		run: func(ctx context.Context) (any, error) {
			df, err := shoalFrame(ctx, d, format)
			if err != nil {
				return nil, err
			}
			if cols != nil {
				df = df.Select(anys(cols)...)
			}
			return df.Compute(ctx, h.exec)
		},
		answer: func(_ context.Context, v any) (*table, error) {
			t := v.(arrow.Table)
			defer t.Release()
			return fingerprintArrow(t)
		},
	}
}

func (h *harness) duckRead(d *dataset, format string, cols []string) *engine {
	src := csvScan(d.csv, d.schema)
	if format == "parquet" {
		src = parquetScan(d.parquet)
	}
	sel := "*"
	schema := d.schema
	if cols != nil {
		sel = strings.Join(cols, ", ")
		var fields []arrow.Field
		for _, c := range cols {
			i := schema.FieldIndices(c)[0]
			fields = append(fields, schema.Field(i))
		}
		schema = arrow.NewSchema(fields, nil)
	}
	return &engine{
		run: func(ctx context.Context) (any, error) {
			return nil, h.duck.exec(ctx, fmt.Sprintf("CREATE OR REPLACE TEMP TABLE io_result AS SELECT %s FROM %s", sel, src))
		},
		answer: func(ctx context.Context, _ any) (*table, error) {
			return fingerprintDuck(ctx, h.duck, "io_result", schema)
		},
		teardown: func() { _ = h.duck.exec(context.Background(), "DROP TABLE IF EXISTS io_result") },
	}
}

func anys[T any](s []T) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// fingerprint columns: one row per column of the table fingerprinted.
var fingerprintColumns = []string{"column", "values", "nulls", "int_sum", "float_sum", "text_bytes", "min", "max"}

// colStats accumulates the fingerprint of one column.
type colStats struct {
	name                string
	kind                kind
	values, nulls, isum int64
	fsum                float64
	bytes               int64
	min, max            *column // one value each, as a column of the kind
}

func (s *colStats) row() []any {
	minS, maxS := "", ""
	if s.min != nil {
		minS, maxS = s.min.format(0), s.max.format(0)
	}
	return []any{s.name, s.values, s.nulls, s.isum, s.fsum, s.bytes, minS, maxS}
}

// fingerprintArrow computes the fingerprint of an Arrow table, one chunk at
// a time.
func fingerprintArrow(t arrow.Table) (*table, error) {
	out := newTable(fingerprintColumns...)
	for j := range int(t.NumCols()) {
		col := t.Column(j)
		s := &colStats{name: col.Name()}
		for _, chunk := range col.Data().Chunks() {
			c := &column{name: col.Name()}
			if err := appendArrow(c, chunk); err != nil {
				return nil, err
			}
			s.kind = c.kind
			for i := range c.len() {
				if c.null[i] {
					s.nulls++
					continue
				}
				s.values++
				switch c.kind {
				case kindInt, kindTime:
					s.isum += c.ints[i]
				case kindFloat:
					s.fsum += c.floats[i]
				case kindString:
					s.bytes += int64(len(c.strs[i]))
				}
				if s.min == nil {
					s.min, s.max = &column{name: c.name}, &column{name: c.name}
					copyCell(s.min, c, i)
					copyCell(s.max, c, i)
					continue
				}
				if compareCells(c, i, s.min, 0) < 0 {
					copyCell(s.min, c, i)
				}
				if compareCells(c, i, s.max, 0) > 0 {
					copyCell(s.max, c, i)
				}
			}
		}
		if err := out.appendRow(s.row()...); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// copyCell makes dst a one-row column holding row i of src.
func copyCell(dst, src *column, i int) {
	dst.kind, dst.null = src.kind, []bool{false}
	dst.ints, dst.floats, dst.strs = nil, nil, nil
	switch src.kind {
	case kindFloat:
		dst.floats = []float64{src.floats[i]}
	case kindString:
		dst.strs = []string{src.strs[i]}
	default:
		dst.ints = []int64{src.ints[i]}
	}
}

// fingerprintDuck computes the fingerprint of a DuckDB table whose columns
// are those of schema, in one query.
func fingerprintDuck(ctx context.Context, d *duck, tableName string, schema *arrow.Schema) (*table, error) {
	var sel []string
	for _, f := range schema.Fields() {
		c := `"` + f.Name + `"`
		switch f.Type.ID() {
		case arrow.STRING:
			sel = append(sel, "count("+c+")", "sum(strlen("+c+"))::BIGINT", "min("+c+")", "max("+c+")")
		case arrow.FLOAT64:
			sel = append(sel, "count("+c+")", "sum("+c+")", "min("+c+")", "max("+c+")")
		default:
			sel = append(sel, "count("+c+")", "sum("+c+")::BIGINT", "min("+c+")", "max("+c+")")
		}
	}
	q := fmt.Sprintf("SELECT count(*), %s FROM %s", strings.Join(sel, ", "), tableName)
	row, err := d.query(ctx, q)
	if err != nil {
		return nil, err
	}
	if row.rows() != 1 {
		return nil, fmt.Errorf("duckdb fingerprint: %d rows", row.rows())
	}
	total := row.cols[0].ints[0]
	out := newTable(fingerprintColumns...)
	for j, f := range schema.Fields() {
		agg := row.cols[1+4*j : 5+4*j]
		s := &colStats{name: f.Name, values: agg[0].ints[0]}
		s.nulls = total - s.values
		if !agg[1].null[0] {
			switch agg[1].kind {
			case kindFloat:
				s.fsum = agg[1].floats[0]
			default:
				if f.Type.ID() == arrow.STRING {
					s.bytes = agg[1].ints[0]
				} else {
					s.isum = agg[1].ints[0]
				}
			}
		}
		if !agg[2].null[0] {
			s.min, s.max = agg[2], agg[3]
		}
		if err := out.appendRow(s.row()...); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func fileSize(path string) string {
	st, err := statFile(path)
	if err != nil {
		return "?"
	}
	return fmtBytes(st)
}

// itoa formats an int with thousands separators.
func itoa(n int) string {
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}
