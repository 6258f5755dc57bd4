package expr

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// num is a test value of any numeric column type.
type num struct {
	t    arrow.Type
	i    int64
	u    uint64
	f    float64
	null bool
}

func (x num) isFloat() bool { return x.t == arrow.FLOAT32 || x.t == arrow.FLOAT64 }

func (x num) big() *big.Float {
	switch {
	case x.isFloat():
		return new(big.Float).SetPrec(200).SetFloat64(x.f)
	case x.t == arrow.UINT64 || x.t == arrow.UINT8:
		return new(big.Float).SetPrec(200).SetUint64(x.u)
	}
	return new(big.Float).SetPrec(200).SetInt64(x.i)
}

func (x num) asInt64() int64 {
	if x.t == arrow.UINT64 || x.t == arrow.UINT8 {
		return int64(x.u)
	}
	return x.i
}

func (x num) asFloat64() float64 {
	switch {
	case x.isFloat():
		return x.f
	case x.t == arrow.UINT64 || x.t == arrow.UINT8:
		return float64(x.u)
	}
	return float64(x.i)
}

var numTypes = []arrow.DataType{
	arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
	arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint64,
	arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64,
}

func randomNums(rng *rand.Rand, t arrow.DataType, n int) ([]num, arrow.Array) {
	out := make([]num, n)
	b := array.NewBuilder(testMem, t)
	defer b.Release()
	for i := range out {
		x := num{t: t.ID()}
		if rng.IntN(8) == 0 {
			x.null = true
			b.AppendNull()
			out[i] = x
			continue
		}
		pick := rng.IntN(4)
		switch t.ID() {
		case arrow.INT8:
			x.i = int64(int8(rng.IntN(256)))
			if pick == 0 {
				x.i = []int64{0, -1, 1, -128, 127}[rng.IntN(5)]
			}
			b.(*array.Int8Builder).Append(int8(x.i))
		case arrow.INT32:
			x.i = int64(int32(rng.Uint32()))
			if pick == 0 {
				x.i = []int64{0, -1, 1, 7, math.MinInt32, math.MaxInt32}[rng.IntN(6)]
			}
			b.(*array.Int32Builder).Append(int32(x.i))
		case arrow.INT64:
			x.i = int64(rng.Uint64())
			if pick == 0 {
				x.i = []int64{0, -1, 1, 3, math.MinInt64, math.MaxInt64, 1<<53 + 1, -(1 << 53) - 1}[rng.IntN(8)]
			} else if pick == 1 {
				x.i = rng.Int64N(200) - 100
			}
			b.(*array.Int64Builder).Append(x.i)
		case arrow.UINT8:
			x.u = uint64(rng.IntN(256))
			b.(*array.Uint8Builder).Append(uint8(x.u))
		case arrow.UINT64:
			x.u = rng.Uint64()
			if pick == 0 {
				x.u = []uint64{0, 1, math.MaxUint64, 1 << 63, 5}[rng.IntN(5)]
			}
			b.(*array.Uint64Builder).Append(x.u)
		case arrow.FLOAT32:
			x.f = float64(float32(rng.NormFloat64() * 100))
			if pick == 0 {
				x.f = float64([]float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), -1, 0.5, 1 << 24}[rng.IntN(7)])
			}
			b.(*array.Float32Builder).Append(float32(x.f))
		case arrow.FLOAT64:
			x.f = rng.NormFloat64() * 100
			if pick == 0 {
				x.f = []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(-1), -1, 2, 1 << 53, 1 << 63, -(1 << 63), 9.5}[rng.IntN(10)]
			}
			b.(*array.Float64Builder).Append(x.f)
		}
		out[i] = x
	}
	return out, b.NewArray()
}

// refArith computes x op y as the documented rules say.
func refArith(op string, x, y num) any {
	if x.null || y.null {
		return nil
	}
	bothInt := !x.isFloat() && !y.isFloat()
	switch {
	case op == opDiv:
		return x.asFloat64() / y.asFloat64()
	case bothInt:
		a, b := x.asInt64(), y.asInt64()
		switch op {
		case opAdd:
			return a + b
		case opSub:
			return a - b
		case opMul:
			return a * b
		case opFloorDiv:
			if b == 0 {
				return nil
			}
			return floorDivInt(a, b)
		case opMod:
			if b == 0 {
				return nil
			}
			return floorMod(a, b)
		}
	case x.t == arrow.FLOAT32 && y.t == arrow.FLOAT32:
		a, b := float32(x.f), float32(y.f)
		switch op {
		case opAdd:
			return float64(a + b)
		case opSub:
			return float64(a - b)
		case opMul:
			return float64(a * b)
		case opFloorDiv:
			return float64(float32(math.Floor(float64(a) / float64(b))))
		case opMod:
			return float64(float32(floatMod(float64(a), float64(b))))
		}
	default:
		a, b := x.asFloat64(), y.asFloat64()
		switch op {
		case opAdd:
			return a + b
		case opSub:
			return a - b
		case opMul:
			return a * b
		case opFloorDiv:
			return math.Floor(a / b)
		case opMod:
			return floatMod(a, b)
		}
	}
	panic(op)
}

// refCompare compares exactly.
func refCompare(op string, x, y num) any {
	if x.null || y.null {
		return nil
	}
	if (x.isFloat() && math.IsNaN(x.f)) || (y.isFloat() && math.IsNaN(y.f)) {
		return op == opNe
	}
	return cmpResult(op, x.big().Cmp(y.big()))
}

func numLiteral(x num) any {
	switch {
	case x.null:
		return nil
	case x.t == arrow.FLOAT32:
		return float32(x.f)
	case x.isFloat():
		return x.f
	case x.t == arrow.UINT64 || x.t == arrow.UINT8:
		return x.u
	}
	return x.i
}

// TestNumericKernelsAgainstReference checks arithmetic and comparisons of
// every pair of numeric column types, and of columns with literals, against
// a row-by-row reference with exact comparisons.
func TestNumericKernelsAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const n = 300
	var cols []column
	data := map[string][]num{}
	for _, typ := range numTypes {
		name := typeName(typ)
		v, arr := randomNums(rng, typ, n)
		data[name] = v
		cols = append(cols, col(name, arr))
	}
	rec := record(cols...)
	defer rec.Release()
	arith := []string{opAdd, opSub, opMul, opDiv, opFloorDiv, opMod}
	cmps := []string{opEq, opNe, opLt, opLe, opGt, opGe}
	build := func(op string, a Expr, b any) Expr { return newNode(op, a, toExpr(b)) }
	check := func(e Expr, want []any) {
		t.Helper()
		got, _ := evalOne(t, rec, e)
		for i := range got {
			if !sameValues(got[i:i+1], want[i:i+1]) {
				t.Errorf("%s row %d: got %v, want %v", e, i, got[i], want[i])
				return
			}
		}
	}
	for _, ta := range numTypes {
		for _, tb := range numTypes {
			xa, xb := data[typeName(ta)], data[typeName(tb)]
			for _, op := range append(arith, cmps...) {
				want := make([]any, n)
				for i := range want {
					if isCmp := op[0] != 'a' && op != opSub && op != opMul && op != opDiv && op != opFloorDiv && op != opMod; isCmp {
						want[i] = refCompare(op, xa[i], xb[i])
					} else {
						want[i] = refArith(op, xa[i], xb[i])
					}
				}
				check(build(op, Col(typeName(ta)), Col(typeName(tb))), want)
			}
			// The column against literals taken from the other column.
			for k := 0; k < 6; k++ {
				lit := xb[rng.IntN(n)]
				if lit.null {
					continue
				}
				for _, op := range cmps {
					want := make([]any, n)
					for i := range want {
						want[i] = refCompare(op, xa[i], litNum(lit))
					}
					check(build(op, Col(typeName(ta)), numLiteral(lit)), want)
				}
				for _, op := range arith {
					want := make([]any, n)
					for i := range want {
						want[i] = refArith(op, litNum(lit), xa[i])
					}
					check(build(op, Lit(numLiteral(lit)), Col(typeName(ta))), want)
				}
			}
		}
	}
}

// litNum is the value a literal made from x has: integers become int64
// (uint64 above the int64 range), float32 stays float32.
func litNum(x num) num {
	switch x.t {
	case arrow.INT8, arrow.INT32, arrow.UINT8:
		if x.t == arrow.UINT8 {
			return num{t: arrow.INT64, i: int64(x.u)}
		}
		return num{t: arrow.INT64, i: x.i}
	case arrow.UINT64:
		if x.u <= math.MaxInt64 {
			return num{t: arrow.INT64, i: int64(x.u)}
		}
	}
	return x
}
