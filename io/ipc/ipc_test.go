package ipc

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/goleak"

	"github.com/shoal-data/shoal/dataframe/dftest"
	"github.com/shoal-data/shoal/io/storage"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var dict = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

// batches makes n record batches of rows rows each, with ints, floats,
// strings, a dictionary column and timestamps, nulls included.
func batches(t *testing.T, rng *rand.Rand, n, rows int) []arrow.RecordBatch {
	t.Helper()
	var out []arrow.RecordBatch
	id := 0
	for b := 0; b < n; b++ {
		var ids, xs, names, cities, ts []any
		for r := 0; r < rows; r++ {
			ids = append(ids, id)
			id++
			if rng.IntN(7) == 0 {
				xs = append(xs, nil)
			} else {
				xs = append(xs, rng.Float64())
			}
			names = append(names, []any{"ann", "bob", "", nil, "日本"}[rng.IntN(5)])
			cities = append(cities, []any{"oslo", "lima", nil}[rng.IntN(3)])
			ts = append(ts, []any{"2024-01-01T00:00:00Z", "1999-12-31T23:59:59.999999Z", nil}[rng.IntN(3)])
		}
		out = append(out, dftest.Record(t,
			dftest.Int64s("id", ids...),
			dftest.Float64s("x", xs...),
			dftest.Strings("name", names...),
			dftest.Strings("city", cities...).As(dict),
			dftest.Timestamps("ts", ts...),
		))
	}
	return out
}

// readAll plans and reads every part, checking that no memory leaks.
func readAll(t *testing.T, paths []string, opts Options) (*Plan, []arrow.RecordBatch) {
	t.Helper()
	ctx := context.Background()
	plan, err := PlanRead(ctx, storage.Local{}, paths, opts)
	if err != nil {
		t.Fatalf("PlanRead: %v", err)
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	var recs []arrow.RecordBatch
	for i := range plan.Parts {
		rec, err := ReadPart(ctx, storage.Local{}, plan, i, mem)
		if err != nil {
			t.Fatalf("ReadPart %d: %v", i, err)
		}
		if !rec.Schema().Equal(plan.Schema) {
			t.Errorf("part %d has schema %s, the plan %s", i, rec.Schema(), plan.Schema)
		}
		recs = append(recs, rec)
	}
	t.Cleanup(func() {
		for _, r := range recs {
			r.Release()
		}
		mem.AssertSize(t, 0)
	})
	return plan, recs
}

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	recs := batches(t, rng, 4, 50)
	dir := t.TempDir()
	ctx := context.Background()
	for _, comp := range []string{"", "lz4", "zstd"} {
		for _, format := range []Format{FileFormat, StreamFormat} {
			t.Run(format.String()+"/"+comp, func(t *testing.T) {
				path := filepath.Join(dir, format.String()+comp+".arrow")
				write := WriteFile
				if format == StreamFormat {
					write = WriteStream
				}
				if err := write(ctx, storage.Local{}, path, recs, WriteOptions{Compression: comp}); err != nil {
					t.Fatal(err)
				}
				plan, got := readAll(t, []string{path}, Options{})
				if len(plan.Parts) != 1 || plan.Parts[0].Format != format {
					t.Errorf("plan %+v, want one part in the %s format", plan.Parts, format)
				}
				dftest.AssertEqual(t, got, recs)
			})
		}
	}
}

func TestParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	recs := batches(t, rng, 10, 100)
	path := filepath.Join(t.TempDir(), "data.arrow")
	if err := WriteFile(context.Background(), storage.Local{}, path, recs, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	size, _ := storage.Local{}.Stat(context.Background(), path)
	tests := []struct {
		target int64
		parts  int
	}{
		{1, 10},            // at least one batch a part
		{size / 4, 5},      // about two batches a part
		{size * 2, 1},      // everything
		{0, 1},             // the default
		{size / 10 * 3, 4}, // three, three, three, one
	}
	for _, tt := range tests {
		plan, got := readAll(t, []string{path}, Options{TargetBytes: tt.target})
		if len(plan.Parts) != tt.parts {
			t.Errorf("TargetBytes %d: %d parts, want %d: %+v", tt.target, len(plan.Parts), tt.parts, plan.Parts)
		}
		next := 0
		for _, p := range plan.Parts {
			if p.FirstBatch != next || p.NumBatches < 1 || p.Bytes <= 0 {
				t.Errorf("TargetBytes %d: part %+v does not follow batch %d", tt.target, p, next)
			}
			next = p.FirstBatch + p.NumBatches
		}
		if next != len(recs) {
			t.Errorf("TargetBytes %d: parts cover %d batches, want %d", tt.target, next, len(recs))
		}
		dftest.AssertEqual(t, got, recs)
	}
}

func TestProjection(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	rec := dftest.Record(t, dftest.Int64s("id", 1, 2), dftest.Strings("name", "a", nil), dftest.Float64s("price", 1.5, 2))
	for _, name := range []string{"a.arrow", "b.arrows"} {
		write := WriteFile
		if strings.HasSuffix(name, "s") {
			write = WriteStream
		}
		if err := write(ctx, storage.Local{}, filepath.Join(dir, name), []arrow.RecordBatch{rec}, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	plan, got := readAll(t, []string{filepath.Join(dir, "*")}, Options{Columns: []string{"price", "id"}})
	if len(plan.Parts) != 2 {
		t.Fatalf("%d parts, want 2", len(plan.Parts))
	}
	want := dftest.Record(t, dftest.Float64s("price", 1.5, 2), dftest.Int64s("id", 1, 2))
	for _, g := range got {
		dftest.AssertEqual(t, g, want)
	}

	sel, err := plan.Select("id")
	if err != nil {
		t.Fatal(err)
	}
	r, err := ReadPart(ctx, storage.Local{}, sel, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	dftest.AssertEqual(t, r, dftest.Record(t, dftest.Int64s("id", 1, 2)))

	if _, err := plan.Select("name"); !errors.Is(err, ErrUnknownColumn) {
		t.Errorf("selecting a column the plan does not read: %v, want ErrUnknownColumn", err)
	}
}

// TestProjectionFreesMemory checks that the columns not read do not stay
// in memory behind the ones read.
func TestProjectionFreesMemory(t *testing.T) {
	ctx := context.Background()
	big := make([]any, 10000)
	for i := range big {
		big[i] = strings.Repeat("x", 100)
	}
	small := make([]any, 10000)
	for i := range small {
		small[i] = i
	}
	rec := dftest.Record(t, dftest.Strings("big", big...), dftest.Int64s("small", small...))
	path := filepath.Join(t.TempDir(), "a.arrow")
	if err := WriteFile(ctx, storage.Local{}, path, []arrow.RecordBatch{rec}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	plan, err := PlanRead(ctx, storage.Local{}, []string{path}, Options{Columns: []string{"small"}})
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	r, err := ReadPart(ctx, storage.Local{}, plan, 0, mem)
	if err != nil {
		t.Fatal(err)
	}
	if held := mem.CurrentAlloc(); held > 200_000 {
		t.Errorf("reading one int64 column of 10000 rows holds %d bytes", held)
	}
	r.Release()
	mem.AssertSize(t, 0)
}

func TestPlanErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	put := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	encode := func(format Format, recs ...arrow.RecordBatch) []byte {
		p := filepath.Join(dir, "tmp")
		write := WriteFile
		if format == StreamFormat {
			write = WriteStream
		}
		if err := write(ctx, storage.Local{}, p, recs, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ab := dftest.Record(t, dftest.Int64s("a", 1), dftest.Strings("b", "x"))
	file := encode(FileFormat, ab)
	stream := encode(StreamFormat, ab)
	good := put("good.arrow", file)
	put("csv.arrow", []byte("a,b\n1,x\n"))
	put("empty.arrow", nil)
	put("short.arrow", file[:len(file)-3])
	put("cut.arrows", stream[:20])
	put("other.arrow", encode(FileFormat, dftest.Record(t, dftest.Float64s("a", 1), dftest.Strings("b", "x"))))
	put("more.arrow", encode(FileFormat, dftest.Record(t, dftest.Int64s("a", 1), dftest.Strings("b", "x"), dftest.Bools("c", true))))
	put("swapped.arrow", encode(FileFormat, dftest.Record(t, dftest.Strings("b", "x"), dftest.Int64s("a", 1))))

	tests := []struct {
		name  string
		paths []string
		opts  Options
		is    error
		msg   string
	}{
		{"missing file", []string{filepath.Join(dir, "nope.arrow")}, Options{}, fs.ErrNotExist, "nope.arrow"},
		{"no match", []string{filepath.Join(dir, "*.parquet")}, Options{}, storage.ErrNoMatch, "*.parquet"},
		{"not arrow", []string{filepath.Join(dir, "csv.arrow")}, Options{}, ErrNotArrow, `csv.arrow: not an Arrow IPC file or stream (it starts with "a,b\n1,x\n")`},
		{"empty", []string{filepath.Join(dir, "empty.arrow")}, Options{}, ErrNotArrow, "empty.arrow: not an Arrow IPC file or stream (the file is empty)"},
		{"truncated file", []string{filepath.Join(dir, "short.arrow")}, Options{}, ErrCorrupt, "short.arrow: damaged or truncated Arrow data"},
		{"truncated stream", []string{filepath.Join(dir, "cut.arrows")}, Options{}, ErrCorrupt, "cut.arrows: damaged or truncated Arrow data"},
		{"type differs", []string{good, filepath.Join(dir, "other.arrow")}, Options{}, ErrSchemaMismatch,
			`schemas differ: ` + good + ` and ` + filepath.Join(dir, "other.arrow") + `: column "a" is int64 in ` + good + ` but float64 in ` + filepath.Join(dir, "other.arrow")},
		{"extra column", []string{good, filepath.Join(dir, "more.arrow")}, Options{}, ErrSchemaMismatch, `column "c" of ` + filepath.Join(dir, "more.arrow") + ` is not in ` + good},
		{"other order", []string{good, filepath.Join(dir, "swapped.arrow")}, Options{}, ErrSchemaMismatch, `the columns are in another order (column 0 is "a" in one, "b" in the other)`},
		{"unknown column", []string{good}, Options{Columns: []string{"B"}}, ErrUnknownColumn, `no such column "B" in ` + good + ` (did you mean "b"?); it has "a", "b"`},
		{"column twice", []string{good}, Options{Columns: []string{"a", "a"}}, nil, `column "a" is requested twice`},
		{"negative target", []string{good}, Options{TargetBytes: -1}, nil, "TargetBytes is -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := PlanRead(ctx, storage.Local{}, tt.paths, tt.opts)
			if err == nil {
				t.Fatal("no error")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %q does not wrap %q", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not say %q", err, tt.msg)
			}
		})
	}

	// With a projection, only the projected columns must agree.
	if _, err := PlanRead(ctx, storage.Local{}, []string{good, filepath.Join(dir, "other.arrow")}, Options{Columns: []string{"b"}}); err != nil {
		t.Errorf("files agreeing on the projected column: %v", err)
	}
}

func TestReadPartErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "a.arrow")
	rec := dftest.Record(t, dftest.Int64s("a", 1, 2))
	if err := WriteFile(ctx, storage.Local{}, path, []arrow.RecordBatch{rec, rec}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	plan, err := PlanRead(ctx, storage.Local{}, []string{path}, Options{TargetBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPart(ctx, storage.Local{}, plan, 2, nil); err == nil || !strings.Contains(err.Error(), "the plan has 2 parts; there is no part 2") {
		t.Errorf("part out of range: %v", err)
	}
	if _, err := ReadPart(ctx, storage.Local{}, nil, 0, nil); err == nil {
		t.Error("nil plan: no error")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ReadPart(cancelled, storage.Local{}, plan, 0, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}

	// The file changes after planning: one batch and another type.
	other := dftest.Record(t, dftest.Strings("a", "x"))
	if err := WriteFile(ctx, storage.Local{}, path, []arrow.RecordBatch{other}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = ReadPart(ctx, storage.Local{}, plan, 1, nil)
	if !errors.Is(err, ErrSchemaMismatch) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "changed since it was planned") {
		t.Errorf("changed file: %v", err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPart(ctx, storage.Local{}, plan, 0, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("removed file: %v", err)
	}
}

func TestPlanEncoding(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))
	recs := batches(t, rng, 3, 10)
	path := filepath.Join(t.TempDir(), "a.arrow")
	if err := WriteFile(ctx, storage.Local{}, path, recs, WriteOptions{Compression: "zstd"}); err != nil {
		t.Fatal(err)
	}
	plan, err := PlanRead(ctx, storage.Local{}, []string{path}, Options{TargetBytes: 1, Columns: []string{"city", "id"}})
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	var fromJSON Plan
	if err := json.Unmarshal(js, &fromJSON); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(plan); err != nil {
		t.Fatal(err)
	}
	var fromGob Plan
	if err := gob.NewDecoder(&buf).Decode(&fromGob); err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]*Plan{"json": &fromJSON, "gob": &fromGob} {
		if !p.Schema.Equal(plan.Schema) || len(p.Parts) != len(plan.Parts) {
			t.Errorf("%s: decoded plan differs: %v %+v", name, p.Schema, p.Parts)
			continue
		}
		for i := range p.Parts {
			if p.Parts[i] != plan.Parts[i] {
				t.Errorf("%s: part %d is %+v, want %+v", name, i, p.Parts[i], plan.Parts[i])
			}
			// One part alone, as a task would get it.
			one := p.Slice(i, i+1)
			got, err := ReadPart(ctx, storage.Local{}, one, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			w := array.NewRecordBatch(plan.Schema, []arrow.Array{recs[i].Column(3), recs[i].Column(0)}, recs[i].NumRows())
			dftest.AssertEqual(t, got, w)
			w.Release()
			got.Release()
		}
	}
	if err := new(Plan).UnmarshalJSON([]byte(`{"schema":"AAAA","parts":[]}`)); err == nil {
		t.Error("a damaged schema decodes without error")
	}
	if err := new(Plan).UnmarshalJSON([]byte(`{"schema":null,"parts":[{"format":"tape"}]}`)); err == nil {
		t.Error("an unknown format decodes without error")
	}
}

func TestEmpty(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	for _, format := range []Format{FileFormat, StreamFormat} {
		path := filepath.Join(dir, format.String())
		write := WriteFile
		if format == StreamFormat {
			write = WriteStream
		}
		if err := write(ctx, storage.Local{}, path, nil, WriteOptions{Schema: schema}); err != nil {
			t.Fatal(err)
		}
		plan, got := readAll(t, []string{path}, Options{})
		if len(got) != 1 || got[0].NumRows() != 0 || !plan.Schema.Equal(schema) {
			t.Errorf("%s: empty file reads as %v with schema %s", format, got, plan.Schema)
		}
	}
}

func TestWriteErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a := dftest.Record(t, dftest.Int64s("a", 1))
	b := dftest.Record(t, dftest.Strings("a", "x"))
	tests := []struct {
		name string
		recs []arrow.RecordBatch
		opts WriteOptions
		msg  string
	}{
		{"no schema", nil, WriteOptions{}, "no record batches and no schema"},
		{"schemas differ", []arrow.RecordBatch{a, b}, WriteOptions{}, "record batch 1 has schema"},
		{"nil batch", []arrow.RecordBatch{a, nil}, WriteOptions{}, "record batch 1 is nil"},
		{"compression", []arrow.RecordBatch{a}, WriteOptions{Compression: "gzip"}, `unknown compression "gzip"; use "", "lz4" or "zstd"`},
	}
	for _, tt := range tests {
		path := filepath.Join(dir, tt.name)
		err := WriteFile(ctx, storage.Local{}, path, tt.recs, tt.opts)
		if err == nil || !strings.Contains(err.Error(), tt.msg) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v, want one naming %s and saying %q", tt.name, err, path, tt.msg)
		}
		if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: a file was left behind", tt.name)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := WriteStream(cancelled, storage.Local{}, filepath.Join(dir, "c"), []arrow.RecordBatch{a}, WriteOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func dftestRecord(ids, names []any) (arrow.RecordBatch, error) {
	return dftest.NewRecord(dftest.Int64s("id", ids...), dftest.Strings("name", names...).As(dict))
}
