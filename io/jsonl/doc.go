// Package jsonl reads and writes JSON lines (also called NDJSON): text
// files holding one JSON object per line, each object a row.
//
// Reading happens in two steps, so that the second can run in parallel,
// possibly on other machines. PlanRead expands glob patterns, settles the
// schema (given, or inferred from the first lines of the first file) and
// splits the files into parts of about Options.BlockSize bytes, cut
// between lines. ReadPart then reads one part into an Arrow record batch:
//
//	plan, err := jsonl.PlanRead(ctx, storage.Local{}, []string{"logs/*.jsonl"},
//		jsonl.Options{ParseDates: []string{"time"}, Columns: []string{"time", "level", "msg"}})
//	...
//	for i := range plan.Parts {
//		rec, err := jsonl.ReadPart(ctx, storage.Local{}, plan, i, memory.DefaultAllocator)
//		...
//		rec.Release()
//	}
//
// A key missing from a line is a null. A line that is not a JSON object,
// or a value that does not fit its column ("abc" in a float64 column), is
// a *ParseError naming the file, line, byte and key, with the text of the
// line; errors.Is tells ErrSyntax from ErrSchemaMismatch. Blank lines,
// Windows line ends and a leading byte order mark are accepted, and so are
// the bare NaN, Infinity and -Infinity that Python writes.
//
// A Plan is plain data: it encodes to JSON or with encoding/gob, so it can
// be sent to the process that reads; Plan.Slice cuts out the parts one
// task reads, and Plan.Select the columns.
//
// Write and WriteFile write record batches, one object per row.
package jsonl
