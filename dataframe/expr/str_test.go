package expr

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

func strCols() []column {
	return []column{
		col("s", strs("Hello World", "  padded\t", nil, "", "ÉCOLE café", "a-b-a")),
		col("l", lstrs("Hello World", "  padded\t", nil, "", "ÉCOLE café", "a-b-a")),
		col("d", dicts("Hello World", "a-b-a", nil, "a-b-a", "ÉCOLE café", "Hello World")),
	}
}

func TestStringFunctions(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"upper", strCols, Col("s").Str().Upper(), vals("HELLO WORLD", "  PADDED\t", nil, "", "ÉCOLE CAFÉ", "A-B-A"), "utf8"},
		{"lower large", strCols, Col("l").Str().Lower(), vals("hello world", "  padded\t", nil, "", "école café", "a-b-a"), "large_utf8"},
		{"len", strCols, Col("s").Str().Len(), vals(int64(11), int64(9), nil, int64(0), int64(10), int64(5)), "int64"},
		{"contains", strCols, Col("s").Str().Contains("o"), vals(true, false, nil, false, false, false), "bool"},
		{"contains across rows", func() []column { return []column{col("s", strs("ab", "cd", "abcd"))} },
			Col("s").Str().Contains("bc"), vals(false, false, true), "bool"},
		{"contains empty", strCols, Col("s").Str().Contains(""), vals(true, true, nil, true, true, true), "bool"},
		{"starts_with", strCols, Col("l").Str().StartsWith("He"), vals(true, false, nil, false, false, false), "bool"},
		{"ends_with", strCols, Col("s").Str().EndsWith("é"), vals(false, false, nil, false, true, false), "bool"},
		{"replace", strCols, Col("s").Str().Replace("a", "A"), vals("Hello World", "  pAdded\t", nil, "", "ÉCOLE cAfé", "A-b-A"), "utf8"},
		{"replace absent", strCols, Col("s").Str().Replace("zz", "y"), vals("Hello World", "  padded\t", nil, "", "ÉCOLE café", "a-b-a"), "utf8"},
		{"slice", strCols, Col("s").Str().Slice(1, 3), vals("ell", " pa", nil, "", "COL", "-b-"), "utf8"},
		{"slice negative start", strCols, Col("s").Str().Slice(-4, -1), vals("orld", "ded\t", nil, "", "café", "-b-a"), "utf8"},
		{"slice long", strCols, Col("s").Str().Slice(-100, 2), vals("He", "  ", nil, "", "ÉC", "a-"), "utf8"},
		{"strip", strCols, Col("s").Str().Strip(), vals("Hello World", "padded", nil, "", "ÉCOLE café", "a-b-a"), "utf8"},
		{"dict upper", strCols, Col("d").Str().Upper(), vals("HELLO WORLD", "A-B-A", nil, "A-B-A", "ÉCOLE CAFÉ", "HELLO WORLD"), "dictionary<int32, utf8>"},
		{"dict contains", strCols, Col("d").Str().Contains("-b-"), vals(false, true, nil, true, false, false), "bool"},
		{"dict len", strCols, Col("d").Str().Len(), vals(int64(11), int64(5), nil, int64(5), int64(10), int64(11)), "int64"},
		{"dict eq", strCols, Col("d").Eq("a-b-a"), vals(false, true, nil, true, false, false), "bool"},
		{"dict gt", strCols, Lit("b").Gt(Col("d")), vals(true, true, nil, true, false, true), "bool"},
		{"dict vs string col", strCols, Col("d").Eq(Col("s")), vals(true, false, nil, false, true, false), "bool"},
		{"dict is_in", strCols, Col("d").IsIn("a-b-a", "x"), vals(false, true, nil, true, false, false), "bool"},
		{"dict fill_null", strCols, Col("d").FillNull("?"), vals("Hello World", "a-b-a", "?", "a-b-a", "ÉCOLE café", "Hello World"), "utf8"},
		{"dict when", strCols, When(Col("s").IsNull()).Then("none").Otherwise(Col("d")), vals("Hello World", "a-b-a", "none", "a-b-a", "ÉCOLE café", "Hello World"), "utf8"},
		{"dict cast", strCols, Col("d").Cast(arrow.BinaryTypes.String), vals("Hello World", "a-b-a", nil, "a-b-a", "ÉCOLE café", "Hello World"), "utf8"},
		{"string literal upper", strCols, Lit("abc").Str().Upper(), vals("ABC", "ABC", "ABC", "ABC", "ABC", "ABC"), "utf8"},
	})
}

// TestDictionaryKeepsEncoding checks that a transformation of a dictionary
// column rewrites the dictionary only.
func TestDictionaryKeepsEncoding(t *testing.T) {
	rec := record(strCols()...)
	defer rec.Release()
	ev := NewEvaluator(rec, nil)
	defer ev.Release()
	arr, err := ev.Eval(t.Context(), Col("d").Str().Lower())
	if err != nil {
		t.Fatal(err)
	}
	defer arr.Release()
	d, ok := arr.(*array.Dictionary)
	if !ok {
		t.Fatalf("result is %T, want a dictionary", arr)
	}
	if got := d.Dictionary().Len(); got != 3 {
		t.Errorf("dictionary has %d values, want 3", got)
	}
}

// TestStringFunctionsRandom compares the kernels with the strings package on
// random text (ASCII, accented and other scripts, spaces, invalid bytes).
func TestStringFunctionsRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", "Z", " ", "\t", "é", "É", "ß", "Σ", "ς", "日", "本", "-", "İ", "ǅ", "\xff"}
	gen := func() string {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	for _, ascii := range []bool{true, false} {
		n := 500
		in := make([]any, n)
		for i := range in {
			s := gen()
			if ascii {
				s = strings.Map(func(r rune) rune {
					if r < utf8.RuneSelf {
						return r
					}
					return 'x'
				}, s)
			}
			in[i] = s
			if rng.IntN(10) == 0 {
				in[i] = nil
			}
		}
		for _, builder := range []func(...any) arrow.Array{strs, lstrs, dicts} {
			rec := record(col("s", builder(in...)))
			ref := func(f func(string) any) []any {
				out := make([]any, n)
				for i, v := range in {
					if v != nil {
						out[i] = f(v.(string))
					}
				}
				return out
			}
			runes := func(s string) []rune { return []rune(s) }
			checks := []struct {
				e    Expr
				want []any
			}{
				{Col("s").Str().Upper(), ref(func(s string) any { return mapValid(s, strings.ToUpper) })},
				{Col("s").Str().Lower(), ref(func(s string) any { return mapValid(s, strings.ToLower) })},
				{Col("s").Str().Len(), ref(func(s string) any { return int64(utf8.RuneCountInString(s)) })},
				{Col("s").Str().Contains("a "), ref(func(s string) any { return strings.Contains(s, "a ") })},
				{Col("s").Str().Contains("é"), ref(func(s string) any { return strings.Contains(s, "é") })},
				{Col("s").Str().StartsWith("a"), ref(func(s string) any { return strings.HasPrefix(s, "a") })},
				{Col("s").Str().EndsWith("b"), ref(func(s string) any { return strings.HasSuffix(s, "b") })},
				{Col("s").Str().Replace("a", "<>"), ref(func(s string) any { return strings.ReplaceAll(s, "a", "<>") })},
				{Col("s").Str().Strip(), ref(func(s string) any { return strings.TrimSpace(s) })},
				{Col("s").Str().Slice(2, 3), ref(func(s string) any {
					if !utf8.ValidString(s) {
						return sliceChars([]byte(s), 2, 3, false)
					}
					r := runes(s)
					return string(r[min(2, len(r)):min(5, len(r))])
				})},
				{Col("s").Str().Slice(-3, -1), ref(func(s string) any {
					if !utf8.ValidString(s) {
						return sliceChars([]byte(s), -3, -1, false)
					}
					r := runes(s)
					return string(r[max(len(r)-3, 0):])
				})},
				{Col("s").Lt("b"), ref(func(s string) any { return s < "b" })},
				{Col("s").IsIn("a", "é"), ref(func(s string) any { return s == "a" || s == "é" })},
			}
			for _, c := range checks {
				got, _ := evalOne(t, rec, c.e)
				for i := range got {
					if bs, ok := got[i].([]byte); ok {
						got[i] = string(bs)
					}
				}
				want := c.want
				for i := range want {
					if bs, ok := want[i].([]byte); ok {
						want[i] = string(bs)
					}
				}
				if !sameValues(got, want) {
					for i := range got {
						if got[i] != want[i] {
							t.Errorf("%s on %s (ascii %v) row %d %q: got %#v, want %#v", c.e, rec.Column(0).DataType(), ascii, i, in[i], got[i], want[i])
							break
						}
					}
				}
			}
			rec.Release()
		}
	}
}

// mapValid applies f to valid UTF-8 and leaves invalid bytes as they are,
// as the kernels do (the strings package replaces them).
func mapValid(s string, f func(string) string) string {
	var b strings.Builder
	for len(s) > 0 {
		i := 0
		for i < len(s) {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			i += size
		}
		b.WriteString(f(s[:i]))
		if i < len(s) {
			b.WriteByte(s[i])
			i++
		}
		s = s[i:]
	}
	return b.String()
}

// TestDictionaryVariants covers other index types, null dictionary values
// and sliced dictionary arrays.
func TestDictionaryVariants(t *testing.T) {
	dict := strs("x", nil, "Yz")
	defer dict.Release()
	idx := i8s(0, 1, 2, nil, 2, 0)
	defer idx.Release()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	cols := func() []column {
		da := array.NewDictionaryArray(dt, idx, dict)
		sliced := array.NewSlice(da, 1, 6)
		da.Release()
		return []column{col("k", sliced)}
	}
	runEvalCases(t, []evalCase{
		{"eq", cols, Col("k").Eq("Yz"), vals(nil, true, nil, true, false), "bool"},
		{"upper", cols, Col("k").Str().Upper(), vals(nil, "YZ", nil, "YZ", "X"), "dictionary<int8, utf8>"},
		{"len", cols, Col("k").Str().Len(), vals(nil, int64(2), nil, int64(2), int64(1)), "int64"},
		{"is_in", cols, Col("k").IsIn("x"), vals(nil, false, nil, false, true), "bool"},
		{"fill_null", cols, Col("k").FillNull("-"), vals("-", "Yz", "-", "Yz", "x"), "utf8"},
		{"is_null", cols, Col("k").IsNull(), vals(true, false, true, false, false), "bool"},
	})
	rec := record(cols()...)
	defer rec.Release()
	out, err := Filter(t.Context(), rec, Col("k").Eq("Yz"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if got := goValues(out.Column(0)); !sameValues(got, vals("Yz", "Yz")) {
		t.Errorf("filter = %v", got)
	}
}
