package flightdata

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/graph"
)

// pipe is a Flight data stream in memory.
type pipe struct{ msgs []*flight.FlightData }

func (p *pipe) Send(d *flight.FlightData) error {
	// The writer reuses its buffers: keep copies, as the wire would.
	p.msgs = append(p.msgs, &flight.FlightData{FlightDescriptor: d.FlightDescriptor,
		DataHeader: bytes.Clone(d.DataHeader), DataBody: bytes.Clone(d.DataBody), AppMetadata: bytes.Clone(d.AppMetadata)})
	return nil
}

func (p *pipe) Recv() (*flight.FlightData, error) {
	if len(p.msgs) == 0 {
		return nil, io.EOF
	}
	d := p.msgs[0]
	p.msgs = p.msgs[1:]
	return d, nil
}

func int64Record(n int) arrow.RecordBatch {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	for i := range n {
		b.Append(int64(i))
	}
	col := b.NewArray()
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	return array.NewRecordBatch(schema, []arrow.Array{col}, int64(n))
}

func TestRoundTrip(t *testing.T) {
	reg := graph.Default()
	big := int64Record(ChunkBytes/4 + 5) // several chunks
	small := int64Record(10)
	tests := []struct {
		name   string
		v      any
		chunks int // record messages expected, at least
		check  func(t *testing.T, got any)
	}{
		{"small record", small, 1, func(t *testing.T, got any) {
			r := got.(arrow.RecordBatch)
			if !array.RecordEqual(r, small) {
				t.Fatal("records differ")
			}
		}},
		{"empty record", int64Record(0), 1, func(t *testing.T, got any) {
			if got.(arrow.RecordBatch).NumRows() != 0 {
				t.Fatal("rows appeared")
			}
		}},
		{"record larger than a chunk", big, 2, func(t *testing.T, got any) {
			r, ok := got.(arrow.RecordBatch)
			if !ok || !array.RecordEqual(r, big) {
				t.Fatalf("got %T, not the record sent", got)
			}
		}},
		{"table", array.NewTableFromRecords(small.Schema(), []arrow.RecordBatch{small, small}), 1, func(t *testing.T, got any) {
			tb, ok := got.(arrow.Table)
			if !ok || tb.NumRows() != 20 {
				t.Fatalf("got %T", got)
			}
		}},
		{"go value", []any{int64(1), "a"}, 1, func(t *testing.T, got any) {
			if m, ok := got.([]any); !ok || len(m) != 2 || m[1] != "a" {
				t.Fatalf("got %#v", got)
			}
		}},
		{"large go value", make([]byte, ChunkBytes+3), 2, func(t *testing.T, got any) {
			if b, ok := got.([]byte); !ok || len(b) != ChunkBytes+3 {
				t.Fatalf("got %T", got)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &pipe{}
			if err := Send(p, tc.v, reg); err != nil {
				t.Fatal(err)
			}
			if len(p.msgs) < tc.chunks+1 {
				t.Errorf("%d messages, want at least %d", len(p.msgs), tc.chunks+1)
			}
			for _, m := range p.msgs {
				if len(m.DataBody) > MaxMessageBytes {
					t.Errorf("message of %d bytes", len(m.DataBody))
				}
			}
			got, err := Receive(p, reg)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, got)
		})
	}
}

func TestReceiveGarbage(t *testing.T) {
	reg := graph.Default()
	tests := []struct {
		name string
		msgs []*flight.FlightData
	}{
		{"nothing", nil},
		{"not arrow", []*flight.FlightData{{DataHeader: []byte{1, 2, 3}, DataBody: []byte{4}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Receive(&pipe{msgs: tc.msgs}, reg); err == nil {
				t.Fatal("no error")
			}
		})
	}
	// A value record with the wrong shape.
	p := &pipe{}
	if err := Send(p, small2(), reg); err != nil {
		t.Fatal(err)
	}
	for _, m := range p.msgs {
		if len(m.AppMetadata) > 0 {
			m.AppMetadata = kindValue
		}
	}
	if _, err := Receive(p, reg); err == nil || errors.Is(err, io.EOF) {
		t.Fatalf("malformed value: %v", err)
	}
}

func small2() arrow.RecordBatch { return int64Record(2) }

// FuzzReceive feeds arbitrary Flight messages to Receive: errors, never
// panics.
func FuzzReceive(f *testing.F) {
	reg := graph.Default()
	p := &pipe{}
	Send(p, int64Record(3), reg)
	for _, m := range p.msgs {
		f.Add(m.DataHeader, m.DataBody, m.AppMetadata)
	}
	f.Fuzz(func(t *testing.T, header, body, meta []byte) {
		p := &pipe{}
		Send(p, int64Record(1), reg)
		p.msgs = append(p.msgs[:1], &flight.FlightData{DataHeader: header, DataBody: body, AppMetadata: meta})
		Receive(p, reg)
	})
}

// TestReceiveBoundsAllocation has each 4-byte position of each message's
// Arrow metadata in turn claim a billion (a count of custom metadata, of
// fields, of buffers...): Receive allocates little, whatever it was, and
// the claims that reach outside the message are refused before Arrow
// reads them.
func TestReceiveBoundsAllocation(t *testing.T) {
	reg := graph.Default()
	md := arrow.NewMetadata([]string{"origin"}, []string{"test"})
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64, Metadata: md}}, &md)
	x := int64Record(3)
	defer x.Release()
	rec := array.NewRecordBatch(schema, x.Columns(), x.NumRows())
	defer rec.Release()
	good := &pipe{}
	if err := Send(good, rec, reg); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	refused := 0
	for m, msg := range good.msgs {
		for i := 0; i+4 <= len(msg.DataHeader); i++ {
			p := &pipe{}
			for _, x := range good.msgs {
				p.msgs = append(p.msgs, &flight.FlightData{DataHeader: x.DataHeader, DataBody: x.DataBody, AppMetadata: x.AppMetadata})
			}
			p.msgs[m].DataHeader = bytes.Clone(msg.DataHeader)
			binary.LittleEndian.PutUint32(p.msgs[m].DataHeader[i:], 1<<30)
			_, bad := graph.CheckArrowMessage(p.msgs[m].DataHeader)
			runtime.ReadMemStats(&before)
			_, err := Receive(p, reg)
			runtime.ReadMemStats(&after)
			if d := after.TotalAlloc - before.TotalAlloc; d > 64<<20 {
				t.Errorf("a billion at byte %d of message %d made Receive allocate %d MiB", i, m, d>>20)
			}
			if bad != nil {
				refused++
				if err == nil || !strings.Contains(err.Error(), "flight stream: ") || !strings.Contains(err.Error(), bad.Error()) {
					t.Errorf("a billion at byte %d of message %d: %v, want it refused", i, m, err)
				}
			}
		}
	}
	if refused == 0 {
		t.Error("no claim of a billion was refused")
	}
}
