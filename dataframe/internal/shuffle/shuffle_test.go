package shuffle

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/internal/sortk"
)

// splitAll runs the split tasks of a shuffle, one per input.
func splitAll(t *testing.T, ctx context.Context, st Storage, id string, inputs []arrow.RecordBatch, p Partitioner, m int, opts Options) []*Manifest {
	t.Helper()
	mans := make([]*Manifest, len(inputs))
	for i, in := range inputs {
		man, err := Split(ctx, st, id, i, in, p, m, opts)
		if err != nil {
			t.Fatal(err)
		}
		mans[i] = man
	}
	return mans
}

// Every row of N inputs lands exactly once, in the output its partitioner
// names, in input order; for hash and range partitioners, both layouts,
// with and without compression, with budgets that force many flushes.
func TestShuffleRoundTrip(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		n, m   int
		budget int64
		layout Layout
		comp   string
		byHash bool
	}{
		{"hash 5x3", 5, 3, 0, FilePerInput, "", true},
		{"hash 4x7 small budget", 4, 7, 16 << 10, FilePerInput, "", true},
		{"hash per shard", 4, 5, 16 << 10, FilePerShard, "", true},
		{"range 6x4 lz4", 6, 4, 32 << 10, FilePerInput, "lz4", false},
		{"range per shard zstd", 3, 3, 0, FilePerShard, "zstd", false},
		{"one output", 3, 1, 8 << 10, FilePerInput, "", true},
	}
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := checkedMem(t)
			rng := rand.New(rand.NewPCG(uint64(ci), 7))
			inputs := makeInputs(rng, mem, c.n, 3000, 500)
			defer release(inputs...)
			var p Partitioner = HashPartitioner("k", "s")
			keys := []SortKey{{Column: "s"}, {Column: "k", Descending: true}}
			if !c.byHash {
				div, err := sortk.Divisions(ctx, inputs[0], keys, c.m, mem)
				if err != nil {
					t.Fatal(err)
				}
				defer div.Release()
				if int(div.NumRows()) != c.m-1 {
					t.Fatalf("%d divisions, want %d", div.NumRows(), c.m-1)
				}
				p = RangePartitioner(keys, div)
			}
			dir := t.TempDir()
			st := LocalStorage(dir)
			opts := Options{Budget: c.budget, Mem: mem, Layout: c.layout, Compression: c.comp}
			mans := splitAll(t, ctx, st, "rt", inputs, p, c.m, opts)
			// Where every row should go.
			want := make([][]int64, c.m)
			var total int64
			for i, in := range inputs {
				ids, err := p.Partition(ctx, in, c.m)
				if err != nil {
					t.Fatal(err)
				}
				for r, id := range ids {
					want[id] = append(want[id], int64s(in.Column(0))[r])
				}
				total += in.NumRows()
				if mans[i].Rows != in.NumRows() {
					t.Errorf("manifest %d: %d rows, want %d", i, mans[i].Rows, in.NumRows())
				}
			}
			if c.budget > 0 && c.budget < 64<<10 && mans[0].Flushes < 2 {
				t.Errorf("input 0 of %d rows flushed %d times with a budget of %d bytes", inputs[0].NumRows(), mans[0].Flushes, c.budget)
			}
			var got int64
			for j := range c.m {
				out, err := Collect(ctx, st, "rt", j, mans, testSchema, opts)
				if err != nil {
					t.Fatal(err)
				}
				rows := int64s(out.Column(0))
				if !slices.Equal(rows, want[j]) && !(len(rows) == 0 && len(want[j]) == 0) {
					t.Errorf("output %d: rows %v..., want %v...", j, rows[:min(5, len(rows))], want[j][:min(5, len(want[j]))])
				}
				got += out.NumRows()
				out.Release()
			}
			if got != total {
				t.Errorf("collected %d rows, want %d", got, total)
			}
			if c.layout == FilePerShard {
				if f := files(t, dir); len(f) != 0 {
					t.Errorf("files left after the collects: %v", f)
				}
			}
			if err := Cleanup(ctx, st, "rt"); err != nil {
				t.Fatal(err)
			}
			if f := files(t, dir); len(f) != 0 {
				t.Errorf("files left after cleanup: %v", f)
			}
		})
	}
}

// The manifests cross process boundaries with encoding/gob.
func TestManifestGob(t *testing.T) {
	ctx := context.Background()
	rec := makeBatch(rand.New(rand.NewPCG(4, 4)), memory.DefaultAllocator, 0, 1000, 50)
	defer rec.Release()
	st := LocalStorage(t.TempDir())
	man, err := Split(ctx, st, "gob", 0, rec, HashPartitioner("k"), 4, Options{Budget: 8 << 10})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(man); err != nil {
		t.Fatal(err)
	}
	var back Manifest
	if err := gob.NewDecoder(&buf).Decode(&back); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(back) != fmt.Sprint(*man) {
		t.Errorf("after gob: %+v, want %+v", back, *man)
	}
	out, err := Collect(ctx, st, "gob", 2, []*Manifest{&back}, testSchema, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out.NumRows() != man.Outputs[2].Rows {
		t.Errorf("collected %d rows, manifest says %d", out.NumRows(), man.Outputs[2].Rows)
	}
	out.Release()
	t.Logf("manifest of 4 outputs, %d flushes: %d bytes as gob", man.Flushes, buf.Len())
}

// A split holds about its budget of partitioned rows, however large its
// input, flushing as often as needed.
func TestSplitBudget(t *testing.T) {
	ctx := context.Background()
	mem := checkedMem(t)
	rec := makeBatch(rand.New(rand.NewPCG(5, 5)), mem, 0, 40000, 1000)
	defer rec.Release()
	size := batchBytes(rec)
	for _, budget := range []int64{64 << 10, 256 << 10, 1 << 30} {
		st := LocalStorage(t.TempDir())
		man, err := Split(ctx, st, "budget", 0, rec, HashPartitioner("k"), 8, Options{Budget: budget, Mem: mem})
		if err != nil {
			t.Fatal(err)
		}
		wantFlushes := int(size / budget)
		if man.Flushes < wantFlushes || man.Flushes > 2*wantFlushes+1 {
			t.Errorf("budget %d, input %d bytes: %d flushes, want %d to %d", budget, size, man.Flushes, wantFlushes, 2*wantFlushes+1)
		}
		if man.PeakBuffered > budget+budget/4+64<<10 {
			t.Errorf("budget %d: held up to %d bytes", budget, man.PeakBuffered)
		}
		if budget < size && len(man.Outputs[0].Segments) != man.Flushes {
			t.Errorf("output 0 has %d segments after %d flushes", len(man.Outputs[0].Segments), man.Flushes)
		}
		t.Logf("budget %d, input %d bytes: %d flushes, peak %d bytes buffered, %d bytes written", budget, size, man.Flushes, man.PeakBuffered, man.Bytes)
	}
}

// A sort over data many times the memory budget: each collect spills
// sorted runs, merges them in passes of at most the fan-in, returns the
// rows sorted, holding about the budget, and leaves no file behind.
func TestOutOfCoreSort(t *testing.T) {
	ctx := context.Background()
	mem := checkedMem(t)
	rng := rand.New(rand.NewPCG(6, 6))
	const budget = 128 << 10
	inputs := makeInputs(rng, mem, 6, 4000, 100000)
	defer release(inputs...)
	var size int64
	for _, in := range inputs {
		size += batchBytes(in)
	}
	keys := []SortKey{{Column: "k", Descending: true}, {Column: "f", NullsFirst: true}}
	const m = 2
	div, err := sortk.Divisions(ctx, inputs[1], keys, m, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer div.Release()
	dir := t.TempDir()
	st := LocalStorage(dir)
	opts := Options{Budget: budget, Mem: mem, MergeFanIn: 3, BatchRows: 1000}
	mans := splitAll(t, ctx, st, "ooc", inputs, RangePartitioner(keys, div), m, opts)
	if size < 3*budget*m {
		t.Fatalf("data of %d bytes, want at least 3x the budget of %d per output", size, budget)
	}
	var last arrow.RecordBatch // the last row of the previous output
	var rows int64
	for j := range m {
		// What Collect would return, sorted: the expected result.
		keep := opts
		keep.KeepShards = true
		all, err := Collect(ctx, st, "ooc", j, mans, testSchema, keep)
		if err != nil {
			t.Fatal(err)
		}
		want, err := sortk.Sort(ctx, all, keys, mem)
		all.Release()
		if err != nil {
			t.Fatal(err)
		}
		r, err := OpenSorted(ctx, st, "ooc", j, mans, testSchema, keys, opts)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for {
			b, err := r.Next(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if b.NumRows() > 1000 {
				t.Errorf("batch of %d rows, want at most 1000", b.NumRows())
			}
			got = append(got, int64s(b.Column(0))...)
			b.Release()
		}
		st := r.Stats()
		t.Logf("output %d: %d rows (%d bytes of shards): %d runs, %d merge passes, %d bytes spilled, peak %d bytes held (budget %d)",
			j, st.Rows, size/m, st.Runs, st.MergePasses, st.SpilledBytes, st.PeakBytes, budget)
		if st.Runs < 3 || st.MergePasses < 1 {
			t.Errorf("output %d: %d runs, %d merge passes: want at least 3 and 1", j, st.Runs, st.MergePasses)
		}
		if st.PeakBytes > budget+budget/8 {
			t.Errorf("output %d: held up to %d bytes, budget %d", j, st.PeakBytes, budget)
		}
		if err := r.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, int64s(want.Column(0))) {
			t.Errorf("output %d: the external sort differs from the in-memory one", j)
		}
		// Outputs follow each other in the order of the keys.
		if last != nil && want.NumRows() > 0 {
			first := want.NewSlice(0, 1)
			pair, err := sortk.MergeSorted(ctx, []arrow.RecordBatch{last, first}, keys, mem)
			if err != nil {
				t.Fatal(err)
			}
			if int64s(pair.Column(0))[0] != int64s(last.Column(0))[0] && !sameKeys(pair, keys) {
				t.Errorf("output %d starts below the end of output %d", j, j-1)
			}
			pair.Release()
			first.Release()
		}
		if last != nil {
			last.Release()
		}
		last = want.NewSlice(max(0, want.NumRows()-1), want.NumRows())
		rows += want.NumRows()
		want.Release()
	}
	last.Release()
	var total int64
	for _, in := range inputs {
		total += in.NumRows()
	}
	if rows != total {
		t.Errorf("sorted %d rows, want %d", rows, total)
	}
	// Only the shard files are left (their sections freed), no run files.
	for _, f := range files(t, dir) {
		if !bytes.Contains([]byte(f), []byte("/in-")) {
			t.Errorf("file left: %s", f)
		}
	}
	if err := Cleanup(ctx, st, "ooc"); err != nil {
		t.Fatal(err)
	}
	if f := files(t, dir); len(f) != 0 {
		t.Errorf("files left after cleanup: %v", f)
	}
}

// sameKeys reports whether the two rows of pair have equal keys.
func sameKeys(pair arrow.RecordBatch, keys []SortKey) bool {
	for _, k := range keys {
		c := pair.Column(pair.Schema().FieldIndices(k.Column)[0])
		if c.IsNull(0) != c.IsNull(1) || c.ValueStr(0) != c.ValueStr(1) {
			return false
		}
	}
	return true
}

// CollectSorted returns one sorted batch, in memory or through runs.
func TestCollectSorted(t *testing.T) {
	ctx := context.Background()
	mem := checkedMem(t)
	rng := rand.New(rand.NewPCG(7, 7))
	inputs := makeInputs(rng, mem, 3, 3000, 300)
	defer release(inputs...)
	keys := []SortKey{{Column: "s"}}
	for _, budget := range []int64{0, 32 << 10} {
		st := LocalStorage(t.TempDir())
		opts := Options{Budget: budget, Mem: mem}
		mans := splitAll(t, ctx, st, "cs", inputs, HashPartitioner("k"), 2, opts)
		for j := range 2 {
			out, err := CollectSorted(ctx, st, "cs", j, mans, testSchema, keys, opts)
			if err != nil {
				t.Fatal(err)
			}
			if ok, err := sortk.IsSorted(ctx, out, keys); err != nil || !ok {
				t.Errorf("budget %d output %d: not sorted (%v)", budget, j, err)
			}
			if out.NumRows() != sumRows(mans, j) {
				t.Errorf("budget %d output %d: %d rows, want %d", budget, j, out.NumRows(), sumRows(mans, j))
			}
			out.Release()
		}
		Cleanup(ctx, st, "cs")
	}
}

func sumRows(mans []*Manifest, j int) int64 {
	var n int64
	for _, m := range mans {
		n += m.Outputs[j].Rows
	}
	return n
}

// A collect frees its shards: collecting the same output again is an
// error that says so (unless KeepShards).
func TestCollectTwice(t *testing.T) {
	ctx := context.Background()
	rec := makeBatch(rand.New(rand.NewPCG(8, 8)), memory.DefaultAllocator, 0, 2000, 50)
	defer rec.Release()
	for _, layout := range []Layout{FilePerInput, FilePerShard} {
		dir := t.TempDir()
		st := LocalStorage(dir)
		opts := Options{Layout: layout}
		man, err := Split(ctx, st, "twice", 0, rec, HashPartitioner("k"), 2, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, keep := range []bool{true, false} {
			o := opts
			o.KeepShards = keep
			out, err := Collect(ctx, st, "twice", 0, []*Manifest{man}, testSchema, o)
			if err != nil {
				t.Fatalf("%s, keep %v: %v", layout, keep, err)
			}
			out.Release()
		}
		_, err = Collect(ctx, st, "twice", 0, []*Manifest{man}, testSchema, opts)
		if err == nil {
			t.Errorf("%s: collected freed shards without error", layout)
			continue
		}
		if layout == FilePerInput && !errors.Is(err, ErrShardGone) {
			t.Errorf("%s: %v, want ErrShardGone", layout, err)
		}
		t.Logf("%s: %v", layout, err)
		Cleanup(ctx, st, "twice")
	}
}

func TestShuffleArgs(t *testing.T) {
	ctx := context.Background()
	rec := makeBatch(rand.New(rand.NewPCG(9, 9)), memory.DefaultAllocator, 0, 10, 5)
	defer rec.Release()
	st := LocalStorage(t.TempDir())
	for _, id := range []string{"", "../x", "a/b", ".hidden"} {
		if _, err := Split(ctx, st, id, 0, rec, HashPartitioner("k"), 2, Options{}); err == nil {
			t.Errorf("shuffle id %q: no error", id)
		}
	}
	if _, err := Split(ctx, st, "ok", 0, rec, HashPartitioner("k"), 2, Options{Compression: "gzip"}); err == nil {
		t.Error("unknown compression: no error")
	}
	man, err := Split(ctx, st, "ok", 0, rec, HashPartitioner("k"), 2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	other := *man
	other.ShuffleID = "other"
	for _, c := range []struct {
		output int
		mans   []*Manifest
	}{{2, []*Manifest{man}}, {-1, []*Manifest{man}}, {0, []*Manifest{man, nil}}, {0, []*Manifest{man, &other}}} {
		if _, err := Collect(ctx, st, "ok", c.output, c.mans, testSchema, Options{}); err == nil {
			t.Errorf("collect output %d of %d manifests: no error", c.output, len(c.mans))
		}
	}
	wrong := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int8}}, nil)
	if _, err := Collect(ctx, st, "ok", 0, []*Manifest{man}, wrong, Options{}); err == nil {
		t.Error("collect with the wrong schema: no error")
	}
	empty := array.NewRecordBatch(wrong, []arrow.Array{array.MakeArrayOfNull(memory.DefaultAllocator, arrow.PrimitiveTypes.Int8, 0)}, 0)
	defer empty.Release()
	if _, err := Split(ctx, st, "ok", 1, empty, HashPartitioner("k"), 2, Options{}); err != nil {
		t.Errorf("split of an empty batch: %v", err)
	}
}

// Split and collect tasks of one shuffle run at once, as an executor runs
// them, each in its own goroutine.
func TestConcurrentTasks(t *testing.T) {
	ctx := context.Background()
	mem := checkedMem(t)
	rng := rand.New(rand.NewPCG(13, 13))
	inputs := makeInputs(rng, mem, 8, 4000, 300)
	defer release(inputs...)
	st := LocalStorage(t.TempDir())
	opts := Options{Budget: 32 << 10, Mem: mem}
	const m = 5
	mans := make([]*Manifest, len(inputs))
	errs := make(chan error, len(inputs)+m)
	for i, in := range inputs {
		go func() {
			var err error
			mans[i], err = Split(ctx, st, "conc", i, in, HashPartitioner("s"), m, opts)
			errs <- err
		}()
	}
	for range inputs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	rows := make([]int64, m)
	for j := range m {
		go func() {
			out, err := CollectSorted(ctx, st, "conc", j, mans, testSchema, []SortKey{{Column: "s"}}, opts)
			if err == nil {
				rows[j] = out.NumRows()
				out.Release()
			}
			errs <- err
		}()
	}
	for range m {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var got, want int64
	for j := range m {
		got += rows[j]
	}
	for _, in := range inputs {
		want += in.NumRows()
	}
	if got != want {
		t.Errorf("collected %d rows, want %d", got, want)
	}
	if err := Cleanup(ctx, st, "conc"); err != nil {
		t.Fatal(err)
	}
}

// peerStore is the storage of one of several workers with separate
// directories: it reads the others' files through their own storages, as
// a worker reads them from its peers over the network.
type peerStore struct {
	Storage
	self   string
	all    map[string]Storage
	remote *int // reads from other workers
}

func (s peerStore) Self() string { return s.self }

func (s peerStore) OpenPeer(ctx context.Context, worker, name string, offset, length int64) (io.ReadCloser, error) {
	other, ok := s.all[worker]
	if !ok {
		return nil, fmt.Errorf("no worker %q", worker)
	}
	*s.remote++
	return other.Open(ctx, name, offset, length)
}

// TestPeerStorage: inputs split on two workers with their own directories
// are collected on either; each collect reads the other worker's shards
// from it, frees only its own, and cleanup on each worker leaves nothing.
func TestPeerStorage(t *testing.T) {
	ctx := context.Background()
	for _, layout := range []Layout{FilePerInput, FilePerShard} {
		t.Run(fmt.Sprint(layout), func(t *testing.T) {
			mem := checkedMem(t)
			rng := rand.New(rand.NewPCG(3, 7))
			inputs := makeInputs(rng, mem, 4, 2000, 300)
			defer release(inputs...)
			dirs := map[string]string{"a": t.TempDir(), "b": t.TempDir()}
			all := map[string]Storage{}
			remote := 0
			stores := map[string]peerStore{}
			for w, d := range dirs {
				all[w] = LocalStorage(d)
				stores[w] = peerStore{Storage: all[w], self: w, all: all, remote: &remote}
			}
			p := HashPartitioner("k", "s")
			opts := Options{Mem: mem, Layout: layout}
			const m = 3
			mans := make([]*Manifest, len(inputs))
			var want [m]int64
			for i, in := range inputs {
				w := []string{"a", "b"}[i%2]
				man, err := Split(ctx, stores[w], "peer", i, in, p, m, opts)
				if err != nil {
					t.Fatal(err)
				}
				if man.Worker != w {
					t.Fatalf("manifest of input %d names worker %q, want %q", i, man.Worker, w)
				}
				mans[i] = man
				for j := range m {
					want[j] += man.Outputs[j].Rows
				}
			}
			for j := range m {
				w := []string{"a", "b"}[j%2]
				before := remote
				out, err := Collect(ctx, stores[w], "peer", j, mans, testSchema, opts)
				if err != nil {
					t.Fatal(err)
				}
				if out.NumRows() != want[j] {
					t.Errorf("output %d: %d rows, want %d", j, out.NumRows(), want[j])
				}
				out.Release()
				if remote == before {
					t.Errorf("output %d collected on %s read nothing from the other worker", j, w)
				}
			}
			for w, st := range all {
				if err := Cleanup(ctx, st, "peer"); err != nil {
					t.Fatal(err)
				}
				if f := files(t, dirs[w]); len(f) != 0 {
					t.Errorf("worker %s: files left after cleanup: %v", w, f)
				}
			}
		})
	}
}
