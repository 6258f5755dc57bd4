package expr

import (
	"bytes"
	"context"
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// str evaluates the string functions. On a dictionary column they run on the
// dictionary only: transformations keep the indices and give a dictionary,
// predicates and lengths are spread over the rows through the indices.
func (ev *Evaluator) str(ctx context.Context, n *node, a datum, outT arrow.DataType) (datum, error) {
	if a.isNull() {
		return nullDatum(ev.mem, outT), nil
	}
	if da, ok := a.arr.(*array.Dictionary); ok {
		dict := da.Dictionary()
		switch n.op {
		case opStrContains, opStrStartsWith, opStrEndsWith:
			return ev.onDictionary(a, func(dict arrow.Array) []bool { return strPredicate(n, dict) }), nil
		case opStrLen:
			lens := strLen(dict)
			idx := dictIndices(da)
			rows := len(idx)
			buf, out := allocValues[int64](ev.mem, rows)
			for i, k := range idx {
				if uint(k) < uint(len(lens)) {
					out[i] = lens[k]
				} else {
					out[i] = 0
				}
			}
			valid, nulls := ev.dictValidity(da, idx)
			return datum{arr: newArray(outT, rows, valid, buf, nulls), bcast: a.bcast}, nil
		}
		nd, err := ev.transformStrings(n, dict)
		if err != nil {
			return datum{}, err
		}
		defer nd.Release()
		out := array.NewDictionaryArray(da.DataType(), da.Indices(), nd)
		return datum{arr: out, bcast: a.bcast}, nil
	}
	switch n.op {
	case opStrContains, opStrStartsWith, opStrEndsWith:
		return ev.boolsResult(a, strPredicate(n, a.arr)), nil
	case opStrLen:
		lens := strLen(a.arr)
		rows := len(lens)
		buf, out := allocValues[int64](ev.mem, rows)
		copy(out, lens)
		valid, nulls := copyValidity(ev.mem, a.arr)
		return datum{arr: newArray(outT, rows, valid, buf, nulls), bcast: a.bcast}, nil
	}
	out, err := ev.transformStrings(n, a.arr)
	if err != nil {
		return datum{}, err
	}
	return datum{arr: out, bcast: a.bcast}, nil
}

// strArg is the i-th literal argument of a string function.
func strArg(n *node, i int) scalar { return n.args[i].n.lit }

func strPredicate(n *node, a arrow.Array) []bool {
	s := []byte(strArg(n, 1).s)
	out := make([]bool, a.Len())
	switch n.op {
	case opStrContains:
		if a.DataType().ID() == arrow.LARGE_STRING {
			containsAll(newStrView[int64](a), s, out)
		} else {
			containsAll(newStrView[int32](a), s, out)
		}
	case opStrStartsWith:
		eachString(a, func(i int, v []byte) { out[i] = bytes.HasPrefix(v, s) })
	case opStrEndsWith:
		eachString(a, func(i int, v []byte) { out[i] = bytes.HasSuffix(v, s) })
	}
	return out
}

// containsAll finds sub in all the strings at once: it searches the whole
// data buffer and maps each match to its row, so that rows without a match
// cost nothing beyond the search itself.
func containsAll[O int32 | int64](v strView[O], sub []byte, out []bool) {
	n := v.len()
	if len(sub) == 0 {
		for i := range out {
			out[i] = true
		}
		return
	}
	if n == 0 {
		return
	}
	pos, end := int(v.offs[0]), int(v.offs[n])
	row := 0
	for pos < end {
		k := bytes.Index(v.data[pos:end], sub)
		if k < 0 {
			return
		}
		p := pos + k
		for int(v.offs[row+1]) <= p {
			row++
		}
		if p+len(sub) <= int(v.offs[row+1]) {
			out[row] = true
			pos = int(v.offs[row+1])
			row++
			continue
		}
		pos = p + 1
	}
}

func strLen(a arrow.Array) []int64 {
	out := make([]int64, a.Len())
	if a.DataType().ID() == arrow.LARGE_STRING {
		strLenView(newStrView[int64](a), out)
	} else {
		strLenView(newStrView[int32](a), out)
	}
	return out
}

func strLenView[O int32 | int64](v strView[O], out []int64) {
	n := v.len()
	if n == 0 {
		return
	}
	if isASCII(v.data[v.offs[0]:v.offs[n]]) {
		for i := range out {
			out[i] = int64(v.offs[i+1] - v.offs[i])
		}
		return
	}
	for i := range out {
		out[i] = int64(utf8.RuneCount(v.at(i)))
	}
}

func isASCII(b []byte) bool {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if le64(b[i:])&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i < len(b); i++ {
		if b[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// transformStrings computes lower, upper, strip, replace and slice into a new
// array of the type of a, with its validity.
func (ev *Evaluator) transformStrings(n *node, a arrow.Array) (arrow.Array, error) {
	switch a.DataType().ID() {
	case arrow.STRING:
		return transformView(ev.mem, n, a, newStrView[int32](a))
	case arrow.LARGE_STRING:
		return transformView(ev.mem, n, a, newStrView[int64](a))
	}
	return nil, fmt.Errorf("internal error: string function on %s", typeName(a.DataType()))
}

func transformView[O int32 | int64](mem memory.Allocator, n *node, a arrow.Array, v strView[O]) (arrow.Array, error) {
	rows := v.len()
	var base, end int
	if rows > 0 {
		base, end = int(v.offs[0]), int(v.offs[rows])
	}
	src := v.data[base:end]
	ascii := isASCII(src)
	valid, nulls := copyValidity(mem, a)
	offBuf, offs := allocValues[O](mem, rows+1)

	// Case mapping of ASCII text keeps every offset: map the bytes at once.
	if ascii && (n.op == opStrUpper || n.op == opStrLower) {
		dataBuf := memory.NewResizableBuffer(mem)
		dataBuf.Resize(len(src))
		dst := dataBuf.Bytes()
		if n.op == opStrUpper {
			asciiMap(dst, src, &upperTable)
		} else {
			asciiMap(dst, src, &lowerTable)
		}
		for i := range offs {
			offs[i] = v.offs[i] - O(base)
		}
		return newStringArray(a.DataType(), rows, valid, offBuf, dataBuf, nulls), nil
	}
	if n.op == opStrReplace && !bytes.Contains(src, []byte(strArg(n, 1).s)) {
		// Nothing to replace: the array is its own result.
		offBuf.Release()
		if valid != nil {
			valid.Release()
		}
		a.Retain()
		return a, nil
	}
	out := make([]byte, 0, len(src))
	var old, repl []byte
	var start, length int64
	switch n.op {
	case opStrReplace:
		old, repl = []byte(strArg(n, 1).s), []byte(strArg(n, 2).s)
	case opStrSlice:
		start, length = strArg(n, 1).i, strArg(n, 2).i
	}
	for i := 0; i < rows; i++ {
		offs[i] = O(len(out))
		s := v.at(i)
		switch n.op {
		case opStrUpper:
			out = appendMapped(out, s, unicode.ToUpper)
		case opStrLower:
			out = appendMapped(out, s, unicode.ToLower)
		case opStrStrip:
			out = append(out, bytes.TrimSpace(s)...)
		case opStrReplace:
			out = appendReplaced(out, s, old, repl)
		case opStrSlice:
			out = append(out, sliceChars(s, start, length, ascii)...)
		}
	}
	offs[rows] = O(len(out))
	dataBuf := memory.NewResizableBuffer(mem)
	dataBuf.Resize(len(out))
	copy(dataBuf.Bytes(), out)
	return newStringArray(a.DataType(), rows, valid, offBuf, dataBuf, nulls), nil
}

var upperTable, lowerTable [256]byte

func init() {
	for i := range 256 {
		upperTable[i], lowerTable[i] = byte(i), byte(i)
		if 'a' <= i && i <= 'z' {
			upperTable[i] = byte(i - 'a' + 'A')
		}
		if 'A' <= i && i <= 'Z' {
			lowerTable[i] = byte(i - 'A' + 'a')
		}
	}
}

func asciiMap(dst, src []byte, table *[256]byte) {
	dst = dst[:len(src)]
	for i, c := range src {
		dst[i] = table[c]
	}
}

// appendMapped appends s with every rune mapped by f; bytes that are not
// valid UTF-8 are copied unchanged.
func appendMapped(out, s []byte, f func(rune) rune) []byte {
	for len(s) > 0 {
		c := s[0]
		if c < utf8.RuneSelf {
			if f == nil {
				out = append(out, c)
			} else {
				out = utf8.AppendRune(out, f(rune(c)))
			}
			s = s[1:]
			continue
		}
		r, size := utf8.DecodeRune(s)
		if r == utf8.RuneError && size == 1 {
			out = append(out, c)
		} else {
			out = utf8.AppendRune(out, f(r))
		}
		s = s[size:]
	}
	return out
}

func appendReplaced(out, s, old, repl []byte) []byte {
	if len(old) == 0 {
		return append(out, s...) // replacing "" changes nothing
	}
	for {
		k := bytes.Index(s, old)
		if k < 0 {
			return append(out, s...)
		}
		out = append(out, s[:k]...)
		out = append(out, repl...)
		s = s[k+len(old):]
	}
}

// sliceChars takes length characters from character start; negative start
// counts from the end, negative length takes the rest.
func sliceChars(s []byte, start, length int64, ascii bool) []byte {
	var count int64
	if ascii {
		count = int64(len(s))
	} else {
		count = int64(utf8.RuneCount(s))
	}
	if start < 0 {
		start = max(count+start, 0)
	}
	if start >= count {
		return nil
	}
	stop := count
	if length >= 0 && start+length < count {
		stop = start + length
	}
	if ascii {
		return s[start:stop]
	}
	var i, bs, be int64 // char index, byte start, byte end
	be = int64(len(s))
	for pos := 0; pos < len(s); {
		if i == start {
			bs = int64(pos)
		}
		if i == stop {
			be = int64(pos)
			break
		}
		_, size := utf8.DecodeRune(s[pos:])
		pos += size
		i++
	}
	return s[bs:be]
}
