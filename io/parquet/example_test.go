package parquet_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/io/parquet"
	"github.com/shoal-data/shoal/io/storage"
)

func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// Write a small table, in row groups of two rows.
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "city", Type: arrow.BinaryTypes.String},
		{Name: "temperature", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues([]string{"Oslo", "Nuuk", "Rome", "Lima", "Cairo"}, nil)
	b.Field(1).(*array.Float64Builder).AppendValues([]float64{4.5, -7, 18, 9.5, 22}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	path := filepath.Join(dir, "weather.parquet")
	err = parquet.Write(ctx, storage.Local{}, path, []arrow.RecordBatch{rec}, parquet.WriteOptions{RowGroupRows: 2})
	if err != nil {
		log.Fatal(err)
	}

	// Plan: which parts to read for temperatures above 10 degrees.
	plan, err := parquet.PlanRead(ctx, storage.Local{}, []string{filepath.Join(dir, "*.parquet")}, parquet.Options{
		Filter:      []parquet.Bound{{Column: "temperature", Op: ">", Value: 10}},
		TargetBytes: -1, // a part per row group
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d parts, %d of %d row groups skipped\n", len(plan.Parts), plan.SkippedRowGroups, plan.TotalRowGroups)

	// Read the parts (each could be a task on another machine). Rows are
	// not filtered: the part holding Rome also holds Lima.
	for i := range plan.Parts {
		rec, err := parquet.ReadPart(ctx, storage.Local{}, plan, i, memory.DefaultAllocator)
		if err != nil {
			log.Fatal(err)
		}
		cities := rec.Column(0).(*array.Dictionary)
		names := cities.Dictionary().(*array.String)
		temps := rec.Column(1).(*array.Float64)
		for r := range int(rec.NumRows()) {
			fmt.Printf("%s %.1f\n", names.Value(cities.GetValueIndex(r)), temps.Value(r))
		}
		rec.Release()
	}
	// Output:
	// 2 parts, 1 of 3 row groups skipped
	// Rome 18.0
	// Lima 9.5
	// Cairo 22.0
}
