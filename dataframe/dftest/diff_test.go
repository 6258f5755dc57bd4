package dftest

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

var dictString = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}

// tabler is a value with a Table method, as a materialised DataFrame would be.
type tabler struct{ t arrow.Table }

func (x tabler) Table() arrow.Table { return x.t }

var point1 = 0.1

func TestDiff(t *testing.T) {
	ids := func(vals ...any) Column { return Int64s("id", vals...) }
	many := make([]any, 25)
	manyOther := make([]any, 25)
	for i := range many {
		many[i] = i
		manyOther[i] = i + 1
	}
	tests := []struct {
		name      string
		got, want any
		opts      []Option
		diff      string
	}{
		{
			name: "equal",
			got:  Table(t, ids(1, 2, nil), Strings("s", "a", nil, "c")),
			want: Table(t, ids(1, 2, nil), Strings("s", "a", nil, "c")),
		},
		{
			name: "values differ",
			got:  Table(t, ids(1, 2, 3), Strings("s", "a", "b", "c"), Float64s("x", 1, 2, 3)),
			want: Table(t, ids(1, 2, 3), Strings("s", "a", "B", nil), Float64s("x", 1, 2.5, 3)),
			diff: `2 of 3 rows differ:
  row  column  got  want
  1    s       "b"  "B"
       x       2    2.5
  2    s       "c"  null`,
		},
		{
			name: "one row differs",
			got:  Table(t, ids(1)),
			want: Table(t, ids(2)),
			diff: `1 of 1 row differs:
  row  column  got  want
  0    id      1    2`,
		},
		{
			name: "null equals null, NaN equals NaN",
			got:  Table(t, Float64s("x", math.NaN(), nil, math.Inf(1), math.Inf(-1), 0.0)),
			want: Table(t, Float64s("x", math.NaN(), nil, math.Inf(1), math.Inf(-1), math.Copysign(0, -1))),
		},
		{
			name: "NaN, null and infinity differ from numbers",
			got:  Table(t, Float64s("x", math.NaN(), nil, math.Inf(1), 1)),
			want: Table(t, Float64s("x", 1, 1, math.Inf(-1), math.NaN())),
			diff: `4 of 4 rows differ:
  row  column  got   want
  0    x       NaN   1
  1    x       null  1
  2    x       +Inf  -Inf
  3    x       1     NaN`,
		},
		{
			name: "default tolerance",
			got:  Table(t, Float64s("x", 1.0+1e-12, 1e6+1e-4)),
			want: Table(t, Float64s("x", 1.0, 1e6)),
		},
		{
			name: "beyond default tolerance",
			got:  Table(t, Float64s("x", 1.0+1e-8, point1+0.2)),
			want: Table(t, Float64s("x", 1.0, 0.3)),
			opts: []Option{Tolerance(0, 0)},
			diff: `2 of 2 rows differ:
  row  column  got                  want
  0    x       1.00000001           1
  1    x       0.30000000000000004  0.3`,
		},
		{
			name: "relative tolerance",
			got:  Table(t, Float64s("x", 101.0, 0.0)),
			want: Table(t, Float64s("x", 100.0, 1e-12)),
			opts: []Option{Tolerance(0.01, 0)},
			diff: `1 of 2 rows differs:
  row  column  got  want
  1    x       0    1e-12`,
		},
		{
			name: "absolute tolerance",
			got:  Table(t, Float64s("x", 101.0, 0.0)),
			want: Table(t, Float64s("x", 100.0, 1e-12)),
			opts: []Option{Tolerance(0, 1e-9)},
			diff: `1 of 2 rows differs:
  row  column  got  want
  0    x       101  100`,
		},
		{
			name: "types differ",
			got:  Table(t, ids(1, 2), Strings("s", "a", "b")),
			want: Table(t, Float64s("id", 1, 2), Int64s("s", 1, 2)),
			diff: `column "id": got int64, want float64
column "s": got utf8, want int64 (values not compared)`,
		},
		{
			name: "types ignored, values compared as numbers",
			got:  Table(t, ids(1, 2, 3).As(arrow.PrimitiveTypes.Int32), Float64s("u", 4, 5, 6).As(arrow.PrimitiveTypes.Float32)),
			want: Table(t, Float64s("id", 1, 2, 3.5), Int64s("u", 4, 5, 6).As(arrow.PrimitiveTypes.Uint8)),
			opts: []Option{CheckTypes(false)},
			diff: `1 of 3 rows differs:
  row  column  got  want
  2    id      3    3.5`,
		},
		{
			name: "different families differ even without type checks",
			got:  Table(t, Strings("s", "1")),
			want: Table(t, Int64s("s", 1)),
			opts: []Option{CheckTypes(false)},
			diff: `column "s": got utf8, want int64 (values not compared)`,
		},
		{
			name: "signed against unsigned",
			got:  Table(t, Int64s("n", -1, 5, 7)),
			want: Table(t, Int64s("n", 1, 5, uint64(math.MaxUint64)).As(arrow.PrimitiveTypes.Uint64)),
			opts: []Option{CheckTypes(false)},
			diff: `2 of 3 rows differ:
  row  column  got  want
  0    n       -1   1
  2    n       7    18446744073709551615`,
		},
		{
			name: "float32 compared at its precision",
			got:  Table(t, Float64s("x", 0.1, 1.0/3).As(arrow.PrimitiveTypes.Float32)),
			want: Table(t, Float64s("x", 0.1, 1.0/3)),
			opts: []Option{CheckTypes(false), Tolerance(0, 0)},
		},
		{
			name: "missing and unexpected columns",
			got:  Table(t, ids(1), Strings("extra", "e")),
			want: Table(t, ids(1), Bools("ok", true)),
			diff: `missing column "ok" (bool)
unexpected column "extra" (utf8)`,
		},
		{
			name: "column order",
			got:  Table(t, Strings("b", "x"), ids(1)),
			want: Table(t, ids(1), Strings("b", "x")),
			diff: `column order: got [b id], want [id b]`,
		},
		{
			name: "column order ignored",
			got:  Table(t, Strings("b", "x"), ids(1)),
			want: Table(t, ids(1), Strings("b", "x")),
			opts: []Option{IgnoreColumnOrder()},
		},
		{
			name: "repeated column names match in order",
			got:  Table(t, ids(1), ids(2)),
			want: Table(t, ids(1), ids(3)),
			diff: `1 of 1 row differs:
  row  column  got  want
  0    id      2    3`,
		},
		{
			name: "more rows in got",
			got:  Table(t, ids(1, 2, 3, 4), Strings("s", "a", "b", "c", "d")),
			want: Table(t, ids(1, 5), Strings("s", "a", "b")),
			diff: `rows: got 4, want 2
1 of 2 rows differs (comparing the first 2):
  row  column  got  want
  1    id      2    5
got has 2 more rows than want:
  row  id  s
  2    3   "c"
  3    4   "d"`,
		},
		{
			name: "more rows in want",
			got:  Table(t, ids()),
			want: Table(t, ids(7)),
			diff: `rows: got 0, want 1
want has 1 more row than got:
  row  id
  0    7`,
		},
		{
			name: "many differing rows",
			got:  Table(t, Int64s("n", many...)),
			want: Table(t, Int64s("n", manyOther...)),
			diff: `25 of 25 rows differ; the first 10:
  row  column  got  want
  0    n       0    1
  1    n       1    2
  2    n       2    3
  3    n       3    4
  4    n       4    5
  5    n       5    6
  6    n       6    7
  7    n       7    8
  8    n       8    9
  9    n       9    10`,
		},
		{
			name: "row order ignored",
			got:  Table(t, ids(3, 1, 2, 1), Float64s("x", 0.3, 0.1, nil, math.NaN())),
			want: Table(t, ids(1, 1, 2, 3), Float64s("x", math.NaN(), 0.1, nil, 0.3)),
			opts: []Option{IgnoreRowOrder()},
		},
		{
			name: "row order not ignored",
			got:  Table(t, ids(2, 1)),
			want: Table(t, ids(1, 2)),
			diff: `2 of 2 rows differ:
  row  column  got  want
  0    id      2    1
  1    id      1    2`,
		},
		{
			name: "rows only on one side",
			got:  Table(t, ids(5, 1, 2, 3), Strings("s", "e", "a", "b", "c")),
			want: Table(t, ids(3, 2, 1, 4, 1), Strings("s", "c", "B", "a", "d", "a")),
			opts: []Option{IgnoreRowOrder()},
			diff: `rows: got 4, want 5
2 rows only in got (ignoring row order):
  row  id  s
  0    5   "e"
  2    2   "b"
3 rows only in want (ignoring row order):
  row  id  s
  1    2   "B"
  3    4   "d"
  4    1   "a"`,
		},
		{
			name: "row order ignored with float noise",
			got:  Table(t, Float64s("x", 2.0000000000001, 1.0), Strings("k", "b", "a")),
			want: Table(t, Float64s("x", 1.0, 2.0), Strings("k", "a", "b")),
			opts: []Option{IgnoreRowOrder()},
		},
		{
			name: "chunks do not matter",
			got: func() arrow.Table {
				r1 := Record(t, ids(1, 2), Strings("s", "a", "b"))
				r2 := Record(t, ids(3), Strings("s", "c"))
				tbl := array.NewTableFromRecords(r1.Schema(), []arrow.RecordBatch{r1, r2})
				t.Cleanup(tbl.Release)
				return tbl
			}(),
			want: Record(t, ids(1, 2, 3), Strings("s", "a", "b", "c")),
		},
		{
			name: "record batches",
			got:  []arrow.RecordBatch{Record(t, ids(1)), Record(t, ids(2))},
			want: tabler{Table(t, ids(1, 3))},
			diff: `1 of 2 rows differs:
  row  column  got  want
  1    id      2    3`,
		},
		{
			name: "dictionary compared by value",
			got:  Table(t, Strings("c", "Oslo", "Lima", nil, "Oslo").As(dictString)),
			want: Table(t, Strings("c", "Oslo", "Lima", nil, "Lima")),
			diff: `column "c": got dictionary<values=utf8, indices=int16, ordered=false>, want utf8
1 of 4 rows differs:
  row  column  got     want
  3    c       "Oslo"  "Lima"`,
		},
		{
			name: "dictionary against large string without type checks",
			got:  Table(t, Strings("c", "Oslo", "Lima", nil).As(dictString)),
			want: Table(t, Strings("c", "Oslo", "Lima", nil).As(arrow.BinaryTypes.LargeString)),
			opts: []Option{CheckTypes(false)},
		},
		{
			name: "timestamps in different units are the same instants",
			got:  Table(t, Timestamps("t", "2024-03-01T12:00:00+01:00", nil, "1969-12-31T23:59:59.5Z").As(&arrow.TimestampType{Unit: arrow.Nanosecond})),
			want: Table(t, Timestamps("t", "2024-03-01T11:00:00Z", nil, "1969-12-31T23:59:59.5Z").As(&arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"})),
			opts: []Option{CheckTypes(false)},
		},
		{
			name: "timestamps, dates, durations, times",
			got: Table(t,
				Timestamps("t", "2024-03-01T12:00:00Z", "2024-03-01 12:00:00"),
				Timestamps("naive", "2024-03-01 12:00:00.25", nil).As(&arrow.TimestampType{Unit: arrow.Millisecond}),
				Dates("d", "2024-03-01", "2024-02-29"),
				Durations("dur", "1h30m", "1ms"),
				Strings("tod", "12:00:00", "23:59:59.5").As(arrow.FixedWidthTypes.Time32ms)),
			want: Table(t,
				Timestamps("t", "2024-03-01T12:00:00.000001Z", "2024-03-01 12:00:00"),
				Timestamps("naive", "2024-03-01 12:00:00.5", nil).As(&arrow.TimestampType{Unit: arrow.Millisecond}),
				Dates("d", "2024-03-01", "2024-03-01"),
				Durations("dur", "1h30m", "2ms"),
				Strings("tod", "12:00:01", "23:59:59.5").As(arrow.FixedWidthTypes.Time32ms)),
			diff: `2 of 2 rows differ:
  row  column  got                     want
  0    t       2024-03-01T12:00:00Z    2024-03-01T12:00:00.000001Z
       naive   2024-03-01T12:00:00.25  2024-03-01T12:00:00.5
       tod     12:00:00                12:00:01
  1    d       2024-02-29              2024-03-01
       dur     1ms                     2ms`,
		},
		{
			name: "long strings are cut",
			got:  Table(t, Strings("s", strings.Repeat("a", 100), strings.Repeat("x", 70)+"é", "short")),
			want: Table(t, Strings("s", strings.Repeat("a", 99)+"b", strings.Repeat("x", 70)+"è", strings.Repeat("y", 70))),
			diff: `3 of 3 rows differ:
  row  column  got                         want
  0    s       ..."aaaaaaaaaaaaaaaaaaaaa"  ..."aaaaaaaaaaaaaaaaaaaab"
  1    s       ..."xxxxxxxxxxxxxxxxxxxé"   ..."xxxxxxxxxxxxxxxxxxxè"
  2    s       "short"                     "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"...`,
		},
		{
			name: "nested types compared as text",
			got:  listTable(t, [][]int32{{1, 2}, {3}}),
			want: listTable(t, [][]int32{{1, 2}, {4}}),
			diff: `1 of 2 rows differs:
  row  column  got  want
  1    l       [3]  [4]`,
		},
		{
			name: "unsupported value",
			got:  42,
			want: Table(t, ids(1)),
			diff: `got: is a int; want an arrow.Table, an arrow.RecordBatch, a []arrow.RecordBatch or a value with a Table() arrow.Table method`,
		},
		{
			name: "nil",
			got:  Table(t, ids(1)),
			want: nil,
			diff: `want: is nil`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Diff(tt.got, tt.want, tt.opts...)
			if d != tt.diff {
				t.Errorf("Diff:\n%s\n\nwant:\n%s", d, tt.diff)
			}
		})
	}
}

func listTable(t *testing.T, vals [][]int32) arrow.Table {
	b := array.NewListBuilder(memory.DefaultAllocator, arrow.PrimitiveTypes.Int32)
	defer b.Release()
	vb := b.ValueBuilder().(*array.Int32Builder)
	for _, v := range vals {
		b.Append(true)
		vb.AppendValues(v, nil)
	}
	arr := b.NewArray()
	defer arr.Release()
	s := arrow.NewSchema([]arrow.Field{{Name: "l", Type: arr.DataType(), Nullable: true}}, nil)
	tbl := array.NewTableFromSlice(s, [][]arrow.Array{{arr}})
	t.Cleanup(tbl.Release)
	return tbl
}

// errorRecorder collects what AssertEqual reports.
type errorRecorder struct {
	testing.TB
	errors []string
}

func (r *errorRecorder) Helper() {}
func (r *errorRecorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, format)
	_ = args
}

func TestAssertEqual(t *testing.T) {
	a := Table(t, Int64s("id", 1, 2))
	b := Table(t, Int64s("id", 1, 3))
	r := &errorRecorder{TB: t}
	if !AssertEqual(r, a, a) || len(r.errors) != 0 {
		t.Errorf("equal tables: AssertEqual reported %q", r.errors)
	}
	if AssertEqual(r, a, b) || len(r.errors) != 1 {
		t.Errorf("different tables: AssertEqual reported %q, want one error", r.errors)
	}
}

// TestDiffRandom checks on random tables that a table equals itself, its
// rows shuffled when order is ignored, and its rechunked self; and that
// changing one value is always reported.
func TestDiffRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 50; iter++ {
		n := rng.IntN(40)
		var ints, floats, strs []any
		for i := 0; i < n; i++ {
			ints = append(ints, maybeNull(rng, rng.Int64N(5)))
			floats = append(floats, maybeNull(rng, []float64{0, 1.5, -2, math.NaN(), math.Inf(1)}[rng.IntN(5)]))
			strs = append(strs, maybeNull(rng, []string{"", "a", "b", "ab"}[rng.IntN(4)]))
		}
		perm := rng.Perm(n)
		shuffle := func(v []any) []any {
			out := make([]any, n)
			for i, p := range perm {
				out[i] = v[p]
			}
			return out
		}
		rec := Record(t, Int64s("i", ints...), Float64s("f", floats...), Strings("s", strs...))
		if d := Diff(rec, rec); d != "" {
			t.Fatalf("table differs from itself:\n%s", d)
		}
		split := int64(rng.IntN(n + 1))
		chunks := []arrow.RecordBatch{rec.NewSlice(0, split), rec.NewSlice(split, int64(n))}
		if d := Diff(chunks, rec); d != "" {
			t.Fatalf("rechunked table differs:\n%s", d)
		}
		shuffled := Record(t, Int64s("i", shuffle(ints)...), Float64s("f", shuffle(floats)...), Strings("s", shuffle(strs)...))
		if d := Diff(shuffled, rec, IgnoreRowOrder()); d != "" {
			t.Fatalf("shuffled table differs ignoring row order:\n%s", d)
		}
		if n == 0 {
			continue
		}
		changed := append([]any(nil), ints...)
		k := rng.IntN(n)
		if changed[k] == nil {
			changed[k] = int64(9)
		} else {
			changed[k] = nil
		}
		other := Record(t, Int64s("i", changed...), Float64s("f", floats...), Strings("s", strs...))
		if Diff(other, rec) == "" || Diff(other, rec, IgnoreRowOrder()) == "" {
			t.Fatalf("a changed value went unreported")
		}
	}
}

func maybeNull[T any](rng *rand.Rand, v T) any {
	if rng.IntN(5) == 0 {
		return nil
	}
	return v
}
