// Command gen writes the DuckDB-made Parquet files that the parquet package's
// interoperability tests read. It lives in its own module so that the library
// does not depend on DuckDB. Run it from this directory:
//
//	go run . -out ..
//
// The expected values in interop_test.go are written by hand from the SQL
// below; change both together.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	_ "github.com/duckdb/duckdb-go/v2"
)

// typesTable has one row per case; every column is NULL in row 3.
const typesTable = `
CREATE TABLE types AS SELECT * FROM (VALUES
 (1, true, (-8)::TINYINT, (-16)::SMALLINT, (-32)::INTEGER, (-64)::BIGINT,
  8::UTINYINT, 16::USMALLINT, 32::UINTEGER, 64::UBIGINT,
  1.5::FLOAT, (-2.25)::DOUBLE, 'alpha', '\x00\x01\xFF'::BLOB,
  DATE '2024-02-29', TIMESTAMP '2024-02-29 12:34:56.789012',
  TIMESTAMP_MS '2024-02-29 12:34:56.789', TIMESTAMP_NS '2024-02-29 12:34:56.789012345',
  TIMESTAMPTZ '2024-02-29 12:34:56.789012+00',
  12.34::DECIMAL(4,2), 123456789012.345::DECIMAL(18,3),
  12345678901234567890.1234567891::DECIMAL(38,10)),
 (2, false, (-128)::TINYINT, (-32768)::SMALLINT, (-2147483648)::INTEGER, (-9223372036854775808)::BIGINT,
  255::UTINYINT, 65535::USMALLINT, 4294967295::UINTEGER, 18446744073709551615::UBIGINT,
  (-0.125)::FLOAT, 1e300::DOUBLE, 'héllo, 世界', ''::BLOB,
  DATE '1900-01-01', TIMESTAMP '1969-07-20 20:17:40',
  TIMESTAMP_MS '1969-07-20 20:17:40.5', TIMESTAMP_NS '1969-07-20 20:17:40.000000001',
  TIMESTAMPTZ '2000-01-01 00:00:00+05',
  (-99.99)::DECIMAL(4,2), (-999999999999999.999)::DECIMAL(18,3),
  (-1234567890123456789012345678.0123456789)::DECIMAL(38,10)),
 (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
 (4, true, 127::TINYINT, 32767::SMALLINT, 2147483647::INTEGER, 9223372036854775807::BIGINT,
  0::UTINYINT, 0::USMALLINT, 0::UINTEGER, 0::UBIGINT,
  0::FLOAT, 0::DOUBLE, '', 'abc'::BLOB,
  DATE '1970-01-01', TIMESTAMP '1970-01-01 00:00:00',
  TIMESTAMP_MS '1970-01-01 00:00:00', TIMESTAMP_NS '1970-01-01 00:00:00',
  TIMESTAMPTZ '1970-01-01 00:00:00+00',
  0::DECIMAL(4,2), 0.001::DECIMAL(18,3), 0.0000000001::DECIMAL(38,10))
) t(id, b, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, s, bin, d, ts, ts_ms, ts_ns, tstz, dec4, dec18, dec38)`

// encTable mixes dictionary-encoded and plain columns, with and without
// nulls, over two row groups.
const encTable = `
CREATE TABLE enc AS SELECT
  i::INTEGER AS i,
  'k' || (i % 5) AS s_dict,
  'value-' || i AS s_plain,
  CASE WHEN i % 7 = 0 THEN NULL ELSE 'n' || (i % 3) END AS s_null,
  (i % 4)::BIGINT AS i_dict,
  CASE WHEN i % 5 = 0 THEN NULL ELSE i * 1.5 END::DOUBLE AS f_null
FROM range(1000) t(i)`

// statsTable has several row groups with distinct ranges, for statistics
// pushdown.
const statsTable = `
CREATE TABLE stats AS SELECT
  i::BIGINT AS id,
  'name' || lpad(i::VARCHAR, 5, '0') AS name,
  CASE WHEN i < 2048 THEN NULL ELSE i END::BIGINT AS late,
  CASE WHEN i % 2 = 0 THEN 'NaN'::DOUBLE ELSE i::DOUBLE END AS f,
  DATE '2020-01-01' + (i // 100)::INTEGER AS d,
  'g' || (i // 1000) AS grp
FROM range(5000) t(i)`

// hiveTable is written partitioned by year and region.
const hiveTable = `
CREATE TABLE hive AS SELECT
  i::INTEGER AS id,
  2020 + (i % 2) AS year,
  CASE WHEN i % 3 = 0 THEN 'eu' WHEN i % 3 = 1 THEN 'us' ELSE 'a b/c' END AS region,
  i * 10 AS v
FROM range(12) t(i)`

// nestedTable has columns the reader does not support.
const nestedTable = `
CREATE TABLE nested AS SELECT
  1 AS id, [1, 2, 3] AS l, {'a': 1, 'b': 'x'} AS st`

func main() {
	out := flag.String("out", "..", "directory to write the files into")
	flag.Parse()
	if err := run(*out); err != nil {
		log.Fatal(err)
	}
}

func run(out string) error {
	ctx := context.Background()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return err
	}
	defer db.Close()
	// One connection: SET applies to it.
	db.SetMaxOpenConns(1)
	if err := os.RemoveAll(filepath.Join(out, "hive")); err != nil {
		return err
	}
	q := func(s string) string { return strings.ReplaceAll(s, "'", "''") }
	path := func(name string) string { return q(filepath.Join(out, name)) }
	stmts := []string{
		"SET TimeZone = 'UTC'",
		typesTable, encTable, statsTable, hiveTable, nestedTable,
		fmt.Sprintf("COPY types TO '%s' (FORMAT parquet, COMPRESSION snappy)", path("types_snappy.parquet")),
		fmt.Sprintf("COPY types TO '%s' (FORMAT parquet, COMPRESSION zstd)", path("types_zstd.parquet")),
		fmt.Sprintf("COPY types TO '%s' (FORMAT parquet, COMPRESSION gzip)", path("types_gzip.parquet")),
		fmt.Sprintf("COPY types TO '%s' (FORMAT parquet, COMPRESSION uncompressed)", path("types_none.parquet")),
		fmt.Sprintf("COPY types TO '%s' (FORMAT parquet, COMPRESSION zstd, PARQUET_VERSION V2)", path("types_v2.parquet")),
		fmt.Sprintf("COPY enc TO '%s' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 2048)", path("enc.parquet")),
		fmt.Sprintf("COPY enc TO '%s' (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE 2048, PARQUET_VERSION V2)", path("enc_v2.parquet")),
		fmt.Sprintf("COPY stats TO '%s' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 1024)", path("stats.parquet")),
		fmt.Sprintf("COPY hive TO '%s' (FORMAT parquet, PARTITION_BY (year, region))", path("hive")),
		fmt.Sprintf("COPY nested TO '%s' (FORMAT parquet)", path("nested.parquet")),
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	// Describe what was written, to check the files cover what the tests
	// expect (row groups, encodings, statistics).
	rows, err := db.QueryContext(ctx, fmt.Sprintf(`
SELECT regexp_replace(file_name, '.*/', ''), row_group_id, row_group_num_rows, path_in_schema, type, compression, encodings,
       stats_min_value, stats_max_value, stats_null_count
FROM parquet_metadata('%s/*.parquet') ORDER BY ALL`, q(out)))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var file, path, typ, comp, encs string
		var rg, n int64
		var minV, maxV sql.NullString
		var nulls sql.NullInt64
		if err := rows.Scan(&file, &rg, &n, &path, &typ, &comp, &encs, &minV, &maxV, &nulls); err != nil {
			return err
		}
		fmt.Printf("%-20s rg=%d rows=%-5d %-8s %-20s %-12s %-30s min=%q max=%q nulls=%v\n",
			file, rg, n, path, typ, comp, encs, minV.String, maxV.String, nulls.Int64)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	schema, err := db.QueryContext(ctx, fmt.Sprintf(`
SELECT name, type, repetition_type, converted_type, logical_type, scale, precision
FROM parquet_schema('%s/types_snappy.parquet')`, q(out)))
	if err != nil {
		return err
	}
	defer schema.Close()
	for schema.Next() {
		var name string
		var typ, rep, conv, logical sql.NullString
		var scale, prec sql.NullInt64
		if err := schema.Scan(&name, &typ, &rep, &conv, &logical, &scale, &prec); err != nil {
			return err
		}
		fmt.Printf("%-8s %-22s %-10s %-18s %s scale=%v precision=%v\n", name, typ.String, rep.String, conv.String, logical.String, scale.Int64, prec.Int64)
	}
	if err := schema.Err(); err != nil {
		return err
	}
	hive, err := db.QueryContext(ctx, fmt.Sprintf(`SELECT file FROM glob('%s/hive/**/*.parquet') ORDER BY 1`, q(out)))
	if err != nil {
		return err
	}
	defer hive.Close()
	for hive.Next() {
		var f string
		if err := hive.Scan(&f); err != nil {
			return err
		}
		fmt.Println(f)
	}
	return hive.Err()
}
