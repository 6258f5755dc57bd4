package parquet

import (
	"errors"
	"fmt"
	"strings"

	"github.com/shoal-data/shoal/graph"
)

var (
	// ErrNotParquet is returned (wrapped, with the file's name) when a file
	// does not start and end with Parquet's magic bytes.
	ErrNotParquet = errors.New("not a Parquet file")
	// ErrCorrupt is returned (wrapped, with the file's name and what could
	// not be decoded) when a Parquet file is truncated or damaged.
	ErrCorrupt = errors.New("corrupt Parquet file")
)

// ColumnError reports a column that cannot be read: one that no file has,
// or one whose type Shoal does not support. Use errors.As to get it.
type ColumnError struct {
	Path      string   // the file, when the problem is in one file
	Column    string   // the column as the caller or the file named it
	Problem   string   // what is wrong, e.g. "no such column" or "unsupported type LIST"
	Available []string // for an unknown column: the columns there are
}

func (e *ColumnError) Error() string {
	var b strings.Builder
	b.WriteString("parquet: ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	fmt.Fprintf(&b, "column %q: %s", e.Column, e.Problem)
	if len(e.Available) > 0 {
		fmt.Fprintf(&b, " (columns: %s)", strings.Join(e.Available, ", "))
	}
	return b.String()
}

// SchemaMismatchError reports two files of one read whose columns differ
// in name or type. Files whose columns differ only in order match.
type SchemaMismatchError struct {
	First, Other string // the two files
	Detail       string // how they differ
}

func (e *SchemaMismatchError) Error() string {
	return fmt.Sprintf("parquet: %s and %s have different schemas: %s", e.First, e.Other, e.Detail)
}

// fileError prefixes err with the file's name, once.
func fileError(path string, err error) error {
	if err == nil {
		return nil
	}
	var ce *ColumnError
	if errors.As(err, &ce) && ce.Path == path {
		return err
	}
	return fmt.Errorf("parquet: %s: %w", path, err)
}

// The errors of a read keep their type when they cross a process
// boundary (see graph.RegisterError).
func init() {
	graph.RegisterError[ColumnError]("parquet.ColumnError")
	graph.RegisterError[SchemaMismatchError]("parquet.SchemaMismatchError")
	graph.RegisterErrorValue("parquet.ErrNotParquet", ErrNotParquet)
	graph.RegisterErrorValue("parquet.ErrCorrupt", ErrCorrupt)
}
