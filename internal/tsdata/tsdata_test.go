package tsdata

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRows(t *testing.T) {
	if got, want := Rows(), 365*24*60; got != want {
		t.Fatalf("Rows() = %d, want %d", got, want)
	}
	if RowsPerFile()*Files != Rows() {
		t.Fatalf("%d files of %d rows is not %d rows", Files, RowsPerFile(), Rows())
	}
}

func TestWriteShape(t *testing.T) {
	dir := t.TempDir()
	paths, err := Write(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != Files {
		t.Fatalf("%d paths, want %d", len(paths), Files)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != Files {
		t.Fatalf("%d entries in the directory (temporary files left?), want %d", len(entries), Files)
	}
	next := Start
	names := map[string]int{}
	var ids, temps []float64
	for i, p := range paths {
		if want := filepath.Join(dir, fmt.Sprintf("%d.part", i)); p != want {
			t.Fatalf("path %d = %s, want %s", i, p, want)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		if !sc.Scan() || sc.Text() != Header {
			t.Fatalf("%s: first line %q, want %q", p, sc.Text(), Header)
		}
		rows := 0
		for sc.Scan() {
			rows++
			line := sc.Text()
			fields := strings.Split(line, ",")
			if len(fields) != 6 {
				t.Fatalf("%s line %d: %d fields: %q", p, rows+1, len(fields), line)
			}
			ts, err := time.Parse(TimestampLayout, fields[0])
			if err != nil {
				t.Fatalf("%s line %d: %v", p, rows+1, err)
			}
			if !ts.Equal(next) {
				t.Fatalf("%s line %d: timestamp %v, want %v", p, rows+1, ts, next)
			}
			next = next.Add(time.Minute)
			id, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil || id < 500 || id > 1500 {
				t.Fatalf("%s line %d: id %q", p, rows+1, fields[1])
			}
			ids = append(ids, float64(id))
			if !slices.Contains(Names, fields[2]) {
				t.Fatalf("%s line %d: name %q", p, rows+1, fields[2])
			}
			names[fields[2]]++
			for _, s := range fields[3:5] {
				v, err := strconv.ParseFloat(s, 64)
				if err != nil || v < -1 || v > 1 {
					t.Fatalf("%s line %d: x or y %q", p, rows+1, s)
				}
				if dot := strings.IndexByte(s, '.'); dot >= 0 && len(s)-dot-1 > 6 {
					t.Fatalf("%s line %d: more than 6 decimals in %q", p, rows+1, s)
				}
			}
			temp, err := strconv.ParseFloat(fields[5], 64)
			if err != nil || temp < -20 || temp > 45 {
				t.Fatalf("%s line %d: temperature %q", p, rows+1, fields[5])
			}
			temps = append(temps, temp)
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if rows != RowsPerFile() {
			t.Fatalf("%s: %d rows, want %d", p, rows, RowsPerFile())
		}
	}
	if !next.Equal(End) {
		t.Fatalf("last timestamp + 1 minute = %v, want %v", next, End)
	}
	if len(names) != len(Names) {
		t.Fatalf("%d distinct names, want %d", len(names), len(Names))
	}
	if m := mean(ids); m < 999 || m > 1001 {
		t.Fatalf("mean id %v, want about 1000", m)
	}
	// Seasons: January is colder than July.
	jan := mean(temps[:31*24*60])
	julStart := int(time.Date(2000, 7, 1, 0, 0, 0, 0, time.UTC).Sub(Start) / time.Minute)
	jul := mean(temps[julStart : julStart+31*24*60])
	if jan > 6 || jul < 18 {
		t.Fatalf("mean temperature January %.2f, July %.2f: want a seasonal curve", jan, jul)
	}
}

func TestWriteDeterministic(t *testing.T) {
	read := func(seed uint64) [][]byte {
		paths, err := Write(t.TempDir(), seed)
		if err != nil {
			t.Fatal(err)
		}
		var out [][]byte
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b)
		}
		return out
	}
	a, b, c := read(7), read(7), read(8)
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			t.Fatalf("file %d differs between two writes with the same seed", i)
		}
		if bytes.Equal(a[i], c[i]) {
			t.Fatalf("file %d is the same for seeds 7 and 8", i)
		}
	}
}

func TestWriteOverwrites(t *testing.T) {
	dir := t.TempDir()
	if _, err := Write(dir, 1); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(filepath.Join(dir, "0.part"))
	if _, err := Write(dir, 2); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(filepath.Join(dir, "0.part"))
	if bytes.Equal(first, second) {
		t.Fatal("a second Write with another seed left the file unchanged")
	}
}

func TestWriteError(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(file, 1); err == nil || !strings.HasPrefix(err.Error(), "tsdata: ") {
		t.Fatalf("Write into a file: error %v, want a tsdata error", err)
	}
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
