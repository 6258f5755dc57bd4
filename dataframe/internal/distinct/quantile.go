package distinct

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/internal/distinct/rows"
)

// Method is how a quantile between two values is interpolated, as pandas'
// quantile(interpolation=...) (numpy's methods of the same names). With
// the n values sorted and h = (n-1)q:
type Method string

const (
	Linear   Method = "linear"   // x[i] + (h-i)(x[j]-x[i]), i = floor(h), j = ceil(h); pandas' default
	Lower    Method = "lower"    // x[floor(h)]
	Higher   Method = "higher"   // x[ceil(h)]
	Nearest  Method = "nearest"  // x[h rounded half to even]
	Midpoint Method = "midpoint" // (x[floor(h)] + x[ceil(h)]) / 2
)

// Errors that callers can test for with errors.Is.
var (
	// ErrBadColumn: an unknown column, or a column whose type the
	// operation does not accept.
	ErrBadColumn = errors.New("bad column")
	// ErrBadSpec: an unknown method or keep, a quantile outside [0, 1], a
	// negative n, duplicate output names.
	ErrBadSpec = errors.New("bad spec")
)

// Median is the 0.5 quantile, linear.
func Median(ctx context.Context, values arrow.Array) (float64, error) {
	q, err := Quantiles(ctx, values, []float64{0.5}, Linear)
	if err != nil {
		return 0, err
	}
	return q[0], nil
}

// Quantiles returns the exact quantiles qs (each in [0, 1]) of the values
// of a numeric column, as pandas' Series.quantile: nulls and NaNs are
// skipped, and the quantiles of a column with no values are NaN. method ""
// means Linear. The values are copied to float64 and partly ordered by
// selection (not sorted): O(n) for a few quantiles.
func Quantiles(ctx context.Context, values arrow.Array, qs []float64, method Method) ([]float64, error) {
	if values == nil {
		return nil, errors.New("distinct: Quantiles given a nil array")
	}
	if err := checkQuantiles(qs, method); err != nil {
		return nil, err
	}
	if !numeric(values.DataType()) {
		return nil, fmt.Errorf("distinct: quantile of a %s column: want integers or floats: %w", values.DataType(), ErrBadColumn)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	buf := appendValues(make([]float64, 0, values.Len()-values.NullN()), values, nil)
	return quantilesOf(buf, qs, method), nil
}

func checkQuantiles(qs []float64, method Method) error {
	switch method {
	case "", Linear, Lower, Higher, Nearest, Midpoint:
	default:
		return fmt.Errorf("distinct: unknown interpolation %q (linear, lower, higher, nearest, midpoint): %w", method, ErrBadSpec)
	}
	for _, q := range qs {
		if !(q >= 0 && q <= 1) {
			return fmt.Errorf("distinct: quantile %v is not in [0, 1]: %w", q, ErrBadSpec)
		}
	}
	return nil
}

func numeric(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64:
		return true
	}
	return false
}

// appendValues appends the valid, non-NaN values of arr (rows sel, all
// when sel is nil) to dst as float64.
func appendValues(dst []float64, arr arrow.Array, sel []int32) []float64 {
	bm, off := rows.Validity(arr)
	switch arr.DataType().ID() {
	case arrow.INT8:
		return appendNum(dst, rows.Values[int8](arr), bm, off, sel)
	case arrow.UINT8:
		return appendNum(dst, rows.Values[uint8](arr), bm, off, sel)
	case arrow.INT16:
		return appendNum(dst, rows.Values[int16](arr), bm, off, sel)
	case arrow.UINT16:
		return appendNum(dst, rows.Values[uint16](arr), bm, off, sel)
	case arrow.INT32:
		return appendNum(dst, rows.Values[int32](arr), bm, off, sel)
	case arrow.UINT32:
		return appendNum(dst, rows.Values[uint32](arr), bm, off, sel)
	case arrow.INT64:
		return appendNum(dst, rows.Values[int64](arr), bm, off, sel)
	case arrow.UINT64:
		return appendNum(dst, rows.Values[uint64](arr), bm, off, sel)
	case arrow.FLOAT32:
		return appendNum(dst, rows.Values[float32](arr), bm, off, sel)
	}
	return appendNum(dst, rows.Values[float64](arr), bm, off, sel)
}

func appendNum[T rows.Number](dst []float64, vals []T, bm []byte, off int, sel []int32) []float64 {
	if sel == nil {
		for i, x := range vals {
			f := float64(x)
			if f == f && (bm == nil || rows.Bit(bm, off+i)) {
				dst = append(dst, f)
			}
		}
		return dst
	}
	for _, r := range sel {
		f := float64(vals[r])
		if f == f && (bm == nil || rows.Bit(bm, off+int(r))) {
			dst = append(dst, f)
		}
	}
	return dst
}

// quantilesOf computes the quantiles of a (reordered in place).
func quantilesOf(a []float64, qs []float64, method Method) []float64 {
	out := make([]float64, len(qs))
	n := len(a)
	if n == 0 {
		for i := range out {
			out[i] = math.NaN()
		}
		return out
	}
	// The positions each quantile reads, then one selection pass for all.
	type pos struct{ lo, hi int }
	ps := make([]pos, len(qs))
	hs := make([]float64, len(qs))
	var need []int
	for i, q := range qs {
		q = q * 100 / 100 // as numpy's percentile, which pandas calls with q*100
		h := float64(n)*q + (1 - q) - 1
		h = min(max(h, 0), float64(n-1))
		lo, hi := int(math.Floor(h)), int(math.Ceil(h))
		switch method {
		case Lower:
			hi = lo
		case Higher:
			lo = hi
		case Nearest:
			lo = int(math.RoundToEven(h))
			hi = lo
		}
		ps[i], hs[i] = pos{lo, hi}, h
		need = append(need, lo, hi)
	}
	slices.Sort(need)
	need = slices.Compact(need)
	selectAll(a, need)
	for i, p := range ps {
		x, y := a[p.lo], a[p.hi]
		switch {
		case p.lo == p.hi:
			out[i] = x
		case method == Midpoint:
			out[i] = (x + y) / 2
		default:
			out[i] = lerp(x, y, hs[i]-float64(p.lo))
		}
	}
	return out
}

// lerp interpolates as numpy does, from the nearer end.
func lerp(a, b, t float64) float64 {
	d := b - a
	if t >= 0.5 {
		return b - d*(1-t)
	}
	return a + d*t
}

// selectAll reorders a so that a[k] is the value of rank k for every k of
// ks (ascending), as if a were sorted (quickselect for each, on the part
// left after the previous one).
func selectAll(a []float64, ks []int) {
	if len(ks) > 16 || len(a) <= 32 {
		slices.Sort(a)
		return
	}
	base := 0
	for _, k := range ks {
		if k < base {
			continue // already in place (k equals the previous one)
		}
		selectK(a[base:], k-base)
		base = k + 1
		if base >= len(a) {
			return
		}
	}
}

// selectK reorders a so that a[k] is the value of rank k, smaller ones
// before it and larger ones after: quickselect with a median-of-three
// pivot, and a sort for small parts or when partitions go badly.
func selectK(a []float64, k int) {
	budget := 64
	lo, hi := 0, len(a)
	for hi-lo > 32 {
		if budget == 0 {
			slices.Sort(a[lo:hi])
			return
		}
		budget--
		m := lo + (hi-lo)/2
		// Median of three to a[lo].
		if a[m] < a[lo] {
			a[m], a[lo] = a[lo], a[m]
		}
		if a[hi-1] < a[lo] {
			a[hi-1], a[lo] = a[lo], a[hi-1]
		}
		if a[hi-1] < a[m] {
			a[hi-1], a[m] = a[m], a[hi-1]
		}
		a[lo], a[m] = a[m], a[lo]
		p := a[lo]
		// Hoare partition: a[lo:j+1] <= p <= a[j+1:hi].
		i, j := lo, hi
		for {
			for i++; i < hi && a[i] < p; i++ {
			}
			for j--; a[j] > p; j-- {
			}
			if i >= j {
				break
			}
			a[i], a[j] = a[j], a[i]
		}
		a[lo], a[j] = a[j], a[lo]
		switch {
		case k == j:
			return
		case k < j:
			hi = j
		default:
			lo = j + 1
		}
	}
	slices.Sort(a[lo:hi])
}

// QuantileSpec is one quantile of a column, written to an output column.
type QuantileSpec struct {
	Column string  `json:"column"`
	Q      float64 `json:"q"`
	// Name is the output column's name; empty means Column.
	Name string `json:"name,omitempty"`
}

func (s QuantileSpec) name() string {
	if s.Name != "" {
		return s.Name
	}
	return s.Column
}

// GroupOptions control grouping.
type GroupOptions struct {
	// DropNullKeys leaves out the groups whose key (any of the keys) is
	// null, like pandas' dropna=True (its default). When false, null keys
	// form their own group.
	DropNullKeys bool `json:"drop_null_keys,omitempty"`
	// Sort orders the groups by their keys, ascending, nulls last.
	// Otherwise groups come in the order of their first row.
	Sort bool `json:"sort,omitempty"`
}

// GroupQuantiles computes exact quantiles per group of the key columns
// keys, for a batch that holds whole groups (a shuffle output): one row
// per group, the key columns then one float64 column per spec, as
// pandas' groupby(keys)[col].quantile(q). Nulls and NaNs are skipped; a
// group with no values gets null.
func GroupQuantiles(ctx context.Context, rec arrow.RecordBatch, keys []string, specs []QuantileSpec, method Method, opts GroupOptions, mem memory.Allocator) (arrow.RecordBatch, error) {
	if rec == nil {
		return nil, errors.New("distinct: GroupQuantiles given a nil record batch")
	}
	qs := make([]float64, len(specs))
	for i, s := range specs {
		qs[i] = s.Q
	}
	if err := checkQuantiles(qs, method); err != nil {
		return nil, err
	}
	cols := make([]int, len(specs))
	names := map[string]bool{}
	for _, k := range keys {
		names[k] = true
	}
	for i, s := range specs {
		c, err := columnIndex(rec.Schema(), s.Column, fmt.Sprintf("quantile %v of %q", s.Q, s.Column))
		if err != nil {
			return nil, err
		}
		if t := rec.Schema().Field(c).Type; !numeric(t) {
			return nil, fmt.Errorf("distinct: quantile %v of %q: column has type %s; want integers or floats: %w", s.Q, s.Column, t, ErrBadColumn)
		}
		if names[s.name()] {
			return nil, fmt.Errorf("distinct: quantile %v of %q: output name %q is used twice (set QuantileSpec.Name): %w", s.Q, s.Column, s.name(), ErrBadSpec)
		}
		names[s.name()] = true
		cols[i] = c
	}
	g, err := groupRows(ctx, rec, keys, opts)
	if err != nil {
		return nil, err
	}
	// Specs of the same column share the selection of each group.
	byCol := map[int][]int{}
	var order []int
	for i, c := range cols {
		if _, ok := byCol[c]; !ok {
			order = append(order, c)
		}
		byCol[c] = append(byCol[c], i)
	}
	results := make([][]float64, len(specs))
	valid := make([][]bool, len(specs))
	for i := range specs {
		results[i] = make([]float64, len(g.groups))
		valid[i] = make([]bool, len(g.groups))
	}
	var buf []float64
	for _, c := range order {
		is := byCol[c]
		cqs := make([]float64, len(is))
		for k, i := range is {
			cqs[k] = specs[i].Q
		}
		col := rec.Column(c)
		for j, gid := range g.groups {
			if j%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			buf = appendValues(buf[:0], col, g.rowsOf(gid))
			if len(buf) == 0 {
				continue
			}
			r := quantilesOf(buf, cqs, method)
			for k, i := range is {
				results[i][j], valid[i][j] = r[k], true
			}
		}
	}
	out := make([]arrow.Array, 0, len(keys)+len(specs))
	defer func() { rows.ReleaseAll(out) }()
	fields := make([]arrow.Field, 0, len(keys)+len(specs))
	for i, k := range g.keyCols {
		a, err := rows.Take(ctx, mem, rec.Column(k), g.first)
		if err != nil {
			return nil, fmt.Errorf("distinct: key %q: %w", keys[i], err)
		}
		out = append(out, a)
		fields = append(fields, rec.Schema().Field(k))
	}
	for i, s := range specs {
		out = append(out, rows.Float64s(mem, results[i], valid[i]))
		fields = append(fields, arrow.Field{Name: s.name(), Type: arrow.PrimitiveTypes.Float64, Nullable: true})
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), out, int64(len(g.groups))), nil
}
