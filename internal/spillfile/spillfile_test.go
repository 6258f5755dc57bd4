package spillfile

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/graph"
)

func testRecord() arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"a", "", "c"}, []bool{true, false, true})
	return b.NewRecordBatch()
}

// spilled writes v as a spill file and returns its name and bytes.
func spilled(tb testing.TB, v any) (string, []byte) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), Name("k-1", 0, v))
	if err := Write(path, v, graph.Default()); err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return filepath.Base(path), b
}

func release(v any) {
	if r, ok := v.(interface{ Release() }); ok {
		r.Release()
	}
}

func TestWriteRead(t *testing.T) {
	rec := testRecord()
	defer rec.Release()
	tbl := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec, rec})
	defer tbl.Release()
	for _, v := range []any{rec, tbl, int64(7), "text"} {
		path := filepath.Join(t.TempDir(), Name("k-1", 0, v))
		if err := Write(path, v, graph.Default()); err != nil {
			t.Fatal(err)
		}
		got, err := Read(path, graph.Default())
		if err != nil {
			t.Fatalf("%T: %v", v, err)
		}
		switch want := v.(type) {
		case arrow.RecordBatch:
			if r, ok := got.(arrow.RecordBatch); !ok || !array.RecordEqual(r, want) {
				t.Errorf("read back %v, want %v", got, want)
			}
		case arrow.Table:
			if g, ok := got.(arrow.Table); !ok || g.NumRows() != want.NumRows() || !g.Schema().Equal(want.Schema()) {
				t.Errorf("read back %v, want %v", got, want)
			}
		default:
			if got != v {
				t.Errorf("read back %#v, want %#v", got, v)
			}
		}
		release(got)
	}
}

// spillKinds are the names a spill file may have; the fuzzer picks one.
var spillKinds = []string{"k-0.record.arrow", "k-0.table.arrow", "k-0.bin"}

// FuzzRead reads arbitrary bytes as a spill file (a file damaged on disk
// or cut short when the process died): an error naming the file, or a
// value, never a panic or an allocation far beyond the file's size.
func FuzzRead(f *testing.F) {
	rec := testRecord()
	defer rec.Release()
	tbl := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec, rec})
	defer tbl.Release()
	for _, v := range []any{rec, tbl, int64(7), "text"} {
		name, b := spilled(f, v)
		kind := uint8(0)
		for i, k := range spillKinds {
			if strings.HasSuffix(name, k[len("k-0"):]) {
				kind = uint8(i)
			}
		}
		f.Add(kind, b)
		f.Add(kind, b[:len(b)/2])
		f.Add(kind, b[:len(b)-1])
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		path := filepath.Join(dir, spillKinds[int(kind)%len(spillKinds)])
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		v, err := Read(path, graph.Default())
		runtime.ReadMemStats(&after)
		if d := after.TotalAlloc - before.TotalAlloc; d > 64<<20+uint64(len(data))*64 {
			t.Errorf("%d bytes made Read allocate %d MiB", len(data), d>>20)
		}
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Errorf("the error does not name the file: %v", err)
			}
			return
		}
		release(v)
	})
}
