package agg

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func checkedMem(t *testing.T) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

func TestResultSchema(t *testing.T) {
	input := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: tString, Nullable: true},
		{Name: "d", Type: tDict, Nullable: true},
		{Name: "i8", Type: tInt8},
		{Name: "u16", Type: tUint16},
		{Name: "f32", Type: tFloat32},
		{Name: "b", Type: tBool},
		{Name: "ts", Type: tTS},
		{Name: "l", Type: arrow.ListOf(tInt64)},
	}, nil)
	tests := []struct {
		name  string
		keys  []string
		specs []Spec
		want  string // fields as name:type, or the error text
		err   error
	}{
		{"types", []string{"s", "d"}, []Spec{
			{Func: Sum, Column: "i8", Name: "a"}, {Func: Sum, Column: "u16", Name: "b2"}, {Func: Sum, Column: "f32", Name: "c"},
			{Func: Sum, Column: "b", Name: "d2"}, {Func: Mean, Column: "i8", Name: "e"}, {Func: Std, Column: "u16", Name: "f"},
			{Func: Var, Column: "b", Name: "g"}, {Func: Min, Column: "ts", Name: "h"}, {Func: Max, Column: "d", Name: "i"},
			{Func: First, Column: "b", Name: "j"}, {Func: Last, Column: "f32", Name: "k"}, {Func: Count, Column: "l", Name: "m"},
			{Func: Size}, {Func: NUnique, Column: "s", Name: "n"}, {Func: Any, Column: "b", Name: "o"}, {Func: All, Column: "b", Name: "p"},
		}, "s:utf8 d:dictionary<values=utf8, indices=int32, ordered=false> a:int64 b2:uint64 c:float64 d2:int64 e:float64 f:float64 g:float64 h:timestamp[us, tz=UTC] i:utf8 j:bool k:float32 m:int64 size:int64 n:int64 o:bool p:bool", nil},
		{"default names", nil, []Spec{{Func: Sum, Column: "i8"}, {Func: Size}}, "i8:int64 size:int64", nil},
		{"whole column", nil, nil, "", nil},
		{"unknown key", []string{"zz"}, nil, `agg: key "zz": no column "zz" to group by (columns: s, d, i8, u16, f32, b, ts, l)`, ErrUnknownColumn},
		{"list key", []string{"l"}, nil, `agg: key "l": cannot group by column "l" of type list<item: int64, nullable>`, ErrUnsupportedType},
		{"duplicate key", []string{"s", "s"}, nil, `key "s" is listed twice`, ErrBadSpec},
		{"unknown column", nil, []Spec{{Func: Sum, Column: "v", Name: "x"}}, `agg: sum(v) as x: no column "v" (columns: s, d, i8`, ErrUnknownColumn},
		{"sum of string", nil, []Spec{{Func: Sum, Column: "s", Name: "x"}}, `agg: sum(s) as x: cannot take the sum of column "s" of type utf8 (want a number or boolean)`, ErrUnsupportedType},
		{"mean of timestamp", nil, []Spec{{Func: Mean, Column: "ts", Name: "x"}}, `cannot take the mean of column "ts" of type timestamp[us, tz=UTC]`, ErrUnsupportedType},
		{"any of int", nil, []Spec{{Func: Any, Column: "i8", Name: "x"}}, `cannot take the any of column "i8" of type int8 (want a boolean)`, ErrUnsupportedType},
		{"min of list", nil, []Spec{{Func: Min, Column: "l", Name: "x"}}, `cannot take the min of column "l"`, ErrUnsupportedType},
		{"unknown func", nil, []Spec{{Func: "median", Column: "i8", Name: "x"}}, `unknown function "median" (known: sum, mean`, ErrUnknownFunc},
		{"duplicate name", []string{"s"}, []Spec{{Func: Sum, Column: "i8", Name: "s"}}, `output name "s" is already used by a key`, ErrBadSpec},
		{"duplicate output", nil, []Spec{{Func: Sum, Column: "i8"}, {Func: Max, Column: "i8"}}, `max(i8) as i8: output name "i8" is already used by sum(i8) as i8`, ErrBadSpec},
		{"no column", nil, []Spec{{Func: Sum, Name: "x"}}, `sum needs an input column`, ErrBadSpec},
		{"negative ddof", nil, []Spec{{Func: Std, Column: "i8", DDOF: -1}}, `negative ddof -1`, ErrBadSpec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResultSchema(input, tt.keys, tt.specs)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("error %v, want %v", err, tt.err)
				}
				var se *SpecError
				if !errors.As(err, &se) {
					t.Fatalf("error %T is not a *SpecError", err)
				}
				if !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("error %q\ndoes not contain %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var fs []string
			for _, f := range got.Fields() {
				fs = append(fs, f.Name+":"+f.Type.String())
			}
			if s := strings.Join(fs, " "); s != tt.want {
				t.Fatalf("schema\n%s\nwant\n%s", s, tt.want)
			}
		})
	}
}

// TestExplicit checks hand-computed results.
func TestExplicit(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name  string
		cols  []column
		keys  []string
		specs []Spec
		opts  Options
		want  [][]any
	}{
		{
			name: "string key, nulls in keys and values",
			cols: []column{
				{"k", tString, []any{"b", "a", nil, "b", "a", nil, "c"}},
				{"v", tInt64, []any{int64(1), int64(2), int64(3), nil, int64(5), int64(6), nil}},
			},
			keys: []string{"k"},
			specs: []Spec{{Func: Sum, Column: "v", Name: "sum"}, {Func: Count, Column: "v", Name: "count"}, {Func: Size},
				{Func: Min, Column: "v", Name: "min"}, {Func: Mean, Column: "v", Name: "mean"}},
			want: [][]any{
				{"b", int64(1), int64(1), int64(2), int64(1), 1.0},
				{"a", int64(7), int64(2), int64(2), int64(2), 3.5},
				{nil, int64(9), int64(2), int64(2), int64(3), 4.5},
				{"c", int64(0), int64(0), int64(1), nil, nil},
			},
		},
		{
			name: "drop null keys, sorted",
			cols: []column{
				{"k", tString, []any{"b", "a", nil, "b", "a", nil, "c"}},
				{"v", tInt64, []any{int64(1), int64(2), int64(3), nil, int64(5), int64(6), nil}},
			},
			keys:  []string{"k"},
			specs: []Spec{{Func: Sum, Column: "v", Name: "sum"}},
			opts:  Options{DropNullKeys: true, Sort: true},
			want:  [][]any{{"a", int64(7)}, {"b", int64(1)}, {"c", int64(0)}},
		},
		{
			name: "sorted with null keys last",
			cols: []column{
				{"k", tInt64, []any{int64(3), nil, int64(-1), int64(3)}},
				{"v", tFloat64, []any{1.5, 2.0, nil, 3.0}},
			},
			keys:  []string{"k"},
			specs: []Spec{{Func: Sum, Column: "v", Name: "sum"}, {Func: Var, Column: "v", Name: "var", DDOF: 1}, {Func: Std, Column: "v", Name: "std0"}},
			opts:  Options{Sort: true},
			want:  [][]any{{int64(-1), 0.0, nil, nil}, {int64(3), 4.5, 1.125, 0.75}, {nil, 2.0, nil, 0.0}},
		},
		{
			name: "whole column",
			cols: []column{
				{"v", tInt32, []any{int64(4), nil, int64(-2), int64(7)}},
				{"s", tString, []any{nil, "x", "a", "m"}},
				{"b", tBool, []any{true, nil, false, true}},
			},
			specs: []Spec{{Func: Sum, Column: "v"}, {Func: Max, Column: "s"}, {Func: Min, Column: "s", Name: "smin"},
				{Func: First, Column: "s", Name: "first"}, {Func: Last, Column: "v", Name: "last"}, {Func: NUnique, Column: "b", Name: "nb"},
				{Func: Any, Column: "b", Name: "any"}, {Func: All, Column: "b", Name: "all"}, {Func: Size}, {Func: Mean, Column: "b", Name: "mb"}},
			want: [][]any{{int64(9), "x", "a", "x", int64(7), int64(2), true, false, int64(4), 2.0 / 3}},
		},
		{
			name:  "whole column, empty input",
			cols:  []column{{"v", tFloat64, nil}, {"b", tBool, nil}},
			specs: []Spec{{Func: Sum, Column: "v"}, {Func: Min, Column: "v", Name: "min"}, {Func: Mean, Column: "v", Name: "mean"}, {Func: Size}, {Func: Count, Column: "v", Name: "n"}, {Func: Any, Column: "b", Name: "any"}, {Func: All, Column: "b", Name: "all"}, {Func: NUnique, Column: "v", Name: "nu"}},
			want:  [][]any{{0.0, nil, nil, int64(0), int64(0), false, true, int64(0)}},
		},
		{
			name:  "grouped, empty input",
			cols:  []column{{"k", tString, nil}, {"v", tFloat64, nil}},
			keys:  []string{"k"},
			specs: []Spec{{Func: Sum, Column: "v"}},
			want:  nil,
		},
		{
			name:  "one row",
			cols:  []column{{"k", tDict, []any{"x"}}, {"v", tFloat64, []any{2.5}}},
			keys:  []string{"k"},
			specs: []Spec{{Func: Sum, Column: "v"}, {Func: Var, Column: "v", Name: "var", DDOF: 1}, {Func: Var, Column: "v", Name: "var0"}, {Func: First, Column: "v", Name: "first"}},
			want:  [][]any{{"x", 2.5, nil, 0.0, 2.5}},
		},
		{
			name: "all-null group",
			cols: []column{
				{"k", tInt16, []any{int64(1), int64(2), int64(1)}},
				{"v", tFloat32, []any{nil, 1.0, nil}},
				{"s", tString, []any{nil, "q", nil}},
			},
			keys: []string{"k"},
			specs: []Spec{{Func: Sum, Column: "v", Name: "sum"}, {Func: Min, Column: "v", Name: "min"}, {Func: Max, Column: "s", Name: "max"},
				{Func: Mean, Column: "v", Name: "mean"}, {Func: Std, Column: "v", Name: "std", DDOF: 1}, {Func: First, Column: "s", Name: "first"},
				{Func: Last, Column: "v", Name: "last"}, {Func: NUnique, Column: "s", Name: "nu"}, {Func: Count, Column: "s", Name: "n"}},
			want: [][]any{
				{int64(1), 0.0, nil, nil, nil, nil, nil, nil, int64(0), int64(0)},
				{int64(2), 1.0, 1.0, "q", 1.0, nil, "q", 1.0, int64(1), int64(1)},
			},
		},
		{
			name: "NaN: a value for sum, losing in min and max",
			cols: []column{
				{"k", tBool, []any{true, true, false, false, nil}},
				{"v", tFloat64, []any{nan, 2.0, nan, nan, -0.0}},
			},
			keys:  []string{"k"},
			specs: []Spec{{Func: Sum, Column: "v"}, {Func: Min, Column: "v", Name: "min"}, {Func: Max, Column: "v", Name: "max"}, {Func: NUnique, Column: "v", Name: "nu"}},
			want: [][]any{
				{true, nan, 2.0, 2.0, int64(2)},
				{false, nan, nan, nan, int64(1)},
				{nil, 0.0, 0.0, 0.0, int64(1)},
			},
		},
		{
			name: "two keys",
			cols: []column{
				{"a", tString, []any{"x", "x", "y", "x", nil, nil}},
				{"b", tInt64, []any{int64(1), int64(2), int64(1), int64(1), nil, int64(1)}},
				{"v", tUint8, []any{uint64(200), uint64(100), uint64(7), uint64(250), uint64(1), uint64(2)}},
			},
			keys:  []string{"a", "b"},
			specs: []Spec{{Func: Sum, Column: "v"}},
			want: [][]any{
				{"x", int64(1), uint64(450)}, {"x", int64(2), uint64(100)}, {"y", int64(1), uint64(7)},
				{nil, nil, uint64(1)}, {nil, int64(1), uint64(2)},
			},
		},
		{
			name: "two keys, drop nulls, sorted",
			cols: []column{
				{"a", tString, []any{"x", "x", "y", "x", nil, nil, "a"}},
				{"b", tInt64, []any{int64(2), int64(1), int64(1), int64(1), nil, int64(1), nil}},
				{"v", tInt64, []any{int64(1), int64(2), int64(3), int64(4), int64(5), int64(6), int64(7)}},
			},
			keys:  []string{"a", "b"},
			specs: []Spec{{Func: Sum, Column: "v"}},
			opts:  Options{DropNullKeys: true, Sort: true},
			want:  [][]any{{"x", int64(1), int64(6)}, {"x", int64(2), int64(1)}, {"y", int64(1), int64(3)}},
		},
		{
			name: "three keys",
			cols: []column{
				{"a", tBool, []any{true, true, true, false}},
				{"b", tDate32, []any{int64(1), int64(1), int64(2), int64(1)}},
				{"c", tLarge, []any{"u", "u", "u", "u"}},
				{"v", tInt64, []any{int64(1), int64(2), int64(3), int64(4)}},
			},
			keys:  []string{"a", "b", "c"},
			specs: []Spec{{Func: Sum, Column: "v"}, {Func: First, Column: "b", Name: "fb"}},
			opts:  Options{Sort: true},
			want:  [][]any{{false, int64(1), "u", int64(4), int64(1)}, {true, int64(1), "u", int64(3), int64(1)}, {true, int64(2), "u", int64(3), int64(2)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := checkedMem(t)
			rec := buildRecord(mem, tt.cols)
			defer rec.Release()
			got := aggregate(t, mem, []arrow.RecordBatch{rec}, tt.keys, tt.specs, tt.opts)
			defer got.Release()
			want, err := ResultSchema(rec.Schema(), tt.keys, tt.specs)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Schema().Equal(want) {
				t.Errorf("schema %s, want %s", got.Schema(), want)
			}
			if d := diffRows(rowsOf(got), tt.want); d != "" {
				t.Errorf("result differs:\n%s", d)
			}
			if d := diffRows(rowsOf(got), reference(tt.cols, tt.keys, tt.specs, tt.opts)); d != "" {
				t.Errorf("result differs from the reference:\n%s", d)
			}
		})
	}
}

// randomColumn makes n seeded random values of type typ with about
// nullRate of them null, drawn from card distinct values.
func randomColumn(r *rand.Rand, name string, typ arrow.DataType, n, card int, nullRate float64) column {
	vals := make([]any, n)
	for i := range vals {
		if r.Float64() < nullRate {
			continue
		}
		k := r.IntN(card)
		switch classify(typ) {
		case classInt:
			vals[i] = int64(k - card/3)
			if typ.ID() == arrow.INT8 {
				vals[i] = int64(int8(k - card/3))
			}
		case classUint:
			vals[i] = uint64(k)
			if typ.ID() == arrow.UINT8 {
				vals[i] = uint64(uint8(k))
			}
		case classFloat:
			vals[i] = float64(k)/4 - 3
			if r.IntN(50) == 0 {
				vals[i] = math.NaN()
			}
		case classBool:
			vals[i] = k%2 == 0
		default:
			vals[i] = fmt.Sprintf("s%03d", k)
		}
	}
	return column{name, typ, vals}
}

// applies reports whether f accepts typ.
func applies(f Func, typ arrow.DataType) bool {
	_, _, err := outputType(&Spec{Func: f, Column: "v"}, typ)
	return err == nil
}

// splitRecord cuts rec into slices at the given row positions.
func splitRecord(rec arrow.RecordBatch, cuts []int) []arrow.RecordBatch {
	var out []arrow.RecordBatch
	lo := 0
	for _, c := range append(cuts, int(rec.NumRows())) {
		out = append(out, rec.NewSlice(int64(lo), int64(c)))
		lo = c
	}
	return out
}

// TestMatrix runs every function over every value type for every key type,
// with nulls, split into partitions, against the reference.
func TestMatrix(t *testing.T) {
	keyTypes := []arrow.DataType{tString, tLarge, tBinary, tDict, tDict8, tInt8, tInt16, tInt32, tInt64, tUint8, tUint32, tUint64, tFloat32, tFloat64, tBool, tDate32, tTS}
	valTypes := []arrow.DataType{tInt8, tInt16, tInt32, tInt64, tUint8, tUint16, tUint32, tUint64, tFloat32, tFloat64, tBool, tString, tLarge, tBinary, tDict, tDate32, tTS}
	r := rand.New(rand.NewPCG(1, 2))
	for i, kt := range keyTypes {
		for j, vt := range valTypes {
			t.Run(fmt.Sprintf("%s/%s", kt, vt), func(t *testing.T) {
				if (i+j)%2 == 1 {
					defer tinyTuning.set()()
				}
				mem := checkedMem(t)
				n := 300
				cols := []column{randomColumn(r, "k", kt, n, 13, 0.1), randomColumn(r, "v", vt, n, 40, 0.2)}
				var specs []Spec
				for _, f := range Funcs {
					if applies(f, vt) {
						specs = append(specs, Spec{Func: f, Column: "v", Name: string(f), DDOF: 1})
					}
				}
				rec := buildRecord(mem, cols)
				defer rec.Release()
				parts := splitRecord(rec, []int{0, 100, 101, 250})
				defer releaseRecs(parts)
				for _, opts := range []Options{{}, {DropNullKeys: true, Sort: true}} {
					for _, keys := range [][]string{{"k"}, nil} {
						got := aggregate(t, mem, parts, keys, specs, opts)
						want := reference(cols, keys, specs, opts)
						if d := diffRows(rowsOf(got), want); d != "" {
							t.Errorf("keys %v, %+v:\n%s", keys, opts, d)
						}
						got.Release()
					}
				}
			})
		}
	}
}

// TestFirstLastMergeOrder: first and last follow the order of the states
// given to Merge.
func TestFirstLastMergeOrder(t *testing.T) {
	mem := checkedMem(t)
	ctx := context.Background()
	specs := []Spec{{Func: First, Column: "v", Name: "first"}, {Func: Last, Column: "v", Name: "last"},
		{Func: First, Column: "s", Name: "sfirst"}, {Func: Last, Column: "s", Name: "slast"}}
	mk := func(vals ...any) arrow.RecordBatch {
		strs := make([]any, len(vals))
		for i, v := range vals {
			if v != nil {
				strs[i] = fmt.Sprint(v)
			}
		}
		return buildRecord(mem, []column{{"k", tString, []any{"g", "g"}[:len(vals)]}, {"v", tInt64, vals}, {"s", tString, strs}})
	}
	recs := []arrow.RecordBatch{mk(nil, int64(1)), mk(int64(2), int64(3)), mk(int64(4), nil), mk(nil, nil)}
	defer releaseRecs(recs)
	var states []arrow.RecordBatch
	for _, r := range recs {
		st, err := Partial(ctx, r, []string{"k"}, specs, Options{}, mem)
		if err != nil {
			t.Fatal(err)
		}
		states = append(states, st)
	}
	defer releaseRecs(states)
	tests := []struct {
		name  string
		order []int
		want  []any
	}{
		{"in order", []int{0, 1, 2, 3}, []any{"g", int64(1), int64(4), "1", "4"}},
		{"reversed", []int{3, 2, 1, 0}, []any{"g", int64(4), int64(1), "4", "1"}},
		{"middle", []int{1, 2}, []any{"g", int64(2), int64(4), "2", "4"}},
		{"nulls first", []int{3, 0}, []any{"g", int64(1), int64(1), "1", "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in []arrow.RecordBatch
			for _, i := range tt.order {
				in = append(in, states[i])
			}
			m, err := Merge(ctx, in, []string{"k"}, specs, Options{}, mem)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Release()
			out, err := Finalize(ctx, m, []string{"k"}, specs, Options{}, mem)
			if err != nil {
				t.Fatal(err)
			}
			defer out.Release()
			if d := diffRows(rowsOf(out), [][]any{tt.want}); d != "" {
				t.Error(d)
			}
		})
	}
}

// TestStdVarAccuracy compares std and var, merged over partitions, with a
// two-pass computation on data with a large offset, where the naive
// sum-of-squares formula loses every digit.
func TestStdVarAccuracy(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, tc := range []struct {
		offset, scale float64
	}{{0, 1}, {1e9, 1}, {1e6, 1e-3}, {-5e8, 100}} {
		t.Run(fmt.Sprint(tc.offset, tc.scale), func(t *testing.T) {
			mem := checkedMem(t)
			n := 20000
			keys := make([]any, n)
			vals := make([]any, n)
			for i := range n {
				keys[i] = int64(r.IntN(7))
				vals[i] = tc.offset + tc.scale*r.NormFloat64()
			}
			cols := []column{{"k", tInt64, keys}, {"v", tFloat64, vals}}
			rec := buildRecord(mem, cols)
			defer rec.Release()
			parts := splitRecord(rec, []int{1, 5000, 5003, 12000})
			defer releaseRecs(parts)
			specs := []Spec{{Func: Var, Column: "v", Name: "var", DDOF: 1}, {Func: Std, Column: "v", Name: "std", DDOF: 0}}
			for _, keys := range [][]string{{"k"}, nil} {
				got := aggregate(t, mem, parts, keys, specs, Options{Sort: true})
				want := reference(cols, keys, specs, Options{Sort: true})
				if d := diffRows(rowsOf(got), want); d != "" {
					t.Errorf("keys %v:\n%s", keys, d)
				}
				got.Release()
			}
		})
	}
}

// TestNUniqueOverlap: distinct values seen in several partitions count once.
func TestNUniqueOverlap(t *testing.T) {
	mem := checkedMem(t)
	r := rand.New(rand.NewPCG(3, 4))
	n := 3000
	cols := []column{randomColumn(r, "k", tString, n, 5, 0.05), randomColumn(r, "i", tInt64, n, 200, 0.1),
		randomColumn(r, "s", tDict, n, 300, 0.1), randomColumn(r, "f", tFloat64, n, 100, 0.1)}
	rec := buildRecord(mem, cols)
	defer rec.Release()
	parts := splitRecord(rec, []int{700, 1400, 2100})
	defer releaseRecs(parts)
	specs := []Spec{{Func: NUnique, Column: "i", Name: "ni"}, {Func: NUnique, Column: "s", Name: "ns"}, {Func: NUnique, Column: "f", Name: "nf"}}
	got := aggregate(t, mem, parts, []string{"k"}, specs, Options{})
	defer got.Release()
	if d := diffRows(rowsOf(got), reference(cols, []string{"k"}, specs, Options{})); d != "" {
		t.Error(d)
	}
}

func TestStateErrors(t *testing.T) {
	mem := checkedMem(t)
	ctx := context.Background()
	rec := buildRecord(mem, []column{{"k", tString, []any{"a"}}, {"v", tInt64, []any{int64(1)}}, {"f", tFloat64, []any{1.0}}})
	defer rec.Release()
	specs := []Spec{{Func: Sum, Column: "v"}}
	st, err := Partial(ctx, rec, []string{"k"}, specs, Options{}, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Release()
	other, err := Partial(ctx, rec, []string{"k"}, []Spec{{Func: Sum, Column: "f", Name: "v"}}, Options{}, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Release()
	tests := []struct {
		name   string
		states []arrow.RecordBatch
		keys   []string
		specs  []Spec
		want   string
	}{
		{"other key", []arrow.RecordBatch{st}, []string{"x"}, specs, `partial state 0, column "k": column 0 should be key "x"`},
		{"other spec", []arrow.RecordBatch{st}, []string{"k"}, []Spec{{Func: Mean, Column: "v"}}, `too few`},
		{"renamed", []arrow.RecordBatch{st}, []string{"k"}, []Spec{{Func: Sum, Column: "v", Name: "w"}}, `column 1 is "v:sum" of type int64, want "w:sum"`},
		{"types differ", []arrow.RecordBatch{st, other}, []string{"k"}, specs, `partial state 1: schema`},
		{"extra", []arrow.RecordBatch{st}, []string{"k"}, nil, `1 more than the keys and specs call for`},
		{"no states", nil, []string{"k"}, specs, `no partial states`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Merge(ctx, tt.states, tt.keys, tt.specs, Options{}, mem)
			if err == nil {
				m.Release()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q\ndoes not contain %q", err, tt.want)
			}
			if len(tt.states) > 0 && !errors.Is(err, ErrBadState) {
				t.Errorf("error %v is not ErrBadState", err)
			}
		})
	}
	if _, err := Finalize(ctx, st, []string{"k"}, []Spec{{Func: Count, Column: "v"}}, Options{}, mem); err == nil || !strings.Contains(err.Error(), `"v:sum" of type int64, want "v:count"`) {
		t.Errorf("Finalize error %v", err)
	}
}

func TestCancel(t *testing.T) {
	mem := checkedMem(t)
	rec := buildRecord(mem, []column{{"k", tInt64, []any{int64(1), int64(2)}}})
	defer rec.Release()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Partial(ctx, rec, []string{"k"}, []Spec{{Func: Size}}, Options{}, mem); !errors.Is(err, context.Canceled) {
		t.Errorf("Partial: %v", err)
	}
	if _, err := HashPartition(ctx, rec, []string{"k"}, 2, mem); !errors.Is(err, context.Canceled) {
		t.Errorf("HashPartition: %v", err)
	}
}

func TestEstimateDistinct(t *testing.T) {
	tests := []struct {
		d, k, rows int
		lo, hi     int // the estimate must be in [lo, hi]
	}{
		{d: 100, k: 65536, rows: 1_250_000, lo: 100, hi: 101},
		{d: 65536, k: 65536, rows: 1_250_000, lo: 1_250_000, hi: 1_250_000},
		// 65536 uniform draws from 1e6 values give about 63,470 distinct;
		// 1.25M draws give about 713,500.
		{d: 63470, k: 65536, rows: 1_250_000, lo: 690_000, hi: 740_000},
		{d: 50000, k: 65536, rows: 65536 * 2, lo: 50000, hi: 131072},
	}
	for _, tt := range tests {
		if got := estimateDistinct(tt.d, tt.k, tt.rows); got < tt.lo || got > tt.hi {
			t.Errorf("estimateDistinct(%d, %d, %d) = %d, want in [%d, %d]", tt.d, tt.k, tt.rows, got, tt.lo, tt.hi)
		}
	}
}

// TestManyGroups runs inputs with many groups through large chunks, where
// the table estimate and radix partitioning take over, and compares with
// grouping in input order.
func TestManyGroups(t *testing.T) {
	if testing.Short() {
		t.Skip("many rows")
	}
	defer tuning{chunk: 4096, tableBytes: 256 << 10, partBytes: 16 << 10, block: 20000}.set()()
	passes := radixPasses.Load()
	mem := checkedMem(t)
	r := rand.New(rand.NewPCG(11, 12))
	n := 60_000
	cols := []column{
		randomColumn(r, "s", tString, n, 40_000, 0.01),
		randomColumn(r, "i", tInt64, n, 40_000, 0.01),
		randomColumn(r, "a", tInt32, n, 500, 0),
		randomColumn(r, "v", tInt64, n, 1000, 0.1),
		randomColumn(r, "f", tFloat64, n, 1000, 0.1),
	}
	rec := buildRecord(mem, cols)
	defer rec.Release()
	parts := splitRecord(rec, []int{25_000, 30_000})
	defer releaseRecs(parts)
	specs := []Spec{{Func: Sum, Column: "v"}, {Func: First, Column: "f", Name: "first"}, {Func: Last, Column: "v", Name: "last"},
		{Func: Mean, Column: "f", Name: "mean"}, {Func: Size}}
	for _, keys := range [][]string{{"s"}, {"i"}, {"a", "i"}} {
		for _, opts := range []Options{{}, {DropNullKeys: true, Sort: true}} {
			got := aggregate(t, mem, parts, keys, specs, opts)
			restore := tuning{chunkRows, 1 << 62, radixPartBytes, radixBlockRows}.set() // no radix
			want := aggregate(t, mem, parts, keys, specs, opts)
			restore()
			if d := diffRows(rowsOf(got), rowsOf(want)); d != "" {
				t.Errorf("keys %v, %+v: radix differs from in-order grouping:\n%s", keys, opts, d)
			}
			got.Release()
			want.Release()
		}
	}
	if radixPasses.Load() == passes {
		t.Error("no radix pass")
	}
}

// TestSortStrings checks the order of string keys around the 16-byte
// prefix the sort compares first.
func TestSortStrings(t *testing.T) {
	mem := checkedMem(t)
	r := rand.New(rand.NewPCG(9, 9))
	var vals []any
	for range 400 {
		n := r.IntN(24)
		b := make([]byte, n)
		for i := range b {
			b[i] = 'a' // long shared prefixes: ties at 16 bytes
			if i >= 13 || r.IntN(8) == 0 {
				b[i] = "a\x00z"[r.IntN(3)]
			}
		}
		vals = append(vals, string(b))
	}
	vals = append(vals, nil, "", "aaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaaa\x00", "aaaaaaaaaaaaaaa")
	cols := []column{{"k", tString, vals}}
	rec := buildRecord(mem, cols)
	defer rec.Release()
	specs := []Spec{{Func: Size}}
	got := aggregate(t, mem, []arrow.RecordBatch{rec}, []string{"k"}, specs, Options{Sort: true})
	defer got.Release()
	if d := diffRows(rowsOf(got), reference(cols, []string{"k"}, specs, Options{Sort: true})); d != "" {
		t.Error(d)
	}
}
