package array

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The files in testdata/npy were written by NumPy itself (np.save, NumPy
// 1.24.2) with testdata/npy/gen.py, which documents their values; the
// values below are those, computed again in Go. The test needs no Python.

// npyTestFile is a file of testdata/npy and what it holds.
type npyTestFile struct {
	file  string
	dtype DType
	shape []int
	want  any // []float64, []float32, []int64 or []bool, row-major
	// same: WriteNPY of these values writes the file byte for byte (C
	// order, little-endian, one of the dtypes Shoal writes).
	same bool
}

func numpyFiles() []npyTestFile {
	seq := func(n int, f func(i int) float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	ints := func(n int, f func(i int) int64) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	f4 := make([]float32, 6)
	for i := range f4 {
		f4[i] = float32(i) / float32(3)
	}
	const p35 = 50031545098999707 // 3**35
	b1 := make([]bool, 7)
	for i := range b1 {
		b1[i] = i%3 == 0
	}
	return []npyTestFile{
		{"f8_c.npy", Float64, []int{3, 4}, seq(12, func(i int) float64 { return float64(i)/4 - 1 }), true},
		{"f4.npy", Float32, []int{2, 3}, f4, true},
		{"i8.npy", Int64, []int{8}, ints(8, func(i int) int64 { return int64(i-4) * p35 }), true},
		{"b1.npy", Bool, []int{7}, b1, true},
		{"f8_fortran.npy", Float64, []int{3, 5}, seq(15, func(i int) float64 { return float64(i) }), false},
		{"i4_fortran_3d.npy", Int64, []int{2, 3, 4}, ints(24, func(i int) int64 { return int64(i) }), false},
		{"i8_3d.npy", Int64, []int{2, 3, 4}, ints(24, func(i int) int64 { return int64(i) }), true},
		{"f8_0d.npy", Float64, []int{}, []float64{2.5}, true},
		{"f8_1d.npy", Float64, []int{5}, seq(5, func(i int) float64 { return float64(i) / 4 }), true},
		{"f8_be.npy", Float64, []int{2, 3}, seq(6, func(i int) float64 { return float64(i) * 1.5 }), false},
		{"i4_be.npy", Int64, []int{6}, ints(6, func(i int) int64 { return int64(i - 3) }), false},
		{"u1.npy", Int64, []int{6}, ints(6, func(i int) int64 { return int64(250 + i) }), false},
		{"f8_empty.npy", Float64, []int{0, 3}, []float64{}, true},
	}
}

// checkValues checks that d holds exactly want.
func checkValues(t *testing.T, d *Dense, want any) {
	t.Helper()
	var ok bool
	var got any
	switch w := want.(type) {
	case []float64:
		g, err := Values[float64](d)
		if err != nil {
			t.Fatal(err)
		}
		got, ok = g, slices.Equal(g, w)
	case []float32:
		g, err := Values[float32](d)
		if err != nil {
			t.Fatal(err)
		}
		got, ok = g, slices.Equal(g, w)
	case []int64:
		g, err := Values[int64](d)
		if err != nil {
			t.Fatal(err)
		}
		got, ok = g, slices.Equal(g, w)
	case []bool:
		g, err := Values[bool](d)
		if err != nil {
			t.Fatal(err)
		}
		got, ok = g, slices.Equal(g, w)
	}
	if !ok {
		t.Fatalf("values %v, want %v", got, want)
	}
}

// fromValues makes an array of the values of want with shape.
func fromValues(want any, shape []int, opts ...Option) Array {
	switch w := want.(type) {
	case []float64:
		return FromSlice(w, shape, opts...)
	case []float32:
		return FromSlice(w, shape, opts...)
	case []int64:
		return FromSlice(w, shape, opts...)
	case []bool:
		return FromSlice(w, shape, opts...)
	}
	return errorf("values of type %T", want)
}

func TestNPYWrittenByNumPy(t *testing.T) {
	for _, tt := range numpyFiles() {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", "npy", tt.file)
			// Chunks of 2 along every axis: every chunk is read by its own
			// task, from its own runs of the file.
			for _, opts := range [][]Option{nil, {Chunks(2)}} {
				a := ReadNPY(path, opts...)
				if err := a.Err(); err != nil {
					t.Fatal(err)
				}
				if a.DType() != tt.dtype || !slices.Equal(a.Shape(), tt.shape) {
					t.Fatalf("%s with shape %v, want %s with shape %v", a.DType(), a.Shape(), tt.dtype, tt.shape)
				}
				d := compute(t, a)
				if !slices.Equal(d.Shape(), tt.shape) {
					t.Fatalf("computed shape %v, want %v", d.Shape(), tt.shape)
				}
				checkValues(t, d, tt.want)
			}
		})
	}
}

// What WriteNPY writes is byte for byte what np.save wrote, for the dtypes
// and the order Shoal writes.
func TestNPYWriteMatchesNumPyFiles(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range numpyFiles() {
		if !tt.same {
			continue
		}
		t.Run(tt.file, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", "npy", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			a := fromValues(tt.want, tt.shape, Chunks(2))
			p := filepath.Join(dir, tt.file)
			if err := WriteNPY(ctxB, newExec(t), p, a); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("WriteNPY wrote\n%q\nnp.save wrote\n%q", got, want)
			}
		})
	}
}
