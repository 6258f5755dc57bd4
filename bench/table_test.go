package main

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func mustTable(t *testing.T, names []string, rows ...[]any) *table {
	t.Helper()
	tb := newTable(names...)
	for _, r := range rows {
		if err := tb.appendRow(r...); err != nil {
			t.Fatal(err)
		}
	}
	return tb
}

func TestCompareTables(t *testing.T) {
	names := []string{"k", "n", "x"}
	want := func() *table {
		return mustTable(t, names, []any{"a", int64(1), 1.5}, []any{"b", int64(2), 1e10}, []any{"c", nil, 0.0})
	}
	tests := []struct {
		name    string
		got     *table
		wantErr string // "" for equal
	}{
		{"same", want(), ""},
		{"other row order", mustTable(t, names, []any{"c", nil, 0.0}, []any{"b", int64(2), 1e10}, []any{"a", int64(1), 1.5}), ""},
		{"float within tolerance", mustTable(t, names, []any{"a", int64(1), 1.5 * (1 + 1e-12)}, []any{"b", int64(2), 1e10 + 1e-3}, []any{"c", nil, 1e-13}), ""},
		{"int off by one", mustTable(t, names, []any{"a", int64(2), 1.5}, []any{"b", int64(2), 1e10}, []any{"c", nil, 0.0}), "1 of Shoal's 3 rows have no equal row"},
		{"float beyond tolerance", mustTable(t, names, []any{"a", int64(1), 1.5}, []any{"b", int64(2), 1e10 + 100}, []any{"c", nil, 0.0}), "row with the same k, n:\n    shoal: k=\"b\" n=2 x=1.00000001e+10\n    peer:  k=\"b\" n=2 x=1e+10"},
		{"duplicate row", mustTable(t, names, []any{"a", int64(1), 1.5}, []any{"a", int64(1), 1.5}, []any{"c", nil, 0.0}), "only in the peer's answer: k=\"b\""},
		{"null for a value", mustTable(t, names, []any{"a", int64(1), 1.5}, []any{"b", int64(2), 1e10}, []any{"c", int64(0), 0.0}), "n=0"},
		{"row missing", mustTable(t, names, []any{"a", int64(1), 1.5}, []any{"b", int64(2), 1e10}), "2 rows, want 3"},
		{"column name", mustTable(t, []string{"k", "n", "y"}, []any{"a", int64(1), 1.5}), "columns [k n y], want [k n x]"},
		{"string for int", mustTable(t, names, []any{"a", "1", 1.5}, []any{"b", "2", 1e10}, []any{"c", nil, 0.0}), "column n holds string values, want int"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := compareTables(tt.got, want())
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected difference: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestCompareIntWithFloat(t *testing.T) {
	got := mustTable(t, []string{"v"}, []any{int64(3)})
	if err := compareTables(got, mustTable(t, []string{"v"}, []any{3.0})); err != nil {
		t.Fatal(err)
	}
	if err := compareTables(got, mustTable(t, []string{"v"}, []any{3.5})); err == nil {
		t.Fatal("3 equals 3.5")
	}
}

func TestCloseEnough(t *testing.T) {
	for _, c := range []struct {
		a, b float64
		want bool
	}{
		{1, 1, true},
		{1, 1 + 1e-10, true},
		{1, 1 + 1e-8, false},
		{-1e6, -1e6 * (1 + 5e-10), true},
		{0, 1e-13, true},
		{0, 1e-6, false},
		{math.NaN(), math.NaN(), true},
		{math.NaN(), 1, false},
		{math.Inf(1), math.Inf(1), true},
		{math.Inf(1), math.MaxFloat64, false},
	} {
		if got := closeEnough(c.a, c.b); got != c.want {
			t.Errorf("closeEnough(%g, %g) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestTableFromArrow(t *testing.T) {
	mem := memory.NewGoAllocator()
	db := array.NewDictionaryBuilder(mem, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}).(*array.BinaryDictionaryBuilder)
	defer db.Release()
	db.AppendString("b")
	db.AppendNull()
	db.AppendString("a")
	dict := db.NewArray()
	defer dict.Release()
	ib := array.NewInt32Builder(mem)
	defer ib.Release()
	ib.AppendValues([]int32{1, 2, 3}, nil)
	ints := ib.NewArray()
	defer ints.Release()
	tb := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Microsecond})
	defer tb.Release()
	tb.AppendValues([]arrow.Timestamp{1, 2, 3}, nil)
	ts := tb.NewArray()
	defer ts.Release()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: dict.DataType(), Nullable: true}, {Name: "i", Type: ints.DataType()}, {Name: "t", Type: ts.DataType()},
	}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{dict, ints, ts}, 3)
	defer rec.Release()
	at := array.NewTableFromRecords(schema, []arrow.RecordBatch{rec})
	defer at.Release()
	got, err := tableFromArrow(at)
	if err != nil {
		t.Fatal(err)
	}
	want := mustTable(t, []string{"s", "i", "t"},
		[]any{"b", int64(1), nil}, []any{nil, int64(2), nil}, []any{"a", int64(3), nil})
	// Timestamps: microseconds become nanoseconds.
	want.cols[2] = &column{name: "t", kind: kindTime, ints: []int64{1000, 2000, 3000}, null: []bool{false, false, false}}
	if err := compareTables(got, want); err != nil {
		t.Fatal(err)
	}

	fp, err := fingerprintArrow(at)
	if err != nil {
		t.Fatal(err)
	}
	wantFP := mustTable(t, fingerprintColumns,
		[]any{"s", int64(2), int64(1), int64(0), 0.0, int64(2), `"a"`, `"b"`},
		[]any{"i", int64(3), int64(0), int64(6), 0.0, int64(0), "1", "3"},
		[]any{"t", int64(3), int64(0), int64(6000), 0.0, int64(0), "1970-01-01T00:00:00.000001Z", "1970-01-01T00:00:00.000003Z"})
	if err := compareTables(fp, wantFP); err != nil {
		t.Fatal(err)
	}
}

func TestRowsName(t *testing.T) {
	for n, want := range map[int]string{1e7: "1e7", 100000: "1e5", 2_500_000: "2.5e6", 10: "10", 100: "100", 1000: "1e3", 12345: "12345"} {
		if got := rowsName(n); got != want {
			t.Errorf("rowsName(%d) = %q, want %q", n, got, want)
		}
		back, err := parseRows(rowsName(n))
		if err != nil || back != n {
			t.Errorf("parseRows(%q) = %d, %v", rowsName(n), back, err)
		}
	}
	for _, bad := range []string{"", "x", "0", "1.5", "-3", "1e11"} {
		if _, err := parseRows(bad); err == nil {
			t.Errorf("parseRows(%q): no error", bad)
		}
	}
}

func TestAppendMillionths(t *testing.T) {
	for v, want := range map[int64]string{0: "0", 7_000_000: "7", 12_500_000: "12.5", 1: "0.000001", 99_999_999: "99.999999", 3_040_000: "3.04"} {
		if got := string(appendMillionths(nil, v)); got != want {
			t.Errorf("appendMillionths(%d) = %q, want %q", v, got, want)
		}
	}
}

func TestSplitKeys(t *testing.T) {
	r := joinRand{src: newPCG(1)}
	k := r.splitKeys(1000)
	if len(k.both) != 900 || len(k.left) != 100 || len(k.right) != 100 {
		t.Fatalf("sizes %d, %d, %d", len(k.both), len(k.left), len(k.right))
	}
	seen := map[int64]bool{}
	for _, s := range [][]int64{k.both, k.left, k.right} {
		for _, v := range s {
			if seen[v] || v < 1 || v > 2200 {
				t.Fatalf("key %d repeated or out of 1..2200", v)
			}
			seen[v] = true
		}
	}
}

// TestWrongAnswerFails checks that a case whose Shoal answer differs from
// the peer's fails, however fast.
func TestWrongAnswerFails(t *testing.T) {
	h := &harness{cfg: config{runs: 2}, meter: newPeakMeter(), stderr: &strings.Builder{}}
	answer := func(v int64) *engine {
		return &engine{
			run: func(context.Context) (any, error) { return v, nil },
			answer: func(_ context.Context, x any) (*table, error) {
				tb := newTable("v")
				return tb, tb.appendRow(x)
			},
		}
	}
	c := &benchCase{suite: "test", name: "wrong", shoal: answer(41), peer: answer(42), peerName: "peer"}
	res := h.runCase(context.Background(), c)
	if !res.failed || res.check != "FAIL" || !strings.Contains(res.detail, "v=41") {
		t.Fatalf("wrong answer: failed %v, check %q, detail %q", res.failed, res.check, res.detail)
	}
	c = &benchCase{suite: "test", name: "right", shoal: answer(42), peer: answer(42), peerName: "peer"}
	res = h.runCase(context.Background(), c)
	if res.failed || res.check != "ok" || len(res.shoal) != 2 || len(res.peer) != 2 {
		t.Fatalf("right answer: %+v", res)
	}
}
