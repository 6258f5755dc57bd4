package sortk

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// keyTypes are the key types the tests cover, by name.
var keyTypes = []string{
	"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
	"float32", "float64", "bool", "string", "large_string", "binary",
	"date32", "timestamp", "duration", "time64", "dict",
}

func arrowType(name string) arrow.DataType {
	switch name {
	case "int8":
		return arrow.PrimitiveTypes.Int8
	case "int16":
		return arrow.PrimitiveTypes.Int16
	case "int32":
		return arrow.PrimitiveTypes.Int32
	case "int64":
		return arrow.PrimitiveTypes.Int64
	case "uint8":
		return arrow.PrimitiveTypes.Uint8
	case "uint16":
		return arrow.PrimitiveTypes.Uint16
	case "uint32":
		return arrow.PrimitiveTypes.Uint32
	case "uint64":
		return arrow.PrimitiveTypes.Uint64
	case "float32":
		return arrow.PrimitiveTypes.Float32
	case "float64":
		return arrow.PrimitiveTypes.Float64
	case "bool":
		return arrow.FixedWidthTypes.Boolean
	case "string":
		return arrow.BinaryTypes.String
	case "large_string":
		return arrow.BinaryTypes.LargeString
	case "binary":
		return arrow.BinaryTypes.Binary
	case "date32":
		return arrow.FixedWidthTypes.Date32
	case "timestamp":
		return &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}
	case "duration":
		return arrow.FixedWidthTypes.Duration_ms
	case "time64":
		return arrow.FixedWidthTypes.Time64us
	case "dict":
		return &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}
	}
	panic("unknown type " + name)
}

// gen describes random column data.
type gen struct {
	nulls float64 // fraction of nulls
	nans  float64 // fraction of NaN (floats)
	card  int     // number of distinct values; 0: any
	skew  float64 // fraction of rows holding one value
}

var prefixes = []string{"", "id000000", "a-common-prefix-of-thirty-bytes-", "x"}

// genString makes strings with shared prefixes of several lengths, so that
// sorts must look past the first 8 and 16 bytes.
func genString(v uint64) string {
	p := prefixes[v%uint64(len(prefixes))]
	return p + strconv.FormatUint(v/uint64(len(prefixes)), 36)
}

// genArray returns a random array of the named type.
func genArray(rng *rand.Rand, mem memory.Allocator, name string, n int, g gen) arrow.Array {
	b := array.NewBuilder(mem, arrowType(name))
	defer b.Release()
	for range n {
		if rng.Float64() < g.nulls {
			b.AppendNull()
			continue
		}
		var v uint64
		switch {
		case g.skew > 0 && rng.Float64() < g.skew:
			v = 7
		case g.card > 0:
			v = uint64(rng.IntN(g.card))
		default:
			v = rng.Uint64()
		}
		nan := rng.Float64() < g.nans
		appendValue(b, name, v, g.card > 0, nan)
	}
	return b.NewArray()
}

func appendValue(b array.Builder, name string, v uint64, small, nan bool) {
	sv := int64(v) // in small domains: 0..card, shifted to cover negatives
	if small {
		sv = int64(v) - 3
	}
	switch bb := b.(type) {
	case *array.Int8Builder:
		bb.Append(int8(sv))
	case *array.Int16Builder:
		bb.Append(int16(sv))
	case *array.Int32Builder:
		bb.Append(int32(sv))
	case *array.Int64Builder:
		bb.Append(sv)
	case *array.Uint8Builder:
		bb.Append(uint8(v))
	case *array.Uint16Builder:
		bb.Append(uint16(v))
	case *array.Uint32Builder:
		bb.Append(uint32(v))
	case *array.Uint64Builder:
		bb.Append(v)
	case *array.Float32Builder:
		f := float32(sv) / 4
		if !small {
			f = float32(math.Float64frombits(v>>2 | 0x3000000000000000))
			if v&1 == 1 {
				f = -f
			}
		}
		if v%17 == 5 {
			f = float32(math.Copysign(0, -1)) // -0 equals 0
		}
		if nan {
			f = float32(math.NaN())
		}
		bb.Append(f)
	case *array.Float64Builder:
		f := float64(sv) / 4
		if !small {
			f = math.Float64frombits(v >> 1)
			if v&1 == 1 {
				f = -f
			}
			if v%29 == 3 {
				f = math.Inf(int(v%2)*2 - 1)
			}
		}
		if v%17 == 5 {
			f = math.Copysign(0, -1)
		}
		if nan {
			f = math.NaN()
		}
		bb.Append(f)
	case *array.BooleanBuilder:
		bb.Append(v%2 == 1)
	case *array.StringBuilder:
		bb.Append(genString(v))
	case *array.LargeStringBuilder:
		bb.Append(genString(v))
	case *array.BinaryBuilder:
		bb.Append([]byte(genString(v)))
	case *array.Date32Builder:
		bb.Append(arrow.Date32(sv))
	case *array.TimestampBuilder:
		bb.Append(arrow.Timestamp(sv))
	case *array.DurationBuilder:
		bb.Append(arrow.Duration(sv))
	case *array.Time64Builder:
		bb.Append(arrow.Time64(sv))
	case *array.BinaryDictionaryBuilder:
		if err := bb.AppendString(genString(v % 3000)); err != nil {
			panic(err)
		}
	default:
		panic(fmt.Sprintf("no builder for %s (%T)", name, b))
	}
}

// refVal is a key value as the reference sort sees it.
type refVal struct {
	null, nan bool
	i         int64
	u         uint64
	f         float64
	s         string
}

// refValues reads the values of arr one by one through Arrow's accessors.
func refValues(arr arrow.Array) []refVal {
	out := make([]refVal, arr.Len())
	if d, ok := arr.(*array.Dictionary); ok {
		entries := refValues(d.Dictionary())
		for i := range out {
			if d.IsNull(i) {
				out[i].null = true
			} else {
				out[i] = entries[d.GetValueIndex(i)]
			}
		}
		return out
	}
	for i := range out {
		if arr.IsNull(i) {
			out[i].null = true
			continue
		}
		switch a := arr.(type) {
		case *array.Int8:
			out[i].i = int64(a.Value(i))
		case *array.Int16:
			out[i].i = int64(a.Value(i))
		case *array.Int32:
			out[i].i = int64(a.Value(i))
		case *array.Int64:
			out[i].i = a.Value(i)
		case *array.Uint8:
			out[i].u = uint64(a.Value(i))
		case *array.Uint16:
			out[i].u = uint64(a.Value(i))
		case *array.Uint32:
			out[i].u = uint64(a.Value(i))
		case *array.Uint64:
			out[i].u = a.Value(i)
		case *array.Float32:
			out[i].f = float64(a.Value(i))
			out[i].nan = math.IsNaN(out[i].f)
		case *array.Float64:
			out[i].f = a.Value(i)
			out[i].nan = math.IsNaN(out[i].f)
		case *array.Boolean:
			if a.Value(i) {
				out[i].u = 1
			}
		case *array.String:
			out[i].s = a.Value(i)
		case *array.LargeString:
			out[i].s = a.Value(i)
		case *array.Binary:
			out[i].s = string(a.Value(i))
		case *array.Date32:
			out[i].i = int64(a.Value(i))
		case *array.Timestamp:
			out[i].i = int64(a.Value(i))
		case *array.Duration:
			out[i].i = int64(a.Value(i))
		case *array.Time64:
			out[i].i = int64(a.Value(i))
		default:
			panic(fmt.Sprintf("refValues: %T", arr))
		}
	}
	return out
}

// refCompare compares two values the way the package documents: values,
// then NaN, then nulls (reversed with NullsFirst), values by direction.
func refCompare(a, b refVal, k SortKey) int {
	place := func(v refVal) int {
		switch {
		case v.null:
			return 2
		case v.nan:
			return 1
		}
		return 0
	}
	pa, pb := place(a), place(b)
	if k.NullsFirst {
		pa, pb = -pa, -pb
	}
	if pa != pb {
		return cmp.Compare(pa, pb)
	}
	if pa != 0 {
		return 0
	}
	c := cmp.Or(cmp.Compare(a.i, b.i), cmp.Compare(a.u, b.u), cmp.Compare(a.f, b.f), strings.Compare(a.s, b.s))
	if k.Descending {
		c = -c
	}
	return c
}

// refSort is the reference: a stable sort of row numbers comparing values
// read one by one.
func refSort(rec arrow.RecordBatch, keys []SortKey) []int32 {
	vals := make([][]refVal, len(keys))
	for i, k := range keys {
		vals[i] = refValues(rec.Column(rec.Schema().FieldIndices(k.Column)[0]))
	}
	rows := make([]int32, rec.NumRows())
	for i := range rows {
		rows[i] = int32(i)
	}
	slices.SortStableFunc(rows, func(a, b int32) int {
		for i, k := range keys {
			if c := refCompare(vals[i][a], vals[i][b], k); c != 0 {
				return c
			}
		}
		return 0
	})
	return rows
}

// record builds a batch of named columns, releasing the arrays.
func record(names []string, cols []arrow.Array) arrow.RecordBatch {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: names[i], Type: c.DataType(), Nullable: true}
	}
	n := int64(0)
	if len(cols) > 0 {
		n = int64(cols[0].Len())
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, n)
	for _, c := range cols {
		c.Release()
	}
	return rec
}

// checkedMem returns an allocator that fails the test if anything
// allocated from it is still held when the test ends.
func checkedMem(t testing.TB) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

// firstDiff describes where two orders first differ, with the key values.
func firstDiff(rec arrow.RecordBatch, keys []SortKey, got, want []int32) string {
	if len(got) != len(want) {
		return fmt.Sprintf("got %d rows, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			var vals []string
			for _, k := range keys {
				c := rec.Column(rec.Schema().FieldIndices(k.Column)[0])
				vals = append(vals, fmt.Sprintf("%s: row %d=%v row %d=%v", k.Column, got[i], c.GetOneForMarshal(int(got[i])), want[i], c.GetOneForMarshal(int(want[i]))))
			}
			return fmt.Sprintf("position %d: got row %d, want row %d (%s)", i, got[i], want[i], strings.Join(vals, "; "))
		}
	}
	return ""
}
