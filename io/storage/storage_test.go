package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestLocalGlob(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a.csv", "b.csv", "c.txt", "sub/d.csv", "sub/deep/e.csv"} {
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte(p), 0o644)
	}
	ctx := context.Background()
	tests := []struct {
		pattern string
		want    []string
		err     error
	}{
		{"*.csv", []string{"a.csv", "b.csv"}, nil},
		{"**/*.csv", []string{"a.csv", "b.csv", "sub/d.csv", "sub/deep/e.csv"}, nil},
		{"sub/**/*.csv", []string{"sub/d.csv", "sub/deep/e.csv"}, nil},
		{"a.csv", []string{"a.csv"}, nil},
		{"*.parquet", nil, ErrNoMatch},
		{"missing.csv", nil, os.ErrNotExist},
	}
	for _, tc := range tests {
		got, err := Local{}.Glob(ctx, filepath.Join(dir, tc.pattern))
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("%s: error %v, want %v", tc.pattern, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.pattern, err)
		}
		for i := range got {
			got[i], _ = filepath.Rel(dir, got[i])
			got[i] = filepath.ToSlash(got[i])
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.pattern, got, tc.want)
		}
	}
	all, err := Expand(ctx, Local{}, filepath.Join(dir, "*.csv"), filepath.Join(dir, "a.csv"))
	if err != nil || len(all) != 2 {
		t.Errorf("Expand: %v %v", all, err)
	}
	if _, err := (Local{}).Glob(ctx, dir); err == nil {
		t.Errorf("a directory should be refused")
	}
}

func TestLocalFiles(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "x", "y.bin")
	w, err := Local{}.Create(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("hello"))
	w.Close()
	f, err := Local{}.Open(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 3)
	if _, err := f.ReadAt(buf, 2); err != nil || string(buf) != "llo" || f.Size() != 5 {
		t.Errorf("ReadAt: %q %v size %d", buf, err, f.Size())
	}
	if n, err := (Local{}).Stat(ctx, p); n != 5 || err != nil {
		t.Errorf("Stat %d %v", n, err)
	}
	if err := (Local{}).Remove(ctx, p); err != nil {
		t.Fatal(err)
	}
	if _, err := (Local{}).Open(ctx, p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("open removed: %v", err)
	}
}
