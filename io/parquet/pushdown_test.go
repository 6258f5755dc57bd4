package parquet

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/parquet-go/parquet-go"

	"github.com/shoal-data/shoal/io/storage"
)

// pushdownTable writes n rows with row groups of 200 rows and small pages,
// so that both row group statistics and the page index are used. Values
// drift with the row number, so that statistics can exclude data.
func pushdownTable(t *testing.T, n int, seed uint64) (string, map[string][]any) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 2))
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "u", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "dec", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	vals := map[string][]any{}
	add := func(name string, v any) { vals[name] = append(vals[name], v) }
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for r := range n {
		null := func() bool { return rng.IntN(10) == 0 }
		drift := int64(r) + rng.Int64N(100)
		b.Field(0).(*array.Int64Builder).Append(int64(r))
		add("id", int64(r))
		if null() || r/200 == 3 { // row group 3 is all null
			b.Field(1).AppendNull()
			add("i", nil)
		} else {
			b.Field(1).(*array.Int64Builder).Append(drift)
			add("i", drift)
		}
		switch {
		case null():
			b.Field(2).AppendNull()
			add("f", nil)
		case rng.IntN(50) == 0:
			b.Field(2).(*array.Float64Builder).Append(math.NaN())
			add("f", math.NaN())
		case rng.IntN(100) == 0:
			b.Field(2).(*array.Float64Builder).Append(math.Inf(-1))
			add("f", math.Inf(-1))
		default:
			f := float64(drift) / 3
			b.Field(2).(*array.Float64Builder).Append(f)
			add("f", f)
		}
		if null() {
			b.Field(3).AppendNull()
			add("s", nil)
		} else {
			// Long values, so that the page index truncates them.
			s := fmt.Sprintf("key-%06d-%s", drift/7, strings.Repeat("z", rng.IntN(40)))
			b.Field(3).(*array.StringBuilder).Append(s)
			add("s", s)
		}
		if null() {
			b.Field(4).AppendNull()
			add("u", nil)
		} else {
			u := uint64(drift) * 1e15 // beyond MaxInt64 for large rows
			b.Field(4).(*array.Uint64Builder).Append(u)
			add("u", u)
		}
		if null() {
			b.Field(5).AppendNull()
			add("d", nil)
		} else {
			d := arrow.Date32FromTime(base.AddDate(0, 0, int(drift/10)))
			b.Field(5).(*array.Date32Builder).Append(d)
			add("d", d.ToTime())
		}
		if null() {
			b.Field(6).AppendNull()
			add("ts", nil)
		} else {
			tm := base.Add(time.Duration(drift) * time.Minute)
			b.Field(6).(*array.TimestampBuilder).Append(arrow.Timestamp(tm.UnixMicro()))
			add("ts", tm)
		}
		if null() {
			b.Field(7).AppendNull()
			add("dec", nil)
		} else {
			b.Field(7).(*array.Decimal128Builder).Append(decimal128.FromI64(drift*10 - 5000))
			add("dec", float64(drift*10-5000)/100)
		}
		if null() {
			b.Field(8).AppendNull()
			add("b", nil)
		} else {
			v := r%400 < 200 // alternate true and false row groups
			b.Field(8).(*array.BooleanBuilder).Append(v)
			add("b", v)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "pushdown.parquet")
	err := Write(context.Background(), storage.Local{}, path, []arrow.RecordBatch{rec},
		WriteOptions{RowGroupRows: 200, batchRows: 16, extra: []pq.WriterOption{pq.PageBufferSize(64)}})
	if err != nil {
		t.Fatal(err)
	}
	return path, vals
}

// satisfies evaluates a bound on a value the way the caller's filter would:
// nulls satisfy nothing, NaN satisfies only "!=".
func satisfies(v any, b Bound) bool {
	if v == nil {
		return false
	}
	var c int
	switch x := v.(type) {
	case int64, uint64, float64:
		xs, _ := boundValue(x)
		bs, _ := boundValue(b.Value)
		if xs.nan || bs.nan {
			return b.Op == "!="
		}
		c, _ = compare(xs, bs)
	case string:
		c = strings.Compare(x, b.Value.(string))
	case time.Time:
		c = x.Compare(b.Value.(time.Time))
	case bool:
		xs, _ := boundValue(x)
		bs, _ := boundValue(b.Value)
		c, _ = compare(xs, bs)
	}
	switch b.Op {
	case "==":
		return c == 0
	case "!=":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	}
	return c >= 0
}

// TestPushdownNeverLosesRows checks, for random conjunctions of bounds,
// that every row satisfying them is read, and that statistics skip data.
func TestPushdownNeverLosesRows(t *testing.T) {
	const n = 2000
	path, vals := pushdownTable(t, n, 7)
	rng := rand.New(rand.NewPCG(3, 4))
	ops := []string{"==", "!=", "<", "<=", ">", ">="}
	names := []string{"i", "f", "s", "u", "d", "ts", "dec", "b"}
	randomBound := func() Bound {
		name := names[rng.IntN(len(names))]
		var v any
		for v == nil {
			v = vals[name][rng.IntN(n)]
		}
		switch x := v.(type) {
		case int64:
			v = x + rng.Int64N(5) - 2
		case float64:
			if rng.IntN(10) == 0 {
				v = math.NaN()
			} else if !math.IsInf(x, 0) {
				v = x + rng.Float64() - 0.5
			}
		case string:
			v = x[:rng.IntN(len(x)+1)]
		case time.Time:
			v = x.Add(time.Duration(rng.IntN(3)-1) * time.Hour)
		case uint64:
			if rng.IntN(2) == 0 {
				v = float64(x)
			}
		}
		return Bound{Column: name, Op: ops[rng.IntN(len(ops))], Value: v}
	}
	skippedSome := false
	for trial := range 300 {
		var filter []Bound
		for range 1 + rng.IntN(3) {
			filter = append(filter, randomBound())
		}
		got, plan := readAllParts(t, []string{path}, Options{Columns: []string{"id"}, Filter: filter, TargetBytes: -1})
		if plan.SkippedRows > 0 {
			skippedSome = true
		}
		read := map[int64]bool{}
		for _, id := range got["id"] {
			read[id.(int64)] = true
		}
		if int64(len(read)) != int64(n)-plan.SkippedRows {
			t.Fatalf("filter %v: read %d rows, skipped %d of %d", filter, len(read), plan.SkippedRows, n)
		}
		for r := range n {
			ok := true
			for _, b := range filter {
				if !satisfies(vals[b.Column][r], b) {
					ok = false
					break
				}
			}
			if ok && !read[int64(r)] {
				t.Fatalf("trial %d, filter %v: row %d matches but was skipped (values %v)", trial, filter, r, rowValues(vals, r))
			}
		}
	}
	if !skippedSome {
		t.Error("statistics never skipped anything")
	}
}

func rowValues(vals map[string][]any, r int) map[string]any {
	out := map[string]any{}
	for k, v := range vals {
		out[k] = v[r]
	}
	return out
}

func TestPushdownPages(t *testing.T) {
	path, vals := pushdownTable(t, 2000, 7)
	// Rows 500..599 of row group 2 (rows 400..599): "id" is exact, so the
	// page index keeps a few pages of one row group.
	filter := []Bound{{"id", ">=", 500}, {"id", "<", 520}}
	got, plan := readAllParts(t, []string{path}, Options{Filter: filter})
	if len(plan.Parts) != 1 || !slices.Equal(plan.Parts[0].RowGroups, []int{2}) {
		t.Fatalf("parts %+v, want row group 2 only", plan.Parts)
	}
	p := plan.Parts[0]
	if len(p.Ranges) == 0 || p.Rows >= 200 {
		t.Fatalf("part %+v: want page ranges within row group 2", p)
	}
	if plan.SkippedRows != 2000-p.Rows || plan.SkippedRowGroups != 9 {
		t.Errorf("skipped %d rows and %d row groups, want %d and 9", plan.SkippedRows, plan.SkippedRowGroups, 2000-p.Rows)
	}
	// The rows read are those of the ranges, with all their columns right.
	var want []int64
	for _, rr := range p.Ranges {
		for r := rr.Start; r < rr.End; r++ {
			want = append(want, 400+r)
		}
	}
	var ids []int64
	for _, v := range got["id"] {
		ids = append(ids, v.(int64))
	}
	if !slices.Equal(ids, want) {
		t.Fatalf("ids %v, want %v", ids, want)
	}
	for i, id := range ids {
		for _, name := range []string{"i", "f", "s", "u", "b"} {
			if !equalValues(got[name][i:i+1], vals[name][id:id+1]) {
				t.Errorf("row %d: %s = %v, want %v", id, name, got[name][i], vals[name][id])
			}
		}
	}
}

// TestPushdownUnusableStatistics covers data whose statistics must not be
// trusted: truncated strings, 0xFF bytes, NaN.
func TestPushdownUnusableStatistics(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "bin", Type: arrow.BinaryTypes.Binary},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	// Long values of 0xFF bytes: a truncated maximum cannot be raised.
	long := strings.Repeat("\xff", 100)
	for _, v := range []string{"a", long, long + "\x01"} {
		b.Field(0).(*array.BinaryBuilder).Append([]byte(v))
	}
	for _, f := range []float64{1, math.NaN(), 2} {
		b.Field(1).(*array.Float64Builder).Append(f)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "ff.parquet")
	if err := Write(ctx, storage.Local{}, path, []arrow.RecordBatch{rec}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, filter := range [][]Bound{
		{{"bin", "==", long + "\x01"}},
		{{"bin", ">", long}},
		{{"f", "!=", 1.5}},
		{{"f", "<", 3}},
	} {
		got, _ := readAllParts(t, []string{path}, Options{Filter: filter})
		if len(got["f"]) != 3 {
			t.Errorf("filter %v: %d rows read, want 3", filter, len(got["f"]))
		}
	}
}

// TestDictionaryFloatStatistics reads a file in which the Parquet library
// wrote dictionary-encoded doubles with NaN, whose page bounds it gets
// wrong: their statistics must not be used.
func TestDictionaryFloatStatistics(t *testing.T) {
	type row struct {
		ID int64   `parquet:"id"`
		F  float64 `parquet:"f,dict"`
	}
	rng := rand.New(rand.NewPCG(21, 22))
	var rows []row
	for i := range 4000 {
		f := float64(rng.IntN(500))
		if rng.IntN(10) == 0 {
			f = math.NaN()
		}
		rows = append(rows, row{int64(i), f})
	}
	path := filepath.Join(t.TempDir(), "dictfloat.parquet")
	var buf strings.Builder
	w := pq.NewGenericWriter[row](&buf, pq.PageBufferSize(256), pq.MaxRowsPerRowGroup(1000))
	for i := 0; i < len(rows); i += 16 {
		if _, err := w.Write(rows[i : i+16]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	fsys := &memFS{files: map[string][]byte{path: []byte(buf.String())}}
	for _, v := range []float64{3, 100, 250, 490} {
		plan, err := PlanRead(context.Background(), fsys, []string{path}, Options{Filter: []Bound{{"f", "<=", v}}, Columns: []string{"id"}})
		if err != nil {
			t.Fatal(err)
		}
		kept := map[int64]bool{}
		for i := range plan.Parts {
			rec, err := ReadPart(context.Background(), fsys, plan, i, memory.DefaultAllocator)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range rec.Column(0).(*array.Int64).Int64Values() {
				kept[id] = true
			}
			rec.Release()
		}
		for _, r := range rows {
			if r.F <= v && !kept[r.ID] {
				t.Fatalf("f <= %v: row %d (f = %v) skipped", v, r.ID, r.F)
			}
		}
	}
}
