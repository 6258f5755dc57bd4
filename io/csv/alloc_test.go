package csv

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestAllocator reads with a checked allocator: every buffer of the
// records comes from it and is given back when they are released, also
// when reading fails.
func TestAllocator(t *testing.T) {
	data := "k,v,b,d,s,f,i8\n"
	for i := range 3000 {
		switch {
		case i%97 == 5:
			data += "x,notanumber,true,2020-01-01,\"q\"\"s\",1.5,1\n"
		case i%13 == 0:
			data += ",,,,,,\n"
		default:
			data += "k" + itoa(int64(i%10)) + "," + itoa(int64(i)) + ",false,2020-01-02,\"s\n" + itoa(int64(i)) + "\",2.25,-3\n"
		}
	}
	fsys := newMemFS(map[string]string{"a.csv": data})
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
