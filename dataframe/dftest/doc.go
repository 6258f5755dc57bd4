// Package dftest helps you test code that produces tables: it compares a
// result with the table you expect and, when they differ, tells you how, in
// the spirit of pandas' assert_frame_equal.
//
//	got := runPipeline(t)
//	want := dftest.Table(t,
//		dftest.Strings("city", "Lima", "Oslo"),
//		dftest.Float64s("mean_temp", 19.5, nil), // nil is a null
//	)
//	dftest.AssertEqual(t, got, want, dftest.IgnoreRowOrder())
//
// A failing comparison reports, in this order, the columns missing or
// unexpected, columns whose types differ, the row counts when they
// differ, and the first differing rows with only their differing columns,
// got beside want:
//
//	column "n": got int32, want int64
//	1 of 3 rows differs:
//	  row  column     got   want
//	  1    mean_temp  19.4  19.5
//
// Tables may be arrow.Table values, record batches, slices of record
// batches, or any value with a method Table() arrow.Table. Floats are
// compared with a relative tolerance of 1e-9 (see Tolerance); nulls equal
// nulls and NaN equals NaN; chunk boundaries do not matter, and
// dictionary-encoded columns are compared by their values.
//
// Table, Record and the column constructors (Int64s, Float64s, Strings,
// Bools, Timestamps, Dates, Durations, and Column.As for any other type)
// build small expected tables in a few lines.
package dftest
