// Package array is a lazy, chunked n-dimensional array for Go, in the
// spirit of Dask arrays and NumPy: build an Array from a slice, a gonum
// matrix, a .npy file, a DataFrame's columns or a generator (Zeros,
// Arange, Uniform, ...), compute with it as with NumPy (arithmetic with
// broadcasting, math functions, reductions, slicing, reshaping, linear
// algebra), then Compute the result on an executor: the in-process
// goroutine pool (package local) or a cluster.
//
//	exec := local.New()
//	defer exec.Close()
//	x := array.Uniform(42, []int{20000, 20000}, 0, 1, array.Chunks(2000, 2000)) // 3.2 GB, 100 chunks
//	m := x.Add(x.T()).Mean()                // nothing runs yet
//	d, err := m.Compute(ctx, exec)           // a *array.Dense
//	v, err := d.At()                         // its only element
//
// An array is cut into chunks (Chunks, ChunkSizes, ChunkBytes), each a
// Dense: a row-major buffer of float64, float32, int64 or bool with a
// shape. Every operation becomes tasks on chunks: consecutive elementwise
// operations run as one task per chunk (and fuse with the first step of a
// reduction that follows), reductions run as a tree of partial results,
// and a computation holds about as many chunks as run at once, not the
// whole array. Generated arrays (Zeros, Full, Arange, Linspace, Eye,
// Uniform, Normal, Integers) used by one expression only, as in
// Uniform(...).Mul(2).Sum(), are made as they are used and never held as
// whole chunks. The same chunk expression built twice gets the same task
// keys, so it is computed once.
//
// # For NumPy users
//
//	NumPy                         Shoal
//	np.array(v).reshape(3, 4)     array.FromSlice(v, []int{3, 4})
//	a + b, a * 2, a / b           a.Add(b), a.Mul(2), a.Div(b)
//	a > 0, np.where(c, a, b)      a.Gt(0), array.Where(c, a, b)
//	np.sqrt(a), a.astype(int)     a.Sqrt(), a.Astype(array.Int64)
//	a.sum(axis=0, keepdims=True)  a.Sum(array.Axis(0), array.KeepDims())
//	a[1:-1, ::2], a[0], a[[3, 1]] a.Index(array.Slice(1, -1), array.Step(array.Open, array.Open, 2)), a.Index(array.At(0)), a.Index(array.Take(3, 1))
//	a[mask]                       a.Mask(mask)
//	a.T, a.reshape(-1, 4)         a.T(), a.Reshape(-1, 4)
//	np.concatenate([a, b], 1)     array.Concatenate([]array.Array{a, b}, 1)
//	a @ b, np.linalg.qr(a)        array.MatMul(a, b), array.QR(a)
//	np.linalg.solve, lstsq        array.Solve(a, b), array.Lstsq(a, b)
//	rng.uniform(0, 1, shape)      array.Uniform(seed, shape, 0, 1) (other numbers than NumPy's)
//	np.save / np.load             array.WriteNPY / array.ReadNPY
//	pd.DataFrame(a)               a.ToRecords(ctx, exec, "x", "y"), then dataframe.FromRecords
//
// Types promote as in NumPy (int64 with float32 is float64), and Go
// numbers are "weak" like Python scalars: an int64 array plus 2 stays
// int64, a float32 array times 0.5 stays float32, an int64 array plus 2.5
// becomes float64. Bool operands count as int64 in arithmetic.
//
// # Mistakes and errors
//
// An Array is an immutable value that carries the first mistake made
// while building it: shapes that do not broadcast, an axis or index out of
// range, chunks that do not cover the shape, a mask that is not bool. Err
// returns it, with the shapes, axes and values involved; every Array
// derived from it carries it, and Compute returns it. Errors found while
// computing (an integer to a negative power, a matrix that is not
// positive definite, a function of yours that fails) are *graph.TaskError
// values naming the task and the chunk. Nothing panics on bad input.
//
// # Chunk sizes you do not know yet
//
// After Mask, Compress or FromFrame, the lengths of some chunks are not
// known until they are computed: Shape and Chunks report -1 for them.
// Elementwise operations between arrays chunked alike, reductions and
// Compute work as they are; Concatenate and Stack join such arrays chunk
// by chunk and check the lengths as the chunks are computed; operations
// that need the lengths (slicing, rechunking, reshaping) say so, and
// ComputeChunkSizes finds them.
//
// # Random numbers
//
// Uniform, Normal and Integers draw every chunk from its own PCG
// generator (math/rand/v2) seeded with the seed and the chunk's row-major
// number. The same seed with the same shape and chunks gives the same
// numbers, wherever each chunk is computed; other chunks give other
// numbers, as in Dask.
//
// # Your own functions
//
// MapBlocks, MapOverlap (with a halo of neighbouring elements, for
// stencils and filters) and Blockwise run functions you register by name
// with graph.RegisterFunc, so that the graph can cross a process boundary
// and run on workers started from the same program. Every task of an
// array names a registered op and carries its parameters as bytes: Graph
// returns a graph that graph.Encode can send.
//
// # Numbers
//
// Results do not depend on the chunks beyond the order of floating-point
// additions: sums, means, variances and products of chunked arrays agree
// with a plain loop within about 1e-12 relative for float64 (float32
// arrays are summed in float64). Integer arithmetic and reductions of
// int64 arrays are exact. The blocked factorizations (QR, SVD, Solve,
// Lstsq, Cholesky) round differently from gonum's unblocked ones: for
// well-conditioned matrices they agree within about 1e-10 relative, and
// the error of Solve grows with the condition number of the matrix.
//
// # DataFrames
//
// FromFrame takes columns of a DataFrame (of package dataframe, or any
// Frame) as an array, one chunk per partition. ToRecords goes back: it
// computes a 1-D or 2-D array as Arrow record batches, one per chunk of
// rows, and dataframe.FromRecords(recs...) makes them a DataFrame.
//
// # Memory and the wire
//
// Chunks are sent between processes and spilled to disk as Arrow IPC
// streams (one column "data", the shape and dtype in the schema
// metadata), and report their size to the executor's memory accounting
// (graph.Sizer).
package array
