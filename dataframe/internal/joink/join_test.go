package joink

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/dftest"
)

var (
	tInt32 = arrow.PrimitiveTypes.Int32
	tUint8 = arrow.PrimitiveTypes.Uint8
	tU64   = arrow.PrimitiveTypes.Uint64
	tDict  = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	tTSms  = &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}
	tTSns  = &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "Europe/Oslo"}
	tLarge = arrow.BinaryTypes.LargeString
	tF32   = arrow.PrimitiveTypes.Float32
)

func checkedAlloc(t *testing.T) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

func join(t *testing.T, left, right arrow.RecordBatch, spec Spec) arrow.RecordBatch {
	t.Helper()
	mem := checkedAlloc(t)
	out, err := Join(context.Background(), left, right, spec, mem)
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	t.Cleanup(out.Release)
	schema, err := OutputSchema(left.Schema(), right.Schema(), spec)
	if err != nil {
		t.Fatalf("OutputSchema: %v", err)
	}
	if !out.Schema().Equal(schema) {
		t.Fatalf("Join schema %s, OutputSchema %s", out.Schema(), schema)
	}
	return out
}

// The left and right frames of the pandas examples below:
//
//	left = pd.DataFrame({"k": [1, 2, 2, None, 4], "a": ["a0", "a1", "a2", "a3", "a4"]})
//	right = pd.DataFrame({"k": [2, 2, 3, None, 1], "b": [10, 20, 30, 40, 50]})
func lr(t *testing.T) (arrow.RecordBatch, arrow.RecordBatch) {
	left := dftest.Record(t, dftest.Int64s("k", 1, 2, 2, nil, 4), dftest.Strings("a", "a0", "a1", "a2", "a3", "a4"))
	right := dftest.Record(t, dftest.Int64s("k", 2, 2, 3, nil, 1), dftest.Int64s("b", 10, 20, 30, 40, 50))
	return left, right
}

func TestJoinHows(t *testing.T) {
	left, right := lr(t)
	on := []string{"k"}
	tests := []struct {
		how  How
		want []dftest.Column
	}{
		// Null keys never match (pandas would match the two NaN keys).
		{Inner, []dftest.Column{
			dftest.Int64s("k", 1, 2, 2, 2, 2),
			dftest.Strings("a", "a0", "a1", "a1", "a2", "a2"),
			dftest.Int64s("b", 50, 10, 20, 10, 20),
		}},
		{Left, []dftest.Column{
			dftest.Int64s("k", 1, 2, 2, 2, 2, nil, 4),
			dftest.Strings("a", "a0", "a1", "a1", "a2", "a2", "a3", "a4"),
			dftest.Int64s("b", 50, 10, 20, 10, 20, nil, nil),
		}},
		// Right rows in order, each with its left matches in left order.
		{Right, []dftest.Column{
			dftest.Int64s("k", 2, 2, 2, 2, 3, nil, 1),
			dftest.Strings("a", "a1", "a2", "a1", "a2", nil, nil, "a0"),
			dftest.Int64s("b", 10, 10, 20, 20, 30, 40, 50),
		}},
		// As left, then the unmatched right rows; the key coalesced.
		{Outer, []dftest.Column{
			dftest.Int64s("k", 1, 2, 2, 2, 2, nil, 4, 3, nil),
			dftest.Strings("a", "a0", "a1", "a1", "a2", "a2", "a3", "a4", nil, nil),
			dftest.Int64s("b", 50, 10, 20, 10, 20, nil, nil, 30, 40),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.how.String(), func(t *testing.T) {
			got := join(t, left, right, Spec{How: tt.how, LeftOn: on, RightOn: on})
			dftest.AssertEqual(t, got, dftest.Record(t, tt.want...))
		})
	}
}

func TestJoinIndicator(t *testing.T) {
	left, right := lr(t)
	got := join(t, left, right, Spec{How: Outer, LeftOn: []string{"k"}, RightOn: []string{"k"}, Indicator: true})
	want := dftest.Record(t,
		dftest.Int64s("k", 1, 2, 2, 2, 2, nil, 4, 3, nil),
		dftest.Strings("a", "a0", "a1", "a1", "a2", "a2", "a3", "a4", nil, nil),
		dftest.Int64s("b", 50, 10, 20, 10, 20, nil, nil, 30, 40),
		dftest.Strings("_merge", "both", "both", "both", "both", "both", "left_only", "left_only", "right_only", "right_only").As(IndicatorType),
	)
	dftest.AssertEqual(t, got, want)
}

func TestJoinNamesAndSuffixes(t *testing.T) {
	// pandas: left_on="lk", right_on="rk": both key columns stay; "v" is on
	// both sides and gets suffixes; "lk" is also a right column, so the
	// left key becomes lk_x and the right column lk_y.
	left := dftest.Record(t, dftest.Int64s("lk", 1, 2, 3), dftest.Int64s("v", 10, 20, 30))
	right := dftest.Record(t, dftest.Int64s("rk", 3, 1), dftest.Strings("v", "c", "a"), dftest.Strings("lk", "x", "y"))
	got := join(t, left, right, Spec{How: Left, LeftOn: []string{"lk"}, RightOn: []string{"rk"}})
	want := dftest.Record(t,
		dftest.Int64s("lk_x", 1, 2, 3), dftest.Int64s("v_x", 10, 20, 30),
		dftest.Int64s("rk", 1, nil, 3), dftest.Strings("v_y", "a", nil, "c"), dftest.Strings("lk_y", "y", nil, "x"))
	dftest.AssertEqual(t, got, want)

	got = join(t, left, right, Spec{How: Inner, LeftOn: []string{"lk"}, RightOn: []string{"rk"}, Suffixes: [2]string{"", "_r"}})
	want = dftest.Record(t,
		dftest.Int64s("lk", 1, 3), dftest.Int64s("v", 10, 30),
		dftest.Int64s("rk", 1, 3), dftest.Strings("v_r", "a", "c"), dftest.Strings("lk_r", "y", "x"))
	dftest.AssertEqual(t, got, want)

	// Same names at different positions are not merged: both get suffixes.
	l2 := dftest.Record(t, dftest.Int64s("a", 1, 2), dftest.Int64s("b", 5, 6))
	r2 := dftest.Record(t, dftest.Int64s("b", 1, 2), dftest.Int64s("a", 5, 7))
	got = join(t, l2, r2, Spec{How: Inner, LeftOn: []string{"a", "b"}, RightOn: []string{"b", "a"}})
	want = dftest.Record(t, dftest.Int64s("a_x", 1), dftest.Int64s("b_x", 5), dftest.Int64s("b_y", 1), dftest.Int64s("a_y", 5))
	dftest.AssertEqual(t, got, want)
}

func TestJoinMultiKey(t *testing.T) {
	left := dftest.Record(t,
		dftest.Strings("city", "Oslo", "Oslo", "Lima", "Lima", nil),
		dftest.Int64s("year", 2020, 2021, 2020, 2021, 2020),
		dftest.Float64s("x", 1, 2, 3, 4, 5))
	right := dftest.Record(t,
		dftest.Strings("year", "a", "b", "c", "d").As(tDict), // a non-key "year" column
		dftest.Int64s("yr", 2021, 2020, 2020, 2021).As(tInt32),
		dftest.Strings("town", "Oslo", "Lima", "Oslo", "Rome").As(tDict))
	spec := Spec{How: Outer, LeftOn: []string{"city", "year"}, RightOn: []string{"town", "yr"}}
	got := join(t, left, right, spec)
	want := dftest.Record(t,
		dftest.Strings("city", "Oslo", "Oslo", "Lima", "Lima", nil, nil),
		dftest.Int64s("year_x", 2020, 2021, 2020, 2021, 2020, nil),
		dftest.Float64s("x", 1, 2, 3, 4, 5, nil),
		dftest.Strings("year_y", "c", "a", "b", nil, nil, "d").As(tDict),
		dftest.Int64s("yr", 2020, 2021, 2020, nil, nil, 2021).As(tInt32),
		dftest.Strings("town", "Oslo", "Oslo", "Lima", nil, nil, "Rome").As(tDict))
	dftest.AssertEqual(t, got, want)
}

func TestJoinKeyTypes(t *testing.T) {
	tests := []struct {
		name  string
		l, r  dftest.Column
		how   How
		wantK dftest.Column // merged key
		wantA []any         // left payload per output row
		wantB []any         // right payload per output row
	}{
		{"int32-int64", dftest.Int64s("k", 1, 2, 3).As(tInt32), dftest.Int64s("k", 3, 1, 7), Inner,
			dftest.Int64s("k", 1, 3).As(tInt32), []any{0, 2}, []any{1, 0}},
		{"uint8-int64 outer", dftest.Int64s("k", 1, 200).As(tUint8), dftest.Int64s("k", -56, 200), Outer,
			dftest.Int64s("k", 1, 200, -56), []any{0, 1, nil}, []any{nil, 1, 0}},
		// -1 and 2^64-1 have the same bits but are different numbers.
		{"uint64-int64", dftest.Int64s("k", uint64(1<<64-1), uint64(5)).As(tU64), dftest.Int64s("k", -1, 5), Inner,
			dftest.Int64s("k", uint64(5)).As(tU64), []any{1}, []any{1}},
		{"string-dict", dftest.Strings("k", "x", "yy", "a-long-string-over-16-bytes"),
			dftest.Strings("k", "a-long-string-over-16-bytes", "x", "z").As(tDict), Inner,
			dftest.Strings("k", "x", "a-long-string-over-16-bytes"), []any{0, 2}, []any{1, 0}},
		{"string-large outer", dftest.Strings("k", "x", "y"), dftest.Strings("k", "y", "z").As(tLarge), Outer,
			dftest.Strings("k", "x", "y", "z").As(tLarge), []any{0, 1, nil}, []any{nil, 0, 1}},
		{"dict-dict outer", dftest.Strings("k", "x", "y").As(tDict), dftest.Strings("k", "z", "y").As(tDict), Outer,
			dftest.Strings("k", "x", "y", "z"), []any{0, 1, nil}, []any{nil, 1, 0}},
		{"bool", dftest.Bools("k", true, false, nil), dftest.Bools("k", false, false, nil), Left,
			dftest.Bools("k", true, false, false, nil), []any{0, 1, 1, 2}, []any{nil, 0, 1, nil}},
		{"date32", dftest.Dates("k", "2024-01-01", "2024-02-29"), dftest.Dates("k", "2024-02-29"), Inner,
			dftest.Dates("k", "2024-02-29"), []any{1}, []any{0}},
		// 12:00:00.000000001 in ns matches nothing in ms.
		{"timestamp ms-ns", dftest.Timestamps("k", "2024-03-31T01:00:00Z", "2024-03-31T12:00:00Z").As(tTSms),
			dftest.Timestamps("k", "2024-03-31T03:00:00+02:00", "2024-03-31T12:00:00.000000001Z").As(tTSns), Outer,
			dftest.Timestamps("k", "2024-03-31T01:00:00Z", "2024-03-31T12:00:00Z", "2024-03-31T12:00:00.000000001Z").As(&arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}),
			[]any{0, 1, nil}, []any{0, nil, 1}},
		{"float NaN never matches", dftest.Float64s("k", 1.5, nanV, -0.0), dftest.Float64s("k", nanV, 0.0, 1.5).As(tF32), Inner,
			dftest.Float64s("k", 1.5, -0.0), []any{0, 2}, []any{2, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			la := make([]any, 0)
			for i := range lenOf(t, tt.l) {
				la = append(la, i)
			}
			rb := make([]any, 0)
			for i := range lenOf(t, tt.r) {
				rb = append(rb, i)
			}
			left := dftest.Record(t, tt.l, dftest.Int64s("a", la...))
			right := dftest.Record(t, tt.r, dftest.Int64s("b", rb...))
			got := join(t, left, right, Spec{How: tt.how, LeftOn: []string{"k"}, RightOn: []string{"k"}})
			want := dftest.Record(t, tt.wantK, dftest.Int64s("a", tt.wantA...), dftest.Int64s("b", tt.wantB...))
			dftest.AssertEqual(t, got, want)
		})
	}
}

var nanV = math.NaN()

func lenOf(t *testing.T, c dftest.Column) int {
	return int(dftest.Record(t, c).NumRows())
}

func TestJoinEdgeCases(t *testing.T) {
	on := []string{"k"}
	empty := dftest.Record(t, dftest.Int64s("k"), dftest.Strings("a"))
	one := dftest.Record(t, dftest.Int64s("k", 7), dftest.Int64s("b", 70))
	allNull := dftest.Record(t, dftest.Int64s("k", nil, nil), dftest.Int64s("b", 1, 2))
	left := dftest.Record(t, dftest.Int64s("k", 7, nil), dftest.Strings("a", "x", "y"))
	tests := []struct {
		name        string
		left, right arrow.RecordBatch
		how         How
		want        []dftest.Column
	}{
		{"empty left inner", empty, one, Inner, []dftest.Column{dftest.Int64s("k"), dftest.Strings("a"), dftest.Int64s("b")}},
		{"empty left outer", empty, one, Outer, []dftest.Column{dftest.Int64s("k", 7), dftest.Strings("a", nil), dftest.Int64s("b", 70)}},
		{"empty left right", empty, one, Right, []dftest.Column{dftest.Int64s("k", 7), dftest.Strings("a", nil), dftest.Int64s("b", 70)}},
		{"empty right left", left, dftest.Record(t, dftest.Int64s("k"), dftest.Int64s("b")), Left,
			[]dftest.Column{dftest.Int64s("k", 7, nil), dftest.Strings("a", "x", "y"), dftest.Int64s("b", nil, nil)}},
		{"single rows", left, one, Inner, []dftest.Column{dftest.Int64s("k", 7), dftest.Strings("a", "x"), dftest.Int64s("b", 70)}},
		{"all-null right inner", left, allNull, Inner, []dftest.Column{dftest.Int64s("k"), dftest.Strings("a"), dftest.Int64s("b")}},
		{"all-null right outer", left, allNull, Outer, []dftest.Column{
			dftest.Int64s("k", 7, nil, nil, nil), dftest.Strings("a", "x", "y", nil, nil), dftest.Int64s("b", nil, nil, 1, 2)}},
		{"all-null right right", left, allNull, Right, []dftest.Column{
			dftest.Int64s("k", nil, nil), dftest.Strings("a", nil, nil), dftest.Int64s("b", 1, 2)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := join(t, tt.left, tt.right, Spec{How: tt.how, LeftOn: on, RightOn: on})
			dftest.AssertEqual(t, got, dftest.Record(t, tt.want...))
		})
	}
}

func TestJoinErrors(t *testing.T) {
	left := dftest.Record(t, dftest.Int64s("k", 1), dftest.Strings("s", "a"), dftest.Int64s("k_x", 1))
	right := dftest.Record(t, dftest.Strings("k", "1"), dftest.Int64s("n", 1), dftest.Int64s("s", 1))
	tests := []struct {
		name    string
		spec    Spec
		wantErr error
		wantMsg []string
	}{
		{"unknown left", Spec{LeftOn: []string{"nope"}, RightOn: []string{"n"}}, ErrUnknownColumn, []string{`"nope"`, "left", "k, s, k_x"}},
		{"unknown right", Spec{LeftOn: []string{"k"}, RightOn: []string{"zz"}}, ErrUnknownColumn, []string{`"zz"`, "right"}},
		{"string vs int", Spec{LeftOn: []string{"k"}, RightOn: []string{"k"}}, ErrKeyType, []string{`"k" (int64)`, `"k" (utf8)`}},
		{"string vs int 2", Spec{LeftOn: []string{"s"}, RightOn: []string{"n"}}, ErrKeyType, []string{`"s" (utf8)`, `"n" (int64)`}},
		{"no keys", Spec{}, ErrBadSpec, []string{"at least one key"}},
		{"lengths", Spec{LeftOn: []string{"k"}, RightOn: []string{"n", "s"}}, ErrBadSpec, []string{"1 left keys", "2 right keys"}},
		{"how", Spec{How: 9, LeftOn: []string{"k"}, RightOn: []string{"n"}}, ErrBadSpec, []string{"How(9)"}},
		// k_x from the left, and k renamed k_x.
		{"suffix collision", Spec{LeftOn: []string{"s"}, RightOn: []string{"k"}}, ErrBadSpec, []string{`"k_x"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := OutputSchema(left.Schema(), right.Schema(), tt.spec)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			for _, m := range tt.wantMsg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %s", err, m)
				}
			}
			if _, err := Join(context.Background(), left, right, tt.spec, memory.DefaultAllocator); !errors.Is(err, tt.wantErr) {
				t.Errorf("Join err = %v, want %v", err, tt.wantErr)
			}
		})
	}
	// A table built on other keys than the spec's.
	ht, err := Build(context.Background(), right, []string{"n"}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	defer ht.Release()
	_, err = Probe(context.Background(), ht, left, Spec{LeftOn: []string{"k"}, RightOn: []string{"s"}}, memory.DefaultAllocator)
	if !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), "[n]") {
		t.Errorf("probe with other keys: %v", err)
	}
}

func TestParseHow(t *testing.T) {
	for _, h := range []How{Inner, Left, Right, Outer} {
		b, _ := h.MarshalText()
		var g How
		if err := g.UnmarshalText(b); err != nil || g != h {
			t.Errorf("round trip of %v: %v, %v", h, g, err)
		}
	}
	if _, err := ParseHow("cross"); !errors.Is(err, ErrBadSpec) {
		t.Errorf("ParseHow(cross) = %v", err)
	}
}

func TestJoinCancelled(t *testing.T) {
	left, right := lr(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Join(ctx, left, right, Spec{LeftOn: []string{"k"}, RightOn: []string{"k"}}, memory.DefaultAllocator); !errors.Is(err, context.Canceled) {
		t.Errorf("Join with a cancelled context: %v", err)
	}
}
