package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/internal/dirlock"
	"github.com/shoal-data/shoal/internal/testutil"
)

// bigGraph makes n "test.big" tasks of size floats each and one sum of
// them all, so that every big value is held until the sum runs.
func bigGraph(t testing.TB, reg *graph.Registry, n int, size int64) (*graph.Graph, float64) {
	g := graph.New()
	var deps []graph.Key
	var want float64
	for i := range n {
		k := graph.NewKey("big", "", i)
		g.Add(&graph.Task{Key: k, Op: "test.big", Params: param(t, reg, size+int64(i))})
		deps = append(deps, k)
		want += float64(size+int64(i)) * float64(size+int64(i))
	}
	g.Add(&graph.Task{Key: "sum", Op: "test.sumf", Deps: deps})
	return g, want
}

func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != dirlock.Name {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func TestSpillAndReload(t *testing.T) {
	reg := testRegistry(t)
	dir := t.TempDir()
	e := New(WithRegistry(reg), WithThreads(2), WithMemoryLimit(1<<20), WithLocalDir(dir))
	rec := diagnostics.NewRecorder()
	rec.Attach(e.Events())
	g, want := bigGraph(t, reg, 10, 100_000) // ten values of 800 kB under a 600 kB budget
	got, err := e.Compute(context.Background(), g, "sum")
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != want {
		t.Fatalf("sum %v, want %v", got[0], want)
	}
	if files := dirEntries(t, dir); len(files) != 0 {
		t.Errorf("spill files left after the computation: %v", files)
	}
	if m := e.Memory(); m.Keys != 0 || m.Spilled != 0 || m.Managed != 0 {
		t.Errorf("memory after compute: %+v", m)
	}
	e.Close()
	rec.Close()
	spills, unspills := 0, 0
	for _, ev := range rec.Events() {
		switch ev.Kind {
		case diagnostics.Spill:
			spills++
			if ev.Path == "" || ev.Bytes == 0 {
				t.Errorf("spill event %+v", ev)
			}
		case diagnostics.Unspill:
			unspills++
		}
	}
	if spills == 0 || unspills == 0 {
		t.Errorf("%d spills, %d reloads; want both", spills, unspills)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("Close left %v in the local directory", entries)
	}
}

func TestSpillArrowRecords(t *testing.T) {
	reg := graph.Default().Child()
	reg.Register(graph.Op{Name: "test.record", Signature: "v1", Run: func(_ context.Context, in graph.OpInput) (any, error) {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		defer b.Release()
		for i := range 50_000 {
			b.Append(int64(i))
		}
		col := b.NewArray()
		defer col.Release()
		schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
		return array.NewRecordBatch(schema, []arrow.Array{col}, 50_000), nil
	}})
	reg.Register(graph.Op{Name: "test.rows", Signature: "v1", Run: func(_ context.Context, in graph.OpInput) (any, error) {
		var n, s int64
		for _, x := range in.Inputs {
			rec := x.(arrow.RecordBatch)
			n += rec.NumRows()
			for _, v := range rec.Column(0).(*array.Int64).Int64Values() {
				s += v
			}
		}
		return []int64{n, s}, nil
	}})
	dir := t.TempDir()
	e := New(WithRegistry(reg), WithMemoryLimit(500_000), WithLocalDir(dir))
	defer e.Close()
	g := graph.New()
	var deps []graph.Key
	for i := range 6 {
		k := graph.NewKey("rec", "", i)
		g.Add(&graph.Task{Key: k, Op: "test.record", Params: []byte{byte(i)}})
		deps = append(deps, k)
	}
	g.Add(&graph.Task{Key: "rows", Op: "test.rows", Deps: deps})
	got, err := e.Compute(context.Background(), g, "rows")
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{300_000, 6 * (50_000 * 49_999 / 2)}
	if r := got[0].([]int64); r[0] != want[0] || r[1] != want[1] {
		t.Fatalf("got %v, want %v", r, want)
	}
}

func TestSpillDirUnusable(t *testing.T) {
	reg := testRegistry(t)
	notADir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(notADir, []byte("x"), 0o644)
	e := New(WithRegistry(reg), WithMemoryLimit(1<<20), WithLocalDir(notADir))
	defer e.Close()
	g, _ := bigGraph(t, reg, 4, 100_000)
	_, err := e.Compute(context.Background(), g, "sum")
	var se *SpillError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), notADir) || se.Key == "" {
		t.Fatalf("error %v, want a SpillError naming %s", err, notADir)
	}
}

// TestSpillDiskFull spills onto a 256 kB tmpfs: the error names the key,
// the path and "no space left on device", no partial file stays behind, and
// the executor keeps working.
func TestSpillDiskFull(t *testing.T) {
	dir := testutil.Tmpfs(t, 256<<10)
	reg := testRegistry(t)
	e := New(WithRegistry(reg), WithMemoryLimit(1<<20), WithLocalDir(dir))
	defer e.Close()
	g, _ := bigGraph(t, reg, 6, 100_000)
	_, err := e.Compute(context.Background(), g, "sum")
	var se *SpillError
	if !errors.As(err, &se) {
		t.Fatalf("error %v, want a SpillError", err)
	}
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "no space left on device") ||
		!strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), string(se.Key)) {
		t.Errorf("error %q does not say which key, where and why", err)
	}
	if files := dirEntries(t, dir); len(files) != 0 {
		t.Errorf("files left on the full disk: %v", files)
	}
	small, _ := graph.NewFromTasks(&graph.Task{Key: "ok", Op: "test.add"})
	if _, err := e.Compute(context.Background(), small, "ok"); err != nil {
		t.Errorf("executor unusable after a full disk: %v", err)
	}
}

// TestSpillFilesRemovedOnCancel cancels a computation while some of its
// results wait on disk: Compute returns ctx.Err() and no spill file stays.
func TestSpillFilesRemovedOnCancel(t *testing.T) {
	reg := testRegistry(t)
	blockingOps(t, reg)
	dir := t.TempDir()
	e := New(WithRegistry(reg), WithThreads(2), WithMemoryLimit(1<<20), WithLocalDir(dir))
	defer e.Close()
	spilled := make(chan struct{})
	var once sync.Once
	sub := e.Events().Subscribe(func(evs []diagnostics.Event) {
		for _, ev := range evs {
			if ev.Kind == diagnostics.Spill && e.Memory().Spilled > 0 {
				once.Do(func() { close(spilled) })
			}
		}
	})
	defer sub.Close()
	// The sum waits for a gate that blocks until cancelled, while the big
	// values pile up and spill.
	g, _ := bigGraph(t, reg, 8, 100_000)
	sum, _ := g.Get("sum")
	g2 := graph.New()
	for _, task := range g.Tasks() {
		if task.Key != "sum" {
			g2.Add(task)
		}
	}
	g2.Add(&graph.Task{Key: "gate", Op: "test.block"})
	g2.Add(&graph.Task{Key: "sum", Op: "test.sumf", Deps: append(sum.Deps[:len(sum.Deps):len(sum.Deps)], "gate")})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := e.Compute(ctx, g2, "sum")
		done <- err
	}()
	<-spilled
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v", err)
	}
	if files := dirEntries(t, dir); len(files) != 0 {
		t.Errorf("spill files left after cancel: %v", files)
	}
	if m := e.Memory(); m.Keys != 0 || m.Spilled != 0 {
		t.Errorf("memory after cancel: %+v", m)
	}
}

// TestKilledExecutorsDirsRemoved: New removes the directories that
// executors of killed processes left under its base (their lock is free),
// and never a running executor's; Close removes its own.
func TestKilledExecutorsDirsRemoved(t *testing.T) {
	base := t.TempDir()
	killed := filepath.Join(base, "shoal-local-1-0000abcd")
	if err := os.MkdirAll(filepath.Join(killed, "shuffle-x"), 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := dirlock.Lock(killed)
	if err != nil {
		t.Fatal(err)
	}
	l.Close() // as when its process died
	running := New(WithLocalDir(base))
	defer running.Close()
	if _, err := os.Stat(killed); !os.IsNotExist(err) {
		t.Fatalf("the directory of a killed executor is still there: %v", err)
	}
	other := New(WithLocalDir(base))
	for _, e := range []*Executor{running, other} {
		if _, err := os.Stat(filepath.Join(e.LocalDir(), dirlock.Name)); err != nil {
			t.Errorf("executor directory: %v", err)
		}
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(other.LocalDir()); !os.IsNotExist(err) {
		t.Errorf("Close left %s: %v", other.LocalDir(), err)
	}
}
