package array

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	arrowarray "github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/graph"
)

// CodecName is the name of the graph codec of chunks (*Dense values): an
// Arrow IPC stream of one record with one column "data", the elements in
// row-major order, and the shape and dtype in the schema metadata.
const CodecName = "shoal.array.dense"

const (
	metaShape = "shoal.array.shape"
	metaDType = "shoal.array.dtype"
)

// ListCodecName is the name of the graph codec of []*Dense values (the
// arguments of Blockwise functions): the number of chunks, then each
// chunk's encoding preceded by its length, as uvarints.
const ListCodecName = "shoal.array.dense-list"

func chunkCodec() graph.Codec {
	return graph.NewCodec(CodecName, encodeDense, decodeDense)
}

func chunkListCodec() graph.Codec {
	return graph.NewCodec(ListCodecName, func(ds []*Dense) ([]byte, error) {
		b := binary.AppendUvarint(nil, uint64(len(ds)))
		for i, d := range ds {
			e, err := encodeDense(d)
			if err != nil {
				return nil, fmt.Errorf("chunk %d: %w", i, err)
			}
			b = binary.AppendUvarint(b, uint64(len(e)))
			b = append(b, e...)
		}
		return b, nil
	}, func(b []byte) ([]*Dense, error) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)) {
			return nil, fmt.Errorf("array: corrupt chunk list")
		}
		b = b[k:]
		out := make([]*Dense, n)
		for i := range out {
			l, k := binary.Uvarint(b)
			if k <= 0 || l > uint64(len(b)-k) {
				return nil, fmt.Errorf("array: corrupt chunk list at chunk %d", i)
			}
			d, err := decodeDense(b[k : k+int(l)])
			if err != nil {
				return nil, err
			}
			out[i] = d
			b = b[k+int(l):]
		}
		return out, nil
	})
}

// ToRecord returns d as an Arrow record of one column "data" holding the
// elements in row-major order, with the shape and dtype in the schema
// metadata (keys "shoal.array.shape", a JSON list, and "shoal.array.dtype").
// Release the record when done.
func (d *Dense) ToRecord() arrow.RecordBatch {
	shape, _ := json.Marshal(d.shape)
	md := arrow.NewMetadata([]string{metaShape, metaDType}, []string{string(shape), d.dtype.String()})
	col := denseColumn(d)
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "data", Type: col.DataType()}}, &md)
	return arrowarray.NewRecordBatch(schema, []arrow.Array{col}, int64(col.Len()))
}

// denseColumn returns the elements of d as an Arrow array, sharing memory
// for the numeric types.
func denseColumn(d *Dense) arrow.Array {
	flat := d.flat()
	switch x := flat.(type) {
	case []float64:
		buf := memory.NewBufferBytes(arrow.Float64Traits.CastToBytes(x))
		data := arrowarray.NewData(arrow.PrimitiveTypes.Float64, len(x), []*memory.Buffer{nil, buf}, nil, 0, 0)
		defer data.Release()
		return arrowarray.NewFloat64Data(data)
	case []float32:
		buf := memory.NewBufferBytes(arrow.Float32Traits.CastToBytes(x))
		data := arrowarray.NewData(arrow.PrimitiveTypes.Float32, len(x), []*memory.Buffer{nil, buf}, nil, 0, 0)
		defer data.Release()
		return arrowarray.NewFloat32Data(data)
	case []int64:
		buf := memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(x))
		data := arrowarray.NewData(arrow.PrimitiveTypes.Int64, len(x), []*memory.Buffer{nil, buf}, nil, 0, 0)
		defer data.Release()
		return arrowarray.NewInt64Data(data)
	case []bool:
		b := arrowarray.NewBooleanBuilder(memory.DefaultAllocator)
		defer b.Release()
		b.AppendValues(x, nil)
		return b.NewArray()
	}
	return nil
}

func encodeDense(d *Dense) ([]byte, error) {
	if d == nil {
		return nil, fmt.Errorf("array: cannot encode a nil *Dense")
	}
	rec := d.ToRecord()
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(rec.Schema()))
	if err := w.Write(rec); err != nil {
		w.Close()
		return nil, fmt.Errorf("array: write chunk of shape %v: %w", d.shape, err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("array: write chunk of shape %v: %w", d.shape, err)
	}
	return buf.Bytes(), nil
}

func decodeDense(b []byte) (*Dense, error) {
	r, err := graph.NewArrowReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("array: read chunk: %w", err)
	}
	defer r.Release()
	if !r.Next() {
		if err := r.Err(); err != nil {
			return nil, fmt.Errorf("array: read chunk: %w", err)
		}
		return nil, fmt.Errorf("array: read chunk: the stream has no record")
	}
	return DenseFromRecord(r.RecordBatch())
}

// DenseFromRecord reads a record written by ToRecord back into a Dense
// (a copy: the record can be released afterwards).
func DenseFromRecord(rec arrow.RecordBatch) (*Dense, error) {
	md := rec.Schema().Metadata()
	si, di := md.FindKey(metaShape), md.FindKey(metaDType)
	if si < 0 || di < 0 || rec.NumCols() != 1 {
		return nil, fmt.Errorf("array: record is not an array chunk (want one column and metadata %q and %q, got schema %s)",
			metaShape, metaDType, rec.Schema())
	}
	var shape []int
	if err := json.Unmarshal([]byte(md.Values()[si]), &shape); err != nil {
		return nil, fmt.Errorf("array: chunk shape %q: %w", md.Values()[si], err)
	}
	dt, err := ParseDType(md.Values()[di])
	if err != nil {
		return nil, fmt.Errorf("array: chunk: %w", err)
	}
	n, err := shapeSize(shape)
	if err != nil {
		return nil, err
	}
	col := rec.Column(0)
	if col.Len() != n {
		return nil, fmt.Errorf("array: chunk of shape %v has %d elements, want %d", shape, col.Len(), n)
	}
	if col.NullN() > 0 {
		return nil, fmt.Errorf("array: chunk of shape %v has %d nulls", shape, col.NullN())
	}
	out := newDense(dt, shape)
	if err := columnInto(out, col); err != nil {
		return nil, err
	}
	return out, nil
}

// columnInto copies an Arrow column of the matching type into d.
func columnInto(d *Dense, col arrow.Array) error {
	switch x := d.data.(type) {
	case []float64:
		c, ok := col.(*arrowarray.Float64)
		if !ok {
			return fmt.Errorf("array: chunk of dtype float64 holds a %s column", col.DataType())
		}
		copy(x, c.Float64Values())
	case []float32:
		c, ok := col.(*arrowarray.Float32)
		if !ok {
			return fmt.Errorf("array: chunk of dtype float32 holds a %s column", col.DataType())
		}
		copy(x, c.Float32Values())
	case []int64:
		c, ok := col.(*arrowarray.Int64)
		if !ok {
			return fmt.Errorf("array: chunk of dtype int64 holds a %s column", col.DataType())
		}
		copy(x, c.Int64Values())
	case []bool:
		c, ok := col.(*arrowarray.Boolean)
		if !ok {
			return fmt.Errorf("array: chunk of dtype bool holds a %s column", col.DataType())
		}
		for i := range x {
			x[i] = c.Value(i)
		}
	}
	return nil
}
