// Command h2oexpected writes the answers DuckDB gives to the H2O group-by
// questions on a seeded 100,000-row table, for the dataframe package's
// tests to compare Shoal's answers with (dataframe/testdata/h2o):
//
//	cd bench && go run ./h2oexpected -out ../dataframe/testdata/h2o
package main

import (
	"compress/gzip"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/shoal-data/shoal/internal/h2o"
)

// Rows, K and Seed make the table; the test makes the same one.
const (
	Rows = 100_000
	K    = 100
	Seed = 42
)

var queries = map[string]string{
	"q1":     "SELECT id1, sum(v1) AS v1 FROM x GROUP BY id1",
	"q2":     "SELECT id1, id2, sum(v1) AS v1 FROM x GROUP BY id1, id2",
	"q3":     "SELECT id3, sum(v1) AS v1, avg(v3) AS v3 FROM x GROUP BY id3",
	"q4":     "SELECT id4, avg(v1) AS v1, avg(v2) AS v2, avg(v3) AS v3 FROM x GROUP BY id4",
	"q5":     "SELECT id6, sum(v1) AS v1, sum(v2) AS v2, sum(v3) AS v3 FROM x GROUP BY id6",
	"q6":     "SELECT id4, id5, median(v3) AS median_v3, stddev_samp(v3) AS sd_v3 FROM x GROUP BY id4, id5",
	"q7":     "SELECT id3, max(v1) - min(v2) AS range_v1_v2 FROM x GROUP BY id3",
	"q8":     "SELECT id6, v3 AS largest2_v3 FROM (SELECT id6, v3, row_number() OVER (PARTITION BY id6 ORDER BY v3 DESC) AS r FROM x WHERE v3 IS NOT NULL) WHERE r <= 2",
	"q10":    "SELECT id1, id2, id3, id4, id5, id6, sum(v3) AS v3, count(*) AS count FROM x GROUP BY id1, id2, id3, id4, id5, id6",
	"filter": "SELECT id1, count(*) AS n, sum(v3) AS v3, min(v2) AS v2_min, max(v3) AS v3_max FROM x WHERE v1 >= 3 AND id4 < 50 AND v3 > 20.5 GROUP BY id1",
}

func main() {
	out := flag.String("out", "testdata/h2o", "directory of the answers")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "h2oexpected:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "h2oexpected")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "x.csv")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := h2o.WriteCSV(f, Rows, K, Seed); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, fmt.Sprintf(`CREATE TABLE x AS SELECT * FROM read_csv('%s', header = true, columns = {
		'id1': 'VARCHAR', 'id2': 'VARCHAR', 'id3': 'VARCHAR', 'id4': 'BIGINT', 'id5': 'BIGINT', 'id6': 'BIGINT',
		'v1': 'BIGINT', 'v2': 'BIGINT', 'v3': 'DOUBLE'})`, path)); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for name, q := range queries {
		if err := answer(ctx, db, q, filepath.Join(out, name+".csv")); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// answer writes a query's rows as gzipped CSV, floats with all their
// digits.
func answer(ctx context.Context, db *sql.DB, q, path string) error {
	rows, err := db.QueryContext(ctx, q+" ORDER BY ALL")
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	var b []byte
	for i, c := range cols {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, c...)
	}
	b = append(b, '\n')
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		for i, v := range vals {
			if i > 0 {
				b = append(b, ',')
			}
			switch v := v.(type) {
			case nil:
			case float64:
				b = strconv.AppendFloat(b, v, 'g', -1, 64)
			case string:
				b = append(b, v...)
			default:
				b = fmt.Append(b, v)
			}
		}
		b = append(b, '\n')
	}
	if err := rows.Err(); err != nil {
		return err
	}
	f, err := os.Create(path + ".gz")
	if err != nil {
		return err
	}
	z := gzip.NewWriter(f)
	if _, err := z.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := z.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
