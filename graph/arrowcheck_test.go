package graph

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// arrowStream writes a record with metadata, a dictionary, a time zone
// and nested fields as an IPC stream.
func arrowStream(t testing.TB) []byte {
	mem := memory.NewGoAllocator()
	md := arrow.NewMetadata([]string{"origin", "owner"}, []string{"test", "shoal"})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "Europe/Paris"}, Metadata: md},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "cat", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}},
	}, &md)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Field(0).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{1, 2}, nil)
	lb := b.Field(1).(*array.ListBuilder)
	lb.Append(true)
	lb.ValueBuilder().(*array.StringBuilder).Append("x")
	lb.AppendNull()
	db := b.Field(2).(*array.BinaryDictionaryBuilder)
	db.AppendString("a")
	db.AppendString("b")
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readAll(b []byte) (rows int64, err error) {
	defer recoverArrow(&err)
	r, err := NewArrowReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return 0, err
	}
	defer r.Release()
	for r.Next() {
		rows += r.RecordBatch().NumRows()
	}
	return rows, r.Err()
}

// TestArrowReaderBoundsAllocation reads a stream of which each 4-byte
// position in turn claims a billion: whatever count or length that is,
// reading allocates little, and the unchanged stream reads whole.
func TestArrowReaderBoundsAllocation(t *testing.T) {
	good := arrowStream(t)
	if rows, err := readAll(good); err != nil || rows != 2 {
		t.Fatalf("the stream: %d rows, %v", rows, err)
	}
	var before, after runtime.MemStats
	for i := 0; i+4 <= len(good); i++ {
		bad := bytes.Clone(good)
		binary.LittleEndian.PutUint32(bad[i:], 1<<30)
		runtime.ReadMemStats(&before)
		readAll(bad)
		runtime.ReadMemStats(&after)
		if d := after.TotalAlloc - before.TotalAlloc; d > 64<<20 {
			t.Errorf("a billion at byte %d of %d made the reader allocate %d MiB", i, len(good), d>>20)
		}
	}
}

// FuzzArrowReader reads arbitrary bytes as an IPC stream: an error or
// records, never a panic or an allocation far beyond the input.
func FuzzArrowReader(f *testing.F) {
	f.Add(arrowStream(f))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x10, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		readAll(b)
		runtime.ReadMemStats(&after)
		if d := after.TotalAlloc - before.TotalAlloc; d > 64<<20+uint64(len(b))*64 {
			t.Errorf("%d bytes made the reader allocate %d MiB", len(b), d>>20)
		}
	})
}
