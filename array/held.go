package array

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/internal/inproc"
)

// When the executor runs tasks in this process, arrays given in memory
// (FromSlice, FromDense, FromMat) hand their chunks to the tasks from a
// table of held values, instead of encoding every chunk into the tasks'
// params and decoding it again: computing over a few hundred megabytes
// given in memory then starts at once. Graphs for another process (Graph,
// a cluster's client) still carry the encoded chunks.

// held are the arrays handed to in-process tasks.
var held inproc.Table[*Dense, *Dense]

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
	d, ok := held.Get(p.ID)
	if !ok {
		return nil, fmt.Errorf("chunk %s: %w", in.Key, errors.New("the in-memory array is gone: the computation that held it has ended"))
	}
	return subBlock(d, p.Start, p.Shape), nil
}

// graphFor is Graph for running on exec; done releases what the graph
// holds and must be called once the computation has ended.
func (a Array) graphFor(exec graph.Executor) (*graph.Graph, []graph.Key, func(), error) {
	if err := a.Err(); err != nil {
		return nil, nil, func() {}, err
	}
	l := newLowerer(a.n)
	l.inProcess = inproc.Runs(exec)
	done := func() { held.Release(l.held) }
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
