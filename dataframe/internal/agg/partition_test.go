package agg

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// TestHashPartition checks that every row lands in exactly one part, rows
// with equal keys land together (also across batches and across string
// encodings), rows keep their order, and n = 1 gives the batch back.
func TestHashPartition(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(5, 6))
	tests := []struct {
		name  string
		types []arrow.DataType // key types; "row" is an extra int64 column numbering the rows
		n     int
	}{
		{"string", []arrow.DataType{tString}, 4},
		{"dictionary", []arrow.DataType{tDict}, 3},
		{"int64", []arrow.DataType{tInt64}, 7},
		{"int8", []arrow.DataType{tInt8}, 2},
		{"float", []arrow.DataType{tFloat64}, 5},
		{"bool", []arrow.DataType{tBool}, 3},
		{"two keys", []arrow.DataType{tLarge, tDate32}, 8},
		{"three keys", []arrow.DataType{tString, tInt32, tBool}, 5},
		{"one part", []arrow.DataType{tString}, 1},
		{"more parts than rows", []arrow.DataType{tInt64}, 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := checkedMem(t)
			n := 600
			var cols []column
			var keys []string
			for i, typ := range tt.types {
				name := fmt.Sprintf("k%d", i)
				cols = append(cols, randomColumn(r, name, typ, n, 30, 0.1))
				keys = append(keys, name)
			}
			rowNums := make([]any, n)
			for i := range rowNums {
				rowNums[i] = int64(i)
			}
			cols = append(cols, column{"row", tInt64, rowNums})
			rec := buildRecord(mem, cols)
			defer rec.Release()
			// Two batches of the same rows: their parts must agree.
			halves := splitRecord(rec, []int{n / 3})
			defer releaseRecs(halves)
			partOf := map[string]int{} // key tuple -> part
			seen := make([]bool, n)
			for _, h := range halves {
				parts, err := HashPartition(ctx, h, keys, tt.n, mem)
				if err != nil {
					t.Fatal(err)
				}
				if len(parts) != tt.n {
					t.Fatalf("%d parts, want %d", len(parts), tt.n)
				}
				for q, p := range parts {
					if !p.Schema().Equal(rec.Schema()) {
						t.Fatalf("part %d schema %s", q, p.Schema())
					}
					last := int64(-1)
					for _, row := range rowsOf(p) {
						k := fmt.Sprintf("%#v", row[:len(keys)])
						if prev, ok := partOf[k]; ok && prev != q {
							t.Fatalf("key %s in parts %d and %d", k, prev, q)
						}
						partOf[k] = q
						i := row[len(keys)].(int64)
						if seen[i] {
							t.Fatalf("row %d twice", i)
						}
						seen[i] = true
						if i <= last {
							t.Fatalf("part %d: row %d after row %d", q, i, last)
						}
						last = i
						for j := range keys {
							if !sameValue(row[j], cols[j].vals[i]) {
								t.Fatalf("row %d key %d is %v, want %v", i, j, row[j], cols[j].vals[i])
							}
						}
					}
				}
				releaseRecs(parts)
			}
			for i, s := range seen {
				if !s {
					t.Fatalf("row %d in no part", i)
				}
			}
			if tt.n > 1 && tt.n <= 8 && len(tt.types) > 0 && tt.types[0].ID() != arrow.BOOL {
				used := map[int]bool{}
				for _, q := range partOf {
					used[q] = true
				}
				if len(used) < tt.n {
					t.Errorf("only %d of %d parts used", len(used), tt.n)
				}
			}
		})
	}
}

// TestHashPartitionEncodings: a string key hashes the same whatever its
// encoding, and an integer the same whatever its width.
func TestHashPartitionEncodings(t *testing.T) {
	ctx := context.Background()
	mem := checkedMem(t)
	strs := []any{"a", "bb", nil, "a longer string than sixteen bytes", "", "ccc"}
	ints := []any{int64(1), int64(-2), nil, int64(100), int64(0), int64(7)}
	groups := [][]arrow.DataType{{tString, tLarge, tBinary, tDict, tDict8}, {tInt8, tInt16, tInt32, tInt64}}
	for gi, types := range groups {
		var want []int
		for _, typ := range types {
			vals := strs
			if gi == 1 {
				vals = ints
			}
			rec := buildRecord(mem, []column{{"k", typ, vals}, {"i", tInt64, ints}})
			parts, err := HashPartition(ctx, rec, []string{"k"}, 16, mem)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]int, len(vals))
			for q, p := range parts {
				for _, row := range rowsOf(p) {
					for i, v := range ints {
						if v == row[1] {
							got[i] = q
						}
					}
				}
			}
			if want == nil {
				want = got
			} else if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: parts %v, want %v as for %s", typ, got, want, types[0])
			}
			releaseRecs(parts)
			rec.Release()
		}
	}
}

func TestHashPartitionErrors(t *testing.T) {
	ctx := context.Background()
	mem := checkedMem(t)
	rec := buildRecord(mem, []column{{"k", tInt64, []any{int64(1)}}})
	defer rec.Release()
	for _, tc := range []struct {
		keys []string
		n    int
		want string
	}{
		{[]string{"k"}, 0, "into 0 parts"},
		{nil, 2, "at least one key"},
		{[]string{"x"}, 2, `no column "x"`},
	} {
		if _, err := HashPartition(ctx, rec, tc.keys, tc.n, mem); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("keys %v n %d: error %v, want %q", tc.keys, tc.n, err, tc.want)
		}
	}
}
