// Package flightdata moves task results over Arrow Flight: a worker serves
// the value of a key on DoGet (the ticket is the key) and takes values on
// DoPut (the descriptor path is the key).
//
// Arrow record batches and tables travel as an Arrow IPC stream, split into
// records of at most ChunkBytes; any other value travels as its registry
// codec bytes (graph.Registry.MarshalValue) in a one-column binary record.
// The application metadata of every record says which of the three it is,
// so that the receiver rebuilds a value of the type that was sent.
package flightdata

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/graph"
)

// ChunkBytes is the largest record sent in one Flight message.
const ChunkBytes = 16 << 20

// MaxMessageBytes is the message size limit that peers must accept: a
// chunk with room to spare for a row larger than ChunkBytes.
const MaxMessageBytes = 512 << 20

// Window is the HTTP/2 flow-control window of data connections: large, so
// that a bulk transfer is not held back by acknowledgements on loopback or
// a fast network.
const Window = 64 << 20

// DialOptions are the gRPC options of connections that move data.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithInitialWindowSize(Window), grpc.WithInitialConnWindowSize(Window),
		grpc.WithReadBufferSize(1 << 20), grpc.WithWriteBufferSize(1 << 20)}
}

// ServerOptions are the gRPC options of servers that serve data.
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.InitialWindowSize(Window), grpc.InitialConnWindowSize(Window),
		grpc.ReadBufferSize(1 << 20), grpc.WriteBufferSize(1 << 20),
		grpc.MaxRecvMsgSize(MaxMessageBytes), grpc.MaxSendMsgSize(MaxMessageBytes)}
}

// The kinds of records, in their application metadata.
var (
	kindRecord = []byte("shoal:record") // part of one arrow.RecordBatch
	kindTable  = []byte("shoal:table")  // a chunk of an arrow.Table
	kindValue  = []byte("shoal:value")  // part of a codec-encoded value
)

var valueSchema = arrow.NewSchema([]arrow.Field{{Name: "value", Type: arrow.BinaryTypes.Binary}}, nil)

// Send writes v to a Flight data stream.
func Send(w flight.DataStreamWriter, v any, reg *graph.Registry) error {
	switch x := v.(type) {
	case arrow.RecordBatch:
		fw := flight.NewRecordWriter(w, ipc.WithSchema(x.Schema()))
		n := x.NumRows()
		step := rowsPerChunk(graph.SizeOf(x), n)
		if n == 0 {
			if err := fw.WriteWithAppMetadata(x, kindRecord); err != nil {
				return err
			}
		}
		for off := int64(0); off < n; off += step {
			end := min(off+step, n)
			part := x
			if off != 0 || end != n {
				part = x.NewSlice(off, end)
			}
			err := fw.WriteWithAppMetadata(part, kindRecord)
			if part != x {
				part.Release()
			}
			if err != nil {
				return err
			}
		}
		return fw.Close()
	case arrow.Table:
		fw := flight.NewRecordWriter(w, ipc.WithSchema(x.Schema()))
		tr := array.NewTableReader(x, rowsPerChunk(graph.SizeOf(x), x.NumRows()))
		defer tr.Release()
		for tr.Next() {
			if err := fw.WriteWithAppMetadata(tr.RecordBatch(), kindTable); err != nil {
				return err
			}
		}
		if err := tr.Err(); err != nil {
			return err
		}
		return fw.Close()
	}
	b, err := reg.MarshalValue(v)
	if err != nil {
		return err
	}
	fw := flight.NewRecordWriter(w, ipc.WithSchema(valueSchema))
	for off := 0; off == 0 || off < len(b); off += ChunkBytes {
		end := min(off+ChunkBytes, len(b))
		bld := array.NewBinaryBuilder(memory.DefaultAllocator, arrow.BinaryTypes.Binary)
		bld.Append(b[off:end])
		col := bld.NewArray()
		bld.Release()
		rec := array.NewRecordBatch(valueSchema, []arrow.Array{col}, 1)
		col.Release()
		err := fw.WriteWithAppMetadata(rec, kindValue)
		rec.Release()
		if err != nil {
			return err
		}
	}
	return fw.Close()
}

func rowsPerChunk(size, rows int64) int64 {
	if rows <= 0 || size <= ChunkBytes {
		return max(rows, 1)
	}
	per := size / rows
	if per <= 0 {
		per = 1
	}
	return max(ChunkBytes/per, 1)
}

// Receive reads a value written by Send.
func Receive(r flight.DataStreamReader, reg *graph.Registry) (any, error) {
	v, _, err := ReceivePut(r, reg)
	return v, err
}

// ReceivePut reads a value written by Put: the value, and the key its
// descriptor names.
func ReceivePut(r flight.DataStreamReader, reg *graph.Registry) (any, string, error) {
	rdr, err := flight.NewRecordReader(checkedStream{r})
	if err != nil {
		return nil, "", err
	}
	var key string
	if d := rdr.LatestFlightDescriptor(); d != nil && len(d.Path) == 1 {
		key = d.Path[0]
	}
	v, err := receive(rdr, reg)
	return v, key, err
}

// checkedStream checks the Arrow metadata of every message a peer sends
// before the Flight reader reads it (graph.CheckArrowMessage): its counts
// and lengths must fit in it, so that a message cannot make the reader
// allocate more than it holds.
type checkedStream struct{ flight.DataStreamReader }

func (s checkedStream) Recv() (*flight.FlightData, error) {
	fd, err := s.DataStreamReader.Recv()
	if err != nil || len(fd.DataHeader) == 0 {
		return fd, err
	}
	body, err := graph.CheckArrowMessage(fd.DataHeader)
	if err != nil {
		return nil, fmt.Errorf("flight stream: %w", err)
	}
	if body > int64(len(fd.DataBody)) {
		return nil, fmt.Errorf("flight stream: a message claims a body of %d bytes and carries %d", body, len(fd.DataBody))
	}
	return fd, nil
}

func receive(rdr *flight.Reader, reg *graph.Registry) (any, error) {
	defer rdr.Release()
	var (
		kind []byte
		recs []arrow.RecordBatch
		data []byte
	)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for rdr.Next() {
		rec := rdr.RecordBatch()
		k := rdr.LatestAppMetadata()
		if kind == nil {
			kind = append([]byte(nil), k...)
		} else if string(k) != string(kind) {
			return nil, fmt.Errorf("flight stream mixes records of kind %q and %q", kind, k)
		}
		switch string(kind) {
		case string(kindValue):
			col, ok := rec.Column(0).(*array.Binary)
			if rec.NumCols() != 1 || !ok || col.Len() != 1 {
				return nil, errors.New("flight stream: malformed value record")
			}
			data = append(data, col.Value(0)...)
		case string(kindRecord), string(kindTable):
			rec.Retain()
			recs = append(recs, rec)
		default:
			return nil, fmt.Errorf("flight stream: unknown record kind %q", kind)
		}
	}
	if err := rdr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	switch string(kind) {
	case string(kindValue):
		return reg.UnmarshalValue(data)
	case string(kindRecord):
		if len(recs) == 1 {
			rec := recs[0]
			rec.Retain()
			return rec, nil
		}
		return concatRecords(rdr.Schema(), recs)
	}
	return array.NewTableFromRecords(rdr.Schema(), recs), nil
}

func concatRecords(schema *arrow.Schema, recs []arrow.RecordBatch) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, schema.NumFields())
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	for i := range cols {
		parts := make([]arrow.Array, len(recs))
		for j, r := range recs {
			parts[j] = r.Column(i)
		}
		c, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			for _, c := range cols[:i] {
				c.Release()
			}
			return nil, fmt.Errorf("flight stream: join record parts: %w", err)
		}
		cols[i] = c
	}
	rec := array.NewRecordBatch(schema, cols, rows)
	for _, c := range cols {
		c.Release()
	}
	return rec, nil
}

// ErrNotHeld is the gRPC NotFound status a worker answers for a key it does
// not hold.
func ErrNotHeld(key string) error {
	return status.Errorf(codes.NotFound, "key %q is not held here", key)
}

// IsNotHeld reports whether err says the key is not held, or the holder
// is unreachable: in both cases the value must be had elsewhere.
func IsNotHeld(err error) bool {
	switch status.Code(err) {
	case codes.NotFound, codes.Unavailable:
		return true
	}
	return false
}

// Get fetches the value of key from a worker.
func Get(ctx context.Context, c flight.FlightServiceClient, key string, reg *graph.Registry) (any, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.DoGet(ctx, &flight.Ticket{Ticket: []byte(key)}, grpc.MaxCallRecvMsgSize(MaxMessageBytes))
	if err != nil {
		return nil, err
	}
	return Receive(stream, reg)
}

// Put sends the value of key to a worker.
func Put(ctx context.Context, c flight.FlightServiceClient, key string, v any, reg *graph.Registry) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.DoPut(ctx, grpc.MaxCallSendMsgSize(MaxMessageBytes))
	if err != nil {
		return err
	}
	w := &descWriter{s: stream, desc: &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{key}}}
	if err := Send(w, v, reg); err != nil {
		return err
	}
	if err := stream.CloseSend(); err != nil {
		return err
	}
	for {
		if _, err := stream.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// descWriter puts a descriptor on the first message of a stream.
type descWriter struct {
	s    flight.DataStreamWriter
	desc *flight.FlightDescriptor
}

func (w *descWriter) Send(d *flight.FlightData) error {
	if w.desc != nil {
		d.FlightDescriptor = w.desc
		w.desc = nil
	}
	return w.s.Send(d)
}

// ActionGet is the Flight action that answers many small values at once:
// its body is a wire.GetValues, each result body a wire.Value.
const ActionGet = "shoal.get"

// SmallValue is the size below which Gather fetches values with ActionGet,
// many per call, rather than one DoGet stream each.
const SmallValue = 256 << 10

// GetMany fetches the values of keys from one worker with ActionGet. It
// returns the values in the order of keys; a key the worker does not hold
// is reported in missing.
func GetMany(ctx context.Context, c flight.FlightServiceClient, keys []string, reg *graph.Registry) (vals []any, missing []int, err error) {
	body, err := proto.Marshal(&wire.GetValues{Keys: keys})
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.DoAction(ctx, &flight.Action{Type: ActionGet, Body: body}, grpc.MaxCallRecvMsgSize(MaxMessageBytes))
	if err != nil {
		return nil, nil, err
	}
	vals = make([]any, len(keys))
	for i := range keys {
		r, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("%s: %d answers for %d keys", ActionGet, i, len(keys))
			}
			return nil, nil, err
		}
		var v wire.Value
		if err := proto.Unmarshal(r.Body, &v); err != nil {
			return nil, nil, fmt.Errorf("%s: answer %d: %w", ActionGet, i, err)
		}
		if v.Key != keys[i] {
			return nil, nil, fmt.Errorf("%s: answer %d is for %q, want %q", ActionGet, i, v.Key, keys[i])
		}
		switch {
		case v.Missing:
			missing = append(missing, i)
		case v.Error != "":
			return nil, nil, fmt.Errorf("value of %q: %s", v.Key, v.Error)
		default:
			if vals[i], err = reg.UnmarshalValue(v.Data); err != nil {
				return nil, nil, fmt.Errorf("value of %q: %w", v.Key, err)
			}
		}
	}
	return vals, missing, nil
}

// ServeGetMany answers ActionGet: lookup returns the value of a key and
// whether it is held.
func ServeGetMany(a *flight.Action, stream flight.FlightService_DoActionServer, reg *graph.Registry,
	lookup func(key string) (any, bool, error)) error {
	var req wire.GetValues
	if err := proto.Unmarshal(a.Body, &req); err != nil {
		return status.Errorf(codes.InvalidArgument, "%s: %v", ActionGet, err)
	}
	for _, k := range req.Keys {
		ans := &wire.Value{Key: k}
		v, ok, err := lookup(k)
		switch {
		case err != nil:
			ans.Error = err.Error()
		case !ok:
			ans.Missing = true
		default:
			if ans.Data, err = reg.MarshalValue(v); err != nil {
				ans.Error = err.Error()
			}
		}
		body, err := proto.Marshal(ans)
		if err != nil {
			return status.Errorf(codes.Internal, "%s: %v", ActionGet, err)
		}
		if err := stream.Send(&flight.Result{Body: body}); err != nil {
			return err
		}
	}
	return nil
}
