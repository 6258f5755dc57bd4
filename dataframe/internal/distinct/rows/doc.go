// Package rows holds the row-level building blocks that the join, window
// and distinct kernels share: typed views of Arrow buffers, builders of
// arrays from Go slices, gathers of rows by index (Take, TakeRecord,
// Coalesce), and an Encoder that gives every distinct key tuple of one or
// more columns a dense id, with open-addressing hash tables written for the
// key types.
//
// The hashing follows package agg (a fixed wyhash-style mix, no per-process
// seed; short strings compared by their first 16 bytes held in the slot;
// dictionaries looked up once per entry; several key columns combined as
// tuples of per-column ids), so that the kernels have the same cost model as
// the group-by.
package rows
