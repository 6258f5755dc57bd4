// Package dataframe is a lazy, partitioned DataFrame for Go, in the spirit
// of Dask and Polars: read CSV, Parquet, Arrow IPC or JSON-lines files (or
// build a frame from Go values), select, filter, compute columns, group
// and aggregate, then compute the result on an executor: the in-process
// goroutine pool (package local) or a cluster.
//
//	exec := local.New()
//	defer exec.Close()
//	orders, err := dataframe.ReadCSV(ctx, "orders/*.csv", dataframe.CSVOptions{
//		ParseDates: map[string]string{"ordered": "2006-01-02"},
//	})
//	...
//	byCountry := orders.
//		Filter(dataframe.Col("status").Eq("paid")).
//		GroupBy("country").
//		Agg(dataframe.Sum("amount").As("revenue"), dataframe.Size().As("orders"))
//	table, err := byCountry.Compute(ctx, exec) // an arrow.Table
//	fmt.Print(dataframe.FormatTable(table, 20))
//
// Every partition is an Arrow record batch. A DataFrame's columns and
// types are known before anything is computed, so mistakes the schema can
// reveal (an unknown column, adding a string to a number) are reported when
// the expression is built, by Err, and again by Compute, with the names and
// types involved.
//
// Computing optimizes the plan first (Explain shows the result): filters
// move into the readers (CSV rows are filtered while parsing; Parquet row
// groups whose statistics exclude the filter are not read), readers read
// only the columns used, consecutive elementwise steps run as one task per
// partition, a sub-plan used twice is computed once, and after a selective
// filter small partitions are coalesced. Aggregations run as a partial
// aggregation per partition followed by a tree of merges; GroupBy.SplitOut
// spreads a result with many groups over several partitions.
//
// Operations that move rows between partitions go through a shuffle that
// writes its rows to the executor's local directory and reads them back per
// output, so that they work on data larger than memory: SortValues,
// SetIndex (which also records the divisions of the index, so that Loc
// reads only the partitions that can match), Repartition, Merge (inner,
// left, right and outer joins: a small side is broadcast instead, and
// frames indexed alike are joined partition by partition), DropDuplicates,
// and the exact medians and quantiles of groups (GroupBy.Median). A full
// disk during a shuffle is a *ShuffleError that names the operation, the
// partition, the file and the reason, and the shuffle's files are removed
// whether the computation succeeds, fails or is cancelled.
//
// Time series: Resample bins rows by a rule ("15min", "1h", "1D", "W",
// "ME", "QE", "YE", in a time zone) and aggregates each bin, empty bins
// included, as pandas does; Rolling computes windows of rows or of time
// across partitions with the edge rows of the partitions before.
//
// Nulls follow SQL and pandas: aggregates skip them, comparisons with null
// are null, and a filter keeps only the rows where its predicate is true.
//
// For tests of your own pipelines, package dftest compares tables with a
// readable diff.
package dataframe
