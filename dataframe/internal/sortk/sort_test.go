package sortk

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Every key type, both directions, both null placements, sizes on both
// sides of the comparison/radix thresholds, small and large domains, with
// nulls and NaN: SortIndices must give the reference's stable order.
func TestSortIndicesOneKey(t *testing.T) {
	ctx := context.Background()
	sizes := []int{0, 1, 2, 20, 300, 5000}
	gens := map[string]gen{
		"distinct":   {},
		"dups":       {card: 12},
		"nulls":      {nulls: 0.2, card: 50, nans: 0.1},
		"skewed":     {skew: 0.9, card: 1000, nulls: 0.02},
		"all-nulls":  {nulls: 1},
		"nans-large": {nans: 0.3, nulls: 0.1},
	}
	for ti, typ := range keyTypes {
		for gname, g := range gens {
			for si, n := range sizes {
				for _, dir := range []SortKey{{}, {Descending: true}, {NullsFirst: true}, {Descending: true, NullsFirst: true}} {
					key := dir
					key.Column = "k"
					name := fmt.Sprintf("%s/%s/%d/%s", typ, gname, n, key)
					rng := rand.New(rand.NewPCG(uint64(ti), uint64(si*100+len(gname))))
					rec := record([]string{"k"}, []arrow.Array{genArray(rng, memory.DefaultAllocator, typ, n, g)})
					got, err := SortIndices(ctx, rec, []SortKey{key})
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					want := refSort(rec, []SortKey{key})
					if d := firstDiff(rec, []SortKey{key}, got, want); d != "" {
						t.Errorf("%s: %s", name, d)
					}
					rec.Release()
				}
			}
		}
	}
}

// Several keys of mixed types and directions, small domains so that ties
// reach the later keys.
func TestSortIndicesManyKeys(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		types []string
		keys  []SortKey
		gens  []gen
	}{
		{[]string{"string", "int64"}, []SortKey{{Column: "c0"}, {Column: "c1", Descending: true}},
			[]gen{{card: 20, nulls: 0.1}, {card: 30, nulls: 0.1}}},
		{[]string{"float64", "string", "uint8"}, []SortKey{{Column: "c0", NullsFirst: true}, {Column: "c1", Descending: true, NullsFirst: true}, {Column: "c2"}},
			[]gen{{card: 5, nulls: 0.2, nans: 0.2}, {card: 40, nulls: 0.05}, {card: 7}}},
		{[]string{"bool", "dict", "timestamp"}, []SortKey{{Column: "c0", Descending: true}, {Column: "c1"}, {Column: "c2", Descending: true}},
			[]gen{{nulls: 0.1}, {card: 3000, nulls: 0.1}, {card: 4}}},
		{[]string{"int32", "int32"}, []SortKey{{Column: "c1"}, {Column: "c0"}},
			[]gen{{}, {skew: 0.95, card: 10}}},
		{[]string{"large_string", "date32", "binary"}, []SortKey{{Column: "c0", Descending: true}, {Column: "c1", NullsFirst: true}, {Column: "c2"}},
			[]gen{{card: 6, skew: 0.5}, {card: 3, nulls: 0.3}, {card: 100}}},
	}
	for ci, c := range cases {
		for si, n := range []int{0, 1, 50, 2000, 20000} {
			rng := rand.New(rand.NewPCG(uint64(ci), uint64(si)))
			var names []string
			var cols []arrow.Array
			for i, typ := range c.types {
				names = append(names, fmt.Sprintf("c%d", i))
				cols = append(cols, genArray(rng, memory.DefaultAllocator, typ, n, c.gens[i]))
			}
			rec := record(names, cols)
			got, err := SortIndices(ctx, rec, c.keys)
			if err != nil {
				t.Fatal(err)
			}
			if d := firstDiff(rec, c.keys, got, refSort(rec, c.keys)); d != "" {
				t.Errorf("case %d (%s), %d rows: %s", ci, formatKeys(c.keys), n, d)
			}
			rec.Release()
		}
	}
}

// Strings that differ only past 8 or 16 bytes, by a trailing zero byte,
// or by length; the empty string.
func TestSortStringEdges(t *testing.T) {
	vals := []string{"", "ab", "ab\x00", "ab\x00c", "a", "abcdefgh", "abcdefgh\x00", "abcdefghi", "abcdefg",
		"abcdefghabcdefgh", "abcdefghabcdefgg", "abcdefghabcdefghZ", "\xff", "\x00", "", "ab", "abcdefghabcdefgh"}
	var all []string
	for i := range 60 { // past the comparison-sort size, so the chunk sort runs
		all = append(all, vals[(i*7)%len(vals)])
	}
	for _, strs := range [][]string{vals, all} {
		b := array.NewStringBuilder(memory.DefaultAllocator)
		b.AppendValues(strs, nil)
		rec := record([]string{"s", "i"}, []arrow.Array{b.NewArray(), seq(len(strs))})
		b.Release()
		for _, key := range []SortKey{{Column: "s"}, {Column: "s", Descending: true}} {
			keys := []SortKey{key}
			got, err := SortIndices(context.Background(), rec, keys)
			if err != nil {
				t.Fatal(err)
			}
			if d := firstDiff(rec, keys, got, refSort(rec, keys)); d != "" {
				t.Errorf("%d strings, %s: %s", len(strs), key, d)
			}
		}
		rec.Release()
	}
}

func seq(n int) arrow.Array {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	for i := range n {
		b.Append(int64(i))
	}
	return b.NewArray()
}

// NaN goes between the numbers and the nulls, on the nulls' side, in both
// directions; -0 equals 0 and keeps its place among zeros.
func TestSortNaN(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	b := array.NewFloat64Builder(memory.DefaultAllocator)
	b.AppendValues([]float64{3, nan, -inf, 0, 1, inf, math.Copysign(0, -1), nan, -1}, nil)
	b.AppendNull()
	rec := record([]string{"x"}, []arrow.Array{b.NewArray()})
	b.Release()
	defer rec.Release()
	cases := []struct {
		key  SortKey
		want []int32
	}{
		{SortKey{Column: "x"}, []int32{2, 8, 3, 6, 4, 0, 5, 1, 7, 9}},
		{SortKey{Column: "x", Descending: true}, []int32{5, 0, 4, 3, 6, 8, 2, 1, 7, 9}},
		{SortKey{Column: "x", NullsFirst: true}, []int32{9, 1, 7, 2, 8, 3, 6, 4, 0, 5}},
		{SortKey{Column: "x", Descending: true, NullsFirst: true}, []int32{9, 1, 7, 5, 0, 4, 3, 6, 8, 2}},
	}
	for _, c := range cases {
		got, err := SortIndices(context.Background(), rec, []SortKey{c.key})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.key, got, c.want)
		}
	}
}

// Sort returns the columns taken in the sorted order, with every column
// type carried along (including ones that cannot be keys), and no memory
// left held.
func TestSort(t *testing.T) {
	mem := checkedMem(t)
	rng := rand.New(rand.NewPCG(1, 2))
	n := 3000
	var names []string
	var cols []arrow.Array
	for _, typ := range keyTypes {
		names = append(names, typ)
		cols = append(cols, genArray(rng, mem, typ, n, gen{nulls: 0.1, card: 100}))
	}
	lb := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int64)
	for i := range n {
		lb.Append(true)
		lb.ValueBuilder().(*array.Int64Builder).Append(int64(i))
	}
	names = append(names, "list")
	cols = append(cols, lb.NewArray())
	lb.Release()
	rec := record(names, cols)
	defer rec.Release()
	keys := []SortKey{{Column: "string", Descending: true}, {Column: "int64", NullsFirst: true}}
	got, err := Sort(context.Background(), rec, keys, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	want := refSort(rec, keys)
	for c := range rec.NumCols() {
		in, out := rec.Column(int(c)), got.Column(int(c))
		for i, r := range want {
			if in.IsNull(int(r)) != out.IsNull(i) || !in.IsNull(int(r)) && in.ValueStr(int(r)) != out.ValueStr(i) {
				t.Fatalf("column %s row %d: got %s, want %s (row %d)", names[c], i, out.ValueStr(i), in.ValueStr(int(r)), r)
			}
		}
	}
	ok, err := IsSorted(context.Background(), got, keys)
	if err != nil || !ok {
		t.Errorf("IsSorted(sorted) = %v, %v", ok, err)
	}
	ok, err = IsSorted(context.Background(), rec, keys)
	if err != nil || ok {
		t.Errorf("IsSorted(random) = %v, %v", ok, err)
	}
}

// A sorted batch comes back as is.
func TestSortSorted(t *testing.T) {
	rec := record([]string{"a"}, []arrow.Array{seq(100)})
	defer rec.Release()
	got, err := Sort(context.Background(), rec, []SortKey{{Column: "a"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if got != rec {
		t.Error("sorting a sorted batch copied it")
	}
}

func TestSortErrors(t *testing.T) {
	lb := array.NewListBuilder(memory.DefaultAllocator, arrow.PrimitiveTypes.Int64)
	lb.AppendNull()
	rec := record([]string{"a", "l"}, []arrow.Array{seq(1), lb.NewArray()})
	lb.Release()
	defer rec.Release()
	cases := []struct {
		keys  []SortKey
		cause error
		want  string
	}{
		{[]SortKey{{Column: "nope"}}, ErrNoColumn, `sortk: sort by "nope": no such column (the columns are a, l)`},
		{[]SortKey{{Column: "l"}}, ErrUnsupportedType, `sortk: sort by "l" (list<item: int64, nullable>): type cannot be a sort key`},
		{nil, nil, "sortk: sort: no sort keys"},
	}
	for _, c := range cases {
		_, err := SortIndices(context.Background(), rec, c.keys)
		if err == nil || err.Error() != c.want {
			t.Errorf("%v: got %v, want %s", c.keys, err, c.want)
		}
		var ke *KeyError
		if c.cause != nil && (!errors.Is(err, c.cause) || !errors.As(err, &ke)) {
			t.Errorf("%v: %v is not a KeyError caused by %v", c.keys, err, c.cause)
		}
	}
}

func TestSortCancelled(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	rec := record([]string{"s"}, []arrow.Array{genArray(rng, memory.DefaultAllocator, "string", 200000, gen{card: 50000})})
	defer rec.Release()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := SortIndices(ctx, rec, []SortKey{{Column: "s"}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}
