package sortk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// equalBatches fails the test if two batches differ in any value.
func equalBatches(t *testing.T, what string, got, want arrow.RecordBatch) {
	t.Helper()
	if got.NumRows() != want.NumRows() {
		t.Fatalf("%s: got %d rows, want %d", what, got.NumRows(), want.NumRows())
	}
	for c := range int(want.NumCols()) {
		g, w := got.Column(c), want.Column(c)
		for i := range int(want.NumRows()) {
			if g.IsNull(i) != w.IsNull(i) || !w.IsNull(i) && g.ValueStr(i) != w.ValueStr(i) {
				t.Fatalf("%s: column %s row %d: got %s, want %s", what, want.ColumnName(c), i, g.ValueStr(i), w.ValueStr(i))
			}
		}
	}
}

// Merging sorted pieces of a batch gives what sorting the whole batch
// gives, row for row (both are stable), whatever the sizes of the pieces
// and of the merged batches.
func TestMerge(t *testing.T) {
	ctx := context.Background()
	mem := checkedMem(t)
	cases := []struct {
		types []string
		keys  []SortKey
		gen   gen
	}{
		{[]string{"int64", "string"}, []SortKey{{Column: "c0"}}, gen{card: 50, nulls: 0.1}},
		{[]string{"string", "float64"}, []SortKey{{Column: "c0", Descending: true}, {Column: "c1", NullsFirst: true}}, gen{card: 9, nulls: 0.1, nans: 0.1}},
		{[]string{"dict", "bool", "uint16"}, []SortKey{{Column: "c0"}, {Column: "c1", Descending: true}}, gen{card: 5, nulls: 0.2}},
		{[]string{"timestamp", "large_string"}, []SortKey{{Column: "c1"}, {Column: "c0", Descending: true}}, gen{card: 30}},
	}
	for ci, c := range cases {
		for _, pieces := range []int{1, 2, 7} {
			for _, batchRows := range []int{1, 13, 1 << 16} {
				rng := rand.New(rand.NewPCG(uint64(ci), uint64(pieces)))
				n := 1500
				var names []string
				var cols []arrow.Array
				for i, typ := range c.types {
					names = append(names, fmt.Sprintf("c%d", i))
					cols = append(cols, genArray(rng, mem, typ, n, c.gen))
				}
				rec := record(names, cols)
				want, err := Sort(ctx, rec, c.keys, mem)
				if err != nil {
					t.Fatal(err)
				}
				// Cut rec in pieces of random sizes (some empty), sort each,
				// and hand each to the merger in slices of up to 100 rows.
				var runs []Run
				var held []arrow.RecordBatch
				at := int64(0)
				for p := range pieces {
					end := at + int64(rng.IntN(int(n/pieces)*2+1))
					if p == pieces-1 || end > int64(n) {
						end = int64(n)
					}
					piece := rec.NewSlice(at, end)
					sorted, err := Sort(ctx, piece, c.keys, mem)
					piece.Release()
					if err != nil {
						t.Fatal(err)
					}
					var parts []arrow.RecordBatch
					for lo := int64(0); lo <= sorted.NumRows(); lo += 100 {
						parts = append(parts, sorted.NewSlice(lo, min(lo+100, sorted.NumRows())))
					}
					held = append(held, sorted)
					held = append(held, parts...)
					runs = append(runs, RunOf(parts...))
					at = end
				}
				m, err := NewMerger(ctx, rec.Schema(), runs, c.keys, MergeOptions{BatchRows: batchRows, Mem: mem})
				if err != nil {
					t.Fatal(err)
				}
				var outs []arrow.RecordBatch
				for {
					b, err := m.Next(ctx)
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					if b.NumRows() > int64(batchRows) {
						t.Errorf("merged batch of %d rows, want at most %d", b.NumRows(), batchRows)
					}
					outs = append(outs, b)
				}
				m.Close()
				got := concat(t, rec.Schema(), outs, mem)
				equalBatches(t, fmt.Sprintf("case %d, %d pieces, batches of %d", ci, pieces, batchRows), got, want)
				for _, r := range append(outs, append(held, got, want, rec)...) {
					r.Release()
				}
			}
		}
	}
}

func concat(t *testing.T, schema *arrow.Schema, recs []arrow.RecordBatch, mem memory.Allocator) arrow.RecordBatch {
	t.Helper()
	cols := make([]arrow.Array, schema.NumFields())
	var n int64
	for _, r := range recs {
		n += r.NumRows()
	}
	for c := range cols {
		var parts []arrow.Array
		for _, r := range recs {
			parts = append(parts, r.Column(c))
		}
		if len(parts) == 0 {
			cols[c] = array.MakeArrayOfNull(mem, schema.Field(c).Type, 0)
			continue
		}
		a, err := array.Concatenate(parts, mem)
		if err != nil {
			t.Fatal(err)
		}
		cols[c] = a
	}
	rec := array.NewRecordBatch(schema, cols, n)
	for _, c := range cols {
		c.Release()
	}
	return rec
}

func TestMergeSorted(t *testing.T) {
	ctx := context.Background()
	mem := checkedMem(t)
	keys := []SortKey{{Column: "a"}}
	mk := func(vals ...int64) arrow.RecordBatch {
		b := array.NewInt64Builder(mem)
		b.AppendValues(vals, nil)
		tag := array.NewStringBuilder(mem)
		for i := range vals {
			tag.Append(fmt.Sprintf("%d.%d", len(vals), i))
		}
		r := record([]string{"a", "tag"}, []arrow.Array{b.NewArray(), tag.NewArray()})
		b.Release()
		tag.Release()
		return r
	}
	r1, r2, r3 := mk(1, 3, 3, 7), mk(), mk(0, 3, 9)
	defer r1.Release()
	defer r2.Release()
	defer r3.Release()
	got, err := MergeSorted(ctx, []arrow.RecordBatch{r1, r2, r3}, keys, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	want := `[0 1 3 3 3 7 9] ["3.0" "4.0" "4.1" "4.2" "3.1" "4.3" "3.2"]`
	if s := fmt.Sprint(got.Column(0), " ", got.Column(1)); s != want {
		t.Errorf("got %s, want %s (equal keys in the order of the batches)", s, want)
	}
	empty, err := MergeSorted(ctx, []arrow.RecordBatch{r2, r2}, keys, mem)
	if err != nil || empty.NumRows() != 0 || empty.NumCols() != 2 {
		t.Errorf("merge of empty batches: %v, %v", empty, err)
	}
	empty.Release()
	if _, err := MergeSorted(ctx, nil, keys, mem); err == nil {
		t.Error("merge of no batches: no error")
	}
	other := record([]string{"a"}, []arrow.Array{seq(3)})
	defer other.Release()
	if _, err := MergeSorted(ctx, []arrow.RecordBatch{r1, other}, keys, mem); err == nil {
		t.Error("merge of batches of different schemas: no error")
	}
}

type failingRun struct{ err error }

func (r failingRun) Next(context.Context) (arrow.RecordBatch, error) { return nil, r.err }

func TestMergeRunError(t *testing.T) {
	cause := errors.New("disk on fire")
	rec := record([]string{"a"}, []arrow.Array{seq(3)})
	defer rec.Release()
	_, err := NewMerger(context.Background(), rec.Schema(), []Run{RunOf(rec), failingRun{cause}}, []SortKey{{Column: "a"}}, MergeOptions{})
	if !errors.Is(err, cause) || err.Error() != "sortk: merge: run 1: disk on fire" {
		t.Errorf("got %v", err)
	}
}
