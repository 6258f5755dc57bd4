package expr

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/compute"

	"github.com/shoal-data/shoal/internal/suggest"
)

// Type is the type of the column e computes from a table with the given
// schema. It reports, without reading any data, a construction error, a
// column the schema lacks (*ColumnNotFoundError) and operands of the wrong
// type (*TypeError).
func (e Expr) Type(schema *arrow.Schema) (arrow.DataType, error) {
	if err := e.Err(); err != nil {
		return nil, err
	}
	tc := typeChecker{schema: schema}
	t, err := tc.typeOf(e.n)
	return t, inExpr(err, e)
}

// inExpr names the whole expression in a missing-column error.
func inExpr(err error, e Expr) error {
	var cnf *ColumnNotFoundError
	if errors.As(err, &cnf) && cnf.Expr != e.String() {
		c := *cnf
		c.Expr = e.String()
		return &c
	}
	return err
}

type typeChecker struct {
	schema *arrow.Schema
	memo   map[*node]arrow.DataType
}

func (tc *typeChecker) typeOf(n *node) (arrow.DataType, error) {
	if t, ok := tc.memo[n]; ok {
		return t, nil
	}
	t, err := tc.compute(n)
	if err != nil {
		return nil, err
	}
	if tc.memo == nil {
		tc.memo = make(map[*node]arrow.DataType)
	}
	tc.memo[n] = t
	return t, nil
}

func (tc *typeChecker) compute(n *node) (arrow.DataType, error) {
	if n.err != nil {
		return nil, n.err
	}
	if want, ok := arity[n.op]; ok && len(n.args) != want {
		return nil, fmt.Errorf("%s: %s takes %d arguments, has %d", n.text, n.op, want, len(n.args))
	}
	if n.op == opCol {
		if tc.schema == nil {
			return nil, &ColumnNotFoundError{Name: n.name, Expr: n.text}
		}
		idx := tc.schema.FieldIndices(n.name)
		if len(idx) == 0 {
			names := make([]string, tc.schema.NumFields())
			for i := range names {
				names[i] = tc.schema.Field(i).Name
			}
			return nil, &ColumnNotFoundError{Name: n.name, Expr: n.text, Available: names, Suggest: suggest.Closest(n.name, names)}
		}
		return tc.schema.Field(idx[0]).Type, nil
	}
	if n.op == opLit {
		return n.lit.dataType(), nil
	}
	ts := make([]arrow.DataType, len(n.args))
	for i, a := range n.args {
		t, err := tc.typeOf(a.n)
		if err != nil {
			return nil, err
		}
		ts[i] = t
	}
	terr := func(msg string, idx ...int) error {
		te := &TypeError{Expr: n.text, Msg: msg}
		for _, i := range idx {
			te.Operands = append(te.Operands, n.args[i].String())
			te.Types = append(te.Types, ts[i])
		}
		return te
	}
	switch n.op {
	case opAlias:
		return ts[0], nil
	case opAdd, opSub, opMul, opDiv, opFloorDiv, opMod, opPow:
		t, ok := arithType(n.op, ts[0], ts[1])
		if !ok {
			return nil, terr(arithMsg(n.op, ts[0], ts[1]), 0, 1)
		}
		return t, nil
	case opNeg, opAbs:
		t := ts[0]
		switch {
		case isNullType(t), isSigned(t), isFloat(t), t.ID() == arrow.DURATION:
			return t, nil
		case isUnsigned(t):
			if n.op == opAbs {
				return t, nil
			}
			return arrow.PrimitiveTypes.Int64, nil
		}
		return nil, terr(fmt.Sprintf("%s needs a number, not %s", n.op, typeName(t)), 0)
	case opEq, opNe, opLt, opLe, opGt, opGe:
		if !comparable(ts[0], ts[1]) {
			return nil, terr(fmt.Sprintf("cannot compare %s with %s", typeName(ts[0]), typeName(ts[1])), 0, 1)
		}
		return arrow.FixedWidthTypes.Boolean, nil
	case opBetween:
		for i := 1; i < 3; i++ {
			if !comparable(ts[0], ts[i]) {
				return nil, terr(fmt.Sprintf("cannot compare %s with %s", typeName(ts[0]), typeName(ts[i])), 0, i)
			}
		}
		return arrow.FixedWidthTypes.Boolean, nil
	case opIsIn:
		for i := 1; i < len(ts); i++ {
			if !comparable(ts[0], ts[i]) {
				return nil, terr(fmt.Sprintf("cannot look for %s values in a column of %s", typeName(ts[i]), typeName(ts[0])), 0, i)
			}
		}
		return arrow.FixedWidthTypes.Boolean, nil
	case opAnd, opOr, opXor:
		for i := range 2 {
			if !isBoolish(ts[i]) {
				return nil, terr(fmt.Sprintf("%s needs boolean operands, not %s", infix[n.op], typeName(ts[i])), i)
			}
		}
		return arrow.FixedWidthTypes.Boolean, nil
	case opNot:
		if !isBoolish(ts[0]) {
			return nil, terr(fmt.Sprintf("~ (not) needs a boolean operand, not %s", typeName(ts[0])), 0)
		}
		return arrow.FixedWidthTypes.Boolean, nil
	case opIsNull, opIsNotNull:
		return arrow.FixedWidthTypes.Boolean, nil
	case opIsNaN:
		if !isNumeric(ts[0]) && !isNullType(ts[0]) {
			return nil, terr(fmt.Sprintf("is_nan needs a number, not %s", typeName(ts[0])), 0)
		}
		return arrow.FixedWidthTypes.Boolean, nil
	case opFillNull:
		t, ok := supertypeLit(n.args[0].n, ts[0], n.args[1].n, ts[1])
		if !ok {
			return nil, terr(fmt.Sprintf("cannot fill nulls of %s with %s", typeName(ts[0]), typeName(ts[1])), 0, 1)
		}
		return t, nil
	case opCast:
		from := ts[0]
		if arrow.TypeEqual(from, n.typ) || isNullType(from) {
			return n.typ, nil
		}
		if !castable(from, n.typ) {
			return nil, terr(fmt.Sprintf("cannot cast %s to %s", typeName(from), typeName(n.typ)), 0)
		}
		return n.typ, nil
	case opWhen:
		if len(n.args)%2 != 1 {
			return nil, fmt.Errorf("%s: malformed when (needs condition, value pairs and an otherwise value)", n.text)
		}
		// The type of the values that are not literals decides; literals
		// adapt to it when they fit (1 in an int32 column stays int32).
		var out arrow.DataType = arrow.Null
		for pass := 0; pass < 2; pass++ {
			for i := 0; i < len(ts); i++ {
				if i%2 == 0 && i+1 < len(ts) {
					if !isBoolish(ts[i]) {
						return nil, terr(fmt.Sprintf("when condition must be boolean, not %s", typeName(ts[i])), i)
					}
					continue
				}
				isLit := n.args[i].n.op == opLit
				if (pass == 0) == isLit {
					continue
				}
				if isLit && out.ID() != arrow.NULL && litFits(n.args[i].n.lit, out) {
					continue
				}
				t, ok := supertype(out, ts[i])
				if !ok {
					return nil, terr(fmt.Sprintf("when branches have incompatible types %s and %s", typeName(out), typeName(ts[i])), i)
				}
				out = t
			}
		}
		return out, nil
	}
	if isStrOp(n.op) {
		return tc.strType(n, ts, terr)
	}
	if isDtOp(n.op) {
		return tc.dtType(n, ts, terr)
	}
	return nil, fmt.Errorf("%s: unknown operation %q", n.text, n.op)
}

func (tc *typeChecker) strType(n *node, ts []arrow.DataType, terr func(string, ...int) error) (arrow.DataType, error) {
	t := ts[0]
	if !isStringType(t) && !isNullType(t) {
		return nil, terr(fmt.Sprintf("%s needs a string, not %s", n.op, typeName(t)), 0)
	}
	for i := 1; i < len(n.args); i++ {
		a := n.args[i].n
		want := litString
		if n.op == opStrSlice {
			want = litInt
		}
		if a.op != opLit || a.lit.kind != want {
			what := "a string literal"
			if want == litInt {
				what = "an integer literal"
			}
			return nil, terr(fmt.Sprintf("argument %d of %s must be %s", i, n.op, what), i)
		}
	}
	switch n.op {
	case opStrContains, opStrStartsWith, opStrEndsWith:
		return arrow.FixedWidthTypes.Boolean, nil
	case opStrLen:
		return arrow.PrimitiveTypes.Int64, nil
	}
	if isNullType(t) {
		return arrow.BinaryTypes.String, nil
	}
	return t, nil
}

var truncUnits = map[string]bool{"year": true, "quarter": true, "month": true, "week": true, "day": true, "hour": true, "minute": true, "second": true}

func (tc *typeChecker) dtType(n *node, ts []arrow.DataType, terr func(string, ...int) error) (arrow.DataType, error) {
	t := ts[0]
	switch t.ID() {
	case arrow.TIMESTAMP:
		if _, err := loadZone(t.(*arrow.TimestampType).TimeZone); err != nil {
			return nil, fmt.Errorf("%s: %w", n.text, err)
		}
	case arrow.DATE32, arrow.DATE64, arrow.NULL:
	default:
		return nil, terr(fmt.Sprintf("%s needs a date or timestamp, not %s", n.op, typeName(t)), 0)
	}
	switch n.op {
	case opDtTruncate:
		a := n.args[1].n
		switch {
		case a.op == opLit && a.lit.kind == litString && truncUnits[a.lit.s]:
		case a.op == opLit && a.lit.kind == litDuration && a.lit.i > 0:
			d := time.Duration(a.lit.i)
			switch t.ID() {
			case arrow.TIMESTAMP:
				if u := t.(*arrow.TimestampType).Unit.Multiplier(); d%u != 0 {
					return nil, terr(fmt.Sprintf("dt.truncate period %s is not a whole number of %s, the unit of %s", d, u, typeName(t)), 1)
				}
				if d >= time.Second && d%time.Second != 0 {
					return nil, terr(fmt.Sprintf("dt.truncate period %s: periods of a second or more must be whole seconds", d), 1)
				}
			default:
				if d%(24*time.Hour) != 0 {
					return nil, terr(fmt.Sprintf("dt.truncate period %s of a date must be a whole number of days", d), 1)
				}
			}
		default:
			return nil, terr(`dt.truncate needs a unit ("year", "quarter", "month", "week", "day", "hour", "minute", "second") or a positive duration`, 1)
		}
		if t.ID() == arrow.DATE64 || t.ID() == arrow.NULL {
			return arrow.FixedWidthTypes.Date32, nil
		}
		return t, nil
	case opDtAddMonths:
		a := n.args[1].n
		if a.op != opLit || a.lit.kind != litInt {
			return nil, terr("dt.add_months needs an integer literal", 1)
		}
		if t.ID() == arrow.DATE64 || t.ID() == arrow.NULL {
			return arrow.FixedWidthTypes.Date32, nil
		}
		return t, nil
	case opDtDate:
		return arrow.FixedWidthTypes.Date32, nil
	}
	return arrow.PrimitiveTypes.Int32, nil
}

func isStrOp(op string) bool { return len(op) > 4 && op[:4] == "str." }
func isDtOp(op string) bool  { return len(op) > 3 && op[:3] == "dt." }

// typeName is the name of t in messages and in the canonical text.
func typeName(t arrow.DataType) string {
	if t == nil {
		return "<nil>"
	}
	switch t := t.(type) {
	case *arrow.DictionaryType:
		return "dictionary<" + typeName(t.IndexType) + ", " + typeName(t.ValueType) + ">"
	case *arrow.TimestampType:
		if t.TimeZone == "" {
			return "timestamp[" + t.Unit.String() + "]"
		}
		return "timestamp[" + t.Unit.String() + ", " + t.TimeZone + "]"
	}
	return t.String()
}

func isNullType(t arrow.DataType) bool { return t.ID() == arrow.NULL }

func isSigned(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		return true
	}
	return false
}

func isUnsigned(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return true
	}
	return false
}

func isInt(t arrow.DataType) bool   { return isSigned(t) || isUnsigned(t) }
func isFloat(t arrow.DataType) bool { return t.ID() == arrow.FLOAT32 || t.ID() == arrow.FLOAT64 }

func isNumeric(t arrow.DataType) bool { return isInt(t) || isFloat(t) }

func isBoolish(t arrow.DataType) bool { return t.ID() == arrow.BOOL || t.ID() == arrow.NULL }

func isStringType(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING:
		return true
	case arrow.DICTIONARY:
		v := t.(*arrow.DictionaryType).ValueType.ID()
		return v == arrow.STRING || v == arrow.LARGE_STRING
	}
	return false
}

// isInstant: dates and timestamps, which compare with each other.
func isInstant(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.TIMESTAMP, arrow.DATE32, arrow.DATE64:
		return true
	}
	return false
}

// comparable reports whether values of a and b can be compared.
func comparable(a, b arrow.DataType) bool {
	switch {
	case isNullType(a) || isNullType(b):
		return true
	case isNumeric(a) && isNumeric(b):
		return true
	case isStringType(a) && isStringType(b):
		return true
	case a.ID() == arrow.BOOL && b.ID() == arrow.BOOL:
		return true
	case isInstant(a) && isInstant(b):
		return true
	case a.ID() == arrow.DURATION && b.ID() == arrow.DURATION:
		return true
	}
	return false
}

// finerUnit is the finer of two time units.
func finerUnit(a, b arrow.TimeUnit) arrow.TimeUnit { return max(a, b) }

func timeUnitOf(t arrow.DataType) arrow.TimeUnit {
	switch t := t.(type) {
	case *arrow.TimestampType:
		return t.Unit
	case *arrow.DurationType:
		return t.Unit
	case *arrow.Date64Type:
		return arrow.Millisecond
	}
	return arrow.Second
}

func durationType(u arrow.TimeUnit) arrow.DataType {
	return &arrow.DurationType{Unit: u}
}

// arithType is the result type of an arithmetic operation, or false.
func arithType(op string, a, b arrow.DataType) (arrow.DataType, bool) {
	an, bn := isNullType(a), isNullType(b)
	switch {
	case an && bn:
		if op == opDiv {
			return arrow.PrimitiveTypes.Float64, true
		}
		return arrow.Null, true
	case an || bn:
		other := a
		if an {
			other = b
		}
		switch {
		case isNumeric(other):
			if an {
				a = b
			} else {
				b = a
			}
		case op == opDiv:
			return nil, false
		case other.ID() == arrow.DURATION || isInstant(other):
			// A null with a date, timestamp or duration keeps its type.
			return other, true
		default:
			return nil, false
		}
	}
	if isNumeric(a) && isNumeric(b) {
		switch {
		case op == opDiv:
			return arrow.PrimitiveTypes.Float64, true
		case isInt(a) && isInt(b):
			return arrow.PrimitiveTypes.Int64, true
		case a.ID() == arrow.FLOAT32 && b.ID() == arrow.FLOAT32:
			return arrow.PrimitiveTypes.Float32, true
		}
		return arrow.PrimitiveTypes.Float64, true
	}
	ad, bd := a.ID() == arrow.DURATION, b.ID() == arrow.DURATION
	switch op {
	case opAdd:
		switch {
		case ad && bd:
			return durationType(finerUnit(timeUnitOf(a), timeUnitOf(b))), true
		case isInstant(a) && bd:
			return instantPlusDuration(a, b), true
		case ad && isInstant(b):
			return instantPlusDuration(b, a), true
		}
	case opSub:
		switch {
		case ad && bd:
			return durationType(finerUnit(timeUnitOf(a), timeUnitOf(b))), true
		case isInstant(a) && bd:
			return instantPlusDuration(a, b), true
		case isInstant(a) && isInstant(b):
			return durationType(finerUnit(instantUnit(a), instantUnit(b))), true
		}
	case opMul:
		switch {
		case ad && isInt(b):
			return a, true
		case isInt(a) && bd:
			return b, true
		}
	}
	return nil, false
}

// instantUnit is the unit an instant type is compared and subtracted in.
func instantUnit(t arrow.DataType) arrow.TimeUnit {
	switch t.ID() {
	case arrow.TIMESTAMP:
		return t.(*arrow.TimestampType).Unit
	case arrow.DATE64:
		return arrow.Millisecond
	}
	return arrow.Millisecond // date32 - date32 gives duration[ms], as Polars
}

// instantPlusDuration: timestamp ± duration keeps the timestamp's zone, in
// the finer unit; a date plus a duration becomes a timestamp.
func instantPlusDuration(inst, dur arrow.DataType) arrow.DataType {
	u := timeUnitOf(dur)
	tz := ""
	if ts, ok := inst.(*arrow.TimestampType); ok {
		u = finerUnit(u, ts.Unit)
		tz = ts.TimeZone
	}
	return &arrow.TimestampType{Unit: u, TimeZone: tz}
}

func arithMsg(op string, a, b arrow.DataType) string {
	an, bn := typeName(a), typeName(b)
	switch op {
	case opAdd:
		return fmt.Sprintf("cannot add %s to %s", bn, an)
	case opSub:
		return fmt.Sprintf("cannot subtract %s from %s", bn, an)
	case opMul:
		return fmt.Sprintf("cannot multiply %s by %s", an, bn)
	case opDiv, opFloorDiv:
		return fmt.Sprintf("cannot divide %s by %s", an, bn)
	case opMod:
		return fmt.Sprintf("cannot take %s modulo %s", an, bn)
	case opPow:
		return fmt.Sprintf("cannot raise %s to the power %s", an, bn)
	}
	return fmt.Sprintf("cannot apply %s to %s and %s", op, an, bn)
}

// supertype is the type both a and b convert to in FillNull and When.
func supertype(a, b arrow.DataType) (arrow.DataType, bool) {
	// Dictionary-encoded strings are decoded when mixed with other values.
	a, b = stringValueType(a), stringValueType(b)
	switch {
	case isNullType(a):
		return b, true
	case isNullType(b):
		return a, true
	case arrow.TypeEqual(a, b):
		return a, true
	case isNumeric(a) && isNumeric(b):
		switch {
		case isInt(a) && isInt(b):
			return arrow.PrimitiveTypes.Int64, true
		case a.ID() == arrow.FLOAT32 && b.ID() == arrow.FLOAT32:
			return arrow.PrimitiveTypes.Float32, true
		}
		return arrow.PrimitiveTypes.Float64, true
	case isStringType(a) && isStringType(b):
		if stringValueType(a).ID() == arrow.LARGE_STRING || stringValueType(b).ID() == arrow.LARGE_STRING {
			return arrow.BinaryTypes.LargeString, true
		}
		return arrow.BinaryTypes.String, true
	case isInstant(a) && isInstant(b):
		at, aok := a.(*arrow.TimestampType)
		bt, bok := b.(*arrow.TimestampType)
		switch {
		case aok && bok:
			return &arrow.TimestampType{Unit: finerUnit(at.Unit, bt.Unit), TimeZone: at.TimeZone}, true
		case aok:
			return a, true
		case bok:
			return b, true
		}
		return arrow.FixedWidthTypes.Date32, true
	case a.ID() == arrow.DURATION && b.ID() == arrow.DURATION:
		return durationType(finerUnit(timeUnitOf(a), timeUnitOf(b))), true
	}
	return nil, false
}

// stringValueType is the value type of a string or dictionary-of-string type.
func stringValueType(t arrow.DataType) arrow.DataType {
	if d, ok := t.(*arrow.DictionaryType); ok {
		return d.ValueType
	}
	return t
}

func castable(from, to arrow.DataType) bool {
	if d, ok := from.(*arrow.DictionaryType); ok {
		from = d.ValueType
	}
	if arrow.TypeEqual(from, to) {
		return true
	}
	if d, ok := to.(*arrow.DictionaryType); ok {
		return castable(from, d.ValueType)
	}
	return compute.CanCast(from, to)
}

// unitsPerSecond gives the number of units of u in one second.
func unitsPerSecond(u arrow.TimeUnit) int64 {
	return int64(time.Second / u.Multiplier())
}

// supertypeLit is supertype, except that a literal adapts to the type of
// the other operand when its value fits (so that filling the nulls of an
// int32 column with 0 keeps int32).
func supertypeLit(a *node, at arrow.DataType, b *node, bt arrow.DataType) (arrow.DataType, bool) {
	if b.op == opLit && a.op != opLit && litFits(b.lit, at) {
		return stringValueType(at), true
	}
	if a.op == opLit && b.op != opLit && litFits(a.lit, bt) {
		return stringValueType(bt), true
	}
	return supertype(at, bt)
}

// litFits reports whether literal l converts to type t without loss.
func litFits(l scalar, t arrow.DataType) bool {
	t = stringValueType(t)
	switch l.kind {
	case litNull:
		return true
	case litBool:
		return t.ID() == arrow.BOOL
	case litString:
		return t.ID() == arrow.STRING || t.ID() == arrow.LARGE_STRING
	case litInt:
		v := l.i
		switch t.ID() {
		case arrow.INT8:
			return v >= math.MinInt8 && v <= math.MaxInt8
		case arrow.INT16:
			return v >= math.MinInt16 && v <= math.MaxInt16
		case arrow.INT32:
			return v >= math.MinInt32 && v <= math.MaxInt32
		case arrow.INT64:
			return true
		case arrow.UINT8:
			return v >= 0 && v <= math.MaxUint8
		case arrow.UINT16:
			return v >= 0 && v <= math.MaxUint16
		case arrow.UINT32:
			return v >= 0 && v <= math.MaxUint32
		case arrow.UINT64:
			return v >= 0
		case arrow.FLOAT32:
			return int64(float32(v)) == v
		case arrow.FLOAT64:
			return v >= -(1<<53) && v <= 1<<53
		}
	case litUint:
		return t.ID() == arrow.UINT64
	case litFloat32:
		return isFloat(t)
	case litFloat64:
		switch t.ID() {
		case arrow.FLOAT64:
			return true
		case arrow.FLOAT32:
			return math.IsNaN(l.f) || float64(float32(l.f)) == l.f
		}
	case litTime:
		if ts, ok := t.(*arrow.TimestampType); ok {
			return l.i%int64(ts.Unit.Multiplier()) == 0
		}
	case litDate:
		return t.ID() == arrow.DATE32 || t.ID() == arrow.TIMESTAMP
	case litDuration:
		if d, ok := t.(*arrow.DurationType); ok {
			return l.i%int64(d.Unit.Multiplier()) == 0
		}
	}
	return false
}
