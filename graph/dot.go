package graph

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"io"
	"strings"
	"unicode/utf8"
)

// dotPalette holds the fill colours of task nodes (ColorBrewer Set3 and
// Pastel1, light enough for black text). A key prefix always gets the same
// colour, in every process and every picture.
var dotPalette = [...]string{
	"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
	"#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f",
	"#fbb4ae", "#b3cde3", "#decbe4", "#fed9a6",
}

// dotColor returns the fill colour for tasks whose keys have this prefix.
func dotColor(prefix string) string {
	h := fnv.New32a()
	h.Write([]byte(prefix))
	return dotPalette[h.Sum32()%uint32(len(dotPalette))]
}

// WriteDOT writes a Graphviz DOT picture of g to w: one box per task,
// labelled with its key prefix and its partition index (or a short form of
// the rest of the key), filled with a colour chosen by prefix, with the full
// key and the op name in its tooltip; an arrow from each dependency to each
// task that uses it. External keys (and dependencies missing from g) are
// drawn as dashed boxes with dashed arrows. The output is the same for the
// same graph. Render it with, for example, `dot -Tsvg graph.dot > graph.svg`.
func WriteDOT(w io.Writer, g *Graph) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("digraph shoal {\n")
	bw.WriteString("  graph [rankdir=BT];\n")
	bw.WriteString("  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n")
	bw.WriteString("  edge [arrowsize=0.6];\n")

	// Outside keys (external or missing) in a stable order: the external
	// keys sorted, then missing ones in order of first use.
	outside := map[Key]string{}
	var outsideKeys []Key
	addOutside := func(k Key) {
		if _, ok := outside[k]; !ok {
			outside[k] = fmt.Sprintf("x%d", len(outsideKeys))
			outsideKeys = append(outsideKeys, k)
		}
	}
	for _, k := range g.External() {
		addOutside(k)
	}
	for _, t := range g.tasks {
		for _, k := range t.Deps {
			if !g.Has(k) {
				addOutside(k)
			}
		}
	}

	for i, t := range g.tasks {
		prefix, short := dotLabelParts(t.Key)
		label := prefix
		if short != "" {
			label += "\n" + short
		}
		fmt.Fprintf(bw, "  t%d [label=%s, fillcolor=\"%s\", tooltip=%s];\n",
			i, dotQuote(label), dotColor(prefix), dotQuote(string(t.Key)+"\nop: "+t.Op))
	}
	for _, k := range outsideKeys {
		prefix, short := dotLabelParts(k)
		label := prefix
		if short != "" {
			label += "\n" + short
		}
		what := "external"
		if !g.IsExternal(k) {
			what = "missing"
		}
		fmt.Fprintf(bw, "  %s [label=%s, style=\"rounded,dashed\", tooltip=%s];\n",
			outside[k], dotQuote(label), dotQuote(string(k)+"\n"+what))
	}
	seen := map[Key]struct{}{}
	for i, t := range g.tasks {
		clear(seen)
		for _, k := range t.Deps {
			if _, ok := seen[k]; ok {
				continue
			}
			seen[k] = struct{}{}
			if j, ok := g.index[k]; ok {
				fmt.Fprintf(bw, "  t%d -> t%d;\n", j, i)
			} else {
				fmt.Fprintf(bw, "  %s -> t%d [style=dashed];\n", outside[k], i)
			}
		}
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

// dotLabelParts splits a key into its prefix and a short rest for a label:
// the trailing indices ("3" or "2, 5") when it has some, otherwise the rest
// of the key, cut to 12 characters.
func dotLabelParts(k Key) (prefix, short string) {
	prefix = k.Prefix()
	rest := strings.TrimPrefix(string(k)[len(prefix):], "-")
	if rest == "" {
		return prefix, ""
	}
	parts := strings.Split(rest, "-")
	var idx []string
	for i := len(parts) - 1; i >= 0 && isIndex(parts[i]); i-- {
		idx = append(idx, parts[i])
	}
	if len(idx) > 0 {
		for a, b := 0, len(idx)-1; a < b; a, b = a+1, b-1 {
			idx[a], idx[b] = idx[b], idx[a]
		}
		return prefix, strings.Join(idx, ", ")
	}
	if utf8.RuneCountInString(rest) > 12 {
		r := []rune(rest)
		rest = string(r[:12]) + "…"
	}
	return prefix, rest
}

// dotQuote returns s as a DOT quoted string for a label or tooltip: quotes
// and backslashes are escaped, line breaks become \n, other control
// characters and invalid UTF-8 are replaced so that the file stays valid.
func dotQuote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\\\x%02x", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
