package array

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// npyFile builds a .npy file as NumPy writes it.
func npyFile(version byte, dict string, data []byte) []byte {
	pre := 10
	if version > 1 {
		pre = 12
	}
	total := (pre + len(dict) + 1 + 63) / 64 * 64
	hlen := total - pre
	dict += strings.Repeat(" ", hlen-len(dict)-1) + "\n"
	b := append([]byte("\x93NUMPY"), version, 0)
	if version == 1 {
		b = binary.LittleEndian.AppendUint16(b, uint16(hlen))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(hlen))
	}
	return append(append(b, dict...), data...)
}

func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The header Shoal writes is byte for byte NumPy's, for
// np.save("x.npy", np.arange(6.0).reshape(2, 3)).
func TestNPYHeaderMatchesNumPy(t *testing.T) {
	want := "\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }" + strings.Repeat(" ", 58) + "\n"
	if got := string(npyHeaderBytes(Float64, []int{2, 3})); got != want {
		t.Fatalf("header\n%q\nwant\n%q", got, want)
	}
	if got := string(npyHeaderBytes(Bool, []int{4})); !strings.Contains(got, "'descr': '|b1'") || !strings.Contains(got, "'shape': (4,)") {
		t.Fatalf("1-D bool header %q", got)
	}
	if got := npyHeaderBytes(Int64, nil); len(got)%64 != 0 || !bytes.Contains(got, []byte("'shape': ()")) {
		t.Fatalf("scalar header %q", got)
	}
}

func TestNPYRoundTrip(t *testing.T) {
	dir := t.TempDir()
	exec := newExec(t)
	arrays := []Array{
		Arange(0, 60, 1, Chunks(7)).Reshape(3, 4, 5).Rechunk(Chunks(2, 3, 2)),
		Arange(0, 10, 1, WithDType(Int64), Chunks(3)).Sub(5),
		Uniform(1, []int{6, 7}, 0, 1, WithDType(Float32), Chunks(4, 3)),
		Arange(0, 9, 1, Chunks(4)).Mod(2).Eq(0),
		Full(nil, 3.5),
		Zeros([]int{0, 4}),
	}
	for i, a := range arrays {
		want := compute(t, a)
		p := filepath.Join(dir, "a.npy")
		if err := WriteNPY(ctxB, exec, p, a); err != nil {
			t.Fatalf("array %d: %v", i, err)
		}
		back := ReadNPY(p, Chunks(2))
		if err := back.Err(); err != nil {
			t.Fatalf("array %d: %v", i, err)
		}
		got := compute(t, back)
		if got.DType() != want.DType() {
			t.Fatalf("array %d: dtype %v, want %v", i, got.DType(), want.DType())
		}
		assertClose(t, got, want.Shape(), want.Float64s(), 0)
		if a.NDim() > 0 && a.Size() > 0 {
			paths, err := WriteNPYStack(ctxB, exec, filepath.Join(dir, "stack"+string(rune('a'+i))), a, 0)
			if err != nil {
				t.Fatalf("array %d: %v", i, err)
			}
			if len(paths) != len(a.Chunks()[0]) {
				t.Fatalf("array %d: %d files for %d chunks", i, len(paths), len(a.Chunks()[0]))
			}
			st := ReadNPYStack(paths, 0)
			assertClose(t, compute(t, st), want.Shape(), want.Float64s(), 0)
		}
	}
}

// Files as NumPy writes them: Fortran order, big-endian, small integers,
// bools, format 2.0.
func TestNPYRead(t *testing.T) {
	le := func(vals ...int32) []byte {
		var b []byte
		for _, v := range vals {
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		}
		return b
	}
	be := func(vals ...float32) []byte {
		var b []byte
		for _, v := range vals {
			b = binary.BigEndian.AppendUint32(b, math.Float32bits(v))
		}
		return b
	}
	tests := []struct {
		name  string
		file  []byte
		dtype DType
		shape []int
		want  []float64
	}{
		// np.asfortranarray(np.arange(6, dtype=np.int32).reshape(2, 3)):
		// memory order 0 3 1 4 2 5.
		{"fortran int32", npyFile(1, "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", le(0, 3, 1, 4, 2, 5)),
			Int64, []int{2, 3}, []float64{0, 1, 2, 3, 4, 5}},
		{"big-endian float32", npyFile(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (3,), }", be(1.5, -2, 4)),
			Float32, []int{3}, []float64{1.5, -2, 4}},
		{"bool", npyFile(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2, 2), }", []byte{1, 0, 0, 1}),
			Bool, []int{2, 2}, []float64{1, 0, 0, 1}},
		{"uint8", npyFile(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", []byte{255, 0, 7}),
			Int64, []int{3}, []float64{255, 0, 7}},
		{"int16", npyFile(1, "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }", []byte{0xff, 0xff, 2, 0}),
			Int64, []int{2}, []float64{-1, 2}},
		{"version 2", npyFile(2, "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", le(7, 8)),
			Int64, []int{2}, []float64{7, 8}},
		{"scalar", npyFile(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (), }", le(42)),
			Int64, []int{}, []float64{42}},
		{"key order", npyFile(1, "{'shape': (1,), 'fortran_order': False, 'descr': '<i4'}", le(5)),
			Int64, []int{1}, []float64{5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, "x.npy", tt.file)
			a := ReadNPY(p, Chunks(1))
			if err := a.Err(); err != nil {
				t.Fatal(err)
			}
			got := compute(t, a)
			if got.DType() != tt.dtype {
				t.Fatalf("dtype %v, want %v", got.DType(), tt.dtype)
			}
			assertClose(t, got, tt.shape, tt.want, 0)
		})
	}
}

// Corrupt files are errors naming the file and what is wrong, at once.
func TestNPYErrors(t *testing.T) {
	good := "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }"
	data := make([]byte, 16)
	tests := []struct {
		name  string
		file  []byte
		parts []string
	}{
		{"magic", append([]byte("\x93NUMPX\x01\x00"), make([]byte, 80)...), []string{"magic"}},
		{"short", []byte("\x93NU"), []string{"too short"}},
		{"version", npyFile(9, good, data), []string{"version 9.0"}},
		{"truncated data", npyFile(1, good, data[:9]), []string{"9 bytes of data", "16", "truncated"}},
		{"truncated header", npyFile(1, good, nil)[:40], []string{"truncated"}},
		{"not a dict", npyFile(1, "['descr']", data), []string{"not a dict"}},
		{"missing key", npyFile(1, "{'descr': '<f8', 'shape': (2,), }", data), []string{"fortran_order", "missing"}},
		{"unknown key", npyFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'x': 1}", data), []string{"unknown key \"x\""}},
		{"dtype", npyFile(1, "{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }", data), []string{"<c16", "not supported"}},
		{"uint64", npyFile(1, "{'descr': '<u8', 'fortran_order': False, 'shape': (1,), }", data), []string{"<u8"}},
		{"shape", npyFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, x), }", data), []string{"length \"x\""}},
		{"fortran", npyFile(1, "{'descr': '<f8', 'fortran_order': Maybe, 'shape': (2,), }", data), []string{"fortran_order"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, "bad.npy", tt.file)
			err := ReadNPY(p).Err()
			mustErr(t, err, append(tt.parts, p)...)
			var ne *NPYError
			if !errors.As(err, &ne) || ne.Path != p {
				t.Fatalf("error %v is not an *NPYError for %s", err, p)
			}
		})
	}
	mustErr(t, ReadNPY(filepath.Join(t.TempDir(), "missing.npy")).Err(), "missing.npy", "no such file")
	p := writeFile(t, "a.npy", npyFile(1, good, data))
	q := writeFile(t, "b.npy", npyFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", make([]byte, 32)))
	mustErr(t, ReadNPYStack([]string{p, q}, 0).Err(), "ReadNPYStack", "dimensions")
	mustErr(t, WriteNPY(ctxB, newExec(t), filepath.Join(t.TempDir(), "no", "such", "dir.npy"), Zeros([]int{2})), "no such file")
	if !slices.Equal(reversed([]int{1, 2, 3}), []int{3, 2, 1}) {
		t.Fatal("reversed")
	}
}

// A file removed after ReadNPY read its header is an error at Compute that
// names it; ReadNPY itself takes the file's identity (size, time) from the
// file it opened, not from the path a moment later, where another file or
// none may be (it dereferenced a nil FileInfo then).
func TestNPYFileGoneAfterHeader(t *testing.T) {
	good := "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }"
	b := npyFile(1, good, make([]byte, 16))
	p := writeFile(t, "gone.npy", b)
	_, _, st, err := readNPYHeader(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if st == nil || st.Size() != int64(len(b)) {
		t.Fatalf("FileInfo %v, want the opened file's (%d bytes)", st, len(b))
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	a := ReadNPY(p)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	_, err = a.Compute(ctxB, newExec(t))
	mustErr(t, err, p, "no such file")
}

// Whatever the bytes, reading a .npy file gives an array or an
// *NPYError, never a panic; a file whose header parses reads back with the
// shape the header gives. The seeds are headers as NumPy writes them;
// go test -fuzz FuzzReadNPY explores from there.
func FuzzReadNPY(f *testing.F) {
	f.Add(npyFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", make([]byte, 48)))
	f.Add(npyFile(1, "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 2), }", make([]byte, 16)))
	f.Add(npyFile(2, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", []byte{1, 0, 1}))
	f.Add(npyFile(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (), }", make([]byte, 4)))
	f.Add(npyFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (9223372036854775807, 2), }", nil))
	f.Add([]byte("\x93NUMPY\x01\x00\xff\xff{"))
	dir := f.TempDir()
	// One executor for every input: starting one (its profiler among the
	// rest) took longer than reading the file.
	e := newExec(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "fuzz.npy")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		a := ReadNPY(p, Chunks(2))
		if err := a.Err(); err != nil {
			var ne *NPYError
			if !errors.As(err, &ne) {
				t.Fatalf("error %v is not an *NPYError", err)
			}
			return
		}
		if a.Size() > 1<<16 {
			return // big enough to need the data, which the file has
		}
		d, err := a.Compute(ctxB, e)
		if err != nil {
			t.Fatalf("header parsed but reading failed: %v", err)
		}
		if !slices.Equal(d.Shape(), a.Shape()) {
			t.Fatalf("shape %v, header says %v", d.Shape(), a.Shape())
		}
	})
}
