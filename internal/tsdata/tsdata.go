// Package tsdata writes the time series of the Dask tutorial workload: nine
// CSV files, 0.part to 8.part, with one row per minute of the year 2000,
// from a seed, so that examples, tests and benchmarks can make the data in a
// fraction of a second instead of shipping it.
//
// Each file has the header
//
//	timestamp,id,name,x,y,temperature
//
// and covers one ninth of the time range, in order: 0.part starts at
// 2000-01-01 00:00:00, 8.part ends at 2000-12-30 23:59:00 (the range ends
// before 2000-12-31, as dask.datasets.timeseries does), 58,400 rows each.
// timestamp is written as "2006-01-02 15:04:05" (UTC, no zone); id is an
// integer drawn around 1000 (a Poisson-like bell of standard deviation
// about 32); name is one of 26 first names; x and y are uniform in [-1, 1)
// with 6 decimals; temperature in degrees Celsius is a seasonal curve (cold
// in January, warm in July) plus a daily cycle and Gaussian noise, with 3
// decimals.
//
// The same seed gives the same bytes on every platform.
package tsdata

import (
	"bufio"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Files is the number of files Write makes.
const Files = 9

// Header is the first line of every file.
const Header = "timestamp,id,name,x,y,temperature"

// TimestampLayout is the Go time layout of the timestamp column.
const TimestampLayout = "2006-01-02 15:04:05"

var (
	// Start is the first timestamp, 2000-01-01 00:00:00 UTC.
	Start = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	// End is the end of the range, 2000-12-31 00:00:00 UTC, excluded.
	End = time.Date(2000, 12, 31, 0, 0, 0, 0, time.UTC)
)

// Names are the values of the name column.
var Names = []string{
	"Alice", "Bob", "Charlie", "Dan", "Edith", "Frank", "George", "Hannah",
	"Ingrid", "Jerry", "Kevin", "Laura", "Michael", "Norbert", "Oliver",
	"Patricia", "Quinn", "Ray", "Sarah", "Tim", "Ursula", "Victor", "Wendy",
	"Xavier", "Yvonne", "Zelda",
}

// Rows returns the total number of rows of the files (one per minute).
func Rows() int { return int(End.Sub(Start) / time.Minute) }

// RowsPerFile returns the number of rows of each file.
func RowsPerFile() int { return Rows() / Files }

// Write writes the files 0.part .. 8.part into dir (created if needed) from
// seed and returns their paths in order. Each file is written under a
// temporary name and renamed when complete, so a file with the final name is
// always whole.
func Write(dir string, seed uint64) ([]string, error) { return WriteRate(dir, seed, 1) }

// WriteRate is Write with perMinute readings a minute, evenly spaced
// (10 gives a reading every 6 seconds and 5,256,000 rows); WriteRate(dir,
// seed, 1) is Write(dir, seed).
func WriteRate(dir string, seed uint64, perMinute int) ([]string, error) {
	if perMinute < 1 || 60%perMinute != 0 {
		return nil, fmt.Errorf("tsdata: %d readings a minute; give a divisor of 60", perMinute)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("tsdata: %w", err)
	}
	paths := make([]string, Files)
	errs := make([]error, Files)
	var wg sync.WaitGroup
	for i := range Files {
		paths[i] = filepath.Join(dir, fmt.Sprintf("%d.part", i))
		wg.Go(func() { errs[i] = writeFile(paths[i], seed, i, perMinute) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return paths, nil
}

// writeFile writes file i to path through a temporary file.
func writeFile(path string, seed uint64, i, perMinute int) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("tsdata: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriterSize(tmp, 1<<20)
	if err := writeRows(w, seed, i, perMinute); err != nil {
		return fmt.Errorf("tsdata: write %s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("tsdata: write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("tsdata: write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("tsdata: %w", err)
	}
	return nil
}

// writeRows writes the header and the rows of file i. Each file draws from
// its own stream, so files can be written in parallel and still be the same.
func writeRows(w *bufio.Writer, seed uint64, i, perMinute int) error {
	rng := rand.New(rand.NewPCG(seed, 0x7473646174610000+uint64(i)))
	n := RowsPerFile() * perMinute
	step := time.Minute / time.Duration(perMinute)
	first := Start.Add(time.Duration(i*n) * step)
	year := End.Sub(Start).Minutes()
	b := make([]byte, 0, 128)
	b = append(b, Header...)
	b = append(b, '\n')
	if _, err := w.Write(b); err != nil {
		return err
	}
	for r := range n {
		minute := float64(i*n+r) / float64(perMinute)
		ts := first.Add(time.Duration(r) * step)
		b = ts.AppendFormat(b[:0], TimestampLayout)
		b = append(b, ',')
		id := int64(math.Round(1000 + math.Sqrt(1000)*rng.NormFloat64()))
		b = strconv.AppendInt(b, id, 10)
		b = append(b, ',')
		b = append(b, Names[rng.IntN(len(Names))]...)
		b = append(b, ',')
		b = strconv.AppendFloat(b, round(2*rng.Float64()-1, 1e6), 'f', -1, 64)
		b = append(b, ',')
		b = strconv.AppendFloat(b, round(2*rng.Float64()-1, 1e6), 'f', -1, 64)
		b = append(b, ',')
		b = strconv.AppendFloat(b, round(temperature(minute, year, rng), 1e3), 'f', -1, 64)
		b = append(b, '\n')
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// temperature is the seasonal curve at the given minute of the year (about
// 2 °C in mid January, 22 °C in mid July), a daily cycle of ±4 °C peaking
// mid afternoon, and Gaussian noise of 1.5 °C.
func temperature(minute, year float64, rng *rand.Rand) float64 {
	const day = 24 * 60
	season := 12 - 10*math.Cos(2*math.Pi*(minute-15*day)/year)
	daily := -4 * math.Cos(2*math.Pi*(math.Mod(minute, day)-3*60)/day)
	return season + daily + 1.5*rng.NormFloat64()
}

// round rounds v to the nearest multiple of 1/scale; the result prints
// with at most log10(scale) decimals.
func round(v, scale float64) float64 {
	r := math.Round(v*scale) / scale
	if r == 0 {
		return 0 // no "-0"
	}
	return r
}
