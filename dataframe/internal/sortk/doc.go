// Package sortk holds the sorting kernels of the dataframe: multi-column
// sorts of Arrow record batches, k-way merges of sorted runs (in memory or
// streamed from files), order checks, and the divisions of a range
// partitioning (boundaries from a sample, and the range of each row).
//
// # Order
//
// A sort is by one or more SortKeys, each ascending or descending, with
// nulls last (default) or first, and stable: rows with equal keys keep
// their order. Numbers compare by value (-0 equals 0); strings and binary
// by their bytes; booleans false before true; dates, times, timestamps and
// durations by their stored integers; a dictionary by its values. NaN is a
// value, not a null, but it is placed like pandas places it: on the nulls'
// side of every number, in either direction, between the numbers and the
// nulls (numbers, NaN, nulls; or with NullsFirst nulls, NaN, numbers).
// Every function of the package uses this one order, so a batch sorted by
// Sort is sorted for IsSorted, MergeSorted and SearchDivisions.
//
// # How it sorts
//
// Row numbers are sorted, then the columns taken in that order. Each key
// column is turned once into order-preserving 64-bit keys (integers with
// the sign bit flipped, floats by their bits, dictionaries by the rank of
// their entries, with the direction applied), and rows are sorted by the
// first key with an LSD radix sort over the bits that vary (key and row
// position packed into one word when they fit); each run of ties is then
// sorted by the next key. Strings are sorted 7 bytes at a time (the bytes
// as a big-endian number, with the count of bytes left in the low byte, so
// that a prefix comes first), then each run of ties by the next 7 bytes;
// runs of up to 32 by comparisons. Nothing in the loops goes through an
// interface or allocates per row. Merges compare rows of different batches
// through the same keys, with a heap of the runs.
package sortk
