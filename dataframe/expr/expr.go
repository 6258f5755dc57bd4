// Package expr describes columns computed from the columns of a table:
// col("price") * col("qty"), col("name").Str().Upper(), col("ts").Dt().Month(),
// When(col("x") > 0).Then("positive").Otherwise("other"), and so on.
//
// An Expr is a small immutable value. Building one computes nothing; it is
// checked against a table's schema with Type, which reports an unknown column
// (with the closest existing name) or a type mismatch (naming both types) before
// any data is read, and it is evaluated column-at-a-time over Arrow record
// batches with an Evaluator or Filter. Expressions can be written to bytes with
// Marshal and read back with Unmarshal, so that they travel with the work to
// other processes.
//
// # Semantics
//
// Expressions follow SQL and pandas:
//
//   - Arithmetic and comparisons with a null operand give null.
//   - And, Or and Not use three-valued logic: null AND false is false,
//     null OR true is true.
//   - Integer with integer gives int64 (narrower and unsigned integers widen;
//     overflow wraps around as in Go). Anything with a float gives float64,
//     except float32 with float32, which stays float32. Div is true division
//     and always gives float64.
//   - FloorDiv and Mod round towards negative infinity, like Python. Integer
//     division by zero gives null; float division by zero gives ±Inf or NaN.
//   - Comparisons between numbers compare values exactly, whatever their
//     types (an int64 column against a float64 column or literal included).
//     Strings compare byte-wise. Dates and timestamps compare with each other
//     and with time.Time and Date literals.
//   - timestamp ± duration gives a timestamp, timestamp - timestamp a duration.
//   - Date parts (Dt) are taken in the column's time zone; timestamps without
//     a time zone are wall-clock times and read as UTC.
//
// Strings may be utf8, large_utf8 or dictionary-encoded utf8 columns. On a
// dictionary column, string functions work on the distinct values only.
package expr

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Expr is an expression over the columns of a table. The zero Expr is
// invalid: its Err reports it. Exprs are immutable and safe to share between
// goroutines.
type Expr struct {
	n *node
}

// node is one immutable expression node.
type node struct {
	op   string         // one of the op* constants
	name string         // column name (opCol) or alias (opAlias)
	lit  scalar         // literal value (opLit)
	typ  arrow.DataType // target type (opCast)
	args []Expr
	err  error  // construction error, own or inherited from an argument
	text string // canonical text
}

// Operation names returned by Expr.Op.
const (
	opCol       = "col"
	opLit       = "lit"
	opAlias     = "alias"
	opAdd       = "add"
	opSub       = "sub"
	opMul       = "mul"
	opDiv       = "div"
	opFloorDiv  = "floordiv"
	opMod       = "mod"
	opPow       = "pow"
	opNeg       = "neg"
	opAbs       = "abs"
	opEq        = "eq"
	opNe        = "ne"
	opLt        = "lt"
	opLe        = "le"
	opGt        = "gt"
	opGe        = "ge"
	opBetween   = "between"
	opIsIn      = "is_in"
	opAnd       = "and"
	opOr        = "or"
	opXor       = "xor"
	opNot       = "not"
	opIsNull    = "is_null"
	opIsNotNull = "is_not_null"
	opFillNull  = "fill_null"
	opCast      = "cast"
	opIsNaN     = "is_nan"
	opWhen      = "when"

	opStrContains   = "str.contains"
	opStrStartsWith = "str.starts_with"
	opStrEndsWith   = "str.ends_with"
	opStrLower      = "str.lower"
	opStrUpper      = "str.upper"
	opStrLen        = "str.len"
	opStrReplace    = "str.replace"
	opStrSlice      = "str.slice"
	opStrStrip      = "str.strip"

	opDtYear      = "dt.year"
	opDtMonth     = "dt.month"
	opDtDay       = "dt.day"
	opDtHour      = "dt.hour"
	opDtMinute    = "dt.minute"
	opDtSecond    = "dt.second"
	opDtWeekday   = "dt.weekday"
	opDtDayOfYear = "dt.day_of_year"
	opDtDate      = "dt.date"
	opDtTruncate  = "dt.truncate"
	opDtAddMonths = "dt.add_months"
)

// infix maps binary operators to the symbol used in String.
var infix = map[string]string{
	opAdd: "+", opSub: "-", opMul: "*", opDiv: "/", opFloorDiv: "//", opMod: "%", opPow: "**",
	opEq: "==", opNe: "!=", opLt: "<", opLe: "<=", opGt: ">", opGe: ">=",
	opAnd: "&", opOr: "|", opXor: "^",
}

// arity gives the number of arguments of fixed-arity ops; ops not listed take
// a variable number (is_in, when).
var arity = map[string]int{
	opCol: 0, opLit: 0, opAlias: 1, opCast: 1,
	opAdd: 2, opSub: 2, opMul: 2, opDiv: 2, opFloorDiv: 2, opMod: 2, opPow: 2,
	opEq: 2, opNe: 2, opLt: 2, opLe: 2, opGt: 2, opGe: 2,
	opAnd: 2, opOr: 2, opXor: 2,
	opNeg: 1, opAbs: 1, opNot: 1, opIsNull: 1, opIsNotNull: 1, opIsNaN: 1,
	opFillNull: 2, opBetween: 3,
	opStrContains: 2, opStrStartsWith: 2, opStrEndsWith: 2, opStrLower: 1, opStrUpper: 1,
	opStrLen: 1, opStrReplace: 3, opStrSlice: 3, opStrStrip: 1,
	opDtYear: 1, opDtMonth: 1, opDtDay: 1, opDtHour: 1, opDtMinute: 1, opDtSecond: 1,
	opDtWeekday: 1, opDtDayOfYear: 1, opDtDate: 1, opDtTruncate: 2, opDtAddMonths: 2,
}

// Col refers to the column called name.
func Col(name string) Expr {
	n := &node{op: opCol, name: name}
	if name == "" {
		n.err = fmt.Errorf("col(\"\"): column name is empty")
	}
	n.text = "col(" + strconv.Quote(name) + ")"
	return Expr{n}
}

// Lit is a constant: nil (null), a bool, any Go integer type (int64, or
// uint64 above the int64 range), float32, float64, a string, a time.Time (a
// timestamp[ns] in the time's zone; time.Local counts as UTC), a
// time.Duration (duration[ns]) or a Date (date32). An Expr is returned as it
// is. Another type gives an Expr whose Err says so (a *LiteralError).
//
// Where a literal meets a column in FillNull or When, it takes the column's
// type if its value fits: filling an int32 column with 0 keeps int32.
func Lit(v any) Expr {
	if e, ok := v.(Expr); ok {
		return e
	}
	if w, ok := v.(*WhenThen); ok {
		return w.Expr()
	}
	s, err := scalarOf(v)
	n := &node{op: opLit, lit: s, err: err}
	if err != nil {
		n.text = fmt.Sprintf("lit(<%T>)", v)
	} else {
		n.text = s.String()
	}
	return Expr{n}
}

// toExpr turns an operand given as any into an Expr.
func toExpr(v any) Expr { return Lit(v) }

// newNode builds a node with args, inheriting the first construction error.
func newNode(op string, args ...Expr) Expr {
	n := &node{op: op, args: args}
	n.finish()
	return Expr{n}
}

// finish sets err and text from the fields of a node under construction.
func (n *node) finish() {
	for _, a := range n.args {
		if a.n == nil {
			n.err = errZero
			break
		}
		if a.n.err != nil {
			n.err = a.n.err
			break
		}
	}
	n.text = n.render()
}

func (e Expr) binary(op string, other any) Expr { return newNode(op, e, toExpr(other)) }

// Add is e + other. other is an Expr or a literal (see Lit).
func (e Expr) Add(other any) Expr { return e.binary(opAdd, other) }

// Sub is e - other.
func (e Expr) Sub(other any) Expr { return e.binary(opSub, other) }

// Mul is e * other.
func (e Expr) Mul(other any) Expr { return e.binary(opMul, other) }

// Div is true division e / other; the result is always float64.
func (e Expr) Div(other any) Expr { return e.binary(opDiv, other) }

// FloorDiv is e / other rounded towards negative infinity (Python's //).
// Integer division by zero gives null.
func (e Expr) FloorDiv(other any) Expr { return e.binary(opFloorDiv, other) }

// Mod is the remainder of FloorDiv: it has the sign of other (Python's %).
// Integer modulo by zero gives null.
func (e Expr) Mod(other any) Expr { return e.binary(opMod, other) }

// Pow is e raised to the power other. Integers raised to a negative integer
// power give null; anything with a float gives float64.
func (e Expr) Pow(other any) Expr { return e.binary(opPow, other) }

// Neg is -e.
func (e Expr) Neg() Expr { return newNode(opNeg, e) }

// Abs is the absolute value of e.
func (e Expr) Abs() Expr { return newNode(opAbs, e) }

// Eq is e == other.
func (e Expr) Eq(other any) Expr { return e.binary(opEq, other) }

// Ne is e != other.
func (e Expr) Ne(other any) Expr { return e.binary(opNe, other) }

// Lt is e < other.
func (e Expr) Lt(other any) Expr { return e.binary(opLt, other) }

// Le is e <= other.
func (e Expr) Le(other any) Expr { return e.binary(opLe, other) }

// Gt is e > other.
func (e Expr) Gt(other any) Expr { return e.binary(opGt, other) }

// Ge is e >= other.
func (e Expr) Ge(other any) Expr { return e.binary(opGe, other) }

// Between is lo <= e AND e <= hi (both ends included).
func (e Expr) Between(lo, hi any) Expr { return newNode(opBetween, e, toExpr(lo), toExpr(hi)) }

// IsIn is true where e equals one of values, which must be literals. A null
// e gives null; null values in the list are ignored.
func (e Expr) IsIn(values ...any) Expr {
	args := make([]Expr, 0, len(values)+1)
	args = append(args, e)
	var err error
	for _, v := range values {
		x := toExpr(v)
		if err == nil && x.n != nil && x.n.err == nil && x.n.op != opLit {
			err = fmt.Errorf("is_in: values must be literals, got %s", x)
		}
		args = append(args, x)
	}
	out := newNode(opIsIn, args...)
	if out.n.err == nil && err != nil {
		out.n.err = err
	}
	return out
}

// And is the logical e AND other (null AND false is false).
func (e Expr) And(other any) Expr { return e.binary(opAnd, other) }

// Or is the logical e OR other (null OR true is true).
func (e Expr) Or(other any) Expr { return e.binary(opOr, other) }

// Xor is the logical exclusive or; null if either side is null.
func (e Expr) Xor(other any) Expr { return e.binary(opXor, other) }

// Not is the logical NOT e.
func (e Expr) Not() Expr { return newNode(opNot, e) }

// IsNull is true where e is null, false elsewhere (never null).
func (e Expr) IsNull() Expr { return newNode(opIsNull, e) }

// IsNotNull is true where e is not null (never null).
func (e Expr) IsNotNull() Expr { return newNode(opIsNotNull, e) }

// FillNull replaces the nulls of e with v (an Expr or a literal).
func (e Expr) FillNull(v any) Expr { return e.binary(opFillNull, v) }

// IsNaN is true where e is a float NaN; integers are never NaN.
func (e Expr) IsNaN() Expr { return newNode(opIsNaN, e) }

// Cast converts e to type t. Values that do not fit (an int64 too large for
// int32, a string that is not a number) make evaluation fail with an error.
func (e Expr) Cast(t arrow.DataType) Expr {
	n := &node{op: opCast, typ: t, args: []Expr{e}}
	if t == nil {
		n.err = fmt.Errorf("cast of %s: target type is nil", e)
	}
	n.finish()
	return Expr{n}
}

// Alias renames the output of e.
func (e Expr) Alias(name string) Expr {
	n := &node{op: opAlias, name: name, args: []Expr{e}}
	n.finish()
	if n.err == nil && name == "" {
		n.err = fmt.Errorf("alias of %s: name is empty", e)
	}
	return Expr{n}
}

// Name is the name of the column e computes: its alias, else the name of the
// first column it refers to, else "literal".
func (e Expr) Name() string {
	if e.n == nil {
		return ""
	}
	var walk func(n *node) (string, bool)
	walk = func(n *node) (string, bool) {
		switch n.op {
		case opAlias, opCol:
			return n.name, true
		}
		for _, a := range n.args {
			if a.n == nil {
				continue
			}
			if s, ok := walk(a.n); ok {
				return s, true
			}
		}
		return "", false
	}
	if s, ok := walk(e.n); ok {
		return s
	}
	return "literal"
}

// String is the canonical text of e, such as (col("a") + 1.5) > col("b").
// Equal expressions have equal text.
func (e Expr) String() string {
	if e.n == nil {
		return "<invalid expr>"
	}
	return e.n.text
}

// Columns lists the columns e refers to, each once, in order of first use.
func (e Expr) Columns() []string {
	var out []string
	var walk func(n *node)
	walk = func(n *node) {
		if n == nil {
			return
		}
		if n.op == opCol && !slices.Contains(out, n.name) {
			out = append(out, n.name)
		}
		for _, a := range n.args {
			walk(a.n)
		}
	}
	walk(e.n)
	return out
}

var errZero = fmt.Errorf("expr: zero Expr (use Col, Lit or When to build one)")

// Err reports a mistake made while building e, such as a literal of an
// unsupported type. Type and evaluation report it too.
func (e Expr) Err() error {
	if e.n == nil {
		return errZero
	}
	return e.n.err
}

// Op names the operation at the root of e: "col", "lit", "alias", "cast",
// "add", "sub", "mul", "div", "floordiv", "mod", "pow", "neg", "abs",
// "eq", "ne", "lt", "le", "gt", "ge", "between", "is_in", "and", "or", "xor",
// "not", "is_null", "is_not_null", "fill_null", "is_nan", "when",
// "str.<function>" or "dt.<function>". Parameters of functions (the
// substring of str.contains, the unit of dt.truncate, ...) are literal
// arguments.
func (e Expr) Op() string {
	if e.n == nil {
		return ""
	}
	return e.n.op
}

// Args are the operands of e, in order. For "when" they are condition, value
// pairs followed by the otherwise value.
func (e Expr) Args() []Expr {
	if e.n == nil {
		return nil
	}
	return slices.Clone(e.n.args)
}

// ColumnName is the column name of a column reference.
func (e Expr) ColumnName() (string, bool) {
	if e.n == nil || e.n.op != opCol {
		return "", false
	}
	return e.n.name, true
}

// AliasName is the name given by Alias at the root of e.
func (e Expr) AliasName() (string, bool) {
	if e.n == nil || e.n.op != opAlias {
		return "", false
	}
	return e.n.name, true
}

// CastType is the target type of a Cast at the root of e.
func (e Expr) CastType() (arrow.DataType, bool) {
	if e.n == nil || e.n.op != opCast {
		return nil, false
	}
	return e.n.typ, true
}

// LiteralValue is the value of a literal: nil, bool, int64, uint64 (above
// the int64 range only), float32, float64, string, time.Time, time.Duration or
// Date.
func (e Expr) LiteralValue() (any, bool) {
	if e.n == nil || e.n.op != opLit {
		return nil, false
	}
	return e.n.lit.value(), true
}

// withArgs returns a copy of n with other arguments.
func (n *node) withArgs(args []Expr) Expr {
	c := &node{op: n.op, name: n.name, lit: n.lit, typ: n.typ, args: args}
	c.finish()
	if c.err == nil && n.err != nil && !n.errFromArgs() {
		c.err = n.err
	}
	return Expr{c}
}

// errFromArgs reports whether n's error came from one of its arguments.
func (n *node) errFromArgs() bool {
	for _, a := range n.args {
		if a.n == nil || a.n.err != nil {
			return true
		}
	}
	return false
}

// Transform rewrites e bottom-up: the arguments of each node are rewritten
// first, then fn is called with the node (rebuilt on the rewritten arguments);
// if fn returns true its result replaces the node. Nodes fn leaves alone are
// shared with e, not copied.
func (e Expr) Transform(fn func(Expr) (Expr, bool)) Expr {
	if e.n == nil {
		return e
	}
	cur := e
	if len(e.n.args) > 0 {
		var args []Expr
		for i, a := range e.n.args {
			na := a.Transform(fn)
			if args == nil && na.n != a.n {
				args = slices.Clone(e.n.args[:i:i])
			}
			if args != nil {
				args = append(args, na)
			}
		}
		if args != nil {
			cur = e.n.withArgs(args)
		}
	}
	if r, ok := fn(cur); ok {
		return r
	}
	return cur
}

// Conjuncts splits a predicate on And: a & (b & c) gives a, b, c. Anything
// else gives itself.
func Conjuncts(e Expr) []Expr {
	if e.n != nil && e.n.op == opAnd {
		return append(Conjuncts(e.n.args[0]), Conjuncts(e.n.args[1])...)
	}
	return []Expr{e}
}

// render computes the canonical text of n from its arguments.
func (n *node) render() string {
	var b strings.Builder
	arg := func(i int) string {
		if i >= len(n.args) {
			return "<missing>"
		}
		return n.args[i].String()
	}
	// operand renders argument i in parentheses when it is an infix
	// operation or, if prefix is set, starts with a sign.
	operand := func(i int, prefix bool) string {
		if i >= len(n.args) || n.args[i].n == nil {
			return "<missing>"
		}
		a := n.args[i].n
		if _, ok := infix[a.op]; ok {
			return "(" + a.text + ")"
		}
		if prefix && (a.op == opNeg || a.op == opNot || a.op == opLit && strings.HasPrefix(a.text, "-")) {
			return "(" + a.text + ")"
		}
		return a.text
	}
	// recv renders argument i as a receiver of a method call or prefix op.
	recv := func(i int) string { return operand(i, true) }
	switch {
	case n.op == opCol || n.op == opLit:
		return n.text
	case infix[n.op] != "":
		// -x ** 2 would read as -(x ** 2): keep signs in parentheses there.
		return operand(0, n.op == opPow) + " " + infix[n.op] + " " + operand(1, n.op == opPow)
	case n.op == opNeg:
		return "-" + recv(0)
	case n.op == opNot:
		return "~" + recv(0)
	case n.op == opAlias:
		return recv(0) + ".alias(" + strconv.Quote(n.name) + ")"
	case n.op == opCast:
		t := "<nil>"
		if n.typ != nil {
			t = typeName(n.typ)
		}
		return recv(0) + ".cast(" + t + ")"
	case n.op == opIsIn:
		b.WriteString(recv(0))
		b.WriteString(".is_in([")
		for i := 1; i < len(n.args); i++ {
			if i > 1 {
				b.WriteString(", ")
			}
			b.WriteString(arg(i))
		}
		b.WriteString("])")
		return b.String()
	case n.op == opWhen:
		k := len(n.args)
		for i := 0; i+1 < k; i += 2 {
			if i > 0 {
				b.WriteString(".")
			}
			b.WriteString("when(" + arg(i) + ").then(" + arg(i+1) + ")")
		}
		b.WriteString(".otherwise(" + arg(k-1) + ")")
		return b.String()
	}
	// Method calls: recv.op(args...), with "str." and "dt." namespaces kept.
	b.WriteString(recv(0))
	b.WriteString(".")
	b.WriteString(n.op)
	b.WriteString("(")
	for i := 1; i < len(n.args); i++ {
		if i > 1 {
			b.WriteString(", ")
		}
		b.WriteString(arg(i))
	}
	b.WriteString(")")
	return b.String()
}
