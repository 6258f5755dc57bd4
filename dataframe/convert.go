package dataframe

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/graph"
)

var defaultMem = memory.DefaultAllocator

// ErrNull is returned when a scalar result is null.
var ErrNull = errors.New("the value is null")

// FromRecords makes a DataFrame whose partitions are the given records,
// which must share a schema.
func FromRecords(recs ...arrow.RecordBatch) DataFrame {
	if len(recs) == 0 {
		return errFrame(errors.New("FromRecords: no records; use FromSchema for an empty frame"))
	}
	schema := recs[0].Schema()
	for i, r := range recs[1:] {
		if !r.Schema().Equal(schema) {
			return errFrame(fmt.Errorf("FromRecords: record %d has schema %s, record 0 has %s", i+1, r.Schema(), schema))
		}
	}
	for _, r := range recs {
		r.Retain()
	}
	return DataFrame{n: &node{kind: kindSource, schema: schema, nparts: len(recs), src: &source{records: recs}}}
}

// FromGraph builds a DataFrame whose partitions are the values of keys in
// g: Arrow record batches with the given schema, computed by g's tasks
// when the DataFrame is computed. Other collections give their data this
// way, lazily: an array, for example, through Array.FrameParts:
//
//	g, keys, schema, err := arr.FrameParts([]string{"x", "y"})
//	...
//	points := dataframe.FromGraph(g, keys, schema)
func FromGraph(g *graph.Graph, keys []graph.Key, schema *arrow.Schema) DataFrame {
	if g == nil || schema == nil {
		return errFrame(errors.New("FromGraph: nil graph or schema"))
	}
	for _, k := range keys {
		if !g.Has(k) && !g.IsExternal(k) {
			return errFrame(fmt.Errorf("FromGraph: key %q is not in the graph", k))
		}
	}
	return DataFrame{n: &node{kind: kindSource, schema: schema, nparts: len(keys),
		src: &source{keys: slices.Clone(keys), graph: g}}}
}

// FromSchema makes an empty DataFrame with the given columns.
func FromSchema(schema *arrow.Schema) DataFrame {
	return FromRecords(emptyRecord(schema, defaultMem))
}

// FromTable makes a DataFrame from an Arrow table split in nparts
// partitions of about equal rows (at least 1).
func FromTable(t arrow.Table, nparts int) DataFrame {
	nparts = max(nparts, 1)
	rows := t.NumRows()
	if rows == 0 {
		return FromSchema(t.Schema())
	}
	per := max((rows+int64(nparts)-1)/int64(nparts), 1)
	var recs []arrow.RecordBatch
	for off := int64(0); off < rows || len(recs) == 0; off += per {
		n := min(per, rows-off)
		cols := make([]arrow.Array, t.NumCols())
		for j := range cols {
			chunked := array.NewChunkedSlice(t.Column(j).Data(), off, off+n)
			c, err := array.Concatenate(chunked.Chunks(), defaultMem)
			chunked.Release()
			if err != nil {
				return errFrame(fmt.Errorf("FromTable: %w", err))
			}
			cols[j] = c
		}
		recs = append(recs, array.NewRecordBatch(t.Schema(), cols, n))
		if rows == 0 {
			break
		}
	}
	return FromRecords(recs...)
}

// FromColumns makes a one-partition DataFrame from Go slices, one per
// column, in the order given: FromColumns("id", []int64{1, 2}, "name",
// []string{"a", "b"}). Slices of bool, int, int32, int64, uint64, float32,
// float64, string and time.Time are accepted; pointers to those make
// nullable columns (nil is null).
func FromColumns(nameValues ...any) DataFrame {
	if len(nameValues)%2 != 0 {
		return errFrame(errors.New("FromColumns: arguments must be name, values pairs"))
	}
	var fields []arrow.Field
	var cols []arrow.Array
	rows := -1
	for i := 0; i < len(nameValues); i += 2 {
		name, ok := nameValues[i].(string)
		if !ok {
			return errFrame(fmt.Errorf("FromColumns: argument %d is a %T, want a column name", i, nameValues[i]))
		}
		a, err := arrayOf(nameValues[i+1])
		if err != nil {
			return errFrame(fmt.Errorf("FromColumns: column %q: %w", name, err))
		}
		if rows >= 0 && a.Len() != rows {
			return errFrame(fmt.Errorf("FromColumns: column %q has %d values, the first column %d", name, a.Len(), rows))
		}
		rows = a.Len()
		fields = append(fields, arrow.Field{Name: name, Type: a.DataType(), Nullable: true})
		cols = append(cols, a)
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(max(rows, 0)))
	for _, c := range cols {
		c.Release()
	}
	return FromRecords(rec)
}

// FromMap is FromColumns for a map of column name to slice; columns are
// sorted by name.
func FromMap(cols map[string]any) DataFrame {
	names := make([]string, 0, len(cols))
	for n := range cols {
		names = append(names, n)
	}
	slices.Sort(names)
	args := make([]any, 0, 2*len(names))
	for _, n := range names {
		args = append(args, n, cols[n])
	}
	return FromColumns(args...)
}

// arrayOf builds an Arrow array from a Go slice.
func arrayOf(v any) (arrow.Array, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice {
		return nil, fmt.Errorf("values are a %T, not a slice", v)
	}
	elem := rv.Type().Elem()
	t, err := arrowType(elem)
	if err != nil {
		return nil, err
	}
	b := array.NewBuilder(defaultMem, t)
	defer b.Release()
	for i := range rv.Len() {
		if err := appendValue(b, rv.Index(i)); err != nil {
			return nil, fmt.Errorf("value %d: %w", i, err)
		}
	}
	return b.NewArray(), nil
}

var timeType = reflect.TypeFor[time.Time]()
var durationType = reflect.TypeFor[time.Duration]()

// arrowType maps a Go type to an Arrow type.
func arrowType(t reflect.Type) (arrow.DataType, error) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType:
		return &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, nil
	case t == durationType:
		return &arrow.DurationType{Unit: arrow.Nanosecond}, nil
	}
	switch t.Kind() {
	case reflect.Bool:
		return arrow.FixedWidthTypes.Boolean, nil
	case reflect.Int, reflect.Int64:
		return arrow.PrimitiveTypes.Int64, nil
	case reflect.Int32:
		return arrow.PrimitiveTypes.Int32, nil
	case reflect.Int16:
		return arrow.PrimitiveTypes.Int16, nil
	case reflect.Int8:
		return arrow.PrimitiveTypes.Int8, nil
	case reflect.Uint, reflect.Uint64:
		return arrow.PrimitiveTypes.Uint64, nil
	case reflect.Uint32:
		return arrow.PrimitiveTypes.Uint32, nil
	case reflect.Float64:
		return arrow.PrimitiveTypes.Float64, nil
	case reflect.Float32:
		return arrow.PrimitiveTypes.Float32, nil
	case reflect.String:
		return arrow.BinaryTypes.String, nil
	}
	return nil, fmt.Errorf("no column type for Go type %s", t)
}

func appendValue(b array.Builder, v reflect.Value) error {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			b.AppendNull()
			return nil
		}
		v = v.Elem()
	}
	switch b := b.(type) {
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(v.Interface().(time.Time).UnixNano()))
	case *array.DurationBuilder:
		b.Append(arrow.Duration(v.Int()))
	case *array.BooleanBuilder:
		b.Append(v.Bool())
	case *array.Int64Builder:
		b.Append(v.Int())
	case *array.Int32Builder:
		b.Append(int32(v.Int()))
	case *array.Int16Builder:
		b.Append(int16(v.Int()))
	case *array.Int8Builder:
		b.Append(int8(v.Int()))
	case *array.Uint64Builder:
		b.Append(v.Uint())
	case *array.Uint32Builder:
		b.Append(uint32(v.Uint()))
	case *array.Float64Builder:
		b.Append(v.Float())
	case *array.Float32Builder:
		b.Append(float32(v.Float()))
	case *array.StringBuilder:
		b.Append(v.String())
	default:
		return fmt.Errorf("cannot append to a %T", b)
	}
	return nil
}

// structFields lists the exported fields of a struct type with their
// column names: the `df:"name"` tag, else the field name.
func structFields(t reflect.Type) ([]int, []string, error) {
	if t.Kind() != reflect.Struct {
		return nil, nil, fmt.Errorf("%s is not a struct type", t)
	}
	var idx []int
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := f.Name
		if tag, ok := f.Tag.Lookup("df"); ok {
			if tag == "-" {
				continue
			}
			name, _, _ = strings.Cut(tag, ",")
		}
		idx = append(idx, i)
		names = append(names, name)
	}
	if len(idx) == 0 {
		return nil, nil, fmt.Errorf("%s has no exported fields", t)
	}
	return idx, names, nil
}

// FromStructs makes a one-partition DataFrame from a slice of structs:
// one column per exported field, named by its `df:"name"` tag or its
// name. Pointer fields make nullable columns.
func FromStructs[T any](rows []T) DataFrame {
	t := reflect.TypeFor[T]()
	idx, names, err := structFields(t)
	if err != nil {
		return errFrame(fmt.Errorf("FromStructs: %w", err))
	}
	fields := make([]arrow.Field, len(idx))
	builders := make([]array.Builder, len(idx))
	for j, i := range idx {
		at, err := arrowType(t.Field(i).Type)
		if err != nil {
			return errFrame(fmt.Errorf("FromStructs: field %s: %w", t.Field(i).Name, err))
		}
		fields[j] = arrow.Field{Name: names[j], Type: at, Nullable: true}
		builders[j] = array.NewBuilder(defaultMem, at)
		defer builders[j].Release()
	}
	for r := range rows {
		v := reflect.ValueOf(&rows[r]).Elem()
		for j, i := range idx {
			if err := appendValue(builders[j], v.Field(i)); err != nil {
				return errFrame(fmt.Errorf("FromStructs: row %d field %s: %w", r, t.Field(i).Name, err))
			}
		}
	}
	cols := make([]arrow.Array, len(idx))
	for j, b := range builders {
		cols[j] = b.NewArray()
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(len(rows)))
	for _, c := range cols {
		c.Release()
	}
	return FromRecords(rec)
}

// ToStructs converts the rows of a table into structs: each exported field
// takes the column named by its `df:"name"` tag or its name. A column's
// values must fit the field (numbers convert between widths, a null needs
// a pointer field or leaves the zero value).
func ToStructs[T any](t arrow.Table) ([]T, error) {
	typ := reflect.TypeFor[T]()
	idx, names, err := structFields(typ)
	if err != nil {
		return nil, fmt.Errorf("ToStructs: %w", err)
	}
	colOf := make([]int, len(idx))
	for j, n := range names {
		c := t.Schema().FieldIndices(n)
		if len(c) == 0 {
			return nil, fmt.Errorf("ToStructs: field %s: %w", typ.Field(idx[j]).Name,
				columnError(n, schemaNames(t.Schema())))
		}
		colOf[j] = c[0]
	}
	out := make([]T, t.NumRows())
	tr := array.NewTableReader(t, 64*1024)
	defer tr.Release()
	row := 0
	for tr.Next() {
		rec := tr.RecordBatch()
		for r := range int(rec.NumRows()) {
			v := reflect.ValueOf(&out[row]).Elem()
			for j, i := range idx {
				gv, err := goValue(rec.Column(colOf[j]), r)
				if err != nil {
					return nil, err
				}
				if err := setField(v.Field(i), gv); err != nil {
					return nil, fmt.Errorf("ToStructs: row %d column %q: %w", row, names[j], err)
				}
			}
			row++
		}
	}
	return out, tr.Err()
}

func setField(f reflect.Value, v any) error {
	if v == nil {
		f.SetZero()
		return nil
	}
	if f.Kind() == reflect.Pointer {
		p := reflect.New(f.Type().Elem())
		if err := setField(p.Elem(), v); err != nil {
			return err
		}
		f.Set(p)
		return nil
	}
	rv := reflect.ValueOf(v)
	switch {
	case rv.Type().AssignableTo(f.Type()):
		f.Set(rv)
	case isNumberKind(rv.Kind()) && isNumberKind(f.Kind()):
		f.Set(rv.Convert(f.Type()))
	default:
		return fmt.Errorf("a %T does not fit a field of type %s", v, f.Type())
	}
	return nil
}

func isNumberKind(k reflect.Kind) bool { return k >= reflect.Int && k <= reflect.Float64 }

// goValue returns element i of an array as a Go value: nil for null,
// bool, int64, uint64, float64, string, time.Time or time.Duration.
func goValue(a arrow.Array, i int) (any, error) {
	if a.IsNull(i) {
		return nil, nil
	}
	switch a := a.(type) {
	case *array.Boolean:
		return a.Value(i), nil
	case *array.Int8:
		return int64(a.Value(i)), nil
	case *array.Int16:
		return int64(a.Value(i)), nil
	case *array.Int32:
		return int64(a.Value(i)), nil
	case *array.Int64:
		return a.Value(i), nil
	case *array.Uint8:
		return uint64(a.Value(i)), nil
	case *array.Uint16:
		return uint64(a.Value(i)), nil
	case *array.Uint32:
		return uint64(a.Value(i)), nil
	case *array.Uint64:
		return a.Value(i), nil
	case *array.Float32:
		return float64(a.Value(i)), nil
	case *array.Float64:
		return a.Value(i), nil
	case *array.String:
		return a.Value(i), nil
	case *array.LargeString:
		return a.Value(i), nil
	case *array.Date32:
		return a.Value(i).ToTime(), nil
	case *array.Timestamp:
		tt := a.DataType().(*arrow.TimestampType)
		t := a.Value(i).ToTime(tt.Unit)
		if tt.TimeZone != "" {
			if loc, err := time.LoadLocation(tt.TimeZone); err == nil {
				t = t.In(loc)
			}
		}
		return t, nil
	case *array.Duration:
		u := a.DataType().(*arrow.DurationType).Unit
		return time.Duration(a.Value(i)) * u.Multiplier(), nil
	case *array.Dictionary:
		return goValue(a.Dictionary(), a.GetValueIndex(i))
	}
	return nil, fmt.Errorf("no Go value for a %s column", a.DataType())
}

// checkRecordFunc checks that fn is registered as a function from record
// to record.
func checkRecordFunc(fn string) error {
	_, err := recordFuncParams(fn)
	return err
}

// recordFuncParams returns the params of a call of the registered record
// function fn on the partition (the task's first input).
func recordFuncParams(fn string) ([]byte, error) {
	d := graph.Call(fn, graph.FromKey("partition"))
	if err := d.Err(); err != nil {
		return nil, err
	}
	if t := d.Type(); t != nil && !t.Implements(reflect.TypeFor[arrow.RecordBatch]()) {
		return nil, fmt.Errorf("%s returns a %s; a partition function returns an arrow.RecordBatch", fn, t)
	}
	g, err := d.Graph()
	if err != nil {
		return nil, err
	}
	task, _ := g.Get(d.Key())
	return task.Params, nil
}
