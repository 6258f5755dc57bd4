package expr

import (
	"context"
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/internal/h2o"
)

const benchRows = 1 << 20

// benchRecord is one batch of 1M rows of the H2O group-by table (id1..id3
// strings, id4..id6, v1, v2 int64, v3 float64) plus a timestamp column ts
// (one year of random instants, microseconds, UTC), a zoned copy tsz and a
// dictionary-encoded copy of id1.
func benchRecord(b *testing.B) arrow.RecordBatch {
	b.Helper()
	var rec arrow.RecordBatch
	err := h2o.Generate(benchRows, h2o.DefaultK, 1, benchRows, func(r arrow.RecordBatch) error {
		r.Retain()
		rec = r
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	defer rec.Release()
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	mk := func(tz string) arrow.Array {
		tb := array.NewTimestampBuilder(memory.DefaultAllocator, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: tz})
		defer tb.Release()
		r := rand.New(rand.NewPCG(2, 2))
		for range benchRows {
			tb.Append(arrow.Timestamp(start + r.Int64N(366*86400*1e6)))
		}
		return tb.NewArray()
	}
	ts, tsz := mk("UTC"), mk("Europe/Paris")
	defer ts.Release()
	defer tsz.Release()
	db := array.NewDictionaryBuilder(memory.DefaultAllocator, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String})
	if err := db.AppendArray(rec.Column(0)); err != nil {
		b.Fatal(err)
	}
	dict := db.NewArray()
	db.Release()
	defer dict.Release()
	fields := append(rec.Schema().Fields(),
		arrow.Field{Name: "ts", Type: ts.DataType()},
		arrow.Field{Name: "tsz", Type: tsz.DataType()},
		arrow.Field{Name: "id1d", Type: dict.DataType()})
	cols := append(rec.Columns(), ts, tsz, dict)
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
}

func reportPerRow(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchRows, "ns/row")
}

// cpuClock measures the processor time the process uses (all threads, the
// garbage collector included), which varies less than wall time on a
// machine shared with other work.
type cpuClock struct{ start time.Duration }

func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPU() cpuClock { return cpuClock{cpuNow()} }

func (c cpuClock) report(b *testing.B) {
	b.ReportMetric(float64(cpuNow()-c.start)/float64(b.N)/benchRows, "cpu-ns/row")
}

func BenchmarkEval(b *testing.B) {
	rec := benchRecord(b)
	defer rec.Release()
	cases := []struct {
		name string
		e    Expr
	}{
		{"arith_compare", Col("v1").Mul(2).Add(Col("v3")).Gt(50)},
		{"str_upper", Col("id1").Str().Upper()},
		{"str_upper_dict", Col("id1d").Str().Upper()},
		{"str_contains", Col("id3").Str().Contains("0000123")},
		{"str_eq_dict", Col("id1d").Eq("id042")},
		{"str_eq", Col("id1").Eq("id042")},
		{"dt_month", Col("ts").Dt().Month()},
		{"dt_month_zone", Col("tsz").Dt().Month()},
		{"dt_hour_zone", Col("tsz").Dt().Hour()},
		{"dt_truncate_day_zone", Col("tsz").Dt().Truncate("day")},
		{"int_add", Col("v1").Add(Col("v2"))},
		{"float_mul_lit", Col("v3").Mul(1.5)},
		{"int_gt_lit", Col("v1").Gt(2)},
		{"and", Col("v1").Gt(2).And(Col("v3").Lt(50))},
		{"when", When(Col("v1").Gt(2)).Then(Col("v3")).Otherwise(0.0)},
		{"is_in_int", Col("id4").IsIn(1, 5, 7, 40)},
	}
	// With a pool, memory freed by one iteration is reused by the next, as
	// an executor's allocator would; without, every result is fresh memory
	// from the Go heap.
	for _, pooled := range []bool{false, true} {
		for _, c := range cases {
			name := c.name
			var mem memory.Allocator = memory.DefaultAllocator
			if pooled {
				name += "/pooled"
				mem = &pool{parent: memory.DefaultAllocator, free: map[int][][]byte{}}
			}
			b.Run(name, func(b *testing.B) {
				ctx := context.Background()
				clock := startCPU()
				for b.Loop() {
					ev := NewEvaluator(rec, mem)
					arr, err := ev.Eval(ctx, c.e)
					if err != nil {
						b.Fatal(err)
					}
					arr.Release()
					ev.Release()
				}
				reportPerRow(b)
				clock.report(b)
			})
		}
	}
}

// BenchmarkCompute runs the same work through arrow-go's compute functions,
// for comparison.
func BenchmarkCompute(b *testing.B) {
	rec := benchRecord(b)
	defer rec.Release()
	ctx := context.Background()
	v1, v2, v3 := compute.NewDatum(rec.Column(6)), compute.NewDatum(rec.Column(7)), compute.NewDatum(rec.Column(8))
	call := func(name string, args ...compute.Datum) compute.Datum {
		out, err := compute.CallFunction(ctx, name, nil, args...)
		if err != nil {
			b.Fatal(err)
		}
		return out
	}
	b.Run("arith_compare", func(b *testing.B) {
		clock := startCPU()
		for b.Loop() {
			m := call("multiply_unchecked", v1, compute.NewDatum(int64(2)))
			s := call("add_unchecked", m, v3)
			g := call("greater", s, compute.NewDatum(50.0))
			m.Release()
			s.Release()
			g.Release()
		}
		reportPerRow(b)
		clock.report(b)
	})
	b.Run("int_add", func(b *testing.B) {
		clock := startCPU()
		for b.Loop() {
			call("add_unchecked", v1, v2).Release()
		}
		reportPerRow(b)
		clock.report(b)
	})
	b.Run("float_mul_lit", func(b *testing.B) {
		clock := startCPU()
		for b.Loop() {
			call("multiply_unchecked", v3, compute.NewDatum(1.5)).Release()
		}
		reportPerRow(b)
		clock.report(b)
	})
	b.Run("int_gt_lit", func(b *testing.B) {
		clock := startCPU()
		for b.Loop() {
			call("greater", v1, compute.NewDatum(int64(2))).Release()
		}
		reportPerRow(b)
		clock.report(b)
	})
	b.Run("filter_10pct", func(b *testing.B) {
		mask := call("less", v3, compute.NewDatum(10.0))
		defer mask.Release()
		clock := startCPU()
		for b.Loop() {
			out, err := compute.FilterRecordBatch(ctx, rec, mask.(*compute.ArrayDatum).MakeArray(), compute.DefaultFilterOptions())
			if err != nil {
				b.Fatal(err)
			}
			out.Release()
		}
		reportPerRow(b)
		clock.report(b)
	})
}

func BenchmarkFilter(b *testing.B) {
	rec := benchRecord(b)
	defer rec.Release()
	for _, sel := range []float64{10, 50} {
		b.Run(fmt.Sprintf("keep_%.0fpct", sel), func(b *testing.B) {
			ctx := context.Background()
			clock := startCPU()
			for b.Loop() {
				out, err := Filter(ctx, rec, Col("v3").Lt(sel), memory.DefaultAllocator)
				if err != nil {
					b.Fatal(err)
				}
				out.Release()
			}
			reportPerRow(b)
			clock.report(b)
		})
	}
}
