package graph

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// Key names one task of a graph and the value it produces. Keys are plain
// strings; the convention is "prefix-token" or "prefix-token-index", where the
// prefix says what kind of work the task does (for example "read-csv"), the
// token tells apart collections of the same kind and the index numbers the
// partitions. Progress bars, the task stream and graph pictures group tasks by
// prefix.
type Key string

// NewKey joins a prefix, a token and optional indices into a key:
// NewKey("sum", "3fa2c1d0", 4) is "sum-3fa2c1d0-4".
func NewKey(prefix, token string, index ...int) Key {
	var b strings.Builder
	b.Grow(len(prefix) + len(token) + 2 + 4*len(index))
	b.WriteString(prefix)
	if token != "" {
		b.WriteByte('-')
		b.WriteString(token)
	}
	for _, i := range index {
		b.WriteByte('-')
		b.WriteString(strconv.Itoa(i))
	}
	return Key(b.String())
}

// Prefix returns the part of the key that names the kind of work: the key
// without its trailing index numbers and its token (a run of at least eight
// hexadecimal digits). Prefix of "read-csv-3fa2c1d0-4" is "read-csv"; a key
// without such parts is its own prefix.
func (k Key) Prefix() string {
	s := string(k)
	for {
		i := strings.LastIndexByte(s, '-')
		if i <= 0 {
			return s
		}
		seg := s[i+1:]
		if !isIndex(seg) && !isToken(seg) {
			return s
		}
		s = s[:i]
	}
}

// Group returns the task group of the key: the tasks of one kind of one
// collection. For a key with trailing index numbers (a partition of a
// collection) it is the key without them: Group of "read-csv-3fa2c1d0-4"
// is "read-csv-3fa2c1d0". A key without them (a call of a function) is in
// the group of its prefix, with the other calls of that function: Group
// of "myapp.load-0123456789abcdef" is "myapp.load".
func (k Key) Group() string {
	s := string(k)
	for {
		i := strings.LastIndexByte(s, '-')
		if i <= 0 || !isIndex(s[i+1:]) {
			break
		}
		s = s[:i]
	}
	if len(s) == len(k) {
		return k.Prefix()
	}
	return s
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isToken(s string) bool {
	if len(s) < 8 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Tokenize returns a short deterministic token (16 hex digits) for the given
// parts: the same parts give the same token in every process, so collections
// built the same way get the same keys.
func Tokenize(parts ...[]byte) string {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		l := len(p)
		for i := range n {
			n[i] = byte(l >> (8 * i))
		}
		h.Write(n[:])
		h.Write(p)
	}
	sum := h.Sum(nil)
	return hex.EncodeToString(sum[:8])
}

// TokenizeStrings is Tokenize for strings.
func TokenizeStrings(parts ...string) string {
	bs := make([][]byte, len(parts))
	for i, p := range parts {
		bs[i] = []byte(p)
	}
	return Tokenize(bs...)
}
