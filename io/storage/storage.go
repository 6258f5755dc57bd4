// Package storage is the small file-system interface that Shoal's readers
// and writers go through, so that object stores can be added without
// touching them. Local is the local disk.
package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// File is an open file: readable sequentially and at offsets.
type File interface {
	io.Reader
	io.ReaderAt
	io.Closer
	// Size returns the file's length in bytes.
	Size() int64
}

// FS is a file system. Paths are slash- or OS-separated strings as the
// implementation understands them.
type FS interface {
	// Open opens a file for reading.
	Open(ctx context.Context, path string) (File, error)
	// Create creates or truncates a file for writing, making its parent
	// directories.
	Create(ctx context.Context, path string) (io.WriteCloser, error)
	// Stat returns the size of a file.
	Stat(ctx context.Context, path string) (size int64, err error)
	// Glob returns the paths matching a pattern, sorted. "**" matches any
	// number of directories.
	Glob(ctx context.Context, pattern string) ([]string, error)
	// Remove deletes a file.
	Remove(ctx context.Context, path string) error
}

// ErrNoMatch is returned (wrapped) when a pattern matches no file.
var ErrNoMatch = errors.New("no file matches")

// Local is the local file system.
type Local struct{}

type localFile struct {
	*os.File
	size int64
}

func (f *localFile) Size() int64 { return f.size }

// Open opens a local file.
func (Local) Open(ctx context.Context, path string) (File, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("open %s: is a directory", path)
	}
	return &localFile{File: f, size: st.Size()}, nil
}

// Create creates a local file and its parent directories.
func (Local) Create(ctx context.Context, path string) (io.WriteCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	return os.Create(path)
}

// Stat returns a local file's size.
func (Local) Stat(ctx context.Context, path string) (int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// Remove deletes a local file.
func (Local) Remove(ctx context.Context, path string) error { return os.Remove(path) }

// Glob returns the local files matching pattern, sorted, directories
// excluded. Besides filepath.Match syntax, "**" matches any number of
// directories. A pattern without wildcards names one file, which must exist.
func (Local) Glob(ctx context.Context, pattern string) ([]string, error) {
	if !hasMeta(pattern) {
		st, err := os.Stat(pattern)
		if err != nil {
			return nil, err
		}
		if st.IsDir() {
			return nil, fmt.Errorf("%s is a directory; use a pattern such as %s", pattern, filepath.Join(pattern, "*"))
		}
		return []string{pattern}, nil
	}
	var out []string
	if strings.Contains(pattern, "**") {
		root := pattern[:strings.Index(pattern, "**")]
		root = filepath.Dir(root + "x")
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if !d.IsDir() && matchDoubleStar(pattern, p) {
				out = append(out, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	} else {
		ms, err := filepath.Glob(pattern)
		if err != nil {
			return nil, fmt.Errorf("bad pattern %q: %w", pattern, err)
		}
		for _, m := range ms {
			if st, err := os.Stat(m); err == nil && !st.IsDir() {
				out = append(out, m)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w %q", ErrNoMatch, pattern)
	}
	slices.Sort(out)
	return out, nil
}

func hasMeta(p string) bool { return strings.ContainsAny(p, "*?[") }

// matchDoubleStar matches a path against a pattern where "**" stands for
// any number of path elements.
func matchDoubleStar(pattern, path string) bool {
	pp := strings.Split(filepath.ToSlash(pattern), "/")
	sp := strings.Split(filepath.ToSlash(path), "/")
	var match func(i, j int) bool
	match = func(i, j int) bool {
		for i < len(pp) {
			if pp[i] == "**" {
				for k := j; k <= len(sp); k++ {
					if match(i+1, k) {
						return true
					}
				}
				return false
			}
			if j >= len(sp) {
				return false
			}
			if ok, _ := filepath.Match(pp[i], sp[j]); !ok {
				return false
			}
			i++
			j++
		}
		return j == len(sp)
	}
	return match(0, 0)
}

// Expand turns a list of paths and patterns into the files they name, in
// order, each once. A pattern matching nothing is an error wrapping
// ErrNoMatch.
func Expand(ctx context.Context, fsys FS, patterns ...string) ([]string, error) {
	if len(patterns) == 0 {
		return nil, errors.New("no path given")
	}
	seen := map[string]bool{}
	var out []string
	for _, p := range patterns {
		ms, err := fsys.Glob(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			if !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	return out, nil
}
