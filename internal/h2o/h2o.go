// Package h2o generates the table of the H2O db-benchmark group-by tests
// (G1_<N>_<K>_0_0) from a seed, as Arrow record batches or as CSV, so that
// tests and benchmarks can make realistic data of any size without fixtures.
//
// The columns follow the benchmark's generator: id1 and id2 are "id%03d" of a
// uniform draw in 1..K, id3 is "id%010d" of a draw in 1..N/K, id4 and id5 are
// int64 draws in 1..K, id6 an int64 draw in 1..N/K, v1 is in 1..5, v2 in
// 1..15 and v3 a float64 uniform in [0, 100) rounded to 6 decimals.
//
// The same seed gives the same rows whatever the batch size, and Generate and
// WriteCSV give the same rows for the same seed.
package h2o

import (
	"bufio"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// DefaultK is the benchmark's usual number of groups for id1, id2, id4, id5.
const DefaultK = 100

// Schema returns the table's schema: id1, id2, id3 strings; id4, id5, id6,
// v1, v2 int64; v3 float64; none nullable.
func Schema() *arrow.Schema {
	str, i64 := arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64
	return arrow.NewSchema([]arrow.Field{
		{Name: "id1", Type: str}, {Name: "id2", Type: str}, {Name: "id3", Type: str},
		{Name: "id4", Type: i64}, {Name: "id5", Type: i64}, {Name: "id6", Type: i64},
		{Name: "v1", Type: i64}, {Name: "v2", Type: i64},
		{Name: "v3", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
}

// row is one generated row; v3 is held in millionths.
type row struct {
	id1, id2, id3, id4, id5, id6, v1, v2 int64
	v3micro                              int64
}

// gen draws rows from a seeded PCG stream.
type gen struct {
	src     *rand.PCG
	k, nk   uint64
	nextRow int
}

func newGen(rows, k int, seed uint64) (*gen, error) {
	if rows < 0 {
		return nil, fmt.Errorf("h2o: negative row count %d", rows)
	}
	if k < 1 || k > 999 {
		return nil, fmt.Errorf("h2o: k = %d, want 1..999", k)
	}
	nk := rows / k
	if nk < 1 {
		nk = 1
	}
	if nk > 9_999_999_999 {
		return nil, fmt.Errorf("h2o: %d rows / k %d is too many groups for id3", rows, k)
	}
	return &gen{src: rand.NewPCG(seed, 0x9e3779b97f4a7c15), k: uint64(k), nk: uint64(nk)}, nil
}

// draw returns a uniform value in 1..n (multiply-shift; the bias is below
// n/2^64).
func (g *gen) draw(n uint64) int64 {
	hi, _ := bits.Mul64(g.src.Uint64(), n)
	return int64(hi) + 1
}

func (g *gen) next(r *row) {
	r.id1 = g.draw(g.k)
	r.id2 = g.draw(g.k)
	r.id3 = g.draw(g.nk)
	r.id4 = g.draw(g.k)
	r.id5 = g.draw(g.k)
	r.id6 = g.draw(g.nk)
	r.v1 = g.draw(5)
	r.v2 = g.draw(15)
	r.v3micro = g.draw(100_000_000) - 1
}

// appendPadded appends v in decimal, left-padded with zeros to width digits.
func appendPadded(b []byte, v int64, width int) []byte {
	var tmp [20]byte
	i := len(tmp)
	for v > 0 || i > len(tmp)-width {
		i--
		tmp[i] = byte('0' + v%10)
		v /= 10
	}
	return append(b, tmp[i:]...)
}

// appendMicro appends a value held in millionths with up to 6 decimals and no
// trailing zeros ("12.5", "7", "0.000001").
func appendMicro(b []byte, micro int64) []byte {
	b = appendPadded(b, micro/1_000_000, 1)
	frac := micro % 1_000_000
	if frac == 0 {
		return b
	}
	digits := 6
	for frac%10 == 0 {
		frac /= 10
		digits--
	}
	b = append(b, '.')
	return appendPadded(b, frac, digits)
}

// Generate streams rows rows of the table with K = k in batches of at most
// batchRows rows (default 65536 when batchRows <= 0), calling fn for each.
// fn owns the batch (Release it when done). An error from fn stops the
// generation and is returned.
func Generate(rows, k int, seed uint64, batchRows int, fn func(arrow.RecordBatch) error) error {
	g, err := newGen(rows, k, seed)
	if err != nil {
		return err
	}
	if batchRows <= 0 {
		batchRows = 65536
	}
	schema := Schema()
	var r row
	for done := 0; done < rows; {
		n := min(batchRows, rows-done)
		ids := [3]struct {
			offs []int32
			data []byte
		}{}
		for c := range ids {
			ids[c].offs = make([]int32, 1, n+1)
		}
		ids[0].data = make([]byte, 0, 5*n)
		ids[1].data = make([]byte, 0, 5*n)
		ids[2].data = make([]byte, 0, 12*n)
		ints := make([][]int64, 5)
		for c := range ints {
			ints[c] = make([]int64, n)
		}
		v3 := make([]float64, n)
		for i := range n {
			g.next(&r)
			ids[0].data = appendPadded(append(ids[0].data, 'i', 'd'), r.id1, 3)
			ids[1].data = appendPadded(append(ids[1].data, 'i', 'd'), r.id2, 3)
			ids[2].data = appendPadded(append(ids[2].data, 'i', 'd'), r.id3, 10)
			for c := range ids {
				ids[c].offs = append(ids[c].offs, int32(len(ids[c].data)))
			}
			ints[0][i], ints[1][i], ints[2][i], ints[3][i], ints[4][i] = r.id4, r.id5, r.id6, r.v1, r.v2
			v3[i] = float64(r.v3micro) / 1e6
		}
		cols := make([]arrow.Array, 0, 9)
		for c := range ids {
			d := array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{nil,
				memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(ids[c].offs)),
				memory.NewBufferBytes(ids[c].data)}, nil, 0, 0)
			cols = append(cols, array.NewStringData(d))
			d.Release()
		}
		for c := range ints {
			d := array.NewData(arrow.PrimitiveTypes.Int64, n, []*memory.Buffer{nil,
				memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(ints[c]))}, nil, 0, 0)
			cols = append(cols, array.NewInt64Data(d))
			d.Release()
		}
		d := array.NewData(arrow.PrimitiveTypes.Float64, n, []*memory.Buffer{nil,
			memory.NewBufferBytes(arrow.Float64Traits.CastToBytes(v3))}, nil, 0, 0)
		cols = append(cols, array.NewFloat64Data(d))
		d.Release()
		rec := array.NewRecordBatch(schema, cols, int64(n))
		for _, c := range cols {
			c.Release()
		}
		done += n
		if err := fn(rec); err != nil {
			return err
		}
	}
	return nil
}

// WriteCSV writes rows rows of the table with K = k as CSV to w: a header
// line "id1,id2,id3,id4,id5,id6,v1,v2,v3", then one line per row ending in
// "\n"; v3 has up to 6 decimals and no trailing zeros.
func WriteCSV(w io.Writer, rows, k int, seed uint64) error {
	g, err := newGen(rows, k, seed)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	if _, err := bw.WriteString("id1,id2,id3,id4,id5,id6,v1,v2,v3\n"); err != nil {
		return fmt.Errorf("h2o: write csv: %w", err)
	}
	buf := make([]byte, 0, 1<<16)
	var r row
	for range rows {
		g.next(&r)
		buf = append(buf, 'i', 'd')
		buf = appendPadded(buf, r.id1, 3)
		buf = append(buf, ',', 'i', 'd')
		buf = appendPadded(buf, r.id2, 3)
		buf = append(buf, ',', 'i', 'd')
		buf = appendPadded(buf, r.id3, 10)
		for _, v := range [...]int64{r.id4, r.id5, r.id6, r.v1, r.v2} {
			buf = append(buf, ',')
			buf = appendPadded(buf, v, 1)
		}
		buf = append(buf, ',')
		buf = appendMicro(buf, r.v3micro)
		buf = append(buf, '\n')
		if len(buf) > 1<<16-128 {
			if _, err := bw.Write(buf); err != nil {
				return fmt.Errorf("h2o: write csv: %w", err)
			}
			buf = buf[:0]
		}
	}
	if _, err := bw.Write(buf); err != nil {
		return fmt.Errorf("h2o: write csv: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("h2o: write csv: %w", err)
	}
	return nil
}
