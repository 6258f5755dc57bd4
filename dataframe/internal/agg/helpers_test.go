package agg

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Test helpers: records from Go values, Go values from records, and a naive
// reference implementation of grouping to compare the kernels with.

var (
	tInt8    = arrow.PrimitiveTypes.Int8
	tInt16   = arrow.PrimitiveTypes.Int16
	tInt32   = arrow.PrimitiveTypes.Int32
	tInt64   = arrow.PrimitiveTypes.Int64
	tUint8   = arrow.PrimitiveTypes.Uint8
	tUint16  = arrow.PrimitiveTypes.Uint16
	tUint32  = arrow.PrimitiveTypes.Uint32
	tUint64  = arrow.PrimitiveTypes.Uint64
	tFloat32 = arrow.PrimitiveTypes.Float32
	tFloat64 = arrow.PrimitiveTypes.Float64
	tBool    = arrow.FixedWidthTypes.Boolean
	tString  = arrow.BinaryTypes.String
	tLarge   = arrow.BinaryTypes.LargeString
	tBinary  = arrow.BinaryTypes.Binary
	tDate32  = arrow.FixedWidthTypes.Date32
	tTS      = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	tDict    = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	tDict8   = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
)

// column is a named column of Go values; nil is null. Integers are int64
// (uint64 for unsigned types), floats float64, strings string.
type column struct {
	name string
	typ  arrow.DataType
	vals []any
}

func buildArray(mem memory.Allocator, typ arrow.DataType, vals []any) arrow.Array {
	b := array.NewBuilder(mem, typ)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
			continue
		}
		switch bb := b.(type) {
		case *array.Int8Builder:
			bb.Append(int8(v.(int64)))
		case *array.Int16Builder:
			bb.Append(int16(v.(int64)))
		case *array.Int32Builder:
			bb.Append(int32(v.(int64)))
		case *array.Int64Builder:
			bb.Append(v.(int64))
		case *array.Uint8Builder:
			bb.Append(uint8(v.(uint64)))
		case *array.Uint16Builder:
			bb.Append(uint16(v.(uint64)))
		case *array.Uint32Builder:
			bb.Append(uint32(v.(uint64)))
		case *array.Uint64Builder:
			bb.Append(v.(uint64))
		case *array.Float32Builder:
			bb.Append(float32(v.(float64)))
		case *array.Float64Builder:
			bb.Append(v.(float64))
		case *array.BooleanBuilder:
			bb.Append(v.(bool))
		case *array.StringBuilder:
			bb.Append(v.(string))
		case *array.LargeStringBuilder:
			bb.Append(v.(string))
		case *array.BinaryBuilder:
			bb.AppendString(v.(string))
		case *array.Date32Builder:
			bb.Append(arrow.Date32(v.(int64)))
		case *array.TimestampBuilder:
			bb.Append(arrow.Timestamp(v.(int64)))
		case *array.BinaryDictionaryBuilder:
			if err := bb.AppendString(v.(string)); err != nil {
				panic(err)
			}
		default:
			panic(fmt.Sprintf("buildArray: no case for %T", b))
		}
	}
	return b.NewArray()
}

func buildRecord(mem memory.Allocator, cols []column) arrow.RecordBatch {
	fields := make([]arrow.Field, len(cols))
	arrs := make([]arrow.Array, len(cols))
	n := -1
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.name, Type: c.typ, Nullable: true}
		arrs[i] = buildArray(mem, c.typ, c.vals)
		n = len(c.vals)
	}
	if n < 0 {
		n = 0
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, int64(n))
	releaseAll(arrs)
	return rec
}

// cell returns row i of arr as a Go value (see column).
func cell(arr arrow.Array, i int) any {
	if arr.IsNull(i) {
		return nil
	}
	switch a := arr.(type) {
	case *array.Int8:
		return int64(a.Value(i))
	case *array.Int16:
		return int64(a.Value(i))
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Int64:
		return a.Value(i)
	case *array.Uint8:
		return uint64(a.Value(i))
	case *array.Uint16:
		return uint64(a.Value(i))
	case *array.Uint32:
		return uint64(a.Value(i))
	case *array.Uint64:
		return a.Value(i)
	case *array.Float32:
		return float64(a.Value(i))
	case *array.Float64:
		return a.Value(i)
	case *array.Boolean:
		return a.Value(i)
	case *array.String:
		return a.Value(i)
	case *array.LargeString:
		return a.Value(i)
	case *array.Binary:
		return string(a.Value(i))
	case *array.Date32:
		return int64(a.Value(i))
	case *array.Timestamp:
		return int64(a.Value(i))
	case *array.Dictionary:
		d := a.Dictionary()
		k := a.GetValueIndex(i)
		if d.IsNull(k) {
			return nil
		}
		return cell(d, k)
	}
	panic(fmt.Sprintf("cell: no case for %T", arr))
}

// rowsOf returns the cells of rec, row by row.
func rowsOf(rec arrow.RecordBatch) [][]any {
	rows := make([][]any, rec.NumRows())
	for i := range rows {
		rows[i] = make([]any, rec.NumCols())
		for j, c := range rec.Columns() {
			rows[i][j] = cell(c, i)
		}
	}
	return rows
}

// sameValue compares two cells, floats with a relative tolerance of 1e-9
// and NaN equal to NaN.
func sameValue(a, b any) bool {
	fa, aok := a.(float64)
	fb, bok := b.(float64)
	if aok && bok {
		if math.IsNaN(fa) || math.IsNaN(fb) {
			return math.IsNaN(fa) && math.IsNaN(fb)
		}
		if math.IsInf(fa, 0) || math.IsInf(fb, 0) {
			return fa == fb
		}
		return math.Abs(fa-fb) <= 1e-9*max(1, math.Abs(fa), math.Abs(fb))
	}
	return a == b
}

func diffRows(got, want [][]any) string {
	var b strings.Builder
	if len(got) != len(want) {
		fmt.Fprintf(&b, "%d rows, want %d\n", len(got), len(want))
	}
	for i := range max(len(got), len(want)) {
		var g, w []any
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		same := len(g) == len(w)
		for j := 0; same && j < len(g); j++ {
			same = sameValue(g[j], w[j])
		}
		if !same {
			fmt.Fprintf(&b, "row %d: got %v, want %v\n", i, g, w)
		}
		if b.Len() > 4000 {
			b.WriteString("...\n")
			break
		}
	}
	return b.String()
}

// tuning sets the chunk size and the radix thresholds for a test; small
// values send a few hundred rows through every path: many chunks, radix
// passes in several blocks, many partitions.
type tuning struct {
	chunk, tableBytes, partBytes, block int
}

var (
	defaultTuning = tuning{chunkRows, radixTableBytes, radixPartBytes, radixBlockRows}
	tinyTuning    = tuning{chunk: 7, tableBytes: 0, partBytes: 64, block: 50}
)

func (tu tuning) set() (restore func()) {
	old := tuning{chunkRows, radixTableBytes, radixPartBytes, radixBlockRows}
	chunkRows, radixTableBytes, radixPartBytes, radixBlockRows = tu.chunk, tu.tableBytes, tu.partBytes, tu.block
	return func() {
		chunkRows, radixTableBytes, radixPartBytes, radixBlockRows = old.chunk, old.tableBytes, old.partBytes, old.block
	}
}

// fataler is what aggregate needs of a *testing.T or *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// aggregate runs Partial on each batch, merges the states pairwise in order
// and finalizes.
func aggregate(t fataler, mem memory.Allocator, recs []arrow.RecordBatch, keys []string, specs []Spec, opts Options) arrow.RecordBatch {
	t.Helper()
	ctx := context.Background()
	var states []arrow.RecordBatch
	for _, r := range recs {
		st, err := Partial(ctx, r, keys, specs, opts, mem)
		if err != nil {
			t.Fatalf("Partial: %v", err)
		}
		states = append(states, st)
	}
	st, err := Merge(ctx, states, keys, specs, opts, mem)
	releaseRecs(states)
	if err != nil {
		t.Fatalf("Merge: %v", err)
	}
	defer st.Release()
	out, err := Finalize(ctx, st, keys, specs, opts, mem)
	if err != nil {
		t.Fatalf("Finalize: %v", err)
	}
	return out
}

func releaseRecs(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

// ---- the reference: maps and two-pass formulas over Go values ----

type refGroup struct {
	key  []any
	rows []int
}

// reference computes the expected result rows of grouping cols by keys.
func reference(cols []column, keys []string, specs []Spec, opts Options) [][]any {
	byName := map[string]column{}
	n := 0
	for _, c := range cols {
		byName[c.name] = c
		n = len(c.vals)
	}
	var groups []*refGroup
	index := map[string]*refGroup{}
	for i := range n {
		key := make([]any, len(keys))
		hasNull := false
		for j, k := range keys {
			v := byName[k].vals[i]
			if f, ok := v.(float64); ok && f == 0 {
				v = 0.0 // -0 groups with 0
			}
			key[j] = v
			hasNull = hasNull || v == nil
		}
		if hasNull && opts.DropNullKeys {
			continue
		}
		ks := fmt.Sprintf("%#v", key)
		g := index[ks]
		if g == nil {
			g = &refGroup{key: key}
			index[ks] = g
			groups = append(groups, g)
		}
		g.rows = append(g.rows, i)
	}
	if len(keys) == 0 {
		all := &refGroup{}
		for i := range n {
			all.rows = append(all.rows, i)
		}
		groups = []*refGroup{all}
	}
	if opts.Sort && len(keys) > 0 {
		slices.SortStableFunc(groups, func(a, b *refGroup) int {
			for j := range a.key {
				if c := refCompare(a.key[j], b.key[j]); c != 0 {
					return c
				}
			}
			return 0
		})
	}
	var out [][]any
	for _, g := range groups {
		row := slices.Clone(g.key)
		for _, s := range specs {
			var vals []any
			var typ arrow.DataType
			if s.Column != "" {
				c := byName[s.Column]
				typ = c.typ
				for _, r := range g.rows {
					vals = append(vals, c.vals[r])
				}
			}
			row = append(row, refAgg(s, typ, vals, len(g.rows)))
		}
		out = append(out, row)
	}
	return out
}

// refCompare orders values with nulls last and NaN after numbers.
func refCompare(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	switch x := a.(type) {
	case int64:
		return cmp.Compare(x, b.(int64))
	case uint64:
		return cmp.Compare(x, b.(uint64))
	case float64:
		y := b.(float64)
		xn, yn := math.IsNaN(x), math.IsNaN(y)
		switch {
		case xn && yn:
			return 0
		case xn:
			return 1
		case yn:
			return -1
		}
		return cmp.Compare(x, y)
	case string:
		return cmp.Compare(x, b.(string))
	case bool:
		return cmp.Compare(boolInt(x), boolInt(b.(bool)))
	}
	panic(fmt.Sprintf("refCompare %T", a))
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func refAgg(s Spec, typ arrow.DataType, vals []any, rows int) any {
	var nonNull []any
	for _, v := range vals {
		if v != nil {
			nonNull = append(nonNull, v)
		}
	}
	num := func(v any) float64 {
		switch x := v.(type) {
		case int64:
			return float64(x)
		case uint64:
			return float64(x)
		case float64:
			return x
		case bool:
			return float64(boolInt(x))
		}
		panic("num")
	}
	switch s.Func {
	case Size:
		return int64(rows)
	case Count:
		return int64(len(nonNull))
	case Sum:
		switch classify(typ) {
		case classFloat:
			var t float64
			for _, v := range nonNull {
				t += v.(float64)
			}
			return t
		case classUint:
			var t uint64
			for _, v := range nonNull {
				t += v.(uint64)
			}
			return t
		}
		var t int64
		for _, v := range nonNull {
			if b, ok := v.(bool); ok {
				t += boolInt(b)
			} else {
				t += v.(int64)
			}
		}
		return t
	case Mean:
		if len(nonNull) == 0 {
			return nil
		}
		var t float64
		for _, v := range nonNull {
			t += num(v)
		}
		return t / float64(len(nonNull))
	case Std, Var:
		n := len(nonNull)
		if n-s.DDOF <= 0 {
			return nil
		}
		var t float64
		for _, v := range nonNull {
			t += num(v)
		}
		mean := t / float64(n)
		var m2 float64
		for _, v := range nonNull {
			d := num(v) - mean
			m2 += d * d
		}
		r := m2 / float64(n-s.DDOF)
		if s.Func == Std {
			r = math.Sqrt(r)
		}
		return r
	case Min, Max:
		var best any
		for _, v := range nonNull {
			if best == nil {
				best = v
				continue
			}
			c := refCompare(v, best) // NaN sorts last: min skips it
			if s.Func == Max {
				if f, ok := v.(float64); ok && math.IsNaN(f) {
					continue
				}
				if f, ok := best.(float64); ok && math.IsNaN(f) {
					best = v
					continue
				}
				c = -c
			}
			if c < 0 {
				best = v
			}
		}
		return best
	case First:
		if len(nonNull) == 0 {
			return nil
		}
		return nonNull[0]
	case Last:
		if len(nonNull) == 0 {
			return nil
		}
		return nonNull[len(nonNull)-1]
	case NUnique:
		set := map[string]bool{}
		for _, v := range nonNull {
			if f, ok := v.(float64); ok {
				if f == 0 {
					v = 0.0
				}
				if math.IsNaN(f) {
					v = "NaN"
				}
			}
			set[fmt.Sprintf("%#v", v)] = true
		}
		return int64(len(set))
	case Any:
		for _, v := range nonNull {
			if v.(bool) {
				return true
			}
		}
		return false
	case All:
		for _, v := range nonNull {
			if !v.(bool) {
				return false
			}
		}
		return true
	}
	panic("refAgg " + string(s.Func))
}
