package jsonl

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/dftest"
	"github.com/shoal-data/shoal/io/storage"
)

func TestWrite(t *testing.T) {
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	rec := dftest.Record(t,
		dftest.Int64s("i", 1, nil),
		dftest.Int64s("u8", 255, 0).As(arrow.PrimitiveTypes.Uint8),
		dftest.Float64s("f", 0.1, math.NaN()),
		dftest.Float64s("f32", 0.1, math.Inf(1)).As(arrow.PrimitiveTypes.Float32),
		dftest.Bools("b", true, false),
		dftest.Strings("s", "a\"b\\\n\x01é", "\xff"),
		dftest.Strings("bin", "hi", "").As(arrow.BinaryTypes.Binary),
		dftest.Strings("cat", "x", nil).As(dict),
		dftest.Timestamps("t", "2024-03-01T12:30:00.5Z", nil),
		dftest.Timestamps("naive", "2024-03-01 12:30:00", nil).As(&arrow.TimestampType{Unit: arrow.Second}),
		dftest.Timestamps("paris", "2024-03-01T12:30:00Z", nil).As(&arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "Europe/Paris"}),
		dftest.Dates("d", "2024-02-29", nil),
		dftest.Durations("dur", time.Second, nil).As(arrow.FixedWidthTypes.Duration_ms),
		dftest.Strings("tod", "15:04:05.5", nil).As(arrow.FixedWidthTypes.Time64us),
		dftest.Strings("key with \"quotes\"", "v", "w"),
	)
	lb := array.NewListBuilder(memory.DefaultAllocator, arrow.PrimitiveTypes.Int64)
	defer lb.Release()
	lb.Append(true)
	lb.ValueBuilder().(*array.Int64Builder).AppendValues([]int64{1, 2}, nil)
	lb.AppendNull()
	list := lb.NewArray()
	defer list.Release()
	fields := append([]arrow.Field{{Name: "i", Type: list.DataType(), Nullable: true}}, rec.Schema().Fields()[1:]...)
	rec = array.NewRecordBatch(arrow.NewSchema(fields, nil), append([]arrow.Array{list}, rec.Columns()[1:]...), rec.NumRows())
	defer rec.Release()

	want := `{"i":[1,2],"u8":255,"f":0.1,"f32":0.1,"b":true,"s":"a\"b\\\n\u0001é","bin":"aGk=","cat":"x","t":"2024-03-01T12:30:00.5Z","naive":"2024-03-01T12:30:00","paris":"2024-03-01T13:30:00+01:00","d":"2024-02-29","dur":1000,"tod":"15:04:05.5","key with \"quotes\"":"v"}
{"i":null,"u8":0,"f":null,"f32":null,"b":false,"s":"` + "\ufffd" + `","bin":"","cat":null,"t":null,"naive":null,"paris":null,"d":null,"dur":null,"tod":null,"key with \"quotes\"":"w"}
`
	var b strings.Builder
	if err := Write(&b, []arrow.RecordBatch{rec}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if b.String() != want {
		t.Errorf("Write:\n%s\nwant:\n%s", b.String(), want)
	}

	b.Reset()
	if err := Write(&b, []arrow.RecordBatch{rec.NewSlice(1, 2)}, WriteOptions{OmitNulls: true}); err != nil {
		t.Fatal(err)
	}
	if want := `{"u8":0,"f":null,"f32":null,"b":false,"s":"` + "\ufffd" + `","bin":"","key with \"quotes\"":"w"}` + "\n"; b.String() != want {
		t.Errorf("Write with OmitNulls:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestRoundTrip writes random tables and reads them back.
func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ctx := context.Background()
	dir := t.TempDir()
	for iter := 0; iter < 10; iter++ {
		n := 1 + rng.IntN(100)
		var ints, floats, strs, bools, times []any
		for i := 0; i < n; i++ {
			ints = append(ints, maybe(rng, rng.Int64()-rng.Int64()))
			floats = append(floats, maybe(rng, rng.NormFloat64()*math.Pow(10, float64(rng.IntN(40)-20))))
			strs = append(strs, maybe(rng, randomString(rng)))
			bools = append(bools, maybe(rng, rng.IntN(2) == 0))
			times = append(times, maybe(rng, time.UnixMicro(rng.Int64N(253402300799e6+62135596800e6)-62135596800e6).UTC()))
		}
		cols := []dftest.Column{dftest.Int64s("i", ints...), dftest.Float64s("f", floats...), dftest.Strings("s", strs...),
			dftest.Bools("b", bools...), dftest.Timestamps("t", times...)}
		path := filepath.Join(dir, "t.jsonl")
		want := dftest.Record(t, cols...)
		if err := WriteFile(ctx, storage.Local{}, path, []arrow.RecordBatch{want.NewSlice(0, int64(n/2)), want.NewSlice(int64(n/2), int64(n))}, WriteOptions{OmitNulls: iter%2 == 0}); err != nil {
			t.Fatal(err)
		}
		_, got, err := readAll(t, []string{path}, Options{Schema: want.Schema(), BlockSize: int64(1 + rng.IntN(2000))})
		if err != nil {
			t.Fatal(err)
		}
		if !dftest.AssertEqual(t, got, want, dftest.Tolerance(0, 0)) {
			data, _ := os.ReadFile(path)
			t.Fatalf("round trip of:\n%s", data)
		}
	}
}

func maybe[T any](rng *rand.Rand, v T) any {
	if rng.IntN(6) == 0 {
		return nil
	}
	return v
}

func randomString(rng *rand.Rand) string {
	alphabet := []rune("ab \"\\/\n\t\x00\x1fé日😀{}[],:")
	r := make([]rune, rng.IntN(12))
	for i := range r {
		r[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(r)
}
