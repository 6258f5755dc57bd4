package csv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/io/storage"
)

// memFS is an in-memory storage.FS for tests.
type memFS struct {
	mu    sync.Mutex
	files map[string][]byte
}

func newMemFS(files map[string]string) *memFS {
	m := &memFS{files: map[string][]byte{}}
	for k, v := range files {
		m.files[k] = []byte(v)
	}
	return m
}

type memFile struct {
	*bytes.Reader
}

func (memFile) Close() error { return nil }

func (m *memFS) Open(ctx context.Context, p string) (storage.File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[p]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
	return memFile{bytes.NewReader(b)}, nil
}

type memWriter struct {
	bytes.Buffer
	m *memFS
	p string
}

func (w *memWriter) Close() error {
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	w.m.files[w.p] = w.Bytes()
	return nil
}

func (m *memFS) Create(ctx context.Context, p string) (io.WriteCloser, error) {
	return &memWriter{m: m, p: p}, nil
}

func (m *memFS) Stat(ctx context.Context, p string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[p]
	if !ok {
		return 0, &fs.PathError{Op: "stat", Path: p, Err: fs.ErrNotExist}
	}
	return int64(len(b)), nil
}

func (m *memFS) Glob(ctx context.Context, pattern string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !strings.ContainsAny(pattern, "*?[") {
		if _, ok := m.files[pattern]; !ok {
			return nil, &fs.PathError{Op: "stat", Path: pattern, Err: fs.ErrNotExist}
		}
		return []string{pattern}, nil
	}
	var out []string
	for k := range m.files {
		if ok, _ := path.Match(pattern, k); ok {
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w %q", storage.ErrNoMatch, pattern)
	}
	slices.Sort(out)
	return out, nil
}

func (m *memFS) Remove(ctx context.Context, p string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.files, p)
	return nil
}

// schemaString renders a schema as "name:type,name:type".
func schemaString(s *arrow.Schema) string {
	var parts []string
	for _, f := range s.Fields() {
		parts = append(parts, f.Name+":"+f.Type.String())
	}
	return strings.Join(parts, ",")
}

// recordRows renders a record's rows as "v|v|v" with nulls as "<null>".
func recordRows(rec arrow.RecordBatch) []string {
	var rows []string
	for i := 0; i < int(rec.NumRows()); i++ {
		var vals []string
		for _, col := range rec.Columns() {
			if col.IsNull(i) {
				vals = append(vals, "<null>")
			} else {
				vals = append(vals, col.ValueStr(i))
			}
		}
		rows = append(rows, strings.Join(vals, "|"))
	}
	return rows
}

// readFS plans and reads every block in order, returning the schema of
// the records, their rows and the bad rows.
func readFS(fsys storage.FS, paths []string, opts Options, ro ReadOptions) (*Plan, string, []string, []BadRow, error) {
	ctx := context.Background()
	plan, err := PlanRead(ctx, fsys, paths, opts)
	if err != nil {
		return nil, "", nil, nil, err
	}
	var rows []string
	var bad []BadRow
	schema := ""
	for i := range plan.Blocks {
		rec, b, err := ReadBlock(ctx, fsys, plan, i, ro)
		if err != nil {
			return plan, "", nil, nil, err
		}
		if schema == "" {
			schema = schemaString(rec.Schema())
		} else if s := schemaString(rec.Schema()); s != schema {
			rec.Release()
			return plan, "", nil, nil, fmt.Errorf("block %d has schema %s, block 0 %s", i, s, schema)
		}
		rows = append(rows, recordRows(rec)...)
		bad = append(bad, b...)
		rec.Release()
	}
	return plan, schema, rows, bad, nil
}

func errorContains(err error, wants ...string) error {
	if err == nil {
		return errors.New("no error")
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			return fmt.Errorf("error %q does not contain %q", err, w)
		}
	}
	return nil
}
