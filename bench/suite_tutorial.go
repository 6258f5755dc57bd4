package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/internal/tsdata"
)

// tutorialSuite is the tutorial workload on the nine CSV files of a year of
// minute data: read the glob with a parsed timestamp, take the mean of
// temperature, then the monthly min and max of (temperature - mean). The
// tutorial does the last step with set_index("timestamp") and
// resample("ME") (months labelled by their last day), which Shoal runs as
// such; the same answer through a group-by on the month is a second case.
func tutorialSuite(ctx context.Context, h *harness) ([]*benchCase, string, func(), error) {
	dir, err := h.tutorialData()
	if err != nil {
		return nil, "", nil, err
	}
	glob := filepath.Join(dir, "*.part")
	data := fmt.Sprintf("%s: %d CSV files, %s rows (a year, %d readings a minute; -rows does not apply)", dir, tsdata.Files,
		itoa(tsdata.Rows()*h.tutorialRate()), h.tutorialRate())
	src := csvScan(glob, tutorialSchema())
	read := func(ctx context.Context) (dataframe.DataFrame, error) {
		return dataframe.ReadCSV(ctx, glob, dataframe.CSVOptions{ParseDates: map[string]string{"timestamp": tsdata.TimestampLayout}})
	}
	duckQuery := func(sql string) *engine {
		return &engine{
			run: func(ctx context.Context) (any, error) {
				return nil, h.duck.exec(ctx, "CREATE OR REPLACE TEMP TABLE tut_result AS "+sql)
			},
			answer:   func(ctx context.Context, _ any) (*table, error) { return h.duck.query(ctx, "SELECT * FROM tut_result") },
			teardown: func() { _ = h.duck.exec(context.Background(), "DROP TABLE IF EXISTS tut_result") },
		}
	}
	monthly := fmt.Sprintf(`WITH m AS (SELECT avg(temperature) AS mean FROM %[1]s)
		SELECT date_trunc('month', timestamp)::TIMESTAMP AS month, min(temperature - mean) AS min, max(temperature - mean) AS max
		FROM %[1]s, m GROUP BY month`, src)
	monthEnd := fmt.Sprintf(`WITH m AS (SELECT avg(temperature) AS mean FROM %[1]s)
		SELECT last_day(timestamp)::TIMESTAMP AS timestamp, min(temperature - mean) AS min, max(temperature - mean) AS max
		FROM %[1]s, m GROUP BY 1`, src)
	cases := []*benchCase{
		{suite: "tutorial", name: "mean temperature", note: "read the glob, mean of temperature",
			peerName: "duckdb", peer: duckQuery(fmt.Sprintf("SELECT avg(temperature) AS temperature FROM %s", src)),
			shoal: &engine{
				run: func(ctx context.Context) (any, error) {
					df, err := read(ctx)
					if err != nil {
						return nil, err
					}
					return df.Agg(dataframe.Mean("temperature").As("temperature")).Compute(ctx, h.exec)
				},
				answer: arrowAnswer,
			}},
		{suite: "tutorial", name: "monthly min, max by group-by", note: "mean, then min and max of (temperature - mean) grouped by month",
			peerName: "duckdb", peer: duckQuery(monthly),
			shoal: &engine{
				run: func(ctx context.Context) (any, error) {
					df, err := read(ctx)
					if err != nil {
						return nil, err
					}
					mean, err := df.Column("temperature").Mean().Float64(ctx, h.exec)
					if err != nil {
						return nil, err
					}
					return df.
						WithColumn("month", dataframe.Col("timestamp").Dt().Truncate("month")).
						WithColumn("dev", dataframe.Col("temperature").Sub(mean)).
						GroupBy("month").
						Agg(dataframe.Min("dev").As("min"), dataframe.Max("dev").As("max")).
						Compute(ctx, h.exec)
				},
				answer: arrowAnswer,
			}},
		{suite: "tutorial", name: "monthly min, max by resample", note: "set_index(timestamp), mean, then resample(ME) of (temperature - mean): min, max",
			peerName: "duckdb", peer: duckQuery(monthEnd),
			shoal: &engine{
				run: func(ctx context.Context) (any, error) {
					df, err := read(ctx)
					if err != nil {
						return nil, err
					}
					if df, err = df.SetIndex(ctx, h.exec, "timestamp"); err != nil {
						return nil, err
					}
					mean, err := df.Column("temperature").Mean().Float64(ctx, h.exec)
					if err != nil {
						return nil, err
					}
					return df.
						WithColumn("dev", dataframe.Col("temperature").Sub(mean)).
						Resample("ME").
						Agg(dataframe.Min("dev").As("min"), dataframe.Max("dev").As("max")).
						Compute(ctx, h.exec)
				},
				answer: arrowAnswer,
			}},
	}
	return cases, data, func() {}, nil
}
