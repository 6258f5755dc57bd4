package main

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// kind is the kind of values of a column of a comparable table.
type kind int

const (
	kindNull   kind = iota // no non-null value seen yet
	kindInt                // signed and unsigned integers, booleans (0/1)
	kindFloat              // floating point
	kindString             // text
	kindTime               // instants, as Unix nanoseconds; dates at midnight UTC
)

func (k kind) String() string {
	return [...]string{"null", "int", "float", "string", "time"}[k]
}

// column is one column of a comparable table: the values of its kind in
// ints (ints and times), floats or strings, and where they are null.
type column struct {
	name   string
	kind   kind
	ints   []int64
	floats []float64
	strs   []string
	null   []bool
}

func (c *column) len() int { return len(c.null) }

// appendValue appends a Go value as returned by database/sql from DuckDB.
func (c *column) appendValue(v any) error {
	k, i, f, s := kindNull, int64(0), 0.0, ""
	switch x := v.(type) {
	case nil:
	case int64:
		k, i = kindInt, x
	case int32:
		k, i = kindInt, int64(x)
	case int16:
		k, i = kindInt, int64(x)
	case int8:
		k, i = kindInt, int64(x)
	case uint64:
		if x > math.MaxInt64 {
			return fmt.Errorf("column %s: %d does not fit int64", c.name, x)
		}
		k, i = kindInt, int64(x)
	case uint32:
		k, i = kindInt, int64(x)
	case uint16:
		k, i = kindInt, int64(x)
	case uint8:
		k, i = kindInt, int64(x)
	case bool:
		k = kindInt
		if x {
			i = 1
		}
	case *big.Int:
		if !x.IsInt64() {
			return fmt.Errorf("column %s: %v does not fit int64", c.name, x)
		}
		k, i = kindInt, x.Int64()
	case float64:
		k, f = kindFloat, x
	case float32:
		k, f = kindFloat, float64(x)
	case string:
		k, s = kindString, x
	case []byte:
		k, s = kindString, string(x)
	case time.Time:
		k, i = kindTime, x.UnixNano()
	default:
		return fmt.Errorf("column %s: values of type %T are not supported", c.name, v)
	}
	if k == kindNull {
		c.appendNull()
		return nil
	}
	if err := c.setKind(k); err != nil {
		return err
	}
	c.null = append(c.null, false)
	switch c.kind {
	case kindFloat:
		c.floats = append(c.floats, f)
	case kindString:
		c.strs = append(c.strs, s)
	default:
		c.ints = append(c.ints, i)
	}
	return nil
}

// setKind fixes the column's kind at its first non-null value, filling the
// nulls seen so far.
func (c *column) setKind(k kind) error {
	if c.kind == k {
		return nil
	}
	if c.kind != kindNull {
		return fmt.Errorf("column %s: a %v value in a column of %v values", c.name, k, c.kind)
	}
	c.kind = k
	n := len(c.null)
	switch k {
	case kindFloat:
		c.floats = make([]float64, n)
	case kindString:
		c.strs = make([]string, n)
	default:
		c.ints = make([]int64, n)
	}
	return nil
}

func (c *column) appendNull() {
	c.null = append(c.null, true)
	switch c.kind {
	case kindFloat:
		c.floats = append(c.floats, 0)
	case kindString:
		c.strs = append(c.strs, "")
	case kindInt, kindTime:
		c.ints = append(c.ints, 0)
	}
}

// format writes row i's value for messages.
func (c *column) format(i int) string {
	if c.null[i] {
		return "null"
	}
	switch c.kind {
	case kindFloat:
		return strconv.FormatFloat(c.floats[i], 'g', -1, 64)
	case kindString:
		return strconv.Quote(c.strs[i])
	case kindTime:
		return time.Unix(0, c.ints[i]).UTC().Format(time.RFC3339Nano)
	default:
		return strconv.FormatInt(c.ints[i], 10)
	}
}

// table is a result in a form both engines' answers convert to, so that
// they can be sorted and compared.
type table struct {
	cols []*column
	// hashOrder's result, kept: the hashes of the rows' cells in the
	// columns hashedCols, and the rows in the order of their hashes.
	hashes     []uint64
	order      []int
	hashedCols []int
}

func newTable(names ...string) *table {
	t := &table{}
	for _, n := range names {
		t.cols = append(t.cols, &column{name: n})
	}
	return t
}

func (t *table) rows() int {
	if len(t.cols) == 0 {
		return 0
	}
	return t.cols[0].len()
}

func (t *table) names() []string {
	var n []string
	for _, c := range t.cols {
		n = append(n, c.name)
	}
	return n
}

// appendRow appends one row of Go values (see column.appendValue).
func (t *table) appendRow(vals ...any) error {
	if len(vals) != len(t.cols) {
		return fmt.Errorf("row of %d values for %d columns", len(vals), len(t.cols))
	}
	for i, v := range vals {
		if err := t.cols[i].appendValue(v); err != nil {
			return err
		}
	}
	return nil
}

func (t *table) formatRow(i int) string {
	var b strings.Builder
	for j, c := range t.cols {
		if j > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s=%s", c.name, c.format(i))
	}
	return b.String()
}

// tableFromArrow converts an Arrow table. Integer, float, string, boolean,
// timestamp and date columns are supported, dictionary-encoded or not.
func tableFromArrow(at arrow.Table) (*table, error) {
	t := &table{}
	n := int(at.NumRows())
	for j := range int(at.NumCols()) {
		col := at.Column(j)
		c := &column{name: col.Name(), null: make([]bool, 0, n)}
		for _, chunk := range col.Data().Chunks() {
			if err := appendArrow(c, chunk); err != nil {
				return nil, err
			}
		}
		t.cols = append(t.cols, c)
	}
	return t, nil
}

func appendArrow(c *column, a arrow.Array) error {
	n := a.Len()
	if d, ok := a.(*array.Dictionary); ok {
		dict := &column{name: c.name}
		if err := appendArrow(dict, d.Dictionary()); err != nil {
			return err
		}
		if err := c.setKind(dict.kind); err != nil {
			return err
		}
		for i := range n {
			if d.IsNull(i) || dict.null[d.GetValueIndex(i)] {
				c.appendNull()
				continue
			}
			k := d.GetValueIndex(i)
			c.null = append(c.null, false)
			switch dict.kind {
			case kindFloat:
				c.floats = append(c.floats, dict.floats[k])
			case kindString:
				c.strs = append(c.strs, dict.strs[k])
			default:
				c.ints = append(c.ints, dict.ints[k])
			}
		}
		return nil
	}
	var (
		k     kind
		ints  func(int) int64
		flts  func(int) float64
		strsf func(int) string
	)
	switch x := a.(type) {
	case *array.Int64:
		k, ints = kindInt, x.Value
	case *array.Int32:
		k, ints = kindInt, func(i int) int64 { return int64(x.Value(i)) }
	case *array.Int16:
		k, ints = kindInt, func(i int) int64 { return int64(x.Value(i)) }
	case *array.Int8:
		k, ints = kindInt, func(i int) int64 { return int64(x.Value(i)) }
	case *array.Uint64:
		k, ints = kindInt, func(i int) int64 { return int64(x.Value(i)) }
	case *array.Uint32:
		k, ints = kindInt, func(i int) int64 { return int64(x.Value(i)) }
	case *array.Uint16:
		k, ints = kindInt, func(i int) int64 { return int64(x.Value(i)) }
	case *array.Uint8:
		k, ints = kindInt, func(i int) int64 { return int64(x.Value(i)) }
	case *array.Boolean:
		k, ints = kindInt, func(i int) int64 {
			if x.Value(i) {
				return 1
			}
			return 0
		}
	case *array.Float64:
		k, flts = kindFloat, x.Value
	case *array.Float32:
		k, flts = kindFloat, func(i int) float64 { return float64(x.Value(i)) }
	case *array.String:
		k, strsf = kindString, x.Value
	case *array.LargeString:
		k, strsf = kindString, x.Value
	case *array.StringView:
		k, strsf = kindString, x.Value
	case *array.Timestamp:
		unit := x.DataType().(*arrow.TimestampType).Unit
		mul := int64(unit.Multiplier())
		k, ints = kindTime, func(i int) int64 { return int64(x.Value(i)) * mul }
	case *array.Date32:
		k, ints = kindTime, func(i int) int64 { return int64(x.Value(i)) * int64(24*time.Hour) }
	case *array.Date64:
		k, ints = kindTime, func(i int) int64 { return int64(x.Value(i)) * int64(time.Millisecond) }
	case *array.Null:
		for range n {
			c.appendNull()
		}
		return nil
	default:
		return fmt.Errorf("column %s: Arrow type %v is not supported by the comparison", c.name, a.DataType())
	}
	if err := c.setKind(k); err != nil {
		return err
	}
	for i := range n {
		if a.IsNull(i) {
			c.appendNull()
			continue
		}
		c.null = append(c.null, false)
		switch {
		case ints != nil:
			c.ints = append(c.ints, ints(i))
		case flts != nil:
			c.floats = append(c.floats, flts(i))
		default:
			c.strs = append(c.strs, strsf(i))
		}
	}
	return nil
}

// compareCells orders row i of a against row j of b in column c (same kind).
func compareCells(a *column, i int, b *column, j int) int {
	if a.null[i] || b.null[j] {
		return cmp.Compare(boolInt(!a.null[i]), boolInt(!b.null[j])) // nulls first
	}
	switch a.kind {
	case kindFloat:
		return cmp.Compare(a.floats[i], b.floats[j])
	case kindString:
		return strings.Compare(a.strs[i], b.strs[j])
	default:
		return cmp.Compare(a.ints[i], b.ints[j])
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// floatTolerance is the relative tolerance of float comparisons: sums of
// floats in another order differ in the last bits.
const floatTolerance = 1e-9

// closeEnough says whether two floats are equal within floatTolerance
// (relative to the larger magnitude, with an absolute floor of 1e-12 for
// values near zero); NaN equals NaN.
func closeEnough(a, b float64) bool {
	if a == b || (math.IsNaN(a) && math.IsNaN(b)) {
		return true
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) || math.IsNaN(a) || math.IsNaN(b) {
		return false
	}
	return math.Abs(a-b) <= max(floatTolerance*max(math.Abs(a), math.Abs(b)), 1e-12)
}

// cellsEqual compares row i of got with row j of want: integers, strings and
// times exactly, floats within floatTolerance; an integer and a float are
// compared as numbers.
func cellsEqual(got *column, i int, want *column, j int) bool {
	if got.null[i] || want.null[j] {
		return got.null[i] == want.null[j]
	}
	switch {
	case got.kind == kindFloat && want.kind == kindFloat:
		return closeEnough(got.floats[i], want.floats[j])
	case got.kind == kindFloat && want.kind == kindInt:
		return got.floats[i] == float64(want.ints[j])
	case got.kind == kindInt && want.kind == kindFloat:
		return float64(got.ints[i]) == want.floats[j]
	case got.kind != want.kind:
		return false
	case got.kind == kindString:
		return got.strs[i] == want.strs[j]
	default:
		return got.ints[i] == want.ints[j]
	}
}

// compareTables checks that got (Shoal's answer) equals want (the peer's)
// as multisets of rows: same column names in the same order, same row count,
// and each row of one equal to a row of the other (see cellsEqual). Rows are
// paired through a hash of their exact (non-float) cells, so the check takes
// a sort of integers, not of rows. The error shows the first differing rows.
func compareTables(got, want *table) error {
	if g, w := got.names(), want.names(); !slices.Equal(g, w) {
		return fmt.Errorf("columns %v, want %v", g, w)
	}
	numeric := func(k kind) bool { return k == kindInt || k == kindFloat }
	for i, g := range got.cols {
		w := want.cols[i]
		if g.kind != w.kind && g.kind != kindNull && w.kind != kindNull && !(numeric(g.kind) && numeric(w.kind)) {
			return fmt.Errorf("column %s holds %v values, want %v", g.name, g.kind, w.kind)
		}
	}
	// The exact columns: not float on either side.
	var exact []int
	for i, w := range want.cols {
		if w.kind != kindFloat && got.cols[i].kind != kindFloat {
			exact = append(exact, i)
		}
	}
	wh, wi := hashOrder(want, exact)
	gh, gi := hashOrder(got, exact)
	rowsEqual := func(i, j int) bool {
		for c := range got.cols {
			if !cellsEqual(got.cols[c], i, want.cols[c], j) {
				return false
			}
		}
		return true
	}
	var onlyGot, onlyWant []int // unmatched rows
	var pairs [][2]int          // unmatched rows with the same exact cells
	for a, b := 0, 0; a < len(gi) || b < len(wi); {
		switch {
		case b == len(wi) || (a < len(gi) && gh[gi[a]] < wh[wi[b]]):
			onlyGot = append(onlyGot, gi[a])
			a++
		case a == len(gi) || gh[gi[a]] > wh[wi[b]]:
			onlyWant = append(onlyWant, wi[b])
			b++
		default:
			// A run of rows with the same hash on both sides: pair equal
			// rows greedily.
			h := gh[gi[a]]
			a2, b2 := a, b
			for a2 < len(gi) && gh[gi[a2]] == h {
				a2++
			}
			for b2 < len(wi) && wh[wi[b2]] == h {
				b2++
			}
			used := make([]bool, b2-b)
			var leftG, leftW []int
			for _, i := range gi[a:a2] {
				found := false
				for k, j := range wi[b:b2] {
					if !used[k] && rowsEqual(i, j) {
						used[k], found = true, true
						break
					}
				}
				if !found {
					leftG = append(leftG, i)
				}
			}
			for k, j := range wi[b:b2] {
				if !used[k] {
					leftW = append(leftW, j)
				}
			}
			for len(leftG) > 0 && len(leftW) > 0 {
				pairs = append(pairs, [2]int{leftG[0], leftW[0]})
				leftG, leftW = leftG[1:], leftW[1:]
			}
			onlyGot = append(onlyGot, leftG...)
			onlyWant = append(onlyWant, leftW...)
			a, b = a2, b2
		}
	}
	if len(pairs) == 0 && len(onlyGot) == 0 && len(onlyWant) == 0 {
		if got.rows() != want.rows() { // cannot happen: every row is matched
			return fmt.Errorf("%d rows, want %d", got.rows(), want.rows())
		}
		return nil
	}
	var b strings.Builder
	if got.rows() != want.rows() {
		fmt.Fprintf(&b, "%d rows, want %d; ", got.rows(), want.rows())
	}
	fmt.Fprintf(&b, "%d of Shoal's %d rows have no equal row in the peer's answer", len(pairs)+len(onlyGot), got.rows())
	slices.SortFunc(pairs, func(x, y [2]int) int { return cmp.Compare(x[1], y[1]) })
	shown := 0
	for _, p := range pairs {
		if shown == 3 {
			break
		}
		fmt.Fprintf(&b, "\n  row with the same %s:\n    shoal: %s\n    peer:  %s", exactNames(got, exact), got.formatRow(p[0]), want.formatRow(p[1]))
		shown++
	}
	for _, i := range onlyGot[:min(len(onlyGot), max(3-shown, 1))] {
		fmt.Fprintf(&b, "\n  only in Shoal's answer: %s", got.formatRow(i))
	}
	for _, j := range onlyWant[:min(len(onlyWant), max(3-shown, 1))] {
		fmt.Fprintf(&b, "\n  only in the peer's answer: %s", want.formatRow(j))
	}
	return fmt.Errorf("%s", b.String())
}

func exactNames(t *table, exact []int) string {
	if len(exact) == 0 {
		return "position"
	}
	var n []string
	for _, c := range exact {
		n = append(n, t.cols[c].name)
	}
	return strings.Join(n, ", ")
}

// hashSeed makes the row hashes of one process comparable.
var hashSeed = maphash.MakeSeed()

// hashOrder returns the hash of each row's cells in the exact columns and
// the row positions ordered by it. The peer's table is hashed once and the
// result kept for the comparisons of every run.
func hashOrder(t *table, exact []int) ([]uint64, []int) {
	if t.hashes != nil && slices.Equal(t.hashedCols, exact) {
		return t.hashes, t.order
	}
	n := t.rows()
	hs := make([]uint64, n)
	var h maphash.Hash
	h.SetSeed(hashSeed)
	var buf [8]byte
	for i := range n {
		h.Reset()
		for _, ci := range exact {
			c := t.cols[ci]
			switch {
			case c.null[i]:
				h.WriteByte(0)
			case c.kind == kindString:
				h.WriteByte(1)
				h.WriteString(c.strs[i])
				h.WriteByte(0)
			default:
				h.WriteByte(2)
				binary.LittleEndian.PutUint64(buf[:], uint64(c.ints[i]))
				h.Write(buf[:])
			}
		}
		hs[i] = h.Sum64()
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(hs[a], hs[b]) })
	t.hashes, t.order, t.hashedCols = hs, idx, slices.Clone(exact)
	return hs, idx
}
