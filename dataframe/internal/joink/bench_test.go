package joink

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

// benchSides makes a probe side of nl rows (k int64, x float64) and a build
// side of nr rows with unique keys (k int64, y int64). Probe keys are drawn
// from the build keys, so every probe row has one match (half of them with
// half=true). Dense keys are 0..nr-1 (the direct lookup path); sparse ones
// are spread over 64 bits (the hash table path).
func benchSides(nl, nr int, sparse bool) (left, right arrow.RecordBatch) {
	r := rand.New(rand.NewPCG(uint64(nl), uint64(nr)))
	mem := memory.DefaultAllocator
	key := func(i int) int64 {
		if sparse {
			return int64(rows.HashUint64(uint64(i)))
		}
		return int64(i)
	}
	rk := make([]int64, nr)
	ry := make([]int64, nr)
	for i := range rk {
		rk[i] = key(i)
		ry[i] = int64(i)
	}
	r.Shuffle(nr, func(i, j int) { rk[i], rk[j] = rk[j], rk[i] })
	lk := make([]int64, nl)
	lx := make([]float64, nl)
	for i := range lk {
		lk[i] = key(r.IntN(nr))
		lx[i] = float64(i)
	}
	mk := func(names []string, cols ...arrow.Array) arrow.RecordBatch {
		fields := make([]arrow.Field, len(cols))
		for i, c := range cols {
			fields[i] = arrow.Field{Name: names[i], Type: c.DataType(), Nullable: true}
		}
		rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(cols[0].Len()))
		rows.ReleaseAll(cols)
		return rec
	}
	left = mk([]string{"k", "x"}, rows.Int64s(mem, lk, nil), rows.Float64s(mem, lx, nil))
	right = mk([]string{"k", "y"}, rows.Int64s(mem, rk, nil), rows.Int64s(mem, ry, nil))
	return left, right
}

var benchCache = map[string][2]arrow.RecordBatch{}

func sides(nl, nr int, sparse bool) (arrow.RecordBatch, arrow.RecordBatch) {
	k := fmt.Sprint(nl, nr, sparse)
	if s, ok := benchCache[k]; ok {
		return s[0], s[1]
	}
	clear(benchCache) // keep one pair in memory
	l, r := benchSides(nl, nr, sparse)
	benchCache[k] = [2]arrow.RecordBatch{l, r}
	return l, r
}

// BenchmarkJoin joins 10M probe rows with 100k or 10M build rows on an
// int64 key, building the hash table each time. rows/s counts probe rows.
func BenchmarkJoin(b *testing.B) {
	for _, nr := range []int{100_000, 10_000_000} {
		for _, sparse := range []bool{false, true} {
			for _, how := range []How{Inner, Left} {
				keys := "dense"
				if sparse {
					keys = "sparse"
				}
				b.Run(fmt.Sprintf("10Mx%d/%s/%s", nr, keys, how), func(b *testing.B) {
					left, right := sides(10_000_000, nr, sparse)
					spec := Spec{How: how, LeftOn: []string{"k"}, RightOn: []string{"k"}}
					ctx := context.Background()
					runtime.GC() // the garbage of the data made before is not this benchmark's
					b.ResetTimer()
					cpu0 := cpuTime()
					for b.Loop() {
						out, err := Join(ctx, left, right, spec, memory.DefaultAllocator)
						if err != nil {
							b.Fatal(err)
						}
						out.Release()
					}
					perOp := b.Elapsed().Seconds() / float64(b.N)
					b.ReportMetric(float64(left.NumRows())/perOp, "rows/s")
					b.ReportMetric(perOp*1e9/float64(left.NumRows()), "ns/row")
					b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/float64(left.NumRows()), "cpu-ns/row")
				})
			}
		}
	}
}

// BenchmarkBuildProbe separates the two steps of a 10M x 10M join.
func BenchmarkBuildProbe(b *testing.B) {
	ctx := context.Background()
	left, right := sides(10_000_000, 10_000_000, true)
	spec := Spec{How: Inner, LeftOn: []string{"k"}, RightOn: []string{"k"}}
	b.Run("build", func(b *testing.B) {
		for b.Loop() {
			ht, err := Build(ctx, right, []string{"k"}, memory.DefaultAllocator)
			if err != nil {
				b.Fatal(err)
			}
			ht.Release()
		}
		b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/float64(right.NumRows()), "ns/row")
	})
	b.Run("probe", func(b *testing.B) {
		ht, err := Build(ctx, right, []string{"k"}, memory.DefaultAllocator)
		if err != nil {
			b.Fatal(err)
		}
		defer ht.Release()
		runtime.GC() // the garbage of the data made before is not this benchmark's
		b.ResetTimer()
		for b.Loop() {
			out, err := Probe(ctx, ht, left, spec, memory.DefaultAllocator)
			if err != nil {
				b.Fatal(err)
			}
			out.Release()
		}
		b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/float64(left.NumRows()), "ns/row")
	})
}

// cpuTime is the CPU time (user and system) the process has used: on a
// shared, loaded machine it varies less than the wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
