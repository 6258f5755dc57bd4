package jsonl

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/dataframe/dftest"
	"github.com/shoal-data/shoal/io/storage"
)

// oneFile is a file system holding one file, "x".
type oneFile []byte

type memFile struct{ *bytes.Reader }

func (memFile) Close() error { return nil }

func (f oneFile) Open(_ context.Context, path string) (storage.File, error) {
	if path != "x" {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	return memFile{bytes.NewReader(f)}, nil
}

func (f oneFile) Create(context.Context, string) (io.WriteCloser, error) {
	return nil, errors.New("read only")
}

func (f oneFile) Stat(_ context.Context, path string) (int64, error) {
	if path != "x" {
		return 0, &fs.PathError{Op: "stat", Path: path, Err: fs.ErrNotExist}
	}
	return int64(len(f)), nil
}

func (f oneFile) Glob(_ context.Context, pattern string) ([]string, error) { return []string{"x"}, nil }
func (f oneFile) Remove(context.Context, string) error                     { return errors.New("read only") }

// FuzzRead checks that any input reads or fails with an error naming the
// line, never panics, and reads the same whatever the block size.
func FuzzRead(f *testing.F) {
	for _, s := range []string{
		"{\"a\": 1, \"b\": \"x\", \"c\": 1.5, \"d\": true, \"e\": null}\n{\"a\": 2}\n",
		"{\"t\": \"2024-03-01T12:30:00.123+01:00\", \"n\": {\"x\": [1, 2, {\"y\": null}]}}\n",
		"\xef\xbb\xbf{\"s\": \"\\u00e9\\ud83d\\ude00\\n\"}\r\n\r\n{\"s\": NaN}",
		"{\"a\": -0.5e-3}\n{\"a\": 99999999999999999999}\n{\"a\": -Infinity}",
		"{\"a\": [}\n",
		"",
	} {
		f.Add([]byte(s), uint8(3), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, block uint8, nested bool) {
		ctx := context.Background()
		fsys := oneFile(data)
		opts := Options{NestedAsJSON: nested, ParseDates: nil, SampleBytes: 64}
		plan, err := PlanRead(ctx, fsys, []string{"x"}, opts)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("PlanRead: %v is not a *ParseError", err)
			}
			return
		}
		read := func(blockSize int64) ([]arrow.RecordBatch, error) {
			opts := opts
			opts.Schema = plan.Schema
			opts.BlockSize = blockSize
			p, err := PlanRead(ctx, fsys, []string{"x"}, opts)
			if err != nil {
				t.Fatalf("PlanRead with the inferred schema: %v", err)
			}
			var recs []arrow.RecordBatch
			for i := range p.Parts {
				rec, err := ReadPart(ctx, fsys, p, i, nil)
				if err != nil {
					var pe *ParseError
					if !errors.As(err, &pe) {
						t.Fatalf("ReadPart: %v is not a *ParseError", err)
					}
					return nil, err
				}
				recs = append(recs, rec)
			}
			return recs, nil
		}
		whole, errWhole := read(0)
		parts, errParts := read(1 + int64(block))
		if (errWhole == nil) != (errParts == nil) {
			t.Fatalf("whole file: %v; in parts of %d bytes: %v", errWhole, 1+int64(block), errParts)
		}
		if errWhole == nil && len(plan.Schema.Fields()) > 0 {
			if d := dftest.Diff(parts, whole); d != "" {
				t.Fatalf("parts of %d bytes differ from the whole file:\n%s", 1+int64(block), d)
			}
		}
	})
}
