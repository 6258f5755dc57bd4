package array

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/shoal-data/shoal/graph"
)

// When the executor runs tasks in this process, arrays given in memory
// (FromSlice, FromDense, FromMat) hand their chunks to the tasks from a
// table of held values, instead of encoding every chunk into the tasks'
// params and decoding it again: computing over a few hundred megabytes
// given in memory then starts at once. Graphs for another process (Graph,
// a cluster's client) still carry the encoded chunks.

// inProcess is implemented by executors that run tasks in the calling
// process (the local executor).
type inProcess interface{ InProcess() bool }

func runsInProcess(exec graph.Executor) bool {
	ip, ok := exec.(inProcess)
	return ok && ip.InProcess()
}

// The table of held arrays. An array held by several computations at once
// has one id, counted, so that their tasks are the same tasks.
var (
	heldMu   sync.Mutex
	held     = map[uint64]*heldEntry{}
	heldIDs  = map[*Dense]uint64{}
	heldNext atomic.Uint64
)

type heldEntry struct {
	d    *Dense
	refs int
}

func holdDense(d *Dense) uint64 {
	heldMu.Lock()
	defer heldMu.Unlock()
	if id, ok := heldIDs[d]; ok {
		held[id].refs++
		return id
	}
	id := heldNext.Add(1)
	held[id] = &heldEntry{d: d, refs: 1}
	heldIDs[d] = id
	return id
}

func unholdDense(ids []uint64) {
	heldMu.Lock()
	defer heldMu.Unlock()
	for _, id := range ids {
		if e, ok := held[id]; ok {
			if e.refs--; e.refs == 0 {
				delete(held, id)
				delete(heldIDs, e.d)
			}
		}
	}
}

// heldChunkParams name a block of a held array.
type heldChunkParams struct {
	ID    uint64 `json:"id"`
	Start []int  `json:"start"`
	Shape []int  `json:"shape"`
}

// opHeldChunk is a chunk of an array held in this process.
const opHeldChunk = "array.held-chunk"

func runHeldChunk(_ context.Context, in graph.OpInput) (any, error) {
	var p heldChunkParams
	if err := json.Unmarshal(in.Params, &p); err != nil {
		return nil, fmt.Errorf("chunk %s: %w", in.Key, err)
	}
	heldMu.Lock()
	e, ok := held[p.ID]
	heldMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("chunk %s: %w", in.Key, errors.New("the in-memory array is gone: the computation that held it has ended"))
	}
	return subBlock(e.d, p.Start, p.Shape), nil
}

// graphFor is Graph for running on exec; done releases what the graph
// holds and must be called once the computation has ended.
func (a Array) graphFor(exec graph.Executor) (*graph.Graph, []graph.Key, func(), error) {
	if err := a.Err(); err != nil {
		return nil, nil, func() {}, err
	}
	l := newLowerer(a.n)
	l.inProcess = runsInProcess(exec)
	done := func() { unholdDense(l.held) }
	keys, err := l.blocks(a.n)
	if err != nil {
		done()
		return nil, nil, func() {}, err
	}
	g, err := graph.Cull(l.g, keys...)
	if err != nil {
		done()
		return nil, nil, func() {}, err
	}
	return g, keys, done, nil
}
