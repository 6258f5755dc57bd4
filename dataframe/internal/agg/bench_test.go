package agg

import (
	"context"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The benchmarks aggregate H2O-like data (the db-benchmark group-by table):
// 10 million rows in 8 partitions; SHOAL_BENCH_ROWS changes the row count.
//
//	id1    utf8 "id%03d" of 1..100
//	id1d   the same as dictionary<int32, utf8>
//	id6    int64 of 1..N/100 (100,000 distinct)
//	id3m   utf8 "id%010d" of 1..N/10 (about 1,000,000 distinct)
//	v1     int64 of 1..5
//	v3     float64 in [0, 100)

const benchParts = 8

var benchData = sync.OnceValue(func() []arrow.RecordBatch {
	rows := 10_000_000
	if s := os.Getenv("SHOAL_BENCH_ROWS"); s != "" {
		rows, _ = strconv.Atoi(s)
	}
	parts := h2oPartitions(rows, benchParts, 42)
	// Free the generator's garbage now, so that the benchmarks reuse its
	// pages instead of faulting in fresh ones until the next collection.
	runtime.GC()
	return parts
})

// h2oPartitions generates the benchmark table in parts record batches.
func h2oPartitions(rows, parts int, seed uint64) []arrow.RecordBatch {
	mem := memory.NewGoAllocator()
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	draw := func(n int) int64 {
		hi, _ := bits.Mul64(r.Uint64(), uint64(n))
		return int64(hi) + 1
	}
	nk := max(rows/100, 1)
	nm := max(rows/10, 1)
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id1", Type: arrow.BinaryTypes.String},
		{Name: "id1d", Type: dictType},
		{Name: "id6", Type: arrow.PrimitiveTypes.Int64},
		{Name: "id3m", Type: arrow.BinaryTypes.String},
		{Name: "v1", Type: arrow.PrimitiveTypes.Int64},
		{Name: "v3", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	dictB := array.NewStringBuilder(mem)
	for k := 1; k <= 100; k++ {
		dictB.Append(fmt.Sprintf("id%03d", k))
	}
	dict := dictB.NewArray()
	defer dict.Release()
	dictB.Release()
	var out []arrow.RecordBatch
	for p := range parts {
		n := rows/parts + btoi(p < rows%parts)
		id1 := array.NewStringBuilder(mem)
		id1.ReserveData(5 * n)
		idx := array.NewInt32Builder(mem)
		id6 := array.NewInt64Builder(mem)
		id3 := array.NewStringBuilder(mem)
		id3.ReserveData(12 * n)
		v1 := array.NewInt64Builder(mem)
		v3 := array.NewFloat64Builder(mem)
		buf := make([]byte, 0, 16)
		for range n {
			k := draw(100)
			buf = fmt.Appendf(buf[:0], "id%03d", k)
			id1.BinaryBuilder.Append(buf)
			idx.Append(int32(k - 1))
			id6.Append(draw(nk))
			buf = fmt.Appendf(buf[:0], "id%010d", draw(nm))
			id3.BinaryBuilder.Append(buf)
			v1.Append(draw(5))
			v3.Append(float64(draw(100_000_000)-1) / 1e6)
		}
		indices := idx.NewArray()
		d := array.NewDictionaryArray(dictType, indices, dict)
		indices.Release()
		cols := []arrow.Array{id1.NewArray(), d, id6.NewArray(), id3.NewArray(), v1.NewArray(), v3.NewArray()}
		out = append(out, array.NewRecordBatch(schema, cols, int64(n)))
		releaseAll(cols)
		for _, b := range []interface{ Release() }{id1, idx, id6, id3, v1, v3} {
			b.Release()
		}
	}
	return out
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// runAgg aggregates the partitions as the dataframe does: Partial on each
// (on workers goroutines), Merge of all states, Finalize.
func runAgg(ctx context.Context, parts []arrow.RecordBatch, keys []string, specs []Spec, opts Options, workers int) (arrow.RecordBatch, error) {
	mem := memory.DefaultAllocator
	states := make([]arrow.RecordBatch, len(parts))
	errs := make([]error, len(parts))
	parallel(len(parts), workers, func(i int) {
		states[i], errs[i] = Partial(ctx, parts[i], keys, specs, opts, mem)
	})
	defer func() {
		for _, s := range states {
			if s != nil {
				s.Release()
			}
		}
	}()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	st, err := Merge(ctx, states, keys, specs, opts, mem)
	if err != nil {
		return nil, err
	}
	defer st.Release()
	return Finalize(ctx, st, keys, specs, opts, mem)
}

// runSplitOut aggregates as a split-out group-by does: Partial on each
// partition, each state hash-partitioned in parts pieces, then piece q of
// every state merged and finalized on its own (in parallel).
func runSplitOut(ctx context.Context, parts []arrow.RecordBatch, keys []string, specs []Spec, opts Options, workers int) ([]arrow.RecordBatch, error) {
	mem := memory.DefaultAllocator
	pieces := make([][]arrow.RecordBatch, len(parts))
	errs := make([]error, len(parts))
	parallel(len(parts), workers, func(i int) {
		st, err := Partial(ctx, parts[i], keys, specs, opts, mem)
		if err != nil {
			errs[i] = err
			return
		}
		pieces[i], errs[i] = HashPartition(ctx, st, keys, workers, mem)
		st.Release()
	})
	defer func() {
		for _, p := range pieces {
			releaseRecs(p)
		}
	}()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	out := make([]arrow.RecordBatch, workers)
	errs = make([]error, workers)
	parallel(workers, workers, func(q int) {
		var in []arrow.RecordBatch
		for _, p := range pieces {
			in = append(in, p[q])
		}
		st, err := Merge(ctx, in, keys, specs, opts, mem)
		if err != nil {
			errs[q] = err
			return
		}
		out[q], errs[q] = Finalize(ctx, st, keys, specs, opts, mem)
		st.Release()
	})
	for _, err := range errs {
		if err != nil {
			releaseRecs(out)
			return nil, err
		}
	}
	return out, nil
}

// parallel runs fn(0..n-1) on workers goroutines.
func parallel(n, workers int, fn func(i int)) {
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				fn(i)
			}
		})
	}
	wg.Wait()
}

func BenchmarkGroupBy(b *testing.B) {
	parts := benchData()
	rows := 0
	for _, p := range parts {
		rows += int(p.NumRows())
	}
	specs := []Spec{{Func: Sum, Column: "v1", Name: "v1"}, {Func: Mean, Column: "v3", Name: "v3"}}
	for _, key := range []string{"id1", "id1d", "id6", "id3m", ""} {
		for _, workers := range []int{1, 2} {
			name := key
			var keys []string
			if key == "" {
				name = "none"
			} else {
				keys = []string{key}
			}
			b.Run(fmt.Sprintf("key=%s/goroutines=%d", name, workers), func(b *testing.B) {
				ctx := context.Background()
				var groups int64
				start, cpu := time.Now(), cpuTime()
				for b.Loop() {
					out, err := runAgg(ctx, parts, keys, specs, Options{}, workers)
					if err != nil {
						b.Fatal(err)
					}
					groups = out.NumRows()
					out.Release()
				}
				b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N)/float64(rows), "ns/row")
				b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/float64(rows), "cpu-ns/row")
				b.ReportMetric(float64(groups), "groups")
			})
		}
	}
}

// BenchmarkSplitOut: the high-cardinality keys with the merge split in two
// by HashPartition, so that both goroutines merge.
func BenchmarkSplitOut(b *testing.B) {
	parts := benchData()
	rows := 0
	for _, p := range parts {
		rows += int(p.NumRows())
	}
	specs := []Spec{{Func: Sum, Column: "v1", Name: "v1"}, {Func: Mean, Column: "v3", Name: "v3"}}
	for _, key := range []string{"id6", "id3m"} {
		b.Run("key="+key, func(b *testing.B) {
			ctx := context.Background()
			var groups int64
			start, cpu := time.Now(), cpuTime()
			for b.Loop() {
				out, err := runSplitOut(ctx, parts, []string{key}, specs, Options{}, 2)
				if err != nil {
					b.Fatal(err)
				}
				groups = 0
				for _, o := range out {
					groups += o.NumRows()
				}
				releaseRecs(out)
			}
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N)/float64(rows), "ns/row")
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/float64(rows), "cpu-ns/row")
			b.ReportMetric(float64(groups), "groups")
		})
	}
}

// cpuTime is the CPU time (user and system) the process has used, in
// nanoseconds: on a shared machine it shows the work done, whatever the
// wall clock says.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkSort: Finalize with Sort, on the merged state.
func BenchmarkSort(b *testing.B) {
	parts := benchData()
	specs := []Spec{{Func: Sum, Column: "v1", Name: "v1"}}
	for _, key := range []string{"id1", "id6", "id3m"} {
		b.Run("key="+key, func(b *testing.B) {
			ctx := context.Background()
			mem := memory.DefaultAllocator
			keys := []string{key}
			var states []arrow.RecordBatch
			for _, p := range parts {
				st, err := Partial(ctx, p, keys, specs, Options{}, mem)
				if err != nil {
					b.Fatal(err)
				}
				states = append(states, st)
			}
			st, err := Merge(ctx, states, keys, specs, Options{}, mem)
			releaseRecs(states)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Release()
			b.ResetTimer()
			for b.Loop() {
				out, err := Finalize(ctx, st, keys, specs, Options{Sort: true}, mem)
				if err != nil {
					b.Fatal(err)
				}
				out.Release()
			}
			b.ReportMetric(float64(st.NumRows()), "groups")
		})
	}
}

// BenchmarkPartial: Partial alone on one partition, with and without radix
// partitioning.
func BenchmarkPartial(b *testing.B) {
	part := benchData()[0]
	rows := int(part.NumRows())
	specs := []Spec{{Func: Sum, Column: "v1", Name: "v1"}, {Func: Mean, Column: "v3", Name: "v3"}}
	for _, key := range []string{"id1", "id6", "id3m"} {
		for _, radix := range []bool{true, false} {
			b.Run(fmt.Sprintf("key=%s/radix=%v", key, radix), func(b *testing.B) {
				if !radix {
					defer tuning{chunkRows, 1 << 62, radixPartBytes, radixBlockRows}.set()()
				}
				ctx := context.Background()
				start, cpu, sys := time.Now(), cpuTime(), sysTime()
				for b.Loop() {
					st, err := Partial(ctx, part, []string{key}, specs, Options{}, memory.DefaultAllocator)
					if err != nil {
						b.Fatal(err)
					}
					st.Release()
				}
				b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N)/float64(rows), "ns/row")
				b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/float64(rows), "cpu-ns/row")
				b.ReportMetric(float64(sysTime()-sys)/float64(b.N)/float64(rows), "sys-ns/row")
			})
		}
	}
}

func sysTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Stime.Nano()
}
