package sortk

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

const benchRows = 10_000_000

// benchInt64 is a batch of an int64 key k (uniform over the whole range,
// or over card values) and a float64 payload v.
func benchInt64(n, card int) arrow.RecordBatch {
	rng := rand.New(rand.NewPCG(1, uint64(card)))
	kb := array.NewInt64Builder(memory.DefaultAllocator)
	vb := array.NewFloat64Builder(memory.DefaultAllocator)
	kb.Reserve(n)
	vb.Reserve(n)
	for i := range n {
		if card > 0 {
			kb.UnsafeAppend(int64(rng.IntN(card)))
		} else {
			kb.UnsafeAppend(int64(rng.Uint64()))
		}
		vb.UnsafeAppend(float64(i))
	}
	rec := record([]string{"k", "v"}, []arrow.Array{kb.NewArray(), vb.NewArray()})
	kb.Release()
	vb.Release()
	return rec
}

// benchStrings is a batch of a string key like the h2o benchmark's ids
// ("id" and 10 digits, card distinct values) and an int64 payload.
func benchStrings(n, card int) arrow.RecordBatch {
	rng := rand.New(rand.NewPCG(2, uint64(card)))
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	sb.Reserve(n)
	sb.ReserveData(n * 12)
	for range n {
		sb.Append(fmt.Sprintf("id%010d", rng.IntN(card)))
	}
	rec := record([]string{"k", "v"}, []arrow.Array{sb.NewArray(), seq(n)})
	sb.Release()
	return rec
}

func BenchmarkSort(b *testing.B) {
	cases := []struct {
		name string
		rec  func() arrow.RecordBatch
		keys []SortKey
	}{
		{"int64/10M/uniform", func() arrow.RecordBatch { return benchInt64(benchRows, 0) }, []SortKey{{Column: "k"}}},
		{"int64/10M/1e6-values", func() arrow.RecordBatch { return benchInt64(benchRows, 1_000_000) }, []SortKey{{Column: "k"}}},
		{"int64/10M/desc,payload", func() arrow.RecordBatch { return benchInt64(benchRows, 1000) }, []SortKey{{Column: "k", Descending: true}, {Column: "v"}}},
		{"string/10M/1e6-values", func() arrow.RecordBatch { return benchStrings(benchRows, 1_000_000) }, []SortKey{{Column: "k"}}},
		{"string/10M/1e7-values", func() arrow.RecordBatch { return benchStrings(benchRows, 10_000_000) }, []SortKey{{Column: "k"}}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			rec := c.rec()
			defer rec.Release()
			runtime.GC()
			b.Run("indices", func(b *testing.B) {
				cpu := cpuSeconds()
				for b.Loop() {
					if _, err := SortIndices(context.Background(), rec, c.keys); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric((cpuSeconds()-cpu)/float64(b.N), "cpu-s/op")
				b.ReportMetric(float64(rec.NumRows())*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
			})
			b.Run("batch", func(b *testing.B) {
				cpu := cpuSeconds()
				for b.Loop() {
					out, err := Sort(context.Background(), rec, c.keys, memory.DefaultAllocator)
					if err != nil {
						b.Fatal(err)
					}
					out.Release()
				}
				b.ReportMetric((cpuSeconds()-cpu)/float64(b.N), "cpu-s/op")
				b.ReportMetric(float64(rec.NumRows())*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
			})
		})
	}
}

// cpuSeconds is the CPU time this process has used, user and system: on a
// loaded machine it says more about a kernel than the wall clock.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
