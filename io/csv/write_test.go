package csv

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// allTypesRecord has one column of every type the reader produces, with
// nulls and awkward strings.
func allTypesRecord(t *testing.T) arrow.RecordBatch {
	t.Helper()
	mem := memory.DefaultAllocator
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "u", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "t", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}, Nullable: true},
		{Name: "tz", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "k", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{math.MinInt64, 0, 42}, []bool{true, false, true})
	b.Field(1).(*array.Int8Builder).AppendValues([]int8{-128, 127, 0}, nil)
	b.Field(2).(*array.Uint64Builder).AppendValues([]uint64{math.MaxUint64, 1, 0}, []bool{true, true, false})
	b.Field(3).(*array.Float64Builder).AppendValues([]float64{0.1, 1e300, 3}, []bool{true, true, false})
	b.Field(4).(*array.Float32Builder).AppendValues([]float32{0.1, -2.5e-10, 7}, nil)
	b.Field(5).(*array.BooleanBuilder).AppendValues([]bool{true, false, false}, []bool{true, true, false})
	b.Field(6).(*array.StringBuilder).AppendValues([]string{"a,b \"q\"\nline", "", "NA"}, []bool{true, true, true})
	b.Field(7).(*array.Date32Builder).AppendValues([]arrow.Date32{0, 18262, -1}, []bool{true, false, true})
	b.Field(8).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{1, 1577836800123456789, 0}, []bool{true, true, false})
	b.Field(9).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{-1, 1577836800123456, 0}, []bool{true, true, false})
	kb := b.Field(10).(*array.BinaryDictionaryBuilder)
	kb.AppendString("x")
	kb.AppendNull()
	kb.AppendString("x")
	return b.NewRecordBatch()
}

func TestWriteReadRoundTrip(t *testing.T) {
	rec := allTypesRecord(t)
	defer rec.Release()
	for _, wo := range []WriteOptions{{}, {Delimiter: ';', CRLF: true}, {Delimiter: '\t', Quote: '\''}} {
		var buf bytes.Buffer
		if err := Write(&buf, rec, wo); err != nil {
			t.Fatal(err)
		}
		opts := Options{Delimiter: wo.Delimiter, Quote: wo.Quote, Schema: rec.Schema()}
		_, schema, rows, _, err := readFS(newMemFS(map[string]string{"a.csv": buf.String()}), []string{"a.csv"}, opts, ReadOptions{})
		if err != nil {
			t.Fatalf("%+v: %v\n%s", wo, err, buf.String())
		}
		if schema != schemaString(rec.Schema()) {
			t.Errorf("schema %s", schema)
		}
		if want := recordRows(rec); !slices.Equal(rows, want) {
			t.Errorf("%+v: rows\n got %q\nwant %q\ncsv:\n%s", wo, rows, want, buf.String())
		}
	}
}

func TestWriteInferredRoundTrip(t *testing.T) {
	// Without a schema, written text infers back to the same types.
	text := "i,f,b,s,d,t,tz\n1,0.5,true,x,2020-01-01,2020-01-01T00:00:00.5,2020-01-01T00:00:00Z\n2,1e+300,false,\"\",2020-01-02,2020-01-01T00:00:01,2020-01-01T10:00:00+02:00\n"
	fsys := newMemFS(map[string]string{"a.csv": text})
	plan, _, rows, _, err := readFS(fsys, []string{"a.csv"}, Options{}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err := ReadBlock(t.Context(), fsys, plan, 0, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	var buf bytes.Buffer
	if err := Write(&buf, rec, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, schema2, rows2, _, err := readFS(newMemFS(map[string]string{"b.csv": buf.String()}), []string{"b.csv"}, Options{}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if schema2 != schemaString(plan.Schema) || !slices.Equal(rows, rows2) {
		t.Errorf("round trip changed:\n%s %q\n%s %q\n%s", schemaString(plan.Schema), rows, schema2, rows2, buf.String())
	}
}

func TestWriteFormat(t *testing.T) {
	rec := allTypesRecord(t)
	defer rec.Release()
	tests := []struct {
		opts WriteOptions
		want string
	}{
		{WriteOptions{}, "i,i8,u,f,f32,b,s,d,t,tz,k\n" +
			"-9223372036854775808,-128,18446744073709551615,0.1,0.1,true,\"a,b \"\"q\"\"\nline\",1970-01-01,1970-01-01T00:00:00.000000001,1969-12-31T23:59:59.999999Z,x\n" +
			",127,1,1e+300,-2.5e-10,false,\"\",,2020-01-01T00:00:00.123456789,2020-01-01T00:00:00.123456Z,\n" +
			"42,0,,,7.0,,\"NA\",1969-12-31,,,x\n"},
		{WriteOptions{NoHeader: true, Null: "NULL", Delimiter: '|'}, "-9223372036854775808|-128|18446744073709551615|0.1|0.1|true|\"a,b \"\"q\"\"\nline\"|1970-01-01|1970-01-01T00:00:00.000000001|1969-12-31T23:59:59.999999Z|x\n" +
			"NULL|127|1|1e+300|-2.5e-10|false|\"\"|NULL|2020-01-01T00:00:00.123456789|2020-01-01T00:00:00.123456Z|NULL\n" +
			"42|0|NULL|NULL|7.0|NULL|\"NA\"|1969-12-31|NULL|NULL|x\n"},
	}
	for _, tc := range tests {
		var buf bytes.Buffer
		if err := Write(&buf, rec, tc.opts); err != nil {
			t.Fatal(err)
		}
		if buf.String() != tc.want {
			t.Errorf("%+v:\n got %q\nwant %q", tc.opts, buf.String(), tc.want)
		}
	}
}

func TestWriterStream(t *testing.T) {
	rec := allTypesRecord(t)
	defer rec.Release()
	var buf bytes.Buffer
	w := NewWriter(&buf, rec.Schema(), WriteOptions{})
	for range 3 {
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "i,i8,u"); n != 1 {
		t.Errorf("%d headers", n)
	}
	// A header even without rows.
	buf.Reset()
	w = NewWriter(&buf, rec.Schema(), WriteOptions{CRLF: true})
	if err := w.Flush(); err != nil || buf.String() != "i,i8,u,f,f32,b,s,d,t,tz,k\r\n" {
		t.Errorf("%v %q", err, buf.String())
	}
	// Another schema is refused.
	other := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "z", Type: arrow.PrimitiveTypes.Int64}}, nil), []arrow.Array{array.NewInt64Data(array.NewData(arrow.PrimitiveTypes.Int64, 0, []*memory.Buffer{nil, nil}, nil, 0, 0))}, 0)
	defer other.Release()
	if err := w.Write(other); err == nil {
		t.Error("other schema written")
	}
	// Write errors are reported.
	w = NewWriter(failWriter{}, rec.Schema(), WriteOptions{})
	w.Write(rec)
	if err := w.Flush(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("error %v", err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }
