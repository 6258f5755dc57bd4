package jsonl

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// benchData is about 10 MB of JSON lines with ints, floats, strings,
// booleans and timestamps.
func benchData() []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	var b bytes.Buffer
	words := []string{"alpha", "beta", "gamma", "delta \"quoted\"", "épsilon"}
	for b.Len() < 10<<20 {
		fmt.Fprintf(&b, `{"id": %d, "price": %.4f, "name": %q, "ok": %t, "time": "2024-03-%02dT%02d:%02d:%02d.%06dZ", "qty": %d}`+"\n",
			rng.Int64(), rng.Float64()*1000, words[rng.IntN(len(words))], rng.IntN(2) == 0,
			1+rng.IntN(28), rng.IntN(24), rng.IntN(60), rng.IntN(60), rng.IntN(1e6), rng.IntN(100))
	}
	return b.Bytes()
}

// BenchmarkReadPart reads 10 MB of JSON lines in one part.
func BenchmarkReadPart(b *testing.B) {
	data := benchData()
	fsys := oneFile(data)
	ctx := context.Background()
	plan, err := PlanRead(ctx, fsys, []string{"x"}, Options{ParseDates: []string{"time"}, BlockSize: int64(len(data))})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rec, err := ReadPart(ctx, fsys, plan, 0, memory.DefaultAllocator)
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			b.ReportMetric(float64(rec.NumRows()), "rows")
		}
		rec.Release()
	}
}

// BenchmarkWrite writes 10 MB worth of rows.
func BenchmarkWrite(b *testing.B) {
	data := benchData()
	fsys := oneFile(data)
	ctx := context.Background()
	plan, err := PlanRead(ctx, fsys, []string{"x"}, Options{ParseDates: []string{"time"}, BlockSize: int64(len(data))})
	if err != nil {
		b.Fatal(err)
	}
	rec, err := ReadPart(ctx, fsys, plan, 0, memory.DefaultAllocator)
	if err != nil {
		b.Fatal(err)
	}
	defer rec.Release()
	var out bytes.Buffer
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out.Reset()
		if err := Write(&out, []arrow.RecordBatch{rec}, WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
