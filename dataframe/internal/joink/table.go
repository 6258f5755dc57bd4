package joink

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/internal/distinct/rows"
)

// A HashTable holds the build side of a join: its record batch and the
// rows of each distinct key, found by hashing. Build it once and probe it
// with any number of batches of the other side (Probe), then, for joins
// that keep the build side's unmatched rows, ask for them (Unmatched).
//
// Probe may be called from several goroutines at once: the table is read
// only, except for the flags that record which keys matched, which are set
// atomically.
type HashTable struct {
	rec  arrow.RecordBatch
	keys []string
	kidx []int
	enc  *rows.Encoder

	// The rows of key id g are order[starts[g]:starts[g+1]], ascending.
	// When every key is unique and not null, row r has id r, and both are
	// nil.
	starts, order []int32
	nkeys         int
	noKey         []int32  // rows whose key is null: they never match
	matched       []uint32 // per key id: 1 once a probe matched it
}

// Build makes a hash table of rec on the key columns keys. Rows whose key
// has a null (or a NaN float) never match.
func Build(ctx context.Context, rec arrow.RecordBatch, keys []string, mem memory.Allocator) (*HashTable, error) {
	if rec == nil {
		return nil, errors.New("joink: Build given a nil record batch")
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("joink: Build needs at least one key column: %w", ErrBadSpec)
	}
	kidx, err := keyIndices(rec.Schema(), keys, "build")
	if err != nil {
		return nil, err
	}
	types := make([]arrow.DataType, len(kidx))
	cols := make([]arrow.Array, len(kidx))
	for k, i := range kidx {
		types[k] = rec.Schema().Field(i).Type
		cols[k] = rec.Column(i)
	}
	enc, err := rows.NewEncoder(types, false)
	if err != nil {
		return nil, fmt.Errorf("joink: build keys %v: %w", keys, err)
	}
	ids, err := enc.Insert(ctx, cols)
	if err != nil {
		return nil, fmt.Errorf("joink: build keys %v: %w", keys, err)
	}
	ht := &HashTable{keys: slices.Clone(keys), kidx: kidx, enc: enc, nkeys: enc.Len()}
	for r, g := range ids {
		if g == rows.NoID {
			ht.noKey = append(ht.noKey, int32(r))
		}
	}
	if ht.nkeys != len(ids) { // some key has several rows, or a null
		ht.starts, ht.order = rows.Group(ids, ht.nkeys)
	}
	ht.matched = make([]uint32, ht.nkeys)
	rec.Retain()
	ht.rec = rec
	return ht, nil
}

// Release releases the build side's record batch.
func (ht *HashTable) Release() {
	if ht.rec != nil {
		ht.rec.Release()
		ht.rec = nil
	}
}

// NumRows is the number of rows of the build side.
func (ht *HashTable) NumRows() int { return int(ht.rec.NumRows()) }

// NumKeys is the number of distinct non-null keys of the build side.
func (ht *HashTable) NumKeys() int { return ht.nkeys }

// Schema is the schema of the build side.
func (ht *HashTable) Schema() *arrow.Schema { return ht.rec.Schema() }

// rowsOf returns the build rows of key id g.
func (ht *HashTable) rowsOf(g uint32) (lo, hi int32) {
	if ht.starts == nil {
		return int32(g), int32(g) + 1
	}
	return ht.starts[g], ht.starts[g+1]
}

func (ht *HashTable) row(k int32) int32 {
	if ht.order == nil {
		return k
	}
	return ht.order[k]
}

// markMatched records that key g matched.
func (ht *HashTable) markMatched(g uint32) {
	if atomic.LoadUint32(&ht.matched[g]) == 0 {
		atomic.StoreUint32(&ht.matched[g], 1)
	}
}
