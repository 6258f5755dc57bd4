// Package ipc reads and writes Arrow IPC data: the random-access file
// format (".arrow", also known as Feather version 2) and the streaming
// format (".arrows"), with optional LZ4 or Zstandard compression.
//
// Reading happens in two steps, so that the second can run in parallel,
// possibly on other machines. PlanRead looks at the files once: it expands
// glob patterns, tells the two formats apart by their first bytes, checks
// that all files have the same columns and splits the work into parts
// (one per stream, and one per group of record batches of about
// Options.TargetBytes in a file). ReadPart then reads one part:
//
//	plan, err := ipc.PlanRead(ctx, storage.Local{}, []string{"data/*.arrow"},
//		ipc.Options{Columns: []string{"city", "temp"}})
//	...
//	for i := range plan.Parts {
//		rec, err := ipc.ReadPart(ctx, storage.Local{}, plan, i, memory.DefaultAllocator)
//		...
//		rec.Release()
//	}
//
// A Plan is plain data: it encodes to JSON or with encoding/gob, so it can
// be sent to the process that reads; Plan.Slice cuts out the parts one
// task reads, and Plan.Select the columns.
//
// Errors name the file. A damaged or truncated file is an error wrapping
// ErrCorrupt, a file in another format one wrapping ErrNotArrow, files
// whose columns disagree one wrapping ErrSchemaMismatch, and asking for a
// column that does not exist one wrapping ErrUnknownColumn, which lists
// the columns there are.
//
// WriteFile and WriteStream write record batches in either format.
package ipc
