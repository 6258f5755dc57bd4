package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/dataframe"
)

// joinQuery is one question of the H2O join benchmark.
type joinQuery struct {
	id, desc string
	// sql is DuckDB's query; {x}, {small}, {medium} and {big} stand for
	// the tables.
	sql string
	// right is the table joined with x ("small", "medium", "big"), on
	// the key column, as a left join when left is set.
	right, on string
	left      bool
	// every > 0 keeps only the right rows whose key is a multiple of it
	// (a 100k-row side cut from the big table, the same way in both
	// engines).
	every int
}

// joinQueries are the H2O join questions. Each answer is checked through
// its row count and the sums of v1 and v2 (as the benchmark's own chk
// does): the answers have up to N rows.
var joinQueries = []joinQuery{
	{id: "q1", desc: "small inner on int",
		sql: "SELECT x.*, small.id4 AS small_id4, small.v2 FROM {x} AS x JOIN {small} AS small USING (id1)", right: "small", on: "id1"},
	{id: "q2", desc: "medium inner on int",
		sql: "SELECT x.*, medium.id1 AS medium_id1, medium.id4 AS medium_id4, medium.id5 AS medium_id5, medium.v2 FROM {x} AS x JOIN {medium} AS medium USING (id2)", right: "medium", on: "id2"},
	{id: "q3", desc: "medium outer on int",
		sql: "SELECT x.*, medium.id1 AS medium_id1, medium.id4 AS medium_id4, medium.id5 AS medium_id5, medium.v2 FROM {x} AS x LEFT JOIN {medium} AS medium USING (id2)", right: "medium", on: "id2", left: true},
	{id: "q4", desc: "medium inner on string",
		sql: "SELECT x.*, medium.id1 AS medium_id1, medium.id2 AS medium_id2, medium.id4 AS medium_id4, medium.v2 FROM {x} AS x JOIN {medium} AS medium USING (id5)", right: "medium", on: "id5"},
	{id: "q5", desc: "big inner on int",
		sql: "SELECT x.*, big.id1 AS big_id1, big.id2 AS big_id2, big.id4 AS big_id4, big.id5 AS big_id5, big.id6 AS big_id6, big.v2 FROM {x} AS x JOIN {big} AS big USING (id3)", right: "big", on: "id3"},
	{id: "x100k-inner", desc: "10M x 100k-row side (big rows with id3 % 100 = 0), inner on int (not an H2O question)",
		sql:   "SELECT x.*, big.id1 AS big_id1, big.id2 AS big_id2, big.id4 AS big_id4, big.id5 AS big_id5, big.id6 AS big_id6, big.v2 FROM {x} AS x JOIN (SELECT * FROM {big} WHERE id3 % 100 = 0) AS big USING (id3)",
		right: "big", on: "id3", every: 100},
	{id: "x100k-left", desc: "10M x 100k-row side, left on int (not an H2O question)",
		sql:   "SELECT x.*, big.id1 AS big_id1, big.id2 AS big_id2, big.id4 AS big_id4, big.id5 AS big_id5, big.id6 AS big_id6, big.v2 FROM {x} AS x LEFT JOIN (SELECT * FROM {big} WHERE id3 % 100 = 0) AS big USING (id3)",
		right: "big", on: "id3", left: true, every: 100},
	{id: "q5-left", desc: "big left on int (not an H2O question)",
		sql: "SELECT x.*, big.id1 AS big_id1, big.id2 AS big_id2, big.id4 AS big_id4, big.id5 AS big_id5, big.id6 AS big_id6, big.v2 FROM {x} AS x LEFT JOIN {big} AS big USING (id3)", right: "big", on: "id3", left: true},
}

// joinChecksum is the answer both engines give of a join's result: rows,
// values of v2 (unmatched rows of an outer join have none), sums of v1 and
// v2.
const joinChecksum = "SELECT count(*) AS rows, count(v2) AS v2_values, sum(v1) AS v1, sum(v2) AS v2 FROM join_result"

// joinSuite runs the H2O join questions on the join tables read from
// Parquet. Shoal has no joins yet: its side says so, DuckDB's runs so that
// the data and the reference answers are ready.
// Shoal reads both tables from Parquet and computes the joined table
// (DuckDB creates it as a temporary table); the checksum is not timed.
func joinSuite(ctx context.Context, h *harness) ([]*benchCase, string, func(), error) {
	t, err := h.joinData(ctx)
	if err != nil {
		return nil, "", nil, err
	}
	data := fmt.Sprintf("x %s (%s rows), small %s (%s), medium %s (%s), big %s (%s), read from Parquet",
		t.x.name, itoa(t.x.rows), t.small.name, itoa(t.small.rows), t.medium.name, itoa(t.medium.rows), t.big.name, itoa(t.big.rows))
	r := strings.NewReplacer("{x}", parquetScan(t.x.parquet), "{small}", parquetScan(t.small.parquet),
		"{medium}", parquetScan(t.medium.parquet), "{big}", parquetScan(t.big.parquet))
	var cases []*benchCase
	tables := map[string]*dataset{"small": t.small, "medium": t.medium, "big": t.big}
	for _, q := range joinQueries {
		query := "CREATE OR REPLACE TEMP TABLE join_result AS " + r.Replace(q.sql)
		right := tables[q.right]
		how := "inner"
		if q.left {
			how = "left"
		}
		cases = append(cases, &benchCase{suite: "join", name: q.id + " parquet", note: q.desc,
			shoal: &engine{
				run: func(ctx context.Context) (any, error) {
					x, err := dataframe.ReadParquet(ctx, t.x.parquet)
					if err != nil {
						return nil, err
					}
					y, err := dataframe.ReadParquet(ctx, right.parquet)
					if err != nil {
						return nil, err
					}
					if q.every > 0 {
						y = y.Filter(dataframe.Col(q.on).Mod(q.every).Eq(0))
					}
					return x.Merge(y, dataframe.MergeOptions{How: how, On: []string{q.on}, Suffixes: [2]string{"", "_" + q.right}}).
						Compute(ctx, h.exec)
				},
				answer: func(ctx context.Context, v any) (*table, error) {
					res := v.(arrow.Table)
					defer res.Release()
					sum, err := dataframe.FromTable(res, 1).Agg(dataframe.Size().As("rows"), dataframe.Count("v2").As("v2_values"),
						dataframe.Sum("v1").As("v1"), dataframe.Sum("v2").As("v2")).Compute(ctx, h.exec)
					if err != nil {
						return nil, err
					}
					return arrowAnswer(ctx, sum)
				},
			},
			peerName: "duckdb",
			peer: &engine{
				run:      func(ctx context.Context) (any, error) { return nil, h.duck.exec(ctx, query) },
				answer:   func(ctx context.Context, _ any) (*table, error) { return h.duck.query(ctx, joinChecksum) },
				teardown: func() { _ = h.duck.exec(context.Background(), "DROP TABLE IF EXISTS join_result") },
			}})
	}
	return cases, data, func() {}, nil
}
