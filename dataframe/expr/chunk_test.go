package expr

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestChunkedEvaluation compares evaluation chunk by chunk with evaluation
// of whole columns on a record large enough to be cut into chunks.
func TestChunkedEvaluation(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	n := 3*chunkRows + 123
	var iv, fv, sv, tv []any
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		if rng.IntN(7) == 0 {
			iv, fv, sv, tv = append(iv, nil), append(fv, nil), append(sv, nil), append(tv, nil)
			continue
		}
		iv = append(iv, rng.IntN(1000)-500)
		fv = append(fv, rng.NormFloat64()*100)
		sv = append(sv, []string{"alpha", "beta", "gamma", "délta"}[rng.IntN(4)]+string(rune('a'+i%26)))
		tv = append(tv, t0.Add(time.Duration(rng.Int64N(400*24*3600))*time.Second))
	}
	rec := record(col("i", i64s(iv...)), col("f", f64s(fv...)), col("s", strs(sv...)), col("t", times(arrow.Millisecond, "Europe/Paris", tv...)))
	defer rec.Release()
	exprs := []Expr{
		Col("i").Mul(2).Add(Col("f")).Gt(50),
		Col("i").FloorDiv(Col("i").Mod(7)),
		Col("f").IsNull().Or(Col("i").Gt(0)),
		When(Col("i").Gt(0)).Then(Col("f")).Otherwise(-1),
		Col("t").Dt().Month().Add(Col("t").Dt().Hour()),
		Col("t").Dt().Truncate("day"),
		Col("s").Str().Contains("ta").And(Col("s").Str().Len().Lt(6)),
		Col("s").Str().Upper().Eq("BETAC"),
		Col("i").Add(1).Mul(Col("i").Add(1)), // shared subexpression
	}
	for _, e := range exprs {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		ev := NewEvaluator(rec, mem)
		got, err := ev.Eval(t.Context(), e)
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		again, err := ev.Eval(t.Context(), e.Alias("again")) // from the cache
		if err != nil {
			t.Fatal(err)
		}
		testNoChunks = true
		ev2 := NewEvaluator(rec, mem)
		want, err := ev2.Eval(t.Context(), e)
		testNoChunks = false
		if err != nil {
			t.Fatal(err)
		}
		g, w, a := goValues(got), goValues(want), goValues(again)
		if !sameValues(g, w) || !sameValues(a, w) {
			for i := range g {
				if !sameValues(g[i:i+1], w[i:i+1]) {
					t.Errorf("%s row %d: chunked %v, whole %v", e, i, g[i], w[i])
					break
				}
			}
		}
		if got.NullN() != want.NullN() {
			t.Errorf("%s: %d nulls chunked, %d whole", e, got.NullN(), want.NullN())
		}
		got.Release()
		again.Release()
		want.Release()
		ev.Release()
		ev2.Release()
		mem.AssertSize(t, 0)
	}
}
