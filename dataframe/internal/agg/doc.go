// Package agg holds the aggregation kernels of the dataframe: whole-column
// reductions and hash group-by, over Arrow record batches.
//
// An aggregation runs as a tree over the partitions of a dataframe, possibly
// in several processes. Partial aggregates one partition into a partial
// state; Merge combines partial states, in order; Finalize turns the last
// state into the result. A partial state is an Arrow record batch with one
// row per group, so it can cross the wire or be spilled to disk like any
// partition. HashPartition splits a batch by the hash of its keys so that
// every row of a group lands in the same part, whatever partition it came
// from: the exchange step of a shuffle or of a split-out group-by.
//
// The functions follow pandas: nulls are skipped by every aggregate (count
// counts the non-null values, size the rows); over a group with no value
// sum is 0 and min, max, mean, std, var, first and last are null; std and
// var merge count, mean and sum of squared deviations with the parallel
// formulas of Chan et al., so that they stay accurate; nunique is exact.
// NaN is a value, not a null: it propagates through sum and mean, and loses
// to any number in min and max.
//
// Groups are found with open-addressing hash tables written for the key
// types: 64-bit slots for integers (with a direct lookup table when the
// values lie in a small range), slots holding the first 16 bytes of a
// string (longer strings are compared in a byte arena), and, for
// dictionary-encoded strings, one lookup per dictionary entry, after which
// rows are grouped by their index. Several keys are grouped by the tuple of
// their per-key ids. The kernels then run column at a time, one typed loop
// per function and type over the group ids of a chunk of rows, with no
// per-row allocation or interface call. When the groups are so many that
// the table outgrows the caches, rows are first scattered into radix
// partitions of the table, so that each partition is grouped and
// aggregated in cache; the result is the same.
package agg
