package jsonl

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/dftest"
	"github.com/shoal-data/shoal/io/storage"
)

// put writes a file in a new temporary directory and returns its path.
func put(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readAll plans and reads every part, checking that no memory leaks.
func readAll(t *testing.T, paths []string, opts Options) (*Plan, []arrow.RecordBatch, error) {
	t.Helper()
	ctx := context.Background()
	plan, err := PlanRead(ctx, storage.Local{}, paths, opts)
	if err != nil {
		return nil, nil, err
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	var recs []arrow.RecordBatch
	t.Cleanup(func() {
		for _, r := range recs {
			r.Release()
		}
		mem.AssertSize(t, 0)
	})
	for i := range plan.Parts {
		rec, err := ReadPart(ctx, storage.Local{}, plan, i, mem)
		if err != nil {
			return plan, nil, err
		}
		if !rec.Schema().Equal(plan.Schema) {
			t.Errorf("part %d has schema %s, the plan %s", i, rec.Schema(), plan.Schema)
		}
		recs = append(recs, rec)
	}
	return plan, recs, nil
}

func schemaString(s *arrow.Schema) string {
	var b strings.Builder
	for i, f := range s.Fields() {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", f.Name, f.Type)
	}
	return b.String()
}

func TestInfer(t *testing.T) {
	tests := []struct {
		name   string
		data   string
		opts   Options
		schema string
	}{
		{"kinds", `{"i": 1, "f": 1.5, "b": true, "s": "x", "n": null}`, Options{}, "i int64, f float64, b bool, s utf8, n null"},
		{"int then float", "{\"x\": 1}\n{\"x\": 2.5}\n", Options{}, "x float64"},
		{"exponent", `{"x": 1e3}`, Options{}, "x float64"},
		{"too big for int64", `{"x": 12345678901234567890}`, Options{}, "x float64"},
		{"NaN", "{\"x\": 1}\n{\"x\": NaN}\n", Options{}, "x float64"},
		{"mixed is string", "{\"x\": 1}\n{\"x\": \"a\"}\n{\"y\": true}\n{\"y\": 2}\n", Options{}, "x utf8, y utf8"},
		{"null then int", "{\"x\": null}\n{\"x\": 3}\n", Options{}, "x int64"},
		{"keys in order of appearance", "{\"b\": 1}\n{\"a\": 1, \"b\": 2}\n{\"c\": 1}\n", Options{}, "b int64, a int64, c int64"},
		{"escaped key", `{"a\"b": 1, "\u00e9": 2}`, Options{}, `a"b int64, é int64`},
		{"dates", "{\"t\": \"2024-01-01T00:00:00Z\", \"d\": \"2024-01-01\"}\n{\"t\": null}\n", Options{ParseDates: []string{"t", "d"}}, "t timestamp[us, tz=UTC], d timestamp[us, tz=UTC]"},
		{"nested as JSON", `{"o": {"a": [1, 2]}, "l": [], "x": 1}`, Options{NestedAsJSON: true}, "o utf8, l utf8, x int64"},
		{"sample cut at a line", "{\"a\": 1}\n{\"b\": 1}\n", Options{SampleBytes: 10}, "a int64"},
		{"first line longer than the sample", "{\"long_key_name\": 1}\n{\"b\": 1, \"pad\": \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}\n", Options{SampleBytes: 4}, "long_key_name int64"},
		{"empty", "", Options{}, ""},
		{"blank lines, CRLF and BOM", "\xef\xbb\xbf{\"a\": 1}\r\n\r\n  \n{\"a\": 2}\r\n", Options{}, "a int64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := put(t, "a.jsonl", tt.data)
			plan, err := PlanRead(context.Background(), storage.Local{}, []string{path}, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := schemaString(plan.Schema); got != tt.schema {
				t.Errorf("schema %q, want %q", got, tt.schema)
			}
		})
	}
}

func TestPlanErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.jsonl", "{\"price\": 1.5, \"id\": 1}\n")
	nested := write("nested.jsonl", "{\"id\": 1}\n{\"id\": 2, \"tags\": [\"a\"]}\n")
	bad := write("bad.jsonl", "{\"id\": 1}\n{\"id\": 2,}\n")
	mixedDates := write("dates.jsonl", "{\"t\": 5}\n")
	tests := []struct {
		name  string
		paths []string
		opts  Options
		is    error
		msg   string
	}{
		{"missing file", []string{filepath.Join(dir, "nope.jsonl")}, Options{}, fs.ErrNotExist, "nope.jsonl"},
		{"no match", []string{filepath.Join(dir, "*.json")}, Options{}, storage.ErrNoMatch, "*.json"},
		{"unknown column", []string{good}, Options{Columns: []string{"prise"}}, ErrUnknownColumn,
			`jsonl: no such column "prise" in ` + good + ` (did you mean "price"?); it has "price", "id"`},
		{"column twice", []string{good}, Options{Columns: []string{"id", "id"}}, nil, `column "id" is requested twice`},
		{"nested", []string{nested}, Options{}, ErrSchemaMismatch,
			`jsonl: ` + nested + `:2:19: key "tags": value does not fit the schema: found an array; set Options.NestedAsJSON to keep objects and arrays as JSON text, in: {"id": 2, "tags": ["a"]}`},
		{"malformed sample", []string{bad}, Options{}, ErrSyntax,
			`jsonl: ` + bad + `:2:10: malformed JSON: expected a key in double quotes, found '}', in: {"id": 2,}`},
		{"ParseDates unknown", []string{good}, Options{ParseDates: []string{"when"}}, nil, `ParseDates names column "when", but the first 1 lines of ` + good + ` have no such key`},
		{"ParseDates numbers", []string{mixedDates}, Options{ParseDates: []string{"t"}}, nil, `ParseDates names column "t", but in ` + mixedDates + ` it holds integers, not only strings`},
		{"ParseDates with a schema", []string{good}, Options{ParseDates: []string{"t"}, Schema: arrow.NewSchema(nil, nil)}, nil, "ParseDates applies when the schema is inferred"},
		{"unsupported type", []string{good}, Options{Schema: arrow.NewSchema([]arrow.Field{{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64)}}, nil)}, nil,
			`column "l": type list<item: int64, nullable> cannot be read from JSON lines`},
		{"negative block size", []string{good}, Options{BlockSize: -1}, nil, "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := PlanRead(context.Background(), storage.Local{}, tt.paths, tt.opts)
			if err == nil {
				t.Fatal("no error")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %q does not wrap %q", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error\n%q\ndoes not say\n%q", err, tt.msg)
			}
		})
	}
}

func TestRead(t *testing.T) {
	i64 := func(name string) arrow.Field {
		return arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Int64, Nullable: true}
	}
	tests := []struct {
		name string
		data string
		opts Options
		want []dftest.Column
	}{
		{
			name: "missing keys are null",
			data: "{\"a\": 1, \"b\": \"x\"}\n{\"b\": \"y\"}\n{\"a\": 3}\n",
			want: []dftest.Column{dftest.Int64s("a", 1, nil, 3), dftest.Strings("b", "x", "y", nil)},
		},
		{
			name: "escapes and unicode",
			data: `{"s": "a\"b\\c\/d\n\t\u00e9\ud83d\ude00 日本"}` + "\n" + `{"s": "\ud800"}`,
			want: []dftest.Column{dftest.Strings("s", "a\"b\\c/d\n\té😀 日本", "\ufffd")},
		},
		{
			name: "numbers and booleans kept as text in a string column",
			data: "{\"s\": \"a\"}\n{\"s\": 1.50}\n{\"s\": true}\n",
			want: []dftest.Column{dftest.Strings("s", "a", "1.50", "true")},
		},
		{
			name: "floats",
			data: "{\"x\": 1}\n{\"x\": -0.5e-3}\n{\"x\": NaN}\n{\"x\": Infinity}\n{\"x\": -Infinity}\n{\"x\": null}\n",
			want: []dftest.Column{dftest.Float64s("x", 1, -0.0005, math.NaN(), math.Inf(1), math.Inf(-1), nil)},
		},
		{
			name: "int64 limits",
			data: "{\"x\": 9223372036854775807}\n{\"x\": -9223372036854775808}\n{\"x\": 0}\n",
			want: []dftest.Column{dftest.Int64s("x", int64(math.MaxInt64), int64(math.MinInt64), 0)},
		},
		{
			name: "timestamps",
			data: `{"t": "2024-03-01T12:30:00Z"}` + "\n" + `{"t": "2024-03-01T12:30:00.123456789+01:00"}` + "\n" +
				`{"t": "2024-03-01 12:30"}` + "\n" + `{"t": "2024-03-01"}` + "\n" + `{"t": "1969-12-31T23:59:59.5-00:30"}` + "\n" + `{"t": null}` + "\n",
			opts: Options{ParseDates: []string{"t"}},
			want: []dftest.Column{dftest.Timestamps("t", "2024-03-01T12:30:00Z", "2024-03-01T11:30:00.123456Z", "2024-03-01T12:30:00Z",
				"2024-03-01T00:00:00Z", "1970-01-01T00:29:59.5Z", nil)},
		},
		{
			name: "schema given: other units, dates, unknown keys ignored",
			data: `{"t": "2024-03-01T12:30:00.123456789Z", "d": "2024-02-29", "extra": [1], "n": 5}` + "\n",
			opts: Options{IgnoreUnknownKeys: true, Schema: arrow.NewSchema([]arrow.Field{
				{Name: "t", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}}, {Name: "d", Type: arrow.FixedWidthTypes.Date32}, i64("n"),
				{Name: "s", Type: arrow.BinaryTypes.LargeString}}, nil)},
			want: []dftest.Column{
				dftest.Timestamps("t", "2024-03-01T12:30:00.123456789Z").As(&arrow.TimestampType{Unit: arrow.Nanosecond}),
				dftest.Dates("d", "2024-02-29"), dftest.Int64s("n", 5), dftest.Strings("s", nil).As(arrow.BinaryTypes.LargeString)},
		},
		{
			name: "nested kept as JSON",
			data: `{"o": {"a": [1, {"b": null}]}, "l": [ ]}` + "\n" + `{"o": "plain"}` + "\n",
			opts: Options{NestedAsJSON: true},
			want: []dftest.Column{dftest.Strings("o", `{"a": [1, {"b": null}]}`, "plain"), dftest.Strings("l", "[ ]", nil)},
		},
		{
			name: "projection",
			data: "{\"a\": 1, \"b\": 2, \"c\": {\"nested\": true}}\n",
			opts: Options{Columns: []string{"b", "a"}, Schema: arrow.NewSchema([]arrow.Field{i64("a"), i64("b"), {Name: "c", Type: arrow.BinaryTypes.String}}, nil)},
			want: []dftest.Column{dftest.Int64s("b", 2), dftest.Int64s("a", 1)},
		},
		{
			name: "empty object and white space",
			data: " { } \n\t{\"a\" : 1 }\t\n",
			want: []dftest.Column{dftest.Int64s("a", nil, 1)},
		},
		{
			name: "no newline at the end",
			data: "{\"a\": 1}\n{\"a\": 2}",
			want: []dftest.Column{dftest.Int64s("a", 1, 2)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := put(t, "a.jsonl", tt.data)
			for _, block := range []int64{0, 1, 3, 17} {
				opts := tt.opts
				opts.BlockSize = block
				_, got, err := readAll(t, []string{path}, opts)
				if err != nil {
					t.Fatalf("block size %d: %v", block, err)
				}
				if !dftest.AssertEqual(t, got, dftest.Table(t, tt.want...)) {
					t.Fatalf("block size %d", block)
				}
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	tests := []struct {
		name string
		data string
		opts Options
		is   error
		msg  string // after "jsonl: <path>:"
	}{
		{"not a number", "{\"x\": 1.5}\n{\"x\": 2}\n{\"x\": \"abc\"}\n", Options{SampleBytes: 20}, ErrSchemaMismatch,
			`3:7: key "x": value does not fit the schema: "abc" is not a number (the column is float64), in: {"x": "abc"}`},
		{"not an integer", "{\"x\": 1}\n{\"x\": 2.5}\n", Options{SampleBytes: 9}, ErrSchemaMismatch,
			`2:7: key "x": value does not fit the schema: 2.5 is not an integer (the column is int64), in: {"x": 2.5}`},
		{"overflow", "{\"x\": 1}\n{\"x\": 99999999999999999999}\n", Options{SampleBytes: 9}, ErrSchemaMismatch,
			`2:7: key "x": value does not fit the schema: 99999999999999999999 does not fit int64 (the column is int64)`},
		{"bad timestamp", "{\"t\": \"2024-02-30\"}\n", Options{ParseDates: []string{"t"}}, ErrSchemaMismatch,
			`1:7: key "t": value does not fit the schema: "2024-02-30" is not an RFC 3339 timestamp (2024-03-01T12:30:00Z) (the column is timestamp[us, tz=UTC])`},
		{"key later than the sample", "{\"a\": 1}\n{\"b\": 2}\n", Options{SampleBytes: 9}, ErrSchemaMismatch,
			`2:2: key "b": value does not fit the schema: the key is not in the schema (a schema inferred from a sample may miss keys that appear later; pass Options.Schema, or set IgnoreUnknownKeys to skip such keys), in: {"b": 2}`},
		{"null column gets a value", "{\"a\": null}\n{\"a\": 2}\n", Options{SampleBytes: 12}, ErrSchemaMismatch,
			`2:7: key "a": value does not fit the schema: 2 is not null, and the column's type is null`},
		{"nested in a string column", "{\"a\": \"x\"}\n{\"a\": {\"b\": 1}}\n", Options{SampleBytes: 11}, ErrSchemaMismatch,
			`2:7: key "a": value does not fit the schema: found an object; set Options.NestedAsJSON to keep objects and arrays as JSON text, in: {"a": {"b": 1}}`},
		{"duplicate key", "{\"a\": 1, \"a\": 2}\n", Options{Schema: arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil)}, ErrSyntax,
			`1:10: key "a": malformed JSON: the key appears twice in the object, in: {"a": 1, "a": 2}`},
		{"truncated line", "{\"a\": 1}\n{\"a\": 2\n", Options{SampleBytes: 9}, ErrSyntax,
			`2:8: malformed JSON: the object is not closed; is the line cut short?, in: {"a": 2`},
		{"two objects on a line", "{\"a\": 1} {\"a\": 2}\n", Options{Schema: arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil)}, ErrSyntax,
			`1:10: malformed JSON: unexpected '{' after the object; one object a line`},
		{"array line", "{\"a\": 1}\n[1, 2]\n", Options{SampleBytes: 9}, ErrSyntax,
			`2:1: malformed JSON: a line must hold a JSON object, starting with '{', not '['`},
		{"long line is cut", "{\"a\": 1}\n{\"a\": 2, \"pad\": \"" + strings.Repeat("x", 200) + "\", \"a\": 3}\n", Options{SampleBytes: 9, IgnoreUnknownKeys: true}, ErrSyntax,
			`2:221: key "a": malformed JSON: the key appears twice in the object, in: ...xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "a": 3}`},
		{"invalid UTF-8", "{\"a\": \"\xff\"}\n", Options{}, ErrSyntax, `1:7: malformed JSON: the string is not valid UTF-8`},
		{"control character", "{\"a\": \"x\ty\"}\n", Options{}, ErrSyntax, `1:9: malformed JSON: control character '\t' in a string; escape it`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := put(t, "a.jsonl", tt.data)
			for _, block := range []int64{0, 5} {
				opts := tt.opts
				opts.BlockSize = block
				_, _, err := readAll(t, []string{path}, opts)
				if err == nil {
					t.Fatalf("block size %d: no error", block)
				}
				if !errors.Is(err, tt.is) {
					t.Errorf("error %q does not wrap %q", err, tt.is)
				}
				var pe *ParseError
				if !errors.As(err, &pe) || pe.Path != path {
					t.Errorf("error %q is not a *ParseError naming %s", err, path)
				}
				if want := "jsonl: " + path + ":" + tt.msg; !strings.HasPrefix(err.Error(), want) {
					t.Errorf("block size %d: error\n%s\nwant\n%s", block, err, want)
				}
			}
		})
	}
}

// TestLineNumbers checks that an error deep in a large file, in a late
// part, names the right line.
func TestLineNumbers(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 5000; i++ {
		if i == 4321 {
			b.WriteString("{\"n\": oops}\n")
			continue
		}
		fmt.Fprintf(&b, "{\"n\": %d}\n", i)
	}
	path := put(t, "a.jsonl", b.String())
	_, _, err := readAll(t, []string{path}, Options{BlockSize: 1000})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 4321 || pe.Byte != 7 {
		t.Errorf("error %v, want one at line 4321 byte 7", err)
	}
}

// TestParts checks on random files and block sizes that every row is
// read exactly once, in order.
func TestParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 20; iter++ {
		n := rng.IntN(200)
		var ids, names []any
		var b strings.Builder
		for i := 0; i < n; i++ {
			ids = append(ids, i)
			name := strings.Repeat("é", rng.IntN(30))
			names = append(names, name)
			if rng.IntN(5) == 0 {
				b.WriteString(strings.Repeat(" ", rng.IntN(3)) + "\n") // blank lines
			}
			fmt.Fprintf(&b, "{\"id\": %d, \"name\": %q}\n", i, name)
		}
		path := put(t, "a.jsonl", b.String())
		schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "name", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
		block := int64(1 + rng.IntN(100))
		_, got, err := readAll(t, []string{path}, Options{Schema: schema, BlockSize: block})
		if err != nil {
			t.Fatal(err)
		}
		if !dftest.AssertEqual(t, got, dftest.Table(t, dftest.Int64s("id", ids...), dftest.Strings("name", names...))) {
			t.Fatalf("block size %d", block)
		}
	}
}

func TestGlobAndSelect(t *testing.T) {
	dir := t.TempDir()
	for i, data := range []string{"{\"a\": 1, \"b\": \"x\"}\n", "{\"b\": \"y\", \"a\": 2}\n{\"a\": 3}\n"} {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.jsonl", i)), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	plan, got, err := readAll(t, []string{filepath.Join(dir, "*.jsonl")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dftest.AssertEqual(t, got, dftest.Table(t, dftest.Int64s("a", 1, 2, 3), dftest.Strings("b", "x", "y", nil)))

	sel, err := plan.Select("b")
	if err != nil {
		t.Fatal(err)
	}
	rec, err := ReadPart(context.Background(), storage.Local{}, sel, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	dftest.AssertEqual(t, rec, dftest.Record(t, dftest.Strings("b", "y", nil)))
	if _, err := sel.Select("a"); !errors.Is(err, ErrUnknownColumn) {
		t.Errorf("selecting a column the plan does not read: %v", err)
	}
}

func TestPlanEncoding(t *testing.T) {
	path := put(t, "a.jsonl", "{\"a\": 1, \"t\": \"2024-01-01\", \"x\": 5}\n{\"a\": 2, \"zz\": 1}\n")
	ctx := context.Background()
	plan, err := PlanRead(ctx, storage.Local{}, []string{path}, Options{ParseDates: []string{"t"}, Columns: []string{"t", "a"}, SampleBytes: 10, BlockSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	var fromJSON Plan
	if err := json.Unmarshal(js, &fromJSON); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(plan); err != nil {
		t.Fatal(err)
	}
	var fromGob Plan
	if err := gob.NewDecoder(&buf).Decode(&fromGob); err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]*Plan{"json": &fromJSON, "gob": &fromGob} {
		if !p.Schema.Equal(plan.Schema) || len(p.Parts) != len(plan.Parts) {
			t.Fatalf("%s: decoded plan differs", name)
		}
		one := p.Slice(0, 1)
		rec, err := ReadPart(ctx, storage.Local{}, one, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		dftest.AssertEqual(t, rec, dftest.Record(t, dftest.Timestamps("t", "2024-01-01"), dftest.Int64s("a", 1)))
		rec.Release()
		// The key "zz" was not in the sample: the decoded plan still
		// knows that it is an error, and that "x" is a column not read.
		var last int
		for i, part := range p.Parts {
			if part.Offset <= 36 {
				last = i
			}
		}
		if _, err := ReadPart(ctx, storage.Local{}, p, last, nil); !errors.Is(err, ErrSchemaMismatch) || !strings.Contains(err.Error(), `key "zz"`) {
			t.Errorf("%s: unknown key: %v", name, err)
		}
	}
}

func TestReadPartArguments(t *testing.T) {
	path := put(t, "a.jsonl", "{\"a\": 1}\n")
	ctx := context.Background()
	plan, err := PlanRead(ctx, storage.Local{}, []string{path}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPart(ctx, storage.Local{}, plan, 1, nil); err == nil || !strings.Contains(err.Error(), "the plan has 1 parts; there is no part 1") {
		t.Errorf("part out of range: %v", err)
	}
	if _, err := ReadPart(ctx, storage.Local{}, nil, 0, nil); err == nil {
		t.Error("nil plan: no error")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ReadPart(cancelled, storage.Local{}, plan, 0, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPart(ctx, storage.Local{}, plan, 0, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("removed file: %v", err)
	}
}
