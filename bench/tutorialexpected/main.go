// Command tutorialexpected writes the expected output of examples/tutorial,
// computed by DuckDB from the same generated files, so that the example's
// answer is checked against an independent engine:
//
//	cd bench && go run ./tutorialexpected -out ../examples/tutorial/testdata/expected.csv
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/shoal-data/shoal/internal/tsdata"
)

func main() {
	out := flag.String("out", "expected.csv", "where to write the expected table")
	seed := flag.Uint64("seed", 1, "seed of the generated data (the example's default is 1)")
	flag.Parse()
	if err := run(*out, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "tutorialexpected:", err)
		os.Exit(1)
	}
}

func run(out string, seed uint64) error {
	dir, err := os.MkdirTemp("", "tutorial-expected")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if _, err := tsdata.Write(dir, seed); err != nil {
		return err
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return err
	}
	defer db.Close()
	src := fmt.Sprintf(`read_csv('%s', header = true, columns = {'timestamp': 'TIMESTAMP', 'id': 'BIGINT',
		'name': 'VARCHAR', 'x': 'DOUBLE', 'y': 'DOUBLE', 'temperature': 'DOUBLE'})`, filepath.Join(dir, "*.part"))
	// pandas' resample("ME") labels a month by its last day at midnight.
	q := fmt.Sprintf(`WITH m AS (SELECT avg(temperature) AS mean FROM %[1]s)
		SELECT last_day(timestamp)::TIMESTAMP AS month, min(temperature - mean), max(temperature - mean)
		FROM %[1]s, m GROUP BY month ORDER BY month`, src)
	rows, err := db.QueryContext(context.Background(), q)
	if err != nil {
		return err
	}
	defer rows.Close()
	b := []byte("timestamp,min,max\n")
	for rows.Next() {
		var month time.Time
		var lo, hi float64
		if err := rows.Scan(&month, &lo, &hi); err != nil {
			return err
		}
		b = month.UTC().AppendFormat(b, "2006-01-02 15:04:05")
		b = append(b, ',')
		b = strconv.AppendFloat(b, lo, 'g', -1, 64)
		b = append(b, ',')
		b = strconv.AppendFloat(b, hi, 'g', -1, 64)
		b = append(b, '\n')
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return os.WriteFile(out, b, 0o644)
}
