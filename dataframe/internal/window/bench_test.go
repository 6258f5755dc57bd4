package window

import (
	"context"
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

// benchSeries is n rows over the year 2000, sorted: a timestamp (ns, in
// zone) and a float64 value, as in the tutorial workload.
func benchSeries(n int, zone string) arrow.RecordBatch {
	r := rand.New(rand.NewPCG(1, uint64(n)))
	mem := memory.DefaultAllocator
	start := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	step := int64(366*24*time.Hour) / int64(n)
	t := make([]int64, n)
	v := make([]float64, n)
	for i := range t {
		t[i] = start + int64(i)*step
		v[i] = r.NormFloat64()
	}
	typ := &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: zone}
	cols := []arrow.Array{rows.FromSlice(mem, typ, t, nil), rows.Float64s(mem, v, nil)}
	defer rows.ReleaseAll(cols)
	schema := arrow.NewSchema([]arrow.Field{{Name: "timestamp", Type: typ}, {Name: "temperature", Type: arrow.PrimitiveTypes.Float64}}, nil)
	return array.NewRecordBatch(schema, cols, int64(n))
}

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

// BenchmarkResample resamples 5M sorted rows to calendar months (min, max,
// mean of a float column): Resample, then MergeResample and
// FinalizeResample of the one state.
func BenchmarkResample(b *testing.B) {
	const n = 5_000_000
	for _, zone := range []string{"UTC", "Europe/Oslo"} {
		b.Run("5M/ME/"+zone, func(b *testing.B) {
			rec := benchSeries(n, zone)
			defer rec.Release()
			rule := MustParseRule("ME")
			aggs := []AggSpec{{Column: "temperature", Func: Min, Name: "min"}, {Column: "temperature", Func: Max, Name: "max"},
				{Column: "temperature", Func: Mean, Name: "mean"}}
			ctx := context.Background()
			mem := memory.DefaultAllocator
			runtime.GC()
			b.ResetTimer()
			cpu0 := cpuTime()
			for b.Loop() {
				st, err := Resample(ctx, rec, "timestamp", rule, aggs, mem)
				if err != nil {
					b.Fatal(err)
				}
				m, err := MergeResample(ctx, []arrow.RecordBatch{st}, "timestamp", rule, aggs, mem)
				st.Release()
				if err != nil {
					b.Fatal(err)
				}
				out, err := FinalizeResample(ctx, m, "timestamp", rule, aggs, FillRange{}, mem)
				m.Release()
				if err != nil {
					b.Fatal(err)
				}
				if out.NumRows() < 12 {
					b.Fatalf("%d months", out.NumRows())
				}
				out.Release()
			}
			report(b, n, cpu0)
		})
	}
	b.Run("5M/1h/Europe/Oslo", func(b *testing.B) {
		rec := benchSeries(n, "Europe/Oslo")
		defer rec.Release()
		rule := MustParseRule("1h")
		aggs := []AggSpec{{Column: "temperature", Func: Mean, Name: "mean"}}
		runtime.GC()
		b.ResetTimer()
		cpu0 := cpuTime()
		for b.Loop() {
			st, err := Resample(context.Background(), rec, "timestamp", rule, aggs, memory.DefaultAllocator)
			if err != nil {
				b.Fatal(err)
			}
			st.Release()
		}
		report(b, n, cpu0)
	})
}

// BenchmarkRolling computes a one-hour rolling mean and max of 5M rows.
func BenchmarkRolling(b *testing.B) {
	const n = 5_000_000
	rec := benchSeries(n, "UTC")
	defer rec.Release()
	spec := RollingSpec{Time: "timestamp", Window: Window{Span: time.Hour},
		Aggs: []AggSpec{{Column: "temperature", Func: Mean, Name: "mean"}, {Column: "temperature", Func: Max, Name: "max"}}}
	runtime.GC()
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		out, err := Rolling(context.Background(), rec, spec, nil, memory.DefaultAllocator)
		if err != nil {
			b.Fatal(err)
		}
		out.Release()
	}
	report(b, n, cpu0)
}
