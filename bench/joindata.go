package main

import (
	"bufio"
	"context"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
)

// The join tables of the H2O db-benchmark (its join-datagen.R), without
// nulls: a left table x of N rows and three right tables, small (N/1e6
// rows), medium (N/1e3) and big (N). Keys are integers id1..id3 and the same
// as text id4..id6 ("id" + number). Each key space is drawn from a shuffled
// range of 2.2·n numbers cut in three: 90% of n keys in both sides, 10% only
// in x, 10% only in the right tables, so about 90% of x's rows find a match.
// Below 1e7 rows the small and medium tables keep at least 10 and 100 rows.

// joinKeys is one key space: x-and-right keys, x-only keys and right-only
// keys.
type joinKeys struct {
	both, left, right []int64
}

// joinRand draws from a seeded PCG stream.
type joinRand struct{ src *rand.PCG }

func (r joinRand) intn(n int) int {
	hi, _ := bits.Mul64(r.src.Uint64(), uint64(n))
	return int(hi)
}

// micro is a value in [0, 100) in millionths, like the benchmark's
// round(runif(max = 100), 6).
func (r joinRand) micro() int64 { return int64(r.intn(100_000_000)) }

func (r joinRand) splitKeys(n int) joinKeys {
	nx, nl := n*9/10, n-n*9/10
	nr := max(n/10, 1)
	total := nx + nl + nr
	pool := make([]int64, n*22/10+1)
	for i := range pool {
		pool[i] = int64(i + 1)
	}
	for i := range total { // partial Fisher-Yates: the first total values
		j := i + r.intn(len(pool)-i)
		pool[i], pool[j] = pool[j], pool[i]
	}
	return joinKeys{both: pool[:nx:nx], left: pool[nx : nx+nl : nx+nl], right: pool[nx+nl : total : total]}
}

// leftKeys and rightKeys are the keys each side draws from.
func (k joinKeys) leftKeys() []int64  { return append(append([]int64{}, k.both...), k.left...) }
func (k joinKeys) rightKeys() []int64 { return append(append([]int64{}, k.both...), k.right...) }

func (r joinRand) pick(keys []int64) int64 { return keys[r.intn(len(keys))] }

// permutation returns a shuffled copy of keys (sampling without
// replacement).
func (r joinRand) permutation(keys []int64) []int64 {
	p := append([]int64{}, keys...)
	for i := len(p) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// joinTables is the four join tables.
type joinTables struct {
	x, small, medium, big *dataset
}

func joinSizes(n int) (small, medium int) {
	return max(n/1_000_000, 10), max(n/1_000, 100)
}

func joinSchema(keys int, value string) *arrow.Schema {
	var f []arrow.Field
	for i := 1; i <= keys; i++ {
		f = append(f, arrow.Field{Name: fmt.Sprintf("id%d", i), Type: arrow.PrimitiveTypes.Int64})
	}
	for i := 1; i <= keys; i++ {
		f = append(f, arrow.Field{Name: fmt.Sprintf("id%d", i+3), Type: arrow.BinaryTypes.String})
	}
	f = append(f, arrow.Field{Name: value, Type: arrow.PrimitiveTypes.Float64})
	return arrow.NewSchema(f, nil)
}

// joinData writes the join tables J1_<N>_NA_0_0 (x), J1_<N>_<small>_0_0,
// J1_<N>_<medium>_0_0 and J1_<N>_<N>_0_0 (big), unless they exist.
func (h *harness) joinData(ctx context.Context) (*joinTables, error) {
	n := h.cfg.rows
	ns, nm := joinSizes(n)
	var keys [3]joinKeys
	var rng joinRand
	// The key spaces are drawn only if a table must be written.
	ready := false
	prepare := func() {
		if ready {
			return
		}
		rng = joinRand{src: newPCG(h.cfg.seed)}
		keys = [3]joinKeys{rng.splitKeys(ns), rng.splitKeys(nm), rng.splitKeys(n)}
		ready = true
	}
	name := func(right string) string { return fmt.Sprintf("J1_%s_%s_0_0", rowsName(n), right) }
	// Each table gets its own stream, so that a table is the same whether
	// or not the others were written in the same run.
	stream := func(i uint64) joinRand { return joinRand{src: rand.NewPCG(h.cfg.seed, 0x6a6f696e00+i)} }

	var t joinTables
	var err error
	t.x, err = h.makeDataset(ctx, name("NA"), joinSchema(3, "v1"), n, func(w *bufio.Writer) error {
		prepare()
		r := stream(1)
		k1, k2, k3 := keys[0].leftKeys(), keys[1].leftKeys(), keys[2].leftKeys()
		return writeJoinRows(w, joinSchema(3, "v1"), n, func(row []int64) {
			row[0], row[1], row[2], row[3] = r.pick(k1), r.pick(k2), r.pick(k3), r.micro()
		})
	})
	if err != nil {
		return nil, err
	}
	t.small, err = h.makeDataset(ctx, name(rowsName(ns)), joinSchema(1, "v2"), ns, func(w *bufio.Writer) error {
		prepare()
		r := stream(2)
		p1 := r.permutation(keys[0].rightKeys())
		i := 0
		return writeJoinRows(w, joinSchema(1, "v2"), ns, func(row []int64) {
			row[0], row[1] = p1[i], r.micro()
			i++
		})
	})
	if err != nil {
		return nil, err
	}
	t.medium, err = h.makeDataset(ctx, name(rowsName(nm)), joinSchema(2, "v2"), nm, func(w *bufio.Writer) error {
		prepare()
		r := stream(3)
		k1, p2 := keys[0].rightKeys(), r.permutation(keys[1].rightKeys())
		i := 0
		return writeJoinRows(w, joinSchema(2, "v2"), nm, func(row []int64) {
			row[0], row[1], row[2] = r.pick(k1), p2[i], r.micro()
			i++
		})
	})
	if err != nil {
		return nil, err
	}
	t.big, err = h.makeDataset(ctx, name(rowsName(n)), joinSchema(3, "v2"), n, func(w *bufio.Writer) error {
		prepare()
		r := stream(4)
		k1, k2, p3 := keys[0].rightKeys(), keys[1].rightKeys(), r.permutation(keys[2].rightKeys())
		i := 0
		return writeJoinRows(w, joinSchema(3, "v2"), n, func(row []int64) {
			row[0], row[1], row[2], row[3] = r.pick(k1), r.pick(k2), p3[i], r.micro()
			i++
		})
	})
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// writeJoinRows writes a header and rows of k integer keys, the same keys as
// text, and a value in millionths; next fills the k keys and the value.
func writeJoinRows(w *bufio.Writer, schema *arrow.Schema, rows int, next func(row []int64)) error {
	k := (schema.NumFields() - 1) / 2
	for i, f := range schema.Fields() {
		if i > 0 {
			w.WriteByte(',')
		}
		w.WriteString(f.Name)
	}
	w.WriteByte('\n')
	row := make([]int64, k+1)
	buf := make([]byte, 0, 128)
	for range rows {
		next(row)
		buf = buf[:0]
		for i := range k {
			buf = strconv.AppendInt(buf, row[i], 10)
			buf = append(buf, ',')
		}
		for i := range k {
			buf = append(buf, 'i', 'd')
			buf = strconv.AppendInt(buf, row[i], 10)
			buf = append(buf, ',')
		}
		buf = appendMillionths(buf, row[k])
		buf = append(buf, '\n')
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}

// appendMillionths appends v/1e6 with up to 6 decimals and no trailing
// zeros.
func appendMillionths(b []byte, v int64) []byte {
	b = strconv.AppendInt(b, v/1_000_000, 10)
	frac := v % 1_000_000
	if frac == 0 {
		return b
	}
	digits := 6
	for frac%10 == 0 {
		frac /= 10
		digits--
	}
	b = append(b, '.')
	s := strconv.FormatInt(frac, 10)
	for range digits - len(s) {
		b = append(b, '0')
	}
	return append(b, s...)
}

func newPCG(seed uint64) *rand.PCG { return rand.NewPCG(seed, 0x6a6f696e) }
