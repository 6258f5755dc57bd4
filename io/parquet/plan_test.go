package parquet

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/parquet-go/parquet-go"

	"github.com/shoal-data/shoal/io/storage"
)

// TestPlanEncoding sends plans through gob and JSON and reads parts of the
// copies.
func TestPlanEncoding(t *testing.T) {
	ctx := context.Background()
	path, _ := pushdownTable(t, 1000, 1)
	plan, err := PlanRead(ctx, storage.Local{}, []string{path},
		Options{Filter: []Bound{{"id", ">=", 500}, {"id", "<", 530}}, ExactDecimals: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Parts) != 1 || len(plan.Parts[0].Ranges) == 0 {
		t.Fatalf("want one part with ranges, got %+v", plan.Parts)
	}
	hive, err := PlanRead(ctx, storage.Local{}, []string{"testdata/hive/**/*.parquet"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*Plan{plan, hive} {
		var viaGob Plan
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(p); err != nil {
			t.Fatal(err)
		}
		if err := gob.NewDecoder(&buf).Decode(&viaGob); err != nil {
			t.Fatal(err)
		}
		js, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var viaJSON Plan
		if err := json.Unmarshal(js, &viaJSON); err != nil {
			t.Fatal(err)
		}
		for name, q := range map[string]*Plan{"gob": &viaGob, "json": &viaJSON} {
			if !q.Schema.Equal(p.Schema) {
				t.Errorf("%s: schema %s, want %s", name, q.Schema, p.Schema)
			}
			if !reflect.DeepEqual(q.Parts, p.Parts) || q.SkippedRows != p.SkippedRows || q.TotalRowGroups != p.TotalRowGroups {
				t.Errorf("%s: plan %+v, want %+v", name, q, p)
			}
			for i := range q.Parts {
				one := q.Part(i)
				want, err := ReadPart(ctx, storage.Local{}, p, i, memory.DefaultAllocator)
				if err != nil {
					t.Fatal(err)
				}
				got, err := ReadPart(ctx, storage.Local{}, one, 0, memory.DefaultAllocator)
				if err != nil {
					t.Fatal(err)
				}
				if !array.RecordApproxEqual(got, want, array.WithNaNsEqual(true)) {
					t.Errorf("%s: part %d differs", name, i)
				}
				got.Release()
				want.Release()
			}
		}
	}
}

// TestDictionaryMerging reads string columns whose row groups have
// different dictionaries, and pages that are not dictionary-encoded into
// a dictionary column.
func TestDictionaryMerging(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(11, 12))
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	var want []any
	for r := range 3000 {
		if rng.IntN(8) == 0 {
			b.Field(0).AppendNull()
			want = append(want, nil)
			continue
		}
		// Each row group of 500 rows has its own mix of values; later
		// ones many distinct values, so that the dictionary overflows.
		var s string
		if r < 1500 {
			s = []string{"a", "b", "c", "d"}[rng.IntN(4)] + string(rune('0'+r/500))
		} else {
			s = "w" + strings.Repeat("v", rng.IntN(30)) + string(rune('a'+rng.IntN(26)))
		}
		b.Field(0).(*array.StringBuilder).Append(s)
		want = append(want, s)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	dir := t.TempDir()
	path := filepath.Join(dir, "dict.parquet")
	err := Write(ctx, storage.Local{}, path, []arrow.RecordBatch{rec},
		WriteOptions{RowGroupRows: 500, batchRows: 50, extra: []pq.WriterOption{pq.DictionaryMaxBytes(64), pq.PageBufferSize(64)}})
	if err != nil {
		t.Fatal(err)
	}
	// Some row groups fell back to plain pages: the column is utf8.
	got, plan := readAllParts(t, []string{path}, Options{})
	if plan.Schema.Field(0).Type.ID() != arrow.STRING {
		t.Errorf("type %s, want utf8", plan.Schema.Field(0).Type)
	}
	if !equalValues(got["s"], want) {
		t.Error("utf8 values differ")
	}
	// The first three row groups are dictionary-encoded only.
	first, plan2 := readAllParts(t, []string{path}, Options{Filter: []Bound{{"s", "<", "e"}}})
	if plan2.Schema.Field(0).Type.ID() != arrow.DICTIONARY || plan2.Rows() != 1500 {
		t.Errorf("filtered: type %s, %d rows; want a dictionary of 1500 rows", plan2.Schema.Field(0).Type, plan2.Rows())
	}
	if !equalValues(first["s"], want[:1500]) {
		t.Error("dictionary values differ")
	}
	// All of it into dictionaries: plain pages are looked up.
	plan.Schema = arrow.NewSchema([]arrow.Field{{Name: "s", Type: dictString, Nullable: true}}, nil)
	var all []any
	for i := range plan.Parts {
		rec, err := ReadPart(ctx, storage.Local{}, plan, i, mem)
		if err != nil {
			t.Fatal(err)
		}
		if err := array.ValidateFull(rec.Column(0)); err != nil {
			t.Fatal(err)
		}
		d := rec.Column(0).(*array.Dictionary)
		seen := map[any]bool{}
		for _, v := range goValues(t, d.Dictionary()) {
			if seen[v] {
				t.Fatalf("dictionary holds %q twice", v)
			}
			seen[v] = true
		}
		all = append(all, goValues(t, d)...)
		rec.Release()
	}
	if !equalValues(all, want) {
		t.Error("values read into dictionaries differ")
	}
}

func TestWritePartitioned(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "country", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "year", Type: arrow.PrimitiveTypes.Int32},
		{Name: "v", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	countries := []string{"fr", "de", "a/b c=d%", "", "é"}
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i := range 100 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if i%11 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(countries[i%len(countries)])
		}
		b.Field(2).(*array.Int32Builder).Append(int32(2020 + i%3))
		b.Field(3).(*array.Float64Builder).Append(float64(i) / 4)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	dir := t.TempDir()
	opts := WriteOptions{PartitionOn: []string{"country", "year"}}
	files, err := WritePartitioned(ctx, storage.Local{}, dir, "part-0.parquet", []arrow.RecordBatch{rec, rec}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 18 || !slices.IsSorted(files) {
		t.Errorf("%d files, want 18 sorted: %v", len(files), files)
	}
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if len(parts) != 3 || !strings.HasPrefix(parts[0], "country=") || !strings.HasPrefix(parts[1], "year=") || parts[2] != "part-0.parquet" {
			t.Errorf("file %s", rel)
		}
	}
	for _, want := range []string{"country=a%2Fb%20c%3Dd%25", "country=__HIVE_DEFAULT_PARTITION__", "country=/", "country=é/"} {
		found := false
		for _, f := range files {
			found = found || strings.Contains(filepath.ToSlash(f), want)
		}
		if !found {
			t.Errorf("no directory %s among %v", want, files)
		}
	}
	got, plan := readAllParts(t, []string{filepath.Join(dir, "**", "*.parquet")}, Options{Columns: []string{"id", "country", "year", "v"}})
	if f := plan.Schema.Field(2); f.Type.ID() != arrow.INT64 {
		t.Errorf("year is %s, want int64", f.Type)
	}
	if len(got["id"]) != 200 {
		t.Fatalf("%d rows, want 200", len(got["id"]))
	}
	for i, id := range got["id"] {
		n := int(id.(int64))
		var country any = countries[n%len(countries)]
		if n%11 == 0 {
			country = nil
		}
		if got["country"][i] != country || got["year"][i] != int64(2020+n%3) || got["v"][i] != float64(n)/4 {
			t.Errorf("row %d: %v %v %v", n, got["country"][i], got["year"][i], got["v"][i])
		}
	}
	// A filter on a partition column opens only the files it keeps.
	_, plan = readAllParts(t, []string{filepath.Join(dir, "**", "*.parquet")}, Options{Filter: []Bound{{"year", "==", 2021}, {"country", "==", "fr"}}})
	if plan.SkippedFiles != 17 || len(plan.Parts) != 1 {
		t.Errorf("skipped %d files, %d parts; want 17 and 1", plan.SkippedFiles, len(plan.Parts))
	}
}
