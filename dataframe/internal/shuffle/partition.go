package shuffle

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/internal/sortk"

	"github.com/shoal-data/shoal/graph"
)

// SortKey is a column of a sort order (see package sortk).
type SortKey = sortk.SortKey

// A Partitioner says which of n outputs each row of a batch goes to.
type Partitioner interface {
	// Partition returns the output, in [0, n), of each row of rec.
	Partition(ctx context.Context, rec arrow.RecordBatch, n int) ([]int32, error)
	// Spec describes the partitioner so that another process can rebuild
	// it (PartitionSpec.Partitioner).
	Spec() (PartitionSpec, error)
}

// HashPartitioner sends rows by the hash of their key columns: rows with
// equal keys go to the same output, whatever batch, task or process they
// come from. The hash is that of the group-by kernels' HashPartition, so
// a shuffle and a split-out group-by with the same keys and outputs put
// every key in the same place. Keys hash by value: integers whatever
// their width or signedness (int32 5 and uint64 5 go together; dates,
// times, timestamps and durations as their stored integers, so a date32
// goes with the int32 of its day number); floats as float64 (float32 1.5
// with float64 1.5; -0 with 0; every NaN together), but not with integers
// (cast first to join an int column with a float one); booleans as 0 and 1;
// strings and binary by their bytes, whatever the type (utf8, large_utf8,
// binary, a dictionary); all nulls together.
func HashPartitioner(keys ...string) Partitioner { return hashPartitioner{keys: keys} }

type hashPartitioner struct{ keys []string }

func (h hashPartitioner) Spec() (PartitionSpec, error) { return PartitionSpec{Hash: h.keys}, nil }

func (h hashPartitioner) Partition(ctx context.Context, rec arrow.RecordBatch, n int) ([]int32, error) {
	if n < 1 {
		return nil, fmt.Errorf("hash partition into %d outputs: want at least 1", n)
	}
	if len(h.keys) == 0 {
		return nil, errors.New("hash partition: no key columns")
	}
	cols := make([]arrow.Array, len(h.keys))
	for i, k := range h.keys {
		idx := rec.Schema().FieldIndices(k)
		if len(idx) == 0 {
			return nil, fmt.Errorf("hash partition by %q: no such column (the columns are %s)", k, columnNames(rec.Schema()))
		}
		c := rec.Column(idx[0])
		if !hashable(c.DataType()) {
			return nil, fmt.Errorf("hash partition by %q: a %s column cannot be a key", k, c.DataType())
		}
		cols[i] = c
	}
	rows := int(rec.NumRows())
	out := make([]int32, rows)
	if n == 1 {
		return out, nil
	}
	hs := make([]uint64, min(rows, hashChunk))
	for lo := 0; lo < rows; lo += hashChunk {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := min(lo+hashChunk, rows)
		h := hs[:hi-lo]
		for i, c := range cols {
			part := c
			if lo > 0 || hi < rows {
				part = array.NewSlice(c, int64(lo), int64(hi))
			}
			hashColumn(part, h, i > 0)
			if part != c {
				part.Release()
			}
		}
		for j, x := range h {
			out[lo+j] = outputOf(x, n)
		}
	}
	return out, nil
}

// hashChunk is how many rows are hashed at a time.
const hashChunk = 1 << 16

// RangePartitioner sends rows by ranges of their key columns, in the order
// of keys: with the boundaries d[0] < d[1] < ... < d[n-2] (the rows of
// divisions, which holds the key columns, as sortk.Divisions returns them),
// output 0 gets the rows below d[0] and output j the rows r with
// d[j-1] <= r < d[j]: a row equal to a boundary goes to the output the
// boundary starts, the one above it. Nulls and NaN go where a sort by keys
// puts them (last, or first with NullsFirst). The partitioner must be used
// with at least divisions.NumRows()+1 outputs (the outputs past those are
// empty: a sample with few distinct values gives few divisions), and
// divisions kept (not released) while it is.
func RangePartitioner(keys []SortKey, divisions arrow.RecordBatch) Partitioner {
	return &rangePartitioner{keys: keys, div: divisions}
}

type rangePartitioner struct {
	keys []SortKey
	div  arrow.RecordBatch
}

func (r *rangePartitioner) Partition(ctx context.Context, rec arrow.RecordBatch, n int) ([]int32, error) {
	if want := int(r.div.NumRows()) + 1; n < want {
		return nil, fmt.Errorf("range partition into %d outputs: the %d divisions make %d ranges", n, r.div.NumRows(), want)
	}
	return sortk.SearchDivisions(ctx, rec, r.div, r.keys)
}

func (r *rangePartitioner) Spec() (PartitionSpec, error) {
	var b bytes.Buffer
	w := ipc.NewWriter(&b, ipc.WithSchema(r.div.Schema()))
	if err := w.Write(r.div); err != nil {
		return PartitionSpec{}, fmt.Errorf("encode range divisions: %w", err)
	}
	if err := w.Close(); err != nil {
		return PartitionSpec{}, fmt.Errorf("encode range divisions: %w", err)
	}
	return PartitionSpec{Range: r.keys, Divisions: b.Bytes()}, nil
}

// PartitionSpec describes a partitioner in plain data (for encoding/gob or
// JSON), so that the split tasks of a shuffle can run in other processes.
type PartitionSpec struct {
	Hash      []string  `json:"hash,omitempty"`      // key columns of a hash partitioning
	Range     []SortKey `json:"range,omitempty"`     // keys of a range partitioning
	Divisions []byte    `json:"divisions,omitempty"` // its boundaries, an Arrow IPC stream
}

// Partitioner rebuilds the partitioner s describes.
func (s PartitionSpec) Partitioner() (Partitioner, error) {
	switch {
	case len(s.Hash) > 0 && len(s.Range) == 0:
		return HashPartitioner(s.Hash...), nil
	case len(s.Range) > 0 && len(s.Hash) == 0:
		rd, err := graph.NewArrowReader(bytes.NewReader(s.Divisions), int64(len(s.Divisions)), ipc.WithAllocator(memory.DefaultAllocator))
		if err != nil {
			return nil, fmt.Errorf("decode range divisions: %w", err)
		}
		defer rd.Release()
		if !rd.Next() {
			if err := rd.Err(); err != nil {
				return nil, fmt.Errorf("decode range divisions: %w", err)
			}
			return nil, errors.New("decode range divisions: no batch")
		}
		div := rd.RecordBatch()
		div.Retain() // in Go memory: the partitioner keeps it until collected
		return RangePartitioner(s.Range, div), nil
	}
	return nil, fmt.Errorf("partition spec with %d hash keys and %d range keys: want one kind", len(s.Hash), len(s.Range))
}

func columnNames(s *arrow.Schema) string {
	var b bytes.Buffer
	for i, f := range s.Fields() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(f.Name)
	}
	return b.String()
}
