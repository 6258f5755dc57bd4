package graph_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/shoal-data/shoal/graph"
)

func TestNewKey(t *testing.T) {
	tests := []struct {
		prefix, token string
		index         []int
		want          graph.Key
	}{
		{"sum", "3fa2c1d0", []int{4}, "sum-3fa2c1d0-4"},
		{"sum", "3fa2c1d0", nil, "sum-3fa2c1d0"},
		{"sum", "", []int{1, 2}, "sum-1-2"},
		{"x", "", nil, "x"},
		{"getitem", "ab", []int{0, -1, 12345}, "getitem-ab-0--1-12345"},
	}
	for _, tt := range tests {
		if got := graph.NewKey(tt.prefix, tt.token, tt.index...); got != tt.want {
			t.Errorf("NewKey(%q, %q, %v) = %q, want %q", tt.prefix, tt.token, tt.index, got, tt.want)
		}
	}
}

func TestKeyPrefix(t *testing.T) {
	tests := []struct {
		key  graph.Key
		want string
	}{
		{"read-csv-3fa2c1d0-4", "read-csv"},
		{"read-csv-3fa2c1d0", "read-csv"},
		{"x", "x"},
		{"", ""},
		{"load-file-3", "load-file"},
		{"a-1-2", "a"},
		{"myapp.load-0123456789abcdef", "myapp.load"},
		{"myapp.load-0123456789abcdef-0-7", "myapp.load"},
		{"add-beef", "add-beef"},                   // a short hex-looking word is a word
		{"add-beef-2", "add-beef"},                 // even before an index
		{"cafe-babe-facade-1", "cafe-babe-facade"}, // all shorter than a token
		{"decode-abc1234", "decode-abc1234"},       // 7 hex digits: not a token, not an index
		{"decode-0123456", "decode"},               // 7 decimal digits: an index
		{"shuffle-ABCDEF01", "shuffle-ABCDEF01"},   // tokens are lower case
		{"x-deadbeef", "x"},
		{"deadbeef", "deadbeef"}, // a key is never emptied
		{"42", "42"},
		{"7-3", "7"},
		{"sum-3fa2c1d0-4-sum", "sum-3fa2c1d0-4-sum"}, // only trailing parts go
		{"split-x-", "split-x-"},
		{"-1", "-1"},
	}
	for _, tt := range tests {
		if got := tt.key.Prefix(); got != tt.want {
			t.Errorf("Key(%q).Prefix() = %q, want %q", tt.key, got, tt.want)
		}
	}
}

func TestKeyGroup(t *testing.T) {
	tests := []struct {
		key  graph.Key
		want string
	}{
		{"read-csv-3fa2c1d0-4", "read-csv-3fa2c1d0"},
		{"read-csv-3fa2c1d0", "read-csv"}, // a call: the group of its function
		{"myapp.load-0123456789abcdef", "myapp.load"},
		{"piece-3fa2c1d0-4-7", "piece-3fa2c1d0"},
		{"load-file-3", "load-file"},
		{"x", "x"},
		{"", ""},
		{"42", "42"},
		{"7-3", "7"},
		{"-1", "-1"},
		{"sum-3fa2c1d0-4-sum", "sum-3fa2c1d0-4-sum"},
	}
	for _, tt := range tests {
		if got := tt.key.Group(); got != tt.want {
			t.Errorf("Key(%q).Group() = %q, want %q", tt.key, got, tt.want)
		}
	}
}

func TestKeyPrefixOfNewKey(t *testing.T) {
	// Whatever the token and indices, a key made by NewKey from a
	// Tokenize token has its prefix back.
	prefixes := []string{"sum", "read-csv", "myapp.load", "add-beef", "dataframe.filter"}
	for i, p := range prefixes {
		tok := graph.TokenizeStrings(p, strings.Repeat("x", i))
		for _, idx := range [][]int{nil, {0}, {3, 14}} {
			k := graph.NewKey(p, tok, idx...)
			if got := k.Prefix(); got != p {
				t.Errorf("Key(%q).Prefix() = %q, want %q", k, got, p)
			}
		}
	}
}

var hex16 = regexp.MustCompile(`^[0-9a-f]{16}$`)

func TestTokenize(t *testing.T) {
	a := graph.Tokenize([]byte("ab"), []byte("c"))
	if !hex16.MatchString(a) {
		t.Fatalf("Tokenize = %q, want 16 lower-case hex digits", a)
	}
	if b := graph.Tokenize([]byte("ab"), []byte("c")); a != b {
		t.Errorf("Tokenize is not deterministic: %q then %q", a, b)
	}
	if s := graph.TokenizeStrings("ab", "c"); s != a {
		t.Errorf("TokenizeStrings = %q, Tokenize = %q", s, a)
	}
	distinct := [][]string{
		{"ab", "c"},
		{"a", "bc"},
		{"abc"},
		{"abc", ""},
		{"", "abc"},
		{},
		{""},
		{"", ""},
		{"c", "ab"},
	}
	seen := map[string][]string{}
	for _, parts := range distinct {
		tok := graph.TokenizeStrings(parts...)
		if prev, ok := seen[tok]; ok {
			t.Errorf("TokenizeStrings(%q) = TokenizeStrings(%q) = %s", parts, prev, tok)
		}
		seen[tok] = parts
	}
}

func TestTokenizeGolden(t *testing.T) {
	// Pinned values: a change here changes the keys of every program, so
	// it must be deliberate.
	tests := []struct {
		parts []string
		want  string
	}{
		{[]string{"sum", "1"}, "7111095a629260d3"},
		{nil, "e3b0c44298fc1c14"},
	}
	for _, tt := range tests {
		if got := graph.TokenizeStrings(tt.parts...); got != tt.want {
			t.Errorf("TokenizeStrings(%q) = %s, want %s", tt.parts, got, tt.want)
		}
	}
}

func TestKeyPrefixProperty(t *testing.T) {
	// A prefix made of words that are neither numbers nor tokens survives
	// any token and indices that NewKey appends.
	word := rapid.StringMatching(`[a-z][a-z0-9._]{0,6}|[g-z][a-z0-9._]{7,12}`)
	rapid.Check(t, func(t *rapid.T) {
		words := rapid.SliceOfN(word, 1, 4).Draw(t, "words")
		prefix := strings.Join(words, "-")
		parts := rapid.SliceOf(rapid.String()).Draw(t, "parts")
		var token string
		if rapid.Bool().Draw(t, "token") {
			token = graph.TokenizeStrings(parts...)
		}
		index := rapid.SliceOfN(rapid.IntRange(0, 1<<40), 0, 3).Draw(t, "index")
		k := graph.NewKey(prefix, token, index...)
		if got := k.Prefix(); got != prefix {
			t.Fatalf("Key(%q).Prefix() = %q, want %q", k, got, prefix)
		}
		if pp := graph.Key(k.Prefix()).Prefix(); pp != prefix {
			t.Fatalf("Prefix is not idempotent: %q", pp)
		}
	})
}

func TestTokenizeProperty(t *testing.T) {
	// Different part lists give different tokens (no ambiguity from
	// concatenation), equal ones the same.
	rapid.Check(t, func(t *rapid.T) {
		a := rapid.SliceOfN(rapid.StringN(0, 4, -1), 0, 4).Draw(t, "a")
		b := rapid.SliceOfN(rapid.StringN(0, 4, -1), 0, 4).Draw(t, "b")
		same := slices.Equal(a, b)
		if (graph.TokenizeStrings(a...) == graph.TokenizeStrings(b...)) != same {
			t.Fatalf("TokenizeStrings(%q) vs (%q): equal tokens %v, equal parts %v", a, b, !same, same)
		}
	})
}
