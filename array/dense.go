package array

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// Dense is an n-dimensional array held in memory: a buffer of one element
// type, a shape, and strides that say how far apart (in elements)
// neighbours along each axis are. Compute returns a Dense, every chunk of a
// lazy Array is a Dense while it is computed, and functions given to
// MapBlocks take and return Dense values.
//
// A Dense made by NewDense or returned by Compute is row-major (C order)
// and contiguous; T and Transpose return views with other strides that
// share the buffer. Dense values are treated as immutable: functions that
// return a new Dense never change their inputs.
type Dense struct {
	dtype   DType
	shape   []int
	strides []int
	offset  int
	data    any // []float64, []float32, []int64 or []bool
}

// NewDense returns a row-major Dense that uses data (it is not copied)
// with the given shape. No shape is a 0-dimensional array (a scalar)
// holding data[0]. The product of the shape must be len(data).
func NewDense[T Elem](data []T, shape ...int) (*Dense, error) {
	n, err := shapeSize(shape)
	if err != nil {
		return nil, err
	}
	if n != len(data) {
		return nil, fmt.Errorf("array: shape %v holds %d elements, but the data has %d", shape, n, len(data))
	}
	return &Dense{dtype: dtypeOf[T](), shape: slices.Clone(shape), strides: rowMajorStrides(shape), data: data}, nil
}

// DenseFromMat returns a 2-D float64 Dense with a copy of the elements of
// m, a gonum matrix.
func DenseFromMat(m mat.Matrix) *Dense {
	r, c := m.Dims()
	data := make([]float64, r*c)
	if rm, ok := m.(mat.RawMatrixer); ok {
		raw := rm.RawMatrix()
		for i := range r {
			copy(data[i*c:(i+1)*c], raw.Data[i*raw.Stride:i*raw.Stride+c])
		}
	} else {
		for i := range r {
			for j := range c {
				data[i*c+j] = m.At(i, j)
			}
		}
	}
	return &Dense{dtype: Float64, shape: []int{r, c}, strides: []int{c, 1}, data: data}
}

// newDense allocates a zeroed row-major Dense.
func newDense(t DType, shape []int) *Dense {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return &Dense{dtype: t, shape: slices.Clone(shape), strides: rowMajorStrides(shape), data: makeSlice(t, n)}
}

func makeSlice(t DType, n int) any {
	switch t {
	case Float64:
		return make([]float64, n)
	case Float32:
		return make([]float32, n)
	case Int64:
		return make([]int64, n)
	case Bool:
		return make([]bool, n)
	}
	// Unreachable: ops check the dtypes in their params before they make
	// chunks.
	return make([]float64, n)
}

func shapeSize(shape []int) (int, error) {
	n := 1
	for i, s := range shape {
		if s < 0 {
			return 0, fmt.Errorf("array: shape %v has a negative size on axis %d", shape, i)
		}
		if s > 0 && n > math.MaxInt/s {
			return 0, fmt.Errorf("array: shape %v is too large", shape)
		}
		n *= s
	}
	return n, nil
}

func rowMajorStrides(shape []int) []int {
	st := make([]int, len(shape))
	s := 1
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = s
		s *= shape[i]
	}
	return st
}

// DType returns the element type.
func (d *Dense) DType() DType { return d.dtype }

// Shape returns the size of every axis.
func (d *Dense) Shape() []int { return slices.Clone(d.shape) }

// Strides returns, for every axis, how many elements of the buffer lie
// between neighbours along it.
func (d *Dense) Strides() []int { return slices.Clone(d.strides) }

// NDim returns the number of axes.
func (d *Dense) NDim() int { return len(d.shape) }

// Size returns the number of elements.
func (d *Dense) Size() int {
	n := 1
	for _, s := range d.shape {
		n *= s
	}
	return n
}

// SizeBytes returns the memory the buffer holds, for the executors'
// memory accounting (graph.Sizer).
func (d *Dense) SizeBytes() int64 {
	n := int64(96 + 16*len(d.shape))
	switch x := d.data.(type) {
	case []float64:
		n += int64(cap(x)) * 8
	case []float32:
		n += int64(cap(x)) * 4
	case []int64:
		n += int64(cap(x)) * 8
	case []bool:
		n += int64(cap(x))
	}
	return n
}

// contiguous reports whether the elements are in row-major order without
// gaps, starting at offset.
func (d *Dense) contiguous() bool {
	s := 1
	for i := len(d.shape) - 1; i >= 0; i-- {
		if d.shape[i] != 1 && d.strides[i] != s {
			return false
		}
		s *= d.shape[i]
	}
	return true
}

// flat returns the row-major elements as a slice of the Go element type,
// sharing memory with d when it is contiguous.
func (d *Dense) flat() any {
	if !d.contiguous() {
		return d.contig().data
	}
	n := d.Size()
	switch x := d.data.(type) {
	case []float64:
		return x[d.offset : d.offset+n]
	case []float32:
		return x[d.offset : d.offset+n]
	case []int64:
		return x[d.offset : d.offset+n]
	case []bool:
		return x[d.offset : d.offset+n]
	}
	return nil
}

// contig returns d when it is contiguous with offset 0 and a buffer of
// exactly its size, and a row-major copy otherwise.
func (d *Dense) contig() *Dense {
	if d.offset == 0 && d.contiguous() && sliceLen(d.data) == d.Size() {
		return d
	}
	out := newDense(d.dtype, d.shape)
	if d.contiguous() {
		n := d.Size()
		switch x := d.data.(type) {
		case []float64:
			copy(out.data.([]float64), x[d.offset:d.offset+n])
		case []float32:
			copy(out.data.([]float32), x[d.offset:d.offset+n])
		case []int64:
			copy(out.data.([]int64), x[d.offset:d.offset+n])
		case []bool:
			copy(out.data.([]bool), x[d.offset:d.offset+n])
		}
		return out
	}
	switch x := d.data.(type) {
	case []float64:
		copyStrided(out.data.([]float64), x, d.shape, d.strides, d.offset)
	case []float32:
		copyStrided(out.data.([]float32), x, d.shape, d.strides, d.offset)
	case []int64:
		copyStrided(out.data.([]int64), x, d.shape, d.strides, d.offset)
	case []bool:
		copyStrided(out.data.([]bool), x, d.shape, d.strides, d.offset)
	}
	return out
}

func sliceLen(v any) int {
	switch x := v.(type) {
	case []float64:
		return len(x)
	case []float32:
		return len(x)
	case []int64:
		return len(x)
	case []bool:
		return len(x)
	}
	return 0
}

// copyStrided copies the strided elements of src into dst in row-major
// order.
func copyStrided[T any](dst, src []T, shape, strides []int, offset int) {
	nd := len(shape)
	if nd == 0 {
		if len(dst) > 0 {
			dst[0] = src[offset]
		}
		return
	}
	for _, s := range shape {
		if s == 0 {
			return
		}
	}
	if nd == 2 && strides[0] == 1 {
		transposeInto(dst, src, shape[0], shape[1], strides[1], offset)
		return
	}
	idx := make([]int, nd-1)
	last, lastStride := shape[nd-1], strides[nd-1]
	off := offset
	for o := 0; o < len(dst); o += last {
		row := dst[o : o+last]
		if lastStride == 1 {
			copy(row, src[off:off+last])
		} else {
			p := off
			for i := range row {
				row[i] = src[p]
				p += lastStride
			}
		}
		// Advance the index of the outer axes.
		for a := nd - 2; a >= 0; a-- {
			idx[a]++
			off += strides[a]
			if idx[a] < shape[a] {
				break
			}
			off -= strides[a] * shape[a]
			idx[a] = 0
		}
	}
}

// transposeInto copies the r×c matrix whose element (i, j) is
// src[offset+i+j*ld] into dst row-major, in tiles that stay in cache.
func transposeInto[T any](dst, src []T, r, c, ld, offset int) {
	const tile = 32
	for i0 := 0; i0 < r; i0 += tile {
		i1 := min(i0+tile, r)
		for j0 := 0; j0 < c; j0 += tile {
			j1 := min(j0+tile, c)
			for i := i0; i < i1; i++ {
				row := dst[i*c : (i+1)*c]
				p := offset + i + j0*ld
				for j := j0; j < j1; j++ {
					row[j] = src[p]
					p += ld
				}
			}
		}
	}
}

// At returns the element at idx as a float64 (a bool is 0 or 1). With no
// indices it returns the only element of an array of size 1.
func (d *Dense) At(idx ...int) (float64, error) {
	off, err := d.index(idx)
	if err != nil {
		return 0, err
	}
	switch x := d.data.(type) {
	case []float64:
		return x[off], nil
	case []float32:
		return float64(x[off]), nil
	case []int64:
		return float64(x[off]), nil
	case []bool:
		if x[off] {
			return 1, nil
		}
		return 0, nil
	}
	return 0, errors.New("array: At on an empty Dense")
}

// index returns the buffer offset of the element at idx.
func (d *Dense) index(idx []int) (int, error) {
	if len(idx) == 0 {
		if d.Size() != 1 {
			return 0, fmt.Errorf("array: At with no index needs an array of size 1, not shape %v", d.shape)
		}
		return d.offset, nil
	}
	if len(idx) != len(d.shape) {
		return 0, fmt.Errorf("array: index %v has %d values for an array of %d dimensions (shape %v)", idx, len(idx), len(d.shape), d.shape)
	}
	off := d.offset
	for a, i := range idx {
		if i < 0 {
			i += d.shape[a]
		}
		if i < 0 || i >= d.shape[a] {
			return 0, fmt.Errorf("array: index %d is out of range for axis %d of size %d (shape %v)", idx[a], a, d.shape[a], d.shape)
		}
		off += i * d.strides[a]
	}
	return off, nil
}

// Float64s returns the elements in row-major order, converted to float64.
// It always returns a new slice.
func (d *Dense) Float64s() []float64 {
	out := make([]float64, d.Size())
	convertInto(out, d.flat())
	return out
}

// Values returns the elements of d in row-major order. T must be d's
// element type. The slice shares memory with d when d is contiguous: do
// not change it.
func Values[T Elem](d *Dense) ([]T, error) {
	if want := dtypeOf[T](); want != d.dtype {
		return nil, fmt.Errorf("array: Values[%s] of a %s array", want, d.dtype)
	}
	return d.flat().([]T), nil
}

// Mat returns a copy of a 2-D Dense as a gonum matrix, converting the
// elements to float64.
func (d *Dense) Mat() (*mat.Dense, error) {
	if len(d.shape) != 2 {
		return nil, fmt.Errorf("array: Mat needs a 2-D array, not shape %v", d.shape)
	}
	if d.shape[0] == 0 || d.shape[1] == 0 {
		return nil, fmt.Errorf("array: gonum has no empty matrices (shape %v)", d.shape)
	}
	return mat.NewDense(d.shape[0], d.shape[1], d.Float64s()), nil
}

// T returns the transpose (all axes reversed) as a view sharing d's buffer.
func (d *Dense) T() *Dense {
	perm := make([]int, len(d.shape))
	for i := range perm {
		perm[i] = len(perm) - 1 - i
	}
	v, _ := d.Transpose(perm...)
	return v
}

// Transpose returns a view of d with its axes permuted: axis i of the
// result is axis perm[i] of d.
func (d *Dense) Transpose(perm ...int) (*Dense, error) {
	if err := checkPerm(perm, len(d.shape)); err != nil {
		return nil, err
	}
	v := &Dense{dtype: d.dtype, offset: d.offset, data: d.data, shape: make([]int, len(perm)), strides: make([]int, len(perm))}
	for i, p := range perm {
		v.shape[i], v.strides[i] = d.shape[p], d.strides[p]
	}
	return v, nil
}

func checkPerm(perm []int, nd int) error {
	if len(perm) != nd {
		return fmt.Errorf("array: axes %v do not permute %d axes", perm, nd)
	}
	seen := make([]bool, nd)
	for _, p := range perm {
		if p < 0 || p >= nd || seen[p] {
			return fmt.Errorf("array: axes %v are not a permutation of 0..%d", perm, nd-1)
		}
		seen[p] = true
	}
	return nil
}

// Copy returns a contiguous row-major copy of d.
func (d *Dense) Copy() *Dense {
	c := d.contig()
	if c != d {
		return c
	}
	out := newDense(d.dtype, d.shape)
	copyAny(out.data, d.data)
	return out
}

func copyAny(dst, src any) {
	switch x := dst.(type) {
	case []float64:
		copy(x, src.([]float64))
	case []float32:
		copy(x, src.([]float32))
	case []int64:
		copy(x, src.([]int64))
	case []bool:
		copy(x, src.([]bool))
	}
}

// reshaped returns a contiguous d with another shape of the same size,
// sharing memory.
func (d *Dense) reshaped(shape []int) *Dense {
	c := d.contig()
	return &Dense{dtype: c.dtype, shape: slices.Clone(shape), strides: rowMajorStrides(shape), data: c.data}
}

// String formats d as NumPy prints arrays: nested brackets, one row per
// line.
func (d *Dense) String() string {
	if d == nil {
		return "<nil>"
	}
	c := d.contig()
	var b strings.Builder
	var rec func(axis, off int)
	stride := rowMajorStrides(c.shape)
	rec = func(axis, off int) {
		if axis == len(c.shape) {
			b.WriteString(formatElem(c.data, off))
			return
		}
		b.WriteByte('[')
		for i := range c.shape[axis] {
			if i > 0 {
				if axis == len(c.shape)-1 {
					b.WriteByte(' ')
				} else {
					b.WriteString(strings.Repeat("\n", len(c.shape)-1-axis))
					b.WriteString(strings.Repeat(" ", axis+1))
				}
			}
			rec(axis+1, off+i*stride[axis])
		}
		b.WriteByte(']')
	}
	rec(0, 0)
	return b.String()
}

func formatElem(data any, i int) string {
	switch x := data.(type) {
	case []float64:
		return strconv.FormatFloat(x[i], 'g', -1, 64)
	case []float32:
		return strconv.FormatFloat(float64(x[i]), 'g', -1, 32)
	case []int64:
		return strconv.FormatInt(x[i], 10)
	case []bool:
		return strconv.FormatBool(x[i])
	}
	return "?"
}

// convertInto converts the elements of src (a slice of an element type)
// into dst.
func convertInto[T Elem](dst []T, src any) {
	switch s := src.(type) {
	case []float64:
		convertSlice(dst, s)
	case []float32:
		convertSlice(dst, s)
	case []int64:
		convertSlice(dst, s)
	case []bool:
		convertSlice(dst, s)
	}
}

// convertSlice converts between element types: bool is 0 or 1, a number
// is true when it is not zero, and floats become integers by truncation.
func convertSlice[D, S Elem](dst []D, src []S) {
	switch d := any(dst).(type) {
	case []float64:
		switch s := any(src).(type) {
		case []float64:
			copy(d, s)
		case []float32:
			for i, v := range s {
				d[i] = float64(v)
			}
		case []int64:
			for i, v := range s {
				d[i] = float64(v)
			}
		case []bool:
			for i, v := range s {
				d[i] = b2f(v)
			}
		}
	case []float32:
		switch s := any(src).(type) {
		case []float64:
			for i, v := range s {
				d[i] = float32(v)
			}
		case []float32:
			copy(d, s)
		case []int64:
			for i, v := range s {
				d[i] = float32(v)
			}
		case []bool:
			for i, v := range s {
				d[i] = float32(b2f(v))
			}
		}
	case []int64:
		switch s := any(src).(type) {
		case []float64:
			for i, v := range s {
				d[i] = f2i(v)
			}
		case []float32:
			for i, v := range s {
				d[i] = f2i(float64(v))
			}
		case []int64:
			copy(d, s)
		case []bool:
			for i, v := range s {
				if v {
					d[i] = 1
				} else {
					d[i] = 0
				}
			}
		}
	case []bool:
		switch s := any(src).(type) {
		case []float64:
			for i, v := range s {
				d[i] = v != 0
			}
		case []float32:
			for i, v := range s {
				d[i] = v != 0
			}
		case []int64:
			for i, v := range s {
				d[i] = v != 0
			}
		case []bool:
			copy(d, s)
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// f2i converts a float to int64 as NumPy does on x86: truncation, and the
// smallest int64 for NaN and values out of range.
func f2i(v float64) int64 {
	if v != v || v >= 9.223372036854775807e18 || v < -9.223372036854775808e18 {
		return math.MinInt64
	}
	return int64(v)
}

// astype returns d converted to dtype t (d itself when it has that type).
func (d *Dense) astype(t DType) *Dense {
	if d.dtype == t {
		return d
	}
	out := newDense(t, d.shape)
	src := d.flat()
	switch x := out.data.(type) {
	case []float64:
		convertInto(x, src)
	case []float32:
		convertInto(x, src)
	case []int64:
		convertInto(x, src)
	case []bool:
		convertInto(x, src)
	}
	return out
}
