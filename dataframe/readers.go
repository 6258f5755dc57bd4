package dataframe

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/expr"
	"github.com/shoal-data/shoal/graph"
)

// reader is the planning side of a file format: it knows the files'
// schema and splits them into partitions, each read by one task.
type reader interface {
	format() string
	schema() *arrow.Schema
	parts() int
	// describe names the files and options for Explain.
	describe() string
	// token identifies the files (paths, sizes) and options.
	token() string
	// prepare returns the reader for reading columns with a filter pushed
	// into it (some formats skip parts with it), and a note for Explain.
	prepare(columns []string, filter expr.Expr, hasFilter bool) (reader, string, error)
	// partParams encodes what reading part i needs.
	partParams(i int) ([]byte, error)
}

// readFunc reads one part: the task side of a file format. columns is the
// projection; filter, when not nil, is evaluated while reading.
type readFunc func(ctx context.Context, env *graph.Env, part []byte, columns []string, filter *expr.Expr,
	mem memory.Allocator) (arrow.RecordBatch, error)

// readFuncs holds the task side of every format, by format name.
var readFuncs = map[string]readFunc{}
