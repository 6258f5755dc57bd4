package parquet

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/parquet-go/parquet-go"

	"github.com/shoal-data/shoal/io/storage"
)

// rtColumn is a column of the round-trip table: the type written, the
// type read back, and how a written value reads back.
type rtColumn struct {
	name     string
	write    arrow.DataType
	read     string
	nullable bool
	conv     func(any) any
}

var dictString = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

func rtColumns() []rtColumn {
	same := func(v any) any { return v }
	cols := []rtColumn{
		{"b", arrow.FixedWidthTypes.Boolean, "bool", true, same},
		{"i8", arrow.PrimitiveTypes.Int8, "int8", true, same},
		{"i16", arrow.PrimitiveTypes.Int16, "int16", true, same},
		{"i32", arrow.PrimitiveTypes.Int32, "int32", true, same},
		{"i64", arrow.PrimitiveTypes.Int64, "int64", true, same},
		{"u8", arrow.PrimitiveTypes.Uint8, "uint8", true, same},
		{"u16", arrow.PrimitiveTypes.Uint16, "uint16", true, same},
		{"u32", arrow.PrimitiveTypes.Uint32, "uint32", true, same},
		{"u64", arrow.PrimitiveTypes.Uint64, "uint64", true, same},
		{"f32", arrow.PrimitiveTypes.Float32, "float32", true, same},
		{"f64", arrow.PrimitiveTypes.Float64, "float64", true, same},
		{"s", arrow.BinaryTypes.String, "dictionary<values=utf8, indices=int32, ordered=false>", true, same},
		{"ls", arrow.BinaryTypes.LargeString, "dictionary<values=utf8, indices=int32, ordered=false>", true, same},
		{"ds", dictString, "dictionary<values=utf8, indices=int32, ordered=false>", true, same},
		{"bin", arrow.BinaryTypes.Binary, "binary", true, same},
		{"lbin", arrow.BinaryTypes.LargeBinary, "binary", true, same},
		{"fsb", &arrow.FixedSizeBinaryType{ByteWidth: 3}, "fixed_size_binary[3]", true, same},
		{"d32", arrow.FixedWidthTypes.Date32, "date32", true, same},
		{"d64", arrow.FixedWidthTypes.Date64, "date32", true, func(v any) any { return int32(v.(int64) / 86400000) }},
		{"ts_s", &arrow.TimestampType{Unit: arrow.Second}, "timestamp[ms]", true, func(v any) any { return v.(int64) * 1000 }},
		{"ts_ms", &arrow.TimestampType{Unit: arrow.Millisecond}, "timestamp[ms]", true, same},
		{"ts_us", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, "timestamp[us, tz=UTC]", true, same},
		{"ts_ns", &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "Europe/Paris"}, "timestamp[ns, tz=UTC]", true, same},
		{"t32", arrow.FixedWidthTypes.Time32ms, "time32[ms]", true, same},
		{"t32s", arrow.FixedWidthTypes.Time32s, "time32[ms]", true, func(v any) any { return v.(int32) * 1000 }},
		{"t64us", arrow.FixedWidthTypes.Time64us, "time64[us]", true, same},
		{"t64ns", arrow.FixedWidthTypes.Time64ns, "time64[ns]", true, same},
		{"dec5", &arrow.Decimal128Type{Precision: 5, Scale: 2}, "decimal(5, 2)", true, same},
		{"dec15", &arrow.Decimal128Type{Precision: 15, Scale: 3}, "decimal(15, 3)", true, same},
		{"dec30", &arrow.Decimal128Type{Precision: 30, Scale: 10}, "decimal(30, 10)", true, same},
		{"req_i64", arrow.PrimitiveTypes.Int64, "int64", false, same},
		{"req_s", arrow.BinaryTypes.String, "dictionary<values=utf8, indices=int32, ordered=false>", false, same},
		{"req_f64", arrow.PrimitiveTypes.Float64, "float64", false, same},
		{"req_b", arrow.FixedWidthTypes.Boolean, "bool", false, same},
	}
	return cols
}

// randomArray makes n values of type t, about a fifth null when nullable.
func randomArray(mem memory.Allocator, rng *rand.Rand, t arrow.DataType, n int, nullable bool) arrow.Array {
	b := array.NewBuilder(mem, t)
	defer b.Release()
	words := []string{"", "a", "héllo", "世界", "x y/z", "0123456789abcdef0123456789"}
	for range n {
		if nullable && rng.IntN(5) == 0 {
			b.AppendNull()
			continue
		}
		switch b := b.(type) {
		case *array.BooleanBuilder:
			b.Append(rng.IntN(2) == 1)
		case *array.Int8Builder:
			b.Append(int8(rng.Uint32()))
		case *array.Int16Builder:
			b.Append(int16(rng.Uint32()))
		case *array.Int32Builder:
			b.Append(int32(rng.Uint32()))
		case *array.Int64Builder:
			b.Append(int64(rng.Uint64()))
		case *array.Uint8Builder:
			b.Append(uint8(rng.Uint32()))
		case *array.Uint16Builder:
			b.Append(uint16(rng.Uint32()))
		case *array.Uint32Builder:
			b.Append(rng.Uint32())
		case *array.Uint64Builder:
			b.Append(rng.Uint64())
		case *array.Float32Builder:
			b.Append(float32(rng.NormFloat64()))
		case *array.Float64Builder:
			switch rng.IntN(20) {
			case 0:
				b.Append(math.Inf(1))
			case 1:
				b.Append(math.Copysign(0, -1))
			default:
				b.Append(rng.NormFloat64() * 1e6)
			}
		case *array.StringBuilder:
			b.Append(words[rng.IntN(len(words))] + fmt.Sprint(rng.IntN(50)))
		case *array.LargeStringBuilder:
			b.Append(words[rng.IntN(len(words))])
		case *array.BinaryDictionaryBuilder:
			if err := b.AppendString(words[rng.IntN(len(words))]); err != nil {
				panic(err)
			}
		case *array.BinaryBuilder:
			v := make([]byte, rng.IntN(6))
			for i := range v {
				v[i] = byte(rng.Uint32())
			}
			b.Append(v)
		case *array.FixedSizeBinaryBuilder:
			b.Append([]byte{byte(rng.Uint32()), byte(rng.Uint32()), 0xFF})
		case *array.Date32Builder:
			b.Append(arrow.Date32(rng.IntN(100000) - 50000))
		case *array.Date64Builder:
			b.Append(arrow.Date64(int64(rng.IntN(100000)-50000) * 86400000))
		case *array.TimestampBuilder:
			b.Append(arrow.Timestamp(rng.Int64N(1<<50) - 1<<49))
		case *array.Time32Builder:
			if t.(*arrow.Time32Type).Unit == arrow.Second {
				b.Append(arrow.Time32(rng.IntN(86400)))
			} else {
				b.Append(arrow.Time32(rng.IntN(86400000)))
			}
		case *array.Time64Builder:
			b.Append(arrow.Time64(rng.Int64N(86400e9)))
		case *array.Decimal128Builder:
			p := t.(*arrow.Decimal128Type).Precision
			max := decimal128.GetMaxValue(p)
			v := decimal128.FromI64(rng.Int64())
			if p < 19 {
				m := int64(max.LowBits())
				v = decimal128.FromI64(rng.Int64N(m*2+1) - m)
			} else {
				v = v.Mul(decimal128.FromI64(rng.Int64N(1e9)))
			}
			b.Append(v)
		default:
			panic(fmt.Sprintf("randomArray: %T", b))
		}
	}
	return b.NewArray()
}

func rtRecord(mem memory.Allocator, seed uint64, n int) arrow.RecordBatch {
	rng := rand.New(rand.NewPCG(seed, 1))
	var fields []arrow.Field
	var arrays []arrow.Array
	for _, c := range rtColumns() {
		fields = append(fields, arrow.Field{Name: c.name, Type: c.write, Nullable: c.nullable})
		arrays = append(arrays, randomArray(mem, rng, c.write, n, c.nullable))
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), arrays, int64(n))
	for _, a := range arrays {
		a.Release()
	}
	return rec
}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		opts WriteOptions
		rows []int // rows of each record written
	}{
		{"snappy", WriteOptions{}, []int{1000}},
		{"zstd row groups", WriteOptions{Compression: "zstd", RowGroupRows: 300}, []int{500, 700}},
		{"gzip small pages", WriteOptions{Compression: "gzip", RowGroupRows: 1000, extra: []pq.WriterOption{pq.PageBufferSize(512)}}, []int{2000}},
		{"none page v1", WriteOptions{Compression: "none", RowGroupRows: 250, extra: []pq.WriterOption{pq.DataPageVersion(1), pq.PageBufferSize(1024)}}, []int{100, 900}},
		{"empty record", WriteOptions{}, []int{0, 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			var recs []arrow.RecordBatch
			for i, n := range tc.rows {
				recs = append(recs, rtRecord(mem, uint64(i+1), n))
			}
			defer func() {
				for _, r := range recs {
					r.Release()
				}
			}()
			path := filepath.Join(t.TempDir(), "rt.parquet")
			if err := Write(ctx, storage.Local{}, path, recs, tc.opts); err != nil {
				t.Fatal(err)
			}
			for _, exact := range []bool{true, false} {
				target := int64(0) // one part for all row groups
				if !exact {
					target = 1 << 14 // a part per row group or so
				}
				got, plan := readAllParts(t, []string{path}, Options{ExactDecimals: exact, TargetBytes: target})
				for i, c := range rtColumns() {
					f := plan.Schema.Field(i)
					want := c.read
					if !exact && c.write.ID() == arrow.DECIMAL128 {
						want = "float64"
					}
					if f.Name != c.name || f.Type.String() != want || f.Nullable != c.nullable {
						t.Errorf("field %d: %s %s nullable=%v, want %s %s nullable=%v", i, f.Name, f.Type, f.Nullable, c.name, want, c.nullable)
						continue
					}
					var expect []any
					for _, r := range recs {
						for _, v := range goValues(t, r.Column(i)) {
							if v != nil {
								v = c.conv(v)
								if !exact && c.write.ID() == arrow.DECIMAL128 {
									v = decimalStringFloat(v.(string), c.write.(*arrow.Decimal128Type).Scale)
								}
							}
							expect = append(expect, v)
						}
					}
					if !equalValues(got[c.name], expect) {
						for j := range expect {
							if !equalValues(got[c.name][j:j+1], expect[j:j+1]) {
								t.Errorf("column %s (exact=%v) row %d: got %v, want %v", c.name, exact, j, got[c.name][j], expect[j])
								break
							}
						}
					}
				}
			}
		})
	}
}

// decimalStringFloat is the float64 nearest to unscaled / 10^scale.
func decimalStringFloat(unscaled string, scale int32) float64 {
	s := unscaled
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	for len(s) <= int(scale) {
		s = "0" + s
	}
	s = s[:len(s)-int(scale)] + "." + s[len(s)-int(scale):]
	if neg {
		s = "-" + s
	}
	var f float64
	fmt.Sscan(s, &f)
	return f
}
