package sortk

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Run is a sorted sequence of record batches read one at a time: a sorted
// batch in memory, or a sorted file read back in pieces.
type Run interface {
	// Next returns the next batch, which the caller releases, or io.EOF
	// after the last.
	Next(ctx context.Context) (arrow.RecordBatch, error)
}

// RunOf returns a run over batches in memory; it retains each batch it
// hands out.
func RunOf(recs ...arrow.RecordBatch) Run { return &memRun{recs: recs} }

type memRun struct{ recs []arrow.RecordBatch }

func (r *memRun) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if len(r.recs) == 0 {
		return nil, io.EOF
	}
	rec := r.recs[0]
	r.recs = r.recs[1:]
	rec.Retain()
	return rec, nil
}

// MergeOptions tunes a Merger.
type MergeOptions struct {
	// BatchRows is the most rows of a batch the merger returns (default
	// 65536).
	BatchRows int
	// Mem allocates the batches (default memory.DefaultAllocator).
	Mem memory.Allocator
}

// Merger merges sorted runs into one sorted stream of record batches,
// holding one batch of each run at a time. It is stable: rows with equal
// keys come in the order of their runs, then of their rows.
type Merger struct {
	schema    *arrow.Schema
	keys      []SortKey
	mem       memory.Allocator
	batchRows int
	cursors   []*cursor
	heap      []int // live cursors, smallest row first
	sources   []arrow.RecordBatch
	refs      []ref
	err       error
}

type cursor struct {
	run  Run
	id   int
	rec  arrow.RecordBatch
	src  int32 // rec's index in Merger.sources
	cols []*column
	pos  int
	n    int
}

// NewMerger returns a merger of runs whose batches all have schema, each
// run sorted by keys. It reads the first batch of every run.
func NewMerger(ctx context.Context, schema *arrow.Schema, runs []Run, keys []SortKey, opts MergeOptions) (*Merger, error) {
	if schema == nil {
		return nil, errors.New("sortk: merge: nil schema")
	}
	if err := checkKeys("merge", schema, keys); err != nil {
		return nil, err
	}
	m := &Merger{schema: schema, keys: keys, mem: opts.Mem, batchRows: opts.BatchRows}
	if m.mem == nil {
		m.mem = memory.DefaultAllocator
	}
	if m.batchRows <= 0 {
		m.batchRows = 1 << 16
	}
	for i, r := range runs {
		c := &cursor{run: r, id: i}
		m.cursors = append(m.cursors, c)
		ok, err := m.load(ctx, c)
		if err != nil {
			m.Close()
			return nil, err
		}
		if ok {
			m.heap = append(m.heap, i)
		}
	}
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return m, nil
}

// load reads c's next non-empty batch; it reports false at the end of the
// run.
func (m *Merger) load(ctx context.Context, c *cursor) (bool, error) {
	for {
		rec, err := c.run.Next(ctx)
		if err == io.EOF {
			c.rec, c.cols = nil, nil
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("sortk: merge: run %d: %w", c.id, err)
		}
		if !rec.Schema().Equal(m.schema) {
			rec.Release()
			return false, fmt.Errorf("sortk: merge: run %d has schema %s, want %s", c.id, rec.Schema(), m.schema)
		}
		if rec.NumRows() == 0 {
			rec.Release()
			continue
		}
		cols, err := prepare("merge", rec, m.keys)
		if err != nil {
			rec.Release()
			return false, err
		}
		c.rec, c.cols, c.pos, c.n = rec, cols, 0, int(rec.NumRows())
		c.src = int32(len(m.sources))
		m.sources = append(m.sources, rec)
		return true, nil
	}
}

func (m *Merger) less(a, b int) bool {
	ca, cb := m.cursors[a], m.cursors[b]
	c := compareRows(ca.cols, ca.pos, cb.cols, cb.pos)
	return c < 0 || c == 0 && a < b
}

func (m *Merger) down(i int) {
	h := m.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		j := l
		if r := l + 1; r < len(h) && m.less(h[r], h[l]) {
			j = r
		}
		if !m.less(h[j], h[i]) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

// Next returns the next merged batch, which the caller releases, or io.EOF
// after the last.
func (m *Merger) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if m.err != nil {
		return nil, m.err
	}
	for len(m.refs) < m.batchRows && len(m.heap) > 0 {
		if len(m.refs)&0xffff == 0xffff {
			if err := ctx.Err(); err != nil {
				m.err = err
				return nil, err
			}
		}
		c := m.cursors[m.heap[0]]
		m.refs = append(m.refs, ref{c.src, int32(c.pos)})
		c.pos++
		if c.pos == c.n {
			ok, err := m.load(ctx, c)
			if err != nil {
				m.err = err
				return nil, err
			}
			if !ok {
				last := len(m.heap) - 1
				m.heap[0] = m.heap[last]
				m.heap = m.heap[:last]
			}
		}
		m.down(0)
	}
	if len(m.refs) == 0 {
		return nil, io.EOF
	}
	out, err := m.emit(ctx)
	if err != nil {
		m.err = err
		return nil, err
	}
	return out, nil
}

// emit builds the batch of the rows in refs and lets go of the batches no
// cursor is on any more.
func (m *Merger) emit(ctx context.Context) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, m.schema.NumFields())
	srcs := make([]arrow.Array, len(m.sources))
	for i := range cols {
		for s, rec := range m.sources {
			srcs[s] = rec.Column(i)
		}
		a, err := gather(ctx, m.mem, srcs, m.refs)
		if err != nil {
			for _, c := range cols[:i] {
				c.Release()
			}
			return nil, fmt.Errorf("sortk: merge: column %q (%s): %w", m.schema.Field(i).Name, m.schema.Field(i).Type, err)
		}
		cols[i] = a
	}
	out := array.NewRecordBatch(m.schema, cols, int64(len(m.refs)))
	for _, c := range cols {
		c.Release()
	}
	m.refs = m.refs[:0]
	// Keep only the batches of live cursors.
	keep := m.sources[:0]
	live := make(map[int32]int32, len(m.cursors))
	for _, c := range m.cursors {
		if c.rec != nil {
			live[c.src] = -1
		}
	}
	for s, rec := range m.sources {
		if _, ok := live[int32(s)]; ok {
			live[int32(s)] = int32(len(keep))
			keep = append(keep, rec)
		} else {
			rec.Release()
		}
	}
	clear(m.sources[len(keep):])
	m.sources = keep
	for _, c := range m.cursors {
		if c.rec != nil {
			c.src = live[c.src]
		}
	}
	return out, nil
}

// Close releases the batches the merger holds. It does not close the runs.
func (m *Merger) Close() {
	for _, rec := range m.sources {
		rec.Release()
	}
	m.sources = nil
	for _, c := range m.cursors {
		c.rec, c.cols = nil, nil
	}
	m.heap = nil
	if m.err == nil {
		m.err = errors.New("sortk: merger closed")
	}
}

// MergeSorted merges batches each sorted by keys into one sorted batch
// (stable: equal rows in the order of recs, then of their rows). The
// batches must have the same schema.
func MergeSorted(ctx context.Context, recs []arrow.RecordBatch, keys []SortKey, mem memory.Allocator) (arrow.RecordBatch, error) {
	if len(recs) == 0 {
		return nil, errors.New("sortk: merge of no batches (no schema to return)")
	}
	runs := make([]Run, len(recs))
	var total int64
	for i, r := range recs {
		runs[i] = RunOf(r)
		total += r.NumRows()
	}
	if total > maxRows {
		return nil, fmt.Errorf("sortk: merge of %d rows: at most %d rows per batch", total, maxRows)
	}
	m, err := NewMerger(ctx, recs[0].Schema(), runs, keys, MergeOptions{BatchRows: int(max(total, 1)), Mem: mem})
	if err != nil {
		return nil, err
	}
	defer m.Close()
	out, err := m.Next(ctx)
	if err == io.EOF {
		if mem == nil {
			mem = memory.DefaultAllocator
		}
		return emptyBatch(recs[0].Schema(), mem), nil
	}
	return out, err
}

// emptyBatch returns a batch of schema with no rows.
func emptyBatch(schema *arrow.Schema, mem memory.Allocator) arrow.RecordBatch {
	cols := make([]arrow.Array, schema.NumFields())
	for i, f := range schema.Fields() {
		cols[i] = array.MakeArrayOfNull(mem, f.Type, 0)
	}
	rec := array.NewRecordBatch(schema, cols, 0)
	for _, c := range cols {
		c.Release()
	}
	return rec
}
