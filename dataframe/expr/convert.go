package expr

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// vec is a kernel operand: a slice of values, or one broadcast value.
type vec[T any] struct {
	v  []T
	s  T
	bc bool
}

func mkvec[T any](vals []T, bcast bool) vec[T] {
	if bcast {
		return vec[T]{s: vals[0], bc: true}
	}
	return vec[T]{v: vals}
}

// bothScalar turns a pair of broadcast operands into a one-row pair of
// slices, so that kernels handle three forms only.
func bothScalar[T any](a, b vec[T]) (vec[T], vec[T]) {
	if a.bc && b.bc {
		return vec[T]{v: []T{a.s}}, vec[T]{v: []T{b.s}}
	}
	return a, b
}

func convert[S, D fixed](src []S) []D {
	out := make([]D, len(src))
	for i, v := range src {
		out[i] = D(v)
	}
	return out
}

func scale(src []int64, f int64) []int64 {
	if f == 1 {
		return src
	}
	out := make([]int64, len(src))
	for i, v := range src {
		out[i] = v * f
	}
	return out
}

// asInt64s gives the values of an integer or temporal array as int64;
// integers are copied only when narrower, temporal values are not converted.
func asInt64s(a arrow.Array) []int64 {
	switch a.DataType().ID() {
	case arrow.INT64, arrow.TIMESTAMP, arrow.DURATION, arrow.DATE64:
		return values[int64](a)
	case arrow.UINT64:
		return convert[uint64, int64](values[uint64](a))
	case arrow.INT32, arrow.DATE32:
		return convert[int32, int64](values[int32](a))
	case arrow.INT16:
		return convert[int16, int64](values[int16](a))
	case arrow.INT8:
		return convert[int8, int64](values[int8](a))
	case arrow.UINT32:
		return convert[uint32, int64](values[uint32](a))
	case arrow.UINT16:
		return convert[uint16, int64](values[uint16](a))
	case arrow.UINT8:
		return convert[uint8, int64](values[uint8](a))
	}
	panic("expr: internal error: asInt64s of " + a.DataType().String())
}

func asUint64s(a arrow.Array) []uint64 {
	if a.DataType().ID() == arrow.UINT64 {
		return values[uint64](a)
	}
	return convert[int64, uint64](asInt64s(a))
}

func asFloat64s(a arrow.Array) []float64 {
	switch a.DataType().ID() {
	case arrow.FLOAT64:
		return values[float64](a)
	case arrow.FLOAT32:
		return convert[float32, float64](values[float32](a))
	case arrow.UINT64:
		return convert[uint64, float64](values[uint64](a))
	}
	return convert[int64, float64](asInt64s(a))
}

func asFloat32s(a arrow.Array) []float32 {
	if a.DataType().ID() == arrow.FLOAT32 {
		return values[float32](a)
	}
	return convert[float64, float32](asFloat64s(a))
}

// inUnit gives the values of a temporal or integer array as int64 in time
// unit u: timestamps and durations are scaled from their unit, dates from
// days (date32) or milliseconds (date64); integers are returned as they are.
func inUnit(a arrow.Array, u arrow.TimeUnit) []int64 {
	return scale(asInt64s(a), unitFactor(a.DataType(), u))
}

// unitFactor is the factor from the values of t to time unit u (u is never
// coarser than t's unit).
func unitFactor(t arrow.DataType, u arrow.TimeUnit) int64 {
	switch t.ID() {
	case arrow.TIMESTAMP, arrow.DURATION:
		return unitsPerSecond(u) / unitsPerSecond(timeUnitOf(t))
	case arrow.DATE32:
		return 86400 * unitsPerSecond(u)
	case arrow.DATE64:
		return unitsPerSecond(u) / 1000
	}
	return 1
}
