package graph_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the round trip of named locations must not depend on the machine

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/util"
	"pgregory.net/rapid"

	"github.com/shoal-data/shoal/graph"
)

func mustLoc(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// codecCases are values of every built-in codec, named by their codec.
func codecCases(t testing.TB) []struct {
	codec string
	v     any
} {
	ny := mustLoc(t, "America/New_York")
	type c = struct {
		codec string
		v     any
	}
	return []c{
		{"nil", nil},
		{"bool", true}, {"bool", false},
		{"int", 0}, {"int", -1}, {"int", math.MaxInt}, {"int", math.MinInt},
		{"int8", int8(math.MaxInt8)}, {"int8", int8(math.MinInt8)},
		{"int16", int16(math.MaxInt16)}, {"int16", int16(math.MinInt16)},
		{"int32", int32(math.MaxInt32)}, {"int32", int32(math.MinInt32)},
		{"int64", int64(math.MaxInt64)}, {"int64", int64(math.MinInt64)}, {"int64", int64(0)},
		{"uint", uint(math.MaxUint)}, {"uint", uint(0)},
		{"uint8", uint8(math.MaxUint8)}, {"uint16", uint16(math.MaxUint16)},
		{"uint32", uint32(math.MaxUint32)}, {"uint64", uint64(math.MaxUint64)},
		{"float64", 3.25}, {"float64", math.Inf(1)}, {"float64", math.Inf(-1)},
		{"float64", math.Copysign(0, -1)}, {"float64", math.SmallestNonzeroFloat64}, {"float64", math.MaxFloat64},
		{"float64", math.NaN()},
		{"float32", float32(1.5)}, {"float32", float32(math.Inf(-1))}, {"float32", float32(math.NaN())},
		{"float32", float32(math.Copysign(0, -1))}, {"float32", float32(math.MaxFloat32)},
		{"string", ""}, {"string", "héllo\x00wörld"},
		{"bytes", []byte{0, 1, 2, 255}},
		{"time", time.Date(2024, 3, 10, 1, 59, 59, 999999999, ny)},
		{"time", time.Date(2024, 7, 1, 12, 0, 0, 0, ny)},
		{"time", time.Date(1969, 12, 31, 23, 59, 59, 1, time.UTC)},
		{"time", time.Date(2000, 1, 1, 0, 0, 0, 0, time.FixedZone("XYZ", 3*3600+1800))},
		{"time", time.Date(2000, 1, 1, 0, 0, 0, 0, time.FixedZone("", -7*3600))},
		{"time", time.Date(2000, 1, 1, 0, 0, 0, 0, mustLoc(t, "Asia/Kolkata"))},
		{"time", time.Time{}},
		{"time", time.Date(1840, 1, 1, 12, 0, 0, 0, mustLoc(t, "Europe/London"))}, // offset -0:01:15
		{"time", time.Date(2020, 1, 1, 0, 0, 0, 0, time.FixedZone("UTC", 3600))},
		{"time", time.Date(2020, 1, 1, 0, 0, 0, 0, time.FixedZone("Odd", -59))},
		{"time", time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)},
		{"time", time.Date(-5000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"duration", 90 * time.Minute}, {"duration", time.Duration(math.MinInt64)},
		{"gob:[]int", []int{1, -2, 3}},
		{"gob:[]int64", []int64{math.MaxInt64, math.MinInt64}},
		{"gob:[]float64", []float64{1.5, math.Inf(1), -0.0}},
		{"gob:[]string", []string{"a", "", "c"}},
		{"gob:[]bool", []bool{true, false, true}},
		{"map[string]int64", map[string]int64{"a": 1, "b": -2, "c": math.MinInt64}},
		{"map[string]int64", map[string]int64{}},
		{"map[string]float64", map[string]float64{"x": 0.5, "y": math.Inf(-1)}},
		{"map[string]string", map[string]string{"k": "v", "": "", "ü": "long value"}},
		{"list", []any{}},
		{"list", []any{1, "two", 3.0, nil, true, []any{int8(4), []any{}, nil}, []string{"x"}, time.Duration(5),
			map[string]string{"a": "b"}, []byte("raw")}},
	}
}

// sameValue compares decoded values: NaNs are equal to NaNs, times are
// compared as instants with their location name and offset.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case float32:
		y, ok := b.(float32)
		return ok && math.Float32bits(x) == math.Float32bits(y)
	case map[string]float64:
		y, ok := b.(map[string]float64)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || !sameValue(v, w) {
				return false
			}
		}
		return true
	case time.Time:
		y, ok := b.(time.Time)
		if !ok || !x.Equal(y) || x.Location().String() != y.Location().String() {
			return false
		}
		xn, xo := x.Zone()
		yn, yo := y.Zone()
		return xn == yn && xo == yo && x.String() == y.String()
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

func TestCodecRoundTrip(t *testing.T) {
	reg := graph.Default()
	for i, tc := range codecCases(t) {
		t.Run(fmt.Sprintf("%d-%s", i, tc.codec), func(t *testing.T) {
			ev, err := reg.EncodeValue(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if ev.Codec != tc.codec {
				t.Errorf("codec = %q, want %q", ev.Codec, tc.codec)
			}
			got, err := reg.DecodeValue(ev)
			if err != nil {
				t.Fatal(err)
			}
			if !sameValue(tc.v, got) {
				t.Errorf("DecodeValue(EncodeValue(%#v)) = %#v", tc.v, got)
			}
			b, err := reg.MarshalValue(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			got, err = reg.UnmarshalValue(b)
			if err != nil {
				t.Fatal(err)
			}
			if !sameValue(tc.v, got) {
				t.Errorf("UnmarshalValue(MarshalValue(%#v)) = %#v", tc.v, got)
			}
			// Encoding is deterministic, so literals give stable keys.
			for range 5 {
				if b2, _ := reg.MarshalValue(tc.v); !bytes.Equal(b, b2) {
					t.Fatalf("MarshalValue is not deterministic")
				}
			}
		})
	}
}

func TestTimeCodec(t *testing.T) {
	reg := graph.Default()
	ny := mustLoc(t, "America/New_York")
	now := time.Now().In(ny) // has a monotonic clock reading
	v, err := reg.UnmarshalValue(mustMarshal(t, reg, now))
	if err != nil {
		t.Fatal(err)
	}
	got := v.(time.Time)
	if !sameValue(got, now.Round(0)) {
		t.Errorf("decoded %v, want %v without its monotonic reading", got, now.Round(0))
	}
	if strings.Contains(got.String(), "m=") {
		t.Errorf("monotonic reading survived: %s", got)
	}
	// Calendar arithmetic in the location works after the round trip:
	// adding a day across the DST change keeps the wall clock.
	before := time.Date(2024, 3, 9, 12, 0, 0, 0, ny)
	v, _ = reg.UnmarshalValue(mustMarshal(t, reg, before))
	if a, b := v.(time.Time).AddDate(0, 0, 1), before.AddDate(0, 0, 1); !sameValue(a, b) {
		t.Errorf("AddDate after the round trip = %v, want %v", a, b)
	}
	// Bad bytes.
	for _, b := range [][]byte{nil, {0xff}, {2}, {2, 0xff}, {2, 0x80, 0x94, 0xeb, 0xdc, 0x03, 0}, {2, 1}, {2, 1, 0xff, 0xff, 0x7f}} {
		if _, err := reg.DecodeValue(graph.Value{Codec: "time", Data: b}); err == nil {
			t.Errorf("decoding time from %v: no error", b)
		}
	}
}

func mustMarshal(t testing.TB, reg *graph.Registry, v any) []byte {
	t.Helper()
	b, err := reg.MarshalValue(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestListCodecUsesAskingRegistry(t *testing.T) {
	// A []any holding a type registered only in a child registry encodes
	// and decodes through the child.
	reg := graph.Default().Child()
	if err := reg.RegisterCodec(graph.GobCodec[point]()); err != nil {
		t.Fatal(err)
	}
	in := []any{point{1, 2}, []any{point{3, 4}}, 5}
	b, err := reg.MarshalValue(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := reg.UnmarshalValue(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Errorf("round trip = %#v, want %#v", out, in)
	}
	// The parent does not know the type.
	var ue *graph.UnencodableError
	if _, err := graph.Default().MarshalValue(in); !errors.As(err, &ue) {
		t.Errorf("parent MarshalValue = %v, want an *UnencodableError", err)
	}
	if _, err := graph.Default().UnmarshalValue(b); err == nil || !strings.Contains(err.Error(), "gob:") {
		t.Errorf("parent UnmarshalValue = %v, want an error naming the codec", err)
	}
}

func newRecord(t testing.TB, mem memory.Allocator) arrow.RecordBatch {
	t.Helper()
	md := arrow.NewMetadata([]string{"source"}, []string{"test"})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "temp", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "ok", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	}, &md)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3, 4}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"a", "", "c", "d"}, []bool{true, false, true, true})
	b.Field(2).(*array.Float64Builder).AppendValues([]float64{1.5, math.Inf(1), 0, -2}, []bool{true, true, false, true})
	b.Field(3).(*array.BooleanBuilder).AppendValues([]bool{true, false, false, true}, []bool{true, true, false, true})
	b.Field(4).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{0, 1e6, 0, 2e6}, []bool{true, true, false, true})
	lb := b.Field(5).(*array.ListBuilder)
	vb := lb.ValueBuilder().(*array.StringBuilder)
	lb.Append(true)
	vb.AppendValues([]string{"x", "y"}, nil)
	lb.AppendNull()
	lb.Append(true)
	lb.Append(true)
	vb.Append("z")
	return b.NewRecordBatch()
}

func TestArrowRecordCodec(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := newRecord(t, mem)
	defer rec.Release()
	reg := graph.Default()

	ev, err := reg.EncodeValue(rec)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Codec != "arrow.record" {
		t.Errorf("codec = %q", ev.Codec)
	}
	v, err := reg.DecodeValue(ev)
	if err != nil {
		t.Fatal(err)
	}
	got := v.(arrow.RecordBatch)
	defer got.Release()
	if !array.RecordEqual(rec, got) || !got.Schema().Equal(rec.Schema()) {
		t.Errorf("round trip:\n got %v\nwant %v", got, rec)
	}
	if !got.Schema().Metadata().Equal(rec.Schema().Metadata()) {
		t.Errorf("metadata lost: %v", got.Schema().Metadata())
	}
	if got.Column(1).NullN() != 1 || got.Column(2).NullN() != 1 || got.Column(5).NullN() != 1 {
		t.Error("nulls lost")
	}

	b, err := reg.MarshalValue(rec)
	if err != nil {
		t.Fatal(err)
	}
	v, err = reg.UnmarshalValue(b)
	if err != nil {
		t.Fatal(err)
	}
	got2 := v.(arrow.RecordBatch)
	defer got2.Release()
	if !array.RecordEqual(rec, got2) {
		t.Error("MarshalValue round trip differs")
	}
}

func TestArrowTableCodec(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := newRecord(t, mem)
	defer rec.Release()
	recs := []arrow.RecordBatch{rec, rec.NewSlice(1, 3), rec.NewSlice(0, 0), rec.NewSlice(2, 4)}
	tbl := array.NewTableFromRecords(rec.Schema(), recs)
	for _, r := range recs[1:] {
		r.Release()
	}
	defer tbl.Release()
	if n := len(tbl.Column(0).Data().Chunks()); n != 4 {
		t.Fatalf("table has %d chunks, want 4", n)
	}

	reg := graph.Default()
	b, err := reg.MarshalValue(tbl)
	if err != nil {
		t.Fatal(err)
	}
	v, err := reg.UnmarshalValue(b)
	if err != nil {
		t.Fatal(err)
	}
	got := v.(arrow.Table)
	defer got.Release()
	if !array.TableEqual(tbl, got) {
		t.Errorf("round trip differs: %d rows vs %d", got.NumRows(), tbl.NumRows())
	}
	if got.NumRows() != 8 {
		t.Errorf("NumRows = %d, want 8", got.NumRows())
	}

	// An empty table keeps its schema.
	empty := array.NewTableFromRecords(rec.Schema(), nil)
	defer empty.Release()
	v, err = reg.UnmarshalValue(mustMarshal(t, reg, empty))
	if err != nil {
		t.Fatal(err)
	}
	got = v.(arrow.Table)
	defer got.Release()
	if got.NumRows() != 0 || !got.Schema().Equal(rec.Schema()) {
		t.Errorf("empty table round trip: %d rows, schema %v", got.NumRows(), got.Schema())
	}
}

func TestDecodeErrors(t *testing.T) {
	reg := graph.Default()
	tests := []struct {
		codec string
		data  []byte
	}{
		{"bool", nil}, {"bool", []byte{1, 1}},
		{"int", nil}, {"int", []byte{0x80}}, {"int", []byte{2, 2}},
		{"int8", binary.AppendVarint(nil, 128)}, {"int16", binary.AppendVarint(nil, -1<<15-1)},
		{"int32", binary.AppendVarint(nil, 1<<31)},
		{"uint8", binary.AppendUvarint(nil, 256)}, {"uint32", binary.AppendUvarint(nil, 1<<32)},
		{"uint64", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{"float64", []byte{1, 2, 3}}, {"float32", []byte{1, 2, 3, 4, 5}},
		{"duration", nil}, {"duration", []byte{0x80, 0x80}},
		{"time", []byte{1, 9}},
		{"gob:[]int", []byte{1, 2, 3}},
		{"map[string]int64", []byte{1}}, {"map[string]int64", []byte{1, 1, 'a'}},
		{"map[string]int64", []byte{0, 0}}, {"map[string]string", []byte{1, 1, 'a', 5, 'x'}},
		{"map[string]float64", []byte{1, 1, 'a', 0, 0}}, {"map[string]string", []byte{0xff, 0xff, 0xff, 0xff, 0x0f}},
		{"list", []byte{0xff, 0xff}},
		{"list", mustMarshalList(t, graph.Value{Codec: "nope", Data: nil})},
		{"arrow.record", nil}, {"arrow.record", []byte("not arrow at all")},
		{"arrow.table", []byte{0xff, 0xff, 0xff, 0xff, 8, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}},
	}
	for _, tt := range tests {
		if v, err := reg.DecodeValue(graph.Value{Codec: tt.codec, Data: tt.data}); err == nil {
			t.Errorf("DecodeValue(%s, %x) = %v, want an error", tt.codec, tt.data, v)
		}
	}
	_, err := reg.DecodeValue(graph.Value{Codec: "myapp.unknown", Data: []byte{1}})
	if err == nil || !strings.Contains(err.Error(), `"myapp.unknown"`) || !strings.Contains(err.Error(), "not registered") {
		t.Errorf("unknown codec: %v", err)
	}
	if _, err := reg.UnmarshalValue([]byte{0xff}); err == nil {
		t.Error("UnmarshalValue of garbage: no error")
	}
}

func mustMarshalList(t testing.TB, items ...graph.Value) []byte {
	t.Helper()
	// A list is a ValueList message; build one by hand through a registry
	// that knows a throwaway codec, then decode it where that codec is missing.
	reg := graph.Default().Child()
	if err := reg.RegisterCodec(graph.NewCodec("nope", func(nope) ([]byte, error) { return nil, nil },
		func([]byte) (nope, error) { return nope{}, nil })); err != nil {
		t.Fatal(err)
	}
	vs := make([]any, len(items))
	for i := range items {
		vs[i] = nope{}
	}
	ev, err := reg.EncodeValue(vs)
	if err != nil {
		t.Fatal(err)
	}
	return ev.Data
}

type nope struct{}

type withChan struct {
	Name string
	C    chan int
}

func TestUnencodable(t *testing.T) {
	reg := graph.Default()
	for _, v := range []any{make(chan int), func() {}, withChan{}, struct{ X int }{1}, complex(1, 2)} {
		_, err := reg.EncodeValue(v)
		var ue *graph.UnencodableError
		if !errors.As(err, &ue) {
			t.Errorf("EncodeValue(%T) = %v, want an *UnencodableError", v, err)
			continue
		}
		if !strings.Contains(err.Error(), "RegisterCodec") {
			t.Errorf("error %q does not say how to fix it", err)
		}
		if _, err := reg.MarshalValue(v); !errors.As(err, &ue) {
			t.Errorf("MarshalValue(%T) = %v, want an *UnencodableError", v, err)
		}
	}
	// An element of a list.
	_, err := reg.EncodeValue([]any{1, make(chan int)})
	var ue *graph.UnencodableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "element 1") {
		t.Errorf("EncodeValue of a list with a chan = %v", err)
	}
}

type point struct{ X, Y int }

func TestGobCodec(t *testing.T) {
	c := graph.GobCodec[point]()
	if c.Name() != "gob:github.com/shoal-data/shoal/graph_test.point" {
		t.Errorf("Name = %q", c.Name())
	}
	if c.Type() != reflect.TypeFor[point]() {
		t.Errorf("Type = %v", c.Type())
	}
	b, err := c.Encode(point{3, -4})
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.Decode(b)
	if err != nil || v != (point{3, -4}) {
		t.Errorf("Decode = %v, %v", v, err)
	}
	if _, err := c.Encode("not a point"); err == nil {
		t.Error("Encode of a wrong type: no error")
	}
	if _, err := c.Decode([]byte{1, 2}); err == nil {
		t.Error("Decode of garbage: no error")
	}
	for _, tt := range []struct {
		c    graph.Codec
		want string
	}{
		{graph.GobCodec[*point](), "gob:*github.com/shoal-data/shoal/graph_test.point"},
		{graph.GobCodec[[]point](), "gob:[]github.com/shoal-data/shoal/graph_test.point"},
		{graph.GobCodec[map[string][2]point](), "gob:map[string][2]github.com/shoal-data/shoal/graph_test.point"},
	} {
		if tt.c.Name() != tt.want {
			t.Errorf("Name = %q, want %q", tt.c.Name(), tt.want)
		}
	}

	reg := graph.Default().Child()
	if err := reg.RegisterCodec(c); err != nil {
		t.Fatal(err)
	}
	if err := reg.RegisterCodec(graph.GobCodec[point]()); err == nil {
		t.Error("registering a codec name twice: no error")
	}
	if err := reg.RegisterCodec(graph.NewCodec("other", func(point) ([]byte, error) { return nil, nil },
		func([]byte) (point, error) { return point{}, nil })); err == nil {
		t.Error("registering a second codec for a type: no error")
	}
	if got, ok := reg.Codec(c.Name()); !ok || got != c {
		t.Error("Codec does not find the registered codec")
	}
	if _, ok := reg.Codec("int"); !ok {
		t.Error("Codec does not look in the parent")
	}
}

type celsius float64

func (c celsius) String() string { return fmt.Sprintf("%.1f°C", float64(c)) }

func TestNewCodecAndInterfaceCodec(t *testing.T) {
	reg := graph.Default().Child()
	c := graph.NewCodec("test.celsius", func(v celsius) ([]byte, error) {
		return []byte(fmt.Sprint(float64(v))), nil
	}, func(b []byte) (celsius, error) {
		var f float64
		_, err := fmt.Sscan(string(b), &f)
		return celsius(f), err
	})
	if err := reg.RegisterCodec(c); err != nil {
		t.Fatal(err)
	}
	v, err := reg.UnmarshalValue(mustMarshal(t, reg, celsius(21.5)))
	if err != nil || v != celsius(21.5) {
		t.Errorf("round trip = %v, %v", v, err)
	}
	_, err = reg.DecodeValue(graph.Value{Codec: "test.celsius", Data: []byte("warm")})
	if err == nil || !strings.Contains(err.Error(), "test.celsius") {
		t.Errorf("decode error %v does not name the codec", err)
	}

	// A codec for an interface type encodes every type that implements it.
	type stringer = fmt.Stringer
	ic := graph.NewCodec("test.stringer", func(v stringer) ([]byte, error) { return []byte(v.String()), nil },
		func(b []byte) (stringer, error) { return big.NewInt(int64(len(b))), nil })
	if err := reg.RegisterCodec(ic); err != nil {
		t.Fatal(err)
	}
	ev, err := reg.EncodeValue(big.NewInt(12345))
	if err != nil || ev.Codec != "test.stringer" || string(ev.Data) != "12345" {
		t.Errorf("EncodeValue(*big.Int) = %v, %v", ev, err)
	}
	// The codec of the concrete type wins over the interface codec.
	if ev, _ := reg.EncodeValue(celsius(1)); ev.Codec != "test.celsius" {
		t.Errorf("celsius encoded with %q", ev.Codec)
	}
}

type sized struct{ n int64 }

func (s sized) SizeBytes() int64 { return s.n }

func TestSizeOf(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := newRecord(t, mem)
	defer rec.Release()

	var bufs int64
	var sum func(d arrow.ArrayData)
	sum = func(d arrow.ArrayData) {
		for _, b := range d.Buffers() {
			if b != nil {
				bufs += int64(b.Len())
			}
		}
		for _, c := range d.Children() {
			sum(c)
		}
	}
	for _, c := range rec.Columns() {
		sum(c.Data())
	}
	if got := graph.SizeOf(rec); got != bufs || got == 0 {
		t.Errorf("SizeOf(record) = %d, want the sum of buffer lengths %d", got, bufs)
	}
	if got := graph.SizeOf(rec.Column(0)); got != util.TotalArraySize(rec.Column(0)) {
		t.Errorf("SizeOf(array) = %d", got)
	}
	tbl := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec, rec})
	defer tbl.Release()
	if got := graph.SizeOf(tbl); got != 2*bufs {
		t.Errorf("SizeOf(table of the record twice) = %d, want %d", got, 2*bufs)
	}

	type inner struct {
		Name string
		Vals []float64
	}
	tests := []struct {
		v    any
		want int64
	}{
		{nil, 0},
		{sized{1234}, 1234},
		{"hello", 5 + 16},
		{make([]byte, 3, 10), 10 + 24},
		{[]int64{1, 2, 3}, 24 + 3*8},
		{[]float32{1}, 24 + 4},
		{[]string{"ab", "cde"}, 24 + (2 + 16) + (3 + 16)},
		{int64(7), 8},
		{true, 1},
		{inner{Name: "abcd", Vals: make([]float64, 4)}, 16 + 24 + 4 + 4*8},
		{&inner{Name: "ab"}, 8 + 16 + 24 + 2},
		{[]any{"ab", int32(1)}, 24 + 2*16 + (2 + 16) + 4},
	}
	for _, tt := range tests {
		if got := graph.SizeOf(tt.v); got != tt.want {
			t.Errorf("SizeOf(%#v) = %d, want %d", tt.v, got, tt.want)
		}
	}
	// Larger values are larger, and maps count their contents.
	small := map[string]string{"a": "b"}
	big := map[string]string{"a": strings.Repeat("b", 1000), "c": "d"}
	if graph.SizeOf(big) <= graph.SizeOf(small)+1000 {
		t.Errorf("SizeOf(map) = %d for a 1000-byte value", graph.SizeOf(big))
	}
	// Cyclic and deep values terminate.
	type node struct {
		Next *node
		Pad  [8]int64
	}
	n := &node{}
	n.Next = n
	if got := graph.SizeOf(n); got <= 0 {
		t.Errorf("SizeOf(cycle) = %d", got)
	}
}

// fuzzSeeds returns MarshalValue bytes of every round-trip case, an Arrow
// record and an Arrow table.
func fuzzSeeds(f *testing.F) [][]byte {
	reg := graph.Default()
	var seeds [][]byte
	for _, tc := range codecCases(f) {
		seeds = append(seeds, mustMarshal(f, reg, tc.v))
	}
	rec := newRecord(f, memory.NewGoAllocator())
	defer rec.Release()
	tbl := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec, rec})
	defer tbl.Release()
	seeds = append(seeds, mustMarshal(f, reg, rec), mustMarshal(f, reg, tbl))
	return seeds
}

func FuzzUnmarshalValue(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	reg := graph.Default()
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := reg.UnmarshalValue(b)
		if err != nil {
			return
		}
		releaseArrow(v)
	})
}

func FuzzDecodeValue(f *testing.F) {
	reg := graph.Default()
	for _, s := range fuzzSeeds(f) {
		v, err := reg.UnmarshalValue(s)
		if err != nil {
			f.Fatal(err)
		}
		ev, err := reg.EncodeValue(v)
		if err != nil {
			f.Fatal(err)
		}
		releaseArrow(v)
		f.Add(ev.Codec, ev.Data)
	}
	f.Fuzz(func(t *testing.T, codec string, data []byte) {
		v, err := reg.DecodeValue(graph.Value{Codec: codec, Data: data})
		if err != nil {
			return
		}
		// What decodes encodes again.
		if _, err := reg.EncodeValue(v); err != nil {
			t.Errorf("%s decoded %x to %#v, which does not encode: %v", codec, data, v, err)
		}
		releaseArrow(v)
	})
}

func releaseArrow(v any) {
	if r, ok := v.(interface{ Release() }); ok {
		r.Release()
	}
}

func TestCodecRoundTripProperty(t *testing.T) {
	reg := graph.Default()
	gens := map[string]*rapid.Generator[any]{
		"int":      rapid.Int().AsAny(),
		"int8":     rapid.Int8().AsAny(),
		"int16":    rapid.Int16().AsAny(),
		"int32":    rapid.Int32().AsAny(),
		"int64":    rapid.Int64().AsAny(),
		"uint":     rapid.Uint().AsAny(),
		"uint8":    rapid.Uint8().AsAny(),
		"uint16":   rapid.Uint16().AsAny(),
		"uint32":   rapid.Uint32().AsAny(),
		"uint64":   rapid.Uint64().AsAny(),
		"float32":  rapid.Float32().AsAny(),
		"float64":  rapid.Float64().AsAny(),
		"bool":     rapid.Bool().AsAny(),
		"string":   rapid.String().AsAny(),
		"bytes":    rapid.SliceOfN(rapid.Byte(), 1, 64).AsAny(),
		"duration": rapid.Map(rapid.Int64(), func(v int64) time.Duration { return time.Duration(v) }).AsAny(),
		"time": rapid.Map(rapid.Int64Range(-1<<40, 1<<40), func(v int64) time.Time {
			return time.Unix(v, v%1e9).In(time.FixedZone("Z", int(v%(14*3600))/60*60))
		}).AsAny(),
		"map[string]int64":   rapid.MapOf(rapid.String(), rapid.Int64()).AsAny(),
		"map[string]string":  rapid.MapOf(rapid.String(), rapid.String()).AsAny(),
		"map[string]float64": rapid.MapOf(rapid.String(), rapid.Float64()).AsAny(),
		"gob:[]string":       rapid.SliceOfN(rapid.String(), 1, 5).AsAny(),
	}
	names := slices.Sorted(maps.Keys(gens))
	rapid.Check(t, func(t *rapid.T) {
		var v any
		if n := rapid.IntRange(0, 5).Draw(t, "list"); n == 0 {
			v = gens[rapid.SampledFrom(names).Draw(t, "codec")].Draw(t, "value")
		} else {
			l := make([]any, n)
			for i := range l {
				l[i] = gens[rapid.SampledFrom(names).Draw(t, "item codec")].Draw(t, "item")
			}
			v = l
		}
		b, err := reg.MarshalValue(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := reg.UnmarshalValue(b)
		if err != nil {
			t.Fatal(err)
		}
		if !sameValue(v, got) {
			t.Fatalf("round trip of %#v = %#v", v, got)
		}
		if b2, _ := reg.MarshalValue(got); !bytes.Equal(b, b2) {
			t.Fatalf("the decoded value encodes differently")
		}
	})
}

type fahrenheit float64

func TestRegisterCodecDefault(t *testing.T) {
	enc := func(v fahrenheit) ([]byte, error) { return binary.AppendVarint(nil, int64(v*10)), nil }
	dec := func(b []byte) (fahrenheit, error) {
		n, k := binary.Varint(b)
		if k != len(b) || k <= 0 {
			return 0, errors.New("bad fahrenheit")
		}
		return fahrenheit(n) / 10, nil
	}
	// The default registry lives as long as the test binary: register once
	// even when the test runs several times.
	if _, ok := graph.Default().Codec("graph_test.fahrenheit"); !ok {
		if err := graph.RegisterCodec("graph_test.fahrenheit", enc, dec); err != nil {
			t.Fatal(err)
		}
	}
	if err := graph.RegisterCodec("graph_test.fahrenheit", enc, dec); err == nil {
		t.Error("second RegisterCodec of a name: no error")
	}
	v, err := graph.Default().UnmarshalValue(mustMarshal(t, graph.Default(), fahrenheit(98.6)))
	if err != nil || v != fahrenheit(98.6) {
		t.Errorf("round trip = %v, %v", v, err)
	}
}

func TestListCodecDirect(t *testing.T) {
	c, ok := graph.Default().Codec("list")
	if !ok || c.Type() != reflect.TypeFor[[]any]() {
		t.Fatalf("list codec: %v %v", c, ok)
	}
	b, err := c.Encode([]any{int8(1), "x"})
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.Decode(b)
	if err != nil || !reflect.DeepEqual(v, []any{int8(1), "x"}) {
		t.Errorf("Decode = %#v, %v", v, err)
	}
	if _, err := c.Encode("not a list"); err == nil {
		t.Error("Encode of a string: no error")
	}
}
