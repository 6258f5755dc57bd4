package csv

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
)

// The parser works in two steps over small batches of rows, so that both
// steps stay in the processor's cache:
//
//  1. tokenize finds the fields of up to miniRows rows and records where
//     each selected field starts and ends;
//  2. convert then goes column by column, turning the recorded fields into
//     values. Writing one column at a time keeps the stores sequential; a
//     row-at-a-time loop would write to every column's buffer in turn.

// miniRows is the number of rows per tokenize/convert round (a variable
// for tests).
var miniRows = 1024

const (
	miniBytes = 1 << 18 // bytes per tokenize/convert round, about

	fQuoted  = 1 << 31 // the field was quoted
	fEscaped = 1 << 30 // and holds doubled quotes
	fPos     = fEscaped - 1

	lanes = 0x0101010101010101
	highs = 0x8080808080808080
)

// zeroBytes has the high bit set in the lowest byte of x that is zero (and
// possibly in higher bytes): the classic SWAR test.
func zeroBytes(x uint64) uint64 { return (x - lanes) &^ x & highs }

// nullSet recognises null markers quickly: most fields are rejected by
// their length or first byte.
type nullSet struct {
	first  [256]bool
	maxLen int
	empty  bool
	vals   []string
}

func newNullSet(vals []string) nullSet {
	var s nullSet
	for _, v := range vals {
		if v == "" {
			s.empty = true
			continue
		}
		s.first[v[0]] = true
		s.maxLen = max(s.maxLen, len(v))
		s.vals = append(s.vals, v)
	}
	return s
}

func (s *nullSet) match(f []byte) bool {
	if len(f) == 0 {
		return s.empty
	}
	if len(f) > s.maxLen || !s.first[f[0]] {
		return false
	}
	for _, v := range s.vals {
		if string(f) == v {
			return true
		}
	}
	return false
}

// issue is a malformed row found by the parser.
type issue struct {
	off  int64 // offset in the file of the offending text
	col  int   // 1-based column, 0 for the whole row
	text string
	err  error
}

func (i *issue) Error() string { return i.err.Error() }

// parser splits rows into fields and converts them into columns.
type parser struct {
	delim, quote byte
	cols         []column // one per column of the file; kSkip if not selected
	sel          []int    // selected columns, in file order
	slot         []int    // column -> index among the selected, -1 if not selected
	nrows        int      // rows in the current batch
	maxRows      int      // batch size
	nulls        nullSet
	nullsNumeric bool // a null marker looks like a plain number
	skipBad      bool
	noNLInQuotes bool
	scratch      []byte
	bad          []issue // rows skipped (skipBad)

	// The current mini-batch: for row r and selected column s, the field
	// is buf[starts[r*len(sel)+s] : ends[...]&fPos], flags in ends.
	starts, ends []uint32
	badRow       []bool // rows found bad while converting (skipBad)
}

// release frees the columns' buffers.
func (p *parser) release() {
	for i := range p.cols {
		p.cols[i].release()
	}
}

func newParser(delim, quote byte, cols []column, nulls []string, skipBad, noNL bool, maxRows int) *parser {
	p := &parser{delim: delim, quote: quote, cols: cols, nulls: newNullSet(nulls),
		skipBad: skipBad, noNLInQuotes: noNL, maxRows: maxRows}
	for _, v := range nulls {
		if _, ok := parseFloatFast([]byte(v)); ok {
			p.nullsNumeric = true
		}
	}
	p.slot = make([]int, len(cols))
	for j := range cols {
		p.slot[j] = -1
		if cols[j].kind != kSkip {
			p.slot[j] = len(p.sel)
			p.sel = append(p.sel, j)
		}
	}
	p.starts = make([]uint32, miniRows*len(p.sel))
	p.ends = make([]uint32, miniRows*len(p.sel))
	p.badRow = make([]bool, miniRows)
	return p
}

// unescape returns a quoted field's text with doubled quotes made single.
func (p *parser) unescape(f []byte) []byte {
	p.scratch = p.scratch[:0]
	for {
		i := bytes.IndexByte(f, p.quote)
		if i < 0 || i+1 >= len(f) {
			return append(p.scratch, f...)
		}
		p.scratch = append(p.scratch, f[:i+1]...)
		f = f[i+2:]
	}
}

// lineText returns the text of the line starting at start, for messages.
func lineText(buf []byte, start int) string {
	end := bytes.IndexByte(buf[start:], '\n')
	if end < 0 {
		end = len(buf) - start
	}
	return truncText(bytes.TrimSuffix(buf[start:start+end], []byte("\r")))
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// parse parses rows of buf, whose first byte is at offset base of the file,
// until buf ends or the batch is full. Unless final, a row that reaches the
// end of buf may be incomplete: parse stops before it. It returns how many
// bytes it consumed. A malformed row is an error (skipBad: recorded in
// p.bad and dropped).
func (p *parser) parse(buf []byte, base int64, final bool) (int, error) {
	if len(buf) > fPos {
		return 0, fmt.Errorf("a row near offset %d is longer than %d bytes", base, fPos)
	}
	pos := 0
	nq := -1 // the next quote at or after pos (len(buf) if none)
	for pos < len(buf) && p.nrows < p.maxRows {
		var nb, next int
		var stop *issue
		var incomplete bool
		nb, next, nq, stop, incomplete = p.tokenize(buf, pos, base, final, min(miniRows, p.maxRows-p.nrows), nq)
		if nb > 0 {
			if err := p.convert(buf, base, nb); err != nil {
				return next, err
			}
		}
		pos = next
		if stop != nil {
			return pos, stop
		}
		if incomplete {
			break
		}
	}
	return pos, nil
}

// tokenize records the fields of up to limit rows starting at buf[pos:] and
// returns how many rows it recorded and where it stopped. A malformed row
// stops it (stop) unless p.skipBad, when it is recorded in p.bad. Unless
// final, a row that reaches the end of buf stops it (incomplete). nq is the
// position of the next quote at or after pos, if known (it is looked for
// with a vector search, once for many fields).
func (p *parser) tokenize(buf []byte, pos int, base int64, final bool, limit, nq int) (nb, next, nextQuote int, stop *issue, incomplete bool) {
	n := len(buf)
	delim, quote := p.delim, p.quote
	dm, nm := lanes*uint64(delim), lanes*uint64('\n')
	ncols := len(p.cols)
	nsel := len(p.sel)
	slot := p.slot
	starts, ends := p.starts, p.ends
	stopAt := min(n, pos+miniBytes)
	for nb < limit && pos < n {
		if pos >= stopAt && nb > 0 {
			break
		}
		switch buf[pos] {
		case '\n': // blank line
			pos++
			continue
		case '\r':
			if pos+1 < n {
				if buf[pos+1] == '\n' {
					pos += 2
					continue
				}
			} else if !final {
				return nb, pos, nq, nil, true
			} else {
				pos++
				continue
			}
		}
		rowStart := pos
		col := 0
		var bad *issue
		fields := nb * nsel
		for {
			fieldStart := pos
			var s, e, flags uint32
			if nq < pos {
				nq = n
				if k := bytes.IndexByte(buf[pos:], quote); k >= 0 {
					nq = pos + k
				}
			}
			if nq == pos && pos < n {
				flags = fQuoted
				j := pos + 1
				for {
					k := bytes.IndexByte(buf[j:], quote)
					if k < 0 {
						if !final {
							return nb, rowStart, nq, nil, true
						}
						if bad == nil {
							bad = &issue{off: base + int64(fieldStart), col: col + 1,
								text: truncText(buf[fieldStart:]), err: fmt.Errorf("%w: quoted field not terminated", ErrQuote)}
						}
						j = n
						break
					}
					j += k
					if j+1 < n {
						if buf[j+1] == quote {
							flags |= fEscaped
							j += 2
							continue
						}
					} else if !final {
						return nb, rowStart, nq, nil, true
					}
					break
				}
				s, e = uint32(pos+1), uint32(j)
				pos = min(j+1, n)
				if p.noNLInQuotes && bad == nil && bytes.IndexByte(buf[s:e], '\n') >= 0 {
					bad = &issue{off: base + int64(fieldStart), col: col + 1, text: truncText(buf[fieldStart:pos]),
						err: fmt.Errorf("%w: line break in a quoted field, but Options.NoNewlinesInQuotes is set", ErrQuote)}
				}
				if pos < n {
					switch c := buf[pos]; c {
					case delim, '\n':
					case '\r':
						if pos+1 < n {
							if buf[pos+1] == '\n' {
								pos++
								break
							}
						} else if !final {
							return nb, rowStart, nq, nil, true
						} else {
							pos++
							break
						}
						fallthrough
					default:
						if bad == nil {
							bad = &issue{off: base + int64(fieldStart), col: col + 1, text: lineText(buf, fieldStart),
								err: fmt.Errorf("%w: text after the closing quote", ErrQuote)}
						}
						for pos < n && buf[pos] != delim && buf[pos] != '\n' {
							pos++
						}
					}
				}
			} else {
				j := pos
				// Eight bytes at a time: a byte of x equal to the delimiter
				// or '\n' becomes zero after the XOR. Quotes are found
				// apart (nq).
				for j+8 <= n {
					x := binary.LittleEndian.Uint64(buf[j:])
					if m := zeroBytes(x^dm) | zeroBytes(x^nm); m != 0 {
						j += bits.TrailingZeros64(m) >> 3
						goto found
					}
					j += 8
				}
				for j < n && buf[j] != delim && buf[j] != '\n' {
					j++
				}
			found:
				if nq < j {
					j = nq
					if bad == nil {
						bad = &issue{off: base + int64(fieldStart), col: col + 1, text: lineText(buf, fieldStart),
							err: fmt.Errorf("%w: quote in an unquoted field (quote the whole field and double the quote)", ErrQuote)}
					}
					for j < n && buf[j] != delim && buf[j] != '\n' {
						j++
					}
				}
				if j == n && !final {
					return nb, rowStart, nq, nil, true
				}
				s, e = uint32(pos), uint32(j)
				pos = j
				if (pos == n || buf[pos] == '\n') && e > s && buf[e-1] == '\r' {
					e--
				}
			}
			if col < ncols {
				if k := slot[col]; k >= 0 {
					starts[fields+k] = s
					ends[fields+k] = e | flags
				}
			}
			col++
			if pos < n && buf[pos] == delim {
				pos++
				continue
			}
			if pos < n {
				pos++ // '\n'
			}
			break
		}
		if bad == nil && col != ncols {
			bad = &issue{off: base + int64(rowStart), text: lineText(buf, rowStart),
				err: fmt.Errorf("%w: %s, want %d", ErrFieldCount, plural(col, "field"), ncols)}
		}
		if bad != nil {
			if !p.skipBad {
				return nb, pos, nq, bad, false
			}
			p.bad = append(p.bad, *bad)
			continue
		}
		nb++
	}
	return nb, pos, nq, nil, false
}

// convert appends the nb tokenized rows to the columns, column by column.
func (p *parser) convert(buf []byte, base int64, nb int) error {
	nsel := len(p.sel)
	row0 := p.nrows
	anyBad := false
	var first *issue // the earliest bad value (!skipBad)
	firstRow := nb
	for k, j := range p.sel {
		c := &p.cols[j]
		rows := nb
		if !p.skipBad {
			rows = firstRow // later rows do not matter after an error
		}
		c.ensure(row0 + rows)
		r := 0
		if c.kind == kString && !c.hasNulls {
			r = c.stringRun(buf, p.starts, p.ends, k, nsel, row0, rows, p.nulls.maxLen)
		}
		if !p.nullsNumeric && !c.hasNulls {
			switch c.kind {
			case kInt:
				r = intRun(c.i64.s[row0:row0+rows], buf, p.starts, p.ends, k, nsel, c.minInt, c.maxInt)
			case kInt32:
				r = intRun(c.i32.s[row0:row0+rows], buf, p.starts, p.ends, k, nsel, c.minInt, c.maxInt)
			case kFloat64:
				r = floatRun(c.f64.s[row0:row0+rows], buf, p.starts, p.ends, k, nsel)
			}
		}
		for ; r < rows; r++ {
			s, e := p.starts[r*nsel+k], p.ends[r*nsel+k]
			f := buf[s : e&fPos]
			row := row0 + r
			// Fast paths for plain numbers and strings.
			switch c.kind {
			case kInt:
				if v, ok := parseIntFast(f); ok && !p.nullsNumeric && v >= c.minInt && v <= c.maxInt {
					c.i64.s[row] = v
					if c.hasNulls {
						setBit(&c.valid, row, true)
					}
					continue
				}
			case kInt32:
				if v, ok := parseIntFast(f); ok && !p.nullsNumeric && v >= c.minInt && v <= c.maxInt {
					c.i32.s[row] = int32(v)
					if c.hasNulls {
						setBit(&c.valid, row, true)
					}
					continue
				}
			case kFloat64:
				if v, ok := parseFloatFast(f); ok && !p.nullsNumeric {
					c.f64.s[row] = v
					if c.hasNulls {
						setBit(&c.valid, row, true)
					}
					continue
				}
			case kString:
				if e&fEscaped == 0 && (len(f) > p.nulls.maxLen || e&fQuoted != 0) {
					n := c.dataLen + len(f)
					if n+16 > len(c.data.s) {
						c.data.grow(n + 15)
					}
					if d := c.data.s[c.dataLen:]; len(f) <= 16 && int(s)+16 <= len(buf) {
						// Short strings: two 8-byte moves instead of a call
						// to memmove; the bytes written past the string are
						// overwritten by the next one.
						binary.LittleEndian.PutUint64(d, binary.LittleEndian.Uint64(buf[s:]))
						binary.LittleEndian.PutUint64(d[8:], binary.LittleEndian.Uint64(buf[s+8:]))
					} else {
						copy(d, f)
					}
					c.dataLen = n
					c.offs.s[row+1] = int32(n)
					if c.hasNulls {
						setBit(&c.valid, row, true)
					}
					continue
				}
			}
			if e&fEscaped != 0 {
				f = p.unescape(f)
			}
			null := (e&fQuoted == 0 || (c.kind != kString && c.kind != kDict)) && p.nulls.match(f)
			if err := c.appendValue(row, f, null); err != nil {
				if p.skipBad {
					if !p.badRow[r] {
						p.badRow[r] = true
						anyBad = true
						p.bad = append(p.bad, issue{off: base + int64(s), col: j + 1, text: truncText(f), err: err})
					}
					if c.kind == kString {
						c.offs.s[row+1] = int32(c.dataLen) // keep offsets monotonic
					}
					continue
				}
				if r < firstRow {
					first = &issue{off: base + int64(s), col: j + 1, text: truncText(f), err: err}
					firstRow = r
				}
				break
			}
		}
	}
	if first != nil {
		return first
	}
	if anyBad {
		nb = p.compact(row0, nb)
	}
	p.nrows += nb
	return nil
}

// compact removes the rows marked in p.badRow from the last nb rows of
// the columns, returning how many rows remain.
func (p *parser) compact(row0, nb int) int {
	keep := 0
	for r := range nb {
		if !p.badRow[r] {
			keep++
		}
	}
	for _, j := range p.sel {
		c := &p.cols[j]
		w := row0
		for r := range nb {
			if p.badRow[r] {
				continue
			}
			c.move(row0+r, w)
			w++
		}
		c.truncateData(row0 + keep)
	}
	clear(p.badRow[:nb])
	return keep
}

// sortIssues orders issues by their place in the file.
func sortIssues(is []issue) {
	slices.SortStableFunc(is, func(a, b issue) int {
		switch {
		case a.off < b.off:
			return -1
		case a.off > b.off:
			return 1
		}
		return 0
	})
}

// intRun parses the plain integers of column k of the mini-batch into out
// until a field is not one (or is out of [lo, hi]); it returns how many it
// parsed.
func intRun[T int32 | int64](out []T, buf []byte, starts, ends []uint32, k, nsel int, lo, hi int64) int {
	for r := range out {
		i := r*nsel + k
		f := buf[starts[i] : ends[i]&fPos]
		if len(f) == 0 || len(f) > 18 {
			return r
		}
		neg := f[0] == '-'
		if neg {
			f = f[1:]
			if len(f) == 0 {
				return r
			}
		}
		var v int64
		for _, c := range f {
			d := c - '0'
			if d > 9 {
				return r
			}
			v = v*10 + int64(d)
		}
		if neg {
			v = -v
		}
		if v < lo || v > hi {
			return r
		}
		out[r] = T(v)
	}
	return len(out)
}

// stringRun appends the plain strings of column k of the mini-batch (rows
// from row0) until a field is escaped or might be a null marker (not
// longer than nullMax and not quoted); it returns how many it appended.
func (c *column) stringRun(buf []byte, starts, ends []uint32, k, nsel, row0, rows, nullMax int) int {
	offs := c.offs.s[row0+1 : row0+rows+1]
	data := c.data.s
	n := c.dataLen
	defer func() { c.dataLen = n }()
	for r := range offs {
		i := r*nsel + k
		s, e := starts[i], ends[i]
		f := buf[s : e&fPos]
		if e&fEscaped != 0 || (len(f) <= nullMax && e&fQuoted == 0) {
			return r
		}
		if n+len(f)+16 > len(data) {
			c.data.grow(n + len(f) + 15)
			data = c.data.s
		}
		if len(f) <= 16 && int(s)+16 <= len(buf) {
			// Two 8-byte moves instead of a call to memmove; the bytes
			// written past the string are overwritten by the next one.
			binary.LittleEndian.PutUint64(data[n:], binary.LittleEndian.Uint64(buf[s:]))
			binary.LittleEndian.PutUint64(data[n+8:], binary.LittleEndian.Uint64(buf[s+8:]))
		} else {
			copy(data[n:], f)
		}
		n += len(f)
		offs[r] = int32(n)
	}
	return len(offs)
}

// floatRun is intRun for plain decimals (see parseFloatFast).
func floatRun(out []float64, buf []byte, starts, ends []uint32, k, nsel int) int {
	for r := range out {
		i := r*nsel + k
		v, ok := parseFloatFast(buf[starts[i] : ends[i]&fPos])
		if !ok {
			return r
		}
		out[r] = v
	}
	return len(out)
}
