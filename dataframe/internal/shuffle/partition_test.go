package shuffle

import (
	"bytes"
	"context"
	"encoding/gob"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/internal/agg"
)

// The hash partitioner splits rows exactly as the group-by kernels'
// HashPartition does, for every key type and for several keys.
func TestHashMatchesAgg(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 1))
	n := 3000
	mk := func(typ arrow.DataType, i int) arrow.Array {
		b := array.NewBuilder(memory.DefaultAllocator, typ)
		defer b.Release()
		for range n {
			v := rng.IntN(200) - 100
			if rng.IntN(10) == 0 {
				b.AppendNull()
				continue
			}
			switch bb := b.(type) {
			case *array.Int8Builder:
				bb.Append(int8(v))
			case *array.Int16Builder:
				bb.Append(int16(v))
			case *array.Int32Builder:
				bb.Append(int32(v))
			case *array.Int64Builder:
				bb.Append(int64(v) << 40)
			case *array.Uint8Builder:
				bb.Append(uint8(v))
			case *array.Uint32Builder:
				bb.Append(uint32(v))
			case *array.Uint64Builder:
				bb.Append(uint64(v) << 50)
			case *array.Float32Builder:
				bb.Append(float32(v) / 3)
			case *array.Float64Builder:
				f := float64(v) / 7
				if v == 5 {
					f = math.NaN()
				}
				bb.Append(f)
			case *array.BooleanBuilder:
				bb.Append(v%2 == 0)
			case *array.StringBuilder:
				bb.Append(fmt.Sprintf("%0*d", rng.IntN(30), v)) // lengths 0 to 29
			case *array.LargeStringBuilder:
				bb.Append(fmt.Sprint("s", v))
			case *array.BinaryBuilder:
				bb.Append([]byte(fmt.Sprint(v)))
			case *array.Date32Builder:
				bb.Append(arrow.Date32(v))
			case *array.TimestampBuilder:
				bb.Append(arrow.Timestamp(v * 1e9))
			case *array.BinaryDictionaryBuilder:
				bb.AppendString(fmt.Sprint("d", v))
			default:
				t.Fatalf("no case for %T", b)
			}
		}
		return b.NewArray()
	}
	types := []arrow.DataType{arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
		arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64, arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64,
		arrow.FixedWidthTypes.Boolean, arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString, arrow.BinaryTypes.Binary,
		arrow.FixedWidthTypes.Date32, &arrow.TimestampType{Unit: arrow.Second},
		&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}}
	var keySets [][]int
	for i := range types {
		keySets = append(keySets, []int{i})
	}
	keySets = append(keySets, []int{10, 3}, []int{15, 8, 9})
	for _, ks := range keySets {
		var names []string
		var fields []arrow.Field
		var cols []arrow.Array
		for _, i := range ks {
			names = append(names, fmt.Sprint("c", i))
			fields = append(fields, arrow.Field{Name: names[len(names)-1], Type: types[i], Nullable: true})
			cols = append(cols, mk(types[i], i))
		}
		rb := array.NewInt64Builder(memory.DefaultAllocator)
		for r := range n {
			rb.Append(int64(r))
		}
		fields = append(fields, arrow.Field{Name: "row", Type: arrow.PrimitiveTypes.Int64})
		cols = append(cols, rb.NewArray())
		rb.Release()
		rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(n))
		release := func() {
			rec.Release()
			for _, c := range cols {
				c.Release()
			}
		}
		for _, m := range []int{1, 2, 7, 64} {
			ids, err := HashPartitioner(names...).Partition(ctx, rec, m)
			if err != nil {
				t.Fatal(err)
			}
			parts, err := agg.HashPartition(ctx, rec, names, m, memory.DefaultAllocator)
			if err != nil {
				t.Fatal(err)
			}
			for q, p := range parts {
				for _, r := range int64s(p.Column(len(names))) {
					if ids[r] != int32(q) {
						t.Fatalf("keys %v into %d: row %d goes to %d, agg.HashPartition puts it in %d", names, m, r, ids[r], q)
					}
				}
				p.Release()
			}
		}
		release()
	}
}

// Equal values of different types hash alike, as documented.
func TestHashEqualValues(t *testing.T) {
	ctx := context.Background()
	one := func(typ arrow.DataType, appendTo func(array.Builder)) int32 {
		b := array.NewBuilder(memory.DefaultAllocator, typ)
		defer b.Release()
		appendTo(b)
		a := b.NewArray()
		defer a.Release()
		rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "k", Type: typ, Nullable: true}}, nil), []arrow.Array{a}, 1)
		defer rec.Release()
		ids, err := HashPartitioner("k").Partition(ctx, rec, 1000)
		if err != nil {
			t.Fatal(err)
		}
		return ids[0]
	}
	groups := map[string][]int32{
		"5": {
			one(arrow.PrimitiveTypes.Int8, func(b array.Builder) { b.(*array.Int8Builder).Append(5) }),
			one(arrow.PrimitiveTypes.Int64, func(b array.Builder) { b.(*array.Int64Builder).Append(5) }),
			one(arrow.PrimitiveTypes.Uint64, func(b array.Builder) { b.(*array.Uint64Builder).Append(5) }),
			one(arrow.FixedWidthTypes.Date32, func(b array.Builder) { b.(*array.Date32Builder).Append(5) }),
		},
		"1.5": {
			one(arrow.PrimitiveTypes.Float32, func(b array.Builder) { b.(*array.Float32Builder).Append(1.5) }),
			one(arrow.PrimitiveTypes.Float64, func(b array.Builder) { b.(*array.Float64Builder).Append(1.5) }),
		},
		"0": {
			one(arrow.PrimitiveTypes.Float64, func(b array.Builder) { b.(*array.Float64Builder).Append(0) }),
			one(arrow.PrimitiveTypes.Float64, func(b array.Builder) { b.(*array.Float64Builder).Append(math.Copysign(0, -1)) }),
		},
		"NaN": {
			one(arrow.PrimitiveTypes.Float64, func(b array.Builder) { b.(*array.Float64Builder).Append(math.NaN()) }),
			one(arrow.PrimitiveTypes.Float32, func(b array.Builder) { b.(*array.Float32Builder).Append(float32(math.Inf(1) - math.Inf(1))) }),
		},
		"abc": {
			one(arrow.BinaryTypes.String, func(b array.Builder) { b.(*array.StringBuilder).Append("abc") }),
			one(arrow.BinaryTypes.LargeString, func(b array.Builder) { b.(*array.LargeStringBuilder).Append("abc") }),
			one(arrow.BinaryTypes.Binary, func(b array.Builder) { b.(*array.BinaryBuilder).Append([]byte("abc")) }),
			one(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}, func(b array.Builder) {
				b.(*array.BinaryDictionaryBuilder).AppendString("abc")
			}),
		},
		"null": {
			one(arrow.PrimitiveTypes.Int64, func(b array.Builder) { b.AppendNull() }),
			one(arrow.BinaryTypes.String, func(b array.Builder) { b.AppendNull() }),
		},
	}
	for v, ids := range groups {
		for _, id := range ids[1:] {
			if id != ids[0] {
				t.Errorf("value %s: outputs %v, want one", v, ids)
				break
			}
		}
	}
}

// Rows with equal keys land together whatever input they are in, and
// every output gets a fair share of many keys.
func TestHashPartitionInvariants(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(2, 2))
	inputs := makeInputs(rng, memory.DefaultAllocator, 6, 5000, 2000)
	defer release(inputs...)
	const m = 8
	where := map[string]int32{}
	counts := make([]int, m)
	p := HashPartitioner("s", "k")
	for _, in := range inputs {
		ids, err := p.Partition(ctx, in, m)
		if err != nil {
			t.Fatal(err)
		}
		s, k := in.Column(2).(*array.String), in.Column(1)
		for i, id := range ids {
			key := s.Value(i) + "|" + k.ValueStr(i)
			if prev, ok := where[key]; ok && prev != id {
				t.Fatalf("key %s went to outputs %d and %d", key, prev, id)
			}
			where[key] = id
			counts[id]++
		}
	}
	total := 0
	for _, c := range counts {
		total += c
	}
	for _, c := range counts {
		if c < total/m/2 || c > total/m*2 {
			t.Errorf("output sizes %v: unbalanced", counts)
			break
		}
	}
}

func TestPartitionErrors(t *testing.T) {
	ctx := context.Background()
	rec := makeBatch(rand.New(rand.NewPCG(3, 3)), memory.DefaultAllocator, 0, 10, 5)
	defer rec.Release()
	div := makeBatch(rand.New(rand.NewPCG(3, 3)), memory.DefaultAllocator, 0, 2, 5)
	defer div.Release()
	cases := []struct {
		p    Partitioner
		n    int
		want string
	}{
		{HashPartitioner("nope"), 4, `hash partition by "nope": no such column (the columns are row, k, s, f)`},
		{HashPartitioner(), 4, "hash partition: no key columns"},
		{HashPartitioner("k"), 0, "hash partition into 0 outputs: want at least 1"},
		{RangePartitioner([]SortKey{{Column: "row"}}, div), 2, "range partition into 2 outputs: the 2 divisions make 3 ranges"},
	}
	for _, c := range cases {
		if _, err := c.p.Partition(ctx, rec, c.n); err == nil || err.Error() != c.want {
			t.Errorf("got %v, want %s", err, c.want)
		}
	}
}

// A range partitioner sends a row equal to a boundary to the output above
// it, nulls last (or first), and survives encoding of its spec.
func TestRangePartitioner(t *testing.T) {
	ctx := context.Background()
	mem := memory.DefaultAllocator
	mkInts := func(vals []int64, valid []bool) arrow.RecordBatch {
		b := array.NewInt64Builder(mem)
		defer b.Release()
		b.AppendValues(vals, valid)
		a := b.NewArray()
		defer a.Release()
		return array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil), []arrow.Array{a}, int64(len(vals)))
	}
	div := mkInts([]int64{10, 20}, nil)
	defer div.Release()
	rec := mkInts([]int64{9, 10, 11, 20, 21, 0}, []bool{true, true, true, true, true, false})
	defer rec.Release()
	for _, c := range []struct {
		key  SortKey
		want []int32
	}{
		{SortKey{Column: "k"}, []int32{0, 1, 1, 2, 2, 2}},
		{SortKey{Column: "k", NullsFirst: true}, []int32{0, 1, 1, 2, 2, 0}},
	} {
		p := RangePartitioner([]SortKey{c.key}, div)
		got, err := p.Partition(ctx, rec, 3)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.key, got, c.want)
		}
		// Through gob and back.
		spec, err := p.Spec()
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(spec); err != nil {
			t.Fatal(err)
		}
		var back PartitionSpec
		if err := gob.NewDecoder(&buf).Decode(&back); err != nil {
			t.Fatal(err)
		}
		p2, err := back.Partitioner()
		if err != nil {
			t.Fatal(err)
		}
		got2, err := p2.Partition(ctx, rec, 3)
		if err != nil || !slices.Equal(got2, c.want) {
			t.Errorf("%s after encoding: got %v, %v, want %v", c.key, got2, err, c.want)
		}
	}
	hs, _ := HashPartitioner("a", "b").Spec()
	if hp, err := hs.Partitioner(); err != nil || fmt.Sprint(hp) != fmt.Sprint(HashPartitioner("a", "b")) {
		t.Errorf("hash spec round trip: %v, %v", hp, err)
	}
	if _, err := (PartitionSpec{}).Partitioner(); err == nil {
		t.Error("empty spec: no error")
	}
}
