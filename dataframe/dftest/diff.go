package dftest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/apache/arrow-go/v18/arrow"
)

// maxShown is how many differing rows a report lists.
const maxShown = 10

// AssertEqual reports through t.Errorf when got and want differ, with the
// report of Diff, and returns whether they are equal.
//
// got and want may each be an arrow.Table, an arrow.RecordBatch, a
// []arrow.RecordBatch (the batches of one table, in order) or any value
// with a method Table() arrow.Table.
func AssertEqual(t testing.TB, got, want any, opts ...Option) bool {
	t.Helper()
	d := Diff(got, want, opts...)
	if d == "" {
		return true
	}
	t.Errorf("tables differ (got vs want):\n%s", d)
	return false
}

// Diff describes how got differs from want, or returns "" when they are
// equal. See AssertEqual for the values it accepts.
//
// The report lists, in this order: columns missing from got or unexpected
// in it, columns whose types differ, columns in another order, a
// difference in the number of rows, then up to ten differing rows with
// only their differing columns, got beside want, and how many rows differ
// in all. Nulls equal nulls and NaN equals NaN. Field nullability and
// metadata are not compared.
func Diff(got, want any, opts ...Option) string {
	o := newOptions(opts)
	g, err := readTable(got)
	if err != nil {
		return "got: " + err.Error()
	}
	w, err := readTable(want)
	if err != nil {
		return "want: " + err.Error()
	}
	var b strings.Builder
	pairs := diffSchema(&b, g, w, o)
	if g.rows != w.rows {
		fmt.Fprintf(&b, "rows: got %d, want %d\n", g.rows, w.rows)
	}
	if o.ignoreRowOrder {
		diffRowsUnordered(&b, g, w, pairs, o)
	} else {
		diffRows(&b, g, w, pairs, o)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// table is a table read into columns.
type table struct {
	cols []*column
	rows int
}

// readTable reads what AssertEqual accepts.
func readTable(v any) (*table, error) {
	switch x := v.(type) {
	case nil:
		return nil, fmt.Errorf("is nil")
	case arrow.Table:
		if x == nil {
			return nil, fmt.Errorf("is a nil arrow.Table")
		}
		t := &table{rows: int(x.NumRows())}
		for i := 0; i < int(x.NumCols()); i++ {
			c := x.Column(i)
			t.cols = append(t.cols, newColumn(c.Name(), c.DataType(), c.Data().Chunks()))
		}
		return t, nil
	case arrow.RecordBatch:
		if x == nil {
			return nil, fmt.Errorf("is a nil arrow.RecordBatch")
		}
		return readRecords(x.Schema(), []arrow.RecordBatch{x})
	case []arrow.RecordBatch:
		if len(x) == 0 {
			return nil, fmt.Errorf("is an empty []arrow.RecordBatch; it has no schema")
		}
		for i, r := range x {
			if r == nil {
				return nil, fmt.Errorf("record batch %d is nil", i)
			}
			if !r.Schema().Equal(x[0].Schema()) {
				return nil, fmt.Errorf("record batch %d has schema %s, unlike batch 0 with %s", i, r.Schema(), x[0].Schema())
			}
		}
		return readRecords(x[0].Schema(), x)
	case interface{ Table() arrow.Table }:
		return readTable(x.Table())
	}
	return nil, fmt.Errorf("is a %T; want an arrow.Table, an arrow.RecordBatch, a []arrow.RecordBatch or a value with a Table() arrow.Table method", v)
}

func readRecords(s *arrow.Schema, recs []arrow.RecordBatch) (*table, error) {
	t := &table{}
	for _, r := range recs {
		t.rows += int(r.NumRows())
	}
	for i, f := range s.Fields() {
		chunks := make([]arrow.Array, len(recs))
		for j, r := range recs {
			chunks[j] = r.Column(i)
		}
		t.cols = append(t.cols, newColumn(f.Name, f.Type, chunks))
	}
	return t, nil
}

// pair is a column of got matched with a column of want by name.
type pair struct{ g, w *column }

// diffSchema writes the column differences and returns the pairs of
// columns whose values can be compared, in want's order.
func diffSchema(b *strings.Builder, g, w *table, o options) []pair {
	// Match by name; the k-th column of a repeated name matches the k-th.
	type ref struct {
		name string
		k    int
	}
	refs := func(t *table) []ref {
		seen := map[string]int{}
		out := make([]ref, len(t.cols))
		for i, c := range t.cols {
			out[i] = ref{c.name, seen[c.name]}
			seen[c.name]++
		}
		return out
	}
	gr, wr := refs(g), refs(w)
	gi := map[ref]int{}
	for i, r := range gr {
		gi[r] = i
	}
	wi := map[ref]int{}
	for i, r := range wr {
		wi[r] = i
	}
	for i, r := range wr {
		if _, ok := gi[r]; !ok {
			fmt.Fprintf(b, "missing column %s (%s)\n", strconv.Quote(r.name), w.cols[i].typ)
		}
	}
	for i, r := range gr {
		if _, ok := wi[r]; !ok {
			fmt.Fprintf(b, "unexpected column %s (%s)\n", strconv.Quote(r.name), g.cols[i].typ)
		}
	}
	var pairs []pair
	var gOrder, wOrder []string
	for i, r := range wr {
		j, ok := gi[r]
		if !ok {
			continue
		}
		gc, wc := g.cols[j], w.cols[i]
		typesDiffer := !arrow.TypeEqual(gc.typ, wc.typ)
		switch {
		case !canCompare(gc, wc):
			fmt.Fprintf(b, "column %s: got %s, want %s (values not compared)\n", strconv.Quote(r.name), gc.typ, wc.typ)
			continue
		case typesDiffer && o.checkTypes:
			fmt.Fprintf(b, "column %s: got %s, want %s\n", strconv.Quote(r.name), gc.typ, wc.typ)
		}
		pairs = append(pairs, pair{gc, wc})
	}
	for _, r := range gr {
		if _, ok := wi[r]; ok {
			gOrder = append(gOrder, r.name)
		}
	}
	for _, r := range wr {
		if _, ok := gi[r]; ok {
			wOrder = append(wOrder, r.name)
		}
	}
	if !o.ignoreColOrder && !slices.Equal(gOrder, wOrder) {
		fmt.Fprintf(b, "column order: got %s, want %s\n", names(g.cols), names(w.cols))
	}
	return pairs
}

func names(cols []*column) string {
	s := make([]string, len(cols))
	for i, c := range cols {
		s[i] = c.name
	}
	return "[" + strings.Join(s, " ") + "]"
}

// diffRows compares rows by position.
func diffRows(b *strings.Builder, g, w *table, pairs []pair, o options) {
	n := min(g.rows, w.rows)
	if len(pairs) > 0 {
		var differing int
		var list strings.Builder
		tw := newTabWriter(&list)
		fmt.Fprintln(tw, "  row\tcolumn\tgot\twant")
		for i := 0; i < n; i++ {
			first := true
			for _, p := range pairs {
				if equal(p.g, i, p.w, i, o.tol) {
					continue
				}
				if first {
					differing++
				}
				if differing <= maxShown {
					row := ""
					if first {
						row = strconv.Itoa(i)
					}
					gs, ws := formatPair(p.g, i, p.w, i)
					fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", row, p.w.name, gs, ws)
				}
				first = false
			}
		}
		if differing > 0 {
			verb := "differ"
			if differing == 1 {
				verb = "differs"
			}
			fmt.Fprintf(b, "%d of %s %s", differing, plural(n, "row"), verb)
			if g.rows != w.rows {
				fmt.Fprintf(b, " (comparing the first %d)", n)
			}
			if differing > maxShown {
				fmt.Fprintf(b, "; the first %d:\n", maxShown)
			} else {
				b.WriteString(":\n")
			}
			tw.Flush()
			b.WriteString(list.String())
		}
	}
	switch {
	case g.rows > w.rows:
		fmt.Fprintf(b, "got has %d more %s than want:\n", g.rows-w.rows, noun(g.rows-w.rows, "row"))
		listRows(b, g, seq(w.rows, g.rows))
	case w.rows > g.rows:
		fmt.Fprintf(b, "want has %d more %s than got:\n", w.rows-g.rows, noun(w.rows-g.rows, "row"))
		listRows(b, w, seq(g.rows, w.rows))
	}
}

func seq(from, to int) []int {
	s := make([]int, 0, min(to-from, maxShown+1))
	for i := from; i < to && len(s) <= maxShown; i++ {
		s = append(s, i)
	}
	return s
}

// plural spells "1 row", "2 rows".
func plural(n int, word string) string {
	return strconv.Itoa(n) + " " + noun(n, word)
}

// noun spells "row" or "rows".
func noun(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func newTabWriter(b *strings.Builder) *tabwriter.Writer {
	return tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
}

// listRows writes up to maxShown of the rows, all columns; more than
// maxShown rows in the list are summarised.
func listRows(b *strings.Builder, t *table, rows []int) {
	tw := newTabWriter(b)
	fmt.Fprint(tw, "  row")
	for _, c := range t.cols {
		fmt.Fprintf(tw, "\t%s", c.name)
	}
	fmt.Fprintln(tw)
	for k, i := range rows {
		if k == maxShown {
			break
		}
		fmt.Fprintf(tw, "  %d", i)
		for _, c := range t.cols {
			fmt.Fprintf(tw, "\t%s", c.format(i))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// diffRowsUnordered sorts both tables by the compared columns and matches
// rows as in a merge, listing the rows found on one side only.
func diffRowsUnordered(b *strings.Builder, g, w *table, pairs []pair, o options) {
	if len(pairs) == 0 {
		return
	}
	// Sort keys: exact columns first, floats last, so that float noise
	// rarely changes how rows line up.
	keys := slices.Clone(pairs)
	slices.SortStableFunc(keys, func(x, y pair) int {
		return cmpBool(isFloat(x), isFloat(y))
	})
	gs := sortedRows(g.rows, keys, func(p pair) *column { return p.g })
	ws := sortedRows(w.rows, keys, func(p pair) *column { return p.w })
	var onlyG, onlyW []int
	i, j := 0, 0
	for i < len(gs) && j < len(ws) {
		gi, wj := gs[i], ws[j]
		if rowsEqual(keys, gi, wj, o.tol) {
			i++
			j++
			continue
		}
		if cmpRows(keys, gi, wj) < 0 {
			onlyG = append(onlyG, gi)
			i++
		} else {
			onlyW = append(onlyW, wj)
			j++
		}
	}
	onlyG = append(onlyG, gs[i:]...)
	onlyW = append(onlyW, ws[j:]...)
	if len(onlyG) == 0 && len(onlyW) == 0 {
		return
	}
	for _, side := range []struct {
		name string
		t    *table
		rows []int
	}{{"got", g, onlyG}, {"want", w, onlyW}} {
		if len(side.rows) == 0 {
			continue
		}
		slices.Sort(side.rows)
		fmt.Fprintf(b, "%s only in %s (ignoring row order)", plural(len(side.rows), "row"), side.name)
		if len(side.rows) > maxShown {
			fmt.Fprintf(b, "; the first %d", maxShown)
		}
		b.WriteString(":\n")
		listRows(b, side.t, side.rows)
	}
}

func isFloat(p pair) bool { return p.g.kind == kFloat || p.w.kind == kFloat }

func sortedRows(n int, keys []pair, side func(pair) *column) []int {
	cols := make([]*column, len(keys))
	for k, p := range keys {
		cols[k] = side(p)
	}
	rows := make([]int, n)
	for i := range rows {
		rows[i] = i
	}
	slices.SortStableFunc(rows, func(x, y int) int {
		for _, c := range cols {
			if r := compare(c, x, c, y); r != 0 {
				return r
			}
		}
		return 0
	})
	return rows
}

func rowsEqual(keys []pair, gi, wj int, tol tolerance) bool {
	for _, p := range keys {
		if !equal(p.g, gi, p.w, wj, tol) {
			return false
		}
	}
	return true
}

func cmpRows(keys []pair, gi, wj int) int {
	for _, p := range keys {
		if r := compare(p.g, gi, p.w, wj); r != 0 {
			return r
		}
	}
	return 0
}
