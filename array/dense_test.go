package array

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/shoal-data/shoal/graph"
)

func TestNewDense(t *testing.T) {
	d, err := NewDense([]int64{1, 2, 3, 4, 5, 6}, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if d.DType() != Int64 || !slices.Equal(d.Shape(), []int{2, 3}) || !slices.Equal(d.Strides(), []int{3, 1}) || d.Size() != 6 {
		t.Fatalf("got %v %v %v", d.DType(), d.Shape(), d.Strides())
	}
	if v, err := d.At(1, -1); err != nil || v != 6 {
		t.Fatalf("At(1, -1) = %v, %v", v, err)
	}
	tests := []struct {
		name  string
		err   error
		parts []string
	}{
		{"size", func() error { _, err := NewDense([]float64{1, 2, 3}, 2, 2); return err }(), []string{"shape [2 2]", "4 elements", "3"}},
		{"negative", func() error { _, err := NewDense([]float64{}, 2, -1); return err }(), []string{"negative", "axis 1"}},
		{"at range", func() error { _, err := d.At(2, 0); return err }(), []string{"index 2", "axis 0", "size 2"}},
		{"at arity", func() error { _, err := d.At(1); return err }(), []string{"1 values", "2 dimensions"}},
		{"at scalar", func() error { _, err := d.At(); return err }(), []string{"size 1"}},
		{"values type", func() error { _, err := Values[float64](d); return err }(), []string{"float64", "int64"}},
		{"mat 1-D", func() error { e, _ := NewDense([]float64{1}, 1); _, err := e.Mat(); return err }(), []string{"2-D"}},
		{"perm", func() error { _, err := d.Transpose(0, 0); return err }(), []string{"permutation"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { mustErr(t, tt.err, tt.parts...) })
	}
}

func TestDenseViewsAndConversions(t *testing.T) {
	d, _ := NewDense([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	tr := d.T()
	if !slices.Equal(tr.Shape(), []int{3, 2}) || !slices.Equal(tr.Strides(), []int{1, 3}) {
		t.Fatalf("T: shape %v strides %v", tr.Shape(), tr.Strides())
	}
	if got := tr.Float64s(); !slices.Equal(got, []float64{1, 4, 2, 5, 3, 6}) {
		t.Fatalf("T values %v", got)
	}
	if got := tr.String(); got != "[[1 4]\n [2 5]\n [3 6]]" {
		t.Fatalf("String %q", got)
	}
	m, err := tr.Mat()
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(m, mat.NewDense(3, 2, []float64{1, 4, 2, 5, 3, 6})) {
		t.Fatalf("Mat %v", mat.Formatted(m))
	}
	back := DenseFromMat(m.T())
	if !slices.Equal(back.Float64s(), []float64{1, 2, 3, 4, 5, 6}) {
		t.Fatalf("DenseFromMat %v", back)
	}
	v, _ := Values[float64](tr.Copy())
	if !slices.Equal(v, []float64{1, 4, 2, 5, 3, 6}) {
		t.Fatalf("Values of copy %v", v)
	}
	b, _ := NewDense([]bool{true, false}, 2)
	if b.Float64s()[0] != 1 || b.String() != "[true false]" {
		t.Fatalf("bool %v", b)
	}
}

// The chunk codec writes Arrow IPC and reads back the same chunk, for
// every dtype and for views.
func TestChunkCodec(t *testing.T) {
	f64, _ := NewDense([]float64{1.5, math.NaN(), math.Inf(-1), 0, -2, 3}, 2, 3)
	f32, _ := NewDense([]float32{1.5, 2, 3}, 3)
	i64, _ := NewDense([]int64{math.MinInt64, 0, math.MaxInt64, 7}, 2, 1, 2)
	bl, _ := NewDense([]bool{true, false, true}, 3)
	sc, _ := NewDense([]float64{42})
	empty, _ := NewDense([]float64{}, 0, 3)
	reg := graph.Default()
	for _, d := range []*Dense{f64, f64.T(), f32, i64, bl, sc, empty} {
		b, err := reg.MarshalValue(d)
		if err != nil {
			t.Fatal(err)
		}
		v, err := reg.UnmarshalValue(b)
		if err != nil {
			t.Fatal(err)
		}
		got := v.(*Dense)
		if got.DType() != d.DType() || !slices.Equal(got.Shape(), d.Shape()) {
			t.Fatalf("%v: got %v %v", d, got.DType(), got.Shape())
		}
		g, w := got.Float64s(), d.Float64s()
		for i := range w {
			if !closeTo(g[i], w[i], 0) {
				t.Fatalf("%v: element %d is %v, want %v", d, i, g[i], w[i])
			}
		}
		if graph.SizeOf(d) < int64(d.Size()*d.DType().Size()) {
			t.Fatalf("SizeOf %d for %d elements", graph.SizeOf(d), d.Size())
		}
	}
	if _, err := decodeDense([]byte("not arrow")); err == nil {
		t.Fatal("corrupt chunk decoded")
	}
	list := chunkListCodec()
	b, err := list.Encode([]*Dense{f32, bl})
	if err != nil {
		t.Fatal(err)
	}
	v, err := list.Decode(b)
	if err != nil || len(v.([]*Dense)) != 2 {
		t.Fatalf("list: %v %v", v, err)
	}
	if _, err := list.Decode(b[:len(b)-3]); err == nil {
		t.Fatal("truncated list decoded")
	}
}

func TestDType(t *testing.T) {
	for _, d := range []DType{Float64, Float32, Int64, Bool} {
		p, err := ParseDType(d.String())
		if err != nil || p != d {
			t.Fatalf("%v: %v %v", d, p, err)
		}
	}
	if _, err := ParseDType("complex128"); err == nil {
		t.Fatal("parsed complex128")
	}
	tests := []struct{ a, b, want DType }{
		{Float64, Float32, Float64}, {Float32, Float32, Float32}, {Float32, Int64, Float64},
		{Int64, Bool, Int64}, {Bool, Bool, Bool}, {Float32, Bool, Float32},
	}
	for _, tt := range tests {
		if got := promote(tt.a, tt.b); got != tt.want {
			t.Errorf("promote(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := promote(tt.b, tt.a); got != tt.want {
			t.Errorf("promote(%v, %v) = %v, want %v", tt.b, tt.a, got, tt.want)
		}
	}
}
