package csv

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// mixedCSV returns rows of every kind of value, nulls (a row in 13), bad
// values in column v (a row in 97), quoted strings with newlines and
// doubled quotes, and booleans of both values; the last column is called
// last.
func mixedCSV(rows int, last string) string {
	var b strings.Builder
	b.WriteString("k,v,b,d,s,f," + last + "\n")
	for i := range rows {
		switch {
		case i%97 == 5:
			b.WriteString("x,notanumber,true,2020-01-01,\"q\"\"s\",1.5,1\n")
		case i%13 == 0:
			b.WriteString(",,,,,,\n")
		default:
			b.WriteString("k" + itoa(int64(i%10)) + "," + itoa(int64(i)) + "," + strconv.FormatBool(i%3 == 0) +
				",2020-01-02,\"s\n" + itoa(int64(i)) + "\",2.25,-3\n")
		}
	}
	return b.String()
}

// TestAllocator reads with a checked allocator: every buffer of the
// records comes from it and is given back when they are released, also
// when reading fails.
func TestAllocator(t *testing.T) {
	fsys := newMemFS(map[string]string{"a.csv": mixedCSV(3000, "i8")})
	types := map[string]arrow.DataType{"v": arrow.PrimitiveTypes.Int64, "s": arrow.BinaryTypes.String, "i8": arrow.PrimitiveTypes.Int8}
	tests := []struct {
		name string
		opts Options
		ro   ReadOptions
		fail bool
	}{
		{"skip", Options{BadRows: Skip, Types: types, Dictionary: []string{"k"}}, ReadOptions{}, false},
		{"skip, projection", Options{BadRows: Skip, Types: types}, ReadOptions{Columns: []string{"s", "v"}}, false},
		{"skip, filter", Options{BadRows: Skip, Types: types, Dictionary: []string{"k"}}, ReadOptions{BatchRows: 100, Filter: keepEven(new(int))}, false},
		{"fail", Options{Types: types}, ReadOptions{}, true},
		{"fail, filter", Options{Types: types}, ReadOptions{BatchRows: 50, Filter: keepEven(new(int))}, true},
		{"blocks", Options{BadRows: Skip, Types: types, BlockSize: 4096}, ReadOptions{}, false},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			plan, err := PlanRead(ctx, fsys, []string{"a.csv"}, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			ro := tc.ro
			ro.Allocator = mem
			rows := 0
			for i := range plan.Blocks {
				rec, _, err := ReadBlock(ctx, fsys, plan, i, ro)
				if tc.fail {
					var pe *ParseError
					if !errors.As(err, &pe) || pe.Name != "v" {
						t.Fatalf("error %v", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				rows += int(rec.NumRows())
				rec.Release()
			}
			if want := 3000 - 31; tc.ro.Filter == nil && rows != want {
				t.Errorf("%d rows, want %d", rows, want)
			}
		})
	}
}

// dirtyAllocator hands out memory full of 0xff where it may skip zeroing,
// as recycled buffers can be.
type dirtyAllocator struct{ memory.Allocator }

func (d dirtyAllocator) AllocateUninit(size int) []byte {
	b := d.Allocate(size)
	for i := range b {
		b[i] = 0xff
	}
	return b
}

// TestUninitializedMemory reads with memory that is not zeroed: the values,
// nulls and booleans must be those read with zeroed memory, and the bits
// of bitmaps past the last row must be clear.
func TestUninitializedMemory(t *testing.T) {
	fsys := newMemFS(map[string]string{"a.csv": mixedCSV(1000, "i32")})
	opts := Options{BadRows: Skip, Dictionary: []string{"k"}, BlockSize: 3000,
		Types: map[string]arrow.DataType{"v": arrow.PrimitiveTypes.Int64, "i32": arrow.PrimitiveTypes.Int32}}
	_, _, want, _, err := readFS(fsys, []string{"a.csv"}, opts, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(dirtyAllocator{memory.NewGoAllocator()})
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	plan, err := PlanRead(ctx, fsys, []string{"a.csv"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := range plan.Blocks {
		rec, _, err := ReadBlock(ctx, fsys, plan, i, ReadOptions{Allocator: dirtyAllocator{mem}})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, recordRows(rec)...)
		for c, col := range rec.Columns() {
			n := col.Len()
			bms := []*memory.Buffer{col.Data().Buffers()[0]}
			if col.DataType().ID() == arrow.BOOL {
				bms = append(bms, col.Data().Buffers()[1])
			}
			for _, bm := range bms {
				if bm != nil && n&7 != 0 && bm.Bytes()[n>>3]>>(n&7) != 0 {
					t.Errorf("block %d column %d: bits past row %d are set", i, c, n)
				}
			}
		}
		rec.Release()
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows differ from those read with zeroed memory")
	}
}
