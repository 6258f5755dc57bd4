package parquet

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/io/storage"
)

// values returns the Go values of an array, nil for nulls: dictionary
// arrays as their values, timestamps, dates and times as their integers,
// decimals as their unscaled integer strings.
func goValues(t testing.TB, a arrow.Array) []any {
	t.Helper()
	out := make([]any, a.Len())
	for i := range a.Len() {
		if a.IsNull(i) {
			continue
		}
		switch c := a.(type) {
		case *array.Boolean:
			out[i] = c.Value(i)
		case *array.Int8:
			out[i] = c.Value(i)
		case *array.Int16:
			out[i] = c.Value(i)
		case *array.Int32:
			out[i] = c.Value(i)
		case *array.Int64:
			out[i] = c.Value(i)
		case *array.Uint8:
			out[i] = c.Value(i)
		case *array.Uint16:
			out[i] = c.Value(i)
		case *array.Uint32:
			out[i] = c.Value(i)
		case *array.Uint64:
			out[i] = c.Value(i)
		case *array.Float32:
			out[i] = c.Value(i)
		case *array.Float64:
			out[i] = c.Value(i)
		case *array.String:
			out[i] = c.Value(i)
		case *array.LargeString:
			out[i] = c.Value(i)
		case *array.Binary:
			out[i] = string(c.Value(i))
		case *array.LargeBinary:
			out[i] = string(c.Value(i))
		case *array.Date64:
			out[i] = int64(c.Value(i))
		case *array.FixedSizeBinary:
			out[i] = string(c.Value(i))
		case *array.Date32:
			out[i] = int32(c.Value(i))
		case *array.Timestamp:
			out[i] = int64(c.Value(i))
		case *array.Time32:
			out[i] = int32(c.Value(i))
		case *array.Time64:
			out[i] = int64(c.Value(i))
		case *array.Decimal128:
			out[i] = c.Value(i).BigInt().String()
		case *array.Dictionary:
			out[i] = goValues(t, c.Dictionary())[c.GetValueIndex(i)]
		default:
			t.Fatalf("goValues: array of type %s", a.DataType())
		}
	}
	return out
}

// equalValues compares value lists, NaN equal to NaN.
func equalValues(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		fa, ok1 := a[i].(float64)
		fb, ok2 := b[i].(float64)
		if ok1 && ok2 && math.IsNaN(fa) && math.IsNaN(fb) {
			continue
		}
		if !reflect.DeepEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

// readAllParts plans and reads paths, returning the columns' values over all
// parts, and the plan.
func readAllParts(t testing.TB, paths []string, opts Options) (map[string][]any, *Plan) {
	t.Helper()
	ctx := context.Background()
	plan, err := PlanRead(ctx, storage.Local{}, paths, opts)
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	cols := map[string][]any{}
	for _, f := range plan.Schema.Fields() {
		cols[f.Name] = []any{}
	}
	for i := range plan.Parts {
		rec, err := ReadPart(ctx, storage.Local{}, plan, i, mem)
		if err != nil {
			t.Fatal(err)
		}
		if !rec.Schema().Equal(plan.Schema) {
			t.Fatalf("part %d schema %s, plan %s", i, rec.Schema(), plan.Schema)
		}
		if rec.NumRows() != plan.Parts[i].Rows {
			t.Fatalf("part %d has %d rows, plan says %d", i, rec.NumRows(), plan.Parts[i].Rows)
		}
		for j, c := range rec.Columns() {
			if err := array.ValidateFull(c); err != nil {
				t.Fatalf("part %d column %s: invalid array: %v", i, rec.ColumnName(j), err)
			}
			name := rec.ColumnName(j)
			if d, ok := c.(*array.Dictionary); ok {
				seen := map[any]bool{}
				for _, v := range goValues(t, d.Dictionary()) {
					if seen[v] {
						t.Fatalf("part %d column %s: dictionary holds %q twice", i, name, v)
					}
					seen[v] = true
				}
			}
			cols[name] = append(cols[name], goValues(t, c)...)
		}
		rec.Release()
	}
	return cols, plan
}

func days(s string) int32 {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return int32(d.Unix() / 86400)
}

func ts(s string, unit time.Duration) int64 {
	d, err := time.Parse("2006-01-02 15:04:05.999999999Z07:00", s)
	if err != nil {
		panic(fmt.Sprintf("%s: %v", s, err))
	}
	return d.UnixNano() / int64(unit)
}
