package csv

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/io/storage"
)

func TestRead(t *testing.T) {
	ts := func(unit arrow.TimeUnit, tz string) arrow.DataType {
		return &arrow.TimestampType{Unit: unit, TimeZone: tz}
	}
	tests := []struct {
		name   string
		files  map[string]string // default path "a.csv"
		paths  []string
		opts   Options
		ro     ReadOptions
		schema string
		rows   []string
		err    []string // substrings of the error
	}{
		{
			name:   "inferred types",
			files:  map[string]string{"a.csv": "i,f,b,d,t,s\n1,1.5,true,2020-01-02,2020-01-02T03:04:05,x\n-2,3,False,1999-12-31,2020-01-02 03:04:05.123456789,y z\n"},
			schema: "i:int64,f:float64,b:bool,d:date32,t:timestamp[ns],s:utf8",
			rows:   []string{"1|1.5|true|2020-01-02|2020-01-02T03:04:05|x", "-2|3|false|1999-12-31|2020-01-02T03:04:05.123456789|y z"},
		},
		{
			name:   "bool cases",
			files:  map[string]string{"a.csv": "b\ntrue\nTrue\nTRUE\nfalse\nFalse\nFALSE\n"},
			schema: "b:bool",
			rows:   []string{"true", "true", "true", "false", "false", "false"},
		},
		{
			name:   "timestamps with zone UTC",
			files:  map[string]string{"a.csv": "t\n2020-01-01T00:00:00Z\n2020-01-01T03:00:00+02:00\n"},
			schema: "t:timestamp[ns, tz=UTC]",
			rows:   []string{"2020-01-01T00:00:00Z", "2020-01-01T01:00:00Z"},
		},
		{
			name:   "timestamps with one offset keep it",
			files:  map[string]string{"a.csv": "t\n2020-01-01T02:00:00+02:00\n2020-01-01T03:30:00.5+0200\n"},
			schema: "t:timestamp[ns, tz=+02:00]",
			rows:   []string{"2020-01-01T02:00:00+02:00", "2020-01-01T03:30:00.5+02:00"},
		},
		{
			name:   "mixed zoned and naive timestamps are strings",
			files:  map[string]string{"a.csv": "t\n2020-01-01T02:00:00+02:00\n2020-01-01T03:30:00\n"},
			schema: "t:utf8",
			rows:   []string{"2020-01-01T02:00:00+02:00", "2020-01-01T03:30:00"},
		},
		{
			name:   "dates and timestamps mixed are timestamps",
			files:  map[string]string{"a.csv": "t\n2020-01-01\n2020-01-01 10:30\n"},
			schema: "t:timestamp[ns]",
			rows:   []string{"2020-01-01T00:00:00", "2020-01-01T10:30:00"},
		},
		{
			name:   "invalid dates are strings",
			files:  map[string]string{"a.csv": "d\n2020-02-30\n"},
			schema: "d:utf8",
			rows:   []string{"2020-02-30"},
		},
		{
			name:   "ints and floats are floats; big ints are strings",
			files:  map[string]string{"a.csv": "a,b,c\n1,99999999999999999999,1\n2.5,1,1e3\n"},
			schema: "a:float64,b:utf8,c:float64",
			rows:   []string{"1|99999999999999999999|1", "2.5|1|1000"},
		},
		{
			name:   "null markers",
			files:  map[string]string{"a.csv": "a,b,c,d\n1,NA,,x\nnan,2.5,N/A,NULL\nNaN,null,,\n"},
			schema: "a:int64,b:float64,c:utf8,d:utf8",
			rows:   []string{"1|<null>|<null>|x", "<null>|2.5|<null>|<null>", "<null>|<null>|<null>|<null>"},
		},
		{
			name:   "quoted text in string columns is never null",
			files:  map[string]string{"a.csv": "s,n\n\"\",\"\"\n\"NA\",\"NA\"\n"},
			schema: "s:utf8,n:int64",
			opts:   Options{Types: map[string]arrow.DataType{"n": arrow.PrimitiveTypes.Int64}},
			rows:   []string{"|<null>", "NA|<null>"},
		},
		{
			name:   "custom null values",
			files:  map[string]string{"a.csv": "a,b\n-999,-\n3,NA\n"},
			opts:   Options{NullValues: []string{"-999", "-"}},
			schema: "a:int64,b:utf8",
			rows:   []string{"<null>|<null>", "3|NA"},
		},
		{
			name:   "quoting",
			files:  map[string]string{"a.csv": "a,b\n\"x,y\",\"he said \"\"hi\"\"\"\n\"line\nbreak\",\"\"\"\"\n"},
			schema: "a:utf8,b:utf8",
			rows:   []string{"x,y|he said \"hi\"", "line\nbreak|\""},
		},
		{
			name:   "CRLF",
			files:  map[string]string{"a.csv": "a,b\r\n1,x\r\n2,\"y\"\r\n\r\n"},
			schema: "a:int64,b:utf8",
			rows:   []string{"1|x", "2|y"},
		},
		{
			name:   "BOM",
			files:  map[string]string{"a.csv": "\xef\xbb\xbfa,b\n1,2\n"},
			schema: "a:int64,b:int64",
			rows:   []string{"1|2"},
		},
		{
			name:   "BOM without header",
			files:  map[string]string{"a.csv": "\xef\xbb\xbf1,2\n"},
			opts:   Options{NoHeader: true},
			schema: "column_0:int64,column_1:int64",
			rows:   []string{"1|2"},
		},
		{
			name:   "no trailing newline",
			files:  map[string]string{"a.csv": "a,b\n1,x\n2,y"},
			schema: "a:int64,b:utf8",
			rows:   []string{"1|x", "2|y"},
		},
		{
			name:   "delimiter at the end",
			files:  map[string]string{"a.csv": "a,b\n1,"},
			schema: "a:int64,b:utf8",
			rows:   []string{"1|<null>"},
		},
		{
			name:   "no trailing newline after quote",
			files:  map[string]string{"a.csv": "a,b\n1,\"x\""},
			schema: "a:int64,b:utf8",
			rows:   []string{"1|x"},
		},
		{
			name:   "blank lines",
			files:  map[string]string{"a.csv": "a,b\n\n1,x\n\r\n2,y\n\n\n"},
			schema: "a:int64,b:utf8",
			rows:   []string{"1|x", "2|y"},
		},
		{
			name:   "no header",
			files:  map[string]string{"a.csv": "1,x\n2,y\n"},
			opts:   Options{NoHeader: true},
			schema: "column_0:int64,column_1:utf8",
			rows:   []string{"1|x", "2|y"},
		},
		{
			name:   "no header with names",
			files:  map[string]string{"a.csv": "1,x\n2,y\n"},
			opts:   Options{NoHeader: true, Columns: []string{"n", "s"}},
			schema: "n:int64,s:utf8",
			rows:   []string{"1|x", "2|y"},
		},
		{
			name:   "names replace header",
			files:  map[string]string{"a.csv": "a,b\n1,x\n"},
			opts:   Options{Columns: []string{"n", "s"}},
			schema: "n:int64,s:utf8",
			rows:   []string{"1|x"},
		},
		{
			name:  "wrong number of names",
			files: map[string]string{"a.csv": "a,b\n1,x\n"},
			opts:  Options{Columns: []string{"n"}},
			err:   []string{"1 names in Options.Columns", "a.csv has 2 columns"},
		},
		{
			name:   "empty and repeated header names",
			files:  map[string]string{"a.csv": "a,,a,a\n1,2,3,4\n"},
			schema: "a:int64,column_1:int64,a.1:int64,a.2:int64",
			rows:   []string{"1|2|3|4"},
		},
		{
			name:   "semicolon and single quote",
			files:  map[string]string{"a.csv": "a;b\n'x;y';2\n'it''s';3\n"},
			opts:   Options{Delimiter: ';', Quote: '\''},
			schema: "a:utf8,b:int64",
			rows:   []string{"x;y|2", "it's|3"},
		},
		{
			name:   "tab",
			files:  map[string]string{"a.csv": "a\tb\n1\tx y\n"},
			opts:   Options{Delimiter: '\t'},
			schema: "a:int64,b:utf8",
			rows:   []string{"1|x y"},
		},
		{
			name:  "delimiter equals quote",
			files: map[string]string{"a.csv": "a\n"},
			opts:  Options{Delimiter: '"'},
			err:   []string{"delimiter and quote"},
		},
		{
			name:  "explicit schema",
			files: map[string]string{"a.csv": "a,b,c\n1,2,x\n"},
			opts: Options{Schema: arrow.NewSchema([]arrow.Field{
				{Name: "a", Type: arrow.PrimitiveTypes.Int8}, {Name: "b", Type: arrow.PrimitiveTypes.Float32},
				{Name: "c", Type: arrow.BinaryTypes.String}}, nil)},
			schema: "a:int8,b:float32,c:utf8",
			rows:   []string{"1|2|x"},
		},
		{
			name:  "schema names must match header",
			files: map[string]string{"a.csv": "a,b\n1,2\n"},
			opts: Options{Schema: arrow.NewSchema([]arrow.Field{
				{Name: "a", Type: arrow.PrimitiveTypes.Int8}, {Name: "x", Type: arrow.PrimitiveTypes.Int8}}, nil)},
			err: []string{"column 2 of a.csv is \"b\"", "Options.Schema calls it \"x\""},
		},
		{
			name:  "types override",
			files: map[string]string{"a.csv": "a,b,c,d,e,f,g\n1,2,3,4,2020-01-01T00:00:01.5,x,1\n"},
			opts: Options{Types: map[string]arrow.DataType{
				"a": arrow.PrimitiveTypes.Int32, "b": arrow.PrimitiveTypes.Uint8, "c": arrow.BinaryTypes.String,
				"d": arrow.PrimitiveTypes.Float64, "e": ts(arrow.Millisecond, ""), "g": arrow.FixedWidthTypes.Boolean,
				"f": &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}}},
			schema: "a:int32,b:uint8,c:utf8,d:float64,e:timestamp[ms],f:dictionary<values=utf8, indices=int32, ordered=false>,g:bool",
			rows:   []string{"1|2|3|4|2020-01-01T00:00:01.5|x|true"},
		},
		{
			name:  "unsupported type",
			files: map[string]string{"a.csv": "a\n1\n"},
			opts:  Options{Types: map[string]arrow.DataType{"a": arrow.BinaryTypes.Binary}},
			err:   []string{`column "a"`, "binary is not supported"},
		},
		{
			name:  "types names unknown column",
			files: map[string]string{"a.csv": "a\n1\n"},
			opts:  Options{Types: map[string]arrow.DataType{"zz": arrow.BinaryTypes.String}},
			err:   []string{`Options.Types names column "zz"`, `["a"]`},
		},
		{
			name:   "out of range for int8",
			files:  map[string]string{"a.csv": "a\n1\n300\n"},
			opts:   Options{Types: map[string]arrow.DataType{"a": arrow.PrimitiveTypes.Int8}},
			err:    []string{"a.csv line 3, column 1 \"a\"", "out of range for int8", `"300"`},
			schema: "",
		},
		{
			name:   "int32 with nulls and extremes",
			files:  map[string]string{"a.csv": "a\n1\nNA\n-2147483648\n2147483647\n\"7\"\n"},
			opts:   Options{Types: map[string]arrow.DataType{"a": arrow.PrimitiveTypes.Int32}},
			schema: "a:int32",
			rows:   []string{"1", "<null>", "-2147483648", "2147483647", "7"},
		},
		{
			name:  "out of range for int32",
			files: map[string]string{"a.csv": "a\n1\n2147483648\n"},
			opts:  Options{Types: map[string]arrow.DataType{"a": arrow.PrimitiveTypes.Int32}},
			err:   []string{"a.csv line 3, column 1 \"a\"", "out of range for int32", `"2147483648"`},
		},
		{
			name:   "dictionary",
			files:  map[string]string{"a.csv": "k,v\nx,1\ny,2\nx,3\n,4\n"},
			opts:   Options{Dictionary: []string{"k"}},
			schema: "k:dictionary<values=utf8, indices=int32, ordered=false>,v:int64",
			rows:   []string{"x|1", "y|2", "x|3", "<null>|4"},
		},
		{
			name:  "dictionary of a number column",
			files: map[string]string{"a.csv": "k,v\n1,1\n"},
			opts:  Options{Dictionary: []string{"k"}},
			err:   []string{`column "k" in Options.Dictionary has type int64`},
		},
		{
			name:   "parse dates with layouts",
			files:  map[string]string{"a.csv": "d,t,z,i\n31/12/2020,2020-12-31 23:59,2020-12-31 23:59 +0100,2021-01-02\n,,,\n"},
			opts:   Options{ParseDates: map[string]string{"d": "02/01/2006", "t": "2006-01-02 15:04", "z": "2006-01-02 15:04 -0700", "i": ""}},
			schema: "d:date32,t:timestamp[ns],z:timestamp[ns, tz=UTC],i:date32",
			rows:   []string{"2020-12-31|2020-12-31T23:59:00|2020-12-31T22:59:00Z|2021-01-02", "<null>|<null>|<null>|<null>"},
		},
		{
			name:  "parse dates: value does not fit",
			files: map[string]string{"a.csv": "d\n31/12/2020\n2020-12-31\n"},
			opts:  Options{ParseDates: map[string]string{"d": "02/01/2006"}},
			err:   []string{"a.csv line 3, column 1 \"d\"", `does not fit layout "02/01/2006"`, `"2020-12-31"`},
		},
		{
			name:  "parse dates ISO: not ISO",
			files: map[string]string{"a.csv": "d\n31/12/2020\n"},
			opts:  Options{ParseDates: map[string]string{"d": ""}},
			err:   []string{`column "d" in Options.ParseDates`, `"31/12/2020" is not an ISO 8601`},
		},
		{
			name:   "projection",
			files:  map[string]string{"a.csv": "a,b,c\n1,x,2.5\n2,y,3.5\n"},
			ro:     ReadOptions{Columns: []string{"c", "a"}},
			schema: "c:float64,a:int64",
			rows:   []string{"2.5|1", "3.5|2"},
		},
		{
			name:   "projection of no column counts rows",
			files:  map[string]string{"a.csv": "a,b\n1,x\n2,y\n\n3,z"},
			ro:     ReadOptions{Columns: []string{}},
			schema: "",
			rows:   []string{"", "", ""},
		},
		{
			name:  "projection of a missing column",
			files: map[string]string{"a.csv": "a,b\n1,2\n"},
			ro:    ReadOptions{Columns: []string{"a", "zz"}},
			err:   []string{`no column "zz"`, `["a" "b"]`},
		},
		{
			name:   "bad values in unselected columns are not read",
			files:  map[string]string{"a.csv": "a,b\n1,2\n2,x\n"},
			opts:   Options{Types: map[string]arrow.DataType{"b": arrow.PrimitiveTypes.Int64}},
			ro:     ReadOptions{Columns: []string{"a"}},
			schema: "a:int64",
			rows:   []string{"1", "2"},
		},
		{
			name:  "too many fields",
			files: map[string]string{"a.csv": "a,b\n1,\"multi\nline\"\n2,x,3\n"},
			err:   []string{"a.csv line 4:", "wrong number of fields: 3 fields, want 2", `"2,x,3"`},
		},
		{
			name:  "too few fields",
			files: map[string]string{"a.csv": "a,b\n1,x\n2\n"},
			err:   []string{"a.csv line 3:", "1 field, want 2"},
		},
		{
			name:  "bad value",
			files: map[string]string{"a.csv": "a,b\n1,x\nzz,y\n"},
			opts:  Options{Types: map[string]arrow.DataType{"a": arrow.PrimitiveTypes.Int64}},
			err:   []string{"a.csv line 3, column 1 \"a\"", "not an integer", `"zz"`},
		},
		{
			name:  "unterminated quote",
			files: map[string]string{"a.csv": "a,b\n1,x\n2,\"abc\n"},
			err:   []string{"a.csv line 3, column 2 \"b\"", "quoted field not terminated"},
		},
		{
			name:  "quote inside unquoted field",
			files: map[string]string{"a.csv": "a,b\n1,x\n2,ab\"c\n"},
			err:   []string{"a.csv line 3, column 2 \"b\"", "quote in an unquoted field"},
		},
		{
			name:  "text after closing quote",
			files: map[string]string{"a.csv": "a,b\n1,x\n2,\"ab\"c\n"},
			err:   []string{"a.csv line 3, column 2 \"b\"", "text after the closing quote"},
		},
		{
			name:  "long text is truncated",
			files: map[string]string{"a.csv": "a\n1\n" + strings.Repeat("x", 100) + "\n"},
			opts:  Options{Types: map[string]arrow.DataType{"a": arrow.PrimitiveTypes.Int64}},
			err:   []string{"line 3", `"` + strings.Repeat("x", 60) + `..."`},
		},
		{
			name:   "header only",
			files:  map[string]string{"a.csv": "a,b\n"},
			schema: "a:utf8,b:utf8",
			rows:   nil,
		},
		{
			name:  "empty file",
			files: map[string]string{"a.csv": ""},
			err:   []string{"a.csv", "empty file"},
		},
		{
			name:   "empty file with a schema",
			files:  map[string]string{"a.csv": ""},
			opts:   Options{Schema: arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil)},
			schema: "a:int64",
		},
		{
			name:   "glob of files",
			files:  map[string]string{"a1.csv": "a,b\n1,x\n", "a2.csv": "a,b\n2,y\n3,z", "a3.csv": "a,b\n", "a4.csv": ""},
			paths:  []string{"a*.csv"},
			schema: "a:int64,b:utf8",
			rows:   []string{"1|x", "2|y", "3|z"},
		},
		{
			name:   "types come from every file of a glob",
			files:  map[string]string{"b1.csv": "a,b\n7,x\n", "b2.csv": "a,b\n-3.5,\n"},
			paths:  []string{"b*.csv"},
			schema: "a:float64,b:utf8",
			rows:   []string{"7|x", "-3.5|<null>"},
		},
		{
			name:  "a value beyond the sample says how to fix the type",
			files: map[string]string{"a.csv": "a\n1\n2\n3\n4\nx\n"},
			opts:  Options{SampleBytes: 4},
			err:   []string{"line 6", "the type int64 was inferred from the first rows", `set Options.Types["a"]`},
		},
		{
			name:  "files with different headers",
			files: map[string]string{"a1.csv": "a,b\n1,x\n", "a2.csv": "a,c\n2,y\n"},
			paths: []string{"a*.csv"},
			err:   []string{"different columns", "a1.csv", "a2.csv", `column 2: "b" vs "c"`},
		},
		{
			name:  "missing file",
			files: map[string]string{},
			paths: []string{"nope.csv"},
			err:   []string{"nope.csv", "not exist"},
		},
		{
			name:  "glob matching nothing",
			files: map[string]string{},
			paths: []string{"*.csv"},
			err:   []string{"no file matches"},
		},
	}
	defer func(c int) { chunkSize = c }(chunkSize)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			paths := tc.paths
			if paths == nil {
				paths = []string{"a.csv"}
			}
			// Read in one piece, then 3 bytes at a time.
			chunkSize = 8 << 20
			_, schema, rows, _, err := readFS(newMemFS(tc.files), paths, tc.opts, tc.ro)
			chunkSize = 3
			_, schema3, rows3, _, err3 := readFS(newMemFS(tc.files), paths, tc.opts, tc.ro)
			if (err == nil) != (err3 == nil) || schema != schema3 || !slices.Equal(rows, rows3) {
				t.Errorf("3-byte chunks: %v %s %q", err3, schema3, rows3)
			}
			if tc.err != nil {
				if e := errorContains(err, tc.err...); e != nil {
					t.Fatal(e)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if schema != tc.schema {
				t.Errorf("schema\n got %s\nwant %s", schema, tc.schema)
			}
			if !slices.Equal(rows, tc.rows) {
				t.Errorf("rows\n got %q\nwant %q", rows, tc.rows)
			}
		})
	}
}

func TestPlanCancelled(t *testing.T) {
	fsys := newMemFS(map[string]string{"a.csv": strings.Repeat("a,b\n1,2\n", 1000)})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := PlanRead(ctx, fsys, []string{"a.csv"}, Options{BlockSize: 100}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled plan: %v", err)
	}
}

func TestHeaderEdges(t *testing.T) {
	tests := []struct {
		data, schema string
		rows         []string
	}{
		{"\"a\",\"b\"\r", "a:utf8,b:utf8", nil},
		{"\"a\nb\",c\n1,2\n", "a\nb:int64,c:int64", []string{"1|2"}},
		{"\n\na,b\n1,2", "a:int64,b:int64", []string{"1|2"}},
		{"a,b", "a:utf8,b:utf8", nil},
	}
	for _, tc := range tests {
		_, schema, rows, _, err := readFS(newMemFS(map[string]string{"a.csv": tc.data}), []string{"a.csv"}, Options{}, ReadOptions{})
		if err != nil || schema != tc.schema || !slices.Equal(rows, tc.rows) {
			t.Errorf("%q: %v %s %q", tc.data, err, schema, rows)
		}
	}
	long := strings.Repeat("x", 100_000)
	_, schema, _, _, err := readFS(newMemFS(map[string]string{"a.csv": long + ",b\n1,2\n"}), []string{"a.csv"}, Options{}, ReadOptions{})
	if err != nil || schema != long+":int64,b:int64" {
		t.Errorf("long header: %v", err)
	}
	for _, bad := range []string{"a,\"b\n", "a,\"b\"c\n", "a,b\"c\n"} {
		if _, _, _, _, err := readFS(newMemFS(map[string]string{"a.csv": bad}), []string{"a.csv"}, Options{}, ReadOptions{}); e(err, "line 1: header") != nil {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestErrorsAreTyped(t *testing.T) {
	fsys := newMemFS(map[string]string{"a.csv": "a,b\n1,x\n2\n", "e.csv": "", "h1.csv": "a\n", "h2.csv": "b\n"})
	_, _, _, _, err := readFS(fsys, []string{"a.csv"}, Options{}, ReadOptions{})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Path != "a.csv" || pe.Line != 3 || pe.Column != 0 || pe.Text != "2" || !errors.Is(err, ErrFieldCount) {
		t.Errorf("ParseError %+v from %v", pe, err)
	}
	if _, _, _, _, err := readFS(fsys, []string{"e.csv"}, Options{}, ReadOptions{}); !errors.Is(err, ErrEmptyFile) {
		t.Errorf("empty file: %v", err)
	}
	if _, _, _, _, err := readFS(fsys, []string{"h*.csv"}, Options{}, ReadOptions{}); !errors.Is(err, ErrHeaderMismatch) {
		t.Errorf("headers: %v", err)
	}
	if _, _, _, _, err := readFS(fsys, []string{"z*.csv"}, Options{}, ReadOptions{}); !errors.Is(err, storage.ErrNoMatch) {
		t.Errorf("no match: %v", err)
	}
}

func TestBadRowsSkip(t *testing.T) {
	data := "a,b\n" +
		"1,x\n" + // line 2
		"2\n" + // line 3: too few
		"3,\"multi\nline\"\n" + // lines 4-5
		"zz,y\n" + // line 6: not an int
		"4,\"open\"x\n" + // line 7: text after quote
		"5,a\"b\n" + // line 8: bare quote
		"6,z,extra\n" + // line 9: too many
		"7,ok\n" // line 10
	defer func(m, c int) { miniRows, chunkSize = m, c }(miniRows, chunkSize)
	for _, typ := range []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int16} {
		opts := Options{BadRows: Skip, Types: map[string]arrow.DataType{"a": typ}}
		for _, bs := range []int64{0, 5, 13, 1000} {
			miniRows = int(bs%4) + 1
			chunkSize = int(bs%11) + 3
			opts.BlockSize = bs
			_, _, rows, bad, err := readFS(newMemFS(map[string]string{"a.csv": data}), []string{"a.csv"}, opts, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"1|x", "3|multi\nline", "7|ok"}
			if !slices.Equal(rows, want) {
				t.Errorf("%s, block size %d: rows %q, want %q", typ, bs, rows, want)
			}
			var got []string
			for _, b := range bad {
				if b.Path != "a.csv" {
					t.Errorf("path %q", b.Path)
				}
				got = append(got, strings.Join([]string{itoa(b.Line), itoa(int64(b.Column)), b.Text}, " "))
			}
			wantBad := []string{"3 0 2", "6 1 zz", "7 2 \"open\"x", "8 2 a\"b", "9 0 6,z,extra"}
			if !slices.Equal(got, wantBad) {
				t.Errorf("%s, block size %d: bad rows %q, want %q", typ, bs, got, wantBad)
			}
		}
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// keepFilter keeps the rows whose int64 column "v" is even.
func keepEven(calls *int) func(arrow.RecordBatch) (arrow.RecordBatch, error) {
	return func(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
		*calls++
		idx := rec.Schema().FieldIndices("v")[0]
		v := rec.Column(idx).(*array.Int64)
		var keep []int
		for i := 0; i < v.Len(); i++ {
			if v.IsValid(i) && v.Value(i)%2 == 0 {
				keep = append(keep, i)
			}
		}
		cols := make([]arrow.Array, rec.NumCols())
		for c, col := range rec.Columns() {
			b := array.NewBuilder(memory.DefaultAllocator, col.DataType())
			for _, i := range keep {
				if err := b.AppendValueFromString(col.ValueStr(i)); err != nil {
					return nil, err
				}
			}
			cols[c] = b.NewArray()
			b.Release()
		}
		out := array.NewRecordBatch(rec.Schema(), cols, int64(len(keep)))
		for _, c := range cols {
			c.Release()
		}
		return out, nil
	}
}

func TestFilter(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("s,v\n")
	var want []string
	for i := range 100 {
		sb.WriteString("k" + itoa(int64(i%7)) + "," + intString(i) + "\n")
		if i%2 == 0 {
			want = append(want, intString(i)+"|k"+itoa(int64(i%7)))
		}
	}
	fsys := newMemFS(map[string]string{"a.csv": sb.String()})
	for _, batch := range []int{1, 7, 1000} {
		calls := 0
		_, schema, rows, _, err := readFS(fsys, []string{"a.csv"}, Options{},
			ReadOptions{Columns: []string{"v", "s"}, BatchRows: batch, Filter: keepEven(&calls)})
		if err != nil {
			t.Fatal(err)
		}
		if schema != "v:int64,s:utf8" || !slices.Equal(rows, want) {
			t.Errorf("batch %d: %s %q", batch, schema, rows)
		}
		if wantCalls := (100 + batch - 1) / batch; calls != wantCalls {
			t.Errorf("batch %d: %d filter calls, want %d", batch, calls, wantCalls)
		}
	}
	// A failing filter stops reading.
	_, _, _, _, err := readFS(fsys, []string{"a.csv"}, Options{}, ReadOptions{Filter: func(arrow.RecordBatch) (arrow.RecordBatch, error) {
		return nil, errors.New("boom")
	}})
	if e := errorContains(err, "filter: boom"); e != nil {
		t.Error(e)
	}
	// Dictionary columns through the filter, several batches.
	_, _, rows, _, err := readFS(fsys, []string{"a.csv"}, Options{Dictionary: []string{"s"}},
		ReadOptions{Columns: []string{"v", "s"}, BatchRows: 9, Filter: keepEven(new(int))})
	if err != nil || !slices.Equal(rows, want) {
		t.Errorf("dictionary: %v %q", err, rows)
	}
}

func intString(i int) string { return strconv.Itoa(i) }

func TestReadBlockArguments(t *testing.T) {
	ctx := context.Background()
	fsys := newMemFS(map[string]string{"a.csv": "a\n1\n"})
	plan, err := PlanRead(ctx, fsys, []string{"a.csv"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadBlock(ctx, fsys, plan, 1, ReadOptions{}); err == nil {
		t.Error("block out of range: no error")
	}
	if _, _, err := ReadBlock(ctx, fsys, plan, 0, ReadOptions{Columns: []string{"a", "a"}}); err == nil {
		t.Error("column selected twice: no error")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := ReadBlock(cctx, fsys, plan, 0, ReadOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	// The file changed since planning.
	fsys.files["a.csv"] = []byte("a\n")
	if _, _, err := ReadBlock(ctx, fsys, plan, 0, ReadOptions{}); e(err, "shorter than when the read was planned") != nil {
		t.Error(err)
	}
}

func e(err error, s string) error { return errorContains(err, s) }

// TestLongLines: a header, or a row crossing a block boundary, longer than
// MaxLineBytes is an error naming the file, the limit and the option, found
// without reading the rest of the file (a large file with no line break
// took 47 s and 1.45 GiB to become one header); raising the limit reads it.
func TestLongLines(t *testing.T) {
	rows := strings.Repeat("1,2\n", 1000)
	longRow := strings.Repeat("9", 300_000) + ",2\n"
	files := map[string]string{
		"noline.csv":  strings.Repeat("x", 1_000_000),
		"header.csv":  strings.Repeat("h", 200_000) + ",b\n1,2\n",
		"row.csv":     "a,b\n" + rows + longRow + rows,
		"quoted.csv":  "a,b\n" + rows + `"` + strings.Repeat("q\n", 150_000) + `",2` + "\n" + rows,
		"fine.csv":    "a,b\n" + rows + rows,
		"longest.csv": strings.Repeat("y", 99_998) + ",b\n1,2\n",
	}
	tests := []struct {
		file string
		opts Options
		want []string // parts of the error; nil: reads
	}{
		{"noline.csv", Options{MaxLineBytes: 100_000}, []string{"noline.csv line 1: header", "line too long", "97.66 KiB", "MaxLineBytes"}},
		{"noline.csv", Options{}, nil}, // one column, no rows: within 16 MiB
		{"header.csv", Options{MaxLineBytes: 100_000}, []string{"header.csv line 1", "MaxLineBytes"}},
		{"header.csv", Options{MaxLineBytes: 300_000}, nil},
		{"row.csv", Options{MaxLineBytes: 100_000, BlockSize: 2000}, []string{"row.csv", "no end of row", "after byte", "MaxLineBytes"}},
		{"row.csv", Options{MaxLineBytes: 400_000, BlockSize: 2000}, nil},
		{"quoted.csv", Options{MaxLineBytes: 100_000, BlockSize: 2000}, []string{"quoted.csv", "MaxLineBytes"}},
		{"fine.csv", Options{MaxLineBytes: 100, BlockSize: 2000}, nil},
		{"longest.csv", Options{MaxLineBytes: 100_000}, nil}, // exactly the limit
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%d", tt.file, tt.opts.MaxLineBytes), func(t *testing.T) {
			_, _, _, _, err := readFS(newMemFS(files), []string{tt.file}, tt.opts, ReadOptions{})
			if tt.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrLineTooLong) {
				t.Fatalf("error %v, want ErrLineTooLong", err)
			}
			if err := errorContains(err, tt.want...); err != nil {
				t.Fatal(err)
			}
		})
	}
}
