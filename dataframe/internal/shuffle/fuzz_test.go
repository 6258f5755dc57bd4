package shuffle

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// FuzzCollect reads arbitrary bytes as the shard file of a shuffle's
// input, as collect reads a file that another worker wrote, or that was
// damaged on disk: Collect and CollectSorted return an error naming the
// shuffle, or the rows the manifest promised; never a panic, and every
// buffer they allocated is freed either way.
func FuzzCollect(f *testing.F) {
	ctx := context.Background()
	rec := makeBatch(rand.New(rand.NewPCG(9, 9)), memory.DefaultAllocator, 0, 40, 5)
	defer rec.Release()
	st := LocalStorage(f.TempDir())
	man, err := Split(ctx, st, "fz", 0, rec, HashPartitioner("k"), 1, Options{KeepShards: true})
	if err != nil {
		f.Fatal(err)
	}
	if len(man.Files) != 1 || len(man.Outputs[0].Segments) != 1 {
		f.Fatalf("manifest %+v: want one file and one segment", man)
	}
	shard, err := os.ReadFile(st.Path(man.Files[0]))
	if err != nil {
		f.Fatal(err)
	}
	rows := man.Outputs[0].Segments[0].Rows
	f.Add(shard, rows, int64(0), false)
	f.Add(shard, rows, int64(0), true)
	f.Add(shard[:len(shard)/2], rows, int64(0), false)
	f.Add(shard[:len(shard)-8], rows, int64(0), true)
	f.Add(shard, rows+1, int64(0), false)
	f.Add(shard, rows, int64(8), true)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, rows, offset int64, sorted bool) {
		st := LocalStorage(dir)
		if err := os.MkdirAll(filepath.Dir(st.Path(man.Files[0])), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(st.Path(man.Files[0]), data, 0o644); err != nil {
			t.Fatal(err)
		}
		length := int64(len(data)) - offset
		m := *man
		m.Outputs = []Shard{{Rows: rows, Segments: []Segment{{File: 0, Offset: offset, Length: length, Rows: rows}}}}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		opts := Options{KeepShards: true, Mem: mem}
		collect := Collect
		if sorted {
			collect = func(ctx context.Context, st Storage, id string, output int, mans []*Manifest, schema *arrow.Schema, opts Options) (arrow.RecordBatch, error) {
				return CollectSorted(ctx, st, id, output, mans, schema, []SortKey{{Column: "s"}}, opts)
			}
		}
		out, err := collect(ctx, st, "fz", 0, []*Manifest{&m}, testSchema, opts)
		if err != nil {
			if !strings.Contains(err.Error(), "fz") {
				t.Errorf("the error does not name the shuffle: %v", err)
			}
		} else {
			if out.NumRows() != rows {
				t.Errorf("collected %d rows, the manifest says %d", out.NumRows(), rows)
			}
			out.Release()
		}
		if err != nil && strings.Contains(err.Error(), "unknown error while reading") {
			// Arrow recovered from a panic while it built a record
			// from a damaged message (string offsets beyond the
			// data): the arrays it had built are lost to it, and
			// their buffers go to the garbage collector, not back to
			// the allocator. Nothing else may stay allocated.
			return
		}
		mem.AssertSize(t, 0)
	})
}
