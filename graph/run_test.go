package graph_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/graph"
)

// explodeOnPurpose panics; its name must show in the stack of the error.
func explodeOnPurpose(_ context.Context, in graph.OpInput) (any, error) {
	var s []int
	return s[len(in.Inputs)+3], nil // index out of range
}

func TestRunTaskPanic(t *testing.T) {
	reg := graph.NewRegistry()
	if err := reg.Register(graph.Op{Name: "test.explode", Run: explodeOnPurpose}); err != nil {
		t.Fatal(err)
	}
	v, err := reg.RunTask(t.Context(), &graph.Task{Key: "boom-1", Op: "test.explode"}, nil, nil)
	if v != nil {
		t.Errorf("value = %v", v)
	}
	var pe *graph.PanicError
	if !errors.As(err, &pe) {
		t.Fatalf("error = %v, want a *PanicError", err)
	}
	if !strings.Contains(pe.Stack, "explodeOnPurpose") {
		t.Errorf("stack does not mention the panicking function:\n%s", pe.Stack)
	}
	if !strings.Contains(err.Error(), "index out of range") || !strings.Contains(err.Error(), "explodeOnPurpose") {
		t.Errorf("error = %q", err)
	}
	// A panic with an error value keeps it.
	sentinel := errors.New("sentinel")
	if err := reg.Register(graph.Op{Name: "test.panic-error", Run: func(context.Context, graph.OpInput) (any, error) {
		panic(sentinel)
	}}); err != nil {
		t.Fatal(err)
	}
	_, err = reg.RunTask(t.Context(), &graph.Task{Key: "p", Op: "test.panic-error"}, nil, nil)
	if !errors.As(err, &pe) || pe.Value != sentinel {
		t.Errorf("error = %v", err)
	}

	// Typed functions are protected the same way.
	child := graph.Default().Child()
	f, err := graph.RegisterFunc("test.panicky", func(_ context.Context, s string) (byte, error) {
		return s[10], nil
	}, graph.InRegistry(child))
	if err != nil {
		t.Fatal(err)
	}
	_, err = seqEval(t.Context(), child, graphOf(t, f.Call("short")), nil, f.Call("short").Key())
	var te *graph.TaskError
	if !errors.As(err, &te) || !errors.As(err, &pe) || te.Op != "test.panicky" {
		t.Errorf("panicking function: %v", err)
	}
}

func TestRunTaskErrors(t *testing.T) {
	a := newArith(t)
	ctx := t.Context()

	_, err := a.reg.RunTask(ctx, &graph.Task{Key: "x-1", Op: "myapp.gone"}, nil, nil)
	var ue *graph.UnknownOpError
	if !errors.As(err, &ue) || ue.Op != "myapp.gone" || ue.Key != "x-1" {
		t.Errorf("unknown op: %v", err)
	}
	if !strings.Contains(err.Error(), `"x-1"`) || !strings.Contains(err.Error(), "graph.RegisterFunc") {
		t.Errorf("error %q does not name the task or say how to register", err)
	}

	d := a.add.Call(a.double.Call(1), 2)
	tk, _ := graphOf(t, d).Get(d.Key())
	_, err = a.reg.RunTask(ctx, tk, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "1 dependencies but got 0 inputs") {
		t.Errorf("missing inputs: %v", err)
	}
	_, err = a.reg.RunTask(ctx, tk, []any{int64(1), int64(2)}, nil)
	if err == nil || !strings.Contains(err.Error(), "got 2 inputs") {
		t.Errorf("extra inputs: %v", err)
	}
	// An input of the wrong type names the op and the argument.
	_, err = a.reg.RunTask(ctx, tk, []any{"not a number"}, nil)
	if err == nil || !strings.Contains(err.Error(), "test.add") || !strings.Contains(err.Error(), "argument 0") {
		t.Errorf("wrong input type: %v", err)
	}
	// Params that do not match the function.
	bad := &graph.Task{Key: "b", Op: "test.add", Params: []byte{0xff}}
	if _, err := a.reg.RunTask(ctx, bad, nil, nil); err == nil {
		t.Error("garbage params: no error")
	}
	one, _ := graphOf(t, a.double.Call(1)).Get(a.double.Call(1).Key())
	wrongArity := &graph.Task{Key: "w", Op: "test.add", Params: one.Params}
	if _, err := a.reg.RunTask(ctx, wrongArity, nil, nil); err == nil || !strings.Contains(err.Error(), "1 arguments") {
		t.Errorf("params of another arity: %v", err)
	}

	v, err := a.reg.RunTask(ctx, tk, []any{int64(40)}, nil)
	if err != nil || v != int64(42) {
		t.Errorf("RunTask = %v, %v", v, err)
	}
}

func TestRunTaskEnv(t *testing.T) {
	reg := graph.Default().Child()
	var got graph.OpInput
	if err := reg.Register(graph.Op{Name: "test.env", Run: func(_ context.Context, in graph.OpInput) (any, error) {
		got = in
		return nil, nil
	}}); err != nil {
		t.Fatal(err)
	}
	tk := &graph.Task{Key: "e-1", Op: "test.env", Params: []byte("p"), Deps: []graph.Key{"x"}}
	if _, err := reg.RunTask(t.Context(), tk, []any{5}, nil); err != nil {
		t.Fatal(err)
	}
	if got.Key != "e-1" || string(got.Params) != "p" || got.Inputs[0] != 5 || got.Env == nil || got.Env.Registry != reg {
		t.Errorf("OpInput = %+v", got)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	env := &graph.Env{Worker: "w1", LocalDir: "/tmp/w1", Logger: logger}
	if _, err := reg.RunTask(t.Context(), tk, []any{5}, env); err != nil {
		t.Fatal(err)
	}
	if got.Env.Registry != reg || got.Env.Worker != "w1" || got.Env.LocalDir != "/tmp/w1" || got.Env.Logger != logger {
		t.Errorf("Env = %+v", got.Env)
	}
	if env.Registry != nil {
		t.Error("RunTask changed the caller's Env")
	}
	other := graph.Default().Child()
	if _, err := reg.RunTask(t.Context(), tk, []any{5}, &graph.Env{Registry: other}); err != nil {
		t.Fatal(err)
	}
	if got.Env.Registry != other {
		t.Error("RunTask replaced the Env's registry")
	}
}

func TestTaskError(t *testing.T) {
	cause := io.ErrUnexpectedEOF
	self := &graph.TaskError{Key: "read-csv-3fa2c1d0-4", Op: "io.read_csv", Root: "read-csv-3fa2c1d0-4",
		RootOp: "io.read_csv", Worker: "10.0.0.7:4000", Err: cause}
	want := `task "read-csv-3fa2c1d0-4" (op io.read_csv) failed on 10.0.0.7:4000: unexpected EOF`
	if self.Error() != want {
		t.Errorf("Error() = %q, want %q", self.Error(), want)
	}
	noRoot := &graph.TaskError{Key: "k", Op: "op", Err: cause}
	if got := noRoot.Error(); got != `task "k" (op op) failed: unexpected EOF` {
		t.Errorf("Error() = %q", got)
	}
	dep := &graph.TaskError{Key: "sum-1", Op: "test.sum", Root: "read-csv-3fa2c1d0-4", RootOp: "io.read_csv", Err: cause}
	want = `task "sum-1" (op test.sum) not computed: its dependency "read-csv-3fa2c1d0-4" (op io.read_csv) failed: unexpected EOF`
	if dep.Error() != want {
		t.Errorf("Error() = %q, want %q", dep.Error(), want)
	}
	for _, err := range []error{self, dep, error(dep)} {
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("errors.Is(%v, cause) is false", err)
		}
	}
	// Through a wrapped panic.
	pe := &graph.PanicError{Value: "boom", Stack: "goroutine 1 [running]:\nmain.f()"}
	wrapped := fmtErr(&graph.TaskError{Key: "k", Op: "op", Root: "k", Err: pe})
	var gotPE *graph.PanicError
	var gotTE *graph.TaskError
	if !errors.As(wrapped, &gotPE) || gotPE != pe || !errors.As(wrapped, &gotTE) {
		t.Error("errors.As does not find the TaskError and the PanicError")
	}
	if !strings.HasPrefix(pe.Error(), "panic: boom\n") || !strings.Contains(pe.Error(), "main.f()") {
		t.Errorf("PanicError = %q", pe.Error())
	}
	re := &graph.RemoteError{Message: "worker said no"}
	if re.Error() != "worker said no" {
		t.Errorf("RemoteError = %q", re.Error())
	}
	var gotRE *graph.RemoteError
	if !errors.As(&graph.TaskError{Key: "k", Err: re}, &gotRE) {
		t.Error("errors.As does not find the RemoteError")
	}
	de := &graph.DuplicateKeyError{Key: "k", Old: &graph.Task{Op: "a"}, New: &graph.Task{Op: "b", Deps: []graph.Key{"x"}}}
	if !strings.Contains(de.Error(), `"k"`) || !strings.Contains(de.Error(), `"a"`) || !strings.Contains(de.Error(), `"b" with 1 deps`) {
		t.Errorf("DuplicateKeyError = %q", de.Error())
	}
}

func fmtErr(err error) error { return errors.Join(errors.New("compute"), err) }

// TestRunTaskSettlesNullCounts: a result whose arrays are slices (their
// null counts computed lazily) is read by several tasks at once; RunTask
// computes the counts first, so those reads do not race (go test -race).
func TestRunTaskSettlesNullCounts(t *testing.T) {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	for i := range 100 {
		if i%3 == 0 {
			b.AppendNull()
		} else {
			b.Append(int64(i))
		}
	}
	col := b.NewArray()
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	tests := []struct {
		name string
		run  func() any
		cols func(v any) []arrow.Array
	}{
		{"record", func() any {
			rec := array.NewRecordBatch(schema, []arrow.Array{col}, 100)
			return rec.NewSlice(10, 90)
		}, func(v any) []arrow.Array { return v.(arrow.RecordBatch).Columns() }},
		{"table", func() any {
			rec := array.NewRecordBatch(schema, []arrow.Array{col}, 100)
			return array.NewTableFromRecords(schema, []arrow.RecordBatch{rec.NewSlice(0, 50), rec.NewSlice(50, 100)})
		}, func(v any) []arrow.Array { return v.(arrow.Table).Column(0).Data().Chunks() }},
		{"array", func() any { return array.NewSlice(col, 5, 95) },
			func(v any) []arrow.Array { return []arrow.Array{v.(arrow.Array)} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg := graph.NewRegistry()
			if err := reg.Register(graph.Op{Name: "test.slice", Run: func(context.Context, graph.OpInput) (any, error) {
				return tc.run(), nil
			}}); err != nil {
				t.Fatal(err)
			}
			v, err := reg.RunTask(t.Context(), &graph.Task{Key: "slice-1", Op: "test.slice"}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			for _, c := range tc.cols(v) {
				for i := range c.Len() {
					if c.IsNull(i) {
						want++
					}
				}
			}
			var wg sync.WaitGroup
			counts := make([]int, 4)
			for g := range counts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for _, c := range tc.cols(v) {
						counts[g] += c.NullN()
					}
				}()
			}
			wg.Wait()
			for g, n := range counts {
				if n != want {
					t.Errorf("reader %d counted %d nulls, want %d", g, n, want)
				}
			}
		})
	}
}
