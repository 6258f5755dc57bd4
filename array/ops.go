package array

import (
	"context"
	"fmt"

	"github.com/shoal-data/shoal/graph"
)

// The ops that array tasks name. Their params are JSON, except for
// array.chunk whose params are the chunk's encoding.
const (
	opChunk      = "array.chunk"      // a chunk given when the array was built
	opCreate     = "array.create"     // a generated chunk: constants, ranges, random numbers
	opMap        = "array.map"        // a fused elementwise expression over aligned chunks, and its sink
	opReduce     = "array.reduce"     // merge partial reduction states, and finalize
	opAssemble   = "array.assemble"   // a chunk put together from pieces of others: slicing, rechunking, halos
	opScan       = "array.scan"       // the carries of cumulative sums and products
	opSelect     = "array.select"     // boolean-mask selection
	opApply      = "array.apply"      // a registered user function on chunks
	opLinalg     = "array.linalg"     // linear-algebra kernels (gonum) on chunks
	opNPY        = "array.npy"        // read or write a part of a .npy file
	opFrame      = "array.frame"      // between record batches and chunks
	opPercentile = "array.percentile" // exact percentiles: lanes sorted in a chunk, the sums and picks of a radix select
	opCheck      = "array.check"      // chunks of unknown lengths checked against others
)

// RegisterOps registers the array ops and the chunk codec into reg. The
// default registry has them; call it for a registry made with
// graph.NewRegistry (after graph.RegisterBuiltins).
func RegisterOps(reg *graph.Registry) error {
	ops := []graph.Op{
		{Name: opChunk, Signature: "v1", Run: runChunk},
		{Name: opHeldChunk, Signature: "v1", Run: runHeldChunk},
		{Name: opCreate, Signature: "v1", Run: runCreate},
		{Name: opMap, Signature: "v1", Run: runMap},
		{Name: opReduce, Signature: "v1", Run: runReduce},
		{Name: opAssemble, Signature: "v1", Run: runAssemble},
		{Name: opScan, Signature: "v1", Run: runScan},
		{Name: opSelect, Signature: "v1", Run: runSelect},
		{Name: opApply, Signature: "v1", Run: runApply},
		{Name: opLinalg, Signature: "v1", Run: runLinalg},
		{Name: opNPY, Signature: "v1", Run: runNPY},
		{Name: opFrame, Signature: "v1", Run: runFrame},
		{Name: opPercentile, Signature: "v1", Run: runPercentile},
		{Name: opCheck, Signature: "v1", Run: runCheck},
	}
	for _, op := range ops {
		if err := reg.Register(op); err != nil {
			return err
		}
	}
	for _, c := range []graph.Codec{chunkCodec(), chunkListCodec()} {
		if _, ok := reg.Codec(c.Name()); !ok {
			if err := reg.RegisterCodec(c); err != nil {
				return err
			}
		}
	}
	return nil
}

// registered registers the ops in the default registry as the package is
// initialized: as a variable rather than in init, so that it happens
// before the variables of this package's tests register functions of
// *Dense.
var registered = func() bool {
	if err := RegisterOps(graph.Default()); err != nil {
		panic(err)
	}
	return true
}()

func runChunk(_ context.Context, in graph.OpInput) (any, error) {
	d, err := decodeDense(in.Params)
	if err != nil {
		return nil, fmt.Errorf("chunk %s: %w", in.Key, err)
	}
	return d, nil
}

// denseInputs checks that every input of a task is a chunk.
func denseInputs(in graph.OpInput) ([]*Dense, error) {
	out := make([]*Dense, len(in.Inputs))
	for i, v := range in.Inputs {
		d, ok := v.(*Dense)
		if !ok {
			return nil, fmt.Errorf("input %d is a %T, not a *array.Dense", i, v)
		}
		out[i] = d
	}
	return out, nil
}
