package agg

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"pgregory.net/rapid"
)

// TestProperty: splitting the input into random partitions, aggregating
// each with Partial, merging the states in a random tree that keeps their
// order and finalizing gives the same result as aggregating the whole input
// at once, and as the reference.
func TestProperty(t *testing.T) {
	keyTypes := []arrow.DataType{tString, tDict, tInt64, tInt8, tUint32, tBool, tFloat64, tDate32, tLarge}
	valTypes := []arrow.DataType{tInt64, tInt32, tUint8, tFloat64, tFloat32, tBool, tString, tDict, tTS}
	rapid.Check(t, func(rt *rapid.T) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(rt, 0)
		seed := rapid.Uint64().Draw(rt, "seed")
		r := rand.New(rand.NewPCG(seed, 1))
		n := rapid.IntRange(0, 300).Draw(rt, "rows")
		var cols []column
		var keys []string
		nkeys := rapid.IntRange(0, 3).Draw(rt, "keys")
		for i := range nkeys {
			typ := rapid.SampledFrom(keyTypes).Draw(rt, "keytype")
			card := rapid.IntRange(1, 40).Draw(rt, "card")
			nulls := rapid.SampledFrom([]float64{0, 0.1, 0.5}).Draw(rt, "keynulls")
			name := fmt.Sprintf("k%d", i)
			cols = append(cols, randomColumn(r, name, typ, n, card, nulls))
			keys = append(keys, name)
		}
		nvals := rapid.IntRange(1, 3).Draw(rt, "values")
		for i := range nvals {
			typ := rapid.SampledFrom(valTypes).Draw(rt, "valtype")
			nulls := rapid.SampledFrom([]float64{0, 0.3, 1}).Draw(rt, "valnulls")
			cols = append(cols, randomColumn(r, fmt.Sprintf("v%d", i), typ, n, 1+r.IntN(60), nulls))
		}
		var specs []Spec
		nspecs := rapid.IntRange(1, 6).Draw(rt, "specs")
		for i := range nspecs {
			c := cols[nkeys+rapid.IntRange(0, nvals-1).Draw(rt, "col")]
			var fs []Func
			for _, f := range Funcs {
				if applies(f, c.typ) {
					fs = append(fs, f)
				}
			}
			f := rapid.SampledFrom(fs).Draw(rt, "func")
			specs = append(specs, Spec{Func: f, Column: c.name, Name: fmt.Sprintf("out%d", i), DDOF: r.IntN(2)})
		}
		opts := Options{DropNullKeys: rapid.Bool().Draw(rt, "dropnull"), Sort: rapid.Bool().Draw(rt, "sort")}
		if rapid.Bool().Draw(rt, "tiny chunks and radix partitions") {
			tu := tinyTuning
			tu.chunk = rapid.IntRange(1, 40).Draw(rt, "chunk")
			tu.partBytes = rapid.SampledFrom([]int{1, 64, 1024}).Draw(rt, "partbytes")
			tu.block = rapid.IntRange(1, 200).Draw(rt, "block")
			defer tu.set()()
		}

		rec := buildRecord(mem, cols)
		defer rec.Release()
		want := reference(cols, keys, specs, opts)

		whole := aggregate(rt, mem, []arrow.RecordBatch{rec}, keys, specs, opts)
		defer whole.Release()
		if d := diffRows(rowsOf(whole), want); d != "" {
			rt.Fatalf("whole input differs from the reference:\n%s", d)
		}

		nparts := rapid.IntRange(1, 8).Draw(rt, "parts")
		cuts := make([]int, nparts-1)
		for i := range cuts {
			cuts[i] = r.IntN(n + 1)
		}
		slices.Sort(cuts)
		parts := splitRecord(rec, cuts)
		defer releaseRecs(parts)
		ctx := context.Background()
		var states []arrow.RecordBatch
		for _, p := range parts {
			st, err := Partial(ctx, p, keys, specs, opts, mem)
			if err != nil {
				rt.Fatal(err)
			}
			states = append(states, st)
		}
		st := mergeTree(rt, r, states, keys, specs, opts, mem)
		defer st.Release()
		got, err := Finalize(ctx, st, keys, specs, opts, mem)
		if err != nil {
			rt.Fatal(err)
		}
		defer got.Release()
		if !got.Schema().Equal(whole.Schema()) {
			rt.Fatalf("schema %s, want %s", got.Schema(), whole.Schema())
		}
		if d := diffRows(rowsOf(got), rowsOf(whole)); d != "" {
			rt.Fatalf("partitioned (cuts %v) differs from whole:\n%s", cuts, d)
		}
	})
}

// mergeTree merges states (taking them over) in a random tree of contiguous
// runs, so that the order is kept.
func mergeTree(t rapid.TB, r *rand.Rand, states []arrow.RecordBatch, keys []string, specs []Spec, opts Options, mem memory.Allocator) arrow.RecordBatch {
	ctx := context.Background()
	for len(states) > 1 {
		var next []arrow.RecordBatch
		for i := 0; i < len(states); {
			k := 1 + r.IntN(min(3, len(states)-i))
			if len(next) == 0 && i+k == len(states) && k == 1 {
				k = len(states) - i
			}
			m, err := Merge(ctx, states[i:i+k], keys, specs, opts, mem)
			if err != nil {
				t.Fatalf("Merge: %v", err)
			}
			releaseRecs(states[i : i+k])
			next = append(next, m)
			i += k
		}
		states = next
	}
	return states[0]
}
