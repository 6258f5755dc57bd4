package array

import (
	"slices"
	"testing"
)

// FuzzDecodeChunk decodes arbitrary bytes as a chunk, as workers get
// chunks from each other and from clients: an error, or a chunk whose
// elements fill its shape and that encodes to bytes decoding to the same
// chunk.
func FuzzDecodeChunk(f *testing.F) {
	for _, d := range []*Dense{
		must(NewDense([]float64{1, 2, 3, 4, 5, 6}, 2, 3)),
		must(NewDense([]int64{7}, 1)),
		must(NewDense([]float32{}, 0, 4)),
		must(NewDense([]bool{true, false, true}, 3)),
	} {
		b, err := encodeDense(d)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := decodeDense(b)
		if err != nil {
			return
		}
		n := 1
		for _, s := range d.Shape() {
			n *= s
		}
		if d.Size() != n {
			t.Fatalf("a chunk of shape %v holds %d elements", d.Shape(), d.Size())
		}
		e, err := encodeDense(d)
		if err != nil {
			t.Fatalf("a chunk decoded does not encode: %v", err)
		}
		back, err := decodeDense(e)
		if err != nil {
			t.Fatalf("a chunk encoded does not decode: %v", err)
		}
		if back.DType() != d.DType() || !slices.Equal(back.Shape(), d.Shape()) || back.String() != d.String() {
			t.Fatalf("encoded and decoded, %v became %v", d, back)
		}
	})
}
