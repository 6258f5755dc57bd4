package agg

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// newAcc returns the accumulator of spec s for input values of type t (for
// Merge, the type the state was made from; see statePlan).
func newAcc(s *Spec, t arrow.DataType) (accumulator, error) {
	var a accumulator
	switch s.Func {
	case Size:
		a = &countAcc{size: true}
	case Count:
		a = &countAcc{}
	case Sum:
		ot, _, err := outputType(s, t)
		if err != nil {
			return nil, err
		}
		a = newSum(t, ot)
	case Mean:
		a = newMean(t)
	case Std, Var:
		a = newVar(t)
	case Min, Max, First, Last:
		a = newPick(s.Func, t)
	case NUnique:
		if c := classify(t); c == classString || c == classDict {
			a = &nuniqueStrAcc{typ: valueType(t)}
		} else if c != classOther {
			a = &nuniqueAcc{typ: t}
		}
	case Any:
		a = &anyAllAcc{}
	case All:
		a = &anyAllAcc{all: true}
	}
	if a == nil {
		return nil, fmt.Errorf("agg: %s: no kernel for type %s", s, t)
	}
	return a, nil
}

func newSum(t, out arrow.DataType) accumulator {
	switch out.ID() {
	case arrow.INT64:
		switch t.ID() {
		case arrow.INT8:
			return &sumAcc[int8, int64]{typ: out}
		case arrow.INT16:
			return &sumAcc[int16, int64]{typ: out}
		case arrow.INT32:
			return &sumAcc[int32, int64]{typ: out}
		case arrow.INT64:
			return &sumAcc[int64, int64]{typ: out}
		case arrow.BOOL:
			return &sumAcc[uint8, int64]{typ: out}
		}
	case arrow.UINT64:
		switch t.ID() {
		case arrow.UINT8:
			return &sumAcc[uint8, uint64]{typ: out}
		case arrow.UINT16:
			return &sumAcc[uint16, uint64]{typ: out}
		case arrow.UINT32:
			return &sumAcc[uint32, uint64]{typ: out}
		case arrow.UINT64:
			return &sumAcc[uint64, uint64]{typ: out}
		}
	case arrow.FLOAT64:
		switch t.ID() {
		case arrow.FLOAT32:
			return &sumAcc[float32, float64]{typ: out}
		case arrow.FLOAT64:
			return &sumAcc[float64, float64]{typ: out}
		}
	}
	return nil
}

func makeMean[T number]() accumulator { return &meanAcc[T]{} }
func makeVar[T number]() accumulator  { return &varAcc[T]{} }

func newMean(t arrow.DataType) accumulator {
	return numericOf(t, makeMean[int8], makeMean[int16], makeMean[int32], makeMean[int64],
		makeMean[uint8], makeMean[uint16], makeMean[uint32], makeMean[uint64], makeMean[float32], makeMean[float64])
}

func newVar(t arrow.DataType) accumulator {
	return numericOf(t, makeVar[int8], makeVar[int16], makeVar[int32], makeVar[int64],
		makeVar[uint8], makeVar[uint16], makeVar[uint32], makeVar[uint64], makeVar[float32], makeVar[float64])
}

// numericOf calls the constructor for the Go type of t's values (booleans
// as uint8).
func numericOf(t arrow.DataType, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64 func() accumulator) accumulator {
	switch t.ID() {
	case arrow.INT8:
		return i8()
	case arrow.INT16:
		return i16()
	case arrow.INT32:
		return i32()
	case arrow.INT64:
		return i64()
	case arrow.UINT8, arrow.BOOL:
		return u8()
	case arrow.UINT16:
		return u16()
	case arrow.UINT32:
		return u32()
	case arrow.UINT64:
		return u64()
	case arrow.FLOAT32:
		return f32()
	case arrow.FLOAT64:
		return f64()
	}
	return nil
}

func newPick(fn Func, t arrow.DataType) accumulator {
	switch classify(t) {
	case classString, classDict:
		return &strPickAcc{fn: fn, typ: valueType(t)}
	}
	switch t.ID() {
	case arrow.INT8:
		return &pickAcc[int8]{fn: fn, typ: t}
	case arrow.INT16:
		return &pickAcc[int16]{fn: fn, typ: t}
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		return &pickAcc[int32]{fn: fn, typ: t}
	case arrow.INT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		return &pickAcc[int64]{fn: fn, typ: t}
	case arrow.UINT8, arrow.BOOL:
		return &pickAcc[uint8]{fn: fn, typ: t}
	case arrow.UINT16:
		return &pickAcc[uint16]{fn: fn, typ: t}
	case arrow.UINT32:
		return &pickAcc[uint32]{fn: fn, typ: t}
	case arrow.UINT64:
		return &pickAcc[uint64]{fn: fn, typ: t}
	case arrow.FLOAT32:
		return &pickAcc[float32]{fn: fn, typ: t}
	case arrow.FLOAT64:
		return &pickAcc[float64]{fn: fn, typ: t}
	}
	return nil
}
