package sketch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// DefaultK is the accuracy parameter of a sketch made with k = 0.
const DefaultK = 200

// minWidth is the least capacity of a level.
const minWidth = 8

// Quantiles is a KLL quantile sketch of float64 values (see the package
// documentation for its error bound). NaN values are ignored. The zero
// value is not usable: make one with New.
type Quantiles struct {
	k        int
	n        int64 // values added
	min, max float64
	levels   [][]float64 // levels[h]: items of weight 2^h
	size     int         // items in all levels
	maxSize  int         // sum of the capacities
	rng      uint64      // state of the coin flips
}

// New returns an empty sketch of accuracy parameter k (DefaultK when 0;
// at least 8) whose coin flips are seeded by seed.
func New(k int, seed uint64) *Quantiles {
	if k <= 0 {
		k = DefaultK
	}
	k = max(k, minWidth)
	s := &Quantiles{k: k, min: math.Inf(1), max: math.Inf(-1), rng: seed ^ 0x9e3779b97f4a7c15}
	s.grow()
	return s
}

// K returns the sketch's accuracy parameter.
func (s *Quantiles) K() int { return s.k }

// Count returns how many values were added (NaN excluded).
func (s *Quantiles) Count() int64 { return s.n }

// Min and Max return the least and greatest value added (NaN when none).
func (s *Quantiles) Min() float64 {
	if s.n == 0 {
		return math.NaN()
	}
	return s.min
}

func (s *Quantiles) Max() float64 {
	if s.n == 0 {
		return math.NaN()
	}
	return s.max
}

// RankError returns ε, the bound on the normalized rank error of one
// quantile query at 99% confidence: 2.296/k^0.9723.
func (s *Quantiles) RankError() float64 { return RankError(s.k) }

// RankError returns the bound on the normalized rank error of a sketch of
// parameter k (one query, 99% confidence).
func RankError(k int) float64 { return 2.296 / math.Pow(float64(k), 0.9723) }

func (s *Quantiles) capacity(h int) int {
	depth := len(s.levels) - h - 1
	return max(minWidth, int(math.Ceil(float64(s.k)*math.Pow(2.0/3.0, float64(depth)))))
}

func (s *Quantiles) grow() {
	s.levels = append(s.levels, nil)
	s.maxSize = 0
	for h := range s.levels {
		s.maxSize += s.capacity(h)
	}
}

// coin returns a random bit (splitmix64).
func (s *Quantiles) coin() int {
	s.rng += 0x9e3779b97f4a7c15
	z := s.rng
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return int((z ^ (z >> 31)) >> 63)
}

// Add adds values (NaN ones are skipped).
func (s *Quantiles) Add(values ...float64) {
	for len(values) > 0 {
		room := max(1, s.maxSize-s.size)
		chunk := values[:min(room, len(values))]
		values = values[len(chunk):]
		l0 := s.levels[0]
		for _, v := range chunk {
			if v != v {
				continue
			}
			l0 = append(l0, v)
			s.min = min(s.min, v)
			s.max = max(s.max, v)
		}
		added := len(l0) - len(s.levels[0])
		s.levels[0] = l0
		s.n += int64(added)
		s.size += added
		if s.size >= s.maxSize {
			s.compress()
		}
	}
}

// compress compacts full levels, lowest first, until the items fit.
func (s *Quantiles) compress() {
	for h := 0; h < len(s.levels); h++ {
		if len(s.levels[h]) < s.capacity(h) {
			continue
		}
		if h+1 == len(s.levels) {
			s.grow()
		}
		lv := s.levels[h]
		slices.Sort(lv)
		// Keep one item back when there is an odd number.
		var keep []float64
		if len(lv)%2 == 1 {
			keep = lv[len(lv)-1:]
			lv = lv[:len(lv)-1]
		}
		up := s.levels[h+1]
		for i := s.coin(); i < len(lv); i += 2 {
			up = append(up, lv[i])
		}
		s.levels[h+1] = up
		s.levels[h] = append(s.levels[h][:0], keep...)
		s.size -= len(lv) / 2
		if s.size < s.maxSize {
			return
		}
	}
}

// Merge adds the values o summarizes to s. The sketches may have different
// k: s keeps its own.
func (s *Quantiles) Merge(o *Quantiles) {
	if o == nil || o.n == 0 {
		return
	}
	for len(s.levels) < len(o.levels) {
		s.grow()
	}
	for h, lv := range o.levels {
		s.levels[h] = append(s.levels[h], lv...)
		s.size += len(lv)
	}
	s.n += o.n
	s.min = min(s.min, o.min)
	s.max = max(s.max, o.max)
	for s.size >= s.maxSize {
		before := s.size
		s.compress()
		if s.size == before {
			break // every level holds fewer items than its capacity
		}
	}
}

// weighted returns the items sorted, with their cumulative weights.
func (s *Quantiles) weighted() ([]float64, []int64) {
	type iw struct {
		v float64
		w int64
	}
	all := make([]iw, 0, s.size)
	for h, lv := range s.levels {
		for _, v := range lv {
			all = append(all, iw{v, 1 << h})
		}
	}
	slices.SortFunc(all, func(a, b iw) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	vals := make([]float64, len(all))
	cum := make([]int64, len(all))
	var c int64
	for i, x := range all {
		c += x.w
		vals[i], cum[i] = x.v, c
	}
	return vals, cum
}

// Quantile returns an approximate q-quantile (0 <= q <= 1) of the values
// added: a value whose rank is about q*Count(); the least value for q = 0
// and the greatest for q = 1. It returns NaN for an empty sketch or a q
// out of range.
func (s *Quantiles) Quantile(q float64) float64 {
	return s.Quantiles(q)[0]
}

// Quantiles returns Quantile of each q, sorting the sketch once.
func (s *Quantiles) Quantiles(qs ...float64) []float64 {
	out := make([]float64, len(qs))
	if s.n == 0 {
		for i := range out {
			out[i] = math.NaN()
		}
		return out
	}
	vals, cum := s.weighted()
	total := cum[len(cum)-1]
	for i, q := range qs {
		switch {
		case !(q >= 0 && q <= 1):
			out[i] = math.NaN()
		case q == 0:
			out[i] = s.min
		case q == 1:
			out[i] = s.max
		default:
			target := int64(math.Ceil(q * float64(total)))
			j, _ := slices.BinarySearch(cum, target)
			out[i] = vals[min(j, len(vals)-1)]
		}
	}
	return out
}

// Rank returns the approximate fraction of the values added that are at
// most x (0 for an empty sketch).
func (s *Quantiles) Rank(x float64) float64 {
	if s.n == 0 {
		return 0
	}
	var w int64
	var total int64
	for h, lv := range s.levels {
		for _, v := range lv {
			if v <= x {
				w += 1 << h
			}
		}
		total += int64(len(lv)) << h
	}
	return float64(w) / float64(total)
}

// Divisions returns the boundaries that split the values into m ranges of
// about equal counts: the quantiles i/m for i = 1..m-1, without repeats
// (fewer when a value holds many of the values).
func (s *Quantiles) Divisions(m int) []float64 {
	if m < 2 || s.n == 0 {
		return nil
	}
	qs := make([]float64, m-1)
	for i := range qs {
		qs[i] = float64(i+1) / float64(m)
	}
	out := s.Quantiles(qs...)
	return slices.Compact(out)
}

// AddArray adds the non-null values of a numeric, date, time, timestamp
// or duration column (as float64: integers beyond 2^53 are rounded).
func (s *Quantiles) AddArray(arr arrow.Array) error {
	buf := make([]float64, 0, min(arr.Len(), 4096))
	flush := func() {
		s.Add(buf...)
		buf = buf[:0]
	}
	add := func(i int, v float64) {
		if arr.IsValid(i) {
			buf = append(buf, v)
			if len(buf) == cap(buf) {
				flush()
			}
		}
	}
	switch a := arr.(type) {
	case *array.Float64:
		for i, v := range a.Float64Values() {
			add(i, v)
		}
	case *array.Float32:
		for i, v := range a.Float32Values() {
			add(i, float64(v))
		}
	case *array.Int64:
		for i, v := range a.Int64Values() {
			add(i, float64(v))
		}
	case *array.Int32:
		for i, v := range a.Int32Values() {
			add(i, float64(v))
		}
	case *array.Int16:
		for i, v := range a.Int16Values() {
			add(i, float64(v))
		}
	case *array.Int8:
		for i, v := range a.Int8Values() {
			add(i, float64(v))
		}
	case *array.Uint64:
		for i, v := range a.Uint64Values() {
			add(i, float64(v))
		}
	case *array.Uint32:
		for i, v := range a.Uint32Values() {
			add(i, float64(v))
		}
	case *array.Uint16:
		for i, v := range a.Uint16Values() {
			add(i, float64(v))
		}
	case *array.Uint8:
		for i, v := range a.Uint8Values() {
			add(i, float64(v))
		}
	case *array.Date32:
		for i, v := range a.Date32Values() {
			add(i, float64(v))
		}
	case *array.Date64:
		for i, v := range a.Date64Values() {
			add(i, float64(v))
		}
	case *array.Timestamp:
		for i, v := range a.TimestampValues() {
			add(i, float64(v))
		}
	case *array.Duration:
		for i, v := range a.DurationValues() {
			add(i, float64(v))
		}
	case *array.Time32:
		for i, v := range a.Time32Values() {
			add(i, float64(v))
		}
	case *array.Time64:
		for i, v := range a.Time64Values() {
			add(i, float64(v))
		}
	default:
		return fmt.Errorf("sketch: cannot add a %s column to a quantile sketch (want numbers, dates, times, timestamps or durations)", arr.DataType())
	}
	flush()
	return nil
}

// The encoding: "KLL1", k, n, min, max, rng, number of levels, then per
// level its length and items; little-endian, varints for counts.
var magic = []byte("KLL1")

// MarshalBinary encodes the sketch (so partial sketches can cross the
// wire; gob uses it).
func (s *Quantiles) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 64+8*s.size)
	b = append(b, magic...)
	b = binary.AppendUvarint(b, uint64(s.k))
	b = binary.AppendUvarint(b, uint64(s.n))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(s.min))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(s.max))
	b = binary.LittleEndian.AppendUint64(b, s.rng)
	b = binary.AppendUvarint(b, uint64(len(s.levels)))
	for _, lv := range s.levels {
		b = binary.AppendUvarint(b, uint64(len(lv)))
		for _, v := range lv {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
	}
	return b, nil
}

var errCorrupt = errors.New("sketch: bad quantile sketch encoding")

// UnmarshalBinary decodes a sketch MarshalBinary encoded.
func (s *Quantiles) UnmarshalBinary(b []byte) error {
	if len(b) < len(magic) || string(b[:len(magic)]) != string(magic) {
		return fmt.Errorf("%w: no KLL1 header", errCorrupt)
	}
	b = b[len(magic):]
	uv := func() (uint64, error) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, fmt.Errorf("%w: truncated", errCorrupt)
		}
		b = b[n:]
		return v, nil
	}
	u64 := func() (uint64, error) {
		if len(b) < 8 {
			return 0, fmt.Errorf("%w: truncated", errCorrupt)
		}
		v := binary.LittleEndian.Uint64(b)
		b = b[8:]
		return v, nil
	}
	var d Quantiles
	k, err := uv()
	if err != nil {
		return err
	}
	n, err := uv()
	if err != nil {
		return err
	}
	if k < minWidth || k > 1<<20 || n > math.MaxInt64 {
		return fmt.Errorf("%w: k %d, n %d", errCorrupt, k, n)
	}
	d.k, d.n = int(k), int64(n)
	var bits [3]uint64
	for i := range bits {
		if bits[i], err = u64(); err != nil {
			return err
		}
	}
	d.min, d.max, d.rng = math.Float64frombits(bits[0]), math.Float64frombits(bits[1]), bits[2]
	nl, err := uv()
	if err != nil {
		return err
	}
	if nl == 0 || nl > 64 {
		return fmt.Errorf("%w: %d levels", errCorrupt, nl)
	}
	var total int64
	for h := range int(nl) {
		l, err := uv()
		if err != nil {
			return err
		}
		if l > uint64(len(b)/8) {
			return fmt.Errorf("%w: level %d of %d items in %d bytes", errCorrupt, h, l, len(b))
		}
		lv := make([]float64, l)
		for i := range lv {
			v, _ := u64()
			lv[i] = math.Float64frombits(v)
		}
		d.levels = append(d.levels, lv)
		d.size += int(l)
		total += int64(l) << h
	}
	if len(b) != 0 {
		return fmt.Errorf("%w: %d bytes after the end", errCorrupt, len(b))
	}
	if total != d.n {
		return fmt.Errorf("%w: items weigh %d, count is %d", errCorrupt, total, d.n)
	}
	for h := range d.levels {
		d.maxSize += d.capacity(h)
	}
	*s = d
	return nil
}
