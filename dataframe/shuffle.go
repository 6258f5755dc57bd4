package dataframe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/internal/shuffle"
	"github.com/shoal-data/shoal/dataframe/internal/sortk"
	"github.com/shoal-data/shoal/graph"
)

// Shuffles move rows between partitions: N split tasks each write their
// partition's rows, partitioned by hash of keys or by ranges of sort keys,
// as shards in the executor's local directory and return a manifest; M
// collect tasks each read the shards of one output (merge-sorting them
// when asked) and return a partition. Memory stays within a budget: split
// tasks flush to disk when their buffers fill, sorted collects spill
// sorted runs. The shuffle's files are removed when the computation ends,
// whether it succeeded, failed or was cancelled.

// ShuffleError says that a shuffle failed; with a full disk, its message
// names the operation, the output partition, the path, the bytes written
// and "no space left on device" (errors.Is works with syscall.ENOSPC).
type ShuffleError = shuffle.DiskFullError

// SortKey orders rows by a column: ascending unless Descending, nulls last
// unless NullsFirst.
type SortKey = sortk.SortKey

// shufflePlan describes a shuffle node.
type shufflePlan struct {
	hash      []string  // hash partitioning by these columns, or
	sort      []SortKey // range partitioning by these keys
	divisions []byte    // known boundaries (IPC record), else computed from a sample
	outputs   int       // M
	sorted    bool      // collect merge-sorts each output by sort
	opts      shuffle.Options
}

// Ops of shuffles.
const (
	OpShuffleCollect = "dataframe.shuffle-collect"
	OpDivisions      = "dataframe.divisions"
)

// manifestCodec lets manifests cross process boundaries and be spilled.
var manifestCodec = graph.GobCodec[*shuffle.Manifest]()

type collectParams struct {
	ID     string          `json:"id"`
	Output int             `json:"output"`
	Schema []byte          `json:"schema"`
	Sort   []SortKey       `json:"sort,omitempty"`
	Opts   shuffle.Options `json:"opts"`
}

// storageFor is where an op's shuffles keep their shards: its local
// directory; on a worker of a cluster, shards written by other workers are
// read from them.
func storageFor(env *graph.Env) shuffle.Storage {
	st := meteredStorage{shuffle.LocalStorage(env.LocalDir)}
	if env.Peers == nil || env.Worker == "" {
		return st
	}
	return peerStorage{Storage: st, self: env.Worker, peers: env.Peers}
}

// peerStorage is the shuffle storage of a worker of a cluster.
type peerStorage struct {
	shuffle.Storage
	self  string
	peers graph.PeerFiles
}

func (s peerStorage) Self() string { return s.self }

// OpenPeer reads a file another worker wrote: from the directory, when
// the workers share it (a cluster on one machine), else from that worker.
func (s peerStorage) OpenPeer(ctx context.Context, worker, name string, offset, length int64) (io.ReadCloser, error) {
	if _, err := os.Stat(s.Path(name)); err == nil {
		return s.Open(ctx, name, offset, length)
	}
	return s.peers.OpenPeer(ctx, worker, name, offset, length)
}

// splitSink writes the record as the shards of one shuffle input.
func (s *sinkSpec) split(ctx context.Context, in graph.OpInput, rec arrow.RecordBatch, aux []any) (any, error) {
	spec := s.Shuffle.Spec
	if len(spec.Range) > 0 && spec.Divisions == nil {
		// The boundaries come from the divisions task.
		if len(aux) != 1 {
			return nil, fmt.Errorf("range shuffle: want the divisions as an input, got %d inputs", len(aux))
		}
		div, ok := aux[0].(arrow.RecordBatch)
		if !ok {
			return nil, fmt.Errorf("range shuffle: divisions input is a %T", aux[0])
		}
		p := shuffle.RangePartitioner(spec.Range, div)
		return shuffle.Split(ctx, storageFor(in.Env), s.Shuffle.ID, s.Shuffle.Input, rec, p, s.Shuffle.Outputs, s.shuffleOpts())
	}
	p, err := spec.Partitioner()
	if err != nil {
		return nil, err
	}
	return shuffle.Split(ctx, storageFor(in.Env), s.Shuffle.ID, s.Shuffle.Input, rec, p, s.Shuffle.Outputs, s.shuffleOpts())
}

func (s *sinkSpec) shuffleOpts() shuffle.Options {
	o := s.Shuffle.Opts
	o.Mem = allocator
	return o
}

// shuffleSink is the part of a sink that splits into a shuffle.
type shuffleSink struct {
	ID      string                `json:"id"`
	Input   int                   `json:"input"`
	Outputs int                   `json:"outputs"`
	Spec    shuffle.PartitionSpec `json:"spec"`
	Opts    shuffle.Options       `json:"opts"`
}

func runShuffleCollect(ctx context.Context, in graph.OpInput) (any, error) {
	var p collectParams
	if err := json.Unmarshal(in.Params, &p); err != nil {
		return nil, err
	}
	schema, err := decodeSchema(p.Schema)
	if err != nil {
		return nil, err
	}
	ms := make([]*shuffle.Manifest, len(in.Inputs))
	for i, v := range in.Inputs {
		m, ok := v.(*shuffle.Manifest)
		if !ok {
			return nil, fmt.Errorf("shuffle collect: input %d is a %T, not a manifest", i, v)
		}
		ms[i] = m
	}
	opts := p.Opts
	opts.Mem = allocator
	var rec arrow.RecordBatch
	if len(p.Sort) > 0 {
		rec, err = shuffle.CollectSorted(ctx, storageFor(in.Env), p.ID, p.Output, ms, schema, p.Sort, opts)
	} else {
		rec, err = shuffle.Collect(ctx, storageFor(in.Env), p.ID, p.Output, ms, schema, opts)
	}
	if err != nil {
		return nil, lostShards(err, in.Deps, ms)
	}
	return rec, nil
}

// lostShards turns the error of a collect that could not read a shard
// into a *graph.LostInputsError naming the splits to run again, so that
// the executor runs them, then the collect, again: the splits whose files
// are on a worker that is gone; or every split, when a shard is gone or
// damaged (an earlier run of the collect may have freed any of them).
func lostShards(err error, deps []graph.Key, ms []*shuffle.Manifest) error {
	var se *shuffle.ShardError
	if !errors.As(err, &se) || len(deps) != len(ms) {
		return err
	}
	keys := deps
	var lost *graph.WorkerLostError
	if se.Worker != "" && errors.As(err, &lost) {
		keys = nil
		for i, m := range ms {
			if m.Worker == se.Worker {
				keys = append(keys, deps[i])
			}
		}
	}
	return &graph.LostInputsError{Keys: keys, Err: err}
}

type divisionsParams struct {
	Sort    []SortKey `json:"sort"`
	Outputs int       `json:"outputs"`
	Schema  []byte    `json:"schema"` // of the samples
}

// runDivisions computes the boundaries of a range shuffle from the samples
// of every input partition.
func runDivisions(ctx context.Context, in graph.OpInput) (any, error) {
	var p divisionsParams
	if err := json.Unmarshal(in.Params, &p); err != nil {
		return nil, err
	}
	schema, err := decodeSchema(p.Schema)
	if err != nil {
		return nil, err
	}
	sample, err := concatInputs(in.Inputs, schema, allocator)
	if err != nil {
		return nil, err
	}
	defer sample.Release()
	return sortk.Divisions(ctx, sample, p.Sort, p.Outputs, allocator)
}

// sampleRows keeps about n rows of rec, evenly spaced, of the given
// columns.
func sampleRows(rec arrow.RecordBatch, cols []string, n int, mem memory.Allocator) (arrow.RecordBatch, error) {
	proj, err := projectRecord(rec, cols)
	if err != nil {
		return nil, err
	}
	defer proj.Release()
	rows := int(proj.NumRows())
	if rows <= n {
		proj.Retain()
		return proj, nil
	}
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(int64(i) * int64(rows) / int64(n))
	}
	return sortk.Take(context.Background(), proj, idx, mem)
}

// projectRecord selects columns of a record by name.
func projectRecord(rec arrow.RecordBatch, cols []string) (arrow.RecordBatch, error) {
	s := &sourceSpec{Columns: cols}
	rec.Retain()
	return s.narrow(context.Background(), rec, allocator)
}

// encodeRecord writes a record as an Arrow IPC stream.
func encodeRecord(rec arrow.RecordBatch) ([]byte, error) {
	var b bytes.Buffer
	w := ipc.NewWriter(&b, ipc.WithSchema(rec.Schema()))
	if err := w.Write(rec); err != nil {
		w.Close()
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// localDirOf returns where exec keeps shuffle files, when it says so, or
// "".
func localDirOf(exec graph.Executor) string {
	if d, ok := exec.(interface{ LocalDir() string }); ok {
		return d.LocalDir()
	}
	return ""
}

// cleanupShuffles removes the files of the shuffles of a computation
// that has ended: in the executor's local directory, and in its workers'
// when it has workers that keep their own.
func cleanupShuffles(exec graph.Executor, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	var errs []error
	if dir := localDirOf(exec); dir != "" {
		st := shuffle.LocalStorage(dir)
		for _, id := range ids {
			if err := shuffle.Cleanup(context.Background(), st, id); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if w, ok := exec.(workerFiles); ok {
		dirs := make([]string, len(ids))
		for i, id := range ids {
			dirs[i] = shuffle.Dir(id)
		}
		if err := w.RemoveWorkerFiles(context.Background(), dirs); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// workerFiles is an executor whose workers keep files in their own
// directories.
type workerFiles interface {
	RemoveWorkerFiles(ctx context.Context, dirs []string) error
}
