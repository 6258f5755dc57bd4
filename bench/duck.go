package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	_ "github.com/duckdb/duckdb-go/v2" // registers the "duckdb" driver
)

// duck is an in-memory DuckDB database in this process, used through one
// connection so that temporary tables stay visible.
type duck struct {
	db      *sql.DB
	conn    *sql.Conn
	version string
}

func openDuck(ctx context.Context, threads int) (*duck, error) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, fmt.Errorf("open duckdb: %w", err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open duckdb: %w", err)
	}
	d := &duck{db: db, conn: conn}
	if err := d.exec(ctx, fmt.Sprintf("SET threads = %d", threads)); err != nil {
		d.close()
		return nil, err
	}
	if err := conn.QueryRowContext(ctx, "SELECT version()").Scan(&d.version); err != nil {
		d.close()
		return nil, fmt.Errorf("duckdb version: %w", err)
	}
	return d, nil
}

func (d *duck) close() {
	d.conn.Close()
	d.db.Close()
}

func (d *duck) exec(ctx context.Context, query string) error {
	if _, err := d.conn.ExecContext(ctx, query); err != nil {
		return fmt.Errorf("duckdb: %s: %w", oneLine(query), err)
	}
	return nil
}

// query runs a query and returns its rows as a comparable table.
func (d *duck) query(ctx context.Context, query string) (*table, error) {
	rows, err := d.conn.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("duckdb: %s: %w", oneLine(query), err)
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("duckdb: %s: %w", oneLine(query), err)
	}
	t := newTable(names...)
	vals := make([]any, len(names))
	ptrs := make([]any, len(names))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("duckdb: %s: %w", oneLine(query), err)
		}
		if err := t.appendRow(vals...); err != nil {
			return nil, fmt.Errorf("duckdb: %s: %w", oneLine(query), err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("duckdb: %s: %w", oneLine(query), err)
	}
	return t, nil
}

// sqlString quotes s as an SQL string literal.
func sqlString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// oneLine shortens a query for messages.
func oneLine(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	if len(q) > 200 {
		q = q[:200] + "..."
	}
	return q
}
