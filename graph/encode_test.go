package graph_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/graph/graphpb"
)

// annotatedGraph has every kind of annotation, external keys, tasks that are
// not listed inputs first, params of several sizes and repeated deps.
func annotatedGraph(t testing.TB) *graph.Graph {
	t.Helper()
	g := mustGraph(t,
		&graph.Task{Key: "c", Op: "op.c", Params: bytes.Repeat([]byte{7}, 300), Deps: []graph.Key{"a", "b", "a", "ext-2"}},
		&graph.Task{Key: "a", Op: "op.a", Annotations: graph.Annotations{
			Priority: -3, Retries: 4, Resources: map[string]float64{"GPU": 1, "MEMORY": 8e9, "a": 0.5},
			Workers: []string{"tcp://10.0.0.1:4000", "w2"}, LooseRestrictions: true, Span: "load",
		}},
		&graph.Task{Key: "b", Op: "op.b", Params: []byte{}, Deps: []graph.Key{"ext-1"},
			Annotations: graph.Annotations{Priority: 1 << 40}},
		&graph.Task{Key: "d", Op: "op.d", Params: []byte{0}, Deps: []graph.Key{"c"},
			Annotations: graph.Annotations{Workers: []string{"w1"}}},
	)
	g.AddExternal("ext-2", "ext-1", "ext-unused")
	return g
}

func TestEncodeRoundTrip(t *testing.T) {
	g := annotatedGraph(t)
	c := encodeDecode(t, g)
	if got, want := c.External(), []graph.Key{"ext-1", "ext-2", "ext-unused"}; !slices.Equal(got, want) {
		t.Errorf("external %v, want %v", got, want)
	}
	a, _ := c.Get("a")
	if a.Priority != -3 || a.Retries != 4 || a.Resources["MEMORY"] != 8e9 || len(a.Resources) != 3 ||
		!slices.Equal(a.Workers, []string{"tcp://10.0.0.1:4000", "w2"}) || !a.LooseRestrictions || a.Span != "load" {
		t.Errorf("annotations of a: %+v", a.Annotations)
	}
	if b, _ := c.Get("b"); b.Priority != 1<<40 || b.Resources != nil {
		t.Errorf("annotations of b: %+v", b.Annotations)
	}
	// Same graph, same bytes; and a graph built again the same way too.
	b1, _ := graph.Encode(g)
	for range 10 {
		if b2, _ := graph.Encode(annotatedGraph(t)); !bytes.Equal(b1, b2) {
			t.Fatal("Encode is not deterministic")
		}
	}
	if b3, _ := graph.Encode(c); !bytes.Equal(b1, b3) {
		t.Error("encoding the decoded copy gives other bytes")
	}
	// The empty graph.
	e := encodeDecode(t, graph.New())
	if e.Len() != 0 {
		t.Errorf("empty graph decodes to %d tasks", e.Len())
	}
}

func TestEncodeRefusesMissingDependencies(t *testing.T) {
	// A dependency that is neither a task nor an external key could never
	// be computed by the receiver: Encode says so instead of sending it.
	g := mustGraph(t, task("a", "op", "nowhere"), task("b", "op", "a", "nowhere"))
	_, err := graph.Encode(g)
	var me *graph.MissingDependencyError
	if !errors.As(err, &me) || len(me.Missing) != 2 || me.Missing[0].Dep != "nowhere" {
		t.Fatalf("error %v, want a MissingDependencyError naming nowhere", err)
	}
	// Declared external, it encodes and stays external.
	g.AddExternal("nowhere")
	b, err := graph.Encode(g)
	if err != nil {
		t.Fatal(err)
	}
	c, err := graph.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !c.IsExternal("nowhere") {
		t.Errorf("external %v", c.External())
	}
	tb, _ := c.Get("b")
	if !slices.Equal(tb.Deps, []graph.Key{"a", "nowhere"}) {
		t.Errorf("deps %v", tb.Deps)
	}
}

func TestEncodeRefusesRetriesOutOfRange(t *testing.T) {
	g := graph.New()
	g.Add(&graph.Task{Key: "a", Op: "op", Annotations: graph.Annotations{Retries: 1 << 32}})
	if _, err := graph.Encode(g); err == nil || !strings.Contains(err.Error(), "retries") {
		t.Fatalf("error %v", err)
	}
}

// marshalPB encodes pg as Encode would, with the checksum, even where pg
// is not a graph Encode could write.
func marshalPB(t testing.TB, pg *graphpb.Graph) []byte {
	t.Helper()
	b, err := proto.Marshal(pg)
	if err != nil {
		t.Fatal(err)
	}
	return seal(b)
}

// seal appends the checksum field Encode writes after b.
func seal(b []byte) []byte {
	b = slices.Clip(b)
	return binary.LittleEndian.AppendUint32(append(b, 15<<3|5), crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
}

func TestDecodeRejects(t *testing.T) {
	tests := []struct {
		name string
		pg   *graphpb.Graph
		want string
		as   any
	}{
		{"dep index out of range", &graphpb.Graph{Tasks: []*graphpb.Task{
			{Key: "a", Op: "op"}, {Key: "b", Op: "op", Deps: []uint32{0, 5}},
		}, External: []string{"x"}}, "index 5 out of range", nil},
		{"huge dep index", &graphpb.Graph{Tasks: []*graphpb.Task{
			{Key: "a", Op: "op", Deps: []uint32{1 << 31}},
		}}, "out of range", nil},
		{"cycle", &graphpb.Graph{Tasks: []*graphpb.Task{
			{Key: "a", Op: "op", Deps: []uint32{2}}, {Key: "b", Op: "op", Deps: []uint32{0}}, {Key: "c", Op: "op", Deps: []uint32{1}},
		}}, `"a" depends on "c" depends on "b" depends on "a"`, new(*graph.CycleError)},
		{"self loop", &graphpb.Graph{Tasks: []*graphpb.Task{{Key: "a", Op: "op", Deps: []uint32{0}}}}, "cycle", new(*graph.CycleError)},
		{"duplicate key", &graphpb.Graph{Tasks: []*graphpb.Task{{Key: "a", Op: "op"}, {Key: "a", Op: "other"}}},
			"duplicate key", new(*graph.DuplicateKeyError)},
		{"empty key", &graphpb.Graph{Tasks: []*graphpb.Task{{Op: "op"}}}, "empty key", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := graph.Decode(marshalPB(t, tt.pg))
			if err == nil {
				t.Fatalf("Decode = %v, want an error", g.Keys())
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "decode graph") {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			if tt.as != nil && !errors.As(err, tt.as) {
				t.Errorf("error is %T, want %T", err, tt.as)
			}
		})
	}
	// The same task twice is accepted: it is the same work.
	g, err := graph.Decode(marshalPB(t, &graphpb.Graph{Tasks: []*graphpb.Task{{Key: "a", Op: "op"}, {Key: "a", Op: "op"}}}))
	if err != nil || g.Len() != 1 {
		t.Errorf("Decode of a repeated task = %v, %v", g, err)
	}
	for _, b := range [][]byte{{0xff}, {0x0a, 0x05, 0x01}, []byte("not a graph at all"), seal([]byte{0x0a, 0x05, 0x01})} {
		if _, err := graph.Decode(b); err == nil {
			t.Errorf("Decode(%q) succeeded", b)
		}
	}
}

// TestDecodeTruncated: every proper prefix of an encoded graph, the empty
// one included, and every single-byte change are errors wrapping
// ErrGraphDamaged, never a smaller graph.
func TestDecodeTruncated(t *testing.T) {
	a := newArith(t)
	for _, g := range []*graph.Graph{graph.New(), annotatedGraph(t), graphOf(t, a.sum.Call(graph.List(a.double.Call(1), a.double.Call(2), 3)))} {
		b, err := graph.Encode(g)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := graph.Decode(b); err != nil {
			t.Fatalf("Decode of whole bytes: %v", err)
		}
		for n := range len(b) {
			if _, err := graph.Decode(b[:n]); !errors.Is(err, graph.ErrGraphDamaged) {
				t.Errorf("Decode of the first %d of %d bytes: %v, want ErrGraphDamaged", n, len(b), err)
			}
		}
		for i := range b {
			c := slices.Clone(b)
			c[i] ^= 0x20
			if _, err := graph.Decode(c); err == nil {
				t.Errorf("Decode with byte %d of %d changed succeeded", i, len(b))
			}
		}
	}
}

func FuzzDecode(f *testing.F) {
	a := newArith(f)
	seeds := []*graph.Graph{annotatedGraph(f), graph.New(), graphOf(f, a.sum.Call(graph.List(a.double.Call(1), graph.FromKey("k"), 3)))}
	fused, _ := fusedChain(f, a)
	seeds = append(seeds, mustGraph(f, fused...))
	for _, g := range seeds {
		b, err := graph.Encode(g)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := graph.Decode(b)
		if err != nil {
			// The checksum stops most random bytes; the same bytes
			// sealed reach the message decoder.
			if g, err = graph.Decode(seal(b)); err != nil {
				return
			}
		}
		// What decodes is valid and encodes again.
		if err := g.Validate(); err != nil {
			t.Fatalf("decoded graph is invalid: %v", err)
		}
		b2, err := graph.Encode(g)
		if err != nil {
			t.Fatal(err)
		}
		g2, err := graph.Decode(b2)
		if err != nil {
			t.Fatalf("re-encoded graph does not decode: %v", err)
		}
		if !slices.Equal(g.Keys(), g2.Keys()) {
			t.Fatal("keys changed")
		}
		// Running a fused task from arbitrary bytes fails cleanly.
		for _, tk := range g.Tasks() {
			if tk.Op == graph.OpFused {
				graph.FusedTasks(tk.Params)
			}
		}
	})
}

// benchGraph returns a graph of n tasks: n/2 independent loads and a
// binary tree of sums over them.
func benchGraph(n int) *graph.Graph {
	tok := graph.TokenizeStrings("bench", "v1")
	g := graph.New()
	var level []graph.Key
	for i := range n / 2 {
		k := graph.NewKey("load", tok, i)
		g.Add(&graph.Task{Key: k, Op: "bench.load", Params: graph.GetItemParams(i)})
		level = append(level, k)
	}
	i := 0
	for g.Len() < n {
		var next []graph.Key
		for j := 0; j < len(level) && g.Len() < n; j += 2 {
			k := graph.NewKey("sum", tok, i)
			i++
			deps := level[j:min(j+2, len(level))]
			g.Add(&graph.Task{Key: k, Op: "bench.sum", Params: []byte{1}, Deps: slices.Clone(deps)})
			next = append(next, k)
		}
		if len(next) == 0 {
			break
		}
		level = next
	}
	return g
}

const benchTasks = 100_000

func BenchmarkEncode(b *testing.B) {
	g := benchGraph(benchTasks)
	var size int
	for b.Loop() {
		buf, err := graph.Encode(g)
		if err != nil {
			b.Fatal(err)
		}
		size = len(buf)
	}
	b.ReportMetric(float64(benchTasks*b.N)/b.Elapsed().Seconds(), "tasks/s")
	b.ReportMetric(float64(size)/benchTasks, "bytes/task")
}

func BenchmarkDecode(b *testing.B) {
	buf, err := graph.Encode(benchGraph(benchTasks))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		g, err := graph.Decode(buf)
		if err != nil {
			b.Fatal(err)
		}
		if g.Len() != benchTasks {
			b.Fatalf("decoded %d tasks", g.Len())
		}
	}
	b.ReportMetric(float64(benchTasks*b.N)/b.Elapsed().Seconds(), "tasks/s")
	b.ReportMetric(float64(len(buf))/benchTasks, "bytes/task")
}

func TestBenchGraph(t *testing.T) {
	g := benchGraph(1000)
	if g.Len() != 1000 {
		t.Fatalf("Len = %d", g.Len())
	}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	encodeDecode(t, g)
}
