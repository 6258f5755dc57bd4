package expr

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// randomExpr builds a random expression over the columns of randomRecord,
// using every kind of node; many are ill-typed, which is fine for encoding.
func randomExpr(rng *rand.Rand, depth int) Expr {
	cols := []string{"i", "f", "s", "b", "t", "d", "k", "g"}
	if depth <= 0 || rng.IntN(4) == 0 {
		if rng.IntN(2) == 0 {
			return Col(cols[rng.IntN(len(cols))])
		}
		return Lit(randomLiteral(rng))
	}
	x := randomExpr(rng, depth-1)
	y := func() Expr { return randomExpr(rng, depth-1) }
	switch rng.IntN(34) {
	case 0:
		return x.Add(y())
	case 1:
		return x.Sub(y())
	case 2:
		return x.Mul(y())
	case 3:
		return x.Div(y())
	case 4:
		return x.FloorDiv(y())
	case 5:
		return x.Mod(y())
	case 6:
		return x.Pow(y())
	case 7:
		return x.Neg()
	case 8:
		return x.Abs()
	case 9:
		return x.Eq(y())
	case 10:
		return x.Ne(y())
	case 11:
		return x.Lt(y())
	case 12:
		return x.Le(y())
	case 13:
		return x.Gt(y()).Or(x.Ge(y()))
	case 14:
		return x.Between(randomLiteral(rng), y())
	case 15:
		return x.IsIn(randomLiteral(rng), randomLiteral(rng))
	case 16:
		return x.And(y()).Xor(y())
	case 17:
		return x.Not()
	case 18:
		return x.IsNull().And(x.IsNotNull())
	case 19:
		return x.FillNull(y())
	case 20:
		types := []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float32, arrow.BinaryTypes.String,
			arrow.BinaryTypes.LargeString, arrow.FixedWidthTypes.Date32, &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "Asia/Tokyo"},
			&arrow.DurationType{Unit: arrow.Second}, arrow.FixedWidthTypes.Boolean, arrow.PrimitiveTypes.Uint16,
			&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}}
		return x.Cast(types[rng.IntN(len(types))])
	case 21:
		return x.IsNaN()
	case 22:
		return x.Alias(string(rune('A' + rng.IntN(26))))
	case 23:
		w := When(x).Then(y())
		if rng.IntN(2) == 0 {
			w = w.When(y()).Then(y())
		}
		if rng.IntN(2) == 0 {
			return w.Expr()
		}
		return w.Otherwise(y())
	case 24:
		return x.Str().Contains(randomString(rng))
	case 25:
		return x.Str().StartsWith(randomString(rng)).Or(x.Str().EndsWith(randomString(rng)))
	case 26:
		if rng.IntN(2) == 0 {
			return x.Str().Lower()
		}
		return x.Str().Upper()
	case 27:
		return x.Str().Len()
	case 28:
		return x.Str().Replace(randomString(rng), randomString(rng))
	case 29:
		return x.Str().Slice(rng.IntN(7)-3, rng.IntN(7)-3).Str().Strip()
	case 30:
		fns := []func(DtExpr) Expr{DtExpr.Year, DtExpr.Month, DtExpr.Day, DtExpr.Hour, DtExpr.Minute, DtExpr.Second, DtExpr.Weekday, DtExpr.DayOfYear, DtExpr.Date}
		return fns[rng.IntN(len(fns))](x.Dt())
	case 31:
		units := []any{"year", "quarter", "month", "week", "day", "hour", "minute", "second", 15 * time.Minute, 48 * time.Hour}
		return x.Dt().Truncate(units[rng.IntN(len(units))])
	case 32:
		return x.Dt().AddMonths(rng.IntN(30) - 15)
	default:
		return x.Dt().Add(time.Duration(rng.Int64N(1e12)))
	}
}

func randomString(rng *rand.Rand) string {
	parts := []string{"", "a", "\"", "\\", "é", "日本", "\n", "x y", "<>", "\u2028"}
	return parts[rng.IntN(len(parts))] + parts[rng.IntN(len(parts))]
}

func randomLiteral(rng *rand.Rand) any {
	switch rng.IntN(14) {
	case 0:
		return nil
	case 1:
		return rng.IntN(2) == 0
	case 2:
		return rng.IntN(200) - 100
	case 3:
		return int64(rng.Uint64())
	case 4:
		return uint64(math.MaxUint64 - rng.Uint64N(10))
	case 5:
		return float32(rng.NormFloat64())
	case 6:
		return []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0.1, -0.0, 1e300, 5e-324, 2}[rng.IntN(8)]
	case 7:
		return rng.NormFloat64() * 1000
	case 8:
		return randomString(rng)
	case 9:
		zones := []string{"UTC", "Europe/Paris", "America/New_York"}
		loc, _ := loadZone(zones[rng.IntN(len(zones))])
		return time.Unix(rng.Int64N(4e9), rng.Int64N(1e9)).In(loc)
	case 10:
		return time.Unix(rng.Int64N(4e9), 0).In(time.FixedZone("X", 5*3600+1800))
	case 11:
		return time.Duration(rng.Int64N(1e15) - 5e14)
	case 12:
		return Date{1900 + rng.IntN(200), time.Month(1 + rng.IntN(12)), 1 + rng.IntN(28)}
	default:
		return int8(rng.IntN(100))
	}
}

func randomRecordCols() []column {
	t0 := time.Date(2024, 3, 31, 1, 30, 0, 0, time.UTC)
	return []column{
		col("i", i64s(1, -2, nil, 40, 0, 7)),
		col("f", f64s(1.5, math.NaN(), -0.5, nil, 3, 1e10)),
		col("s", strs("a", "Bé", nil, "", "x y", "a")),
		col("b", bools(true, false, nil, true, false, true)),
		col("t", times(arrow.Second, "Europe/Paris", t0, t0.Add(time.Hour), nil, t0.Add(-40*24*time.Hour), t0.Add(time.Minute), t0)),
		col("d", dates(Date{2024, 1, 31}, nil, Date{1999, 12, 31}, Date{2024, 2, 29}, Date{1970, 1, 1}, Date{2000, 6, 15})),
		col("k", dicts("red", "green", nil, "red", "blue", "green")),
		col("g", durs(arrow.Millisecond, time.Second, nil, -time.Minute, time.Duration(0), time.Hour, 1500*time.Millisecond)),
	}
}

// TestMarshalRoundTrip encodes random expressions and decodes them: the text
// is the same, and so is the result of evaluating them when they type-check.
func TestMarshalRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	rec := record(randomRecordCols()...)
	defer rec.Release()
	evaluated := 0
	kinds := map[string]bool{}
	for i := range 3000 {
		e := randomExpr(rng, 1+i%5)
		if e.Err() != nil {
			continue
		}
		var walk func(x Expr)
		walk = func(x Expr) {
			kinds[x.Op()] = true
			for _, a := range x.Args() {
				walk(a)
			}
		}
		walk(e)
		b, err := Marshal(e)
		if err != nil {
			t.Fatalf("Marshal(%s): %v", e, err)
		}
		d, err := Unmarshal(b)
		if err != nil {
			t.Fatalf("Unmarshal(Marshal(%s)): %v\n%s", e, err, b)
		}
		if d.String() != e.String() {
			t.Fatalf("round trip changed\n%s\ninto\n%s", e, d)
		}
		_, terr := e.Type(rec.Schema())
		_, derr := d.Type(rec.Schema())
		if (terr == nil) != (derr == nil) {
			t.Fatalf("%s: Type error %v, after round trip %v", e, terr, derr)
		}
		if terr != nil {
			continue
		}
		ev := NewEvaluator(rec, nil)
		a1, err1 := ev.Eval(t.Context(), e)
		ev.Release()
		ev = NewEvaluator(rec, nil)
		a2, err2 := ev.Eval(t.Context(), d)
		ev.Release()
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("%s: Eval error %v, after round trip %v", e, err1, err2)
		}
		if err1 != nil {
			continue
		}
		evaluated++
		if g1, g2 := goValues(a1), goValues(a2); !sameValues(g1, g2) {
			t.Fatalf("%s: %v, after round trip %v", e, g1, g2)
		}
		a1.Release()
		a2.Release()
	}
	for op := range arity {
		if !kinds[op] {
			t.Errorf("no random expression used %s", op)
		}
	}
	if evaluated < 300 {
		t.Errorf("only %d random expressions evaluated", evaluated)
	}
	t.Logf("%d expressions evaluated", evaluated)
}

func TestMarshalList(t *testing.T) {
	es := []Expr{Col("a").Add(1), Col("s").Str().Upper().Alias("S"), When(Col("p")).Then(1.5).Expr()}
	b, err := MarshalList(es)
	if err != nil {
		t.Fatal(err)
	}
	got, err := UnmarshalList(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(es) {
		t.Fatalf("%d expressions, want %d", len(got), len(es))
	}
	for i := range es {
		if got[i].String() != es[i].String() {
			t.Errorf("%d: %s, want %s", i, got[i], es[i])
		}
	}
	if _, err := Unmarshal(b); err == nil {
		t.Error("Unmarshal of a list succeeded")
	}
}

func TestMarshalErrors(t *testing.T) {
	if _, err := Marshal(Col("a").Add(struct{}{})); err == nil || !strings.Contains(err.Error(), "unsupported literal") {
		t.Errorf("Marshal of a bad expression: %v", err)
	}
	if _, err := Marshal(Col("a").Cast(arrow.ListOf(arrow.PrimitiveTypes.Int8))); err == nil || !strings.Contains(err.Error(), "cannot be encoded") {
		t.Errorf("Marshal of a cast to list: %v", err)
	}
	for _, bad := range []string{
		`not json`,
		`{"v":2,"expr":{"op":"col","name":"a"}}`,
		`{"v":1}`,
		`{"v":1,"expr":{"op":"frobnicate"}}`,
		`{"v":1,"expr":{"op":"add","args":[{"op":"col","name":"a"}]}}`,
		`{"v":1,"expr":{"op":"lit","lit":{"t":"int64","v":"x"}}}`,
		`{"v":1,"expr":{"op":"lit","lit":{"t":"complex","v":"1"}}}`,
		`{"v":1,"expr":{"op":"cast","type":"decimal","args":[{"op":"col","name":"a"}]}}`,
		`{"v":1,"expr":{"op":"lit","lit":{"t":"timestamp","v":"0","tz":"Mars/Olympus"}}}`,
		`{"v":1,"expr":{"op":"when","args":[{"op":"col","name":"a"},{"op":"col","name":"a"}]}}`,
		`{"v":1,"expr":{"op":"col","name":""}}`,
	} {
		if _, err := Unmarshal([]byte(bad)); err == nil {
			t.Errorf("Unmarshal(%s) succeeded", bad)
		}
	}
}
