package window

import (
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/dataframe/internal/distinct/rows"
)

// The reductions of resampling, over runs of rows that fall in one bin.
// Each runs once per aggregate and batch with a typed loop per run: no
// per-row interface call.

// run is rows [lo, hi) of a batch, all in bin slot.
type run struct {
	slot   int32
	lo, hi int32
}

// countRuns adds to out[slot] the number of valid rows of each run.
func countRuns(arr arrow.Array, runs []run, out []int64) {
	bm, off := rows.Validity(arr)
	for _, r := range runs {
		if bm == nil {
			out[r.slot] += int64(r.hi - r.lo)
			continue
		}
		n := int64(0)
		for i := r.lo; i < r.hi; i++ {
			if rows.Bit(bm, off+int(i)) {
				n++
			}
		}
		out[r.slot] += n
	}
}

type accum interface{ int64 | uint64 | float64 }

// sumRuns adds the valid values of each run to out[slot].
func sumRuns[T rows.Number, A accum](vals []T, bm []byte, off int, runs []run, out []A) {
	for _, r := range runs {
		var s A
		v := vals[r.lo:r.hi]
		if bm == nil {
			for _, x := range v {
				s += A(x)
			}
		} else {
			for j, x := range v {
				if rows.Bit(bm, off+int(r.lo)+j) {
					s += A(x)
				}
			}
		}
		out[r.slot] += s
	}
}

// moments holds the count, mean and sum of squared deviations of a set of
// values; sets combine with the formulas of Chan et al.
type moments struct {
	n    int64
	mean float64
	m2   float64
}

func (a *moments) combine(b moments) {
	if b.n == 0 {
		return
	}
	if a.n == 0 {
		*a = b
		return
	}
	n := a.n + b.n
	delta := b.mean - a.mean
	a.mean += delta * float64(b.n) / float64(n)
	a.m2 += b.m2 + delta*delta*float64(a.n)*float64(b.n)/float64(n)
	a.n = n
}

// momentRuns combines the moments of each run (two passes over the run:
// mean, then squared deviations) into out[slot].
func momentRuns[T rows.Number](vals []T, bm []byte, off int, runs []run, out []moments) {
	valid := func(i int32) bool { return bm == nil || rows.Bit(bm, off+int(i)) }
	for _, r := range runs {
		var m moments
		var s float64
		for i := r.lo; i < r.hi; i++ {
			if valid(i) {
				s += float64(vals[i])
				m.n++
			}
		}
		if m.n == 0 {
			continue
		}
		m.mean = s / float64(m.n)
		for i := r.lo; i < r.hi; i++ {
			if valid(i) {
				d := float64(vals[i]) - m.mean
				m.m2 += d * d
			}
		}
		out[r.slot].combine(m)
	}
}

// bestRuns keeps in best[slot] the row of the smallest (or largest)
// valid value; best starts at -1. A NaN loses to any number; among equal
// values the first row wins.
func bestRuns[T rows.Number](vals []T, bm []byte, off int, runs []run, best []int32, largest bool) {
	for _, r := range runs {
		b := best[r.slot]
		i := r.lo
		if b < 0 { // the first valid row of the run starts the search
			for ; i < r.hi && bm != nil && !rows.Bit(bm, off+int(i)); i++ {
			}
			if i == r.hi {
				continue
			}
			b = i
			i++
		}
		cur := vals[b]
		switch {
		case bm == nil && largest:
			for ; i < r.hi; i++ {
				if x := vals[i]; x > cur || (cur != cur && x == x) {
					cur, b = x, i
				}
			}
		case bm == nil:
			for ; i < r.hi; i++ {
				if x := vals[i]; x < cur || (cur != cur && x == x) {
					cur, b = x, i
				}
			}
		default:
			for ; i < r.hi; i++ {
				x := vals[i]
				if !rows.Bit(bm, off+int(i)) {
					continue
				}
				if (largest && x > cur) || (!largest && x < cur) || (cur != cur && x == x) {
					cur, b = x, i
				}
			}
		}
		best[r.slot] = b
	}
}

// bestStringRuns is bestRuns for strings, compared by their bytes.
func bestStringRuns(arr arrow.Array, runs []run, best []int32, largest bool) {
	bm, off := rows.Validity(arr)
	v := rows.NewStringView(arr)
	for _, r := range runs {
		b := best[r.slot]
		for i := r.lo; i < r.hi; i++ {
			if bm != nil && !rows.Bit(bm, off+int(i)) {
				continue
			}
			if b < 0 {
				b = i
				continue
			}
			c := strings.Compare(v.At(int(i)), v.At(int(b)))
			if (largest && c > 0) || (!largest && c < 0) {
				b = i
			}
		}
		best[r.slot] = b
	}
}

// edgeRuns keeps in out[slot] the first (or last) valid row; out starts
// at -1.
func edgeRuns(arr arrow.Array, runs []run, out []int32, last bool) {
	bm, off := rows.Validity(arr)
	for _, r := range runs {
		if !last && out[r.slot] >= 0 {
			continue
		}
		if last {
			for i := r.hi - 1; i >= r.lo; i-- {
				if bm == nil || rows.Bit(bm, off+int(i)) {
					out[r.slot] = i
					break
				}
			}
			continue
		}
		for i := r.lo; i < r.hi; i++ {
			if bm == nil || rows.Bit(bm, off+int(i)) {
				out[r.slot] = i
				break
			}
		}
	}
}

// bestOf dispatches bestRuns on the column's type.
func bestOf(arr arrow.Array, runs []run, best []int32, largest bool) {
	bm, off := rows.Validity(arr)
	switch arr.DataType().ID() {
	case arrow.INT8:
		bestRuns(rows.Values[int8](arr), bm, off, runs, best, largest)
	case arrow.UINT8:
		bestRuns(rows.Values[uint8](arr), bm, off, runs, best, largest)
	case arrow.INT16:
		bestRuns(rows.Values[int16](arr), bm, off, runs, best, largest)
	case arrow.UINT16:
		bestRuns(rows.Values[uint16](arr), bm, off, runs, best, largest)
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		bestRuns(rows.Values[int32](arr), bm, off, runs, best, largest)
	case arrow.UINT32:
		bestRuns(rows.Values[uint32](arr), bm, off, runs, best, largest)
	case arrow.UINT64:
		bestRuns(rows.Values[uint64](arr), bm, off, runs, best, largest)
	case arrow.FLOAT32:
		bestRuns(rows.Values[float32](arr), bm, off, runs, best, largest)
	case arrow.FLOAT64:
		bestRuns(rows.Values[float64](arr), bm, off, runs, best, largest)
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		bestStringRuns(arr, runs, best, largest)
	default: // int64 and the temporal types stored as int64
		bestRuns(rows.Values[int64](arr), bm, off, runs, best, largest)
	}
}

// sumOf dispatches sumRuns on the column's type into an int64, uint64 or
// float64 accumulator (out is one of []int64, []uint64, []float64).
func sumOf(arr arrow.Array, runs []run, out any) {
	bm, off := rows.Validity(arr)
	switch o := out.(type) {
	case []float64:
		switch arr.DataType().ID() {
		case arrow.INT8:
			sumRuns(rows.Values[int8](arr), bm, off, runs, o)
		case arrow.UINT8:
			sumRuns(rows.Values[uint8](arr), bm, off, runs, o)
		case arrow.INT16:
			sumRuns(rows.Values[int16](arr), bm, off, runs, o)
		case arrow.UINT16:
			sumRuns(rows.Values[uint16](arr), bm, off, runs, o)
		case arrow.INT32:
			sumRuns(rows.Values[int32](arr), bm, off, runs, o)
		case arrow.UINT32:
			sumRuns(rows.Values[uint32](arr), bm, off, runs, o)
		case arrow.INT64:
			sumRuns(rows.Values[int64](arr), bm, off, runs, o)
		case arrow.UINT64:
			sumRuns(rows.Values[uint64](arr), bm, off, runs, o)
		case arrow.FLOAT32:
			sumRuns(rows.Values[float32](arr), bm, off, runs, o)
		case arrow.FLOAT64:
			sumRuns(rows.Values[float64](arr), bm, off, runs, o)
		}
	case []int64:
		switch arr.DataType().ID() {
		case arrow.INT8:
			sumRuns(rows.Values[int8](arr), bm, off, runs, o)
		case arrow.INT16:
			sumRuns(rows.Values[int16](arr), bm, off, runs, o)
		case arrow.INT32:
			sumRuns(rows.Values[int32](arr), bm, off, runs, o)
		case arrow.INT64:
			sumRuns(rows.Values[int64](arr), bm, off, runs, o)
		}
	case []uint64:
		switch arr.DataType().ID() {
		case arrow.UINT8:
			sumRuns(rows.Values[uint8](arr), bm, off, runs, o)
		case arrow.UINT16:
			sumRuns(rows.Values[uint16](arr), bm, off, runs, o)
		case arrow.UINT32:
			sumRuns(rows.Values[uint32](arr), bm, off, runs, o)
		case arrow.UINT64:
			sumRuns(rows.Values[uint64](arr), bm, off, runs, o)
		}
	}
}

// momentsOf dispatches momentRuns on the column's type.
func momentsOf(arr arrow.Array, runs []run, out []moments) {
	bm, off := rows.Validity(arr)
	switch arr.DataType().ID() {
	case arrow.INT8:
		momentRuns(rows.Values[int8](arr), bm, off, runs, out)
	case arrow.UINT8:
		momentRuns(rows.Values[uint8](arr), bm, off, runs, out)
	case arrow.INT16:
		momentRuns(rows.Values[int16](arr), bm, off, runs, out)
	case arrow.UINT16:
		momentRuns(rows.Values[uint16](arr), bm, off, runs, out)
	case arrow.INT32:
		momentRuns(rows.Values[int32](arr), bm, off, runs, out)
	case arrow.UINT32:
		momentRuns(rows.Values[uint32](arr), bm, off, runs, out)
	case arrow.INT64:
		momentRuns(rows.Values[int64](arr), bm, off, runs, out)
	case arrow.UINT64:
		momentRuns(rows.Values[uint64](arr), bm, off, runs, out)
	case arrow.FLOAT32:
		momentRuns(rows.Values[float32](arr), bm, off, runs, out)
	case arrow.FLOAT64:
		momentRuns(rows.Values[float64](arr), bm, off, runs, out)
	}
}

// stdOf is the standard deviation with one degree of freedom (pandas'
// default), and false when there are fewer than two values.
func (m moments) std() (float64, bool) {
	if m.n < 2 {
		return 0, false
	}
	return math.Sqrt(max(m.m2, 0) / float64(m.n-1)), true
}
