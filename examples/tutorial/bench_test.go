package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/shoal-data/shoal/internal/tsdata"
	"github.com/shoal-data/shoal/local"
)

// BenchmarkProfilerOverhead runs the tutorial workload on 1.05·10^7 rows (the
// nine CSV files at 20 readings a minute, written once to
// $SHOAL_BENCH_DATA or the temporary directory) with the executor's CPU
// profiler on and off, alternately, and reports the median time of each
// and the overhead of profiling: on/off - 1, in percent. Each iteration
// is one run of each, in alternating order, on executors made once.
//
//	go test -run XXX -bench ProfilerOverhead -benchtime 10x ./examples/tutorial
func BenchmarkProfilerOverhead(b *testing.B) {
	const perMinute = 20 // a divisor of 60: 525,600 minutes, 10,512,000 rows
	base := os.Getenv("SHOAL_BENCH_DATA")
	if base == "" {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "shoal-bench-tutorial-"+strconv.Itoa(perMinute))
	if _, err := os.Stat(filepath.Join(dir, strconv.Itoa(tsdata.Files-1)+".part")); err != nil {
		if _, err := tsdata.WriteRate(dir, 1, perMinute); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	on := local.New()
	defer on.Close()
	off := local.New(local.WithProfiling(false))
	defer off.Close()
	run := func(e *local.Executor) time.Duration {
		start := time.Now()
		t, _, err := tutorial(ctx, e, dir)
		if err != nil {
			b.Fatal(err)
		}
		d := time.Since(start)
		t.Release()
		return d
	}
	run(on) // warm up: the page cache, the pools
	run(off)
	var ton, toff []time.Duration
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			ton = append(ton, run(on))
			toff = append(toff, run(off))
		} else {
			toff = append(toff, run(off))
			ton = append(ton, run(on))
		}
	}
	b.StopTimer()
	median := func(ds []time.Duration) time.Duration {
		s := slices.Clone(ds)
		slices.Sort(s)
		return s[len(s)/2]
	}
	mon, moff := median(ton), median(toff)
	b.ReportMetric(float64(mon.Milliseconds()), "ms-on")
	b.ReportMetric(float64(moff.Milliseconds()), "ms-off")
	b.ReportMetric(100*(float64(mon)/float64(moff)-1), "%overhead")
}
