package ipc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/io/storage"
)

// memFS is a file system in memory.
type memFS struct {
	mu    sync.Mutex
	files map[string][]byte
}

type memFile struct{ *bytes.Reader }

func (memFile) Close() error { return nil }

type memWriter struct {
	bytes.Buffer
	fs   *memFS
	path string
}

func (w *memWriter) Close() error {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	w.fs.files[w.path] = w.Bytes()
	return nil
}

func newMemFS() *memFS { return &memFS{files: map[string][]byte{}} }

func (m *memFS) Open(_ context.Context, path string) (storage.File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[path]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	return memFile{bytes.NewReader(b)}, nil
}

func (m *memFS) Create(_ context.Context, path string) (io.WriteCloser, error) {
	return &memWriter{fs: m, path: path}, nil
}

func (m *memFS) Stat(_ context.Context, path string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[path]
	if !ok {
		return 0, &fs.PathError{Op: "stat", Path: path, Err: fs.ErrNotExist}
	}
	return int64(len(b)), nil
}

func (m *memFS) Glob(_ context.Context, pattern string) ([]string, error) {
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

func (m *memFS) Remove(_ context.Context, path string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.files, path)
	return nil
}

// FuzzRead checks that any bytes either read or fail with an error, and
// never panic or leak memory.
func FuzzRead(f *testing.F) {
	old := maxBuffer
	maxBuffer = 1 << 24
	f.Cleanup(func() { maxBuffer = old })

	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 8))
	mfs := newMemFS()
	for _, comp := range []string{"", "lz4", "zstd"} {
		for _, format := range []Format{FileFormat, StreamFormat} {
			recs := fuzzBatches(rng)
			write := WriteFile
			if format == StreamFormat {
				write = WriteStream
			}
			if err := write(ctx, mfs, "seed", recs, WriteOptions{Compression: comp}); err != nil {
				f.Fatal(err)
			}
			for _, r := range recs {
				r.Release()
			}
			f.Add(mfs.files["seed"])
		}
	}
	f.Add([]byte("ARROW1\x00\x00"))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 8, 0, 0, 0})

	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := newMemFS()
		fsys.files["x"] = data
		plan, err := PlanRead(ctx, fsys, []string{"x"}, Options{TargetBytes: 1})
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNotArrow) {
				t.Fatalf("PlanRead error %v is neither ErrCorrupt nor ErrNotArrow", err)
			}
			return
		}
		mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
		for i := range plan.Parts {
			rec, err := ReadPart(ctx, fsys, plan, i, mem)
			if err != nil {
				if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrSchemaMismatch) {
					t.Fatalf("ReadPart error %v is neither ErrCorrupt nor ErrSchemaMismatch", err)
				}
				continue
			}
			if rec.NumRows() < 10000 { // a column of the null type may be long and weigh nothing
				for _, c := range rec.Columns() {
					_ = c.String() // every value can be read
				}
			}
			rec.Release()
		}
		mem.AssertSize(t, 0)
	})
}

// fuzzBatches makes two small record batches with a dictionary column.
func fuzzBatches(rng *rand.Rand) []arrow.RecordBatch {
	var out []arrow.RecordBatch
	for b := 0; b < 2; b++ {
		var ids, names []any
		for i := 0; i < 5; i++ {
			ids = append(ids, rng.Int64N(100))
			names = append(names, []any{"a", "bb", nil}[rng.IntN(3)])
		}
		rec, err := dftestRecord(ids, names)
		if err != nil {
			panic(err)
		}
		out = append(out, rec)
	}
	return out
}
