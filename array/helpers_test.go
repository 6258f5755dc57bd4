package array

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/local"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// roundTrip is an executor that sends every graph through graph.Encode
// and graph.Decode before running the copy, as a cluster would.
type roundTrip struct{ inner graph.Executor }

func (r roundTrip) Compute(ctx context.Context, g *graph.Graph, keys ...graph.Key) ([]any, error) {
	b, err := graph.Encode(g)
	if err != nil {
		return nil, err
	}
	g2, err := graph.Decode(b)
	if err != nil {
		return nil, err
	}
	return r.inner.Compute(ctx, g2, keys...)
}

func (r roundTrip) Submit(ctx context.Context, g *graph.Graph, keys ...graph.Key) ([]graph.Future, error) {
	b, err := graph.Encode(g)
	if err != nil {
		return nil, err
	}
	g2, err := graph.Decode(b)
	if err != nil {
		return nil, err
	}
	return r.inner.Submit(ctx, g2, keys...)
}

// execs holds one executor per test.
var execs sync.Map

// newExec returns the test's executor (made on first use, closed when the
// test ends), which sends every graph through Encode and Decode.
func newExec(t testing.TB) graph.Executor {
	t.Helper()
	if e, ok := execs.Load(t); ok {
		return e.(graph.Executor)
	}
	e := local.New()
	t.Cleanup(func() {
		execs.Delete(t)
		e.Close()
	})
	r := roundTrip{e}
	execs.Store(t, r)
	return r
}

func compute(t testing.TB, a Array) *Dense {
	t.Helper()
	d, err := a.Compute(context.Background(), newExec(t))
	if err != nil {
		t.Fatalf("compute %v: %v", a, err)
	}
	return d
}

func closeTo(a, b, tol float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return a == b
	}
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// assertClose checks that got has the shape and, within tol, the values of
// want (row-major).
func assertClose(t testing.TB, got *Dense, shape []int, want []float64, tol float64) {
	t.Helper()
	if len(got.shape) != len(shape) {
		t.Fatalf("shape %v, want %v", got.shape, shape)
	}
	for i := range shape {
		if got.shape[i] != shape[i] {
			t.Fatalf("shape %v, want %v", got.shape, shape)
		}
	}
	g := got.Float64s()
	if len(g) != len(want) {
		t.Fatalf("%d values, want %d", len(g), len(want))
	}
	for i := range g {
		if !closeTo(g[i], want[i], tol) {
			t.Fatalf("element %d (of shape %v) is %v, want %v", i, shape, g[i], want[i])
		}
	}
}

var ctxB = context.Background()

// randChunks returns random chunk sizes covering shape.
func randChunks(rng *rand.Rand, shape []int) [][]int {
	out := make([][]int, len(shape))
	for a, n := range shape {
		if n == 0 {
			out[a] = []int{0}
			continue
		}
		for left := n; left > 0; {
			c := 1 + rng.IntN(min(left, 1+n/2+rng.IntN(3)))
			out[a] = append(out[a], c)
			left -= c
		}
	}
	return out
}

func randShape(rng *rand.Rand, nd, maxLen int) []int {
	s := make([]int, nd)
	for i := range s {
		s[i] = 1 + rng.IntN(maxLen)
	}
	return s
}

func randFloats(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = math.Round((rng.Float64()*20-10)*8) / 8 // exact in binary, with ties and negatives
	}
	return v
}

// ref is a dense reference array for tests: shape and row-major float64
// values.
type ref struct {
	shape []int
	v     []float64
}

func newRef(shape []int, v []float64) ref { return ref{shape: slices.Clone(shape), v: v} }

func (r ref) at(idx []int) float64 {
	off := 0
	for a := range idx {
		off = off*r.shape[a] + idx[a]
	}
	return r.v[off]
}

// each calls f with every index of shape, row-major.
func eachIndex(shape []int, f func(idx []int)) {
	lo := make([]int, len(shape))
	forEachIndex(lo, shape, f)
}

func (r ref) array(rng *rand.Rand) Array {
	return FromSlice(r.v, r.shape, ChunkSizes(randChunks(rng, r.shape)...))
}

func mustErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one mentioning %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not mention %q", err, p)
		}
	}
}

// computeErr computes a and returns the error.
func computeErr(t testing.TB, a Array) error {
	t.Helper()
	_, err := a.Compute(ctxB, newExec(t))
	return err
}
