package expr

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// column is a named array for building test records.
type column struct {
	name string
	arr  arrow.Array
}

func build[T any](mem memory.Allocator, t arrow.DataType, vals []any, app func(b array.Builder, v T)) arrow.Array {
	b := array.NewBuilder(mem, t)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
			continue
		}
		app(b, v.(T))
	}
	return b.NewArray()
}

var testMem = memory.DefaultAllocator

func i64s(vals ...any) arrow.Array {
	return build(testMem, arrow.PrimitiveTypes.Int64, vals, func(b array.Builder, v int) { b.(*array.Int64Builder).Append(int64(v)) })
}

func i32s(vals ...any) arrow.Array {
	return build(testMem, arrow.PrimitiveTypes.Int32, vals, func(b array.Builder, v int) { b.(*array.Int32Builder).Append(int32(v)) })
}

func i8s(vals ...any) arrow.Array {
	return build(testMem, arrow.PrimitiveTypes.Int8, vals, func(b array.Builder, v int) { b.(*array.Int8Builder).Append(int8(v)) })
}

func u8s(vals ...any) arrow.Array {
	return build(testMem, arrow.PrimitiveTypes.Uint8, vals, func(b array.Builder, v int) { b.(*array.Uint8Builder).Append(uint8(v)) })
}

func u64s(vals ...any) arrow.Array {
	return build(testMem, arrow.PrimitiveTypes.Uint64, vals, func(b array.Builder, v uint64) { b.(*array.Uint64Builder).Append(v) })
}

func bigI64s(vals ...any) arrow.Array {
	return build(testMem, arrow.PrimitiveTypes.Int64, vals, func(b array.Builder, v int64) { b.(*array.Int64Builder).Append(v) })
}

func toF64(v any) float64 {
	if i, ok := v.(int); ok {
		return float64(i)
	}
	return v.(float64)
}

func f64s(vals ...any) arrow.Array {
	return build(testMem, arrow.PrimitiveTypes.Float64, vals, func(b array.Builder, v any) { b.(*array.Float64Builder).Append(toF64(v)) })
}

func f32s(vals ...any) arrow.Array {
	return build(testMem, arrow.PrimitiveTypes.Float32, vals, func(b array.Builder, v any) { b.(*array.Float32Builder).Append(float32(toF64(v))) })
}

func bools(vals ...any) arrow.Array {
	return build(testMem, arrow.FixedWidthTypes.Boolean, vals, func(b array.Builder, v bool) { b.(*array.BooleanBuilder).Append(v) })
}

func strs(vals ...any) arrow.Array {
	return build(testMem, arrow.BinaryTypes.String, vals, func(b array.Builder, v string) { b.(*array.StringBuilder).Append(v) })
}

func lstrs(vals ...any) arrow.Array {
	return build(testMem, arrow.BinaryTypes.LargeString, vals, func(b array.Builder, v string) { b.(*array.LargeStringBuilder).Append(v) })
}

// dicts builds a dictionary<int32, utf8> array.
func dicts(vals ...any) arrow.Array {
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	b := array.NewDictionaryBuilder(testMem, dt).(*array.BinaryDictionaryBuilder)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
			continue
		}
		if err := b.AppendString(v.(string)); err != nil {
			panic(err)
		}
	}
	return b.NewArray()
}

// times builds a timestamp array from time.Time values.
func times(unit arrow.TimeUnit, tz string, vals ...any) arrow.Array {
	t := &arrow.TimestampType{Unit: unit, TimeZone: tz}
	return build(testMem, t, vals, func(b array.Builder, v time.Time) {
		ts, err := arrow.TimestampFromTime(v, unit)
		if err != nil {
			panic(err)
		}
		b.(*array.TimestampBuilder).Append(ts)
	})
}

func dates(vals ...any) arrow.Array {
	return build(testMem, arrow.FixedWidthTypes.Date32, vals, func(b array.Builder, v Date) {
		b.(*array.Date32Builder).Append(arrow.Date32(v.days()))
	})
}

func durs(unit arrow.TimeUnit, vals ...any) arrow.Array {
	return build(testMem, &arrow.DurationType{Unit: unit}, vals, func(b array.Builder, v time.Duration) {
		b.(*array.DurationBuilder).Append(arrow.Duration(int64(v / unit.Multiplier())))
	})
}

func record(cols ...column) arrow.RecordBatch {
	fields := make([]arrow.Field, len(cols))
	arrs := make([]arrow.Array, len(cols))
	var n int64
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.name, Type: c.arr.DataType(), Nullable: true}
		arrs[i] = c.arr
		n = int64(c.arr.Len())
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, n)
	for _, a := range arrs {
		a.Release()
	}
	return rec
}

func col(name string, a arrow.Array) column { return column{name, a} }

// goValues converts an array to Go values: nil for null, int64, uint64,
// float64 (float32 widened), bool, string, time.Time (UTC) for timestamps,
// Date for date32, time.Duration for durations; dictionaries are decoded.
func goValues(a arrow.Array) []any {
	out := make([]any, a.Len())
	if a.DataType().ID() == arrow.NULL {
		return out
	}
	for i := range out {
		if a.IsNull(i) {
			continue
		}
		switch a := a.(type) {
		case *array.Int64:
			out[i] = a.Value(i)
		case *array.Int32:
			out[i] = int64(a.Value(i))
		case *array.Int8:
			out[i] = int64(a.Value(i))
		case *array.Uint8:
			out[i] = uint64(a.Value(i))
		case *array.Uint64:
			out[i] = a.Value(i)
		case *array.Float64:
			out[i] = a.Value(i)
		case *array.Float32:
			out[i] = float64(a.Value(i))
		case *array.Boolean:
			out[i] = a.Value(i)
		case *array.String:
			out[i] = a.Value(i)
		case *array.LargeString:
			out[i] = a.Value(i)
		case *array.Timestamp:
			u := a.DataType().(*arrow.TimestampType).Unit
			out[i] = a.Value(i).ToTime(u).UTC()
		case *array.Date32:
			out[i] = dateFromDays(int64(a.Value(i)))
		case *array.Duration:
			u := a.DataType().(*arrow.DurationType).Unit
			out[i] = time.Duration(a.Value(i)) * u.Multiplier()
		case *array.Dictionary:
			dv := goValues(a.Dictionary())
			out[i] = dv[a.GetValueIndex(i)]
		default:
			out[i] = fmt.Sprintf("<%T>", a)
		}
	}
	return out
}

// sameValues compares value lists, NaN equal to NaN.
func sameValues(got, want []any) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		g, w := got[i], want[i]
		if gf, ok := g.(float64); ok {
			if wf, ok := w.(float64); ok && math.IsNaN(gf) && math.IsNaN(wf) {
				continue
			}
		}
		if gt, ok := g.(time.Time); ok {
			if wt, ok := w.(time.Time); ok && gt.Equal(wt) {
				continue
			}
		}
		if g != w {
			return false
		}
	}
	return true
}

// evalOne evaluates e over rec with a checked allocator and returns the Go
// values and the type, failing t on error. It checks that the result has
// the type Type reports and that no memory leaks.
func evalOne(t *testing.T, rec arrow.RecordBatch, e Expr) ([]any, arrow.DataType) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	want, err := e.Type(rec.Schema())
	if err != nil {
		t.Fatalf("%s: Type: %v", e, err)
	}
	ev := NewEvaluator(rec, mem)
	defer ev.Release()
	arr, err := ev.Eval(context.Background(), e)
	if err != nil {
		t.Fatalf("%s: Eval: %v", e, err)
	}
	defer arr.Release()
	if !arrow.TypeEqual(arr.DataType(), want) {
		t.Errorf("%s: result type %s, Type says %s", e, arr.DataType(), want)
	}
	if arr.Len() != int(rec.NumRows()) {
		t.Errorf("%s: %d rows, want %d", e, arr.Len(), rec.NumRows())
	}
	if v, ok := arr.(interface{ ValidateFull() error }); ok {
		// Invalid UTF-8 passes through string functions unchanged.
		if err := v.ValidateFull(); err != nil && !strings.Contains(err.Error(), "not valid utf8") {
			t.Errorf("%s: invalid result: %v", e, err)
		}
	}
	return goValues(arr), arr.DataType()
}

func vals(v ...any) []any { return v }

func newRecordBuilder(s *arrow.Schema) *array.RecordBuilder {
	return array.NewRecordBuilder(testMem, s)
}
