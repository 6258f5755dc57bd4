// Package window holds the time-series kernels of the dataframe:
// resampling a time column into bins (Resample) and rolling windows
// (Rolling), over Arrow record batches, with pandas' semantics.
//
// Resampling runs as a tree over the partitions of a frame: Resample
// aggregates one batch into a partial state (one row per bin that holds
// rows, the bin's start and the state of each aggregate), MergeResample
// combines states in partition order (a bin may span partitions), and
// FinalizeResample makes one row per bin from the first to the last,
// empty bins included, labelled as pandas labels them. Rules (ParseRule)
// are pandas' offset aliases: fixed durations (30s, 15min, 1h) counted in
// absolute time, calendar days, weeks, months, quarters and years in the
// time column's zone, correct across daylight-saving changes and year
// boundaries; see Rule for the closed side and label of each.
//
// Rolling windows run partition by partition with the edge rows of the
// partitions before (map-overlap): EdgeRows cuts from a partition, and
// the edges it was given, the rows the next partition's windows reach,
// and Rolling of that partition with those edges gives the rows that
// rolling over the whole frame would, without collecting it.
//
// Nulls are skipped by every aggregate; NaN is a value, as in package agg
// (pandas treats NaN as missing). The kernels read typed buffers: a bin
// lookup per bin, not per row, for sorted times; one typed loop per run
// of rows in a bin; sliding sums, Welford variances and monotonic deques
// for rolling windows.
package window
