package array

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/local"
)

// refQuantile is NumPy's percentile (linear method) of the values of a
// lane, by sorting them: the neighbours' difference in their type, then
// the interpolation from the nearer one (at a whole rank next to an
// infinite value, the value at that rank, where NumPy's formula makes NaN).
func refQuantile[T float64 | float32 | int64](v []T, q float64) float64 {
	for _, x := range v {
		if x != x {
			return math.NaN()
		}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	pos := float64(n-1) * (q / 100)
	lo := int(math.Floor(pos))
	hi := min(lo+1, n-1)
	t := pos - math.Floor(pos)
	x, y := float64(s[lo]), float64(s[hi])
	d := float64(T(s[hi] - s[lo]))
	if t == 0 && (math.IsInf(x, 0) || math.IsInf(y, 0)) {
		return x
	}
	if t >= 0.5 {
		return y - d*(1-t)
	}
	return x + d*t
}

// pctData is a test array of one dtype: its shape and row-major values.
type pctData struct {
	dt    DType
	shape []int
	f64   []float64
	f32   []float32
	i64   []int64
	b     []bool
}

func (d pctData) array(opts ...Option) Array {
	switch d.dt {
	case Float32:
		return FromSlice(d.f32, d.shape, opts...)
	case Int64:
		return FromSlice(d.i64, d.shape, opts...)
	case Bool:
		return FromSlice(d.b, d.shape, opts...)
	}
	return FromSlice(d.f64, d.shape, opts...)
}

// want returns the shape and values of Percentile(d, qs) along axis (-1:
// all elements), by sorting each lane.
func (d pctData) want(qs []float64, axis int) ([]int, []float64) {
	var lanes [][]int // positions of each lane's values
	shape := []int{len(qs)}
	if axis < 0 {
		all := make([]int, product(d.shape))
		for i := range all {
			all[i] = i
		}
		lanes = [][]int{all}
	} else {
		other := slices.Delete(slices.Clone(d.shape), axis, axis+1)
		shape = append(shape, other...)
		strides := rowMajorStrides(d.shape)
		eachIndex(other, func(idx []int) {
			var lane []int
			for k := range d.shape[axis] {
				full := slices.Insert(slices.Clone(idx), axis, k)
				off := 0
				for a, i := range full {
					off += i * strides[a]
				}
				lane = append(lane, off)
			}
			lanes = append(lanes, lane)
		})
	}
	var out []float64
	for _, q := range qs {
		for _, lane := range lanes {
			var v float64
			switch d.dt {
			case Float64:
				v = refQuantile(pick(d.f64, lane), q)
			case Float32:
				v = float64(float32(refQuantile(pick(d.f32, lane), q)))
			case Int64:
				v = refQuantile(pick(d.i64, lane), q)
			case Bool:
				ints := make([]int64, len(lane))
				for i, p := range lane {
					if d.b[p] {
						ints[i] = 1
					}
				}
				v = refQuantile(ints, q)
			}
			out = append(out, v)
		}
	}
	return shape, out
}

func pick[T any](v []T, at []int) []T {
	out := make([]T, len(at))
	for i, p := range at {
		out[i] = v[p]
	}
	return out
}

// randPctData draws values of dt: with ties, in full precision, with
// infinities and zeros of both signs, with a NaN; integers in a small or
// the whole range, or all equal.
func randPctData(rng *rand.Rand, dt DType, shape []int) pctData {
	n := product(shape)
	d := pctData{dt: dt, shape: slices.Clone(shape)}
	switch dt {
	case Float64, Float32:
		v := randFloats(rng, n)
		switch rng.IntN(5) {
		case 0:
			for i := range v {
				v[i] = rng.NormFloat64() * 1e3
			}
		case 1:
			for range 1 + n/4 {
				v[rng.IntN(n)] = []float64{math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1)}[rng.IntN(4)]
			}
		case 2:
			v[rng.IntN(n)] = math.NaN()
		}
		if dt == Float64 {
			d.f64 = v
		} else {
			d.f32 = make([]float32, n)
			for i, x := range v {
				d.f32[i] = float32(x)
			}
		}
	case Int64:
		d.i64 = make([]int64, n)
		mode := rng.IntN(3)
		for i := range d.i64 {
			switch mode {
			case 0:
				d.i64[i] = rng.Int64N(10) - 3
			case 1:
				d.i64[i] = int64(rng.Uint64())
			default:
				d.i64[i] = 1 << 40
			}
		}
	case Bool:
		d.b = make([]bool, n)
		for i := range d.b {
			d.b[i] = rng.IntN(3) == 0
		}
	}
	return d
}

// Percentiles of random arrays of every dtype, chunked at random, of all
// elements or along an axis, as given, through an elementwise expression,
// or with chunks of unknown size, agree exactly with sorting each lane.
func TestPercentileProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for trial := range 60 {
		dt := []DType{Float64, Float32, Int64, Bool}[trial%4]
		nd := 1 + rng.IntN(3)
		shape := randShape(rng, nd, 9)
		d := randPctData(rng, dt, shape)
		var qs []float64
		switch rng.IntN(6) {
		case 0:
			qs = make([]float64, 12) // 12 bits per round
		case 1:
			qs = make([]float64, 130) // 8 bits per round
		default:
			qs = make([]float64, 1+rng.IntN(4))
		}
		for i := range qs {
			qs[i] = []float64{0, 100, 50, rng.Float64() * 100, float64(rng.IntN(101))}[rng.IntN(5)]
		}
		axis := -1
		if rng.IntN(3) > 0 {
			axis = rng.IntN(nd)
		}
		chunks := randChunks(rng, shape)
		a := d.array(ChunkSizes(chunks...))
		variant := rng.IntN(3)
		switch {
		case variant == 1 && dt != Bool:
			a = a.Mul(1) // fused into the tasks that count
		case variant == 2 && (axis <= 0):
			// Rows of unknown length: a mask that keeps them all.
			keep := make([]bool, shape[0])
			for i := range keep {
				keep[i] = true
			}
			a = a.Mask(FromSlice(keep, shape[:1], ChunkSizes(chunks[0])))
		}
		var opts []Option
		if axis >= 0 {
			opts = append(opts, Axis(axis))
		}
		if rng.IntN(2) == 0 {
			opts = append(opts, SplitEvery(2))
		}
		wantShape, want := d.want(qs, axis)
		got := Percentile(a, qs, opts...)
		if err := got.Err(); err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		r := compute(t, got)
		wantT := Float64
		if dt == Float32 {
			wantT = Float32
		}
		if r.DType() != wantT {
			t.Fatalf("trial %d: dtype %v, want %v", trial, r.DType(), wantT)
		}
		assertClose(t, r, wantShape, want, 0)
	}
}

// Values that NumPy 1.24.2 gives for np.percentile of the same data, bit
// for bit (the float32 ones rounded to float32: NumPy 1.24 returns
// float64 for float32 input), whichever way the array is chunked.
func TestPercentileMatchesNumPy(t *testing.T) {
	qs := []float64{0, 10, 33.3, 50, 66.6, 99.9, 100, 12.5}
	f64 := make([]float64, 50)
	i64 := make([]int64, 50)
	f32 := make([]float32, 50)
	for i := range 50 {
		f64[i] = float64((i*37)%101)/7 - 3
		i64[i] = int64(i*7919%1000003)*10_000_000_000 - 5_000_000_000_000_000
		f32[i] = float32(math.Mod(float64(i)*0.37, 11) - 5.1)
	}
	// np.percentile(x, qs) for each.
	wantF64 := []float64{-3.0, -1.5857142857142856, 1.850142857142856, 4.071428571428571, 6.519142857142856, 11.26471428571429, 11.285714285714286, -1.267857142857143}
	wantI64 := []float64{-5000000000000000.0, -4611969000000000.0, -3707856770000000.5, -3059845000000000.0, -2415713540000000.5, -1123570309999999.4, -1119690000000000.0, -4514961250000000.0}
	wantF32 := []float64{-5.099999904632568, -4.270000457763672, -2.108299970626831, -0.6100000143051147, 0.883400022983551, 5.611870288848877, 5.630000114440918, -3.9774999618530273}
	// np.percentile(f64.reshape(5, 10), [25, 50], axis=0) and axis=1.
	wantAxis0 := []float64{1.7142857142857144, -2.5714285714285716, 2.571428571428571, -1.5714285714285714, -1.1428571428571428, 4.0, -0.1428571428571428, 0.2857142857142856, 5.428571428571429, 1.2857142857142856,
		6.428571428571429, 2.1428571428571432, 2.7142857142857144, 3.1428571428571432, 3.571428571428571, 4.142857142857143, 4.571428571428571, 5.0, 5.571428571428571, 6.0}
	wantAxis1 := []float64{0.2142857142857143, 0.8928571428571428, 0.9642857142857144, 1.3928571428571432, 0.7499999999999999, 3.0, 4.857142857142858, 3.857142857142857, 4.285714285714286, 4.714285714285714}
	all := make([]bool, 50)
	for i := range all {
		all[i] = true
	}
	for _, ch := range []Option{Chunks(50), Chunks(7), Chunks(3)} {
		tests := []struct {
			name  string
			a     Array
			opts  []Option
			shape []int
			want  []float64
		}{
			{"float64", FromSlice(f64, []int{50}, ch), nil, []int{8}, wantF64},
			{"float64 of unknown chunks", FromSlice(f64, []int{50}, ch).Mask(FromSlice(all, []int{50}, ch)), nil, []int{8}, wantF64},
			{"int64", FromSlice(i64, []int{50}, ch), nil, []int{8}, wantI64},
			{"float32", FromSlice(f32, []int{50}, ch), nil, []int{8}, wantF32},
			{"axis 0", FromSlice(f64, []int{5, 10}, ch), []Option{Axis(0)}, []int{2, 10}, wantAxis0},
			{"axis 1", FromSlice(f64, []int{5, 10}, ch), []Option{Axis(-1)}, []int{2, 5}, wantAxis1},
		}
		for _, tt := range tests {
			q := qs
			if strings.HasPrefix(tt.name, "axis") {
				q = []float64{25, 50}
			}
			got := compute(t, Percentile(tt.a, q, tt.opts...))
			assertClose(t, got, tt.shape, tt.want, 0)
		}
	}
}

// radixRounds returns the number of rounds of radix select in a's graph
// (0: the lanes are sorted in their chunks).
func radixRounds(t *testing.T, a Array) int {
	t.Helper()
	g, _, err := a.Graph()
	if err != nil {
		t.Fatal(err)
	}
	tokens := map[string]bool{}
	for _, k := range g.Keys() {
		if k.Prefix() == "percentile-count" {
			tokens[strings.Split(string(k), "-")[2]] = true
		}
	}
	return len(tokens)
}

// Each way of finding percentiles is taken where it should be, and agrees
// with sorting.
func TestPercentilePaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	f := randPctData(rng, Float64, []int{40, 6})
	many := make([]float64, 40)
	for i := range many {
		many[i] = float64(i) * 2.5
	}
	tests := []struct {
		name   string
		d      pctData
		chunks Option
		qs     []float64
		axis   int
		rounds int
	}{
		{"one chunk", f, Chunks(-1), []float64{50}, -1, 0},
		{"all elements", f, Chunks(7, 4), []float64{50}, -1, 4},
		{"2 percentiles: 12 bits a round", f, Chunks(7, 4), []float64{10, 50}, -1, 6},
		{"float32", randPctData(rng, Float32, []int{40, 6}), Chunks(7, 4), []float64{50}, -1, 2},
		{"bool", randPctData(rng, Bool, []int{40, 6}), Chunks(7, 4), []float64{50}, -1, 1},
		{"int64: range, then up to 4 rounds", randPctData(rng, Int64, []int{40, 6}), Chunks(7, 4), []float64{50}, -1, 5},
		{"40 percentiles: 8 bits a round", f, Chunks(7, 4), many, -1, 8},
		{"axis in one chunk", f, Chunks(-1, 1), []float64{50}, 0, 0},
		{"lanes that fit a chunk", f, Chunks(20, 6), []float64{50}, 0, 0},
		{"lanes longer than a chunk", f, Chunks(10, 2), []float64{25}, 0, 4},
		{"lanes longer than a chunk, 2 percentiles", f, Chunks(10, 2), []float64{25, 75}, 0, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []Option
			if tt.axis >= 0 {
				opts = append(opts, Axis(tt.axis))
			}
			p := Percentile(tt.d.array(tt.chunks), tt.qs, opts...)
			if r := radixRounds(t, p); r != tt.rounds {
				t.Fatalf("%d rounds of radix select, want %d", r, tt.rounds)
			}
			shape, want := tt.d.want(tt.qs, tt.axis)
			assertClose(t, compute(t, p), shape, want, 0)
		})
	}
}

func TestPercentileEdgeCases(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	negZero := math.Copysign(0, -1)
	tests := []struct {
		name string
		a    Array
		qs   []float64
		opts []Option
		want []float64
	}{
		{"one value", FromSlice([]float64{4}, []int{1}), []float64{0, 50, 100}, nil, []float64{4, 4, 4}},
		{"infinities at whole ranks", FromSlice([]float64{-inf, 1, inf}, []int{3}, Chunks(1)), []float64{0, 50, 100, 25}, nil, []float64{-inf, 1, inf, -inf}},
		{"NaN", FromSlice([]float64{1, nan, 3, 4}, []int{4}, Chunks(2)), []float64{0, 50}, nil, []float64{nan, nan}},
		{"all NaN", FromSlice([]float32{nan32(), nan32()}, []int{2}, Chunks(1)), []float64{50}, nil, []float64{nan}},
		{"NaN in one lane", FromSlice([]float64{1, nan, 2, 3, 4, 5}, []int{3, 2}, Chunks(1, 2)), []float64{50}, []Option{Axis(0)}, []float64{2, nan}},
		{"zeros of both signs", FromSlice([]float64{0, negZero, negZero, 1}, []int{4}, Chunks(3)), []float64{0, 50}, nil, []float64{0, 0}},
		{"int64 all equal", FromSlice([]int64{7, 7, 7}, []int{3}, Chunks(2)), []float64{0, 30, 100}, nil, []float64{7, 7, 7}},
		{"int64 extremes", FromSlice([]int64{math.MaxInt64, math.MinInt64, 0}, []int{3}, Chunks(2)), []float64{0, 50, 100}, nil,
			[]float64{math.MinInt64, 0, math.MaxInt64}},
		{"bool", FromSlice([]bool{true, false, true, true}, []int{4}, Chunks(3)), []float64{0, 20, 50}, nil, []float64{0, 0.6000000000000001, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := compute(t, Percentile(tt.a, tt.qs, tt.opts...))
			assertClose(t, got, got.Shape(), tt.want, 0)
			if g := got.Float64s(); len(g) > 0 && math.Signbit(g[0]) != math.Signbit(tt.want[0]) && !math.IsNaN(g[0]) {
				t.Fatalf("first value %v, want %v", g[0], tt.want[0])
			}
		})
	}
	// Errors.
	mustErr(t, Percentile(Zeros([]int{3}), []float64{101}).Err(), "101", "between 0 and 100")
	mustErr(t, Percentile(Zeros([]int{3}), nil).Err(), "no percentiles")
	mustErr(t, Percentile(Zeros([]int{3}), []float64{1}, Axis(0, 1)).Err(), "one axis")
	mustErr(t, Percentile(Zeros([]int{0, 3}), []float64{1}).Err(), "empty", "(0, 3)")
	mustErr(t, Percentile(Zeros([]int{0, 3}), []float64{1}, Axis(0)).Err(), "axis 0", "empty")
	v := Arange(0, 8, 1, Chunks(3))
	mustErr(t, computeErr(t, Percentile(v.Mask(v.Gt(10)), []float64{50})), "empty")
	// Rows 2..5 of [[0 1] [2 3] ... [10 11]], in chunks of unknown length.
	gt2 := func(m Array) Array { return m.Mask(m.Index(All(), At(0)).Gt(2)) }
	m := Arange(0, 12, 1, Chunks(4)).Reshape(6, 2)
	rows := gt2(m.Rechunk(Chunks(3, 1)))
	mustErr(t, Percentile(rows, []float64{50}, Axis(1)).Err(), "axis 1 spans 2 chunks", "unknown size", "ComputeChunkSizes")
	// Along the unknown axis itself, all elements, or along an axis in one
	// chunk, they work.
	assertClose(t, compute(t, Percentile(rows, []float64{50}, Axis(0))), []int{1, 2}, []float64{7, 8}, 0)
	assertClose(t, compute(t, Percentile(rows, []float64{50})), []int{1}, []float64{7.5}, 0)
	assertClose(t, compute(t, Percentile(gt2(m.Rechunk(Chunks(3, 2))), []float64{50}, Axis(1))), []int{1, 4}, []float64{4.5, 6.5, 8.5, 10.5}, 0)
}

func nan32() float32 { return float32(math.NaN()) }

// taskBytes computes a on a local executor and returns it and the bytes
// of every task's result, from its transitions.
func taskBytes(t *testing.T, a Array) (*Dense, map[graph.Key]int64) {
	t.Helper()
	e := local.New(local.WithThreads(2))
	defer e.Close()
	var mu sync.Mutex
	sizes := map[graph.Key]int64{}
	sub := e.Events().Subscribe(func(evs []diagnostics.Event) {
		mu.Lock()
		defer mu.Unlock()
		for _, ev := range evs {
			if ev.Kind == diagnostics.TaskTransition && ev.To == "memory" {
				sizes[ev.Key] = ev.Bytes
			}
		}
	})
	d, err := a.Compute(ctxB, e)
	if err != nil {
		t.Fatal(err)
	}
	sub.Close()
	mu.Lock()
	defer mu.Unlock()
	return d, sizes
}

// Percentiles of an 8 MB array in chunks of 500 kB never bring the array
// (or any large part of it) into one task: no task result is bigger than
// a chunk or the histograms of a task (1 MiB when chunks are smaller), and
// no task takes inputs bigger than a couple of those.
func TestPercentileMemoryBounded(t *testing.T) {
	const n, c = 1000, 250
	chunk := int64(c * c * 8)
	x := Uniform(3, []int{n, n}, 0, 1, Chunks(c))
	path := filepath.Join(t.TempDir(), "x.npy")
	if err := WriteNPY(ctxB, newExec(t), path, x); err != nil {
		t.Fatal(err)
	}
	tall := Uniform(4, []int{50000, 4}, 0, 1, Chunks(5000, 4)) // lanes of 400 kB, chunks of 160 kB
	hist := int64(minHistBytes)                                // what the histograms of a task may take
	// The medians as one task sorting everything finds them.
	median := compute(t, Percentile(x.Rechunk(Chunks(-1)), []float64{50}))
	twice := FromSlice([]float64{2 * median.Float64s()[0]}, []int{1}) // exact
	tests := []struct {
		name  string
		a     Array
		chunk int64
		want  *Dense
	}{
		{"an expression, all elements", Percentile(x.Mul(2), []float64{50}, SplitEvery(2)), chunk, compute(t, twice)},
		{"a file, all elements", Percentile(ReadNPY(path, Chunks(c)), []float64{50}, SplitEvery(2)), chunk, median},
		{"a file, along an axis", Percentile(ReadNPY(path, Chunks(c)), []float64{50}, Axis(0), SplitEvery(2)), chunk,
			compute(t, Percentile(x.Rechunk(Chunks(-1)), []float64{50}, Axis(0)))},
		{"long lanes", Percentile(tall, []float64{50}, Axis(0), SplitEvery(2)), 5000 * 4 * 8,
			compute(t, Percentile(tall.Rechunk(Chunks(-1)), []float64{50}, Axis(0)))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, _, err := tt.a.Graph()
			if err != nil {
				t.Fatal(err)
			}
			got, sizes := taskBytes(t, tt.a)
			limit := max(tt.chunk, hist) + 4096
			tasks := map[graph.Key]*graph.Task{}
			for _, task := range g.Tasks() {
				tasks[task.Key] = task
			}
			// The inputs of a task, counting those of a task the executor
			// fused into it (which has no result of its own).
			var inputs func(task *graph.Task) int64
			inputs = func(task *graph.Task) int64 {
				var in int64
				for _, d := range task.Deps {
					if b, ok := sizes[d]; ok {
						in += b
					} else {
						in += inputs(tasks[d])
					}
				}
				return in
			}
			var most, mostIn int64
			for _, task := range g.Tasks() {
				b, ok := sizes[task.Key]
				if !ok {
					continue // fused into the task that uses it
				}
				if b > limit {
					t.Fatalf("task %s holds %d bytes; a chunk has %d", task.Key, b, tt.chunk)
				}
				in := inputs(task)
				if in > 2*limit {
					t.Fatalf("task %s takes %d bytes; a chunk has %d", task.Key, in, tt.chunk)
				}
				most, mostIn = max(most, b), max(mostIn, in)
			}
			if len(sizes) < len(g.Tasks())/2 {
				t.Fatalf("sizes of %d tasks of %d", len(sizes), len(g.Tasks()))
			}
			t.Logf("%d tasks; the biggest result %d bytes, the biggest inputs %d bytes (chunks of %d)", len(g.Tasks()), most, mostIn, tt.chunk)
			assertClose(t, got, tt.want.Shape(), tt.want.Float64s(), 0)
		})
	}
	// An expression is computed again in each round rather than held:
	// the executor holds histograms (1 MiB each here), never the array (24
	// MB, in 6 chunks of 4 MB). How many histograms wait at once depends on
	// how the tasks happen to run; even all those of a round are less than
	// half the array.
	const big = 3_000_000
	peak := heldPeak(t, Percentile(Arange(0, big, 1, Chunks(big/6)).Mul(2), []float64{50}, SplitEvery(2)))
	t.Logf("held at most %d bytes at once", peak)
	if peak > big*8/2 {
		t.Fatalf("held %d bytes at once; the array has %d", peak, big*8)
	}
}
