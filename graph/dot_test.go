package graph

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// dotStatement is one statement of a DOT body: a node (From set, To empty)
// or an edge, with its attributes.
type dotStatement struct {
	From, To string
	Attrs    map[string]string
}

// dotParse checks the structure of a file written by WriteDOT, as far as
// this package writes it: one "digraph" with balanced braces and brackets,
// quoted strings closed on their line with valid escapes, statements ended
// by semicolons. It returns the node and edge statements.
func dotParse(t *testing.T, src string) []dotStatement {
	t.Helper()
	if !utf8.ValidString(src) {
		t.Fatal("DOT output is not valid UTF-8")
	}
	// Braces, brackets and quotes, outside strings.
	depth, brackets := 0, 0
	inStr := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if inStr {
			switch c {
			case '\\':
				i++
			case '"':
				inStr = false
			case '\n':
				t.Fatalf("raw line break in a quoted string at byte %d", i)
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{':
			depth++
		case '}':
			depth--
		case '[':
			brackets++
		case ']':
			brackets--
		}
		if depth < 0 || brackets < 0 {
			t.Fatalf("unbalanced at byte %d", i)
		}
	}
	if inStr || depth != 0 || brackets != 0 {
		t.Fatalf("unbalanced output: string open %v, brace depth %d, bracket depth %d", inStr, depth, brackets)
	}
	lines := strings.Split(strings.TrimSuffix(src, "\n"), "\n")
	if lines[0] != "digraph shoal {" || lines[len(lines)-1] != "}" {
		t.Fatalf("not one digraph: first line %q, last %q", lines[0], lines[len(lines)-1])
	}
	stmt := regexp.MustCompile(`^  ([A-Za-z_][A-Za-z0-9_]*)(?: -> ([A-Za-z_][A-Za-z0-9_]*))?(?: \[(.*)\])?;$`)
	attr := regexp.MustCompile(`^([a-z]+)=("(?:[^"\\]|\\.)*"|[A-Za-z0-9.#]+)(?:, |$)`)
	var out []dotStatement
	for _, l := range lines[1 : len(lines)-1] {
		m := stmt.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("cannot parse line %q", l)
		}
		s := dotStatement{From: m[1], To: m[2], Attrs: map[string]string{}}
		for rest := m[3]; rest != ""; {
			a := attr.FindStringSubmatch(rest)
			if a == nil {
				t.Fatalf("cannot parse attributes %q of line %q", rest, l)
			}
			s.Attrs[a[1]] = a[2]
			rest = rest[len(a[0]):]
		}
		out = append(out, s)
	}
	return out
}

// dotUnquote reverses dotQuote for the characters it escapes.
func dotUnquote(s string) string {
	s = strings.TrimSuffix(strings.TrimPrefix(s, `"`), `"`)
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			default:
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// dotShown is how a key reads in a picture: invalid UTF-8 replaced, control
// characters other than line breaks spelled \xNN.
func dotShown(k Key) Key {
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(string(k), "\uFFFD") {
		if r != '\n' && (r < 0x20 || r == 0x7f) {
			fmt.Fprintf(&b, "\\x%02x", r)
			continue
		}
		b.WriteRune(r)
	}
	return Key(b.String())
}

func dotWrite(t *testing.T, g *Graph) string {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteDOT(&buf, g); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// dotCheck parses the picture of g and checks that it shows every task,
// every external key and every edge, with every edge endpoint declared.
func dotCheck(t *testing.T, g *Graph, src string) []dotStatement {
	t.Helper()
	stmts := dotParse(t, src)
	nodes := map[string]dotStatement{}
	byKey := map[Key]string{}
	for _, s := range stmts {
		if s.To != "" || s.From == "graph" || s.From == "node" || s.From == "edge" {
			continue
		}
		if _, dup := nodes[s.From]; dup {
			t.Fatalf("node %s declared twice", s.From)
		}
		nodes[s.From] = s
		tip := dotUnquote(s.Attrs["tooltip"])
		key := tip[:max(0, strings.LastIndex(tip, "\n"))] // the last line is the op
		byKey[Key(key)] = s.From
	}
	edges := map[[2]string]bool{}
	for _, s := range stmts {
		if s.To == "" {
			continue
		}
		for _, id := range []string{s.From, s.To} {
			if _, ok := nodes[id]; !ok {
				t.Fatalf("edge %s -> %s: %s is not declared", s.From, s.To, id)
			}
		}
		edges[[2]string{s.From, s.To}] = true
	}
	for _, tk := range g.Tasks() {
		id, ok := byKey[dotShown(tk.Key)]
		if !ok {
			t.Fatalf("task %q has no node", tk.Key)
		}
		if !strings.Contains(dotUnquote(nodes[id].Attrs["tooltip"]), "op: "+tk.Op) {
			t.Fatalf("node of %q: tooltip %s does not name op %s", tk.Key, nodes[id].Attrs["tooltip"], tk.Op)
		}
		for _, d := range tk.Deps {
			did, ok := byKey[dotShown(d)]
			if !ok {
				t.Fatalf("dependency %q of %q has no node", d, tk.Key)
			}
			if !edges[[2]string{did, id}] {
				t.Fatalf("no edge %q -> %q", d, tk.Key)
			}
			if !g.Has(d) && !strings.Contains(nodes[did].Attrs["style"], "dashed") {
				t.Fatalf("external key %q is not dashed", d)
			}
		}
	}
	for _, k := range g.External() {
		if _, ok := byKey[k]; !ok {
			t.Fatalf("external key %q has no node", k)
		}
	}
	return stmts
}

func TestWriteDOT(t *testing.T) {
	weird := []Key{
		`quote"in-1`, `back\slash-2`, "new\nline-3", "tab\tand\x07bell-4", "bad-\xff\xfe-utf8", "brace{}[];-5",
		"ünïcødé-6", `end\`, `"`, "->-7",
	}
	var ts []*Task
	for i, k := range weird {
		tk := optSum(k, int64(i))
		if i > 0 {
			tk.Deps = []Key{weird[i-1], "ext-\"x\"", weird[i-1]}
		}
		ts = append(ts, tk)
	}
	tests := []struct {
		name string
		g    *Graph
	}{
		{"empty", New()},
		{"weird keys", optGraphOf(t, []Key{"ext-\"x\""}, ts...)},
		{"tree", optGraphOf(t, nil, orderTree(9)...)},
		{"missing dependency", func() *Graph {
			g := New()
			optAppend(g, optSum("a", 1, "nowhere-1"))
			return g
		}()},
	}
	reg := optTestRegistry()
	for seed := range 20 {
		rng := rand.New(rand.NewPCG(uint64(seed), 5))
		g := optRandomGraph(t, reg, rng, 30)
		tests = append(tests, struct {
			name string
			g    *Graph
		}{"random", g})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := dotWrite(t, tc.g)
			dotCheck(t, tc.g, src)
			if again := dotWrite(t, tc.g); again != src {
				t.Fatal("two pictures of one graph differ")
			}
		})
	}
}

func TestWriteDOTLabelsAndColors(t *testing.T) {
	g := optGraphOf(t, []Key{"persisted-0123456789abcdef-2"},
		optSum("read-csv-3fa2c1d0aa-4", 1),
		optSum("read-csv-3fa2c1d0aa-5", 1),
		optSum("sum-99887766aabb-1-2", 1, "read-csv-3fa2c1d0aa-4", "persisted-0123456789abcdef-2"),
		optSum("total", 1, "sum-99887766aabb-1-2", "read-csv-3fa2c1d0aa-5"),
		optSum("named-a-long-key-without-index", 1),
	)
	stmts := dotCheck(t, g, dotWrite(t, g))
	labels := map[string]string{}
	colors := map[string]string{}
	for _, s := range stmts {
		if s.To == "" && (strings.HasPrefix(s.From, "t") || strings.HasPrefix(s.From, "x")) {
			labels[s.From] = dotUnquote(s.Attrs["label"])
			colors[s.From] = s.Attrs["fillcolor"]
		}
	}
	want := map[string]string{
		"t0": "read-csv\n4", "t1": "read-csv\n5", "t2": "sum\n1, 2", "t3": "total",
		"t4": "named-a-long-key-without-index", "x0": "persisted\n2",
	}
	for id, l := range want {
		if labels[id] != l {
			t.Errorf("label of %s = %q, want %q", id, labels[id], l)
		}
	}
	if colors["t0"] != colors["t1"] || colors["t0"] == "" {
		t.Errorf("tasks of one prefix have colours %s and %s", colors["t0"], colors["t1"])
	}
	if colors["t0"] != `"`+dotColor("read-csv")+`"` {
		t.Errorf("colour %s, want %s", colors["t0"], dotColor("read-csv"))
	}
	if colors["x0"] != "" {
		t.Errorf("external key is filled with %s", colors["x0"])
	}
	// The palette tells the usual prefixes apart.
	seen := map[string]string{}
	for _, p := range []string{"read-csv", "sum", "total", "getitem", "value", "fused"} {
		c := dotColor(p)
		if q, ok := seen[c]; ok {
			t.Logf("prefixes %s and %s share colour %s", q, p, c)
		}
		seen[c] = p
	}
	if len(seen) < 4 {
		t.Errorf("six prefixes get only %d colours", len(seen))
	}
}

func TestDotLabelParts(t *testing.T) {
	tests := []struct {
		key           Key
		prefix, short string
	}{
		{"read-csv-3fa2c1d0-4", "read-csv", "4"},
		{"x-1-2", "x", "1, 2"},
		{"sum-3fa2c1d0aabbccdd", "sum", "3fa2c1d0aabb…"},
		{"plain", "plain", ""},
		{"", "", ""},
		{"-", "-", ""},
	}
	for _, tc := range tests {
		p, s := dotLabelParts(tc.key)
		if p != tc.prefix || s != tc.short {
			t.Errorf("dotLabelParts(%q) = %q, %q; want %q, %q", tc.key, p, s, tc.prefix, tc.short)
		}
	}
}

type dotFailWriter struct{ n int }

func (w *dotFailWriter) Write(p []byte) (int, error) {
	if w.n -= len(p); w.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestWriteDOTError(t *testing.T) {
	g := optGraphOf(t, nil, orderTree(2000)...)
	if err := WriteDOT(&dotFailWriter{n: 10_000}, g); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("error %v, want disk full", err)
	}
}

// TestWriteDOTRender renders pictures with Graphviz when it is installed.
func TestWriteDOTRender(t *testing.T) {
	dot, err := exec.LookPath("dot")
	if err != nil {
		t.Skip("Graphviz dot is not installed")
	}
	weird := optGraphOf(t, []Key{`e"x\t`}, optSum(`a"b\c`+"\n-1", 1, `e"x\t`), optSum("bad-\xff", 1, `a"b\c`+"\n-1"))
	for _, g := range []*Graph{weird, optGraphOf(t, nil, orderTree(16)...)} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, dot, "-Tsvg")
		cmd.Stdin = strings.NewReader(dotWrite(t, g))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		cancel()
		if err != nil || stderr.Len() > 0 {
			t.Fatalf("dot: %v: %s", err, stderr.String())
		}
		if !bytes.Contains(out, []byte("<svg")) {
			t.Fatal("dot wrote no SVG")
		}
	}
}

func ExampleWriteDOT() {
	g, _ := NewFromTasks(
		&Task{Key: "load-0", Op: "myapp.load"},
		&Task{Key: "total", Op: "myapp.sum", Deps: []Key{"load-0", "offset"}},
	)
	g.AddExternal("offset")
	_ = WriteDOT(os.Stdout, g)
	// Output:
	// digraph shoal {
	//   graph [rankdir=BT];
	//   node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];
	//   edge [arrowsize=0.6];
	//   t0 [label="load\n0", fillcolor="#bc80bd", tooltip="load-0\nop: myapp.load"];
	//   t1 [label="total", fillcolor="#b3cde3", tooltip="total\nop: myapp.sum"];
	//   x0 [label="offset", style="rounded,dashed", tooltip="offset\nexternal"];
	//   t0 -> t1;
	//   x0 -> t1 [style=dashed];
	// }
}
