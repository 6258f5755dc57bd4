package array

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/local"
)

// The benchmarks of the issue. Run them one at a time, several times:
//
//	go test -run XXX -bench 'Sum20000' -benchtime 3x ./array/
//	go test -run XXX -bench 'XPlusXT|MatMul4000' -benchtime 1x -count 3 ./array/
//
// Each compares Shoal with a plain loop or single-threaded gonum in the
// same function, on the same data, and reports the ratio, and the CPU
// seconds of both: when other programs share the machine, a parallel run
// gets fewer cores than it asks for, and the CPU seconds still compare
// the work done. Note the load (uptime) with the figures.

const (
	bigN     = 20000
	bigChunk = 2000
)

// vmHWM returns the peak resident memory of the process since the last
// resetHWM, in bytes (Linux), or -1.
func vmHWM() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return -1
			}
			return kb << 10
		}
	}
	return -1
}

// resetHWM returns memory to the OS and resets the peak to the current
// resident size.
func resetHWM() {
	runtime.GC()
	debug.FreeOSMemory()
	os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

func vmRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return -1
}

func bigArray() Array { return Uniform(42, []int{bigN, bigN}, 0, 1, Chunks(bigChunk, bigChunk)) }

// persistedChunks persists a and returns it with its chunks' buffers.
func persistedChunks(b *testing.B, exec graph.Executor, a Array) (Array, [][]float64) {
	b.Helper()
	p, err := a.Persist(context.Background(), exec)
	if err != nil {
		b.Fatal(err)
	}
	op := p.n.op.(*persistOp)
	bufs := make([][]float64, len(op.futures))
	for i, f := range op.futures {
		v, err := f.Result(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		bufs[i] = v.(*Dense).data.([]float64)
	}
	return p, bufs
}

func plainSum(bufs [][]float64) float64 {
	var s float64
	for _, buf := range bufs {
		for _, v := range buf {
			s += v
		}
	}
	return s
}

// streamSum sums bufs on n goroutines with four accumulators each: what n
// cores can stream from memory.
func streamSum(bufs [][]float64, n int) float64 {
	parts := make([]float64, n)
	var wg sync.WaitGroup
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var total float64
			for i := w; i < len(bufs); i += n {
				total += sumRun(bufs[i], false)
			}
			parts[w] = total
		}()
	}
	wg.Wait()
	var s float64
	for _, p := range parts {
		s += p
	}
	return s
}

// cpuSeconds returns the CPU time (user and system) the process has used.
// With other programs on the machine, a parallel run gets fewer cores
// than the machine has, so the CPU time of Shoal against that of a plain
// loop shows the work done independently of that.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// cpuOf runs f and adds its CPU time to *cpu.
func cpuOf(cpu *float64, f func()) func() {
	return func() {
		c := cpuSeconds()
		f()
		*cpu += cpuSeconds() - c
	}
}

func seconds(f func()) float64 {
	t := time.Now()
	f()
	return time.Since(t).Seconds()
}

func scalar(b *testing.B, exec graph.Executor, a Array) float64 {
	b.Helper()
	d, err := a.Compute(context.Background(), exec)
	if err != nil {
		b.Fatal(err)
	}
	v, err := d.At()
	if err != nil {
		b.Fatal(err)
	}
	return v
}

// BenchmarkSum20000 sums a 20000×20000 float64 array (3.2 GB) in
// 2000×2000 chunks made by Uniform. "lazy" generates and sums the chunks
// in one computation and reports the peak resident memory; "persisted"
// sums chunks held in memory and compares with plain loops over the same
// buffers on one and two goroutines. "lazy" also times a plain loop on
// one thread that draws the same numbers and sums them. "chunks" computes
// x.Sum() + x.Max(), whose chunks exist as values, for its peak memory.
func BenchmarkSum20000(b *testing.B) {
	bytes := float64(bigN) * bigN * 8
	b.Run("lazy", func(b *testing.B) {
		exec := local.New()
		defer exec.Close()
		resetHWM()
		base := vmRSS()
		var total, sec, cpu float64
		for range b.N {
			sec += seconds(cpuOf(&cpu, func() { total = scalar(b, exec, bigArray().Sum()) }))
		}
		peak := vmHWM()
		sec /= float64(b.N)
		// The same numbers drawn and summed by a plain loop on one thread.
		var want float64
		var loopCPU float64
		loop := seconds(cpuOf(&loopCPU, func() { want = plainUniformSum(42, bigN*bigN/(bigChunk*bigChunk), bigChunk*bigChunk) }))
		if !closeTo(total, want, 1e-9) {
			b.Fatalf("sum %v, plain loop %v", total, want)
		}
		b.ReportMetric(sec, "s")
		b.ReportMetric(bytes/sec/1e9, "GB/s")
		b.ReportMetric(loop, "loop1-s")
		b.ReportMetric(loop/sec, "vs-loop1")
		b.ReportMetric(cpu/float64(b.N), "cpu-s")
		b.ReportMetric(loopCPU, "loop1-cpu-s")
		b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
		b.ReportMetric(float64(peak-base)/(1<<20), "peak-over-start-MiB")
		b.ReportMetric(float64(peak-base)/float64(bigChunk*bigChunk*8), "peak-in-chunks")
		_ = total
	})
	b.Run("chunks", func(b *testing.B) {
		// x.Sum() + x.Max() uses x twice, so x's chunks are made by
		// tasks of their own and held until both reductions have read
		// them: the peak memory of reductions over chunks that exist.
		exec := local.New()
		defer exec.Close()
		resetHWM()
		base := vmRSS()
		var sec float64
		for range b.N {
			x := bigArray()
			sec += seconds(func() { scalar(b, exec, x.Sum().Add(x.Max())) })
		}
		peak := vmHWM()
		sec /= float64(b.N)
		b.ReportMetric(sec, "s")
		b.ReportMetric(float64(peak-base)/(1<<20), "peak-over-start-MiB")
		b.ReportMetric(float64(peak-base)/float64(bigChunk*bigChunk*8), "peak-in-chunks")
	})
	b.Run("persisted", func(b *testing.B) {
		exec := local.New()
		defer exec.Close()
		p, bufs := persistedChunks(b, exec, bigArray())
		defer p.Release()
		var shoal, loop1, loop2 float64
		for range b.N {
			var s1, s2, s3 float64
			shoal += seconds(func() { s1 = scalar(b, exec, p.Sum()) })
			loop1 += seconds(func() { s2 = plainSum(bufs) })
			loop2 += seconds(func() { s3 = streamSum(bufs, 2) })
			if !closeTo(s1, s2, 1e-9) || !closeTo(s1, s3, 1e-9) {
				b.Fatalf("sums differ: %v, %v, %v", s1, s2, s3)
			}
		}
		n := float64(b.N)
		b.ReportMetric(shoal/n, "s")
		b.ReportMetric(bytes/(shoal/n)/1e9, "GB/s")
		b.ReportMetric(bytes/(loop1/n)/1e9, "loop1-GB/s")
		b.ReportMetric(bytes/(loop2/n)/1e9, "stream2-GB/s")
		b.ReportMetric(loop2/shoal, "of-2-cores")
	})
}

// plainUniformSum draws chunks numbers of each of chunks streams as
// Uniform(seed, ..., 0, 1) does, and sums them on one thread.
func plainUniformSum(seed uint64, chunks, per int) float64 {
	var s float64
	for c := range chunks {
		src := rand.NewPCG(seed, uint64(c))
		for range per {
			s += float64(src.Uint64()<<11>>11) / (1 << 53)
		}
	}
	return s
}

// plainXPlusXTSum sums x + xᵀ over the square chunks of a square matrix
// (row-major grid of nb×nb chunks of c×c) on one thread, reading the
// transposed chunk in tiles of 32×32 to stay in cache.
func plainXPlusXTSum(bufs [][]float64, nb, c int) float64 {
	const tile = 32
	var total float64
	for bi := range nb {
		for bj := range nb {
			a, t := bufs[bi*nb+bj], bufs[bj*nb+bi]
			var s float64
			for r0 := 0; r0 < c; r0 += tile {
				for c0 := 0; c0 < c; c0 += tile {
					for r := r0; r < min(r0+tile, c); r++ {
						for q := c0; q < min(c0+tile, c); q++ {
							s += a[r*c+q] + t[q*c+r]
						}
					}
				}
			}
			total += s
		}
	}
	return total
}

// BenchmarkXPlusXT computes (x + xᵀ).Mean() of the 20000×20000 array held
// in memory, against gonum's Add and Sum on the same numbers (single
// threaded: gonum does not parallelize them) and against a plain loop on
// one thread that reads the same chunks, the transposed one in tiles.
func BenchmarkXPlusXT(b *testing.B) {
	exec := local.New()
	defer exec.Close()
	p, bufs := persistedChunks(b, exec, bigArray())
	var shoal float64
	var got float64
	var loop, shoalCPU, loopCPU float64
	for range b.N {
		shoal += seconds(cpuOf(&shoalCPU, func() { got = scalar(b, exec, p.Add(p.T()).Mean()) }))
		var mean float64
		loop += seconds(cpuOf(&loopCPU, func() { mean = plainXPlusXTSum(bufs, bigN/bigChunk, bigChunk) / (bigN * bigN) }))
		if !closeTo(got, mean, 1e-9) {
			b.Fatalf("mean %v, plain loop %v", got, mean)
		}
	}
	// gonum's side: the same numbers in one matrix, the persisted chunks
	// released first to make room.
	x := mat.NewDense(bigN, bigN, nil)
	raw := x.RawMatrix()
	nb := bigN / bigChunk
	for i, buf := range bufs {
		bi, bj := i/nb, i%nb
		for r := range bigChunk {
			copy(raw.Data[(bi*bigChunk+r)*bigN+bj*bigChunk:], buf[r*bigChunk:(r+1)*bigChunk])
		}
	}
	bufs = nil
	p.Release()
	runtime.GC()
	debug.FreeOSMemory()
	var gon float64
	var want float64
	for range b.N {
		gon += seconds(func() {
			var y mat.Dense
			y.Add(x, x.T())
			want = mat.Sum(&y) / (bigN * bigN)
		})
	}
	if !closeTo(got, want, 1e-9) {
		b.Fatalf("mean %v, gonum %v", got, want)
	}
	n := float64(b.N)
	flops := 2.0 * bigN * bigN
	b.ReportMetric(shoal/n, "s")
	b.ReportMetric(flops/(shoal/n)/1e9, "GFLOP/s")
	b.ReportMetric(gon/n, "gonum-s")
	b.ReportMetric(flops/(gon/n)/1e9, "gonum-GFLOP/s")
	b.ReportMetric(gon/shoal, "speedup")
	b.ReportMetric(loop/n, "loop1-s")
	b.ReportMetric(loop/shoal, "vs-loop1")
	b.ReportMetric(shoalCPU/n, "cpu-s")
	b.ReportMetric(loopCPU/n, "loop1-cpu-s")
}

// BenchmarkMatMul4000 multiplies two 4000×4000 arrays in 1000×1000 chunks
// held in memory (the answer is the sum of the product, as in bench/),
// against gonum's mat.Dense.Mul on one thread (GOMAXPROCS=1) and on all.
func BenchmarkMatMul4000(b *testing.B) {
	const n, c = 4000, 1000
	exec := local.New()
	defer exec.Close()
	x := Uniform(7, []int{n, n}, 0, 1, Chunks(c, c))
	p, err := x.Persist(context.Background(), exec)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Release()
	xd, err := p.Compute(context.Background(), exec)
	if err != nil {
		b.Fatal(err)
	}
	xm, _ := xd.Mat()
	var shoal, gon1, gonAll, shoalCPU, gon1CPU float64
	var got, want float64
	for range b.N {
		shoal += seconds(cpuOf(&shoalCPU, func() { got = scalar(b, exec, MatMul(p, p).Sum()) }))
		prev := runtime.GOMAXPROCS(1)
		gon1 += seconds(cpuOf(&gon1CPU, func() {
			var y mat.Dense
			y.Mul(xm, xm)
			want = mat.Sum(&y)
		}))
		runtime.GOMAXPROCS(prev)
		gonAll += seconds(func() {
			var y mat.Dense
			y.Mul(xm, xm)
		})
	}
	if !closeTo(got, want, 1e-9) {
		b.Fatalf("sum of product %v, gonum %v", got, want)
	}
	k := float64(b.N)
	flops := 2.0 * n * n * n
	b.ReportMetric(shoal/k, "s")
	b.ReportMetric(flops/(shoal/k)/1e9, "GFLOP/s")
	b.ReportMetric(flops/(gon1/k)/1e9, "gonum1-GFLOP/s")
	b.ReportMetric(flops/(gonAll/k)/1e9, "gonumAll-GFLOP/s")
	b.ReportMetric(gon1/shoal, "speedup")
	b.ReportMetric(gonAll/shoal, "vs-gonumAll")
	b.ReportMetric(shoalCPU/k, "cpu-s")
	b.ReportMetric(gon1CPU/k, "gonum1-cpu-s")
}

// BenchmarkMatMulTransposed multiplies xᵀ·x and x·x for a 1000×1000
// array in 250×250 chunks held in memory: the same work, but xᵀ's blocks
// reach Gemm transposed. The ratio shows what reading a transposed operand
// costs (before Gemm took transposed blocks as they are, every block of xᵀ
// was copied into the transposed order first).
//
//	go test -run XXX -bench MatMulTransposed -benchtime 5x ./array/
func BenchmarkMatMulTransposed(b *testing.B) {
	const n, c = 1000, 250
	exec := local.New()
	defer exec.Close()
	p, err := Uniform(8, []int{n, n}, 0, 1, Chunks(c, c)).Persist(context.Background(), exec)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Release()
	var plain, trans, plainCPU, transCPU float64
	var got, want float64
	for range b.N {
		plain += seconds(cpuOf(&plainCPU, func() { want = scalar(b, exec, MatMul(p, p).Sum()) }))
		trans += seconds(cpuOf(&transCPU, func() { got = scalar(b, exec, MatMul(p.T(), p).Sum()) }))
	}
	if got <= 0 || want <= 0 {
		b.Fatalf("sums %v and %v", got, want)
	}
	k := float64(b.N)
	b.ReportMetric(trans/k, "s")
	b.ReportMetric(plain/k, "xx-s")
	b.ReportMetric(trans/plain, "vs-xx")
	b.ReportMetric(transCPU/k, "cpu-s")
	b.ReportMetric(plainCPU/k, "xx-cpu-s")
}

// BenchmarkGemmLayouts times the product of two 250×250 blocks (one
// tensordot task) as Gemm gets them: both row-major (NN), the first or
// the second transposed in its buffer (TN, NT), or both (TT, where the
// task copies the smaller one first, as gonum's kernel for two
// transposed operands takes about twice as long).
//
//	go test -run XXX -bench GemmLayouts -cpu 1 ./array/
func BenchmarkGemmLayouts(b *testing.B) {
	const n = 250
	x, y := newDense(Float64, []int{n, n}), newDense(Float64, []int{n, n})
	for i := range n * n {
		x.data.([]float64)[i] = float64(i%7) + 0.5
		y.data.([]float64)[i] = float64(i%5) + 0.25
	}
	p := linalgParams{Kind: "tdot", AxesA: []int{1}, AxesB: []int{0}, OutT: Float64}
	for _, tt := range []struct {
		name string
		a, b *Dense
	}{{"NN", x, y}, {"TN", x.T(), y}, {"NT", x, y.T()}, {"TT", x.T(), y.T()}} {
		b.Run(tt.name, func(b *testing.B) {
			for range b.N {
				if _, err := tdotBlocks(context.Background(), []*Dense{tt.a, tt.b}, p); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(2*n*n*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

var _ = fmt.Sprint
