package parquet

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/io/storage"
)

// memFS is an in-memory file system for tests.
type memFS struct {
	mu    sync.Mutex
	files map[string][]byte
}

type memFile struct{ *bytes.Reader }

func (memFile) Close() error { return nil }

func (f memFile) Size() int64 { return f.Reader.Size() }

func (m *memFS) Open(ctx context.Context, path string) (storage.File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[path]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	return memFile{bytes.NewReader(b)}, nil
}

type memWriter struct {
	bytes.Buffer
	m    *memFS
	path string
}

func (w *memWriter) Close() error {
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	w.m.files[w.path] = w.Bytes()
	return nil
}

func (m *memFS) Create(ctx context.Context, path string) (io.WriteCloser, error) {
	return &memWriter{m: m, path: path}, nil
}

func (m *memFS) Stat(ctx context.Context, path string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[path]
	if !ok {
		return 0, fs.ErrNotExist
	}
	return int64(len(b)), nil
}

func (m *memFS) Glob(ctx context.Context, pattern string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for p := range m.files {
		if ok, _ := filepath.Match(pattern, p); ok {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, storage.ErrNoMatch
	}
	return out, nil
}

func (m *memFS) Remove(ctx context.Context, path string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.files, path)
	return nil
}

func smallRecord(t testing.TB, mem memory.Allocator, names ...string) arrow.RecordBatch {
	t.Helper()
	var fields []arrow.Field
	var arrays []arrow.Array
	for i, name := range names {
		b := array.NewInt64Builder(mem)
		b.AppendValues([]int64{int64(i), int64(i + 1), int64(i + 2)}, nil)
		arrays = append(arrays, b.NewArray())
		b.Release()
		fields = append(fields, arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), arrays, 3)
	for _, a := range arrays {
		a.Release()
	}
	return rec
}

func writeSmall(t testing.TB, path string, names ...string) {
	t.Helper()
	rec := smallRecord(t, memory.DefaultAllocator, names...)
	defer rec.Release()
	if err := Write(context.Background(), storage.Local{}, path, []arrow.RecordBatch{rec}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestPlanErrors(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	text := filepath.Join(dir, "notes.parquet")
	os.WriteFile(text, []byte("this is not a parquet file at all"), 0o644)
	empty := filepath.Join(dir, "empty.parquet")
	os.WriteFile(empty, nil, 0o644)
	good := filepath.Join(dir, "good.parquet")
	writeSmall(t, good, "a", "b")
	data, _ := os.ReadFile(good)
	truncated := filepath.Join(dir, "truncated.parquet")
	os.WriteFile(truncated, data[:len(data)-10], 0o644)
	badFooter := filepath.Join(dir, "badfooter.parquet")
	bad := bytes.Clone(data)
	copy(bad[len(bad)-8:], []byte{0xff, 0xff, 0xff, 0x7f})
	os.WriteFile(badFooter, bad, 0o644)
	other := filepath.Join(dir, "sub", "other.parquet")
	os.MkdirAll(filepath.Dir(other), 0o755)
	writeSmall(t, other, "a", "c")

	for _, tc := range []struct {
		name   string
		paths  []string
		opts   Options
		is     error
		as     any
		substr []string
	}{
		{"missing file", []string{filepath.Join(dir, "nope.parquet")}, Options{}, fs.ErrNotExist, nil, []string{"nope.parquet"}},
		{"no match", []string{filepath.Join(dir, "*.csv")}, Options{}, storage.ErrNoMatch, nil, []string{"*.csv"}},
		{"no path", nil, Options{}, nil, nil, []string{"no path"}},
		{"not parquet", []string{text}, Options{}, ErrNotParquet, nil, []string{"notes.parquet", "magic"}},
		{"empty", []string{empty}, Options{}, ErrNotParquet, nil, []string{"empty.parquet"}},
		{"truncated", []string{truncated}, Options{}, ErrCorrupt, nil, []string{"truncated.parquet"}},
		{"bad footer", []string{badFooter}, Options{}, ErrCorrupt, nil, []string{"badfooter.parquet", "footer"}},
		{"unknown column", []string{good}, Options{Columns: []string{"a", "zz"}}, nil, new(*ColumnError), []string{`"zz"`, "no such column", "a, b"}},
		{"unknown filter column", []string{good}, Options{Filter: []Bound{{"zz", "==", 1}}}, nil, new(*ColumnError), []string{`"zz"`, "a, b"}},
		{"twice", []string{good}, Options{Columns: []string{"a", "a"}}, nil, nil, []string{`"a"`, "twice"}},
		{"bad op", []string{good}, Options{Filter: []Bound{{"a", "~", 1}}}, nil, nil, []string{`"~"`}},
		{"bad value", []string{good}, Options{Filter: []Bound{{"a", "==", struct{}{}}}}, nil, nil, []string{"struct {}"}},
		{"value of wrong kind", []string{good}, Options{Filter: []Bound{{"a", "==", "x"}}}, nil, nil, []string{`"a"`, "int64", "string"}},
		{"schema mismatch", []string{good, other}, Options{}, nil, new(*SchemaMismatchError), []string{"good.parquet", "other.parquet", `"b"`}},
		{"nested", []string{"testdata/nested.parquet"}, Options{}, nil, new(*ColumnError), []string{"nested.parquet", `"l"`, "LIST", "Options.Columns"}},
		{"nested struct", []string{"testdata/nested.parquet"}, Options{Columns: []string{"st"}}, nil, new(*ColumnError), []string{`"st"`, "STRUCT"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := PlanRead(ctx, storage.Local{}, tc.paths, tc.opts)
			if err == nil {
				t.Fatal("no error")
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", err, tc.is)
			}
			if tc.as != nil && !errors.As(err, tc.as) {
				t.Errorf("error %q is not a %T", err, tc.as)
			}
			for _, s := range tc.substr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

func TestNestedProjection(t *testing.T) {
	got, _ := readAllParts(t, []string{"testdata/nested.parquet"}, Options{Columns: []string{"id"}})
	if !equalValues(got["id"], []any{int32(1)}) {
		t.Errorf("id = %v, want [1]", got["id"])
	}
}

func TestColumnOrderMayDiffer(t *testing.T) {
	dir := t.TempDir()
	writeSmall(t, filepath.Join(dir, "1.parquet"), "a", "b")
	writeSmall(t, filepath.Join(dir, "2.parquet"), "b", "a")
	got, plan := readAllParts(t, []string{filepath.Join(dir, "*.parquet")}, Options{})
	if plan.Schema.Field(0).Name != "a" {
		t.Fatalf("schema %s", plan.Schema)
	}
	// File 1 has a = 0,1,2, b = 1,2,3; file 2 has b = 0,1,2, a = 1,2,3.
	want := map[string][]any{
		"a": {int64(0), int64(1), int64(2), int64(1), int64(2), int64(3)},
		"b": {int64(1), int64(2), int64(3), int64(0), int64(1), int64(2)},
	}
	for k, w := range want {
		if !equalValues(got[k], w) {
			t.Errorf("%s = %v, want %v", k, got[k], w)
		}
	}
}

func TestReadPartErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "x.parquet")
	writeSmall(t, path, "a", "b")
	plan, err := PlanRead(ctx, storage.Local{}, []string{path}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPart(ctx, storage.Local{}, plan, 5, nil); err == nil || !strings.Contains(err.Error(), "part 5") {
		t.Errorf("part out of range: %v", err)
	}
	if _, err := ReadPart(ctx, storage.Local{}, &Plan{}, 0, nil); err == nil {
		t.Error("empty plan: no error")
	}
	// The file changes between planning and reading.
	writeSmall(t, path, "a", "c")
	_, err = ReadPart(ctx, storage.Local{}, plan, 0, nil)
	var ce *ColumnError
	if !errors.As(err, &ce) || ce.Column != "b" || !strings.Contains(err.Error(), "changed") {
		t.Errorf("changed file: %v", err)
	}
	os.Remove(path)
	if _, err = ReadPart(ctx, storage.Local{}, plan, 0, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("removed file: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := PlanRead(cancelled, storage.Local{}, []string{"testdata/enc.parquet"}, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled plan: %v", err)
	}
}

func TestWriteErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rec := smallRecord(t, mem, "a", "b")
	defer rec.Release()

	lb := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int64)
	lb.Append(true)
	list := lb.NewArray()
	lb.Release()
	defer list.Release()
	listRec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "l", Type: list.DataType(), Nullable: true}}, nil), []arrow.Array{list}, 1)
	defer listRec.Release()

	nb := array.NewInt64Builder(mem)
	nb.AppendNull()
	nulls := nb.NewArray()
	nb.Release()
	defer nulls.Release()
	nullRec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "req", Type: arrow.PrimitiveTypes.Int64}}, nil), []arrow.Array{nulls}, 1)
	defer nullRec.Release()

	for _, tc := range []struct {
		name   string
		recs   []arrow.RecordBatch
		opts   WriteOptions
		substr []string
	}{
		{"compression", []arrow.RecordBatch{rec}, WriteOptions{Compression: "lzma"}, []string{`"lzma"`}},
		{"no records", nil, WriteOptions{}, []string{"no records"}},
		{"list", []arrow.RecordBatch{listRec}, WriteOptions{}, []string{`"l"`, "unsupported type list"}},
		{"nulls in required column", []arrow.RecordBatch{nullRec}, WriteOptions{}, []string{`"req"`, "nulls"}},
		{"schemas differ", []arrow.RecordBatch{rec, nullRec}, WriteOptions{}, []string{"schema"}},
		{"partition on", []arrow.RecordBatch{rec}, WriteOptions{PartitionOn: []string{"a"}}, []string{"WritePartitioned"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Write(ctx, storage.Local{}, filepath.Join(dir, "out.parquet"), tc.recs, tc.opts)
			if err == nil {
				t.Fatal("no error")
			}
			for _, s := range tc.substr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
	_, err := WritePartitioned(ctx, storage.Local{}, dir, "p.parquet", []arrow.RecordBatch{rec}, WriteOptions{PartitionOn: []string{"zz"}})
	var ce *ColumnError
	if !errors.As(err, &ce) || ce.Column != "zz" {
		t.Errorf("partition on unknown column: %v", err)
	}
}

// corruptions returns seeded random damages of a file: bytes flipped,
// ranges zeroed or the file cut short.
func corruptions(data []byte, n int, seed uint64) [][]byte {
	rng := rand.New(rand.NewPCG(seed, 5))
	var out [][]byte
	for range n {
		b := bytes.Clone(data)
		switch rng.IntN(4) {
		case 0:
			for range 1 + rng.IntN(4) {
				b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
			}
		case 1:
			i := rng.IntN(len(b))
			clear(b[i:min(len(b), i+1+rng.IntN(64))])
		case 2:
			// Damage the footer, keeping the magic bytes.
			end := len(b) - 8
			b[end-1-rng.IntN(min(end, 200))] ^= byte(1 + rng.IntN(255))
		default:
			b = b[:rng.IntN(len(b))]
		}
		out = append(out, b)
	}
	return out
}

// readCorrupt plans and reads a damaged file; it fails the test when the
// reader panics or an error does not name the file.
func readCorrupt(t testing.TB, data []byte) {
	ctx := context.Background()
	fsys := &memFS{files: map[string][]byte{"damaged.parquet": data}}
	check := func(err error) {
		if err != nil && !strings.Contains(err.Error(), "damaged.parquet") {
			t.Fatalf("error does not name the file: %v", err)
		}
	}
	// A filter on the first column, to read statistics and page indexes.
	plan, err := PlanRead(ctx, fsys, []string{"damaged.parquet"}, Options{TargetBytes: -1, Filter: []Bound{{"i", ">=", 0}}})
	var ce *ColumnError
	if errors.As(err, &ce) && ce.Column == "i" {
		plan, err = PlanRead(ctx, fsys, []string{"damaged.parquet"}, Options{TargetBytes: -1, Filter: []Bound{{"i64", ">=", 0}}})
	}
	if errors.As(err, &ce) && ce.Column == "i64" {
		plan, err = PlanRead(ctx, fsys, []string{"damaged.parquet"}, Options{TargetBytes: -1})
	}
	check(err)
	if err != nil {
		return
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	for i := range plan.Parts {
		rec, err := ReadPart(ctx, fsys, plan, i, mem)
		check(err)
		if err == nil {
			rec.Release()
		}
	}
	mem.AssertSize(t, 0)
}

func corruptSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	for _, f := range []string{"testdata/enc.parquet", "testdata/types_v2.parquet"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	// A file of ours, with a page index.
	mem := memory.NewGoAllocator()
	rec := rtRecord(mem, 9, 50)
	defer rec.Release()
	fsys := &memFS{files: map[string][]byte{}}
	if err := Write(context.Background(), fsys, "ours.parquet", []arrow.RecordBatch{rec}, WriteOptions{RowGroupRows: 20}); err != nil {
		t.Fatal(err)
	}
	return append(seeds, fsys.files["ours.parquet"])
}

func TestCorruptFiles(t *testing.T) {
	for i, seed := range corruptSeeds(t) {
		for j, b := range corruptions(seed, 150, uint64(i)) {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("seed %d damage %d: panic: %v", i, j, r)
					}
				}()
				readCorrupt(t, b)
			}()
		}
	}
}

func FuzzReadCorrupt(f *testing.F) {
	for _, seed := range corruptSeeds(f) {
		f.Add(seed)
		for _, b := range corruptions(seed, 5, 1) {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		readCorrupt(t, data)
	})
}
