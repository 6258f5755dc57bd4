package expr

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestString(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		e    Expr
		want string
	}{
		{Col("a").Add(1.5).Gt(Col("b")), `(col("a") + 1.5) > col("b")`},
		{Col("a").Add(Col("b").Mul(2)), `col("a") + (col("b") * 2)`},
		{Col("a").Mul(2.0), `col("a") * 2.0`},
		{Col("a").Add(-1).Neg(), `-(col("a") + -1)`},
		{Col("a").Neg().Pow(2).Sub(Lit(-2).Pow(Col("a"))), `((-col("a")) ** 2) - ((-2) ** col("a"))`},
		{Lit(-1).Abs(), `(-1).abs()`},
		{Col("p").Not().And(Col("q").Or(false)), `~col("p") & (col("q") | false)`},
		{Col("a").FloorDiv(2).Mod(3).Pow(0.5), `((col("a") // 2) % 3) ** 0.5`},
		{Col("a").Div(float32(2)), `col("a") / float32(2.0)`},
		{Col("a").Eq(math.NaN()).Or(Col("a").Lt(math.Inf(-1))), `(col("a") == NaN) | (col("a") < -inf)`},
		{Col("a").Between(1, 10), `col("a").between(1, 10)`},
		{Col("a").IsIn(1, "x", nil), `col("a").is_in([1, "x", null])`},
		{Col("a").IsNull().Xor(Col("a").IsNotNull()), `col("a").is_null() ^ col("a").is_not_null()`},
		{Col("a").FillNull(0).Alias("a0"), `col("a").fill_null(0).alias("a0")`},
		{Col("a").Cast(arrow.PrimitiveTypes.Int32), `col("a").cast(int32)`},
		{Col("a").Cast(&arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}), `col("a").cast(timestamp[ms, UTC])`},
		{Col("s").Str().Contains(`say "hi"`), `col("s").str.contains("say \"hi\"")`},
		{Col("s").Str().Slice(-3, 2).Str().Upper(), `col("s").str.slice(-3, 2).str.upper()`},
		{Col("s").Str().Replace("a", "b"), `col("s").str.replace("a", "b")`},
		{Col("t").Dt().Month(), `col("t").dt.month()`},
		{Col("t").Dt().Truncate("week"), `col("t").dt.truncate("week")`},
		{Col("t").Dt().AddMonths(2), `col("t").dt.add_months(2)`},
		{Col("t").Gt(time.Date(2024, 1, 2, 3, 4, 5, 6, time.UTC)), `col("t") > timestamp("2024-01-02T03:04:05.000000006Z")`},
		{Col("t").Lt(time.Date(2024, 7, 1, 0, 0, 0, 0, paris)), `col("t") < timestamp("2024-07-01T00:00:00+02:00", "Europe/Paris")`},
		{Col("t").Sub(90 * time.Minute), `col("t") - duration("1h30m0s")`},
		{Col("d").Ge(Date{2024, 2, 29}), `col("d") >= date("2024-02-29")`},
		{Lit(uint64(math.MaxUint64)), `18446744073709551615`},
		{Lit(uint8(7)), `7`},
		{When(Col("a").Gt(0)).Then("pos").When(Col("a").Lt(0)).Then("neg").Otherwise("zero"),
			`when(col("a") > 0).then("pos").when(col("a") < 0).then("neg").otherwise("zero")`},
		{When(Col("p")).Then(1).Expr(), `when(col("p")).then(1).otherwise(null)`},
		{Col("a").Add(When(Col("p")).Then(1)), `col("a") + when(col("p")).then(1).otherwise(null)`},
	}
	for _, tt := range tests {
		if err := tt.e.Err(); err != nil {
			t.Errorf("%s: unexpected error %v", tt.want, err)
		}
		if got := tt.e.String(); got != tt.want {
			t.Errorf("String() = %s\n            want %s", got, tt.want)
		}
	}
}

func TestNameAndColumns(t *testing.T) {
	tests := []struct {
		e       Expr
		name    string
		columns []string
	}{
		{Col("a"), "a", []string{"a"}},
		{Col("a").Add(Col("b")).Mul(Col("a")), "a", []string{"a", "b"}},
		{Lit(1).Add(Col("x")), "x", []string{"x"}},
		{Col("a").Add(1).Alias("z"), "z", []string{"a"}},
		{Lit(1).Add(2), "literal", nil},
		{When(Col("c").Gt(1)).Then(Col("d")).Otherwise(Col("c")), "c", []string{"c", "d"}},
	}
	for _, tt := range tests {
		if got := tt.e.Name(); got != tt.name {
			t.Errorf("%s: Name() = %q, want %q", tt.e, got, tt.name)
		}
		if got := tt.e.Columns(); !slices.Equal(got, tt.columns) {
			t.Errorf("%s: Columns() = %q, want %q", tt.e, got, tt.columns)
		}
	}
}

func TestAccessorsTransformConjuncts(t *testing.T) {
	e := Col("a").Gt(1).And(Col("b").Eq("x").And(Col("c").IsNull()))
	parts := Conjuncts(e)
	var texts []string
	for _, p := range parts {
		texts = append(texts, p.String())
	}
	if want := []string{`col("a") > 1`, `col("b") == "x"`, `col("c").is_null()`}; !slices.Equal(texts, want) {
		t.Errorf("Conjuncts = %q, want %q", texts, want)
	}
	p := parts[0]
	if p.Op() != "gt" || len(p.Args()) != 2 {
		t.Fatalf("Op, Args = %q, %d", p.Op(), len(p.Args()))
	}
	if name, ok := p.Args()[0].ColumnName(); !ok || name != "a" {
		t.Errorf("ColumnName = %q, %v", name, ok)
	}
	if v, ok := p.Args()[1].LiteralValue(); !ok || v != int64(1) {
		t.Errorf("LiteralValue = %v, %v", v, ok)
	}
	if _, ok := p.ColumnName(); ok {
		t.Error("ColumnName of a comparison")
	}
	if ct, ok := Col("a").Cast(arrow.PrimitiveTypes.Int8).CastType(); !ok || ct.ID() != arrow.INT8 {
		t.Errorf("CastType = %v, %v", ct, ok)
	}
	if an, ok := Col("a").Alias("q").AliasName(); !ok || an != "q" {
		t.Errorf("AliasName = %q, %v", an, ok)
	}

	// Rename column a to z everywhere; leave other nodes shared.
	renamed := e.Transform(func(x Expr) (Expr, bool) {
		if name, ok := x.ColumnName(); ok && name == "a" {
			return Col("z"), true
		}
		return x, false
	})
	if got, want := renamed.String(), `(col("z") > 1) & ((col("b") == "x") & col("c").is_null())`; got != want {
		t.Errorf("Transform = %s, want %s", got, want)
	}
	if renamed.Args()[1].n != e.Args()[1].n {
		t.Error("Transform copied an unchanged subtree")
	}
	// Constant folding of literal additions, bottom up.
	folded := Lit(1).Add(Lit(2)).Add(Col("a")).Transform(func(x Expr) (Expr, bool) {
		if x.Op() != "add" {
			return x, false
		}
		l, lok := x.Args()[0].LiteralValue()
		r, rok := x.Args()[1].LiteralValue()
		if lok && rok {
			return Lit(l.(int64) + r.(int64)), true
		}
		return x, false
	})
	if got := folded.String(); got != `3 + col("a")` {
		t.Errorf("folded = %s", got)
	}
	if got := Conjuncts(Col("a")); len(got) != 1 || got[0].String() != `col("a")` {
		t.Errorf("Conjuncts of a column = %v", got)
	}
}

func testSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "price", Type: arrow.PrimitiveTypes.Float64},
		{Name: "qty", Type: arrow.PrimitiveTypes.Int32},
		{Name: "name", Type: arrow.BinaryTypes.String},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
		{Name: "ok", Type: arrow.FixedWidthTypes.Boolean},
	}, nil)
}

func TestTypeErrors(t *testing.T) {
	s := testSchema()
	tests := []struct {
		e        Expr
		contains []string
		target   any // pointer to the error type errors.As should find
	}{
		{Col("prce").Mul(2), []string{`column "prce" not found`, `did you mean "price"? (columns: "price", "qty", "name", "ts", "ok")`, `column "prce" not found in col("prce") * 2;`}, new(*ColumnNotFoundError)},
		{Col("zzz"), []string{`column "zzz" not found (columns: "price",`}, new(*ColumnNotFoundError)},
		{Col("name").Add(Col("price")), []string{`cannot add float64 to utf8`, `col("name") + col("price")`, `col("name") is utf8`, `col("price") is float64`}, new(*TypeError)},
		{Col("price").Sub("x"), []string{`cannot subtract utf8 from float64`}, new(*TypeError)},
		{Col("name").Gt(1), []string{`cannot compare utf8 with int64`}, new(*TypeError)},
		{Col("qty").And(true), []string{`& needs boolean operands, not int32`}, new(*TypeError)},
		{Col("qty").Not(), []string{`not) needs a boolean operand, not int32`}, new(*TypeError)},
		{Col("qty").Str().Upper(), []string{`str.upper needs a string, not int32`, `col("qty") is int32`}, new(*TypeError)},
		{Col("name").Dt().Year(), []string{`dt.year needs a date or timestamp, not utf8`}, new(*TypeError)},
		{Col("ts").Dt().Truncate("fortnight"), []string{`dt.truncate needs a unit`}, new(*TypeError)},
		{Col("ts").Dt().Truncate(1500 * time.Nanosecond), []string{`not a whole number of 1µs`}, new(*TypeError)},
		{Col("qty").Cast(arrow.ListOf(arrow.PrimitiveTypes.Int8)), []string{`cannot cast int32 to list`}, new(*TypeError)},
		{Col("name").Neg(), []string{`neg needs a number, not utf8`}, new(*TypeError)},
		{When(Col("qty")).Then(1).Otherwise(2), []string{`when condition must be boolean, not int32`}, new(*TypeError)},
		{When(Col("ok")).Then(1).Otherwise("x"), []string{`when branches have incompatible types int64 and utf8`}, new(*TypeError)},
		{Col("price").FillNull("none"), []string{`cannot fill nulls of float64 with utf8`}, new(*TypeError)},
		{Col("price").IsIn("a"), []string{`cannot look for utf8 values in a column of float64`}, new(*TypeError)},
		{Col("price").IsNaN().Or(Col("name").IsNaN()), []string{`is_nan needs a number, not utf8`}, new(*TypeError)},
		{Col("price").Add(struct{ X int }{1}), []string{`unsupported literal struct { X int }{X:1}`}, new(*LiteralError)},
		{Col("price").IsIn(Col("qty")), []string{`is_in: values must be literals, got col("qty")`}, nil},
		{Col(""), []string{`column name is empty`}, nil},
		{Expr{}.Add(1), []string{`zero Expr`}, nil},
		{Col("a").Alias(""), []string{`name is empty`}, nil},
		{When(Col("ok")).When(Col("ok")).Then(1).Otherwise(2), []string{`follows a When without Then`}, nil},
		{When(Col("ok")).Then(1).Then(2).Otherwise(3), []string{`follows another Then`}, nil},
		{When(Col("ok")).Otherwise(3), []string{`Otherwise(3) follows a When without Then`}, nil},
		{Lit(time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)), []string{`outside the range of timestamp[ns]`}, nil},
	}
	for _, tt := range tests {
		_, err := tt.e.Type(s)
		if err == nil {
			t.Errorf("%s: no error", tt.e)
			continue
		}
		for _, c := range tt.contains {
			if !strings.Contains(err.Error(), c) {
				t.Errorf("%s: error %q does not contain %q", tt.e, err, c)
			}
		}
		if tt.target != nil && !errors.As(err, tt.target) {
			t.Errorf("%s: error %T is not a %T", tt.e, err, tt.target)
		}
		// Evaluation and encoding report the same mistakes.
		rec := emptyRecord(s)
		ev := NewEvaluator(rec, nil)
		if _, eerr := ev.Eval(t.Context(), tt.e); eerr == nil || eerr.Error() != err.Error() {
			t.Errorf("%s: Eval error %v, Type error %v", tt.e, eerr, err)
		}
		ev.Release()
		rec.Release()
	}
}

func emptyRecord(s *arrow.Schema) arrow.RecordBatch {
	b := newRecordBuilder(s)
	defer b.Release()
	return b.NewRecordBatch()
}

func TestCastFailureNamesValue(t *testing.T) {
	rec := record(col("s", strs("12", "twelve")), col("big", bigI64s(int64(1), int64(1<<40))))
	defer rec.Release()
	for _, tt := range []struct {
		e    Expr
		want []string
	}{
		{Col("s").Cast(arrow.PrimitiveTypes.Int64), []string{`evaluate col("s").cast(int64)`, "cast from utf8 to int64", "twelve"}},
		{Col("big").Cast(arrow.PrimitiveTypes.Int32), []string{`col("big").cast(int32)`, "int64 to int32", "1099511627776"}},
	} {
		ev := NewEvaluator(rec, nil)
		_, err := ev.Eval(t.Context(), tt.e)
		ev.Release()
		var ee *EvalError
		if !errors.As(err, &ee) {
			t.Fatalf("%s: error %v is not an *EvalError", tt.e, err)
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not contain %q", tt.e, err, w)
			}
		}
	}
}

func TestCancelledContext(t *testing.T) {
	rec := record(numCols()...)
	defer rec.Release()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ev := NewEvaluator(rec, nil)
	defer ev.Release()
	if _, err := ev.Eval(ctx, Col("a").Add(1)); !errors.Is(err, context.Canceled) {
		t.Errorf("Eval with a cancelled context: %v", err)
	}
}

// TestCommonSubexpressions checks that a subexpression shared inside one
// expression and across expressions is computed once.
func TestCommonSubexpressions(t *testing.T) {
	rec := record(numCols()...)
	defer rec.Release()
	counts := map[string]int{}
	testHookCompute = func(text string) { counts[text]++ }
	defer func() { testHookCompute = nil }()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ev := NewEvaluator(rec, mem)
	shared := Col("a").Mul(Col("b")).Add(1)
	exprs := []Expr{
		shared.Mul(shared),             // twice in one expression
		shared.Gt(0).Alias("positive"), // once more in another
		Col("a").Mul(Col("b")).Add(1),  // built again, equal text
	}
	for _, e := range exprs {
		arr, err := ev.Eval(t.Context(), e)
		if err != nil {
			t.Fatal(err)
		}
		arr.Release()
	}
	ev.Release()
	for text, want := range map[string]int{
		`(col("a") * col("b")) + 1`:                                 1,
		`col("a") * col("b")`:                                       1,
		`((col("a") * col("b")) + 1) * ((col("a") * col("b")) + 1)`: 1,
		`((col("a") * col("b")) + 1) > 0`:                           1,
	} {
		if counts[text] != want {
			t.Errorf("%s computed %d times, want %d", text, counts[text], want)
		}
	}
}

func TestFilter(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := record(numCols()...)
	defer rec.Release()
	tests := []struct {
		pred Expr
		rows []int
	}{
		{Col("a").Gt(1), []int{1, 4}},
		{Col("p"), []int{0, 3}}, // null dropped
		{Col("p").Not().Or(Col("a").IsNull()), []int{1, 2, 4}},
		{Lit(true), []int{0, 1, 2, 3, 4}},
		{Lit(false), nil},
		{Lit(nil), nil},
		{Col("a").Lt(-100), nil},
		{Col("s").Str().Contains("an"), []int{1}},
	}
	for _, tt := range tests {
		out, err := Filter(t.Context(), rec, tt.pred, mem)
		if err != nil {
			t.Fatalf("%s: %v", tt.pred, err)
		}
		if int(out.NumRows()) != len(tt.rows) {
			t.Errorf("%s: %d rows, want %d", tt.pred, out.NumRows(), len(tt.rows))
		}
		for c := range rec.Columns() {
			all := goValues(rec.Column(c))
			var want []any
			for _, r := range tt.rows {
				want = append(want, all[r])
			}
			got := goValues(out.Column(c))
			if len(want) == 0 {
				want = []any{}
			}
			if !sameValues(got, want) {
				t.Errorf("%s: column %s = %v, want %v", tt.pred, rec.ColumnName(c), got, want)
			}
		}
		out.Release()
	}
	if _, err := Filter(t.Context(), rec, Col("a").Add(1), mem); err == nil || !strings.Contains(err.Error(), "boolean predicate, not int64") {
		t.Errorf("filter by a number: %v", err)
	}
}

// TestFilterRandom filters random columns of every kind with random masks
// and compares with a row-by-row filter.
func TestFilterRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 7, 64, 65, 1000} {
		var iv, sv, bv, dv []any
		for i := range n {
			if rng.IntN(5) == 0 {
				iv, sv, bv, dv = append(iv, nil), append(sv, nil), append(bv, nil), append(dv, nil)
				continue
			}
			iv = append(iv, rng.IntN(100))
			sv = append(sv, strings.Repeat("x", rng.IntN(4))+string(rune('a'+i%26)))
			bv = append(bv, rng.IntN(2) == 0)
			dv = append(dv, []string{"red", "green", "blue"}[rng.IntN(3)])
		}
		rec := record(col("i", i64s(iv...)), col("s", strs(sv...)), col("l", lstrs(sv...)), col("b", bools(bv...)), col("d", dicts(dv...)))
		for _, slice := range []bool{false, true} {
			r := rec
			if slice && n > 3 {
				r = rec.NewSlice(3, int64(n))
			}
			got, err := Filter(t.Context(), r, Col("i").Lt(50), nil)
			if err != nil {
				t.Fatal(err)
			}
			iCol := goValues(r.Column(0))
			for c := range r.Columns() {
				all := goValues(r.Column(c))
				var want []any
				for k, v := range iCol {
					if v != nil && v.(int64) < 50 {
						want = append(want, all[k])
					}
				}
				g := goValues(got.Column(c))
				if len(want) == 0 {
					want = []any{}
				}
				if !sameValues(g, want) {
					t.Errorf("n=%d slice=%v column %s: got %v, want %v", n, slice, r.ColumnName(c), g, want)
				}
			}
			got.Release()
			if r != rec {
				r.Release()
			}
		}
		rec.Release()
	}
}
