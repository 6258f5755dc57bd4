package csv

import (
	"bytes"
	"context"
	"encoding/gob"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// randomCSV returns a CSV text with quoted fields holding delimiters, quotes
// and line breaks, CRLF and LF endings, nulls and blank lines.
func randomCSV(r *rand.Rand, rows int) string {
	var sb strings.Builder
	sb.WriteString("id,text,x,when\n")
	for i := range rows {
		sb.WriteString(strconv.Itoa(i))
		sb.WriteByte(',')
		switch r.IntN(6) {
		case 0:
			sb.WriteString(`"a,b"`)
		case 1:
			sb.WriteString("\"line\nbreak \"\"q\"\"\n\"")
		case 2:
			sb.WriteString(`""`)
		case 3:
			sb.WriteString("NA")
		default:
			sb.WriteString("w" + strconv.Itoa(r.IntN(100)))
		}
		sb.WriteByte(',')
		sb.WriteString(strconv.FormatFloat(r.Float64()*100, 'f', r.IntN(4), 64))
		sb.WriteByte(',')
		sb.WriteString("2024-01-0" + strconv.Itoa(1+r.IntN(9)) + " 10:00:0" + strconv.Itoa(r.IntN(10)))
		if r.IntN(3) == 0 {
			sb.WriteByte('\r')
		}
		sb.WriteByte('\n')
		if r.IntN(20) == 0 {
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}

func TestBlocksGiveTheSameRows(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	data := randomCSV(r, 500)
	fsys := newMemFS(map[string]string{"a.csv": data, "b.csv": randomCSV(r, 50)})
	paths := []string{"a.csv", "b.csv"}
	_, schema, want, _, err := readFS(fsys, paths, Options{}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if schema != "id:int64,text:utf8,x:float64,when:timestamp[ns]" || len(want) != 550 {
		t.Fatalf("schema %s, %d rows", schema, len(want))
	}
	defer func(m, c int) { miniRows, chunkSize = m, c }(miniRows, chunkSize)
	for _, bs := range []int64{1, 2, 3, 7, 16, 64, 100, 1000, 4096} {
		miniRows = int(bs%9) + 1
		chunkSize = int(bs%50) + 1
		plan, _, got, _, err := readFS(fsys, paths, Options{BlockSize: bs}, ReadOptions{})
		if err != nil {
			t.Fatalf("block size %d: %v", bs, err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("block size %d: rows differ", bs)
		}
		// Blocks cover each file's data exactly, in order.
		var next int64
		for i, b := range plan.Blocks {
			if i > 0 && b.File != plan.Blocks[i-1].File {
				next = 0
			}
			if next != 0 && b.Offset != next {
				t.Fatalf("block size %d: block %d starts at %d, want %d", bs, i, b.Offset, next)
			}
			if b.Length <= 0 {
				t.Fatalf("block size %d: block %d is empty", bs, i)
			}
			next = b.Offset + b.Length
		}
		if bs == 1000 && len(plan.Blocks) < 10 {
			t.Errorf("block size %d: only %d blocks", bs, len(plan.Blocks))
		}
	}
}

func TestNoNewlinesInQuotes(t *testing.T) {
	data := "a,b\n1,\"x,y\"\n2,\"p\nq\"\n3,z\n"
	fsys := newMemFS(map[string]string{"a.csv": data})
	// Without line breaks in quotes, the promise holds and blocks are exact.
	okData := "a,b\n1,\"x,y\"\n2,\"p q\"\n3,z\n"
	okFS := newMemFS(map[string]string{"a.csv": okData})
	for _, bs := range []int64{1, 4, 9, 100} {
		_, _, rows, _, err := readFS(okFS, []string{"a.csv"}, Options{NoNewlinesInQuotes: true, BlockSize: bs}, ReadOptions{})
		if err != nil || !slices.Equal(rows, []string{"1|x,y", "2|p q", "3|z"}) {
			t.Errorf("block size %d: %v %q", bs, err, rows)
		}
		// A broken promise is an error, never different rows.
		_, _, rows, _, err = readFS(fsys, []string{"a.csv"}, Options{NoNewlinesInQuotes: true, BlockSize: bs}, ReadOptions{})
		if err == nil {
			t.Errorf("block size %d: broken promise read as %q", bs, rows)
		}
	}
}

func TestPlanEncoding(t *testing.T) {
	ctx := context.Background()
	fsys := newMemFS(map[string]string{"a.csv": "k,v,t\nx,1,2020-01-01\ny,2,2020-01-02\n"})
	opts := Options{
		Dictionary: []string{"k"},
		Types:      map[string]arrow.DataType{"v": arrow.PrimitiveTypes.Int32},
		ParseDates: map[string]string{"t": "2006-01-02"},
		BlockSize:  8,
	}
	plan, err := PlanRead(ctx, fsys, []string{"a.csv"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := plan.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var got Plan
	if err := got.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if !got.Schema.Equal(plan.Schema) || !slices.Equal(got.Blocks, plan.Blocks) || got.Options.Types["v"].ID() != arrow.INT32 ||
		got.Options.ParseDates["t"] != "2006-01-02" || got.RowBytes != plan.RowBytes || !slices.Equal(got.fieldBytes, plan.fieldBytes) {
		t.Fatalf("decoded plan differs:\n%+v\n%+v", got, plan)
	}
	for i := range got.Blocks {
		one, err := plan.ForBlock(i).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if err := got.UnmarshalBinary(one); err != nil {
			t.Fatal(err)
		}
		a, _, err := ReadBlock(ctx, fsys, plan, i, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c, _, err := ReadBlock(ctx, fsys, &got, 0, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(recordRows(a), recordRows(c)) {
			t.Errorf("block %d: %q vs %q", i, recordRows(a), recordRows(c))
		}
		a.Release()
		c.Release()
	}
	// encoding/gob goes through MarshalBinary.
	var gb bytes.Buffer
	if err := gob.NewEncoder(&gb).Encode(plan); err != nil {
		t.Fatal(err)
	}
	var viaGob *Plan
	if err := gob.NewDecoder(&gb).Decode(&viaGob); err != nil || !viaGob.Schema.Equal(plan.Schema) || len(viaGob.Blocks) != len(plan.Blocks) {
		t.Fatalf("gob: %v %+v", err, viaGob)
	}
	if err := got.UnmarshalBinary([]byte("{")); err == nil {
		t.Error("bad input decoded")
	}
}

// TestPlanWithoutHints reads with a plan put together from its exported
// fields only, as a caller that sends them separately does.
func TestPlanWithoutHints(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 4))
	fsys := newMemFS(map[string]string{"a.csv": randomCSV(r, 3000)})
	plan, err := PlanRead(ctx, fsys, []string{"a.csv"}, Options{BlockSize: 20000})
	if err != nil {
		t.Fatal(err)
	}
	defer func(c int) { chunkSize = c }(chunkSize)
	chunkSize = 1000
	for i := range plan.Blocks {
		bare := &Plan{Schema: plan.Schema, Files: plan.Files, Blocks: []Block{plan.Blocks[i]}, Options: plan.Options}
		a, _, err := ReadBlock(ctx, fsys, plan, i, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := ReadBlock(ctx, fsys, bare, 0, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(recordRows(a), recordRows(b)) {
			t.Errorf("block %d differs without hints", i)
		}
		a.Release()
		b.Release()
	}
}
