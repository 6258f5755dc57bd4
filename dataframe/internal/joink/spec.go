package joink

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/dataframe/internal/distinct/rows"
)

// How is the kind of join.
type How int

// The kinds of join, as pandas' merge(how=...).
const (
	Inner How = iota // rows whose keys match on both sides
	Left             // every left row, with its matches or nulls
	Right            // every right row, with its matches or nulls
	Outer            // every row of both sides
)

var howNames = []string{"inner", "left", "right", "outer"}

func (h How) String() string {
	if h >= 0 && int(h) < len(howNames) {
		return howNames[h]
	}
	return fmt.Sprintf("How(%d)", int(h))
}

// ParseHow reads "inner", "left", "right" or "outer" (pandas' names).
func ParseHow(s string) (How, error) {
	if i := slices.Index(howNames, s); i >= 0 {
		return How(i), nil
	}
	return 0, fmt.Errorf("joink: unknown join %q, want inner, left, right or outer: %w", s, ErrBadSpec)
}

// MarshalText writes the pandas name.
func (h How) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText reads the pandas name.
func (h *How) UnmarshalText(b []byte) error {
	v, err := ParseHow(string(b))
	if err != nil {
		return err
	}
	*h = v
	return nil
}

// Side names one side of a join.
type Side int

// The sides. RightSide is the zero value: by default the right side is
// built into a hash table and the left side probes it.
const (
	RightSide Side = iota
	LeftSide
)

func (s Side) String() string {
	if s == LeftSide {
		return "left"
	}
	return "right"
}

// preserves reports whether a join of kind h keeps the unmatched rows of
// side s.
func (h How) preserves(s Side) bool {
	return h == Outer || (h == Left && s == LeftSide) || (h == Right && s == RightSide)
}

// Spec describes a join.
type Spec struct {
	How How `json:"how"`
	// LeftOn and RightOn are the key columns, matched by position.
	LeftOn  []string `json:"left_on"`
	RightOn []string `json:"right_on"`
	// Suffixes are appended to the names of columns that both sides have
	// (other than keys of the same name at the same position, which appear
	// once). Both empty means pandas' default "_x", "_y".
	Suffixes [2]string `json:"suffixes,omitzero"`
	// Indicator adds a column "_merge" saying where each row comes from:
	// "left_only", "right_only" or "both", dictionary-encoded with that
	// dictionary (pandas' categorical).
	Indicator bool `json:"indicator,omitempty"`
	// Build is the side given to Build; the other side is probed. The
	// output has the left columns first whichever side is built.
	Build Side `json:"build,omitempty"`
}

// Errors that callers can test for with errors.Is.
var (
	// ErrUnknownColumn: a key names a column the side does not have.
	ErrUnknownColumn = errors.New("unknown column")
	// ErrKeyType: key columns whose types cannot be keys or cannot be
	// compared with each other (a string with an integer).
	ErrKeyType = errors.New("incompatible key types")
	// ErrBadSpec: a spec that cannot describe a join (no keys, key lists
	// of different lengths, an unknown How, duplicate output columns).
	ErrBadSpec = errors.New("bad join spec")
)

// IndicatorName is the name of the column Spec.Indicator adds.
const IndicatorName = "_merge"

// Indicator values: the indices into the indicator column's dictionary.
const (
	indLeftOnly  = 0
	indRightOnly = 1
	indBoth      = 2
)

// IndicatorType is the type of the indicator column.
var IndicatorType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}

// colSource says where an output column comes from.
type colSource int

const (
	fromLeft   colSource = iota // a left column
	fromRight                   // a right column
	fromMerged                  // a key of the same name on both sides
	fromIndicator
)

type outCol struct {
	src    colSource
	li, ri int            // column indices in left and right
	typ    arrow.DataType // the output type
}

// plan is a spec checked against the two schemas.
type plan struct {
	spec         Spec
	left, right  *arrow.Schema
	lkeys, rkeys []int
	out          *arrow.Schema
	cols         []outCol
}

// OutputSchema returns the schema of the join of left and right as spec
// describes it, or an error when the spec does not fit the schemas: an
// unknown key column, key types that do not compare, output names that
// collide.
//
// The columns are pandas': the left columns in order, then the right
// columns in order, without the right keys whose name equals the left key
// at the same position (such a key appears once, where the left one is).
// Other names that both sides have get the suffixes. A merged key has the
// left type for inner and left joins, the right type for right joins, and
// for outer joins a type that holds both (the wider integer, the finer
// timestamp unit, strings decoded from dictionaries).
func OutputSchema(left, right *arrow.Schema, spec Spec) (*arrow.Schema, error) {
	p, err := newPlan(left, right, spec)
	if err != nil {
		return nil, err
	}
	return p.out, nil
}

func newPlan(left, right *arrow.Schema, spec Spec) (*plan, error) {
	if spec.How < Inner || spec.How > Outer {
		return nil, fmt.Errorf("joink: %v is not a join kind: %w", spec.How, ErrBadSpec)
	}
	if spec.Build != LeftSide && spec.Build != RightSide {
		return nil, fmt.Errorf("joink: build side %d: %w", int(spec.Build), ErrBadSpec)
	}
	if len(spec.LeftOn) == 0 {
		return nil, fmt.Errorf("joink: %s join needs at least one key column: %w", spec.How, ErrBadSpec)
	}
	if len(spec.LeftOn) != len(spec.RightOn) {
		return nil, fmt.Errorf("joink: %d left keys %v but %d right keys %v: %w",
			len(spec.LeftOn), spec.LeftOn, len(spec.RightOn), spec.RightOn, ErrBadSpec)
	}
	if spec.Suffixes == [2]string{} {
		spec.Suffixes = [2]string{"_x", "_y"}
	}
	p := &plan{spec: spec, left: left, right: right}
	var err error
	if p.lkeys, err = keyIndices(left, spec.LeftOn, "left"); err != nil {
		return nil, err
	}
	if p.rkeys, err = keyIndices(right, spec.RightOn, "right"); err != nil {
		return nil, err
	}
	merged := map[int]int{}     // left key column -> right key column
	rightDrop := map[int]bool{} // right key columns merged into left ones
	for k := range spec.LeftOn {
		lt, rt := left.Field(p.lkeys[k]).Type, right.Field(p.rkeys[k]).Type
		if err := rows.Comparable(lt, rt); err != nil {
			return nil, fmt.Errorf("joink: left key %q (%s) and right key %q (%s): %v: %w",
				spec.LeftOn[k], lt, spec.RightOn[k], rt, err, ErrKeyType)
		}
		if spec.LeftOn[k] == spec.RightOn[k] {
			if _, dup := merged[p.lkeys[k]]; !dup {
				merged[p.lkeys[k]] = p.rkeys[k]
				rightDrop[p.rkeys[k]] = true
			}
		}
	}
	rightNames := map[string]bool{}
	for j, f := range right.Fields() {
		if !rightDrop[j] {
			rightNames[f.Name] = true
		}
	}
	leftNames := map[string]bool{}
	for _, f := range left.Fields() {
		leftNames[f.Name] = true
	}
	var fields []arrow.Field
	for i, f := range left.Fields() {
		if rj, ok := merged[i]; ok {
			t, err := mergedType(spec.How, f.Type, right.Field(rj).Type)
			if err != nil {
				return nil, fmt.Errorf("joink: key %q: %v: %w", f.Name, err, ErrKeyType)
			}
			p.cols = append(p.cols, outCol{src: fromMerged, li: i, ri: rj, typ: t})
			fields = append(fields, arrow.Field{Name: f.Name, Type: t, Nullable: true})
			continue
		}
		name := f.Name
		if rightNames[name] {
			name += spec.Suffixes[0]
		}
		p.cols = append(p.cols, outCol{src: fromLeft, li: i, ri: -1, typ: f.Type})
		fields = append(fields, arrow.Field{Name: name, Type: f.Type, Nullable: true, Metadata: f.Metadata})
	}
	for j, f := range right.Fields() {
		if rightDrop[j] {
			continue
		}
		name := f.Name
		if leftNames[name] {
			name += spec.Suffixes[1]
		}
		p.cols = append(p.cols, outCol{src: fromRight, li: -1, ri: j, typ: f.Type})
		fields = append(fields, arrow.Field{Name: name, Type: f.Type, Nullable: true, Metadata: f.Metadata})
	}
	if spec.Indicator {
		p.cols = append(p.cols, outCol{src: fromIndicator, li: -1, ri: -1, typ: IndicatorType})
		fields = append(fields, arrow.Field{Name: IndicatorName, Type: IndicatorType, Nullable: false})
	}
	seen := map[string]bool{}
	for _, f := range fields {
		if seen[f.Name] {
			return nil, fmt.Errorf("joink: suffixes %q give two output columns named %q: %w", spec.Suffixes, f.Name, ErrBadSpec)
		}
		seen[f.Name] = true
	}
	p.out = arrow.NewSchema(fields, nil)
	return p, nil
}

func keyIndices(s *arrow.Schema, keys []string, side string) ([]int, error) {
	idx := make([]int, len(keys))
	for k, name := range keys {
		is := s.FieldIndices(name)
		switch len(is) {
		case 0:
			var names []string
			for _, f := range s.Fields() {
				names = append(names, f.Name)
			}
			return nil, fmt.Errorf("joink: %s key %q is not a column of the %s side (columns: %s): %w",
				side, name, side, strings.Join(names, ", "), ErrUnknownColumn)
		case 1:
			idx[k] = is[0]
		default:
			return nil, fmt.Errorf("joink: %s key %q names %d columns of the %s side: %w", side, name, len(is), side, ErrBadSpec)
		}
		if rows.KindOf(s.Field(is[0]).Type) == rows.KindNone {
			return nil, fmt.Errorf("joink: %s key %q has type %s, which cannot be a join key: %w",
				side, name, s.Field(is[0]).Type, ErrKeyType)
		}
	}
	return idx, nil
}

// mergedType is the type of a key column that appears once for both sides.
func mergedType(how How, l, r arrow.DataType) (arrow.DataType, error) {
	switch how {
	case Inner, Left:
		return l, nil
	case Right:
		return r, nil
	}
	if arrow.TypeEqual(l, r) && l.ID() != arrow.DICTIONARY {
		return l, nil
	}
	if d, ok := l.(*arrow.DictionaryType); ok {
		l = d.ValueType
	}
	if d, ok := r.(*arrow.DictionaryType); ok {
		r = d.ValueType
	}
	if arrow.TypeEqual(l, r) {
		return l, nil
	}
	switch l.ID() {
	case arrow.STRING, arrow.LARGE_STRING:
		return arrow.BinaryTypes.LargeString, nil
	case arrow.BINARY, arrow.LARGE_BINARY:
		return arrow.BinaryTypes.LargeBinary, nil
	case arrow.FLOAT32, arrow.FLOAT64:
		return arrow.PrimitiveTypes.Float64, nil
	case arrow.DATE32, arrow.DATE64:
		return arrow.FixedWidthTypes.Date64, nil
	case arrow.TIMESTAMP:
		lt, rt := l.(*arrow.TimestampType), r.(*arrow.TimestampType)
		return &arrow.TimestampType{Unit: max(lt.Unit, rt.Unit), TimeZone: lt.TimeZone}, nil
	case arrow.DURATION:
		return &arrow.DurationType{Unit: max(l.(*arrow.DurationType).Unit, r.(*arrow.DurationType).Unit)}, nil
	case arrow.TIME32, arrow.TIME64:
		return arrow.FixedWidthTypes.Time64ns, nil
	}
	// Integers: the wider type when the signs agree, else int64.
	lw, rw := l.(arrow.FixedWidthDataType).BitWidth(), r.(arrow.FixedWidthDataType).BitWidth()
	ls, rs := signed(l), signed(r)
	switch {
	case ls == rs && lw >= rw:
		return l, nil
	case ls == rs:
		return r, nil
	}
	return arrow.PrimitiveTypes.Int64, nil
}

func signed(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		return true
	}
	return false
}
