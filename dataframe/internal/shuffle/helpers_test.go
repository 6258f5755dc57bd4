package shuffle

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testSchema is the schema of the test inputs: a global row number, an
// integer key with duplicates, a string key, a float with NaN and nulls.
var testSchema = arrow.NewSchema([]arrow.Field{
	{Name: "row", Type: arrow.PrimitiveTypes.Int64},
	{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String},
	{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

// makeInputs returns n input batches of random sizes up to maxRows (some
// empty), numbered rows from 0 on across them.
func makeInputs(rng *rand.Rand, mem memory.Allocator, n, maxRows, card int) []arrow.RecordBatch {
	var out []arrow.RecordBatch
	row := int64(0)
	for i := range n {
		rows := rng.IntN(maxRows + 1)
		if i == 0 {
			rows = maxRows
		}
		out = append(out, makeBatch(rng, mem, row, rows, card))
		row += int64(rows)
	}
	return out
}

func makeBatch(rng *rand.Rand, mem memory.Allocator, first int64, rows, card int) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, testSchema)
	defer b.Release()
	rb := b.Field(0).(*array.Int64Builder)
	kb := b.Field(1).(*array.Int64Builder)
	sb := b.Field(2).(*array.StringBuilder)
	fb := b.Field(3).(*array.Float64Builder)
	for r := range rows {
		rb.Append(first + int64(r))
		k := int64(rng.IntN(card))
		if rng.IntN(50) == 0 {
			kb.AppendNull()
		} else {
			kb.Append(k)
		}
		sb.Append(fmt.Sprintf("key-%06d-%s", rng.IntN(card), "padding-to-make-rows-wider"))
		switch rng.IntN(20) {
		case 0:
			fb.AppendNull()
		default:
			fb.Append(rng.NormFloat64())
		}
	}
	return b.NewRecordBatch()
}

func release(recs ...arrow.RecordBatch) {
	for _, r := range recs {
		if r != nil {
			r.Release()
		}
	}
}

func int64s(a arrow.Array) []int64 { return a.(*array.Int64).Int64Values() }

// files lists the regular files under dir.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func checkedMem(t testing.TB) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}
