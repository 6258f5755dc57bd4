package dataframe_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	df "github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/dataframe/dftest"
	"github.com/shoal-data/shoal/internal/dirlock"
	"github.com/shoal-data/shoal/internal/testutil"
	"github.com/shoal-data/shoal/local"
)

// randomFrame makes n rows in parts partitions: an int64 key with
// duplicates and nulls, a float, a string.
func randomFrame(t testing.TB, seed uint64, n, parts int) (df.DataFrame, []int64) {
	r := rand.New(rand.NewPCG(seed, 1))
	keys := make([]*int64, n)
	vals := make([]float64, n)
	names := make([]string, n)
	var plain []int64
	for i := range n {
		if r.IntN(20) != 0 {
			k := int64(r.IntN(n / 3))
			if r.IntN(4) == 0 {
				k = 7 // skew: one key holds a quarter of the rows
			}
			keys[i] = &k
			plain = append(plain, k)
		}
		vals[i] = r.Float64()
		names[i] = fmt.Sprintf("n%d", r.IntN(50))
	}
	tbl := compute(t.(*testing.T), df.FromColumns("k", keys, "v", vals, "name", names))
	return df.FromTable(tbl, parts), plain
}

func TestSortValues(t *testing.T) {
	for _, parts := range []int{1, 3, 8} {
		d, keys := randomFrame(t, uint64(parts), 2000, parts)
		got := compute(t, d.SortValues("k", df.Desc("name")))
		if got.NumRows() != 2000 {
			t.Fatalf("%d rows", got.NumRows())
		}
		// The keys come out in order, nulls last.
		col := column[*array.Int64](t, got, "k")
		slices.Sort(keys)
		for i, k := range keys {
			if col.IsNull(i) || col.Value(i) != k {
				t.Fatalf("parts %d: row %d is %v, want %d", parts, i, col.Value(i), k)
			}
		}
		for i := len(keys); i < col.Len(); i++ {
			if !col.IsNull(i) {
				t.Fatalf("row %d should be null", i)
			}
		}
		// Ties are ordered by name, descending.
		names := column[*array.String](t, got, "name")
		for i := 1; i < len(keys); i++ {
			if col.Value(i) == col.Value(i-1) && names.Value(i) > names.Value(i-1) {
				t.Fatalf("row %d: %q after %q for equal keys", i, names.Value(i), names.Value(i-1))
			}
		}
	}
}

// column returns a table's column as one array of type A.
func column[A arrow.Array](t *testing.T, tbl arrow.Table, name string) A {
	t.Helper()
	idx := tbl.Schema().FieldIndices(name)
	if len(idx) == 0 {
		t.Fatalf("no column %q", name)
	}
	a, err := array.Concatenate(tbl.Column(idx[0]).Data().Chunks(), memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	return a.(A)
}

func TestSetIndexAndLoc(t *testing.T) {
	ctx := context.Background()
	e := newExec(t)
	// Sorted already: no shuffle.
	sorted := df.FromColumns("t", []int64{1, 2, 3, 4, 5, 6, 7, 8, 9}, "x", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9})
	s := df.FromTable(compute(t, sorted), 3)
	idx, err := s.SetIndex(ctx, e, "t")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(idx.Explain(), "no shuffle") {
		t.Errorf("sorted data shuffled:\n%s", idx.Explain())
	}
	if got := idx.Divisions(); !slices.Equal(got, []any{int64(1), int64(4), int64(7), int64(9)}) {
		t.Errorf("divisions %v", got)
	}
	loc := idx.Loc(4, 6)
	if loc.NPartitions() != 1 {
		t.Errorf("Loc(4, 6) reads %d partitions, want 1", loc.NPartitions())
	}
	dftest.AssertEqual(t, compute(t, loc.Select("x")), dftest.Table(t, dftest.Float64s("x", 4.0, 5.0, 6.0)))
	dftest.AssertEqual(t, compute(t, idx.Loc(nil, 2).Select("t")), dftest.Table(t, dftest.Int64s("t", 1, 2)))

	// Unsorted: shuffled by ranges into sorted partitions.
	d, keys := randomFrame(t, 5, 3000, 6)
	d = d.DropNull("k")
	idx, err = d.SetIndex(ctx, e, "k")
	if err != nil {
		t.Fatal(err)
	}
	divs := idx.Divisions()
	if len(divs) != idx.NPartitions()+1 {
		t.Fatalf("%d divisions for %d partitions", len(divs), idx.NPartitions())
	}
	got := compute(t, idx)
	col := column[*array.Int64](t, got, "k")
	slices.Sort(keys)
	for i, k := range keys {
		if col.Value(i) != k {
			t.Fatalf("row %d: %d, want %d", i, col.Value(i), k)
		}
	}
	// Loc reads only matching partitions and keeps exactly the range.
	lo, hi := keys[len(keys)/3], keys[len(keys)/2]
	sub := idx.Loc(lo, hi)
	if sub.NPartitions() >= idx.NPartitions() {
		t.Errorf("Loc kept all %d partitions", sub.NPartitions())
	}
	var want []any
	for _, k := range keys {
		if k >= lo && k <= hi {
			want = append(want, k)
		}
	}
	dftest.AssertEqual(t, compute(t, sub.Select("k")), dftest.Table(t, dftest.Int64s("k", want...)))

	if _, err := d.SetIndex(ctx, e, "nope"); err == nil {
		t.Errorf("unknown column accepted")
	}
	if _, err := d.SetIndex(ctx, e, "k", df.IndexOptions{Sorted: true}); err == nil || !strings.Contains(err.Error(), "not sorted") {
		t.Errorf("unsorted data accepted as sorted: %v", err)
	}
	if err := sorted.Loc(1, 2).Err(); err == nil {
		t.Errorf("Loc without an index")
	}
}

func TestRepartitionAndShuffle(t *testing.T) {
	d, _ := randomFrame(t, 9, 1000, 4)
	all := compute(t, d)
	for _, n := range []int{1, 3, 4, 9} {
		r := d.Repartition(n)
		if r.NPartitions() < n || (n < 4 && r.NPartitions() > n) {
			t.Errorf("Repartition(%d) has %d partitions", n, r.NPartitions())
		}
		dftest.AssertEqual(t, compute(t, r), all)
	}
	sh := d.Shuffle(5, "name")
	got := compute(t, sh)
	dftest.AssertEqual(t, got, all, dftest.IgnoreRowOrder())
	// Equal names share a partition: each partition's names are disjoint.
	recs := records(t, sh)
	seen := map[string]int{}
	for p, rec := range recs {
		names := rec.Column(rec.Schema().FieldIndices("name")[0]).(*array.String)
		for i := range names.Len() {
			if q, ok := seen[names.Value(i)]; ok && q != p {
				t.Fatalf("name %q in partitions %d and %d", names.Value(i), q, p)
			}
			seen[names.Value(i)] = p
		}
	}
}

// records computes a frame's partitions separately.
func records(t *testing.T, d df.DataFrame) []arrow.RecordBatch {
	g, keys, err := d.Graph()
	if err != nil {
		t.Fatal(err)
	}
	vals, err := newExec(t).Compute(context.Background(), g, keys...)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]arrow.RecordBatch, len(vals))
	for i, v := range vals {
		out[i] = v.(arrow.RecordBatch)
	}
	return out
}

// TestShuffleOutOfCore sorts data several times larger than the shuffle
// budget and the executor's memory limit: it spills and still sorts.
func TestShuffleOutOfCore(t *testing.T) {
	dir := t.TempDir()
	e := local.New(local.WithThreads(2), local.WithLocalDir(dir), local.WithMemoryLimit(2<<20))
	defer e.Close()
	d, keys := randomFrame(t, 11, 60_000, 6)
	got, err := d.DropNull("k").SortValues("k").Compute(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	col := column[*array.Int64](t, got, "k")
	slices.Sort(keys)
	for i, k := range keys {
		if col.Value(i) != k {
			t.Fatalf("row %d: %d, want %d", i, col.Value(i), k)
		}
	}
	if files := leftFiles(t, dir); len(files) != 0 {
		t.Errorf("files left after the sort: %v", files)
	}
}

// leftFiles lists the files under dir but a running executor's lock.
func leftFiles(t *testing.T, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, de os.DirEntry, err error) error {
		if err == nil && !de.IsDir() && de.Name() != dirlock.Name {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TestShuffleDiskFull shuffles onto a 256 kB tmpfs: the error names the
// operation, the output, the path and the reason; no file stays; the
// executor keeps working.
func TestShuffleDiskFull(t *testing.T) {
	dir := testutil.Tmpfs(t, 256<<10)
	e := local.New(local.WithThreads(2), local.WithLocalDir(dir))
	defer e.Close()
	d, _ := randomFrame(t, 3, 40_000, 4)
	_, err := d.SortValues("k").Compute(context.Background(), e)
	var se *df.ShuffleError
	if !errors.As(err, &se) {
		t.Fatalf("error %v, want a ShuffleError", err)
	}
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "no space left on device") ||
		!strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "output partition") {
		t.Errorf("error %q does not say what, where and why", err)
	}
	if files := leftFiles(t, dir); len(files) != 0 {
		t.Errorf("files left: %v", files)
	}
	small := df.FromColumns("x", []int64{3, 1, 2}).SortValues("x")
	got, err := small.Compute(context.Background(), e)
	if err != nil {
		t.Fatalf("executor unusable after a full disk: %v", err)
	}
	got.Release()
}

// TestSortAllNull sorts a column without a single value: nulls only,
// in several partitions.
func TestSortAllNull(t *testing.T) {
	d := df.FromTable(compute(t, df.FromColumns("k", []*int64{nil, nil, nil, nil}, "v", []int64{1, 2, 3, 4})), 3)
	got := compute(t, d.SortValues("k"))
	dftest.AssertEqual(t, got, dftest.Table(t, dftest.Int64s("k", nil, nil, nil, nil), dftest.Int64s("v", 1, 2, 3, 4)), dftest.IgnoreRowOrder())
	idx, err := d.SetIndex(context.Background(), newExec(t), "k")
	if err != nil {
		t.Fatalf("SetIndex of an all-null column: %v", err)
	}
	dftest.AssertEqual(t, compute(t, idx), got, dftest.IgnoreRowOrder())
}

// TestTwoExecutorsShuffleAtOnce runs the same sort on two executors of one
// process at once, with the same local directory, as two jobs on one
// host would: each has a directory of its own, so neither reads or
// removes the other's shards, and nothing is left once they are closed.
func TestTwoExecutorsShuffleAtOnce(t *testing.T) {
	dir := t.TempDir()
	d, _ := randomFrame(t, 5, 20_000, 6)
	want := compute(t, d.SortValues("k", "v"))
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			e := local.New(local.WithLocalDir(dir), local.WithThreads(2))
			errs <- errors.Join(func() error {
				for range 5 {
					got, err := d.SortValues("k", "v").Compute(context.Background(), e)
					if err != nil {
						return err
					}
					same := array.TableEqual(got, want)
					got.Release()
					if !same {
						return errors.New("a different table")
					}
				}
				return nil
			}(), e.Close())
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if left := leftFiles(t, dir); len(left) != 0 {
		t.Errorf("files left: %v", left)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("directories left: %v", entries)
	}
}
