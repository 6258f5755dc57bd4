package array

import (
	"sync"
	"testing"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/local"
)

// heldPeak computes a on a local executor with two threads and returns the
// most bytes of results it held at once, from its task transitions.
func heldPeak(t *testing.T, a Array) int64 {
	t.Helper()
	e := local.New(local.WithThreads(2))
	defer e.Close()
	var mu sync.Mutex
	sizes := map[graph.Key]int64{}
	var held, peak int64
	sub := e.Events().Subscribe(func(evs []diagnostics.Event) {
		mu.Lock()
		defer mu.Unlock()
		for _, ev := range evs {
			if ev.Kind != diagnostics.TaskTransition {
				continue
			}
			switch {
			case ev.To == "memory":
				sizes[ev.Key] = ev.Bytes
				held += ev.Bytes
				peak = max(peak, held)
			case ev.From == "memory":
				held -= sizes[ev.Key]
				delete(sizes, ev.Key)
			}
		}
	})
	if _, err := a.Compute(ctxB, e); err != nil {
		t.Fatal(err)
	}
	sub.Close()
	mu.Lock()
	defer mu.Unlock()
	return peak
}

// A reduction holds a few chunks at a time, not the array: the tree and the
// executor's ordering release each chunk once it is summed.
func TestReductionMemoryBounded(t *testing.T) {
	const n, c = 1200, 100 // 144 chunks of 80 kB, 11.5 MB in all
	chunk := int64(c * c * 8)
	x := Uniform(1, []int{n, n}, 0, 1, Chunks(c))
	for _, tt := range []struct {
		name string
		a    Array
		max  int64 // chunks
	}{
		{"sum", x.Sum(), 1},
		{"mean of x + x.T", x.Add(x.T()).Mean(), 8},
		{"std along rows", x.Std(Axis(1)), 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			peak := heldPeak(t, tt.a)
			if peak > tt.max*chunk {
				t.Fatalf("held %d bytes (%.1f chunks) at once", peak, float64(peak)/float64(chunk))
			}
			t.Logf("held at most %.1f chunks of %d", float64(peak)/float64(chunk), (n/c)*(n/c))
		})
	}
}

// Chunks spill to disk as Arrow IPC and come back the same when the
// executor runs out of its memory limit.
func TestSpill(t *testing.T) {
	x := Uniform(2, []int{300, 300}, 0, 1, Chunks(50))
	want := compute(t, x.Add(x.T()).Std(Axis(0)))
	e := local.New(local.WithMemoryLimit(100_000), local.WithLocalDir(t.TempDir()))
	defer e.Close()
	var mu sync.Mutex
	spills := 0
	sub := e.Events().Subscribe(func(evs []diagnostics.Event) {
		mu.Lock()
		defer mu.Unlock()
		for _, ev := range evs {
			if ev.Kind == diagnostics.Spill {
				spills++
			}
		}
	})
	got, err := x.Add(x.T()).Std(Axis(0)).Compute(ctxB, e)
	sub.Close()
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, got, want.Shape(), want.Float64s(), 1e-12)
	mu.Lock()
	defer mu.Unlock()
	if spills == 0 {
		t.Fatal("nothing spilled")
	}
}

// A persisted array is computed once and read by later computations.
func TestPersist(t *testing.T) {
	e := local.New()
	defer e.Close()
	x := Uniform(3, []int{20, 20}, 0, 1, Chunks(7))
	p, err := x.Persist(ctxB, e)
	if err != nil {
		t.Fatal(err)
	}
	g, _, err := p.Mul(2).Sum().Graph()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range g.Keys() {
		if k.Prefix() == "uniform" {
			t.Fatalf("the persisted chunks are computed again: %s", k)
		}
	}
	if len(g.External()) != 9 {
		t.Fatalf("%d external keys", len(g.External()))
	}
	a, err := p.Mul(2).Sum().Compute(ctxB, e)
	if err != nil {
		t.Fatal(err)
	}
	b, err := x.Sum().Compute(ctxB, e)
	if err != nil {
		t.Fatal(err)
	}
	av, _ := a.At()
	bv, _ := b.At()
	if !closeTo(av, 2*bv, 1e-12) {
		t.Fatalf("%v != 2 * %v", av, bv)
	}
	p.Release()
	if e.Memory().Keys != 0 {
		t.Fatalf("%d results held after Release", e.Memory().Keys)
	}
}
