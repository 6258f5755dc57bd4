// Package distinct holds the kernels of the dataframe that look at whole
// values rather than rows one by one: exact quantiles and medians (of a
// column, and per group), duplicate removal, value counts, unique values
// and the n largest or smallest rows (also per group), over Arrow record
// batches, with pandas' semantics.
//
// The operations that need every copy of a key in one place (DropDuplicates,
// GroupQuantiles, GroupNLargest) work on one batch that holds whole groups:
// the lead shuffles by the keys first. ValueCounts is a partial that
// merges (MergeCounts), so it runs as a tree.
//
// Equal keys are found with the Encoder of package rows (open-addressing
// hash tables written for the key types, probed a chunk of rows at a time);
// quantiles are found by selection (quickselect) rather than sorting; the
// n best rows by a typed heap over the first column, with only the ties
// compared on the next columns. Rows are gathered by typed loops.
//
// Null handling follows pandas: quantiles skip nulls and NaNs;
// DropDuplicates and Unique treat nulls as equal to each other, and NaNs
// too; ValueCounts and the group-by operations drop or keep null keys as
// asked (pandas' dropna); NLargest and NSmallest rank nulls and NaNs
// below every value.
package distinct
