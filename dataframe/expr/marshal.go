package expr

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// The encoding is JSON: {"v":1,"expr":NODE} or {"v":1,"exprs":[NODE...]},
// where NODE is {"op":..., "name":..., "lit":{"t":kind,"v":text,"tz":zone},
// "type":..., "args":[NODE...]}. Floats are written as text so that NaN and
// infinities survive.
const encodingVersion = 1

type jsonNode struct {
	Op   string     `json:"op"`
	Name string     `json:"name,omitempty"`
	Lit  *jsonLit   `json:"lit,omitempty"`
	Type string     `json:"type,omitempty"`
	Args []jsonNode `json:"args,omitempty"`
}

type jsonLit struct {
	T  string `json:"t"`
	V  string `json:"v,omitempty"`
	TZ string `json:"tz,omitempty"`
}

type jsonDoc struct {
	V     int        `json:"v"`
	Expr  *jsonNode  `json:"expr,omitempty"`
	Exprs []jsonNode `json:"exprs,omitempty"`
}

// Marshal encodes e to bytes that Unmarshal reads back, in this or another
// process. An expression with a construction error does not encode.
func Marshal(e Expr) ([]byte, error) {
	j, err := toJSON(e)
	if err != nil {
		return nil, err
	}
	return json.Marshal(jsonDoc{V: encodingVersion, Expr: &j})
}

// MarshalList encodes several expressions at once.
func MarshalList(es []Expr) ([]byte, error) {
	doc := jsonDoc{V: encodingVersion, Exprs: make([]jsonNode, 0, len(es))}
	for i, e := range es {
		j, err := toJSON(e)
		if err != nil {
			return nil, fmt.Errorf("expression %d: %w", i, err)
		}
		doc.Exprs = append(doc.Exprs, j)
	}
	return json.Marshal(doc)
}

// Unmarshal decodes an expression encoded by Marshal.
func Unmarshal(b []byte) (Expr, error) {
	doc, err := decodeDoc(b)
	if err != nil {
		return Expr{}, err
	}
	if doc.Expr == nil {
		return Expr{}, fmt.Errorf("expr: unmarshal: no expression in encoding")
	}
	return fromJSON(doc.Expr)
}

// UnmarshalList decodes expressions encoded by MarshalList.
func UnmarshalList(b []byte) ([]Expr, error) {
	doc, err := decodeDoc(b)
	if err != nil {
		return nil, err
	}
	if doc.Expr != nil {
		return nil, fmt.Errorf("expr: unmarshal list: encoding holds a single expression (use Unmarshal)")
	}
	out := make([]Expr, len(doc.Exprs))
	for i := range doc.Exprs {
		e, err := fromJSON(&doc.Exprs[i])
		if err != nil {
			return nil, fmt.Errorf("expression %d: %w", i, err)
		}
		out[i] = e
	}
	return out, nil
}

func decodeDoc(b []byte) (*jsonDoc, error) {
	var doc jsonDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("expr: unmarshal: %w", err)
	}
	if doc.V != encodingVersion {
		return nil, fmt.Errorf("expr: unmarshal: encoding version %d, this program reads version %d", doc.V, encodingVersion)
	}
	return &doc, nil
}

func toJSON(e Expr) (jsonNode, error) {
	if err := e.Err(); err != nil {
		return jsonNode{}, fmt.Errorf("expr: marshal %s: %w", e, err)
	}
	n := e.n
	j := jsonNode{Op: n.op, Name: n.name}
	switch n.op {
	case opLit:
		l := litToJSON(n.lit)
		j.Lit = &l
	case opCast:
		t, err := formatType(n.typ)
		if err != nil {
			return jsonNode{}, fmt.Errorf("expr: marshal %s: %w", e, err)
		}
		j.Type = t
	}
	for _, a := range n.args {
		aj, err := toJSON(a)
		if err != nil {
			return jsonNode{}, err
		}
		j.Args = append(j.Args, aj)
	}
	return j, nil
}

var litKindNames = [...]string{
	litNull: "null", litBool: "bool", litInt: "int64", litUint: "uint64", litFloat32: "float32",
	litFloat64: "float64", litString: "string", litTime: "timestamp", litDuration: "duration", litDate: "date",
}

func litToJSON(s scalar) jsonLit {
	l := jsonLit{T: litKindNames[s.kind]}
	switch s.kind {
	case litBool:
		l.V = strconv.FormatBool(s.b)
	case litInt, litTime, litDuration, litDate:
		l.V = strconv.FormatInt(s.i, 10)
	case litUint:
		l.V = strconv.FormatUint(s.u, 10)
	case litFloat32:
		l.V = strconv.FormatFloat(s.f, 'g', -1, 32)
	case litFloat64:
		l.V = strconv.FormatFloat(s.f, 'g', -1, 64)
	case litString:
		l.V = s.s
	}
	if s.kind == litTime {
		l.TZ = s.s
	}
	return l
}

func litFromJSON(l *jsonLit) (scalar, error) {
	kind := -1
	for k, name := range litKindNames {
		if name == l.T {
			kind = k
		}
	}
	if kind < 0 {
		return scalar{}, fmt.Errorf("unknown literal kind %q", l.T)
	}
	s := scalar{kind: litKind(kind)}
	var err error
	switch s.kind {
	case litBool:
		s.b, err = strconv.ParseBool(l.V)
	case litInt, litTime, litDuration, litDate:
		s.i, err = strconv.ParseInt(l.V, 10, 64)
	case litUint:
		s.u, err = strconv.ParseUint(l.V, 10, 64)
		if err == nil && s.u <= math.MaxInt64 {
			return uintScalar(s.u), nil
		}
	case litFloat32:
		var f float64
		f, err = strconv.ParseFloat(l.V, 32)
		s.f = float64(float32(f))
	case litFloat64:
		s.f, err = strconv.ParseFloat(l.V, 64)
	case litString:
		s.s = l.V
	}
	if err != nil {
		return scalar{}, fmt.Errorf("bad %s literal %q: %w", l.T, l.V, err)
	}
	if s.kind == litTime {
		s.s = l.TZ
		if s.s == "" {
			s.s = "UTC"
		}
		if _, err := loadZone(s.s); err != nil {
			return scalar{}, err
		}
	}
	return s, nil
}

func fromJSON(j *jsonNode) (Expr, error) {
	switch j.Op {
	case opCol:
		if len(j.Args) != 0 {
			return Expr{}, fmt.Errorf("expr: unmarshal: col takes no arguments")
		}
		e := Col(j.Name)
		return e, e.Err()
	case opLit:
		if j.Lit == nil {
			return Expr{}, fmt.Errorf("expr: unmarshal: literal without value")
		}
		s, err := litFromJSON(j.Lit)
		if err != nil {
			return Expr{}, fmt.Errorf("expr: unmarshal: %w", err)
		}
		n := &node{op: opLit, lit: s, text: s.String()}
		return Expr{n}, nil
	}
	want, fixed := arity[j.Op]
	if !fixed && j.Op != opIsIn && j.Op != opWhen {
		return Expr{}, fmt.Errorf("expr: unmarshal: unknown operation %q", j.Op)
	}
	if fixed && len(j.Args) != want {
		return Expr{}, fmt.Errorf("expr: unmarshal: %s takes %d arguments, got %d", j.Op, want, len(j.Args))
	}
	if j.Op == opWhen && len(j.Args)%2 != 1 {
		return Expr{}, fmt.Errorf("expr: unmarshal: when needs an odd number of arguments, got %d", len(j.Args))
	}
	if j.Op == opIsIn && len(j.Args) < 1 {
		return Expr{}, fmt.Errorf("expr: unmarshal: is_in without operand")
	}
	args := make([]Expr, len(j.Args))
	for i := range j.Args {
		a, err := fromJSON(&j.Args[i])
		if err != nil {
			return Expr{}, err
		}
		args[i] = a
	}
	var e Expr
	switch j.Op {
	case opAlias:
		e = args[0].Alias(j.Name)
	case opCast:
		t, err := parseType(j.Type)
		if err != nil {
			return Expr{}, fmt.Errorf("expr: unmarshal: %w", err)
		}
		e = args[0].Cast(t)
	case opIsIn:
		vals := make([]any, len(args)-1)
		for i, a := range args[1:] {
			vals[i] = a
		}
		e = args[0].IsIn(vals...)
	default:
		e = newNode(j.Op, args...)
	}
	if err := e.Err(); err != nil {
		return Expr{}, fmt.Errorf("expr: unmarshal: %w", err)
	}
	return e, nil
}

// formatType writes the types parseType reads.
func formatType(t arrow.DataType) (string, error) {
	s := typeName(t)
	if _, err := parseType(s); err != nil {
		return "", fmt.Errorf("type %s cannot be encoded", s)
	}
	return s, nil
}

var simpleTypes = map[string]arrow.DataType{
	"null": arrow.Null, "bool": arrow.FixedWidthTypes.Boolean,
	"int8": arrow.PrimitiveTypes.Int8, "int16": arrow.PrimitiveTypes.Int16,
	"int32": arrow.PrimitiveTypes.Int32, "int64": arrow.PrimitiveTypes.Int64,
	"uint8": arrow.PrimitiveTypes.Uint8, "uint16": arrow.PrimitiveTypes.Uint16,
	"uint32": arrow.PrimitiveTypes.Uint32, "uint64": arrow.PrimitiveTypes.Uint64,
	"float16": arrow.FixedWidthTypes.Float16,
	"float32": arrow.PrimitiveTypes.Float32, "float64": arrow.PrimitiveTypes.Float64,
	"utf8": arrow.BinaryTypes.String, "large_utf8": arrow.BinaryTypes.LargeString,
	"binary": arrow.BinaryTypes.Binary, "large_binary": arrow.BinaryTypes.LargeBinary,
	"date32": arrow.FixedWidthTypes.Date32, "date64": arrow.FixedWidthTypes.Date64,
}

var timeUnits = map[string]arrow.TimeUnit{"s": arrow.Second, "ms": arrow.Millisecond, "us": arrow.Microsecond, "ns": arrow.Nanosecond}

// parseType reads a type name as typeName writes it.
func parseType(s string) (arrow.DataType, error) {
	if t, ok := simpleTypes[s]; ok {
		return t, nil
	}
	bad := fmt.Errorf("unsupported type %q", s)
	switch {
	case strings.HasPrefix(s, "timestamp[") && strings.HasSuffix(s, "]"):
		in := s[len("timestamp[") : len(s)-1]
		unit, tz, _ := strings.Cut(in, ", ")
		u, ok := timeUnits[unit]
		if !ok {
			return nil, bad
		}
		if tz != "" {
			if _, err := loadZone(tz); err != nil {
				return nil, err
			}
		}
		return &arrow.TimestampType{Unit: u, TimeZone: tz}, nil
	case strings.HasPrefix(s, "duration[") && strings.HasSuffix(s, "]"):
		u, ok := timeUnits[s[len("duration["):len(s)-1]]
		if !ok {
			return nil, bad
		}
		return &arrow.DurationType{Unit: u}, nil
	case strings.HasPrefix(s, "dictionary<") && strings.HasSuffix(s, ">"):
		idx, val, ok := strings.Cut(s[len("dictionary<"):len(s)-1], ", ")
		if !ok {
			return nil, bad
		}
		it, err := parseType(idx)
		if err != nil || !isInt(it) {
			return nil, bad
		}
		vt, err := parseType(val)
		if err != nil {
			return nil, bad
		}
		return &arrow.DictionaryType{IndexType: it, ValueType: vt}, nil
	}
	return nil, bad
}
