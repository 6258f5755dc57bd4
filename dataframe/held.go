package dataframe

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/graph"
)

// When the executor runs tasks in this process, in-memory partitions
// (FromRecords, FromTable, FromColumns...) are handed to the tasks as they
// are, through a table of held records, instead of being encoded into the
// tasks' params and decoded again: a computation over a few hundred
// megabytes of records then starts at once. Graphs for another process
// (Graph, a cluster's client) still carry the encoded records.

// inProcess is implemented by executors that run tasks in the calling
// process (the local executor).
type inProcess interface{ InProcess() bool }

func runsInProcess(exec graph.Executor) bool {
	ip, ok := exec.(inProcess)
	return ok && ip.InProcess()
}

// The table of held records. A record held by several computations at
// once (the same frame computed twice concurrently) has one id, counted,
// so that their tasks are the same tasks with the same params.
var (
	heldMu   sync.Mutex
	held     = map[uint64]*heldEntry{}
	heldIDs  = map[arrow.RecordBatch]uint64{}
	heldNext atomic.Uint64
)

type heldEntry struct {
	rec  arrow.RecordBatch
	refs int
}

// hold keeps rec for the tasks of this process and returns its id.
func hold(rec arrow.RecordBatch) uint64 {
	heldMu.Lock()
	defer heldMu.Unlock()
	if id, ok := heldIDs[rec]; ok {
		held[id].refs++
		return id
	}
	id := heldNext.Add(1)
	rec.Retain()
	held[id] = &heldEntry{rec: rec, refs: 1}
	heldIDs[rec] = id
	return id
}

// unhold releases what hold kept.
func unhold(ids []uint64) {
	heldMu.Lock()
	defer heldMu.Unlock()
	for _, id := range ids {
		e, ok := held[id]
		if !ok {
			continue
		}
		if e.refs--; e.refs == 0 {
			e.rec.Release()
			delete(held, id)
			delete(heldIDs, e.rec)
		}
	}
}

// heldRecord returns a held record, retained for the caller.
func heldRecord(id uint64) (arrow.RecordBatch, error) {
	heldMu.Lock()
	defer heldMu.Unlock()
	e, ok := held[id]
	if !ok {
		return nil, fmt.Errorf("in-memory partition %d is gone: the computation that held it has ended", id)
	}
	e.rec.Retain()
	return e.rec, nil
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
	l.inProcess = runsInProcess(exec)
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
