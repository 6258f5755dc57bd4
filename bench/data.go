package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/internal/h2o"
	"github.com/shoal-data/shoal/internal/tsdata"
)

// dataset is one table written as CSV and as Parquet (by DuckDB, from the
// CSV, so that both engines read the same files).
type dataset struct {
	name    string
	schema  *arrow.Schema
	csv     string
	parquet string
	rows    int
	bytes   int64 // size of the CSV file
}

// seedDir is the directory of the data made from the configured seed.
func (h *harness) seedDir() string {
	return filepath.Join(h.cfg.dataDir, fmt.Sprintf("seed%d", h.cfg.seed))
}

// exists says whether a complete file is there (files are written under a
// temporary name and renamed when complete).
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// writeAtomically writes a file through fn into a temporary file renamed to
// path when fn succeeds.
func writeAtomically(path string, fn func(w *bufio.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	err = fn(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// makeDataset writes name.csv with write unless it exists, then name.parquet
// from it with DuckDB unless it exists.
func (h *harness) makeDataset(ctx context.Context, name string, schema *arrow.Schema, rows int, write func(w *bufio.Writer) error) (*dataset, error) {
	d := &dataset{name: name, schema: schema, rows: rows,
		csv: filepath.Join(h.seedDir(), name+".csv"), parquet: filepath.Join(h.seedDir(), name+".parquet")}
	if !exists(d.csv) {
		start := time.Now()
		if err := writeAtomically(d.csv, write); err != nil {
			return nil, err
		}
		h.logf("data: wrote %s in %s", d.csv, fmtDuration(time.Since(start)))
	}
	if !exists(d.parquet) {
		start := time.Now()
		tmp := d.parquet + ".tmp"
		q := fmt.Sprintf("COPY (SELECT * FROM %s) TO %s (FORMAT parquet, ROW_GROUP_SIZE %d)",
			csvScan(d.csv, schema), sqlString(tmp), rowGroupSize(rows))
		if err := h.duck.exec(ctx, q); err != nil {
			os.Remove(tmp)
			return nil, err
		}
		if err := os.Rename(tmp, d.parquet); err != nil {
			return nil, err
		}
		h.logf("data: wrote %s in %s", d.parquet, fmtDuration(time.Since(start)))
	}
	st, err := os.Stat(d.csv)
	if err != nil {
		return nil, err
	}
	d.bytes = st.Size()
	return d, nil
}

// rowGroupSize is the Parquet row group size: about 8 row groups, between
// 1,000 and 1,000,000 rows, so that small files still have several.
func rowGroupSize(rows int) int {
	return min(1_000_000, max(rows/8, 1000))
}

// csvBlockSize is Shoal's CSV block size for a file: about 8 blocks (so that
// small files are read in parallel too), between 256 KiB and the default
// 64 MiB.
func csvBlockSize(fileBytes int64) int64 {
	return min(64<<20, max(fileBytes/8, 256<<10))
}

// duckType is the DuckDB type of an Arrow type of our schemas.
func duckType(t arrow.DataType) string {
	switch t.ID() {
	case arrow.STRING:
		return "VARCHAR"
	case arrow.INT64:
		return "BIGINT"
	case arrow.INT32:
		return "INTEGER"
	case arrow.FLOAT64:
		return "DOUBLE"
	case arrow.TIMESTAMP:
		return "TIMESTAMP"
	}
	panic(fmt.Sprintf("no DuckDB type for %v", t))
}

// csvScan is DuckDB's read_csv of files with a header and the columns of
// schema (so that nothing is left to type detection).
func csvScan(path string, schema *arrow.Schema) string {
	var cols []string
	for _, f := range schema.Fields() {
		cols = append(cols, fmt.Sprintf("%s: %s", sqlString(f.Name), sqlString(duckType(f.Type))))
	}
	return fmt.Sprintf("read_csv(%s, header = true, timestampformat = '%%Y-%%m-%%d %%H:%%M:%%S', columns = {%s})",
		sqlString(path), strings.Join(cols, ", "))
}

func parquetScan(path string) string {
	return fmt.Sprintf("read_parquet(%s)", sqlString(path))
}

// groupbyData is the H2O group-by table G1_<rows>_1e2_0_0.
func (h *harness) groupbyData(ctx context.Context) (*dataset, error) {
	name := fmt.Sprintf("G1_%s_1e2_0_0", rowsName(h.cfg.rows))
	return h.makeDataset(ctx, name, h2o.Schema(), h.cfg.rows, func(w *bufio.Writer) error {
		return h2o.WriteCSV(w, h.cfg.rows, h2o.DefaultK, h.cfg.seed)
	})
}

// tutorialData is the directory of the tutorial's time series, 0.part to
// 8.part.
// tutorialData writes the nine files of the tutorial workload: ten readings
// a minute (5,256,000 rows), or one (525,600) in the short mode.
func (h *harness) tutorialData() (string, error) {
	rate := h.tutorialRate()
	dir := filepath.Join(h.seedDir(), fmt.Sprintf("timeseries-%d", rate))
	complete := true
	for i := range tsdata.Files {
		complete = complete && exists(filepath.Join(dir, fmt.Sprintf("%d.part", i)))
	}
	if complete {
		return dir, nil
	}
	start := time.Now()
	if _, err := tsdata.WriteRate(dir, h.cfg.seed, rate); err != nil {
		return "", err
	}
	h.logf("data: wrote %s in %s", dir, fmtDuration(time.Since(start)))
	return dir, nil
}

func (h *harness) tutorialRate() int {
	if h.cfg.short {
		return 1
	}
	return 10
}

// tutorialSchema is the schema of the time series files.
func tutorialSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "timestamp", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String},
		{Name: "x", Type: arrow.PrimitiveTypes.Float64},
		{Name: "y", Type: arrow.PrimitiveTypes.Float64},
		{Name: "temperature", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
}

func statFile(path string) (int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}
