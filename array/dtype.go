package array

import (
	"fmt"
	"reflect"
)

// DType is the type of an array's elements.
type DType uint8

// The element types. Float64 is the default wherever a type is not given.
const (
	Float64 DType = iota + 1
	Float32
	Int64
	Bool // for masks and the results of comparisons
)

// Elem is the set of Go types that array elements can have.
type Elem interface {
	float64 | float32 | int64 | bool
}

func (t DType) String() string {
	switch t {
	case Float64:
		return "float64"
	case Float32:
		return "float32"
	case Int64:
		return "int64"
	case Bool:
		return "bool"
	}
	return fmt.Sprintf("DType(%d)", uint8(t))
}

// Size returns the number of bytes of one element in memory.
func (t DType) Size() int {
	switch t {
	case Float64, Int64:
		return 8
	case Float32:
		return 4
	case Bool:
		return 1
	}
	return 0
}

func (t DType) valid() bool { return t >= Float64 && t <= Bool }

// isFloat reports whether t is a floating-point type.
func (t DType) isFloat() bool { return t == Float64 || t == Float32 }

// MarshalText writes the type's name, so that params and errors read well.
func (t DType) MarshalText() ([]byte, error) {
	if t == 0 {
		return nil, nil
	}
	if !t.valid() {
		return nil, fmt.Errorf("invalid dtype %d", uint8(t))
	}
	return []byte(t.String()), nil
}

// UnmarshalText reads a type's name.
func (t *DType) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*t = 0
		return nil
	}
	d, err := ParseDType(string(b))
	if err != nil {
		return err
	}
	*t = d
	return nil
}

// ParseDType returns the DType named s: "float64", "float32", "int64" or
// "bool".
func ParseDType(s string) (DType, error) {
	for _, t := range []DType{Float64, Float32, Int64, Bool} {
		if t.String() == s {
			return t, nil
		}
	}
	return 0, fmt.Errorf("unknown dtype %q: want float64, float32, int64 or bool", s)
}

// dtypeOf returns the DType of the Go element type T.
func dtypeOf[T Elem]() DType {
	var z T
	switch any(z).(type) {
	case float64:
		return Float64
	case float32:
		return Float32
	case int64:
		return Int64
	default:
		return Bool
	}
}

// goType returns the Go element type of t.
func (t DType) goType() reflect.Type {
	switch t {
	case Float64:
		return reflect.TypeFor[float64]()
	case Float32:
		return reflect.TypeFor[float32]()
	case Int64:
		return reflect.TypeFor[int64]()
	case Bool:
		return reflect.TypeFor[bool]()
	}
	return nil
}

// promote returns the type of an arithmetic result on a and b, as NumPy
// does: bool < int64 < float32 < float64, except that int64 with float32
// gives float64.
func promote(a, b DType) DType {
	if a == b {
		return a
	}
	if a > b {
		a, b = b, a
	}
	// Now a < b in the order Float64, Float32, Int64, Bool.
	switch {
	case a == Float64:
		return Float64
	case a == Float32 && b == Int64:
		return Float64
	case a == Float32:
		return Float32
	default: // Int64 with Bool
		return Int64
	}
}
