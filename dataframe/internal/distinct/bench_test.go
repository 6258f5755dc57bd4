package distinct

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

	"github.com/shoal-data/shoal/dataframe/internal/distinct/rows"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func report(b *testing.B, n int, cpu0 time.Duration) {
	perOp := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(n)/perOp, "rows/s")
	b.ReportMetric(perOp*1e9/float64(n), "ns/row")
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/float64(n), "cpu-ns/row")
}

// benchRows makes n rows: k int64 drawn from distinct values spread over
// 64 bits, s a string of 8 to 24 bytes drawn from 1000, x float64.
func benchRows(n, distinct int) arrow.RecordBatch {
	r := rand.New(rand.NewPCG(uint64(n), uint64(distinct)))
	mem := memory.DefaultAllocator
	k := make([]int64, n)
	x := make([]float64, n)
	sb := array.NewStringBuilder(mem)
	defer sb.Release()
	names := make([]string, 1000)
	for i := range names {
		names[i] = fmt.Sprintf("name-%0*d", 4+i%17, i)
	}
	for i := range k {
		k[i] = int64(rows.HashUint64(uint64(r.IntN(distinct))))
		x[i] = r.Float64()
		sb.Append(names[r.IntN(len(names))])
	}
	cols := []arrow.Array{rows.Int64s(mem, k, nil), sb.NewArray(), rows.Float64s(mem, x, nil)}
	defer rows.ReleaseAll(cols)
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.BinaryTypes.String},
		{Name: "x", Type: arrow.PrimitiveTypes.Float64}}, nil)
	return array.NewRecordBatch(schema, cols, int64(n))
}

// BenchmarkDropDuplicates drops duplicates from 10M rows, on an int64
// key with 1M or 10M (nearly all unique) distinct values, and on the
// pair (int64 with 1M values, string with 1000).
func BenchmarkDropDuplicates(b *testing.B) {
	const n = 10_000_000
	for _, c := range []struct {
		name     string
		distinct int
		subset   []string
	}{
		{"10M/k/1M-distinct", 1_000_000, []string{"k"}},
		{"10M/k/10M-distinct", 1 << 40, []string{"k"}},
		{"10M/k,s/1M-distinct", 1_000_000, []string{"k", "s"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			rec := benchRows(n, c.distinct)
			defer rec.Release()
			runtime.GC()
			b.ResetTimer()
			cpu0 := cpuTime()
			for b.Loop() {
				out, err := DropDuplicates(context.Background(), rec, c.subset, KeepFirst, memory.DefaultAllocator)
				if err != nil {
					b.Fatal(err)
				}
				out.Release()
			}
			report(b, n, cpu0)
		})
	}
}

// BenchmarkMedian is the exact median of 10M float64s.
func BenchmarkMedian(b *testing.B) {
	const n = 10_000_000
	rec := benchRows(n, 1000)
	defer rec.Release()
	runtime.GC()
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		if _, err := Median(context.Background(), rec.Column(2)); err != nil {
			b.Fatal(err)
		}
	}
	report(b, n, cpu0)
}

// BenchmarkGroupQuantiles is the median of x per group of k (1000 groups)
// over 10M rows.
func BenchmarkGroupQuantiles(b *testing.B) {
	const n = 10_000_000
	rec := benchRows(n, 1000)
	defer rec.Release()
	runtime.GC()
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		out, err := GroupQuantiles(context.Background(), rec, []string{"k"}, []QuantileSpec{{Column: "x", Q: 0.5}}, Linear, GroupOptions{}, memory.DefaultAllocator)
		if err != nil {
			b.Fatal(err)
		}
		out.Release()
	}
	report(b, n, cpu0)
}

// BenchmarkValueCounts counts the 1000 strings of 10M rows.
func BenchmarkValueCounts(b *testing.B) {
	const n = 10_000_000
	rec := benchRows(n, 1000)
	defer rec.Release()
	runtime.GC()
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		out, err := ValueCounts(context.Background(), rec, []string{"s"}, true, memory.DefaultAllocator)
		if err != nil {
			b.Fatal(err)
		}
		out.Release()
	}
	report(b, n, cpu0)
}

// BenchmarkNLargest takes the 100 largest of 10M float64s.
func BenchmarkNLargest(b *testing.B) {
	const n = 10_000_000
	rec := benchRows(n, 1000)
	defer rec.Release()
	runtime.GC()
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		out, err := NLargest(context.Background(), rec, 100, []string{"x"}, KeepFirst, memory.DefaultAllocator)
		if err != nil {
			b.Fatal(err)
		}
		out.Release()
	}
	report(b, n, cpu0)
}
