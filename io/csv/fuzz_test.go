package csv

import (
	"bytes"
	stdcsv "encoding/csv"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
)

// FuzzRead checks that any input parses or fails with an error, never
// panics, and that splitting into blocks of any size gives the same rows
// as reading in one block.
func FuzzRead(f *testing.F) {
	seeds := []string{
		"a,b\n1,2\n",
		"a,b\r\n1,\"x\r\ny\"\r\n",
		"a\n\"\"\"\"\n\"\n\"\n",
		"\xef\xbb\xbfa;b\n1;2",
		"a,b\n1,\"x\"y\n",
		"a,b\n1,x\"y\n",
		"a,b\n1\n2,3,4\n",
		"a,b,c\n2020-01-01,1.5,true\n2020-01-02 10:00,NA,False\n",
		"a\n\"unterminated\n",
		"x,y\n\n\n1,2\n\n",
		"t\n2020-01-01T00:00:00+02:00\n2020-01-01T00:00:00Z\n",
		"a,a,\n1,2,3\n",
		"a,b\n1,",
		"0\n,\"0", // a quote error in a field beyond the header's
		"a,b\n1,\"",
		"a,b\n1,2\r",
		"",
		"\n\n",
	}
	for i, s := range seeds {
		f.Add([]byte(s), uint8(i%7+1), i%2 == 0)
	}
	f.Fuzz(func(t *testing.T, data []byte, bs uint8, noHeader bool) {
		fsys := newMemFS(map[string]string{"f.csv": string(data)})
		opts := Options{NoHeader: noHeader}
		_, schema, want, _, err := readFS(fsys, []string{"f.csv"}, opts, ReadOptions{})
		opts.BlockSize = int64(bs%64) + 1
		defer func(m, c int) { miniRows, chunkSize = m, c }(miniRows, chunkSize)
		miniRows = int(bs%5) + 1
		chunkSize = int(bs%7) + 1 // rows longer than a chunk make it grow
		_, schema2, got, _, err2 := readFS(fsys, []string{"f.csv"}, opts, ReadOptions{})
		if err != nil {
			if err2 == nil {
				t.Fatalf("one block: %v; blocks of %d: no error, rows %q", err, opts.BlockSize, got)
			}
			return
		}
		if err2 != nil {
			t.Fatalf("one block: rows %q; blocks of %d: %v", want, opts.BlockSize, err2)
		}
		if schema != schema2 && len(want) > 0 {
			t.Fatalf("schemas %s, %s", schema, schema2)
		}
		if !slices.Equal(want, got) {
			t.Fatalf("blocks of %d:\n got %q\nwant %q", opts.BlockSize, got, want)
		}
		// Skipping bad rows never fails on malformed input.
		opts.BadRows = Skip
		if _, _, _, _, err := readFS(fsys, []string{"f.csv"}, opts, ReadOptions{}); err != nil {
			if e := errorContains(err, "empty file"); e != nil {
				t.Fatalf("skip: %v", err)
			}
		}
	})
}

// FuzzAgainstEncodingCSV compares the rows read as strings with those of
// the standard library's reader, for inputs without carriage returns (which
// encoding/csv also drops inside quotes).
func FuzzAgainstEncodingCSV(f *testing.F) {
	for _, s := range []string{"a,b\n1,2\n", "a\n\"x\ny\"\n\"\"\"\"\n", "a,b\n1,\"2\"\n\n3,4", "a,b,c\n,,\n\"\",\"\",\n", "x\ny\"z\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if bytes.IndexByte(data, '\r') >= 0 || !utf8.Valid(data) {
			return
		}
		r := stdcsv.NewReader(bytes.NewReader(data))
		want, stdErr := r.ReadAll()
		if stdErr == nil && len(want) > 0 && len(want[0]) == 1 {
			// encoding/csv keeps nothing of an empty line; neither do we, but
			// a one-column file with an empty field is such a line.
			return
		}
		var schema *arrow.Schema
		if stdErr == nil && len(want) > 0 {
			fields := make([]arrow.Field, len(want[0]))
			for i := range fields {
				fields[i] = arrow.Field{Name: "c" + strconv.Itoa(i), Type: arrow.BinaryTypes.String}
			}
			schema = arrow.NewSchema(fields, nil)
		}
		opts := Options{NoHeader: true, Schema: schema, NullValues: []string{}}
		defer func(c int) { chunkSize = c }(chunkSize)
		chunkSize = 1 + len(data)%13
		_, _, got, _, err := readFS(newMemFS(map[string]string{"f.csv": string(data)}), []string{"f.csv"}, opts, ReadOptions{})
		if stdErr != nil || schema == nil {
			if err == nil && len(got) > 0 {
				t.Fatalf("encoding/csv: %v; we read %q", stdErr, got)
			}
			return
		}
		if err != nil {
			t.Fatalf("encoding/csv read %q; we: %v", want, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d rows, encoding/csv %d: %q vs %q", len(got), len(want), got, want)
		}
		for i := range want {
			if got[i] != strings.Join(want[i], "|") && !strings.Contains(strings.Join(want[i], ""), "|") {
				t.Fatalf("row %d: %q, encoding/csv %q", i, got[i], want[i])
			}
		}
	})
}
