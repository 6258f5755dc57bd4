package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/dataframe"
)

// groupbyQuery is one question of the H2O group-by benchmark.
type groupbyQuery struct {
	id, desc string
	// sql is DuckDB's query; {t} stands for the source.
	sql string
	// shoal builds Shoal's query on the source frame; nil when Shoal cannot
	// express it yet, and then unsupported says why.
	shoal       func(df dataframe.DataFrame) dataframe.DataFrame
	unsupported string
}

// groupbyQueries are the H2O questions q1-q5, q7 and q10 (q6, q8 and q9 need
// medians, top-n and correlations). Sums of integers are cast to BIGINT in
// DuckDB (it sums into HUGEINT), and columns are named as in Shoal's answer.
var groupbyQueries = []groupbyQuery{
	{id: "q1", desc: "sum v1 by id1",
		sql: "SELECT id1, sum(v1)::BIGINT AS v1 FROM {t} GROUP BY id1",
		shoal: func(df dataframe.DataFrame) dataframe.DataFrame {
			return df.GroupBy("id1").Agg(dataframe.Sum("v1").As("v1"))
		}},
	{id: "q2", desc: "sum v1 by id1, id2",
		sql: "SELECT id1, id2, sum(v1)::BIGINT AS v1 FROM {t} GROUP BY id1, id2",
		shoal: func(df dataframe.DataFrame) dataframe.DataFrame {
			return df.GroupBy("id1", "id2").Agg(dataframe.Sum("v1").As("v1"))
		}},
	{id: "q3", desc: "sum v1, mean v3 by id3",
		sql: "SELECT id3, sum(v1)::BIGINT AS v1, avg(v3) AS v3 FROM {t} GROUP BY id3",
		shoal: func(df dataframe.DataFrame) dataframe.DataFrame {
			return df.GroupBy("id3").Agg(dataframe.Sum("v1").As("v1"), dataframe.Mean("v3").As("v3"))
		}},
	{id: "q4", desc: "mean v1, v2, v3 by id4",
		sql: "SELECT id4, avg(v1) AS v1, avg(v2) AS v2, avg(v3) AS v3 FROM {t} GROUP BY id4",
		shoal: func(df dataframe.DataFrame) dataframe.DataFrame {
			return df.GroupBy("id4").Agg(dataframe.Mean("v1").As("v1"), dataframe.Mean("v2").As("v2"), dataframe.Mean("v3").As("v3"))
		}},
	{id: "q5", desc: "sum v1, v2, v3 by id6",
		sql: "SELECT id6, sum(v1)::BIGINT AS v1, sum(v2)::BIGINT AS v2, sum(v3) AS v3 FROM {t} GROUP BY id6",
		shoal: func(df dataframe.DataFrame) dataframe.DataFrame {
			return df.GroupBy("id6").Agg(dataframe.Sum("v1").As("v1"), dataframe.Sum("v2").As("v2"), dataframe.Sum("v3").As("v3"))
		}},
	{id: "q7", desc: "max v1 - min v2 by id3",
		sql: "SELECT id3, max(v1) - min(v2) AS range_v1_v2 FROM {t} GROUP BY id3",
		shoal: func(df dataframe.DataFrame) dataframe.DataFrame {
			return df.GroupBy("id3").Agg(dataframe.Max("v1").As("max_v1"), dataframe.Min("v2").As("min_v2")).
				Select("id3", dataframe.Col("max_v1").Sub(dataframe.Col("min_v2")).Alias("range_v1_v2"))
		}},
	{id: "q10", desc: "sum v3, count by id1..id6",
		sql: "SELECT id1, id2, id3, id4, id5, id6, sum(v3) AS v3, count(*) AS count FROM {t} GROUP BY id1, id2, id3, id4, id5, id6",
		shoal: func(df dataframe.DataFrame) dataframe.DataFrame {
			return df.GroupBy("id1", "id2", "id3", "id4", "id5", "id6").Agg(dataframe.Sum("v3").As("v3"), dataframe.Size().As("count"))
		}},
}

// groupbySuite runs the H2O questions on the group-by table read from CSV,
// from Parquet, and from memory (a DuckDB table and a persisted Shoal frame,
// both loaded from the Parquet file, untimed). DuckDB's answer is
// materialized into a temporary table (CREATE TABLE AS), Shoal's into an
// Arrow table.
func groupbySuite(ctx context.Context, h *harness) ([]*benchCase, string, func(), error) {
	d, err := h.groupbyData(ctx)
	if err != nil {
		return nil, "", nil, err
	}
	data := fmt.Sprintf("%s: %s rows, CSV %s, Parquet %s", d.name, rowsName(d.rows), fmtBytes(d.bytes), fileSize(d.parquet))
	src := &groupbySource{h: h, d: d}
	var cases []*benchCase
	for _, format := range h.cfg.formats {
		for _, q := range groupbyQueries {
			c := &benchCase{suite: "groupby", name: q.id + " " + format, note: q.desc, peerName: "duckdb",
				peer: src.duckQuery(format, q.sql)}
			if q.shoal != nil {
				c.shoal = src.shoalQuery(format, q.shoal)
			} else {
				c.unsupported = q.unsupported
			}
			cases = append(cases, c)
		}
	}
	return cases, data, src.release, nil
}

// groupbySource gives the queries their source, loading the in-memory
// copies on first use.
type groupbySource struct {
	h          *harness
	d          *dataset
	persisted  *dataframe.DataFrame
	duckLoaded bool
}

func (s *groupbySource) release() {
	if s.persisted != nil {
		s.persisted.Release()
		s.persisted = nil
	}
	if s.duckLoaded {
		_ = s.h.duck.exec(context.Background(), "DROP TABLE IF EXISTS g1")
		s.duckLoaded = false
	}
}

func (s *groupbySource) duckQuery(format, sql string) *engine {
	var from string
	switch format {
	case "csv":
		from = csvScan(s.d.csv, s.d.schema)
	case "parquet":
		from = parquetScan(s.d.parquet)
	default:
		from = "g1"
	}
	q := "CREATE OR REPLACE TEMP TABLE gb_result AS " + strings.ReplaceAll(sql, "{t}", from)
	h := s.h
	return &engine{
		setup: func(ctx context.Context) error {
			if format != "memory" || s.duckLoaded {
				return nil
			}
			if err := h.duck.exec(ctx, "CREATE OR REPLACE TABLE g1 AS SELECT * FROM "+parquetScan(s.d.parquet)); err != nil {
				return err
			}
			s.duckLoaded = true
			return nil
		},
		run: func(ctx context.Context) (any, error) { return nil, h.duck.exec(ctx, q) },
		answer: func(ctx context.Context, _ any) (*table, error) {
			return h.duck.query(ctx, "SELECT * FROM gb_result")
		},
		teardown: func() { _ = h.duck.exec(context.Background(), "DROP TABLE IF EXISTS gb_result") },
	}
}

func (s *groupbySource) shoalQuery(format string, query func(dataframe.DataFrame) dataframe.DataFrame) *engine {
	h := s.h
	return &engine{
		setup: func(ctx context.Context) error {
			if format != "memory" || s.persisted != nil {
				return nil
			}
			df, err := dataframe.ReadParquet(ctx, s.d.parquet)
			if err != nil {
				return err
			}
			p, err := df.Persist(ctx, h.exec)
			if err != nil {
				return err
			}
			s.persisted = &p
			return nil
		},
		run: func(ctx context.Context) (any, error) {
			var df dataframe.DataFrame
			if format == "memory" {
				df = *s.persisted
			} else {
				var err error
				if df, err = shoalFrame(ctx, s.d, format); err != nil {
					return nil, err
				}
			}
			return query(df).Compute(ctx, h.exec)
		},
		answer: arrowAnswer,
	}
}

// arrowAnswer converts an Arrow table answer and releases it.
func arrowAnswer(_ context.Context, v any) (*table, error) {
	t := v.(arrow.Table)
	defer t.Release()
	return tableFromArrow(t)
}
