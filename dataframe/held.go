package dataframe

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/internal/inproc"
)

// When the executor runs tasks in this process, in-memory partitions
// (FromRecords, FromTable, FromColumns...) are handed to the tasks as they
// are, through a table of held records, instead of being encoded into the
// tasks' params and decoded again: a computation over a few hundred
// megabytes of records then starts at once. Graphs for another process
// (Graph, a cluster's client) still carry the encoded records.

// held are the records handed to in-process tasks; each hold retains the
// record once.
var held inproc.Table[arrow.RecordBatch, arrow.RecordBatch]

// hold keeps rec for the tasks of this process and returns its id.
func hold(rec arrow.RecordBatch) uint64 {
	rec.Retain()
	return held.Hold(rec, rec)
}

// unhold releases what hold kept.
func unhold(ids []uint64) {
	for _, id := range ids {
		if r, ok := held.Get(id); ok {
			r.Release()
		}
	}
	held.Release(ids)
}

// heldRecord returns a held record, retained for the caller.
func heldRecord(id uint64) (arrow.RecordBatch, error) {
	r, ok := held.Get(id)
	if !ok {
		return nil, fmt.Errorf("in-memory partition %d is gone: the computation that held it has ended", id)
	}
	r.Retain()
	return r, nil
}

// lowerFor lowers df for running on exec: when exec runs tasks in this
// process, records are held instead of encoded; done releases them and
// must be called once the computation has ended.
func (df DataFrame) lowerFor(exec graph.Executor) (l *lowerer, keys []graph.Key, done func(), err error) {
	if err := df.Err(); err != nil {
		return nil, nil, func() {}, err
	}
	root, err := optimize(df.n)
	if err != nil {
		return nil, nil, func() {}, err
	}
	l = newLowerer(graph.Default(), root)
	l.inProcess = inproc.Runs(exec)
	keys, err = l.partitions(root)
	done = func() { unhold(l.held) }
	if err != nil {
		done()
		return nil, nil, func() {}, err
	}
	return l, keys, done, nil
}

// openHeld is the source of a held record.
func (s *sourceSpec) openHeld(ctx context.Context) (arrow.RecordBatch, error) {
	return heldRecord(s.Held)
}
