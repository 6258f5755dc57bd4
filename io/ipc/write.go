package ipc

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/io/storage"
)

// WriteOptions control WriteFile and WriteStream.
type WriteOptions struct {
	// Compression of the data buffers: "" (none), "lz4" (LZ4 frame) or
	// "zstd" (Zstandard). Readers of Arrow 1.0 and later read all three.
	Compression string
	// Schema is the schema to write. It may be left nil when there is at
	// least one record batch, whose schema is then used; it is needed to
	// write a file without record batches.
	Schema *arrow.Schema
}

// WriteFile writes record batches to path in the random-access Arrow IPC
// file format (Feather version 2). All batches must have the same schema.
// On error, the partly written file is removed.
func WriteFile(ctx context.Context, fsys storage.FS, path string, recs []arrow.RecordBatch, opts WriteOptions) error {
	return write(ctx, fsys, path, recs, opts, FileFormat)
}

// WriteStream writes record batches to path in the Arrow IPC streaming
// format. All batches must have the same schema. On error, the partly
// written file is removed.
func WriteStream(ctx context.Context, fsys storage.FS, path string, recs []arrow.RecordBatch, opts WriteOptions) error {
	return write(ctx, fsys, path, recs, opts, StreamFormat)
}

func write(ctx context.Context, fsys storage.FS, path string, recs []arrow.RecordBatch, opts WriteOptions, format Format) (err error) {
	schema := opts.Schema
	if schema == nil {
		if len(recs) == 0 {
			return fmt.Errorf("ipc: write %s: no record batches and no schema; set WriteOptions.Schema to write an empty file", path)
		}
		schema = recs[0].Schema()
	}
	for i, r := range recs {
		if r == nil {
			return fmt.Errorf("ipc: write %s: record batch %d is nil", path, i)
		}
		if !r.Schema().Equal(schema) {
			return fmt.Errorf("ipc: write %s: record batch %d has schema %s, want %s", path, i, r.Schema(), schema)
		}
	}
	wopts := []ipc.Option{ipc.WithSchema(schema)}
	switch opts.Compression {
	case "":
	case "lz4":
		wopts = append(wopts, ipc.WithLZ4())
	case "zstd":
		wopts = append(wopts, ipc.WithZstd())
	default:
		return fmt.Errorf("ipc: write %s: unknown compression %q; use \"\", \"lz4\" or \"zstd\"", path, opts.Compression)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if format == FileFormat {
		// The file format allows one dictionary per column.
		unified, err := unifyDictionaries(recs)
		if err != nil {
			return fmt.Errorf("ipc: write %s: %w", path, err)
		}
		defer func() {
			for _, r := range unified {
				r.Release()
			}
		}()
		recs = unified
	}
	out, err := fsys.Create(ctx, path)
	if err != nil {
		return fmt.Errorf("ipc: %w", err)
	}
	closed := false
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("ipc: write %s: %v", path, r)
		}
		if err != nil {
			if !closed {
				out.Close()
			}
			_ = fsys.Remove(context.WithoutCancel(ctx), path)
		}
	}()
	var w interface {
		Write(arrow.RecordBatch) error
		Close() error
	}
	if format == FileFormat {
		fw, err := ipc.NewFileWriter(out, wopts...)
		if err != nil {
			return fmt.Errorf("ipc: write %s: %w", path, err)
		}
		w = fw
	} else {
		w = ipc.NewWriter(out, wopts...)
	}
	for i, r := range recs {
		if err := ctx.Err(); err != nil {
			w.Close()
			return err
		}
		if err := w.Write(r); err != nil {
			w.Close()
			return fmt.Errorf("ipc: write %s: record batch %d: %w", path, i, err)
		}
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("ipc: write %s: %w", path, err)
	}
	closed = true
	if err := out.Close(); err != nil {
		return fmt.Errorf("ipc: write %s: %w", path, err)
	}
	return nil
}

// unifyDictionaries returns the record batches (retained) with one
// dictionary per dictionary-encoded column: when batches have different
// dictionaries for a column, the column is concatenated, which unifies its
// dictionaries, and sliced back into batches.
func unifyDictionaries(recs []arrow.RecordBatch) ([]arrow.RecordBatch, error) {
	out := make([]arrow.RecordBatch, len(recs))
	for i, r := range recs {
		r.Retain()
		out[i] = r
	}
	if len(recs) < 2 {
		return out, nil
	}
	release := func() {
		for _, r := range out {
			r.Release()
		}
	}
	schema := recs[0].Schema()
	for c, f := range schema.Fields() {
		if f.Type.ID() != arrow.DICTIONARY {
			continue
		}
		first := recs[0].Column(c).(*array.Dictionary).Dictionary()
		same := true
		chunks := make([]arrow.Array, len(recs))
		for i, r := range recs {
			chunks[i] = r.Column(c)
			if d := chunks[i].(*array.Dictionary).Dictionary(); same && d != first && !array.Equal(d, first) {
				same = false
			}
		}
		if same {
			continue
		}
		all, err := array.Concatenate(chunks, memory.DefaultAllocator)
		if err != nil {
			release()
			return nil, fmt.Errorf("unify the dictionaries of column %q: %w", f.Name, err)
		}
		var at int64
		for i, r := range out {
			part := array.NewSlice(all, at, at+r.NumRows())
			at += r.NumRows()
			nr, err := r.SetColumn(c, part)
			part.Release()
			if err != nil {
				all.Release()
				release()
				return nil, fmt.Errorf("unify the dictionaries of column %q: %w", f.Name, err)
			}
			r.Release()
			out[i] = nr
		}
		all.Release()
	}
	return out, nil
}
