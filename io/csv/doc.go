// Package csv reads CSV files into Arrow record batches, in parallel, and
// writes record batches as CSV.
//
// Reading happens in two steps. PlanRead looks at the files once: it expands
// glob patterns, reads the header lines, infers the column types from a
// sample and splits large files into blocks that start and end on row
// boundaries (also when quoted fields contain line breaks). ReadBlock then
// reads one block into one record; blocks are independent, so they can be
// read at the same time, on any machine that sees the files, and a Plan can
// be sent there (it implements encoding.BinaryMarshaler; ForBlock makes a
// small plan for one block).
//
//	plan, err := csv.PlanRead(ctx, storage.Local{}, []string{"data/*.csv"}, csv.Options{})
//	for i := range plan.Blocks {
//		rec, _, err := csv.ReadBlock(ctx, storage.Local{}, plan, i, csv.ReadOptions{Columns: []string{"id", "v"}})
//		...
//	}
//
// Types are inferred as int64, float64, bool (true/false in any of three
// cases), date32 (2006-01-02), timestamp[ns] (ISO 8601 with a 'T' or a space,
// optional fraction and zone; with a zone the type carries it) or string; a
// column that is empty in the sample is string. Options.Types, Options.Schema
// and Options.ParseDates override inference. Texts in Options.NullValues
// (by default "", NA, N/A, NULL, null, NaN, nan) are null, except quoted text
// in string columns: "" is an empty string.
//
// A malformed row, one with too many or too few fields, bad quoting or a
// value that is not of its column's type, is an error (*ParseError) that
// names the file, the line, the column and the text. With Options.BadRows
// set to Skip, such rows are dropped and reported as BadRow values instead.
//
// The format is RFC 4180 with these choices: lines end with "\n" or "\r\n";
// blank lines are skipped; a UTF-8 byte order mark is ignored; a quote may
// only open a field, and a doubled quote inside quotes is one quote.
package csv
