package rows

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/dftest"
)

var tDict = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}

func col(t *testing.T, c dftest.Column) arrow.Array {
	return dftest.Record(t, c).Column(0)
}

func rec1(t *testing.T, a arrow.Array) arrow.RecordBatch {
	r := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "v", Type: a.DataType(), Nullable: true}}, nil), []arrow.Array{a}, int64(a.Len()))
	t.Cleanup(r.Release)
	return r
}

func checked(t *testing.T) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

func TestEncoderInsert(t *testing.T) {
	N := NoID
	tests := []struct {
		name       string
		cols       []dftest.Column
		nullsEqual bool
		want       []uint32
	}{
		{"ints, small range", []dftest.Column{dftest.Int64s("a", 5, 3, 5, nil, 3, nil)}, true, []uint32{0, 1, 0, 2, 1, 2}},
		{"ints, nulls never match", []dftest.Column{dftest.Int64s("a", 5, 3, 5, nil, 3, nil)}, false, []uint32{0, 1, 0, N, 1, N}},
		{"ints, wide range", []dftest.Column{dftest.Int64s("a", math.MaxInt64, math.MinInt64, math.MaxInt64, 0)}, true, []uint32{0, 1, 0, 2}},
		{"uint64", []dftest.Column{dftest.Int64s("a", uint64(math.MaxUint64), uint64(1), uint64(math.MaxUint64)).As(arrow.PrimitiveTypes.Uint64)}, true, []uint32{0, 1, 0}},
		{"strings", []dftest.Column{dftest.Strings("a", "", "x", "a-string-of-more-than-16", "", nil, "a-string-of-more-than-16", "a-string-of-more-than-17")}, true,
			[]uint32{0, 1, 2, 0, 3, 2, 4}},
		{"dictionary", []dftest.Column{dftest.Strings("a", "q", nil, "p", "q", nil).As(tDict)}, true, []uint32{0, 1, 2, 0, 1}},
		{"dictionary, nulls never match", []dftest.Column{dftest.Strings("a", "q", nil, "p", "q").As(tDict)}, false, []uint32{0, N, 1, 0}},
		{"bools", []dftest.Column{dftest.Bools("a", true, nil, false, true)}, true, []uint32{0, 1, 2, 0}},
		// NaN is one value with nullsEqual, no match otherwise; -0 is 0.
		{"floats", []dftest.Column{dftest.Float64s("a", 0.0, math.NaN(), -0.0, math.NaN(), 1)}, true, []uint32{0, 1, 0, 1, 2}},
		{"floats, NaN never matches", []dftest.Column{dftest.Float64s("a", 0.0, math.NaN(), -0.0, math.NaN(), 1)}, false, []uint32{0, N, 0, N, 1}},
		{"two columns", []dftest.Column{dftest.Int64s("a", 1, 1, 2, 1, nil), dftest.Strings("b", "x", "y", "x", "x", "x")}, true, []uint32{0, 1, 2, 0, 3}},
		{"two columns, null", []dftest.Column{dftest.Int64s("a", 1, 1, nil), dftest.Strings("b", "x", nil, "x")}, false, []uint32{0, N, N}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var types []arrow.DataType
			var cols []arrow.Array
			for _, c := range tt.cols {
				a := col(t, c)
				types, cols = append(types, a.DataType()), append(cols, a)
			}
			e, err := NewEncoder(types, tt.nullsEqual)
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.Insert(context.Background(), cols)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("ids %v, want %v", got, tt.want)
			}
			// Looking the same rows up finds the same ids.
			again, err := e.Lookup(context.Background(), cols)
			if err != nil {
				t.Fatal(err)
			}
			if tt.nullsEqual && !slices.Equal(again, tt.want) {
				t.Errorf("lookup %v, want %v", again, tt.want)
			}
		})
	}
}

func TestEncoderLookupTypes(t *testing.T) {
	N := NoID
	tsType := func(u arrow.TimeUnit) arrow.DataType { return &arrow.TimestampType{Unit: u, TimeZone: "UTC"} }
	tests := []struct {
		name          string
		build, lookup dftest.Column
		want          []uint32
	}{
		{"int64 by int32", dftest.Int64s("a", 7, -1, 1<<40), dftest.Int64s("a", -1, 7, 8, nil).As(arrow.PrimitiveTypes.Int32), []uint32{1, 0, N, N}},
		{"uint64 by int64", dftest.Int64s("a", uint64(math.MaxUint64), uint64(3)).As(arrow.PrimitiveTypes.Uint64), dftest.Int64s("a", -1, 3), []uint32{N, 1}},
		{"int64 by uint64", dftest.Int64s("a", -1, 3), dftest.Int64s("a", uint64(math.MaxUint64), uint64(3)).As(arrow.PrimitiveTypes.Uint64), []uint32{N, 1}},
		{"uint8 by int8", dftest.Int64s("a", 200, 5).As(arrow.PrimitiveTypes.Uint8), dftest.Int64s("a", -56, 5).As(arrow.PrimitiveTypes.Int8), []uint32{N, 1}},
		{"ns by ms", dftest.Timestamps("a", "2024-01-01T00:00:00.001Z", "2024-01-01T00:00:00.000000001Z").As(tsType(arrow.Nanosecond)),
			dftest.Timestamps("a", "2024-01-01T00:00:00.001Z", "2024-01-01T00:00:00Z").As(tsType(arrow.Millisecond)), []uint32{0, N}},
		{"ms by ns", dftest.Timestamps("a", "2024-01-01T00:00:00.001Z").As(tsType(arrow.Millisecond)),
			dftest.Timestamps("a", "2024-01-01T00:00:00.001000001Z", "2024-01-01T00:00:00.001Z").As(tsType(arrow.Nanosecond)), []uint32{N, 0}},
		{"s by ns, far", dftest.Timestamps("a", "2024-01-01T00:00:00Z").As(tsType(arrow.Second)),
			dftest.Timestamps("a", "2024-01-01T00:00:00Z").As(tsType(arrow.Nanosecond)), []uint32{0}},
		{"date64 by date32", dftest.Dates("a", "2024-02-29", "1969-12-31").As(arrow.FixedWidthTypes.Date64), dftest.Dates("a", "1969-12-31", "2024-02-29", "2000-01-01"), []uint32{1, 0, N}},
		{"string by dictionary", dftest.Strings("a", "x", "yy"), dftest.Strings("a", "yy", "zz", "yy", nil, "x").As(tDict), []uint32{1, N, 1, N, 0}},
		{"large string by string", dftest.Strings("a", "x").As(arrow.BinaryTypes.LargeString), dftest.Strings("a", "x", "y"), []uint32{0, N}},
		{"float64 by float32", dftest.Float64s("a", 0.5, 0.1), dftest.Float64s("a", 0.5, 0.1, math.NaN()).As(arrow.PrimitiveTypes.Float32), []uint32{0, N, N}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, l := col(t, tt.build), col(t, tt.lookup)
			e, err := NewEncoder([]arrow.DataType{b.DataType()}, false)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.Insert(context.Background(), []arrow.Array{b}); err != nil {
				t.Fatal(err)
			}
			got, err := e.Lookup(context.Background(), []arrow.Array{l})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("ids %v, want %v", got, tt.want)
			}
		})
	}
	// Types that do not compare.
	e, _ := NewEncoder([]arrow.DataType{arrow.PrimitiveTypes.Int64}, false)
	if _, err := e.Lookup(context.Background(), []arrow.Array{col(t, dftest.Strings("a", "1"))}); err == nil {
		t.Error("lookup of strings in an integer encoder: no error")
	}
	if err := Comparable(&arrow.TimestampType{Unit: arrow.Second}, &arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"}); err == nil {
		t.Error("timestamps with and without a zone compare")
	}
	if _, err := NewEncoder([]arrow.DataType{arrow.ListOf(arrow.PrimitiveTypes.Int64)}, true); err == nil {
		t.Error("a list key: no error")
	}
}

// TestEncoderRandom checks ids against a map, across several Insert calls
// (chunks, table growth, the lookup table and the hash table together).
func TestEncoderRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, spread := range []int64{1, 1 << 40} {
		e, _ := NewEncoder([]arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String}, true)
		ref := map[[2]any]uint32{}
		for batch := range 3 {
			n := 70000 + r.IntN(1000)
			if batch == 1 {
				n = 10
			}
			a, b := make([]any, n), make([]any, n)
			for i := range n {
				a[i] = int64(r.IntN(3000)) * spread
				if batch == 2 {
					a[i] = a[i].(int64) + 5000*spread // outside the first batch's range
				}
				b[i] = []string{"x", "y", "a-long-string-of-many-bytes"}[r.IntN(3)]
				if r.IntN(100) == 0 {
					b[i] = nil
				}
			}
			ids, err := e.Insert(context.Background(), []arrow.Array{col(t, dftest.Int64s("a", a...)), col(t, dftest.Strings("b", b...))})
			if err != nil {
				t.Fatal(err)
			}
			for i := range n {
				k := [2]any{a[i], b[i]}
				want, ok := ref[k]
				if !ok {
					want = uint32(len(ref))
					ref[k] = want
				}
				if ids[i] != want {
					t.Fatalf("spread %d batch %d row %d: id %d, want %d", spread, batch, i, ids[i], want)
				}
			}
			if e.Len() != len(ref) {
				t.Fatalf("Len %d, want %d", e.Len(), len(ref))
			}
		}
	}
}

func TestTake(t *testing.T) {
	ctx := context.Background()
	mem := checked(t)
	idx := []int32{2, -1, 0, 2}
	dec := func() arrow.Array {
		b := array.NewDecimal128Builder(memory.DefaultAllocator, &arrow.Decimal128Type{Precision: 10, Scale: 2})
		defer b.Release()
		b.Append(decimal128.FromI64(1))
		b.AppendNull()
		b.Append(decimal128.FromI64(3))
		return b.NewArray()
	}()
	defer dec.Release()
	lst := func() arrow.Array {
		b := array.NewListBuilder(memory.DefaultAllocator, arrow.PrimitiveTypes.Int64)
		defer b.Release()
		vb := b.ValueBuilder().(*array.Int64Builder)
		b.Append(true)
		vb.Append(1)
		b.AppendNull()
		b.Append(true)
		vb.Append(3)
		vb.Append(4)
		return b.NewArray()
	}()
	defer lst.Release()
	tests := []struct {
		name string
		in   arrow.Array
		want arrow.Array
	}{
		{"int64", col(t, dftest.Int64s("v", 1, nil, 3)), col(t, dftest.Int64s("v", 3, nil, 1, 3))},
		{"int8", col(t, dftest.Int64s("v", 1, 2, 3).As(arrow.PrimitiveTypes.Int8)), col(t, dftest.Int64s("v", 3, nil, 1, 3).As(arrow.PrimitiveTypes.Int8))},
		{"float32", col(t, dftest.Float64s("v", 1, 2, 3).As(arrow.PrimitiveTypes.Float32)), col(t, dftest.Float64s("v", 3, nil, 1, 3).As(arrow.PrimitiveTypes.Float32))},
		{"bool", col(t, dftest.Bools("v", true, false, true)), col(t, dftest.Bools("v", true, nil, true, true))},
		{"string", col(t, dftest.Strings("v", "a", "", "ccc")), col(t, dftest.Strings("v", "ccc", nil, "a", "ccc"))},
		{"large string", col(t, dftest.Strings("v", "a", nil, "ccc").As(arrow.BinaryTypes.LargeString)), col(t, dftest.Strings("v", "ccc", nil, "a", "ccc").As(arrow.BinaryTypes.LargeString))},
		{"binary", col(t, dftest.Strings("v", "a", nil, "ccc").As(arrow.BinaryTypes.Binary)), col(t, dftest.Strings("v", "ccc", nil, "a", "ccc").As(arrow.BinaryTypes.Binary))},
		{"dictionary", col(t, dftest.Strings("v", "a", nil, "ccc").As(tDict)), col(t, dftest.Strings("v", "ccc", nil, "a", "ccc").As(tDict))},
		{"timestamp", col(t, dftest.Timestamps("v", "2024-01-01", nil, "2025-01-01")), col(t, dftest.Timestamps("v", "2025-01-01", nil, "2024-01-01", "2025-01-01"))},
		{"sliced", array.NewSlice(col(t, dftest.Int64s("v", 9, 9, 1, nil, 3)), 2, 5), col(t, dftest.Int64s("v", 3, nil, 1, 3))},
		{"sliced strings", array.NewSlice(col(t, dftest.Strings("v", "z", "a", nil, "ccc")), 1, 4), col(t, dftest.Strings("v", "ccc", nil, "a", "ccc"))},
		{"sliced bools", array.NewSlice(col(t, dftest.Bools("v", false, true, false, false)), 1, 4), col(t, dftest.Bools("v", false, nil, true, false))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Take(ctx, mem, tt.in, idx)
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			dftest.AssertEqual(t, rec1(t, got), rec1(t, tt.want))
		})
	}
	// Decimals and lists: compared with Arrow's own equality.
	for _, in := range []arrow.Array{dec, lst} {
		got, err := Take(ctx, mem, in, idx)
		if err != nil {
			t.Fatal(err)
		}
		for j, r := range idx {
			if r < 0 {
				if !got.IsNull(j) {
					t.Errorf("%s row %d: not null", in.DataType(), j)
				}
				continue
			}
			if !array.SliceEqual(got, int64(j), int64(j+1), in, int64(r), int64(r+1)) {
				t.Errorf("%s row %d: %v, want row %d of %v", in.DataType(), j, got, r, in)
			}
		}
		got.Release()
	}
}

func TestCoalesce(t *testing.T) {
	ctx := context.Background()
	mem := checked(t)
	ai, bi := []int32{0, -1, 1, -1}, []int32{1, 0, -1, -1}
	for _, tt := range []struct {
		a, b, want dftest.Column
	}{
		{dftest.Int64s("v", 1, nil), dftest.Int64s("v", 10, 20), dftest.Int64s("v", 1, 10, nil, nil)},
		{dftest.Strings("v", "a", nil), dftest.Strings("v", "x", "y"), dftest.Strings("v", "a", "x", nil, nil)},
	} {
		got, err := Coalesce(ctx, mem, col(t, tt.a), ai, col(t, tt.b), bi)
		if err != nil {
			t.Fatal(err)
		}
		dftest.AssertEqual(t, rec1(t, got), rec1(t, col(t, tt.want)))
		got.Release()
	}
	if _, err := Coalesce(ctx, mem, col(t, dftest.Int64s("v", 1)), []int32{0}, col(t, dftest.Strings("v", "a")), []int32{0}); err == nil {
		t.Error("coalesce of two types: no error")
	}
}

func TestGroupAndFirstRows(t *testing.T) {
	ids := []uint32{0, 1, 0, NoID, 2, 1, 0}
	starts, order := Group(ids, 3)
	if !slices.Equal(starts, []int32{0, 3, 5, 6}) || !slices.Equal(order, []int32{0, 2, 6, 1, 5, 4}) {
		t.Errorf("Group = %v %v", starts, order)
	}
	if f := FirstRows(ids, 3); !slices.Equal(f, []int32{0, 1, 4}) {
		t.Errorf("FirstRows = %v", f)
	}
}

func TestComparator(t *testing.T) {
	for _, tt := range []struct {
		c    dftest.Column
		desc bool
		want []int32
	}{
		{dftest.Float64s("v", 2, nil, math.NaN(), 1, 3), false, []int32{3, 0, 4, 1, 2}},
		{dftest.Float64s("v", 2, nil, math.NaN(), 1, 3), true, []int32{4, 0, 3, 1, 2}},
		{dftest.Strings("v", "b", nil, "a").As(tDict), false, []int32{2, 0, 1}},
		{dftest.Bools("v", true, false), false, []int32{1, 0}},
	} {
		a := col(t, tt.c)
		cmp := Comparator(a, tt.desc)
		got := make([]int32, a.Len())
		for i := range got {
			got[i] = int32(i)
		}
		slices.SortStableFunc(got, cmp)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s desc=%v: %v, want %v", a, tt.desc, got, tt.want)
		}
	}
	if Comparator(col(t, dftest.Durations("v", "1s")), false) == nil {
		t.Error("durations have an order")
	}
}

func TestEstimateDistinct(t *testing.T) {
	for _, tt := range []struct{ d, k, n, lo, hi int }{
		{100, 65536, 10_000_000, 100, 100},                 // few values: no estimate beyond d
		{65536, 65536, 10_000_000, 10_000_000, 10_000_000}, // all new: n
		{63_430, 65536, 10_000_000, 950_000, 1_050_000},    // 1M values drawn uniformly
		{65_322, 65536, 10_000_000, 8_000_000, 10_000_000}, // 10M values
		{65_535, 65536, 1_000_000, 1_000_000, 1_000_000},   // capped at n
	} {
		if got := estimateDistinct(tt.d, tt.k, tt.n); got < tt.lo || got > tt.hi {
			t.Errorf("estimateDistinct(%d, %d, %d) = %d, want in [%d, %d]", tt.d, tt.k, tt.n, got, tt.lo, tt.hi)
		}
	}
}
