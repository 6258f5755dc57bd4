package shuffle

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// flaky is a partitioner that fails, or cancels its context, on its nth
// call.
type flaky struct {
	Partitioner
	calls, n int
	cancel   context.CancelFunc // nil: fail instead
}

var errFlaky = errors.New("partitioner broke")

func (f *flaky) Partition(ctx context.Context, rec arrow.RecordBatch, n int) ([]int32, error) {
	f.calls++
	if f.calls == f.n {
		if f.cancel == nil {
			return nil, errFlaky
		}
		f.cancel()
	}
	return f.Partitioner.Partition(ctx, rec, n)
}

// cancelOnCreate is a storage that cancels a context when a file whose
// name contains a string is created.
type cancelOnCreate struct {
	Storage
	match  string
	cancel context.CancelFunc
}

func (c cancelOnCreate) Create(ctx context.Context, name string) (io.WriteCloser, error) {
	if strings.Contains(name, c.match) {
		c.cancel()
	}
	return c.Storage.Create(ctx, name)
}

// A split that fails or is cancelled after writing shards removes them;
// so does a sorted collect cancelled while spilling; Cleanup removes the
// rest; the storage works for the next shuffle.
func TestCleanupOnFailure(t *testing.T) {
	mem := checkedMem(t)
	rec := makeBatch(rand.New(rand.NewPCG(10, 10)), mem, 0, 20000, 1000)
	defer rec.Release()
	opts := Options{Budget: 32 << 10, Mem: mem}
	for _, layout := range []Layout{FilePerInput, FilePerShard} {
		opts.Layout = layout
		dir := t.TempDir()
		st := LocalStorage(dir)
		// A failure after several flushes.
		_, err := Split(context.Background(), st, "fail", 0, rec, &flaky{Partitioner: HashPartitioner("k"), n: 20}, 4, opts)
		if !errors.Is(err, errFlaky) {
			t.Fatalf("%s: got %v, want the partitioner's error", layout, err)
		}
		if f := files(t, dir); len(f) != 0 {
			t.Errorf("%s: files left after a failed split: %v", layout, f)
		}
		// A cancellation after several flushes.
		ctx, cancel := context.WithCancel(context.Background())
		_, err = Split(ctx, st, "cancel", 0, rec, &flaky{Partitioner: HashPartitioner("k"), n: 20, cancel: cancel}, 4, opts)
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: got %v, want context.Canceled", layout, err)
		}
		if f := files(t, dir); len(f) != 0 {
			t.Errorf("%s: files left after a cancelled split: %v", layout, f)
		}
		// A sorted collect cancelled when it writes its third run.
		man, err := Split(context.Background(), st, "sort", 0, rec, HashPartitioner("k"), 2, opts)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel = context.WithCancel(context.Background())
		_, err = CollectSorted(ctx, cancelOnCreate{st, "run-0002", cancel}, "sort", 0, []*Manifest{man}, testSchema, []SortKey{{Column: "s"}}, opts)
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: got %v, want context.Canceled", layout, err)
		}
		for _, f := range files(t, dir) {
			if strings.Contains(f, "run-") {
				t.Errorf("%s: run file left after a cancelled collect: %s", layout, f)
			}
		}
		// The shards were not freed: the collect can run again.
		out, err := CollectSorted(context.Background(), st, "sort", 0, []*Manifest{man}, testSchema, []SortKey{{Column: "s"}}, opts)
		if err != nil {
			t.Fatalf("%s: collect after a cancelled one: %v", layout, err)
		}
		if out.NumRows() != man.Outputs[0].Rows {
			t.Errorf("%s: %d rows, want %d", layout, out.NumRows(), man.Outputs[0].Rows)
		}
		out.Release()
		for _, id := range []string{"fail", "cancel", "sort", "never-ran"} {
			if err := Cleanup(context.Background(), st, id); err != nil {
				t.Fatal(err)
			}
		}
		if f := files(t, dir); len(f) != 0 {
			t.Errorf("%s: files left after cleanup: %v", layout, f)
		}
	}
}

// A collect frees the disk space of what it read (the sections of a file
// per input are punched out, where the file system can).
func TestCollectFreesSpace(t *testing.T) {
	ctx := context.Background()
	rec := makeBatch(rand.New(rand.NewPCG(11, 11)), memory.DefaultAllocator, 0, 50000, 1000)
	defer rec.Release()
	dir := t.TempDir()
	st := LocalStorage(dir)
	man, err := Split(ctx, st, "free", 0, rec, HashPartitioner("k"), 2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	before, ok := allocated(st.Path(man.Files[0]))
	if !ok {
		t.Skip("no block counts on this system")
	}
	for j := range 2 {
		out, err := Collect(ctx, st, "free", j, []*Manifest{man}, testSchema, Options{})
		if err != nil {
			t.Fatal(err)
		}
		out.Release()
	}
	after, _ := allocated(st.Path(man.Files[0]))
	t.Logf("shard file: %d bytes allocated before the collects, %d after", before, after)
	if after > before/10 {
		t.Logf("the file system did not free the collected sections (no hole punching?)")
	}
}

// A split still running when its computation ended (and Cleanup removed
// the shuffle's files) removes what it wrote when it closes, with
// ErrEnded, instead of leaving files nobody removes; a split of a later
// run of the same shuffle, started after the Cleanup, keeps its files.
func TestSplitAfterCleanup(t *testing.T) {
	mem := checkedMem(t)
	rec := makeBatch(rand.New(rand.NewPCG(12, 12)), mem, 0, 5000, 100)
	defer rec.Release()
	for _, layout := range []Layout{FilePerInput, FilePerShard} {
		ctx := context.Background()
		dir := t.TempDir()
		st := LocalStorage(dir)
		opts := Options{Budget: 16 << 10, Mem: mem, Layout: layout}
		late, err := NewSplitter(st, "s", 0, testSchema, HashPartitioner("k"), 4, opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := late.Write(ctx, rec); err != nil {
			t.Fatal(err)
		}
		if err := Cleanup(ctx, st, "s"); err != nil { // the computation ended
			t.Fatal(err)
		}
		if err := late.Write(ctx, rec); err != nil {
			t.Fatal(err)
		}
		if _, err := late.Close(ctx); !errors.Is(err, ErrEnded) {
			t.Fatalf("%s: Close of a split that outlived its shuffle: %v, want ErrEnded", layout, err)
		}
		if f := files(t, dir); len(f) != 0 {
			t.Errorf("%s: files left by a split that outlived its shuffle: %v", layout, f)
		}
		if _, err := os.Stat(st.Path(Dir("s"))); !os.IsNotExist(err) {
			t.Errorf("%s: the shuffle's directory is back: %v", layout, err)
		}
		// The next run of the same shuffle.
		man, err := Split(ctx, st, "s", 0, rec, HashPartitioner("k"), 4, opts)
		if err != nil {
			t.Fatalf("%s: a split after Cleanup: %v", layout, err)
		}
		if n := len(files(t, dir)); n == 0 || man.Bytes == 0 {
			t.Errorf("%s: the later split kept %d files, %d bytes", layout, n, man.Bytes)
		}
	}
}
