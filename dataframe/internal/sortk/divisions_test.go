package sortk

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func ints(mem memory.Allocator, vals []int64, valid []bool) arrow.Array {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	b.AppendValues(vals, valid)
	return b.NewArray()
}

func strs(mem memory.Allocator, vals ...string) arrow.Array {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.AppendValues(vals, nil)
	return b.NewArray()
}

func TestDivisions(t *testing.T) {
	ctx := context.Background()
	mem := checkedMem(t)
	uniform := make([]int64, 1000)
	for i := range uniform {
		uniform[i] = int64((i * 7919) % 1000) // 0..999 shuffled
	}
	skewed := make([]int64, 1000)
	for i := range skewed {
		skewed[i] = 5
		if i%10 == 0 {
			skewed[i] = int64(i)
		}
	}
	cases := []struct {
		name string
		vals []int64
		key  SortKey
		m    int
		want string
	}{
		{"uniform", uniform, SortKey{Column: "k"}, 4, "[250 500 750]"},
		{"uniform desc", uniform, SortKey{Column: "k", Descending: true}, 4, "[749 499 249]"},
		{"one range", uniform, SortKey{Column: "k"}, 1, "[]"},
		{"empty sample", nil, SortKey{Column: "k"}, 4, "[]"},
		{"fewer rows than ranges", []int64{3, 1, 2}, SortKey{Column: "k"}, 10, "[2 3]"},
		// 90% of the rows are 5: it gets a range of its own, and the rest
		// split evenly (16 or 17 rows per range).
		{"skewed", skewed, SortKey{Column: "k"}, 8, "[5 10 180 350 520 680 840]"},
		{"constant", []int64{4, 4, 4, 4, 4, 4}, SortKey{Column: "k"}, 3, "[]"},
	}
	for _, c := range cases {
		rec := record([]string{"k", "other"}, []arrow.Array{ints(mem, c.vals, nil), ints(mem, c.vals, nil)})
		d, err := Divisions(ctx, rec, []SortKey{c.key}, c.m, mem)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if d.NumCols() != 1 || d.ColumnName(0) != "k" {
			t.Errorf("%s: divisions have columns %v, want only the key", c.name, d.Schema())
		}
		if got := fmt.Sprint(d.Column(0)); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
		// The sample itself splits into ranges of sizes within one row of
		// each other (when its values are distinct).
		if c.name == "uniform" {
			parts, err := SearchDivisions(ctx, rec, d, []SortKey{c.key})
			if err != nil {
				t.Fatal(err)
			}
			sizes := make([]int, d.NumRows()+1)
			for _, p := range parts {
				sizes[p]++
			}
			if fmt.Sprint(sizes) != "[250 250 250 250]" {
				t.Errorf("%s: range sizes %v", c.name, sizes)
			}
		}
		d.Release()
		rec.Release()
	}
	rec := record([]string{"k"}, []arrow.Array{seq(3)})
	defer rec.Release()
	if _, err := Divisions(ctx, rec, []SortKey{{Column: "k"}}, 0, mem); err == nil {
		t.Error("divisions into 0 ranges: no error")
	}
}

// A row equal to a boundary goes to the range the boundary starts; nulls
// go where the sort puts them; strings compare by bytes.
func TestSearchDivisions(t *testing.T) {
	ctx := context.Background()
	mem := checkedMem(t)
	div := record([]string{"k"}, []arrow.Array{ints(mem, []int64{10, 20, 30}, nil)})
	defer div.Release()
	rec := record([]string{"k"}, []arrow.Array{ints(mem, []int64{-5, 9, 10, 11, 19, 20, 29, 30, 31, 0}, []bool{true, true, true, true, true, true, true, true, true, false})})
	defer rec.Release()
	cases := []struct {
		key  SortKey
		div  arrow.RecordBatch
		want []int32
	}{
		{SortKey{Column: "k"}, div, []int32{0, 0, 1, 1, 1, 2, 2, 3, 3, 3}},
		{SortKey{Column: "k", NullsFirst: true}, div, []int32{0, 0, 1, 1, 1, 2, 2, 3, 3, 0}},
	}
	descDiv := record([]string{"k"}, []arrow.Array{ints(mem, []int64{30, 20, 10}, nil)})
	defer descDiv.Release()
	cases = append(cases, struct {
		key  SortKey
		div  arrow.RecordBatch
		want []int32
	}{SortKey{Column: "k", Descending: true}, descDiv, []int32{3, 3, 3, 2, 2, 2, 1, 1, 0, 3}})
	for _, c := range cases {
		got, err := SearchDivisions(ctx, rec, c.div, []SortKey{c.key})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.key, got, c.want)
		}
	}
	// Strings, two keys, a dictionary against plain strings.
	sdiv := record([]string{"s", "n"}, []arrow.Array{strs(mem, "b", "b", "d"), ints(mem, []int64{1, 5, 0}, nil)})
	defer sdiv.Release()
	db := array.NewDictionaryBuilder(mem, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}).(*array.BinaryDictionaryBuilder)
	for _, s := range []string{"a", "b", "b", "b", "c", "d", "e", ""} {
		if err := db.AppendString(s); err != nil {
			t.Fatal(err)
		}
	}
	srec := record([]string{"s", "n"}, []arrow.Array{db.NewArray(), ints(mem, []int64{9, 0, 1, 5, 0, 0, 0, 9}, nil)})
	db.Release()
	defer srec.Release()
	got, err := SearchDivisions(ctx, srec, sdiv, []SortKey{{Column: "s"}, {Column: "n"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int32{0, 0, 1, 2, 2, 3, 3, 0}; !slices.Equal(got, want) {
		t.Errorf("strings: got %v, want %v", got, want)
	}
	// Errors: boundaries out of order, types that do not compare.
	if _, err := SearchDivisions(ctx, rec, descDiv, []SortKey{{Column: "k"}}); err == nil {
		t.Error("decreasing divisions: no error")
	}
	sdiv1 := record([]string{"k"}, []arrow.Array{strs(mem, "a")})
	defer sdiv1.Release()
	if _, err := SearchDivisions(ctx, rec, sdiv1, []SortKey{{Column: "k"}}); err == nil {
		t.Error("string divisions for an int column: no error")
	}
}

// Divisions from a sample of random data split the full data into ranges
// that are all below twice their fair share, and SearchDivisions sends
// every row to a range that holds it.
func TestDivisionsBalance(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, typ := range []string{"int64", "float64", "string", "uint32"} {
		full := record([]string{"k"}, []arrow.Array{genArray(rng, memory.DefaultAllocator, typ, 100000, gen{})})
		idx := make([]int32, 2000)
		for i := range idx {
			idx[i] = int32(rng.IntN(100000))
		}
		sample, err := Take(ctx, full, idx, nil)
		if err != nil {
			t.Fatal(err)
		}
		keys := []SortKey{{Column: "k"}}
		d, err := Divisions(ctx, sample, keys, 16, nil)
		if err != nil {
			t.Fatal(err)
		}
		parts, err := SearchDivisions(ctx, full, d, keys)
		if err != nil {
			t.Fatal(err)
		}
		sizes := make([]int, d.NumRows()+1)
		for _, p := range parts {
			sizes[p]++
		}
		for _, s := range sizes {
			if s > 2*100000/len(sizes) {
				t.Errorf("%s: range sizes %v: one above twice the mean", typ, sizes)
				break
			}
		}
		full.Release()
		sample.Release()
		d.Release()
	}
}
