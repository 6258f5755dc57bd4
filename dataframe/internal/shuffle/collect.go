package shuffle

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/internal/sortk"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/internal/ended"
)

// shardRef is one segment to read, with where it comes from.
type shardRef struct {
	input  int
	file   string
	seg    Segment
	worker string // Manifest.Worker
}

// shardsOf lists the segments of output in manifests, in their order.
func shardsOf(id string, output int, manifests []*Manifest) ([]shardRef, Layout, error) {
	if err := checkID(id); err != nil {
		return nil, 0, err
	}
	var refs []shardRef
	m := -1
	var layout Layout
	for i, man := range manifests {
		if man == nil {
			return nil, 0, fmt.Errorf("shuffle %s: collect of output partition %d: manifest %d is nil", id, output, i)
		}
		if man.ShuffleID != id {
			return nil, 0, fmt.Errorf("shuffle %s: collect of output partition %d: manifest %d is of shuffle %s", id, output, i, man.ShuffleID)
		}
		if m == -1 {
			m, layout = len(man.Outputs), man.Layout
		}
		if len(man.Outputs) != m || man.Layout != layout {
			return nil, 0, fmt.Errorf("shuffle %s: collect of output partition %d: manifest of input %d has %d outputs (%s), manifest of input %d has %d (%s)",
				id, output, manifests[0].Input, m, layout, man.Input, len(man.Outputs), man.Layout)
		}
		if output < 0 || output >= m {
			return nil, 0, fmt.Errorf("shuffle %s: collect of output partition %d: the shuffle has %d outputs", id, output, m)
		}
		for _, seg := range man.Outputs[output].Segments {
			if seg.File < 0 || seg.File >= len(man.Files) {
				return nil, 0, fmt.Errorf("shuffle %s: collect of output partition %d: manifest of input %d names file %d of %d", id, output, man.Input, seg.File, len(man.Files))
			}
			refs = append(refs, shardRef{input: man.Input, file: man.Files[seg.File], seg: seg, worker: man.Worker})
		}
	}
	return refs, layout, nil
}

// readShard calls fn with each batch of a segment (fn takes ownership),
// and checks it holds the rows its manifest says.
func readShard(ctx context.Context, st Storage, id string, output int, ref shardRef, schema *arrow.Schema, mem memory.Allocator, fn func(arrow.RecordBatch) error) error {
	remote := isRemote(st, ref)
	shardErr := func(err error) error {
		se := &ShardError{ShuffleID: id, Output: output, Input: ref.input, Path: st.Path(ref.file),
			Offset: ref.seg.Offset, Length: ref.seg.Length, Err: err}
		if remote {
			se.Worker, se.Path = ref.worker, ref.file
		}
		return se
	}
	var rc io.ReadCloser
	var err error
	if remote {
		rc, err = st.(PeerStorage).OpenPeer(ctx, ref.worker, ref.file, ref.seg.Offset, ref.seg.Length)
	} else {
		rc, err = st.Open(ctx, ref.file, ref.seg.Offset, ref.seg.Length)
	}
	if err != nil {
		return shardErr(err)
	}
	defer rc.Close()
	rd, err := graph.NewArrowReader(rc, ref.seg.Length, ipc.WithAllocator(mem))
	if err != nil {
		var lost *graph.WorkerLostError
		if ref.seg.Rows > 0 && !errors.As(err, &lost) {
			return shardErr(fmt.Errorf("%w (%v)", ErrShardGone, err))
		}
		return shardErr(err)
	}
	defer rd.Release()
	same := rd.Schema().Equal(schema)
	if !same && !sameColumns(rd.Schema(), schema) {
		return shardErr(fmt.Errorf("rows of schema %s, want %s", rd.Schema(), schema))
	}
	var rows int64
	for rd.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec := rd.RecordBatch()
		if same {
			rec.Retain()
		} else {
			// Only nullability or metadata differ: relabel.
			rec = array.NewRecordBatch(schema, rec.Columns(), rec.NumRows())
		}
		rows += rec.NumRows()
		if err := fn(rec); err != nil {
			return err
		}
	}
	if err := rd.Err(); err != nil {
		return shardErr(err)
	}
	if rows != ref.seg.Rows {
		return shardErr(fmt.Errorf("read %d rows, the manifest says %d: %w", rows, ref.seg.Rows, ErrShardGone))
	}
	return nil
}

// sameColumns reports whether a and b have the same column names and
// types, whatever their nullability and metadata.
func sameColumns(a, b *arrow.Schema) bool {
	if a.NumFields() != b.NumFields() {
		return false
	}
	for i := range a.NumFields() {
		fa, fb := a.Field(i), b.Field(i)
		if fa.Name != fb.Name || !arrow.TypeEqual(fa.Type, fb.Type) {
			return false
		}
	}
	return true
}

// isRemote reports whether ref's file is another worker's.
func isRemote(st Storage, ref shardRef) bool {
	ps, ok := st.(PeerStorage)
	return ok && ref.worker != "" && ref.worker != ps.Self()
}

// freeShards discards or removes the shards of an output once collected.
func freeShards(ctx context.Context, st Storage, layout Layout, refs []shardRef) error {
	var errs []error
	for _, r := range refs {
		if isRemote(st, r) {
			continue // removed with the shuffle's directory on its worker
		}
		var err error
		if layout == FilePerShard {
			err = st.Remove(ctx, r.file)
		} else {
			err = st.Discard(ctx, r.file, r.seg.Offset, r.seg.Length)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Collect reads the shards of output partition number output from the
// manifests of all the split tasks of the shuffle shuffleID and returns
// their rows in one batch of schema: the rows of each input in their
// order, the inputs in the order of manifests. Then it frees the shards
// (unless opts.KeepShards).
func Collect(ctx context.Context, st Storage, shuffleID string, output int, manifests []*Manifest, schema *arrow.Schema, opts Options) (arrow.RecordBatch, error) {
	refs, layout, err := shardsOf(shuffleID, output, manifests)
	if err != nil {
		return nil, err
	}
	mem := opts.mem()
	var recs []arrow.RecordBatch
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for _, ref := range refs {
		err := readShard(ctx, st, shuffleID, output, ref, schema, mem, func(rec arrow.RecordBatch) error {
			recs = append(recs, rec)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	out, err := concatBatches(schema, recs, mem)
	if err != nil {
		return nil, fmt.Errorf("shuffle %s: collect of output partition %d: %w", shuffleID, output, err)
	}
	if !opts.KeepShards {
		if err := freeShards(context.WithoutCancel(ctx), st, layout, refs); err != nil {
			out.Release()
			return nil, fmt.Errorf("shuffle %s: collect of output partition %d: free shards: %w", shuffleID, output, err)
		}
	}
	return out, nil
}

// concatBatches returns recs as one batch (recs[0] itself, retained, when
// there is one).
func concatBatches(schema *arrow.Schema, recs []arrow.RecordBatch, mem memory.Allocator) (arrow.RecordBatch, error) {
	if len(recs) == 1 {
		recs[0].Retain()
		return recs[0], nil
	}
	cols := make([]arrow.Array, schema.NumFields())
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	release := func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}
	parts := make([]arrow.Array, len(recs))
	for i := range cols {
		if len(recs) == 0 {
			cols[i] = array.MakeArrayOfNull(mem, schema.Field(i).Type, 0)
			continue
		}
		for j, r := range recs {
			parts[j] = r.Column(i)
		}
		c, err := array.Concatenate(parts, mem)
		if err != nil {
			release()
			return nil, fmt.Errorf("concatenate column %q: %w", schema.Field(i).Name, err)
		}
		cols[i] = c
	}
	out := array.NewRecordBatch(schema, cols, rows)
	release()
	return out, nil
}

// CollectStats says how a sorted collect went.
type CollectStats struct {
	Segments     int   // shard segments read
	Rows         int64 // rows read
	Runs         int   // sorted runs written, in all passes (0: sorted in memory)
	SpilledBytes int64 // bytes of the runs
	MergePasses  int   // passes that merged runs into longer runs
	// PeakBytes is the most bytes of Arrow buffers the collect held at
	// once, those of the batches it returned and the caller still held
	// included.
	PeakBytes int64
}

// CollectSorted is Collect returning the rows sorted by keys (stable: in
// the order Collect returns them among equal keys). Up to 3/8 of the
// memory budget the rows are sorted in memory; beyond, it sorts runs of
// that size at a time, spills them to the storage, and merges them (see
// OpenSorted); only the result is then held whole.
func CollectSorted(ctx context.Context, st Storage, shuffleID string, output int, manifests []*Manifest, schema *arrow.Schema, keys []SortKey, opts Options) (arrow.RecordBatch, error) {
	r, err := OpenSorted(ctx, st, shuffleID, output, manifests, schema, keys, opts)
	if err != nil {
		return nil, err
	}
	defer r.Close(ctx)
	if r.sorted != nil && r.next == 0 {
		// Sorted in memory: hand over the batch itself.
		out := r.sorted
		r.sorted = nil
		if err := r.finish(ctx); err != nil {
			out.Release()
			return nil, err
		}
		return out, nil
	}
	var recs []arrow.RecordBatch
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	for {
		rec, err := r.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		recs = append(recs, rec)
	}
	return concatBatches(schema, recs, opts.mem())
}

// SortedReader returns the rows of one output of a shuffle sorted, a batch
// at a time, holding about the memory budget whatever their number: an
// external merge sort when they do not fit.
type SortedReader struct {
	st        Storage
	id        string
	output    int
	schema    *arrow.Schema
	keys      []SortKey
	opts      Options
	mem       *peakAllocator
	layout    Layout
	refs      []shardRef
	attempt   string            // in the names of its run files
	sorted    arrow.RecordBatch // sorted in memory
	next      int64             // next row of sorted to return
	merger    *sortk.Merger
	runs      []*fileRun
	spills    []string // run files not yet removed
	stats     CollectStats
	err       error
	finished  bool
	batchRows int
}

// OpenSorted starts a sorted collect of output partition number output of
// the shuffle shuffleID: it reads the shards, and when they hold more than
// 3/8 of the memory budget (opts.Budget), sorts them that much at a time
// into sorted runs it writes to the storage (merging them in passes of
// opts.MergeFanIn while there are more), ready to be merged by Next. It
// holds about the budget (Stats().PeakBytes) if the shards' IPC batches
// are within a quarter of it (as Split writes them with the same budget),
// plus the batches the caller holds. It frees the shards once Next has
// returned the last row. Close the reader.
func OpenSorted(ctx context.Context, st Storage, shuffleID string, output int, manifests []*Manifest, schema *arrow.Schema, keys []SortKey, opts Options) (*SortedReader, error) {
	refs, layout, err := shardsOf(shuffleID, output, manifests)
	if err != nil {
		return nil, err
	}
	if err := opts.check(); err != nil {
		return nil, err
	}
	r := &SortedReader{st: st, id: shuffleID, output: output, schema: schema, keys: keys, opts: opts,
		mem: &peakAllocator{mem: opts.mem()}, layout: layout, refs: refs, batchRows: opts.batchRows(), attempt: newAttempt()}
	if err := r.open(ctx); err != nil {
		r.Close(ctx)
		return nil, err
	}
	return r, nil
}

func (r *SortedReader) errorf(format string, args ...any) error {
	return fmt.Errorf("shuffle %s: sorted collect of output partition %d: %w", r.id, r.output, fmt.Errorf(format, args...))
}

// open reads the shards into sorted runs.
func (r *SortedReader) open(ctx context.Context) error {
	// A run's rows and their sorted copy take twice the run; the batch
	// being read, up to a quarter of the budget, comes on top.
	runBudget := r.opts.budget() * 3 / 8
	var acc []arrow.RecordBatch
	var accBytes int64
	defer func() {
		for _, rec := range acc {
			rec.Release()
		}
	}()
	var fileRuns []string
	spill := func() error {
		name, err := r.spillSorted(ctx, acc) // releases acc's batches
		acc, accBytes = acc[:0], 0
		if err != nil {
			return err
		}
		fileRuns = append(fileRuns, name)
		return nil
	}
	for _, ref := range r.refs {
		r.stats.Segments++
		err := readShard(ctx, r.st, r.id, r.output, ref, r.schema, r.mem, func(rec arrow.RecordBatch) error {
			r.stats.Rows += rec.NumRows()
			size := batchBytes(rec)
			if len(acc) > 0 && accBytes+size > runBudget {
				if err := spill(); err != nil {
					rec.Release()
					return err
				}
			}
			acc = append(acc, rec)
			accBytes += size
			return nil
		})
		if err != nil {
			return err
		}
	}
	if len(fileRuns) == 0 {
		// Everything fit: sort in memory.
		all, err := concatBatches(r.schema, acc, r.mem)
		if err != nil {
			return r.errorf("%w", err)
		}
		sorted, err := sortk.Sort(ctx, all, r.keys, r.mem)
		all.Release()
		if err != nil {
			return r.errorf("%w", err)
		}
		r.sorted = sorted
		return nil
	}
	if len(acc) > 0 {
		if err := spill(); err != nil {
			return err
		}
	}
	// Merge passes while there are more runs than the fan-in.
	fanIn := r.opts.fanIn()
	for len(fileRuns) > fanIn {
		r.stats.MergePasses++
		var next []string
		for lo := 0; lo < len(fileRuns); lo += fanIn {
			group := fileRuns[lo:min(lo+fanIn, len(fileRuns))]
			if len(group) == 1 {
				next = append(next, group[0])
				continue
			}
			name, err := r.mergeToRun(ctx, group)
			if err != nil {
				return err
			}
			next = append(next, name)
		}
		fileRuns = next
	}
	runs := make([]sortk.Run, len(fileRuns))
	for i, name := range fileRuns {
		fr, err := r.openRun(ctx, name)
		if err != nil {
			return err
		}
		runs[i] = fr
	}
	m, err := sortk.NewMerger(ctx, r.schema, runs, r.keys, sortk.MergeOptions{BatchRows: r.outRows(), Mem: r.mem})
	if err != nil {
		return r.errorf("%w", err)
	}
	r.merger = m
	return nil
}

// perRow is the average bytes of a row so far (at least 1).
func (r *SortedReader) perRow() int64 {
	if r.stats.Rows == 0 {
		return 1
	}
	return max(1, r.stats.SpilledBytes/max(1, r.stats.Rows))
}

// chunkRows is the rows of each batch of a run: small enough that one
// batch of each run merged at once and the merged batch fit in half the
// budget.
func (r *SortedReader) chunkRows(bytesPerRow int64) int {
	return int(max(64, r.opts.budget()/int64(2*(r.opts.fanIn()+1))/max(1, bytesPerRow)))
}

// outRows is the rows of the batches Next returns.
func (r *SortedReader) outRows() int {
	return min(r.batchRows, r.chunkRows(r.perRow()))
}

// spillSorted sorts recs, releasing them, and writes them to a new run
// file.
func (r *SortedReader) spillSorted(ctx context.Context, recs []arrow.RecordBatch) (string, error) {
	all, err := concatBatches(r.schema, recs, r.mem)
	for _, rec := range recs {
		rec.Release()
	}
	clear(recs)
	if err != nil {
		return "", r.errorf("%w", err)
	}
	sorted, err := sortk.Sort(ctx, all, r.keys, r.mem)
	perRow := max(1, batchBytes(all)/max(1, all.NumRows()))
	all.Release()
	if err != nil {
		return "", r.errorf("%w", err)
	}
	defer sorted.Release()
	chunk := int64(r.chunkRows(perRow))
	n := sorted.NumRows()
	return r.writeRun(ctx, func(yield func(arrow.RecordBatch) error) error {
		for lo := int64(0); lo < n; lo += chunk {
			part := sorted.NewSlice(lo, min(lo+chunk, n))
			err := yield(part)
			part.Release()
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// mergeToRun merges run files into a new one and removes them.
func (r *SortedReader) mergeToRun(ctx context.Context, names []string) (string, error) {
	runs := make([]sortk.Run, len(names))
	var opened []*fileRun
	defer func() {
		for _, fr := range opened {
			fr.close()
		}
	}()
	for i, name := range names {
		fr, err := r.openRun(ctx, name)
		if err != nil {
			return "", err
		}
		opened = append(opened, fr)
		runs[i] = fr
	}
	m, err := sortk.NewMerger(ctx, r.schema, runs, r.keys, sortk.MergeOptions{BatchRows: r.chunkRows(r.perRow()), Mem: r.mem})
	if err != nil {
		return "", r.errorf("%w", err)
	}
	defer m.Close()
	name, err := r.writeRun(ctx, func(yield func(arrow.RecordBatch) error) error {
		for {
			rec, err := m.Next(ctx)
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			err = yield(rec)
			rec.Release()
			if err != nil {
				return err
			}
		}
	})
	if err != nil {
		return "", err
	}
	for _, fr := range opened {
		fr.close()
	}
	opened = nil
	for _, n := range names {
		r.removeSpill(ctx, n)
	}
	return name, nil
}

// writeRun writes the batches of a sorted run to a new file of the storage.
func (r *SortedReader) writeRun(ctx context.Context, batches func(yield func(arrow.RecordBatch) error) error) (string, error) {
	name := runFile(r.id, r.output, r.stats.Runs, r.attempt)
	r.stats.Runs++
	wc, err := r.st.Create(ctx, name)
	if err != nil {
		if isDiskFull(err) {
			return "", &DiskFullError{Op: "collect", ShuffleID: r.id, Input: -1, Output: r.output, Path: r.st.Path(name), Err: err}
		}
		return "", r.errorf("create %s: %w", r.st.Path(name), err)
	}
	r.spills = append(r.spills, name)
	cw := &countingWriter{w: wc}
	bw := bufio.NewWriterSize(cw, writeBuffer)
	w := ipc.NewWriter(bw, append(r.opts.writerOptions(), ipc.WithSchema(r.schema))...)
	err = batches(func(rec arrow.RecordBatch) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return w.Write(rec)
	})
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := wc.Close(); err == nil {
		err = cerr
	}
	r.stats.SpilledBytes += cw.n
	if err != nil {
		if cw.err != nil {
			err = cw.err
		}
		r.removeSpill(ctx, name)
		if isDiskFull(err) {
			return "", &DiskFullError{Op: "collect", ShuffleID: r.id, Input: -1, Output: r.output, Path: r.st.Path(name), Written: cw.n, Err: err}
		}
		if ctx.Err() != nil {
			return "", err
		}
		return "", r.errorf("write sorted run %s: %w", r.st.Path(name), err)
	}
	return name, nil
}

func (r *SortedReader) removeSpill(ctx context.Context, name string) {
	r.st.Remove(context.WithoutCancel(ctx), name)
	for i, s := range r.spills {
		if s == name {
			r.spills = append(r.spills[:i], r.spills[i+1:]...)
			break
		}
	}
}

// openRun opens a run file for reading.
func (r *SortedReader) openRun(ctx context.Context, name string) (*fileRun, error) {
	rc, err := r.st.Open(ctx, name, 0, 1<<62)
	if err != nil {
		return nil, r.errorf("open sorted run: %w", err)
	}
	rd, err := ipc.NewReader(rc, ipc.WithAllocator(r.mem))
	if err != nil {
		rc.Close()
		return nil, r.errorf("read sorted run %s: %w", r.st.Path(name), err)
	}
	fr := &fileRun{rc: rc, rd: rd, path: r.st.Path(name)}
	r.runs = append(r.runs, fr)
	return fr, nil
}

// Next returns the next batch of sorted rows, which the caller releases,
// or io.EOF after the last.
func (r *SortedReader) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if r.err != nil {
		return nil, r.err
	}
	if err := ctx.Err(); err != nil {
		r.err = err
		return nil, err
	}
	var rec arrow.RecordBatch
	switch {
	case r.sorted != nil && r.next < r.sorted.NumRows():
		hi := min(r.next+int64(r.batchRows), r.sorted.NumRows())
		rec = r.sorted.NewSlice(r.next, hi)
		r.next = hi
	case r.merger != nil:
		var err error
		rec, err = r.merger.Next(ctx)
		if err != nil && err != io.EOF {
			r.err = r.errorf("merge: %w", err)
			return nil, r.err
		}
	}
	if rec == nil {
		if err := r.finish(ctx); err != nil {
			r.err = err
			return nil, err
		}
		return nil, io.EOF
	}
	return rec, nil
}

// finish frees the shards once every row was returned.
func (r *SortedReader) finish(ctx context.Context) error {
	if r.finished {
		return nil
	}
	r.finished = true
	if r.opts.KeepShards {
		return nil
	}
	if err := freeShards(context.WithoutCancel(ctx), r.st, r.layout, r.refs); err != nil {
		return r.errorf("free shards: %w", err)
	}
	return nil
}

// Stats says how the collect went so far.
func (r *SortedReader) Stats() CollectStats {
	s := r.stats
	s.PeakBytes = r.mem.peak.Load()
	return s
}

// Close releases what the reader holds and removes its run files.
func (r *SortedReader) Close(ctx context.Context) error {
	if r.merger != nil {
		r.merger.Close()
		r.merger = nil
	}
	if r.sorted != nil {
		r.sorted.Release()
		r.sorted = nil
	}
	for _, fr := range r.runs {
		fr.close()
	}
	r.runs = nil
	var errs []error
	for _, name := range r.spills {
		if err := r.st.Remove(context.WithoutCancel(ctx), name); err != nil {
			errs = append(errs, err)
		}
	}
	r.spills = nil
	if r.err == nil {
		r.err = errors.New("shuffle: sorted reader closed")
	}
	return errors.Join(errs...)
}

// fileRun is a sorted run read back from a file.
type fileRun struct {
	rc   io.ReadCloser
	rd   *ipc.Reader
	path string
}

func (f *fileRun) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if f.rd == nil {
		return nil, io.EOF
	}
	if f.rd.Next() {
		rec := f.rd.RecordBatch()
		rec.Retain()
		return rec, nil
	}
	err := f.rd.Err()
	f.close()
	if err != nil {
		return nil, fmt.Errorf("read sorted run %s: %w", f.path, err)
	}
	return nil, io.EOF
}

func (f *fileRun) close() {
	if f.rd != nil {
		f.rd.Release()
		f.rd = nil
		f.rc.Close()
	}
}

// peakAllocator counts the bytes allocated through it, and their peak.
type peakAllocator struct {
	mem       memory.Allocator
	cur, peak atomic.Int64
}

func (a *peakAllocator) add(n int64) {
	c := a.cur.Add(n)
	for {
		p := a.peak.Load()
		if c <= p || a.peak.CompareAndSwap(p, c) {
			return
		}
	}
}

func (a *peakAllocator) Allocate(size int) []byte {
	a.add(int64(size))
	return a.mem.Allocate(size)
}

func (a *peakAllocator) Reallocate(size int, b []byte) []byte {
	a.add(int64(size - len(b)))
	return a.mem.Reallocate(size, b)
}

func (a *peakAllocator) Free(b []byte) {
	a.add(-int64(len(b)))
	a.mem.Free(b)
}

// Cleanup removes the files of the shuffle shuffleID from st: the lead task
// of a shuffle calls it once the shuffle succeeded, failed or was
// cancelled. A missing shuffle is no error.
func Cleanup(ctx context.Context, st Storage, shuffleID string) error {
	if err := checkID(shuffleID); err != nil {
		return err
	}
	// For splits still running: they remove what they write (see
	// Splitter.Close).
	ended.Mark(st.Path(Dir(shuffleID)))
	if err := st.RemoveAll(ctx, Dir(shuffleID)); err != nil {
		return fmt.Errorf("shuffle %s: cleanup: %w", shuffleID, err)
	}
	return nil
}
