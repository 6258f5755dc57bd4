package jsonl

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// valueKind is the kind of a JSON value.
type valueKind uint8

const (
	vNull valueKind = iota
	vFalse
	vTrue
	vNumber
	vString
	vObject
	vArray
)

func (k valueKind) String() string {
	return [...]string{"null", "false", "true", "a number", "a string", "an object", "an array"}[k]
}

// token is a value of a line: its kind and where its text is.
type token struct {
	kind       valueKind
	start, end int  // the value's text, quotes included
	escaped    bool // a string with escapes
	isInt      bool // a number without fraction or exponent
	special    bool // NaN, Infinity or -Infinity, as Python writes them
}

// syntaxError is a malformed line: what is wrong and at which byte.
type syntaxError struct {
	pos int
	msg string
}

func (e *syntaxError) Error() string { return e.msg }

func errAt(pos int, format string, args ...any) error {
	return &syntaxError{pos: pos, msg: fmt.Sprintf(format, args...)}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// blank reports whether a line holds only white space.
func blank(b []byte) bool { return skipSpace(b, 0) == len(b) }

// maxNesting bounds how deep objects and arrays may nest.
const maxNesting = 1000

// scanObject reads a line holding one JSON object and calls fn for each
// key (its text between the quotes, still escaped when keyEscaped) and
// value.
func scanObject(b []byte, fn func(key []byte, keyEscaped bool, keyPos int, v token) error) error {
	i := skipSpace(b, 0)
	if i == len(b) {
		return errAt(i, "empty line")
	}
	if b[i] != '{' {
		return errAt(i, "a line must hold a JSON object, starting with '{', not %s", describe(b, i))
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return trailing(b, i+1)
	}
	for {
		if i >= len(b) {
			return errAt(i, "the object is not closed; is the line cut short?")
		}
		if b[i] != '"' {
			return errAt(i, "expected a key in double quotes, found %s", describe(b, i))
		}
		kend, kesc, _, err := scanString(b, i)
		if err != nil {
			return err
		}
		keyPos := i
		key := b[i+1 : kend-1]
		i = skipSpace(b, kend)
		if i >= len(b) || b[i] != ':' {
			return errAt(i, "expected ':' after key %s, found %s", b[keyPos:kend], describe(b, i))
		}
		i = skipSpace(b, i+1)
		v, err := scanValue(b, i)
		if err != nil {
			return err
		}
		if err := fn(key, kesc, keyPos, v); err != nil {
			return err
		}
		i = skipSpace(b, v.end)
		if i >= len(b) {
			return errAt(i, "the object is not closed; is the line cut short?")
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return trailing(b, i+1)
		default:
			return errAt(i, "expected ',' or '}' after a value, found %s", describe(b, i))
		}
	}
}

func trailing(b []byte, i int) error {
	if i = skipSpace(b, i); i < len(b) {
		return errAt(i, "unexpected %s after the object; one object a line", describe(b, i))
	}
	return nil
}

// describe names what is at b[i] for an error message.
func describe(b []byte, i int) string {
	if i >= len(b) {
		return "the end of the line"
	}
	r, _ := utf8.DecodeRune(b[i:])
	return fmt.Sprintf("%q", r)
}

// scanValue reads the value starting at b[i].
func scanValue(b []byte, i int) (token, error) { return scanValueAt(b, i, 1) }

func scanValueAt(b []byte, i, depth int) (token, error) {
	if i >= len(b) {
		return token{}, errAt(i, "expected a value, found the end of the line")
	}
	switch c := b[i]; {
	case c == '"':
		end, esc, _, err := scanString(b, i)
		return token{kind: vString, start: i, end: end, escaped: esc}, err
	case c == '-' || c >= '0' && c <= '9':
		return scanNumber(b, i)
	case c == 't':
		return literal(b, i, "true", vTrue)
	case c == 'f':
		return literal(b, i, "false", vFalse)
	case c == 'n':
		return literal(b, i, "null", vNull)
	case c == 'N':
		t, err := literal(b, i, "NaN", vNumber)
		t.special = true
		return t, err
	case c == 'I':
		t, err := literal(b, i, "Infinity", vNumber)
		t.special = true
		return t, err
	case c == '{' || c == '[':
		return scanNested(b, i, depth)
	}
	return token{}, errAt(i, "expected a value, found %s", describe(b, i))
}

func literal(b []byte, i int, word string, kind valueKind) (token, error) {
	if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
		return token{}, errAt(i, "expected a value, found %s", describe(b, i))
	}
	return token{kind: kind, start: i, end: i + len(word)}, nil
}

// scanNumber reads a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func scanNumber(b []byte, i int) (token, error) {
	t := token{kind: vNumber, start: i, isInt: true}
	if b[i] == '-' {
		i++
		if i < len(b) && b[i] == 'I' {
			lt, err := literal(b, i, "Infinity", vNumber)
			return token{kind: vNumber, start: t.start, end: lt.end, special: true}, err
		}
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return t, errAt(i, "malformed number")
	}
	if i < len(b) && b[i] == '.' {
		t.isInt = false
		i++
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return t, errAt(i, "malformed number: no digits after '.'")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		t.isInt = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return t, errAt(i, "malformed number: no digits in the exponent")
		}
	}
	t.end = i
	return t, nil
}

// scanString reads the string whose opening quote is at b[i] and returns
// the index after its closing quote.
func scanString(b []byte, i int) (end int, escaped, high bool, err error) {
	start := i
	i++
	for i < len(b) {
		c := b[i]
		if plainByte[c] {
			i++
			continue
		}
		switch {
		case c == '"':
			if high && !utf8.Valid(b[start+1:i]) {
				return 0, false, false, errAt(start, "the string is not valid UTF-8")
			}
			return i + 1, escaped, high, nil
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				return 0, false, false, errAt(i, "the string is not closed")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex4(b[i+2:i+6]) {
					return 0, false, false, errAt(i, "malformed \\u escape")
				}
				i += 6
			default:
				return 0, false, false, errAt(i, "unknown escape \\%c", b[i+1])
			}
		case c < 0x20:
			return 0, false, false, errAt(i, "control character %q in a string; escape it", c)
		default:
			if c >= 0x80 {
				high = true
			}
			i++
		}
	}
	return 0, false, false, errAt(start, "the string is not closed")
}

// plainByte marks the bytes a string holds without further thought:
// everything but quotes, backslashes, control characters and non-ASCII.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		default:
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

// unescape appends the text of a checked string (between its quotes) to
// dst, resolving escapes.
func unescape(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			j := i
			for j < len(s) && s[j] != '\\' {
				j++
			}
			dst = append(dst, s[i:j]...)
			i = j
			continue
		}
		switch s[i+1] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := hex4(s[i+2 : i+6])
			i += 6
			if utf16.IsSurrogate(r) {
				if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					if r2 := utf16.DecodeRune(r, hex4(s[i+2:i+6])); r2 != utf8.RuneError {
						dst = utf8.AppendRune(dst, r2)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default: // " \ /
			dst = append(dst, s[i+1])
		}
		i += 2
	}
	return dst
}

// scanNested reads an object or array starting at b[i], checking it.
func scanNested(b []byte, i, depth int) (token, error) {
	t := token{kind: vObject, start: i}
	closing := byte('}')
	if b[i] == '[' {
		t.kind, closing = vArray, ']'
	}
	if depth > maxNesting {
		return t, errAt(i, "nested more than %d deep", maxNesting)
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == closing {
		t.end = i + 1
		return t, nil
	}
	for {
		if t.kind == vObject {
			if i >= len(b) || b[i] != '"' {
				return t, errAt(i, "expected a key in double quotes, found %s", describe(b, i))
			}
			end, _, _, err := scanString(b, i)
			if err != nil {
				return t, err
			}
			i = skipSpace(b, end)
			if i >= len(b) || b[i] != ':' {
				return t, errAt(i, "expected ':' after a key, found %s", describe(b, i))
			}
			i = skipSpace(b, i+1)
		}
		v, err := scanValueAt(b, i, depth+1)
		if err != nil {
			return t, err
		}
		i = skipSpace(b, v.end)
		if i >= len(b) {
			return t, errAt(i, "%s is not closed; is the line cut short?", t.kind)
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case closing:
			t.end = i + 1
			return t, nil
		default:
			return t, errAt(i, "expected ',' or '%c', found %s", closing, describe(b, i))
		}
	}
}
