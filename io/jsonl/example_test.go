package jsonl_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/io/jsonl"
	"github.com/shoal-data/shoal/io/storage"
)

func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "jsonl-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "events.jsonl")
	os.WriteFile(path, []byte(`{"time": "2024-03-01T12:00:00Z", "user": "ann", "ms": 12.5}
{"time": "2024-03-01T12:00:03+01:00", "user": "bob"}
{"time": "2024-03-01T12:00:07Z", "user": "ann", "ms": 3}
`), 0o644)

	plan, err := jsonl.PlanRead(ctx, storage.Local{}, []string{path}, jsonl.Options{ParseDates: []string{"time"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range plan.Schema.Fields() {
		fmt.Println(f.Name, f.Type)
	}
	rec, err := jsonl.ReadPart(ctx, storage.Local{}, plan, 0, memory.DefaultAllocator)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rec.Release()
	fmt.Println(rec.Column(1), rec.Column(2))

	// And back to JSON lines.
	jsonl.Write(os.Stdout, []arrow.RecordBatch{rec}, jsonl.WriteOptions{OmitNulls: true})
	// Output:
	// time timestamp[us, tz=UTC]
	// user utf8
	// ms float64
	// ["ann" "bob" "ann"] [12.5 (null) 3]
	// {"time":"2024-03-01T12:00:00Z","user":"ann","ms":12.5}
	// {"time":"2024-03-01T11:00:03Z","user":"bob"}
	// {"time":"2024-03-01T12:00:07Z","user":"ann","ms":3}
}

// A value that does not fit its column is an error naming the file, the
// line, the key and the text.
func ExampleParseError() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "jsonl-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "prices.jsonl")
	os.WriteFile(path, []byte("{\"sku\": 1, \"price\": 9.5}\n{\"sku\": 2, \"price\": \"n/a\"}\n"), 0o644)

	schema := arrow.NewSchema([]arrow.Field{
		{Name: "sku", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "price", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	plan, err := jsonl.PlanRead(ctx, storage.Local{}, []string{path}, jsonl.Options{Schema: schema})
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = jsonl.ReadPart(ctx, storage.Local{}, plan, 0, nil)
	var pe *jsonl.ParseError
	if errors.As(err, &pe) {
		fmt.Printf("line %d, key %q: %v\n", pe.Line, pe.Key, pe.Err)
		fmt.Println(pe.Text)
	}
	// Output:
	// line 2, key "price": value does not fit the schema: "n/a" is not a number (the column is float64)
	// {"sku": 2, "price": "n/a"}
}
