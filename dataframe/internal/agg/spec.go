package agg

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Func names an aggregate function.
type Func string

// The aggregate functions.
const (
	Sum     Func = "sum"     // sum of non-null values; 0 for a group with none
	Mean    Func = "mean"    // arithmetic mean of non-null values
	Min     Func = "min"     // smallest non-null value
	Max     Func = "max"     // largest non-null value
	Count   Func = "count"   // number of non-null values
	Size    Func = "size"    // number of rows, nulls included
	Std     Func = "std"     // standard deviation with DDOF degrees of freedom
	Var     Func = "var"     // variance with DDOF degrees of freedom
	First   Func = "first"   // first non-null value in input order
	Last    Func = "last"    // last non-null value in input order
	NUnique Func = "nunique" // number of distinct non-null values
	Any     Func = "any"     // whether any non-null value is true
	All     Func = "all"     // whether every non-null value is true
)

// Funcs lists every aggregate function, in the order of the constants.
var Funcs = []Func{Sum, Mean, Min, Max, Count, Size, Std, Var, First, Last, NUnique, Any, All}

// Spec is one aggregate: a function of an input column, written to an
// output column.
type Spec struct {
	Func   Func   `json:"func"`
	Column string `json:"column,omitempty"` // input column; empty for Size
	// Name is the output column's name. Empty means Column, or "size" for Size.
	Name string `json:"name,omitempty"`
	// DDOF is the delta degrees of freedom of Std and Var: the divisor is
	// count - DDOF. It is used as given, so 0 is the population variance;
	// pandas' default is 1.
	DDOF int `json:"ddof,omitempty"`
}

// outName is the spec's output column name.
func (s Spec) outName() string {
	switch {
	case s.Name != "":
		return s.Name
	case s.Func == Size && s.Column == "":
		return "size"
	}
	return s.Column
}

func (s Spec) String() string {
	return fmt.Sprintf("%s(%s) as %s", s.Func, s.Column, s.outName())
}

// Options control grouping.
type Options struct {
	// DropNullKeys leaves out the groups whose key (any of the keys) is null,
	// like pandas' dropna=True. When false, null keys form their own group.
	DropNullKeys bool `json:"drop_null_keys,omitempty"`
	// Sort orders the result of Finalize by the keys, ascending, nulls last.
	// Otherwise groups come in the order of their first row in the input.
	Sort bool `json:"sort,omitempty"`
}

// Errors that callers can test for with errors.Is. The errors returned
// are *SpecError or *StateError values wrapping them, naming the column and
// type at fault.
var (
	// ErrUnknownColumn: a key or spec names a column the input does not have.
	ErrUnknownColumn = errors.New("unknown column")
	// ErrUnsupportedType: the function or grouping does not accept the
	// column's type (sum of a string column, a list key, ...).
	ErrUnsupportedType = errors.New("unsupported type")
	// ErrUnknownFunc: Spec.Func is not one of Funcs.
	ErrUnknownFunc = errors.New("unknown aggregate function")
	// ErrBadSpec: a spec is malformed (duplicate output name, negative DDOF).
	ErrBadSpec = errors.New("bad aggregate spec")
	// ErrBadState: a partial state does not have the layout the keys and
	// specs call for.
	ErrBadState = errors.New("bad partial state")
)

// SpecError reports a key or spec that cannot be applied to the input.
type SpecError struct {
	Spec   *Spec          // the spec at fault; nil for a key
	Column string         // the column at fault
	Type   arrow.DataType // its type, when known
	Detail string         // what is wrong, in words
	Err    error          // ErrUnknownColumn, ErrUnsupportedType, ErrUnknownFunc or ErrBadSpec
}

func (e *SpecError) Error() string {
	var b strings.Builder
	b.WriteString("agg: ")
	if e.Spec != nil {
		fmt.Fprintf(&b, "%s: ", e.Spec)
	} else {
		fmt.Fprintf(&b, "key %q: ", e.Column)
	}
	b.WriteString(e.Detail)
	return b.String()
}

func (e *SpecError) Unwrap() error { return e.Err }

// StateError reports a partial state that does not match the keys and specs
// given to Merge or Finalize.
type StateError struct {
	Index  int    // which state in the list given to Merge (0 for Finalize)
	Column string // the state column at fault, when known
	Detail string
}

func (e *StateError) Error() string {
	if e.Column != "" {
		return fmt.Sprintf("agg: partial state %d, column %q: %s (states must come from Partial or Merge with the same keys and specs)", e.Index, e.Column, e.Detail)
	}
	return fmt.Sprintf("agg: partial state %d: %s (states must come from Partial or Merge with the same keys and specs)", e.Index, e.Detail)
}

func (e *StateError) Unwrap() error { return ErrBadState }

// typeClass groups the Arrow types by what the kernels can do with them.
type typeClass int

const (
	classOther   typeClass = iota
	classInt               // signed integers and the temporal types stored as them
	classUint              // unsigned integers
	classFloat             // float32, float64
	classBool              // boolean
	classString            // utf8, large_utf8, binary, large_binary
	classDict              // dictionary of a string type
	classNumeric           // not a class of a type: ints, uints and floats, for messages
)

func classify(t arrow.DataType) typeClass {
	if t == nil {
		return classOther
	}
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP, arrow.TIME32, arrow.TIME64, arrow.DURATION:
		return classInt
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return classUint
	case arrow.FLOAT32, arrow.FLOAT64:
		return classFloat
	case arrow.BOOL:
		return classBool
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		return classString
	case arrow.DICTIONARY:
		d := t.(*arrow.DictionaryType)
		if classify(d.ValueType) == classString && isIntegerID(d.IndexType.ID()) {
			return classDict
		}
	}
	return classOther
}

func isIntegerID(id arrow.Type) bool {
	switch id {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return true
	}
	return false
}

// isPlainNumber reports whether t is an integer or float type (not temporal).
func isPlainNumber(t arrow.DataType) bool {
	if t == nil {
		return false
	}
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64:
		return true
	}
	return false
}

// valueType is the type min, max, first, last and nunique work in: the
// input type, or the value type of a dictionary.
func valueType(t arrow.DataType) arrow.DataType {
	if d, ok := t.(*arrow.DictionaryType); ok {
		return d.ValueType
	}
	return t
}

// outputType is the type of a spec's result column for an input column of
// type t, or an error saying why the function does not apply.
func outputType(s *Spec, t arrow.DataType) (arrow.DataType, bool, error) {
	unsupported := func(what string) (arrow.DataType, bool, error) {
		return nil, false, &SpecError{Spec: s, Column: s.Column, Type: t, Err: ErrUnsupportedType,
			Detail: fmt.Sprintf("cannot take the %s of column %q of type %s (%s)", s.Func, s.Column, t, what)}
	}
	c := classify(t)
	switch s.Func {
	case Size:
		return arrow.PrimitiveTypes.Int64, false, nil
	case Count:
		return arrow.PrimitiveTypes.Int64, false, nil
	case Sum:
		switch {
		case c == classUint:
			return arrow.PrimitiveTypes.Uint64, false, nil
		case c == classFloat:
			return arrow.PrimitiveTypes.Float64, false, nil
		case c == classBool || (c == classInt && isPlainNumber(t)):
			return arrow.PrimitiveTypes.Int64, false, nil
		}
		return unsupported("want a number or boolean")
	case Mean, Std, Var:
		if isPlainNumber(t) || c == classBool {
			return arrow.PrimitiveTypes.Float64, true, nil
		}
		return unsupported("want a number or boolean")
	case Min, Max, First, Last:
		if c == classOther {
			return unsupported("want a number, boolean, string, date, time, timestamp or duration")
		}
		return valueType(t), true, nil
	case NUnique:
		if c == classOther {
			return unsupported("want a number, boolean, string, date, time, timestamp or duration")
		}
		return arrow.PrimitiveTypes.Int64, false, nil
	case Any, All:
		if c != classBool {
			return unsupported("want a boolean")
		}
		return arrow.FixedWidthTypes.Boolean, false, nil
	}
	return nil, false, &SpecError{Spec: s, Column: s.Column, Type: t, Err: ErrUnknownFunc,
		Detail: fmt.Sprintf("unknown function %q (known: %s)", s.Func, funcList())}
}

func funcList() string {
	names := make([]string, len(Funcs))
	for i, f := range Funcs {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// keyTypeOK reports whether t can be a grouping key.
func keyTypeOK(t arrow.DataType) bool {
	return classify(t) != classOther
}

// plan is the checked form of keys and specs against an input schema.
type plan struct {
	keys    []int            // key column indices in the input
	keyFlds []arrow.Field    // key fields as they appear in the output
	cols    []int            // per spec: input column index, -1 for Size without column
	inTypes []arrow.DataType // per spec: input column type (nil for Size)
	specs   []Spec
	out     *arrow.Schema
}

func columnNames(schema *arrow.Schema) string {
	names := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// lookup returns the index of column name in schema.
func lookup(schema *arrow.Schema, name string) (int, bool) {
	idx := schema.FieldIndices(name)
	if len(idx) == 0 {
		return -1, false
	}
	return idx[0], true
}

// newPlan checks keys and specs against the input schema.
func newPlan(input *arrow.Schema, keys []string, specs []Spec) (*plan, error) {
	p := &plan{specs: specs}
	seen := make(map[string]string, len(keys)+len(specs))
	fields := make([]arrow.Field, 0, len(keys)+len(specs))
	for _, k := range keys {
		i, ok := lookup(input, k)
		if !ok {
			return nil, &SpecError{Column: k, Err: ErrUnknownColumn,
				Detail: fmt.Sprintf("no column %q to group by (columns: %s)", k, columnNames(input))}
		}
		f := input.Field(i)
		if !keyTypeOK(f.Type) {
			return nil, &SpecError{Column: k, Type: f.Type, Err: ErrUnsupportedType,
				Detail: fmt.Sprintf("cannot group by column %q of type %s (want an integer, float, boolean, string, dictionary of strings, date, time, timestamp or duration)", k, f.Type)}
		}
		if _, dup := seen[k]; dup {
			return nil, &SpecError{Column: k, Err: ErrBadSpec, Detail: fmt.Sprintf("key %q is listed twice", k)}
		}
		seen[k] = "a key"
		p.keys = append(p.keys, i)
		kf := arrow.Field{Name: f.Name, Type: f.Type, Nullable: f.Nullable}
		p.keyFlds = append(p.keyFlds, kf)
		fields = append(fields, kf)
	}
	for si := range specs {
		s := &specs[si]
		name := s.outName()
		col := -1
		var typ arrow.DataType
		switch {
		case s.Column == "" && s.Func == Size:
		case s.Column == "":
			return nil, &SpecError{Spec: s, Err: ErrBadSpec, Detail: fmt.Sprintf("%s needs an input column", s.Func)}
		default:
			i, ok := lookup(input, s.Column)
			if !ok {
				return nil, &SpecError{Spec: s, Column: s.Column, Err: ErrUnknownColumn,
					Detail: fmt.Sprintf("no column %q (columns: %s)", s.Column, columnNames(input))}
			}
			col, typ = i, input.Field(i).Type
		}
		if name == "" {
			return nil, &SpecError{Spec: s, Err: ErrBadSpec, Detail: "empty output name"}
		}
		if (s.Func == Std || s.Func == Var) && s.DDOF < 0 {
			return nil, &SpecError{Spec: s, Column: s.Column, Err: ErrBadSpec, Detail: fmt.Sprintf("negative ddof %d", s.DDOF)}
		}
		ot, nullable, err := outputType(s, typ)
		if err != nil {
			return nil, err
		}
		if what, dup := seen[name]; dup {
			return nil, &SpecError{Spec: s, Err: ErrBadSpec, Detail: fmt.Sprintf("output name %q is already used by %s", name, what)}
		}
		seen[name] = s.String()
		p.cols = append(p.cols, col)
		p.inTypes = append(p.inTypes, typ)
		fields = append(fields, arrow.Field{Name: name, Type: ot, Nullable: nullable})
	}
	p.out = arrow.NewSchema(fields, nil)
	return p, nil
}

// ResultSchema returns the schema of the result of aggregating a record of
// schema input by keys with specs: the key columns, then one column per
// spec. It reports unknown columns, unsupported types (the sum of a string
// column, grouping by a list), unknown functions and duplicate output names
// as a *SpecError naming the column and its type.
//
// Result types follow pandas: sum of signed integers or booleans is int64,
// of unsigned integers uint64, of floats float64; mean, std and var are
// float64; count, size and nunique int64; min, max, first and last keep the
// input type (the value type for a dictionary column); any and all are
// boolean. Key columns keep their input type.
func ResultSchema(input *arrow.Schema, keys []string, specs []Spec) (*arrow.Schema, error) {
	p, err := newPlan(input, keys, specs)
	if err != nil {
		return nil, err
	}
	return p.out, nil
}

// stateField is one column of a partial state.
type stateField struct {
	suffix string
	typ    arrow.DataType
}

// stateLayout returns the state columns of a spec whose input has type t.
func stateLayout(s *Spec, t arrow.DataType) []stateField {
	i64, f64 := arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64
	switch s.Func {
	case Sum:
		ot, _, _ := outputType(s, t)
		return []stateField{{"sum", ot}}
	case Mean:
		return []stateField{{"sum", f64}, {"count", i64}}
	case Count, Size:
		return []stateField{{"count", i64}}
	case Std, Var:
		// mean_low: the low part of the mean, a double-double.
		return []stateField{{"count", i64}, {"mean", f64}, {"m2", f64}, {"mean_low", f64}}
	case Min, Max, First, Last:
		return []stateField{{"value", valueType(t)}}
	case NUnique:
		return []stateField{{"distinct", arrow.ListOf(valueType(t))}}
	case Any, All:
		return []stateField{{"flag", arrow.FixedWidthTypes.Boolean}}
	}
	return nil
}

// stateSchema is the schema of the partial state for plan p.
func (p *plan) stateSchema() *arrow.Schema {
	fields := slices.Clone(p.keyFlds)
	for i := range p.specs {
		s := &p.specs[i]
		for _, f := range stateLayout(s, p.inTypes[i]) {
			fields = append(fields, arrow.Field{Name: s.outName() + ":" + f.suffix, Type: f.typ, Nullable: true})
		}
	}
	return arrow.NewSchema(fields, nil)
}
