package parquet

// The files under testdata were written by DuckDB (see testdata/gen); the
// expected values below are written by hand from the generator's SQL.

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/io/storage"
)

// typesRows is the table "types" of the generator, as the reader returns
// it by default (decimals as float64).
func typesRows() map[string][]any {
	return map[string][]any{
		"id":    {int32(1), int32(2), int32(3), int32(4)},
		"b":     {true, false, nil, true},
		"i8":    {int8(-8), int8(-128), nil, int8(127)},
		"i16":   {int16(-16), int16(-32768), nil, int16(32767)},
		"i32":   {int32(-32), int32(math.MinInt32), nil, int32(math.MaxInt32)},
		"i64":   {int64(-64), int64(math.MinInt64), nil, int64(math.MaxInt64)},
		"u8":    {uint8(8), uint8(255), nil, uint8(0)},
		"u16":   {uint16(16), uint16(65535), nil, uint16(0)},
		"u32":   {uint32(32), uint32(math.MaxUint32), nil, uint32(0)},
		"u64":   {uint64(64), uint64(math.MaxUint64), nil, uint64(0)},
		"f32":   {float32(1.5), float32(-0.125), nil, float32(0)},
		"f64":   {-2.25, 1e300, nil, 0.0},
		"s":     {"alpha", "héllo, 世界", nil, ""},
		"bin":   {"\x00\x01\xff", "", nil, "abc"},
		"d":     {days("2024-02-29"), days("1900-01-01"), nil, days("1970-01-01")},
		"ts":    {ts("2024-02-29 12:34:56.789012Z", time.Microsecond), ts("1969-07-20 20:17:40Z", time.Microsecond), nil, int64(0)},
		"ts_ms": {ts("2024-02-29 12:34:56.789Z", time.Millisecond), ts("1969-07-20 20:17:40.5Z", time.Millisecond), nil, int64(0)},
		"ts_ns": {ts("2024-02-29 12:34:56.789012345Z", time.Nanosecond), ts("1969-07-20 20:17:40.000000001Z", time.Nanosecond), nil, int64(0)},
		"tstz":  {ts("2024-02-29 12:34:56.789012Z", time.Microsecond), ts("2000-01-01 00:00:00+05:00", time.Microsecond), nil, int64(0)},
		"dec4":  {12.34, -99.99, nil, 0.0},
		"dec18": {123456789012.345, -999999999999999.999, nil, 0.001},
		"dec38": {12345678901234567890.1234567891, -1234567890123456789012345678.0123456789, nil, 0.0000000001},
	}
}

var typesSchema = []struct {
	name string
	typ  string
}{
	{"id", "int32"}, {"b", "bool"}, {"i8", "int8"}, {"i16", "int16"}, {"i32", "int32"}, {"i64", "int64"},
	{"u8", "uint8"}, {"u16", "uint16"}, {"u32", "uint32"}, {"u64", "uint64"},
	{"f32", "float32"}, {"f64", "float64"}, {"s", "utf8"}, {"bin", "binary"}, {"d", "date32"},
	{"ts", "timestamp[us]"}, {"ts_ms", "timestamp[ms]"}, {"ts_ns", "timestamp[ns]"}, {"tstz", "timestamp[us, tz=UTC]"},
	{"dec4", "float64"}, {"dec18", "float64"}, {"dec38", "float64"},
}

func TestReadDuckDBTypes(t *testing.T) {
	for _, file := range []string{"types_snappy.parquet", "types_zstd.parquet", "types_gzip.parquet", "types_none.parquet", "types_v2.parquet"} {
		t.Run(file, func(t *testing.T) {
			got, plan := readAllParts(t, []string{filepath.Join("testdata", file)}, Options{})
			if n := plan.Schema.NumFields(); n != len(typesSchema) {
				t.Fatalf("%d fields, want %d: %s", n, len(typesSchema), plan.Schema)
			}
			for i, f := range plan.Schema.Fields() {
				if f.Name != typesSchema[i].name || f.Type.String() != typesSchema[i].typ || !f.Nullable {
					t.Errorf("field %d is %s %s nullable=%v, want %s %s nullable", i, f.Name, f.Type, f.Nullable, typesSchema[i].name, typesSchema[i].typ)
				}
			}
			for name, want := range typesRows() {
				if !equalValues(got[name], want) {
					t.Errorf("column %s = %v, want %v", name, got[name], want)
				}
			}
		})
	}
}

func TestReadDuckDBExactDecimals(t *testing.T) {
	got, plan := readAllParts(t, []string{"testdata/types_zstd.parquet"}, Options{ExactDecimals: true, Columns: []string{"dec4", "dec18", "dec38"}})
	wantTypes := []string{"decimal(4, 2)", "decimal(18, 3)", "decimal(38, 10)"}
	for i, f := range plan.Schema.Fields() {
		if f.Type.String() != wantTypes[i] {
			t.Errorf("%s is %s, want %s", f.Name, f.Type, wantTypes[i])
		}
	}
	want := map[string][]any{
		"dec4":  {"1234", "-9999", nil, "0"},
		"dec18": {"123456789012345", "-999999999999999999", nil, "1"},
		"dec38": {"123456789012345678901234567891", "-12345678901234567890123456780123456789", nil, "1"},
	}
	for name, w := range want {
		if !equalValues(got[name], w) {
			t.Errorf("%s = %v, want %v", name, got[name], w)
		}
	}
}

// encRows is the table "enc" of the generator.
func encRows(n int) map[string][]any {
	cols := map[string][]any{}
	for i := range n {
		cols["i"] = append(cols["i"], int32(i))
		cols["s_dict"] = append(cols["s_dict"], fmt.Sprintf("k%d", i%5))
		cols["s_plain"] = append(cols["s_plain"], fmt.Sprintf("value-%d", i))
		if i%7 == 0 {
			cols["s_null"] = append(cols["s_null"], nil)
		} else {
			cols["s_null"] = append(cols["s_null"], fmt.Sprintf("n%d", i%3))
		}
		cols["i_dict"] = append(cols["i_dict"], int64(i%4))
		if i%5 == 0 {
			cols["f_null"] = append(cols["f_null"], nil)
		} else {
			cols["f_null"] = append(cols["f_null"], float64(i)*1.5)
		}
	}
	return cols
}

func TestReadDuckDBEncodings(t *testing.T) {
	for _, tc := range []struct {
		file  string
		plain bool
		types map[string]string
	}{
		// Dictionary-encoded text comes as dictionaries, plain text as utf8.
		{"enc.parquet", false, map[string]string{"s_dict": "dictionary<values=utf8, indices=int32, ordered=false>", "s_plain": "utf8", "s_null": "dictionary<values=utf8, indices=int32, ordered=false>"}},
		{"enc_v2.parquet", false, map[string]string{"s_dict": "dictionary<values=utf8, indices=int32, ordered=false>", "s_plain": "utf8"}},
		{"enc.parquet", true, map[string]string{"s_dict": "utf8", "s_plain": "utf8", "s_null": "utf8"}},
	} {
		t.Run(fmt.Sprintf("%s/plain=%v", tc.file, tc.plain), func(t *testing.T) {
			got, plan := readAllParts(t, []string{filepath.Join("testdata", tc.file)}, Options{PlainStrings: tc.plain})
			for name, typ := range tc.types {
				f, _ := plan.Schema.FieldsByName(name)
				if len(f) != 1 || f[0].Type.String() != typ {
					t.Errorf("%s: %v, want type %s", name, f, typ)
				}
			}
			for name, want := range encRows(1000) {
				if !equalValues(got[name], want) {
					t.Errorf("column %s differs: got %v..., want %v...", name, got[name][:10], want[:10])
				}
			}
		})
	}
}

// TestPartsByWidthInMemory: parts are sized by what the columns take in
// memory. Column d (date32, 4 bytes a row, 50 values) is stored as
// dictionary indices of a few bits: by its pages, the whole file would be
// one part, read by one thread.
func TestPartsByWidthInMemory(t *testing.T) {
	ctx := context.Background()
	plan, err := PlanRead(ctx, storage.Local{}, []string{"testdata/stats.parquet"}, Options{Columns: []string{"d"}, TargetBytes: 2048*4 + 1})
	if err != nil {
		t.Fatal(err)
	}
	var groups [][]int
	for _, p := range plan.Parts {
		groups = append(groups, p.RowGroups)
	}
	if want := [][]int{{0}, {1}, {2}}; fmt.Sprint(groups) != fmt.Sprint(want) {
		t.Errorf("parts of row groups %v, want %v", groups, want)
	}
}

func TestReadDuckDBRowGroups(t *testing.T) {
	// stats.parquet: 5000 rows in row groups of 2048, 2048 and 904.
	for _, tc := range []struct {
		name   string
		opts   Options
		parts  int
		groups [][]int
	}{
		{"one part", Options{}, 1, [][]int{{0, 1, 2}}},
		{"part per row group", Options{TargetBytes: -1}, 3, [][]int{{0}, {1}, {2}}},
		{"small target", Options{TargetBytes: 1}, 3, [][]int{{0}, {1}, {2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, plan := readAllParts(t, []string{"testdata/stats.parquet"}, tc.opts)
			if len(plan.Parts) != tc.parts || plan.TotalRowGroups != 3 {
				t.Fatalf("%d parts of %d row groups, want %d of 3", len(plan.Parts), plan.TotalRowGroups, tc.parts)
			}
			for i, p := range plan.Parts {
				if !slices.Equal(p.RowGroups, tc.groups[i]) {
					t.Errorf("part %d has row groups %v, want %v", i, p.RowGroups, tc.groups[i])
				}
			}
			if len(got["id"]) != 5000 {
				t.Fatalf("%d rows, want 5000", len(got["id"]))
			}
			for i := range 5000 {
				want := map[string]any{
					"id":   int64(i),
					"name": fmt.Sprintf("name%05d", i),
					"late": any(nil),
					"f":    float64(i),
					"d":    days("2020-01-01") + int32(i/100),
					"grp":  fmt.Sprintf("g%d", i/1000),
				}
				if i >= 2048 {
					want["late"] = int64(i)
				}
				if i%2 == 0 {
					want["f"] = math.NaN()
				}
				for name, w := range want {
					if !equalValues([]any{got[name][i]}, []any{w}) {
						t.Fatalf("row %d: %s = %v, want %v", i, name, got[name][i], w)
					}
				}
			}
		})
	}
}

func TestReadDuckDBStatistics(t *testing.T) {
	// Row groups of stats.parquet: ids 0-2047, 2048-4095, 4096-4999; "late"
	// is null in the first; f has NaNs, so no statistics; grp is g0..g2,
	// g2..g4, g4.
	d := func(s string) time.Time { t, _ := time.Parse(time.DateOnly, s); return t }
	for _, tc := range []struct {
		name   string
		filter []Bound
		groups []int
	}{
		{"no filter", nil, []int{0, 1, 2}},
		{"id == 3000", []Bound{{"id", "==", 3000}}, []int{1}},
		{"id == 2047.5", []Bound{{"id", "==", 2047.5}}, nil},
		{"id > 2047.5", []Bound{{"id", ">", 2047.5}}, []int{1, 2}},
		{"id > 4095", []Bound{{"id", ">", int64(4095)}}, []int{2}},
		{"id >= 4095", []Bound{{"id", ">=", uint8(255)}, {"id", ">=", 4095}}, []int{1, 2}},
		{"id < 0", []Bound{{"id", "<", 0}}, nil},
		{"id <= 0", []Bound{{"id", "<=", 0.0}}, []int{0}},
		{"id != 5", []Bound{{"id", "!=", 5}}, []int{0, 1, 2}},
		{"id between", []Bound{{"id", ">", 100}, {"id", "<", 2100}}, []int{0, 1}},
		{"late is null in group 0", []Bound{{"late", ">", -1}}, []int{1, 2}},
		{"late != 1 skips the null group", []Bound{{"late", "!=", 1}}, []int{1, 2}},
		{"NaN column keeps all", []Bound{{"f", ">", 1e9}}, []int{0, 1, 2}},
		{"NaN bound keeps all", []Bound{{"id", "<", math.NaN()}}, []int{0, 1, 2}},
		{"name", []Bound{{"name", ">=", "name04500"}}, []int{2}},
		{"name prefix", []Bound{{"name", "<", "name0"}}, nil},
		{"grp", []Bound{{"grp", "==", "g3"}}, []int{1}},
		{"grp bytes", []Bound{{"grp", "==", []byte("g4")}}, []int{1, 2}},
		{"date", []Bound{{"d", ">", d("2020-02-10")}}, []int{2}},
		{"date mid-day", []Bound{{"d", "<", d("2020-01-21").Add(time.Hour)}}, []int{0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, plan := readAllParts(t, []string{"testdata/stats.parquet"}, Options{Filter: tc.filter, TargetBytes: -1})
			var groups []int
			for _, p := range plan.Parts {
				groups = append(groups, p.RowGroups...)
			}
			if !slices.Equal(groups, tc.groups) {
				t.Errorf("row groups %v, want %v", groups, tc.groups)
			}
			if plan.SkippedRowGroups != 3-len(tc.groups) || plan.TotalRowGroups != 3 {
				t.Errorf("skipped %d of %d, want %d of 3", plan.SkippedRowGroups, plan.TotalRowGroups, 3-len(tc.groups))
			}
		})
	}
}

func TestReadDuckDBHive(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    Options
		ids     []int
		skipped int
	}{
		{"all", Options{}, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 0},
		{"year", Options{Filter: []Bound{{"year", "==", 2021}}}, []int{1, 3, 5, 7, 9, 11}, 3},
		{"region", Options{Filter: []Bound{{"region", "==", "a b/c"}}}, []int{2, 5, 8, 11}, 4},
		{"both", Options{Filter: []Bound{{"region", ">", "eu"}, {"year", "<", 2021}}}, []int{4, 10}, 5},
		{"projected", Options{Columns: []string{"region", "id"}}, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, plan := readAllParts(t, []string{"testdata/hive/**/*.parquet"}, tc.opts)
			if plan.SkippedFiles != tc.skipped {
				t.Errorf("skipped %d files, want %d", plan.SkippedFiles, tc.skipped)
			}
			var ids []int
			for i, id := range got["id"] {
				n := int(id.(int32))
				ids = append(ids, n)
				region := map[int]string{0: "eu", 1: "us", 2: "a b/c"}[n%3]
				if r := got["region"][i]; r != region {
					t.Errorf("id %d: region %v, want %s", n, r, region)
				}
				if y, ok := got["year"]; ok && y[i] != int64(2020+n%2) {
					t.Errorf("id %d: year %v, want %d", n, y[i], 2020+n%2)
				}
				if v, ok := got["v"]; ok && v[i] != int64(n*10) {
					t.Errorf("id %d: v %v, want %d", n, v[i], n*10)
				}
			}
			slices.Sort(ids)
			if !slices.Equal(ids, tc.ids) {
				t.Errorf("ids %v, want %v", ids, tc.ids)
			}
			if tc.opts.Columns != nil {
				var names []string
				for _, f := range plan.Schema.Fields() {
					names = append(names, f.Name)
				}
				if !slices.Equal(names, tc.opts.Columns) {
					t.Errorf("columns %v, want %v", names, tc.opts.Columns)
				}
			} else {
				f := plan.Schema.Fields()
				if f[2].Name != "year" || f[2].Type.ID() != arrow.INT64 || f[3].Name != "region" || f[3].Type.ID() != arrow.DICTIONARY {
					t.Errorf("schema %s, want year int64 and region dictionary last", plan.Schema)
				}
			}
		})
	}
}
