// Package parquet reads and writes Parquet files as Arrow records.
//
// Reading happens in two steps. PlanRead looks at the footers of the files
// (a list of paths or glob patterns such as "data/**/*.parquet"), checks
// that they have the same columns, leaves out the row groups and pages
// that a filter excludes, and cuts the rest into parts. ReadPart reads one
// part into one Arrow record; parts can be read in parallel, and since a
// Plan is plain data they can be read in other processes too.
//
//	plan, err := parquet.PlanRead(ctx, storage.Local{}, []string{"data/*.parquet"}, parquet.Options{
//		Columns: []string{"id1", "v1"},
//		Filter:  []parquet.Bound{{Column: "v1", Op: ">", Value: 3}},
//	})
//	for i := range plan.Parts {
//		rec, err := parquet.ReadPart(ctx, storage.Local{}, plan, i, memory.DefaultAllocator)
//		...
//		rec.Release()
//	}
//
// # Types
//
// Columns are read as these Arrow types: BOOLEAN as bool; INT32 and INT64
// as int32 and int64, or int8, int16, uint8 … uint64 as their integer
// annotation says; FLOAT and DOUBLE as float32 and float64; text (STRING,
// ENUM, JSON) as utf8, or as dictionary<int32, utf8> when it is
// dictionary-encoded in every row group read (see Options.PlainStrings);
// other BYTE_ARRAY as binary; FIXED_LEN_BYTE_ARRAY as fixed_size_binary;
// DATE as date32; TIME as time32 or time64; TIMESTAMP as timestamp with its
// unit, with time zone "UTC" when it is adjusted to UTC and without a time
// zone otherwise; legacy INT96 timestamps as timestamp[ns]; DECIMAL as
// float64, or decimal128 with Options.ExactDecimals. Nested columns
// (lists, maps, structs) cannot be read yet: leave them out of
// Options.Columns.
//
// A dictionary column of a record has its own dictionary, which holds each
// value once; records of different parts have different dictionaries.
//
// Files in key=value directories (Hive partitioning, as written by
// WritePartitioned, Spark or DuckDB) get a column per key, int64 when all
// its values are integers and text otherwise; a filter on such a column
// skips whole files without opening them.
//
// # Writing
//
// Write and Writer write records to one file; WritePartitioned splits them
// into key=value directories. Text columns are dictionary-encoded, and
// every file carries the statistics and page index that let PlanRead skip
// what a filter excludes.
//
// # Errors
//
// Errors name the file, and the column when there is one. A file that is
// not Parquet is ErrNotParquet, a damaged one ErrCorrupt; an unknown or
// unsupported column is a *ColumnError listing the columns there are, and
// files of one read with different columns a *SchemaMismatchError.
package parquet
