package array

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/shoal-data/shoal/graph"
)

// An elementwise operation is an expression over the aligned chunks of its
// inputs. Expressions of consecutive elementwise operations are fused
// into one task per chunk when the graph is built (see lowerer.inline).

// exprNode is one node of an elementwise expression; the nodes of an
// expression are listed inputs first, and the last one is the result.
type exprNode struct {
	Op   string `json:"op"`
	Args []int  `json:"args,omitempty"`
	Leaf int    `json:"leaf,omitempty"`
	T    DType  `json:"t"`
	F    num    `json:"f,omitempty"` // a float constant
	I    int64  `json:"i,omitempty"` // an int constant
	B    bool   `json:"b,omitempty"` // a bool constant
	P    []num  `json:"p,omitempty"` // extra parameters of the op
}

// num is a float64 that survives JSON, NaN and infinities included.
type num float64

func (n num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	switch {
	case math.IsNaN(f):
		return []byte(`"NaN"`), nil
	case math.IsInf(f, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

func (n *num) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		f, err := strconv.ParseFloat(s, 64)
		*n = num(f)
		return err
	}
	var f float64
	err := json.Unmarshal(b, &f)
	*n = num(f)
	return err
}

// mapOp is an elementwise node: expr over leaves, leaf k being input k
// seen through views[k] (for each output axis, the input's axis or -1).
type mapOp struct {
	name  string
	expr  []exprNode
	views [][]int
}

func (m *mapOp) prefix() string { return m.name }

func (m *mapOp) lower(l *lowerer, n *node) ([]graph.Key, error) {
	p := l.program(n)
	return l.mapTasks(n.chunks, p, func(idx []int) graph.Key { return n.key(idx...) }, nil)
}

// operand is an argument of an elementwise operation: an array or a Go
// scalar. Go ints and float64s are "weak" like Python scalars in NumPy:
// they take the array's type where they fit (int64 array + 2 is int64,
// float32 array * 0.5 is float32).
type operand struct {
	n    *node
	kind byte // 'a' array, 'i' weak int, 'f' weak float, 'F' float32, 'b' bool
	f    float64
	i    int64
	b    bool
}

func toOperand(v any) (operand, error) {
	switch x := v.(type) {
	case Array:
		if err := x.Err(); err != nil {
			return operand{}, err
		}
		return operand{n: x.n, kind: 'a'}, nil
	case *Array:
		if x == nil {
			return operand{}, errZero
		}
		return toOperand(*x)
	case float64:
		return operand{kind: 'f', f: x}, nil
	case float32:
		return operand{kind: 'F', f: float64(x)}, nil
	case int:
		return operand{kind: 'i', i: int64(x)}, nil
	case int64:
		return operand{kind: 'i', i: x}, nil
	case int32:
		return operand{kind: 'i', i: int64(x)}, nil
	case int16:
		return operand{kind: 'i', i: int64(x)}, nil
	case int8:
		return operand{kind: 'i', i: int64(x)}, nil
	case uint8:
		return operand{kind: 'i', i: int64(x)}, nil
	case uint16:
		return operand{kind: 'i', i: int64(x)}, nil
	case uint32:
		return operand{kind: 'i', i: int64(x)}, nil
	case bool:
		return operand{kind: 'b', b: x}, nil
	case nil:
		return operand{}, fmt.Errorf("operand is nil")
	}
	return operand{}, fmt.Errorf("operand is a %T; want an Array or a Go number or bool", v)
}

func (o operand) describe() string {
	switch o.kind {
	case 'a':
		return fmt.Sprintf("%s array of shape %s", o.n.dtype, fmtShape(shapeOfChunks(o.n.chunks)))
	case 'i':
		return fmt.Sprintf("integer %d", o.i)
	case 'f', 'F':
		return fmt.Sprintf("number %g", o.f)
	default:
		return fmt.Sprintf("bool %t", o.b)
	}
}

func fmtShape(s []int) string {
	out := "("
	for i, d := range s {
		if i > 0 {
			out += ", "
		}
		if d == unknown {
			out += "?"
		} else {
			out += strconv.Itoa(d)
		}
	}
	if len(s) == 1 {
		out += ","
	}
	return out + ")"
}

// resultType returns the type the operands promote to: the arrays and
// strongly typed scalars by promote, then the weak scalars, which only
// lift bool to int64 (an int) or an integer type to float64 (a float).
func resultType(ops []operand) DType {
	var t DType
	weakInt, weakFloat := false, false
	for _, o := range ops {
		var d DType
		switch o.kind {
		case 'a':
			d = o.n.dtype
		case 'F':
			d = Float32
		case 'b':
			d = Bool
		case 'i':
			weakInt = true
			continue
		case 'f':
			weakFloat = true
			continue
		}
		if t == 0 {
			t = d
		} else {
			t = promote(t, d)
		}
	}
	switch {
	case t == 0 && weakFloat:
		return Float64
	case t == 0:
		return Int64
	case weakFloat && !t.isFloat():
		return Float64
	case weakInt && t == Bool:
		return Int64
	}
	return t
}

// aligned is the result of broadcasting the array operands together.
type aligned struct {
	chunks [][]int
	inputs []*node
	views  [][]int
	leafOf []int // for each operand, its input index, or -1 for a scalar
}

// align broadcasts the array operands (NumPy's rules: shapes are aligned at
// their last axes, and each pair of lengths must be equal or one of them 1)
// and rechunks them to common chunks.
func align(fn string, ops []operand) (aligned, error) {
	var al aligned
	nd := 0
	for _, o := range ops {
		if o.kind == 'a' {
			nd = max(nd, len(o.n.chunks))
		}
	}
	shape := make([]int, nd)
	for i := range shape {
		shape[i] = 1
	}
	describe := func() string {
		var s []string
		for _, o := range ops {
			if o.kind == 'a' {
				s = append(s, fmtShape(shapeOfChunks(o.n.chunks)))
			}
		}
		return strings.Join(s, " and ")
	}
	for _, o := range ops {
		if o.kind != 'a' {
			continue
		}
		s := shapeOfChunks(o.n.chunks)
		for i, d := range s {
			a := nd - len(s) + i
			switch {
			case d == 1 || d == shape[a]:
			case shape[a] == 1:
				shape[a] = d
			case d == unknown || shape[a] == unknown:
				return al, fmt.Errorf("shapes %s cannot be broadcast together: axis %d has an unknown length; call ComputeChunkSizes first", describe(), a)
			default:
				return al, fmt.Errorf("shapes %s cannot be broadcast together: axis %d has lengths %d and %d", describe(), a, shape[a], d)
			}
		}
	}
	// The chunks of each axis: those of the operand with the most chunks
	// among those not broadcast along it.
	al.chunks = make([][]int, nd)
	for a := range nd {
		for _, o := range ops {
			if o.kind != 'a' {
				continue
			}
			ia := a - (nd - len(o.n.chunks))
			if ia < 0 {
				continue
			}
			cs := o.n.chunks[ia]
			if shapeOfChunks([][]int{cs})[0] != shape[a] {
				continue
			}
			if al.chunks[a] == nil || len(cs) > len(al.chunks[a]) {
				al.chunks[a] = cs
			}
		}
		if al.chunks[a] == nil {
			al.chunks[a] = []int{shape[a]}
		}
	}
	al.leafOf = make([]int, len(ops))
	for k, o := range ops {
		al.leafOf[k] = -1
		if o.kind != 'a' {
			continue
		}
		in := o.n
		off := nd - len(in.chunks)
		want := cloneChunks(in.chunks)
		differ := false
		for ia := range in.chunks {
			if shapeOfChunks([][]int{in.chunks[ia]})[0] == shape[ia+off] && !slices.Equal(in.chunks[ia], al.chunks[ia+off]) {
				if shape[ia+off] == unknown {
					return al, fmt.Errorf("shapes %s: the chunks of axis %d, %v and %v, have unknown sizes that may differ; call ComputeChunkSizes first",
						describe(), ia+off, formatAxisChunks(in.chunks[ia]), formatAxisChunks(al.chunks[ia+off]))
				}
				want[ia] = al.chunks[ia+off]
				differ = true
			}
		}
		if differ {
			r := rechunkTo(Array{n: in}, want)
			if r.Err() != nil {
				return al, r.Err()
			}
			in = r.n
		}
		view := make([]int, nd)
		for o := range view {
			view[o] = o - off
			if o < off {
				view[o] = -1
			}
		}
		idx := slices.IndexFunc(al.inputs, func(x *node) bool { return x.token == in.token })
		if idx < 0 || !slices.Equal(al.views[idx], view) {
			al.inputs = append(al.inputs, in)
			al.views = append(al.views, view)
			idx = len(al.inputs) - 1
		}
		al.leafOf[k] = idx
	}
	return al, nil
}

// elementwise builds the node of op applied to args, each cast to its type
// in argT first; the result has type resT.
func elementwise(fn, name, op string, args []operand, argT []DType, resT DType, p []num) Array {
	al, err := align(fn, args)
	if err != nil {
		return errorf("%s: %v", fn, err)
	}
	var expr []exprNode
	for k := range al.inputs {
		expr = append(expr, exprNode{Op: "leaf", Leaf: k, T: al.inputs[k].dtype})
	}
	at := make([]int, len(args))
	for k, o := range args {
		if o.kind == 'a' {
			at[k] = al.leafOf[k]
		} else {
			expr = append(expr, constNode(o, argT[k]))
			at[k] = len(expr) - 1
		}
		if expr[at[k]].T != argT[k] {
			expr = append(expr, exprNode{Op: "cast", Args: []int{at[k]}, T: argT[k]})
			at[k] = len(expr) - 1
		}
	}
	expr = append(expr, exprNode{Op: op, Args: at, T: resT, P: p})
	return newMap(name, expr, al.inputs, al.views, al.chunks)
}

func newMap(name string, expr []exprNode, inputs []*node, views [][]int, chunks [][]int) Array {
	m := &mapOp{name: name, expr: expr, views: views}
	return newArray(m, expr[len(expr)-1].T, chunks, inputs, struct {
		E []exprNode
		V [][]int
	}{expr, views})
}

func constNode(o operand, t DType) exprNode {
	e := exprNode{Op: "const", T: t}
	var f float64
	switch o.kind {
	case 'i':
		f = float64(o.i)
	case 'b':
		f = b2f(o.b)
	default:
		f = o.f
	}
	switch t {
	case Float64, Float32:
		e.F = num(f)
	case Int64:
		if o.kind == 'i' {
			e.I = o.i
		} else {
			e.I = f2i(f)
		}
	case Bool:
		e.B = f != 0
	}
	return e
}

func operands(fn string, vals ...any) ([]operand, error) {
	ops := make([]operand, len(vals))
	hasArray := false
	for _, v := range vals {
		// An operand that failed to build fails the result with its own
		// error.
		switch x := v.(type) {
		case Array:
			if err := x.Err(); err != nil {
				return nil, inherited{err}
			}
		case *Array:
			if x != nil && x.Err() != nil {
				return nil, inherited{x.Err()}
			}
		}
	}
	for i, v := range vals {
		o, err := toOperand(v)
		if err != nil {
			return nil, fmt.Errorf("%s: operand %d: %w", fn, i+1, err)
		}
		ops[i] = o
		hasArray = hasArray || o.kind == 'a'
	}
	if !hasArray {
		return nil, fmt.Errorf("%s: no operand is an Array", fn)
	}
	return ops, nil
}

// binaryOp builds an arithmetic operation: both operands are promoted to a
// common type (bool counts as int64), which is the type of the result.
func binaryOp(fn, op string, a Array, b any, floatResult bool) Array {
	ops, err := operands(fn, a, b)
	if err != nil {
		return errArray(wrapErr(err))
	}
	t := resultType(ops)
	if t == Bool {
		t = Int64
	}
	if floatResult && !t.isFloat() {
		t = Float64
	}
	return elementwise(fn, op, op, ops, []DType{t, t}, t, nil)
}

// inherited is the error of an operand, passed on unchanged.
type inherited struct{ err error }

func (e inherited) Error() string { return e.err.Error() }

func wrapErr(err error) error {
	if in, ok := err.(inherited); ok {
		return in.err
	}
	if err == errZero {
		return err
	}
	return fmt.Errorf("array: %w", err)
}

// compare builds a comparison: the operands are promoted to a common type
// and the result is a bool array.
func compare(fn, op string, a Array, b any) Array {
	ops, err := operands(fn, a, b)
	if err != nil {
		return errArray(wrapErr(err))
	}
	t := resultType(ops)
	if t == Bool && op != "eq" && op != "ne" {
		t = Int64
	}
	return elementwise(fn, op, op, ops, []DType{t, t}, Bool, nil)
}

func logical(fn, op string, a Array, b any) Array {
	ops, err := operands(fn, a, b)
	if err != nil {
		return errArray(wrapErr(err))
	}
	return elementwise(fn, op, op, ops, []DType{Bool, Bool}, Bool, nil)
}

// unary builds a function of one array. kind says how the result type
// follows from the input type: "same" (bool counts as int64), "float"
// (integers become float64), "bool" (the result is a bool array).
func (a Array) unary(fn, op, kind string, p ...num) Array {
	if err := a.Err(); err != nil {
		return a
	}
	in := a.n.dtype
	argT, resT := in, in
	switch kind {
	case "same":
		if in == Bool {
			argT, resT = Int64, Int64
		}
	case "keep":
	case "float":
		if !in.isFloat() {
			argT, resT = Float64, Float64
		}
	case "bool":
		resT = Bool
	}
	return elementwise(fn, op, op, []operand{{n: a.n, kind: 'a'}}, []DType{argT}, resT, p)
}

// Add returns a + b elementwise. b is an Array or a Go number; shapes
// broadcast as in NumPy.
func (a Array) Add(b any) Array { return binaryOp("Add", "add", a, b, false) }

// Sub returns a - b elementwise.
func (a Array) Sub(b any) Array { return binaryOp("Sub", "sub", a, b, false) }

// Mul returns a * b elementwise.
func (a Array) Mul(b any) Array { return binaryOp("Mul", "mul", a, b, false) }

// Div returns a / b elementwise: true division, so integers give float64.
func (a Array) Div(b any) Array { return binaryOp("Div", "div", a, b, true) }

// FloorDiv returns a / b rounded down (toward negative infinity), as
// NumPy's //. An integer division by zero gives 0.
func (a Array) FloorDiv(b any) Array { return binaryOp("FloorDiv", "floordiv", a, b, false) }

// Mod returns the remainder of FloorDiv, with the sign of b (NumPy's %).
func (a Array) Mod(b any) Array { return binaryOp("Mod", "mod", a, b, false) }

// Pow returns a raised to the power b elementwise. An integer raised to a
// negative integer power is an error when computed, as in NumPy.
func (a Array) Pow(b any) Array { return binaryOp("Pow", "pow", a, b, false) }

// Maximum returns the larger of a and b elementwise; NaN wins.
func (a Array) Maximum(b any) Array { return binaryOp("Maximum", "maximum", a, b, false) }

// Minimum returns the smaller of a and b elementwise; NaN wins.
func (a Array) Minimum(b any) Array { return binaryOp("Minimum", "minimum", a, b, false) }

// Eq returns a == b elementwise as a bool array.
func (a Array) Eq(b any) Array { return compare("Eq", "eq", a, b) }

// Ne returns a != b elementwise.
func (a Array) Ne(b any) Array { return compare("Ne", "ne", a, b) }

// Lt returns a < b elementwise.
func (a Array) Lt(b any) Array { return compare("Lt", "lt", a, b) }

// Le returns a <= b elementwise.
func (a Array) Le(b any) Array { return compare("Le", "le", a, b) }

// Gt returns a > b elementwise.
func (a Array) Gt(b any) Array { return compare("Gt", "gt", a, b) }

// Ge returns a >= b elementwise.
func (a Array) Ge(b any) Array { return compare("Ge", "ge", a, b) }

// And returns the logical and of a and b (numbers are true when not zero).
func (a Array) And(b any) Array { return logical("And", "and", a, b) }

// Or returns the logical or of a and b.
func (a Array) Or(b any) Array { return logical("Or", "or", a, b) }

// Xor returns the logical exclusive or of a and b.
func (a Array) Xor(b any) Array { return logical("Xor", "xor", a, b) }

// Not returns the logical negation of a.
func (a Array) Not() Array {
	if err := a.Err(); err != nil {
		return a
	}
	return elementwise("Not", "not", "not", []operand{{n: a.n, kind: 'a'}}, []DType{Bool}, Bool, nil)
}

// Neg returns -a.
func (a Array) Neg() Array { return a.unary("Neg", "neg", "same") }

// Abs returns |a|.
func (a Array) Abs() Array { return a.unary("Abs", "abs", "same") }

// Sqrt returns the square root of a; integers give float64.
func (a Array) Sqrt() Array { return a.unary("Sqrt", "sqrt", "float") }

// Exp returns e raised to a.
func (a Array) Exp() Array { return a.unary("Exp", "exp", "float") }

// Log returns the natural logarithm of a.
func (a Array) Log() Array { return a.unary("Log", "log", "float") }

// Log1p returns log(1 + a), accurate for small a.
func (a Array) Log1p() Array { return a.unary("Log1p", "log1p", "float") }

// Sin returns the sine of a (radians).
func (a Array) Sin() Array { return a.unary("Sin", "sin", "float") }

// Cos returns the cosine of a (radians).
func (a Array) Cos() Array { return a.unary("Cos", "cos", "float") }

// Tanh returns the hyperbolic tangent of a.
func (a Array) Tanh() Array { return a.unary("Tanh", "tanh", "float") }

// Floor rounds a down; integers are unchanged.
func (a Array) Floor() Array { return a.unary("Floor", "floor", "same") }

// Ceil rounds a up; integers are unchanged.
func (a Array) Ceil() Array { return a.unary("Ceil", "ceil", "same") }

// Round rounds a to the given number of decimals (negative rounds to tens,
// hundreds...), halves to even as NumPy does.
func (a Array) Round(decimals int) Array {
	return a.unary("Round", "round", "same", num(decimals))
}

// IsNaN reports, elementwise, whether a is NaN.
func (a Array) IsNaN() Array { return a.unary("IsNaN", "isnan", "bool") }

// IsInf reports, elementwise, whether a is infinite.
func (a Array) IsInf() Array { return a.unary("IsInf", "isinf", "bool") }

// IsFinite reports, elementwise, whether a is neither NaN nor infinite.
func (a Array) IsFinite() Array { return a.unary("IsFinite", "isfinite", "bool") }

// NanToNum replaces NaN by nan, +Inf by posInf and -Inf by negInf.
// Integer arrays are unchanged.
func (a Array) NanToNum(nan, posInf, negInf float64) Array {
	return a.unary("NanToNum", "nantonum", "keep", num(nan), num(posInf), num(negInf))
}

// Clip limits a to [lo, hi] elementwise; lo and hi are Arrays or Go
// numbers. As in NumPy, NaN stays NaN and where lo > hi the result is hi.
func (a Array) Clip(lo, hi any) Array {
	if err := a.Err(); err != nil {
		return a
	}
	m := a.Maximum(lo)
	if m.Err() != nil {
		return errorf("Clip: %v", unwrapArrayErr(m.Err()))
	}
	r := m.Minimum(hi)
	if r.Err() != nil {
		return errorf("Clip: %v", unwrapArrayErr(r.Err()))
	}
	return r
}

func unwrapArrayErr(err error) string {
	s := err.Error()
	if len(s) > 7 && s[:7] == "array: " {
		return s[7:]
	}
	return s
}

// Astype converts a to dtype t: floats become integers by truncation
// toward zero, numbers become bools by comparison with zero.
func (a Array) Astype(t DType) Array {
	if err := a.Err(); err != nil {
		return a
	}
	if !t.valid() {
		return errorf("Astype: invalid dtype %d", t)
	}
	if a.n.dtype == t {
		return a
	}
	return elementwise("Astype", "astype", "cast", []operand{{n: a.n, kind: 'a'}}, []DType{a.n.dtype}, t, nil)
}

// Where returns x where cond is true and y elsewhere. cond is a bool
// Array (numbers count as true when not zero); x and y are Arrays or Go
// numbers, promoted to a common type. All three broadcast together.
func Where(cond, x, y any) Array {
	ops, err := operands("Where", cond, x, y)
	if err != nil {
		return errArray(wrapErr(err))
	}
	t := resultType(ops[1:])
	return elementwise("Where", "where", "where", ops, []DType{Bool, t, t}, t, nil)
}
