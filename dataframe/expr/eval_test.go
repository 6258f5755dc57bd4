package expr

import (
	"math"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

type evalCase struct {
	name  string
	cols  func() []column
	e     Expr
	want  []any
	wantT string // type name, "" to skip
}

func runEvalCases(t *testing.T, cases []evalCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := record(c.cols()...)
			defer rec.Release()
			got, typ := evalOne(t, rec, c.e)
			if !sameValues(got, c.want) {
				t.Errorf("%s = %v, want %v", c.e, got, c.want)
			}
			if c.wantT != "" && typeName(typ) != c.wantT {
				t.Errorf("%s: type %s, want %s", c.e, typeName(typ), c.wantT)
			}
		})
	}
}

func numCols() []column {
	return []column{
		col("a", i64s(1, 2, nil, -7, 9)),
		col("b", i64s(2, 0, 5, 2, -4)),
		col("f", f64s(0.5, -1.5, 2.0, nil, math.NaN())),
		col("g", f32s(1.5, 2.5, nil, 4, 0)),
		col("i", i32s(10, 20, 30, 40, nil)),
		col("u", u8s(1, 255, 3, 4, 5)),
		col("s", strs("apple", "Banana", nil, "", "cherry")),
		col("p", bools(true, false, nil, true, false)),
	}
}

func TestArithmetic(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"add int", numCols, Col("a").Add(Col("b")), vals(int64(3), int64(2), nil, int64(-5), int64(5)), "int64"},
		{"add literal", numCols, Col("a").Add(1), vals(int64(2), int64(3), nil, int64(-6), int64(10)), "int64"},
		{"literal minus col", numCols, Lit(10).Sub(Col("a")), vals(int64(9), int64(8), nil, int64(17), int64(1)), "int64"},
		{"int32 widens", numCols, Col("i").Mul(Col("u")), vals(int64(10), int64(5100), int64(90), int64(160), nil), "int64"},
		{"int32 plus int64", numCols, Col("i").Add(Col("a")), vals(int64(11), int64(22), nil, int64(33), nil), "int64"},
		{"int32 times literal", numCols, Col("i").Mul(3), vals(int64(30), int64(60), int64(90), int64(120), nil), "int64"},
		{"literal minus int32", numCols, Lit(1).Sub(Col("i")), vals(int64(-9), int64(-19), int64(-29), int64(-39), nil), "int64"},
		{"int32 plus int32", numCols, Col("i").Add(Col("i")), vals(int64(20), int64(40), int64(60), int64(80), nil), "int64"},
		{"int64 div int32", numCols, Col("a").Div(Col("i")), vals(0.1, 0.1, nil, -0.175, nil), "float64"},
		{"uint8 plus int8 literal", numCols, Col("u").Add(int8(1)), vals(int64(2), int64(256), int64(4), int64(5), int64(6)), "int64"},
		{"int plus float", numCols, Col("a").Add(Col("f")), vals(1.5, 0.5, nil, nil, math.NaN()), "float64"},
		{"float32 with float32", numCols, Col("g").Add(Col("g")), vals(3.0, 5.0, nil, 8.0, 0.0), "float32"},
		{"float32 with float64 literal", numCols, Col("g").Mul(2.0), vals(3.0, 5.0, nil, 8.0, 0.0), "float64"},
		{"float32 with int", numCols, Col("g").Add(1), vals(2.5, 3.5, nil, 5.0, 1.0), "float64"},
		{"div is float", numCols, Col("a").Div(Col("b")), vals(0.5, math.Inf(1), nil, -3.5, -2.25), "float64"},
		{"div float by zero", numCols, Col("f").Div(0), vals(math.Inf(1), math.Inf(-1), math.Inf(1), nil, math.NaN()), "float64"},
		{"floordiv", numCols, Col("a").FloorDiv(Col("b")), vals(int64(0), nil, nil, int64(-4), int64(-3)), "int64"},
		{"floordiv by zero literal", numCols, Col("a").FloorDiv(0), vals(nil, nil, nil, nil, nil), "int64"},
		{"mod", numCols, Col("a").Mod(Col("b")), vals(int64(1), nil, nil, int64(1), int64(-3)), "int64"},
		{"mod literal", numCols, Col("a").Mod(3), vals(int64(1), int64(2), nil, int64(2), int64(0)), "int64"},
		{"float floordiv", numCols, Col("f").FloorDiv(1), vals(0.0, -2.0, 2.0, nil, math.NaN()), "float64"},
		{"float mod", numCols, Col("f").Mod(1), vals(0.5, 0.5, 0.0, nil, math.NaN()), "float64"},
		{"pow int", numCols, Col("a").Pow(2), vals(int64(1), int64(4), nil, int64(49), int64(81)), "int64"},
		{"pow negative exponent", numCols, Col("b").Pow(Lit(-1)), vals(nil, nil, nil, nil, nil), "int64"},
		{"pow mixed", numCols, Col("b").Pow(Col("a").Sub(2)), vals(nil, int64(1), nil, nil, int64(-16384)), "int64"},
		{"pow float", numCols, Col("a").Pow(0.5), vals(1.0, math.Sqrt2, nil, math.NaN(), 3.0), "float64"},
		{"neg", numCols, Col("a").Neg(), vals(int64(-1), int64(-2), nil, int64(7), int64(-9)), "int64"},
		{"neg int32 keeps type", numCols, Col("i").Neg(), vals(int64(-10), int64(-20), int64(-30), int64(-40), nil), "int32"},
		{"neg uint widens", numCols, Col("u").Neg(), vals(int64(-1), int64(-255), int64(-3), int64(-4), int64(-5)), "int64"},
		{"abs", numCols, Col("b").Abs(), vals(int64(2), int64(0), int64(5), int64(2), int64(4)), "int64"},
		{"abs float", numCols, Col("f").Abs(), vals(0.5, 1.5, 2.0, nil, math.NaN()), "float64"},
		{"null literal", numCols, Col("a").Add(nil), vals(nil, nil, nil, nil, nil), "int64"},
		{"literals only", numCols, Lit(2).Mul(3), vals(int64(6), int64(6), int64(6), int64(6), int64(6)), "int64"},
		{"overflow wraps", func() []column {
			return []column{col("x", bigI64s(int64(math.MaxInt64), int64(math.MinInt64)))}
		}, Col("x").Add(1), vals(int64(math.MinInt64), int64(math.MinInt64+1)), "int64"},
		{"min int floordiv -1 wraps", func() []column {
			return []column{col("x", bigI64s(int64(math.MinInt64)))}
		}, Col("x").FloorDiv(-1), vals(int64(math.MinInt64)), "int64"},
	})
}

func TestComparisons(t *testing.T) {
	big := int64(1<<53 + 1)
	runEvalCases(t, []evalCase{
		{"eq", numCols, Col("a").Eq(Col("b")), vals(false, false, nil, false, false), "bool"},
		{"lt literal", numCols, Col("a").Lt(2), vals(true, false, nil, true, false), "bool"},
		{"literal gt col", numCols, Lit(2).Gt(Col("a")), vals(true, false, nil, true, false), "bool"},
		{"ge", numCols, Col("a").Ge(Col("b")), vals(false, true, nil, false, true), "bool"},
		{"le", numCols, Col("a").Le(Col("b")), vals(true, false, nil, true, false), "bool"},
		{"ne", numCols, Col("a").Ne(1), vals(false, true, nil, true, true), "bool"},
		{"int vs float literal", numCols, Col("a").Gt(1.5), vals(false, true, nil, false, true), "bool"},
		{"int ge float literal", numCols, Col("a").Ge(2.0), vals(false, true, nil, false, true), "bool"},
		{"int eq fractional", numCols, Col("a").Eq(1.5), vals(false, false, nil, false, false), "bool"},
		{"int ne fractional", numCols, Col("a").Ne(1.5), vals(true, true, nil, true, true), "bool"},
		{"int vs NaN", numCols, Col("a").Lt(math.NaN()), vals(false, false, nil, false, false), "bool"},
		{"int vs huge", numCols, Col("a").Lt(1e300), vals(true, true, nil, true, true), "bool"},
		{"int vs float col", numCols, Col("a").Gt(Col("f")), vals(true, true, nil, nil, false), "bool"},
		{"float vs NaN ne", numCols, Col("f").Ne(Col("f")), vals(false, false, false, nil, true), "bool"},
		{"float32 vs float64", numCols, Col("g").Eq(Col("f")), vals(false, false, nil, nil, false), "bool"},
		{"int32 vs literal", numCols, Col("i").Ge(20), vals(false, true, true, true, nil), "bool"},
		{"int32 vs huge literal", numCols, Col("i").Lt(int64(1) << 40), vals(true, true, true, true, nil), "bool"},
		{"uint8 vs big literal", numCols, Col("u").Eq(300), vals(false, false, false, false, false), "bool"},
		{"uint8 vs negative literal", numCols, Col("u").Gt(-1), vals(true, true, true, true, true), "bool"},
		{"int8 literal compare", func() []column { return []column{col("x", i8s(-128, 0, 127, nil))} },
			Col("x").Le(-128), vals(true, false, false, nil), "bool"},
		{"uint8 vs int", numCols, Col("u").Gt(Col("a")), vals(false, true, nil, true, false), "bool"},
		{"big int exact vs float", func() []column {
			return []column{col("x", bigI64s(big, big-1, int64(math.MaxInt64))), col("y", f64s(float64(1<<53), float64(1<<53), math.Pow(2, 63)))}
		}, Col("x").Gt(Col("y")), vals(true, false, false), "bool"},
		{"big int eq float literal", func() []column {
			return []column{col("x", bigI64s(big, big-1))}
		}, Col("x").Eq(float64(1 << 53)), vals(false, true), "bool"},
		{"uint64 vs negative", func() []column {
			return []column{col("x", u64s(uint64(math.MaxUint64), uint64(0)))}
		}, Col("x").Gt(-1), vals(true, true), "bool"},
		{"uint64 vs int64 col", func() []column {
			return []column{col("x", u64s(uint64(math.MaxUint64), uint64(5))), col("y", bigI64s(int64(-1), int64(5)))}
		}, Col("x").Le(Col("y")), vals(false, true), "bool"},
		{"uint64 lit", func() []column {
			return []column{col("x", u64s(uint64(math.MaxUint64), uint64(5)))}
		}, Col("x").Eq(uint64(math.MaxUint64)), vals(true, false), "bool"},
		{"strings", numCols, Col("s").Lt("b"), vals(true, true, nil, true, false), "bool"},
		{"string eq", numCols, Col("s").Eq("Banana"), vals(false, true, nil, false, false), "bool"},
		{"string vs string col", func() []column {
			return []column{col("x", strs("a", "b", nil)), col("y", lstrs("a", "a", "c"))}
		}, Col("x").Ge(Col("y")), vals(true, true, nil), "bool"},
		{"bools", numCols, Col("p").Lt(true), vals(false, true, nil, false, true), "bool"},
		{"bool eq", numCols, Col("p").Eq(Col("p").Not()), vals(false, false, nil, false, false), "bool"},
		{"between", numCols, Col("a").Between(1, 2), vals(true, true, nil, false, false), "bool"},
		{"between null bound", numCols, Col("a").Between(nil, 2), vals(nil, nil, nil, nil, false), "bool"},
		{"is_in", numCols, Col("a").IsIn(1, 9, nil), vals(true, false, nil, false, true), "bool"},
		{"is_in float values", numCols, Col("a").IsIn(2.0, 9.5), vals(false, true, nil, false, false), "bool"},
		{"is_in strings", numCols, Col("s").IsIn("apple", ""), vals(true, false, nil, true, false), "bool"},
		{"is_in float col", numCols, Col("f").IsIn(2, 0.5), vals(true, false, true, nil, false), "bool"},
		{"is_in bools", numCols, Col("p").IsIn(false), vals(false, true, nil, false, true), "bool"},
		{"compare null literal", numCols, Col("a").Eq(nil), vals(nil, nil, nil, nil, nil), "bool"},
	})
}

func TestLogic(t *testing.T) {
	// Every pair of true, false, null.
	cols := func() []column {
		return []column{
			col("x", bools(true, true, true, false, false, false, nil, nil, nil)),
			col("y", bools(true, false, nil, true, false, nil, true, false, nil)),
		}
	}
	T, F := true, false
	runEvalCases(t, []evalCase{
		{"and", cols, Col("x").And(Col("y")), vals(T, F, nil, F, F, F, nil, F, nil), "bool"},
		{"or", cols, Col("x").Or(Col("y")), vals(T, T, T, T, F, nil, T, nil, nil), "bool"},
		{"xor", cols, Col("x").Xor(Col("y")), vals(F, T, nil, T, F, nil, nil, nil, nil), "bool"},
		{"not", cols, Col("x").Not(), vals(F, F, F, T, T, T, nil, nil, nil), "bool"},
		{"and literal false", cols, Col("x").And(false), vals(F, F, F, F, F, F, F, F, F), "bool"},
		{"or literal true", cols, Col("x").Or(true), vals(T, T, T, T, T, T, T, T, T), "bool"},
		{"and null literal", cols, Col("x").And(nil), vals(nil, nil, nil, F, F, F, nil, nil, nil), "bool"},
		{"or null literal", cols, Lit(nil).Or(Col("x")), vals(T, T, T, nil, nil, nil, nil, nil, nil), "bool"},
		{"is_null", cols, Col("y").IsNull(), vals(F, F, T, F, F, T, F, F, T), "bool"},
		{"is_not_null", cols, Col("y").IsNotNull(), vals(T, T, F, T, T, F, T, T, F), "bool"},
	})
}

func TestNullsAndCasts(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"fill_null int", numCols, Col("a").FillNull(0), vals(int64(1), int64(2), int64(0), int64(-7), int64(9)), "int64"},
		{"fill_null with float", numCols, Col("a").FillNull(0.5), vals(1.0, 2.0, 0.5, -7.0, 9.0), "float64"},
		{"fill_null with column", numCols, Col("f").FillNull(Col("a")), vals(0.5, -1.5, 2.0, -7.0, math.NaN()), "float64"},
		{"fill_null string", numCols, Col("s").FillNull("?"), vals("apple", "Banana", "?", "", "cherry"), "utf8"},
		{"fill_null bool", numCols, Col("p").FillNull(true), vals(true, false, true, true, false), "bool"},
		{"fill_null int32 keeps type", numCols, Col("i").FillNull(Col("i")), vals(int64(10), int64(20), int64(30), int64(40), nil), "int32"},
		{"fill_null null", numCols, Col("a").FillNull(nil), vals(int64(1), int64(2), nil, int64(-7), int64(9)), "int64"},
		{"is_nan", numCols, Col("f").IsNaN(), vals(false, false, false, nil, true), "bool"},
		{"is_nan int", numCols, Col("a").IsNaN(), vals(false, false, nil, false, false), "bool"},
		{"cast int to float", numCols, Col("a").Cast(arrow.PrimitiveTypes.Float64), vals(1.0, 2.0, nil, -7.0, 9.0), "float64"},
		{"cast int to string", numCols, Col("a").Cast(arrow.BinaryTypes.String), vals("1", "2", nil, "-7", "9"), "utf8"},
		{"cast string to int", func() []column { return []column{col("s", strs("12", nil, "-3"))} },
			Col("s").Cast(arrow.PrimitiveTypes.Int64), vals(int64(12), nil, int64(-3)), "int64"},
		{"cast int64 to int8", numCols, Col("b").Cast(arrow.PrimitiveTypes.Int8), vals(int64(2), int64(0), int64(5), int64(2), int64(-4)), "int8"},
		{"cast null", numCols, Lit(nil).Cast(arrow.PrimitiveTypes.Int64), vals(nil, nil, nil, nil, nil), "int64"},
		{"when", numCols, When(Col("a").Gt(1)).Then("big").When(Col("a").Lt(0)).Then("negative").Otherwise("small"),
			vals("small", "big", "small", "negative", "big"), "utf8"},
		{"when without otherwise", numCols, When(Col("a").Gt(1)).Then(Col("a")).Expr(),
			vals(nil, int64(2), nil, nil, int64(9)), "int64"},
		{"when promotes", numCols, When(Col("p")).Then(Col("a")).Otherwise(Col("f")),
			vals(1.0, -1.5, 2.0, -7.0, math.NaN()), "float64"},
		{"when first match wins", numCols, When(Col("a").Gt(0)).Then(1).When(Col("a").Gt(5)).Then(2).Otherwise(3),
			vals(int64(1), int64(1), int64(3), int64(3), int64(1)), "int64"},
		{"when literal condition", numCols, When(true).Then(Col("b")).Otherwise(0),
			vals(int64(2), int64(0), int64(5), int64(2), int64(-4)), "int64"},
		{"when bools", numCols, When(Col("p")).Then(false).Otherwise(Col("p")),
			vals(false, false, nil, false, false), "bool"},
		{"alias", numCols, Col("a").Add(1).Alias("next"), vals(int64(2), int64(3), nil, int64(-6), int64(10)), "int64"},
		{"literal broadcast", numCols, Lit("x"), vals("x", "x", "x", "x", "x"), "utf8"},
		{"null broadcast", numCols, Lit(nil), vals(nil, nil, nil, nil, nil), "null"},
	})
}

func TestTemporalArithmetic(t *testing.T) {
	t0 := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	cols := func() []column {
		return []column{
			col("t", times(arrow.Microsecond, "UTC", t0, nil, t0.Add(36*time.Hour))),
			col("s", times(arrow.Second, "", t0.Add(-time.Hour), t0, t0)),
			col("d", dates(Date{2024, 3, 1}, Date{2024, 2, 29}, nil)),
			col("dur", durs(arrow.Millisecond, time.Second, 1500*time.Millisecond, nil)),
		}
	}
	runEvalCases(t, []evalCase{
		{"ts plus duration literal", cols, Col("t").Add(time.Hour), vals(t0.Add(time.Hour), nil, t0.Add(37*time.Hour)), "timestamp[ns, UTC]"},
		{"ts minus duration col", cols, Col("s").Sub(Col("dur")), vals(t0.Add(-time.Hour-time.Second), t0.Add(-1500*time.Millisecond), nil), "timestamp[ms]"},
		{"ts minus ts", cols, Col("t").Sub(Col("s")), vals(time.Hour, nil, 36*time.Hour), "duration[us]"},
		{"date minus date", cols, Col("d").Sub(Col("d")), vals(time.Duration(0), time.Duration(0), nil), "duration[ms]"},
		{"date plus duration", cols, Col("d").Add(Col("dur")), vals(time.Date(2024, 3, 1, 0, 0, 1, 0, time.UTC), time.Date(2024, 2, 29, 0, 0, 1, 500e6, time.UTC), nil), "timestamp[ms]"},
		{"ts plus null", cols, Col("t").Add(nil), vals(nil, nil, nil), "timestamp[us, UTC]"},
		{"duration times int", cols, Col("dur").Mul(3), vals(3*time.Second, 4500*time.Millisecond, nil), "duration[ms]"},
		{"dt.add", cols, Col("t").Dt().Add(-time.Minute), vals(t0.Add(-time.Minute), nil, t0.Add(36*time.Hour-time.Minute)), "timestamp[ns, UTC]"},
		{"ts gt time literal", cols, Col("t").Gt(t0), vals(false, nil, true), "bool"},
		{"ts eq time literal with ns", cols, Col("s").Eq(t0.Add(1)), vals(false, false, false), "bool"},
		{"ts ge time literal with ns", cols, Col("s").Ge(t0.Add(1)), vals(false, false, false), "bool"},
		{"ts le time literal with ns", cols, Col("s").Le(t0.Add(1)), vals(true, true, true), "bool"},
		{"ts vs zoned literal", cols, Col("t").Eq(t0.In(time.FixedZone("X", 3600))), vals(true, nil, false), "bool"},
		{"date vs date literal", cols, Col("d").Lt(Date{2024, 3, 1}), vals(false, true, nil), "bool"},
		{"date vs time literal", cols, Col("d").Lt(t0), vals(true, true, nil), "bool"},
		{"date vs ts col", cols, Col("d").Lt(Col("s")), vals(true, true, nil), "bool"},
		{"duration compare", cols, Col("dur").Gt(time.Second), vals(false, true, nil), "bool"},
		{"is_in times", cols, Col("t").IsIn(t0), vals(true, nil, false), "bool"},
		{"is_in dates", cols, Col("d").IsIn(Date{2024, 2, 29}), vals(false, true, nil), "bool"},
		{"fill_null ts", cols, Col("t").FillNull(t0), vals(t0, t0, t0.Add(36*time.Hour)), "timestamp[us, UTC]"},
		{"fill_null ts with ns literal", cols, Col("t").FillNull(t0.Add(1)), vals(t0, t0.Add(1), t0.Add(36*time.Hour)), "timestamp[ns, UTC]"},
		{"fill_null int32 with literal", numCols, Col("i").FillNull(0), vals(int64(10), int64(20), int64(30), int64(40), int64(0)), "int32"},
		{"when keeps int32 for literals", numCols, When(Col("p")).Then(Col("i")).Otherwise(-1), vals(int64(10), int64(-1), int64(-1), int64(40), int64(-1)), "int32"},
	})
}
