package dftest

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

func TestBuildTypes(t *testing.T) {
	tests := []struct {
		col  Column
		typ  string
		vals string // the array as Arrow prints it
	}{
		{Int64s("a", 1, int8(-2), uint32(3), nil), "int64", "[1 -2 3 (null)]"},
		{Int64s("a", 1, nil).As(arrow.PrimitiveTypes.Int8), "int8", "[1 (null)]"},
		{Int64s("a", 65535).As(arrow.PrimitiveTypes.Uint16), "uint16", "[65535]"},
		{Float64s("x", 1, 2.5, math.NaN(), nil), "float64", "[1 2.5 NaN (null)]"},
		{Float64s("x", 0.5).As(arrow.PrimitiveTypes.Float32), "float32", "[0.5]"},
		{Strings("s", "a", []byte("b"), nil), "utf8", `["a" "b" (null)]`},
		{Strings("s", "a").As(arrow.BinaryTypes.LargeString), "large_utf8", `["a"]`},
		{Strings("s", "a").As(arrow.BinaryTypes.StringView), "string_view", `["a"]`},
		{Strings("s", "a").As(arrow.BinaryTypes.Binary), "binary", `["a"]`},
		{Strings("s", "a", "b", "a", nil).As(dictString), "dictionary<values=utf8, indices=int16, ordered=false>", `{ dictionary: ["a" "b"]
  indices: [0 1 0 (null)] }`},
		{Bools("b", true, false, nil), "bool", "[true false (null)]"},
		{Timestamps("t", "2024-03-01T12:00:00+01:00", time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), "2024-03-01 10:00", nil), "timestamp[us, tz=UTC]",
			"[1709290800000000 1709251200000000 1709287200000000 (null)]"},
		{Timestamps("t", "2024-03-01").As(&arrow.TimestampType{Unit: arrow.Second}), "timestamp[s]", "[1709251200]"},
		{Dates("d", "2024-02-29", time.Date(2024, 3, 1, 23, 0, 0, 0, time.UTC), nil), "date32", "[2024-02-29 2024-03-01 (null)]"},
		{Dates("d", "2024-02-29").As(arrow.FixedWidthTypes.Date64), "date64", "[2024-02-29]"},
		{Durations("d", "1h", 2*time.Millisecond, nil), "duration[ns]", "[3600000000000 2000000 (null)]"},
		{Durations("d", "1h").As(arrow.FixedWidthTypes.Duration_s), "duration[s]", "[3600]"},
		{Strings("t", "12:30:00", nil).As(arrow.FixedWidthTypes.Time64us), "time64[us]", "[45000000000 (null)]"},
		{Strings("n", nil, nil).As(arrow.Null), "null", "[(null) (null)]"},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			rec := Record(t, tt.col)
			col := rec.Column(0)
			if got := col.DataType().String(); got != tt.typ {
				t.Errorf("type %s, want %s", got, tt.typ)
			}
			if got := col.String(); got != tt.vals {
				t.Errorf("values %s, want %s", got, tt.vals)
			}
			if rec.ColumnName(0) != tt.col.name {
				t.Errorf("name %q, want %q", rec.ColumnName(0), tt.col.name)
			}
		})
	}
}

func TestBuildErrors(t *testing.T) {
	tests := []struct {
		name string
		cols []Column
		err  string
	}{
		{"float in int column", []Column{Int64s("a", 1, 1.5)}, `column "a", value 1: cannot put 1.5 (float64) in a column of int64`},
		{"overflow", []Column{Int64s("a", 300).As(arrow.PrimitiveTypes.Int8)}, `column "a", value 0: cannot put 300 (int) in a column of int8`},
		{"negative unsigned", []Column{Int64s("a", -1).As(arrow.PrimitiveTypes.Uint8)}, `column "a", value 0: cannot put -1 (int) in a column of uint8`},
		{"uint64 too big", []Column{Int64s("a", uint64(math.MaxUint64))}, `column "a", value 0: cannot put 0xffffffffffffffff (uint64) in a column of int64`},
		{"number in string column", []Column{Strings("s", 1)}, `column "s", value 0: cannot put 1 (int) in a column of utf8`},
		{"bad time", []Column{Timestamps("t", "yesterday")}, `column "t", value 0: cannot read "yesterday" as a time; write RFC 3339 (2024-03-01T12:30:00Z) or 2024-03-01`},
		{"bad duration", []Column{Durations("d", 5)}, `column "d", value 0: cannot use 5 (int) as a duration; use time.Duration or a string such as "1h30m"`},
		{"inexact duration", []Column{Durations("d", "1500ms").As(arrow.FixedWidthTypes.Duration_s)}, `column "d", value 0: 1.5s is not a whole number of s`},
		{"lengths", []Column{Int64s("a", 1, 2), Strings("b", "x")}, `column "b" has 1 values, but column "a" has 2`},
		{"no type", []Column{{name: "z"}}, `column 0 ("z") has no type; make it with Int64s, Strings, ...`},
		{"unsupported type", []Column{Int64s("a", 1).As(arrow.ListOf(arrow.PrimitiveTypes.Int64))}, `column "a", value 0: dftest cannot build columns of list<item: int64, nullable>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, err := NewRecord(tt.cols...)
			if err == nil {
				rec.Release()
				t.Fatalf("no error, want %q", tt.err)
			}
			if got := strings.TrimPrefix(err.Error(), "dftest: "); got != tt.err {
				t.Errorf("error %q,\nwant  %q", got, tt.err)
			}
		})
	}
}

func TestEmptyTable(t *testing.T) {
	tbl := Table(t)
	if tbl.NumCols() != 0 || tbl.NumRows() != 0 {
		t.Errorf("empty table has %d columns and %d rows", tbl.NumCols(), tbl.NumRows())
	}
	if d := Diff(tbl, Table(t)); d != "" {
		t.Errorf("empty tables differ: %s", d)
	}
}
