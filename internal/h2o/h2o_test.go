package h2o

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// collect returns the generated rows as CSV-like string fields.
func collect(t *testing.T, rows, k int, seed uint64, batchRows int) [][]string {
	t.Helper()
	var out [][]string
	err := Generate(rows, k, seed, batchRows, func(rec arrow.RecordBatch) error {
		defer rec.Release()
		if !rec.Schema().Equal(Schema()) {
			t.Fatalf("schema %v", rec.Schema())
		}
		if batchRows > 0 && int(rec.NumRows()) > batchRows {
			t.Fatalf("batch of %d rows, want at most %d", rec.NumRows(), batchRows)
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			var r []string
			for c := 0; c < 9; c++ {
				switch col := rec.Column(c).(type) {
				case *array.String:
					r = append(r, col.Value(i))
				case *array.Int64:
					r = append(r, strconv.FormatInt(col.Value(i), 10))
				case *array.Float64:
					r = append(r, strconv.FormatFloat(col.Value(i), 'f', -1, 64))
				}
			}
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGenerateMatchesCSV(t *testing.T) {
	tests := []struct {
		rows, k, batch int
		seed           uint64
	}{
		{0, 100, 10, 1},
		{1, 100, 10, 1},
		{1000, 100, 7, 42},
		{1000, 100, 0, 42},
		{5000, 10, 1024, 3},
		{3, 999, 2, 9},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d_%d_%d", tc.rows, tc.k, tc.batch), func(t *testing.T) {
			got := collect(t, tc.rows, tc.k, tc.seed, tc.batch)
			if len(got) != tc.rows {
				t.Fatalf("%d rows, want %d", len(got), tc.rows)
			}
			var buf bytes.Buffer
			if err := WriteCSV(&buf, tc.rows, tc.k, tc.seed); err != nil {
				t.Fatal(err)
			}
			recs, err := csv.NewReader(&buf).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(recs[0], ",") != "id1,id2,id3,id4,id5,id6,v1,v2,v3" {
				t.Fatalf("header %v", recs[0])
			}
			recs = recs[1:]
			if len(recs) != tc.rows {
				t.Fatalf("csv has %d rows, want %d", len(recs), tc.rows)
			}
			nk := max(tc.rows/tc.k, 1)
			for i, r := range recs {
				if strings.Join(r, ",") != strings.Join(got[i], ",") {
					t.Fatalf("row %d: csv %v, generated %v", i, r, got[i])
				}
				checkRanges(t, r, tc.k, nk)
			}
		})
	}
}

func checkRanges(t *testing.T, r []string, k, nk int) {
	t.Helper()
	id := func(s string, width, hi int) {
		if !strings.HasPrefix(s, "id") || len(s) != 2+width {
			t.Fatalf("id %q, want id and %d digits", s, width)
		}
		n, err := strconv.Atoi(s[2:])
		if err != nil || n < 1 || n > hi {
			t.Fatalf("id %q out of 1..%d", s, hi)
		}
	}
	in := func(s string, hi int) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > hi {
			t.Fatalf("%q out of 1..%d", s, hi)
		}
	}
	id(r[0], 3, k)
	id(r[1], 3, k)
	id(r[2], 10, nk)
	in(r[3], k)
	in(r[4], k)
	in(r[5], nk)
	in(r[6], 5)
	in(r[7], 15)
	v, err := strconv.ParseFloat(r[8], 64)
	if err != nil || v < 0 || v >= 100 {
		t.Fatalf("v3 %q", r[8])
	}
	if i := strings.IndexByte(r[8], '.'); i >= 0 && (len(r[8])-i-1 > 6 || strings.HasSuffix(r[8], "0")) {
		t.Fatalf("v3 %q: want up to 6 decimals, no trailing zeros", r[8])
	}
}

func TestDeterministic(t *testing.T) {
	a := collect(t, 500, 100, 7, 64)
	b := collect(t, 500, 100, 7, 500)
	c := collect(t, 500, 100, 8, 64)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("same seed, different batch sizes: different rows")
	}
	if fmt.Sprint(a) == fmt.Sprint(c) {
		t.Errorf("different seeds give the same rows")
	}
}

func TestBadArguments(t *testing.T) {
	tests := []struct {
		rows, k int
		want    string
	}{
		{-1, 100, "negative row count"},
		{10, 0, "k = 0"},
		{10, 1000, "k = 1000"},
	}
	for _, tc := range tests {
		err := Generate(tc.rows, tc.k, 1, 0, func(arrow.RecordBatch) error { return nil })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Generate(%d, %d): %v, want %q", tc.rows, tc.k, err, tc.want)
		}
		if err := WriteCSV(io.Discard, tc.rows, tc.k, 1); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("WriteCSV(%d, %d): %v, want %q", tc.rows, tc.k, err, tc.want)
		}
	}
}

func TestCallbackErrorStops(t *testing.T) {
	stop := errors.New("stop")
	calls := 0
	err := Generate(100, 10, 1, 10, func(rec arrow.RecordBatch) error {
		rec.Release()
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("err %v after %d calls", err, calls)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteError(t *testing.T) {
	if err := WriteCSV(failWriter{}, 100000, 100, 1); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("err %v", err)
	}
}

func TestAppendMicro(t *testing.T) {
	tests := []struct {
		micro int64
		want  string
	}{
		{0, "0"}, {1, "0.000001"}, {1_000_000, "1"}, {12_500_000, "12.5"},
		{99_999_999, "99.999999"}, {10_010_000, "10.01"},
	}
	for _, tc := range tests {
		if got := string(appendMicro(nil, tc.micro)); got != tc.want {
			t.Errorf("appendMicro(%d) = %q, want %q", tc.micro, got, tc.want)
		}
	}
}

func BenchmarkWriteCSV(b *testing.B) {
	const rows = 1_000_000
	var n countWriter
	for b.Loop() {
		n = 0
		if err := WriteCSV(&n, rows, 100, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(n))
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }
