package shuffle

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/internal/sortk"
)

var benchSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: arrow.PrimitiveTypes.Int64},
	{Name: "v", Type: arrow.PrimitiveTypes.Float64},
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
}, nil)

// benchInputs returns n batches holding rows rows in all: a uniform int64
// key k, a float64 v and a row number id (24 bytes a row).
func benchInputs(rows, n int) []arrow.RecordBatch {
	rng := rand.New(rand.NewPCG(1, 2))
	var out []arrow.RecordBatch
	for i := range n {
		b := array.NewRecordBuilder(memory.DefaultAllocator, benchSchema)
		kb, vb, ib := b.Field(0).(*array.Int64Builder), b.Field(1).(*array.Float64Builder), b.Field(2).(*array.Int64Builder)
		m := rows / n
		kb.Reserve(m)
		vb.Reserve(m)
		ib.Reserve(m)
		for r := range m {
			kb.UnsafeAppend(int64(rng.Uint64() >> 1))
			vb.UnsafeAppend(rng.Float64())
			ib.UnsafeAppend(int64(i*m + r))
		}
		out = append(out, b.NewRecordBatch())
		b.Release()
	}
	runtime.GC()
	return out
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func totalBytes(recs []arrow.RecordBatch) int64 {
	var n int64
	for _, r := range recs {
		n += batchBytes(r)
	}
	return n
}

// BenchmarkShuffle: 10M rows (240 MB) in 8 inputs hash-shuffled into 8
// outputs, split then collect, one task at a time. MB/s counts the rows'
// bytes once.
func BenchmarkShuffle(b *testing.B) {
	inputs := benchInputs(10_000_000, 8)
	defer release(inputs...)
	size := totalBytes(inputs)
	const m = 8
	for _, c := range []struct {
		name   string
		layout Layout
		budget int64
		comp   string
	}{
		{"file-per-input/budget-64MiB", FilePerInput, 64 << 20, ""},
		{"file-per-input/budget-4MiB", FilePerInput, 4 << 20, ""},
		{"file-per-shard/budget-64MiB", FilePerShard, 64 << 20, ""},
		{"file-per-shard/budget-4MiB", FilePerShard, 4 << 20, ""},
		{"file-per-input/budget-64MiB/lz4", FilePerInput, 64 << 20, "lz4"},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			st := LocalStorage(b.TempDir())
			opts := Options{Budget: c.budget, Layout: c.layout, Compression: c.comp}
			b.SetBytes(size)
			cpu := cpuSeconds()
			var split, collect time.Duration
			var written int64
			for i := 0; b.Loop(); i++ {
				id := fmt.Sprint("bench", i)
				t0 := time.Now()
				mans := make([]*Manifest, len(inputs))
				for j, in := range inputs {
					man, err := Split(ctx, st, id, j, in, HashPartitioner("k"), m, opts)
					if err != nil {
						b.Fatal(err)
					}
					mans[j] = man
					written += man.Bytes
				}
				t1 := time.Now()
				for j := range m {
					out, err := Collect(ctx, st, id, j, mans, benchSchema, opts)
					if err != nil {
						b.Fatal(err)
					}
					out.Release()
				}
				split += t1.Sub(t0)
				collect += time.Since(t1)
				if err := Cleanup(ctx, st, id); err != nil {
					b.Fatal(err)
				}
			}
			n := float64(b.N)
			b.ReportMetric((cpuSeconds()-cpu)/n, "cpu-s/op")
			b.ReportMetric(float64(size)/1e6/(split.Seconds()/n), "split-MB/s")
			b.ReportMetric(float64(size)/1e6/(collect.Seconds()/n), "collect-MB/s")
			b.ReportMetric(float64(written)/n/1e6, "MB-written")
		})
	}
}

// BenchmarkSortValues is a sort of 10M rows by an int64 key the way a
// set-index or sort-values runs: divisions from a 1% sample, a range
// shuffle of 8 inputs into 8 outputs, each output sorted (in memory within
// the 64 MiB budget), one task at a time.
func BenchmarkSortValues(b *testing.B) {
	inputs := benchInputs(10_000_000, 8)
	defer release(inputs...)
	size := totalBytes(inputs)
	keys := []SortKey{{Column: "k"}}
	ctx := context.Background()
	st := LocalStorage(b.TempDir())
	b.SetBytes(size)
	cpu := cpuSeconds()
	for i := 0; b.Loop(); i++ {
		id := fmt.Sprint("sort", i)
		// A sample of 1% of each input.
		var sample []arrow.RecordBatch
		rng := rand.New(rand.NewPCG(3, 3))
		for _, in := range inputs {
			idx := make([]int32, in.NumRows()/100)
			for j := range idx {
				idx[j] = int32(rng.IntN(int(in.NumRows())))
			}
			s, err := sortk.Take(ctx, in, idx, nil)
			if err != nil {
				b.Fatal(err)
			}
			sample = append(sample, s)
		}
		all, err := concatBatches(benchSchema, sample, memory.DefaultAllocator)
		release(sample...)
		if err != nil {
			b.Fatal(err)
		}
		div, err := sortk.Divisions(ctx, all, keys, 8, nil)
		all.Release()
		if err != nil {
			b.Fatal(err)
		}
		m := int(div.NumRows()) + 1
		p := RangePartitioner(keys, div)
		mans := make([]*Manifest, len(inputs))
		for j, in := range inputs {
			if mans[j], err = Split(ctx, st, id, j, in, p, m, Options{}); err != nil {
				b.Fatal(err)
			}
		}
		for j := range m {
			out, err := CollectSorted(ctx, st, id, j, mans, benchSchema, keys, Options{})
			if err != nil {
				b.Fatal(err)
			}
			out.Release()
		}
		div.Release()
		Cleanup(ctx, st, id)
	}
	b.ReportMetric((cpuSeconds()-cpu)/float64(b.N), "cpu-s/op")
	b.ReportMetric(1e7*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
}

// BenchmarkExternalSort sorts 10M rows (240 MB) through one collect with a
// budget of 64 MiB (the data is 3.6 times the budget): sorted runs spilled
// and merged, streamed out in batches.
func BenchmarkExternalSort(b *testing.B) {
	inputs := benchInputs(10_000_000, 8)
	defer release(inputs...)
	size := totalBytes(inputs)
	keys := []SortKey{{Column: "k"}}
	ctx := context.Background()
	st := LocalStorage(b.TempDir())
	opts := Options{Budget: 64 << 20}
	b.SetBytes(size)
	cpu := cpuSeconds()
	var stats CollectStats
	for i := 0; b.Loop(); i++ {
		id := fmt.Sprint("ext", i)
		mans := make([]*Manifest, len(inputs))
		for j, in := range inputs {
			var err error
			if mans[j], err = Split(ctx, st, id, j, in, HashPartitioner("k"), 1, opts); err != nil {
				b.Fatal(err)
			}
		}
		r, err := OpenSorted(ctx, st, id, 0, mans, benchSchema, keys, opts)
		if err != nil {
			b.Fatal(err)
		}
		var rows int64
		for {
			rec, err := r.Next(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			rows += rec.NumRows()
			rec.Release()
		}
		stats = r.Stats()
		r.Close(ctx)
		if rows != 10_000_000 {
			b.Fatalf("%d rows", rows)
		}
		Cleanup(ctx, st, id)
	}
	b.ReportMetric((cpuSeconds()-cpu)/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(stats.Runs), "runs")
	b.ReportMetric(float64(stats.PeakBytes)/(1<<20), "peak-MiB")
}
