package array

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"

	"github.com/shoal-data/shoal/graph"
)

// Exact percentiles, in memory bounded by about a chunk per task.
//
// Along an axis held in one chunk (or rechunked so, where a lane is no
// bigger than a chunk), a task sorts each lane of its chunk. Otherwise, a
// radix select over the order-preserving unsigned keys of the values
// (toKeys) runs in rounds. In each round, every chunk counts, for each lane
// and each prefix of keys found so far, how many keys with that prefix
// have each value of their next bits (a histogram; NaN counted apart); the
// histograms of a lane's chunks are summed in a tree; a small task picks,
// for each rank that a percentile needs (the floor and the ceiling of its
// position in the sorted lane), the bucket that holds it, which extends
// the rank's prefix. After the last round the key of every such rank is
// known in full, and so its value. The state passed from round to round is
// an int64 Dense of one row per lane (see the col constants).

// percentileOp sorts the lanes of chunks that hold the axis whole.
type percentileOp struct {
	q    []num
	axis int
}

func (o *percentileOp) prefix() string { return "percentile" }

// radixOp finds percentiles by radix select, of all elements (axis -1) or
// along an axis whose lanes span chunks.
type radixOp struct {
	q     []num
	axis  int
	bits  int // per round
	slots int // the most ranks a lane needs: 2 per percentile
	split int // counts merged per task
}

func (o *radixOp) prefix() string { return "percentile" }

// percentileParams are the params of an "array.percentile" task.
type percentileParams struct {
	// "" sorts lanes of a chunk; "merge" and "merge-minmax" add up counts
	// of a radix round; "pick" and "pick-minmax" pick the buckets of a
	// round (the last pick writes the percentiles).
	Mode string `json:"mode,omitempty"`
	Q    []num  `json:"q"`
	Axis int    `json:"axis"`
	OutT DType  `json:"out"`
	// Radix select.
	Kind  DType `json:"kind,omitempty"`  // of the values
	Bits  int   `json:"bits,omitempty"`  // per round
	Slots int   `json:"slots,omitempty"` // ranks per lane in the state
	Last  bool  `json:"last,omitempty"`
	Lanes []int `json:"lanes,omitempty"` // shape of the lanes of the result block
}

// pctSpec is the sink of a radix round's map task: it counts the keys of
// the chunk it computed.
type pctSpec struct {
	MinMax bool  `json:"minmax,omitempty"` // the first round for int64: count, least and greatest key per lane
	Kind   DType `json:"kind"`
	Axis   int   `json:"axis"` // -1: all the elements are one lane
	Bits   int   `json:"bits"`
	Slots  int   `json:"slots"`
	State  bool  `json:"state,omitempty"` // the task's last input is the state of the chunk's lanes
}

// Percentile returns the q-th percentiles (0 <= q <= 100) of a, exactly,
// as NumPy's percentile with its default linear method: of all elements,
// or along Axis. The result has shape (len(q), the other axes...), and is
// float64 (float32 for a float32 array). NaN anywhere in a lane gives NaN;
// an empty lane is an error. Options: Axis (one axis), SplitEvery (for
// the trees that sum the histograms below).
//
// No task holds much more than a chunk of a (or 1 MiB, if more). Along an
// axis in one chunk, each task sorts the lanes of its chunk. Along an axis
// that spans chunks, a is rechunked so that every chunk holds whole
// lanes, when a lane is no bigger than a's largest chunk (and then no
// chunk is bigger than that). Otherwise (all elements, or longer lanes)
// the percentiles come from a radix select over the bits of the values:
// in rounds, every chunk counts its values into a histogram of their next
// 16 bits among those that match the bits found so far (512 KiB for each
// rank a percentile needs), the histograms are summed in a tree, and a
// small task picks the buckets that hold the ranks each percentile needs.
// float64 takes 4 rounds, float32 2, bool 1, and int64 one round for the
// range of the values, then as many as that range needs (at most 4). When
// the histograms of 16 bits would be bigger than a chunk (many
// percentiles at once, or many lanes in a chunk that cannot be split),
// rounds take 12 or 8 bits, and so there are more of them. Every round
// reads a's chunks again: an expression is computed again in each round;
// chunks that come from other operations or files are held between rounds
// (and spilled by the executor when memory runs short): Persist an array
// that is costly to compute first. Chunks of unknown size (after Mask)
// are fine for all elements, and along an axis when the other axes are
// known.
func Percentile(a Array, q []float64, opts ...Option) Array {
	if err := a.Err(); err != nil {
		return a
	}
	c, err := configure("Percentile", opts, "Axis", "SplitEvery")
	if err != nil {
		return errArray(wrapErr(err))
	}
	if len(q) == 0 {
		return errorf("Percentile: no percentiles asked for")
	}
	qs := make([]num, len(q))
	for i, v := range q {
		if !(v >= 0 && v <= 100) {
			return errorf("Percentile: percentile %g is not between 0 and 100", v)
		}
		qs[i] = num(v)
	}
	out := Float64
	if a.n.dtype == Float32 {
		out = Float32
	}
	shape := a.Shape()
	// The largest chunk (as far as its size is known), and what a task's
	// histograms may take.
	item := a.n.dtype.Size()
	largest := item
	for _, cs := range a.n.chunks {
		largest *= max(1, slices.Max(cs))
	}
	budget := max(largest, minHistBytes)
	slots := 2 * len(qs)
	if !c.axesSet || len(c.axes) == 0 {
		if a.Size() == 0 {
			return errorf("Percentile: the array of shape %s is empty", fmtShape(shape))
		}
		if numBlocks(a.n.chunks) == 1 && allKnown(a.n.chunks) {
			r := a.Ravel()
			if r.Err() != nil {
				return r
			}
			return sortedPercentile(r, qs, 0, out)
		}
		return radixPercentile(a, qs, -1, out, budget, c.splitEvery)
	}
	if len(c.axes) != 1 {
		return errorf("Percentile: takes one axis, not %v", c.axes)
	}
	ax, err := normAxis(c.axes[0], a.NDim())
	if err != nil {
		return errorf("Percentile: %v", err)
	}
	if shape[ax] == 0 {
		return errorf("Percentile: axis %d of the array of shape %s is empty", ax, fmtShape(shape))
	}
	if len(a.n.chunks[ax]) == 1 {
		return sortedPercentile(a, qs, ax, out)
	}
	for d, cs := range a.n.chunks {
		if d != ax && !knownAxis(cs) {
			return errorf("Percentile: axis %d spans %d chunks, and the other axes have chunks of unknown size %s; call ComputeChunkSizes first",
				ax, len(a.n.chunks[ax]), formatChunks(a.n.chunks))
		}
	}
	if knownAxis(a.n.chunks[ax]) && shape[ax]*item <= largest {
		// Whole lanes, as many per chunk as fit in the largest chunk.
		want := capLanes(a.n.chunks, ax, largest/(shape[ax]*item))
		want[ax] = []int{shape[ax]}
		src := rechunkTo(a, want)
		if src.Err() != nil {
			return src
		}
		return sortedPercentile(src, qs, ax, out)
	}
	// Lanes longer than a chunk: radix select, with few enough lanes per
	// chunk for histograms of 16 bits within the budget when the chunks
	// can be split (they are then no bigger).
	src := a
	if allKnown(a.n.chunks) {
		want := capLanes(a.n.chunks, ax, budget/(slots*histBytes(16)))
		if src = rechunkTo(a, want); src.Err() != nil {
			return src
		}
	}
	return radixPercentile(src, qs, ax, out, budget, c.splitEvery)
}

// minHistBytes is what the histograms of a task may take at least, when
// chunks are smaller.
const minHistBytes = 1 << 20

// histBytes returns the size of a histogram of bits bits.
func histBytes(bits int) int { return 8 << bits }

// capLanes returns chunks with the chunks of the axes other than axis
// split so that a chunk has at most lanes lanes (elements of the other
// axes), and those of axis as they are.
func capLanes(chunks [][]int, axis, lanes int) [][]int {
	out := cloneChunks(chunks)
	budget := max(lanes, 1)
	for d := len(chunks) - 1; d >= 0; d-- {
		if d == axis {
			continue
		}
		piece := max(1, min(slices.Max(chunks[d]), budget))
		var cs []int
		for _, c := range chunks[d] {
			if c <= piece {
				cs = append(cs, c)
			} else {
				cs = append(cs, regularChunks(c, piece)...)
			}
		}
		out[d] = cs
		budget /= piece
	}
	return out
}

// sortedPercentile sorts the lanes of each chunk of a, which holds axis
// whole.
func sortedPercentile(a Array, qs []num, axis int, out DType) Array {
	chunks := [][]int{{len(qs)}}
	for ax, cs := range a.n.chunks {
		if ax != axis {
			chunks = append(chunks, slices.Clone(cs))
		}
	}
	return newArray(&percentileOp{q: qs, axis: axis}, out, chunks, []*node{a.n}, []any{qs, axis})
}

// radixPercentile selects the percentiles of all elements of a (axis -1)
// or along axis.
func radixPercentile(a Array, qs []num, axis int, out DType, budget, split int) Array {
	slots := 2 * len(qs)
	lanes := 1
	chunks := [][]int{{len(qs)}}
	for ax, cs := range a.n.chunks {
		if axis >= 0 && ax != axis {
			lanes *= max(1, slices.Max(cs))
			chunks = append(chunks, slices.Clone(cs))
		}
	}
	op := &radixOp{q: qs, axis: axis, bits: radixBits(lanes*slots, budget), slots: slots, split: split}
	return newArray(op, out, chunks, []*node{a.n}, []any{"radix", qs, axis, op.bits, split})
}

// radixBits returns how many bits a round of a radix select takes when a
// task counts keys under up to slots prefixes, one histogram each, in at
// most budget bytes: 16 (512 KiB per histogram), 12 (32 KiB) or 8 (2 KiB).
func radixBits(slots, budget int) int {
	for _, b := range []int{16, 12} {
		if slots*histBytes(b) <= budget {
			return b
		}
	}
	return 8
}

func (o *percentileOp) lower(l *lowerer, n *node) ([]graph.Key, error) {
	in := n.inputs[0]
	grid := gridShape(n.chunks)
	keys := make([]graph.Key, numBlocks(n.chunks))
	for i := range keys {
		idx := blockIndex(grid, i)
		ii := make([]int, 0, len(in.chunks))
		ii = append(ii, idx[1:1+o.axis]...)
		ii = append(ii, 0)
		ii = append(ii, idx[1+o.axis:]...)
		dep, err := l.blockKey(in, ii)
		if err != nil {
			return nil, err
		}
		keys[i] = n.key(idx...)
		if err := l.add(keys[i], opPercentile, percentileParams{Q: o.q, Axis: o.axis, OutT: n.dtype}, []graph.Key{dep}); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

func (o *radixOp) lower(l *lowerer, n *node) ([]graph.Key, error) {
	in := n.inputs[0]
	kind := in.dtype
	prog := l.consumerProgram(in)
	inGrid, outGrid := gridShape(in.chunks), gridShape(n.chunks)
	// A group is the lanes of a result block: the chunks along the axis
	// (all chunks for no axis).
	groupOf := func(idx []int) int {
		if o.axis < 0 {
			return 0
		}
		g := []int{0}
		for ax, i := range idx {
			if ax != o.axis {
				g = append(g, i)
			}
		}
		return blockNumber(outGrid, g)
	}
	ngroups := numBlocks(n.chunks)
	rounds := (keyBits(kind) + o.bits - 1) / o.bits
	minmax := kind == Int64
	if minmax {
		rounds++
	}
	// The sums and picks go before counting more chunks, so that few
	// histograms wait at once.
	add := func(key graph.Key, p percentileParams, deps []graph.Key) error {
		b, err := json.Marshal(p)
		if err != nil {
			return fmt.Errorf("array: encode params of %s: %w", key, err)
		}
		return l.g.Add(&graph.Task{Key: key, Op: opPercentile, Params: b, Deps: deps, Annotations: graph.Annotations{Priority: 1}})
	}
	var state []graph.Key // per group, from the round before
	for r := range rounds {
		first := minmax && r == 0
		last := r == rounds-1
		tok := graph.TokenizeStrings(n.token, "round", strconv.Itoa(r))
		spec := pctSpec{MinMax: first, Kind: kind, Axis: o.axis, Bits: o.bits, Slots: o.slots, State: state != nil}
		counts, err := l.mapTasksWith(in.chunks, prog, func(idx []int) graph.Key {
			return graph.NewKey("percentile-count", tok, idx...)
		}, func([]int) *sinkSpec {
			s := spec
			return &sinkSpec{Pct: &s}
		}, func(idx []int) []graph.Key {
			if state == nil {
				return nil
			}
			return []graph.Key{state[groupOf(idx)]}
		})
		if err != nil {
			return nil, err
		}
		groups := make([][]graph.Key, ngroups)
		for i, k := range counts {
			g := groupOf(blockIndex(inGrid, i))
			groups[g] = append(groups[g], k)
		}
		merge, pick := "merge", "pick"
		if first {
			merge, pick = "merge-minmax", "pick-minmax"
		}
		next := make([]graph.Key, ngroups)
		for g, keys := range groups {
			// A tree of sums, o.split at a time, down to one.
			for level := 1; len(keys) > 1; level++ {
				sums := make([]graph.Key, (len(keys)+o.split-1)/o.split)
				for i := range sums {
					sums[i] = graph.NewKey("percentile-sum", tok, g, level, i)
					if len(sums) == 1 {
						sums[i] = graph.NewKey("percentile-sum", tok, g)
					}
					if err := add(sums[i], percentileParams{Mode: merge}, slices.Clone(keys[i*o.split:min((i+1)*o.split, len(keys))])); err != nil {
						return nil, err
					}
				}
				keys = sums
			}
			total := keys[0]
			oidx := blockIndex(outGrid, g)
			next[g] = graph.NewKey("percentile-pick", tok, g)
			if last {
				next[g] = n.key(oidx...)
			}
			deps := []graph.Key{total}
			if state != nil {
				deps = append(deps, state[g])
			}
			p := percentileParams{Mode: pick, Q: o.q, Axis: o.axis, OutT: n.dtype, Kind: kind, Bits: o.bits, Slots: o.slots,
				Last: last, Lanes: blockShape(n.chunks, oidx)[1:]}
			if err := add(next[g], p, deps); err != nil {
				return nil, err
			}
		}
		state = next
	}
	return state, nil
}

func runPercentile(ctx context.Context, in graph.OpInput) (any, error) {
	var p percentileParams
	if err := json.Unmarshal(in.Params, &p); err != nil {
		return nil, fmt.Errorf("decode percentile params: %w", err)
	}
	blocks, err := denseInputs(in)
	if err != nil {
		return nil, err
	}
	if p.Mode != "merge" && p.Mode != "merge-minmax" && !p.OutT.valid() {
		return nil, fmt.Errorf("percentile: invalid dtype %d", p.OutT)
	}
	switch p.Mode {
	case "":
		if len(blocks) != 1 {
			return nil, fmt.Errorf("percentile takes 1 input, got %d", len(blocks))
		}
		return sortPercentile(ctx, p, blocks[0])
	case "merge", "merge-minmax":
		return mergeCounts(p.Mode == "merge-minmax", blocks)
	case "pick", "pick-minmax":
		return pickPercentile(p, blocks)
	}
	return nil, fmt.Errorf("unknown percentile mode %q", p.Mode)
}

// sortPercentile computes the percentiles of every lane of b along p.Axis
// by sorting the lane's keys.
func sortPercentile(ctx context.Context, p percentileParams, b *Dense) (*Dense, error) {
	if p.Axis < 0 || p.Axis >= len(b.shape) {
		return nil, fmt.Errorf("percentile axis %d of a block of shape %v", p.Axis, b.shape)
	}
	n := b.shape[p.Axis]
	if n == 0 {
		return nil, fmt.Errorf("percentile of an empty array (shape %v)", b.shape)
	}
	inner := product(b.shape[p.Axis+1:])
	outer := product(b.shape[:p.Axis])
	keys := make([]uint64, b.Size())
	toKeys(keys, b.flat())
	lo, hi := keyRange(b.dtype)
	shape := []int{len(p.Q)}
	shape = append(shape, b.shape[:p.Axis]...)
	shape = append(shape, b.shape[p.Axis+1:]...)
	res := make([]float64, product(shape))
	lane := make([]uint64, n)
	lanes := outer * inner
	for o := range outer {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		for i := range inner {
			nan := false
			for k := range n {
				lane[k] = keys[(o*n+k)*inner+i]
				nan = nan || lane[k] < lo || lane[k] > hi
			}
			if !nan {
				slices.Sort(lane)
			}
			for qi, q := range p.Q {
				v := math.NaN()
				if !nan {
					r0, r1, t := position(int64(n), q)
					v = interpolate(b.dtype, lane[r0], lane[r1], t)
				}
				res[qi*lanes+o*inner+i] = v
			}
		}
	}
	d := &Dense{dtype: Float64, shape: shape, strides: rowMajorStrides(shape), data: res}
	return d.astype(p.OutT), nil
}

// position returns where the q-th percentile of n sorted values lies, as
// NumPy's linear method computes it: between ranks lo and hi (lo+1, or lo
// at the end), t of the way.
func position(n int64, q num) (lo, hi int64, t float64) {
	pos := float64(n-1) * (float64(q) / 100)
	f := math.Floor(pos)
	lo = min(int64(f), n-1)
	return lo, min(lo+1, n-1), pos - f
}

// interpolate returns the value t of the way from the value of key a to
// that of key b, as NumPy's linear method does, bit for bit: the
// difference in the values' type, then from the nearer end. At a whole
// rank (t = 0) next to an infinite value, it returns the value at the
// rank, where NumPy's formula makes NaN (inf - inf or inf * 0).
func interpolate(kind DType, a, b uint64, t float64) float64 {
	var x, y, d float64
	switch kind {
	case Float32:
		fa, fb := f32OfKey(a), f32OfKey(b)
		x, y, d = float64(fa), float64(fb), float64(float32(fb-fa))
	case Int64:
		ia, ib := int64(a^signBit), int64(b^signBit)
		x, y, d = float64(ia), float64(ib), float64(ib-ia)
	case Bool:
		x, y = float64(a), float64(b)
		d = y - x
	default:
		x, y = f64OfKey(a), f64OfKey(b)
		d = y - x
	}
	if t == 0 && (math.IsInf(x, 0) || math.IsInf(y, 0)) {
		return x
	}
	if t >= 0.5 {
		return y - float64(d*(1-t))
	}
	return x + float64(d*t)
}

const signBit = 1 << 63

// The order-preserving keys of values: unsigned integers that sort as the
// values do (floats as in IEEE 754's total order, -0 before +0, NaN apart:
// see keyRange).

func keyF64(v float64) uint64 {
	b := math.Float64bits(v)
	if b&signBit != 0 {
		return ^b
	}
	return b | signBit
}

func f64OfKey(k uint64) float64 {
	if k&signBit != 0 {
		return math.Float64frombits(k &^ signBit)
	}
	return math.Float64frombits(^k)
}

func keyF32(v float32) uint64 {
	b := math.Float32bits(v)
	if b&(1<<31) != 0 {
		return uint64(^b)
	}
	return uint64(b | 1<<31)
}

func f32OfKey(k uint64) float32 {
	b := uint32(k)
	if b&(1<<31) != 0 {
		return math.Float32frombits(b &^ (1 << 31))
	}
	return math.Float32frombits(^b)
}

// keyBits returns how many bits the keys of a type have.
func keyBits(t DType) int {
	switch t {
	case Float32:
		return 32
	case Bool:
		return 1
	}
	return 64
}

// keyRange returns the least and the greatest key of a value that is not
// NaN: the keys of NaN lie outside.
func keyRange(t DType) (lo, hi uint64) {
	switch t {
	case Float64:
		return keyF64(math.Inf(-1)), keyF64(math.Inf(1))
	case Float32:
		return keyF32(float32(math.Inf(-1))), keyF32(float32(math.Inf(1)))
	}
	return 0, math.MaxUint64
}

// toKeys writes the keys of the values src into dst.
func toKeys(dst []uint64, src any) {
	switch x := src.(type) {
	case []float64:
		for i, v := range x {
			dst[i] = keyF64(v)
		}
	case []float32:
		for i, v := range x {
			dst[i] = keyF32(v)
		}
	case []int64:
		for i, v := range x {
			dst[i] = uint64(v) ^ signBit
		}
	case []bool:
		for i, v := range x {
			dst[i] = 0
			if v {
				dst[i] = 1
			}
		}
	}
}

// The columns of a row of the state of a radix select: one row per lane,
// then, for each rank j a percentile needs, the rank, its prefix (the
// key's top bits found so far, less the lane's base), and its rank among
// the keys with that prefix.
const (
	colStatus   = iota // laneActive, laneNaN or laneDone
	colN               // number of values
	colBase            // least key (int64 only; 0 otherwise), subtracted from the keys
	colWidth           // bits of the keys less the base
	colResolved        // bits found so far
	colTargets         // number of ranks
	stateHead
)

const (
	laneActive = iota
	laneNaN
	laneDone
)

func stateCols(slots int) int { return stateHead + 3*slots }

// laneSlots returns the distinct prefixes of the ranks of an active lane
// (sorted), how many bits the next round takes, and how many bits lie
// below the prefixes.
func laneSlots(row []int64, roundBits int) (prefixes []uint64, width, above int) {
	if row[colStatus] != laneActive {
		return nil, 0, 0
	}
	w, r := int(row[colWidth]), int(row[colResolved])
	for j := range int(row[colTargets]) {
		prefixes = append(prefixes, uint64(row[stateHead+3*j+1]))
	}
	slices.Sort(prefixes)
	return slices.Compact(prefixes), min(roundBits, w-r), w - r
}

// laneCounts counts the keys of one lane in a round of a radix select.
type laneCounts struct {
	lo, hi   uint64 // keys of values that are not NaN
	nan      int64
	active   bool
	minmax   bool // count, least and greatest key only
	base     uint64
	prefixes []uint64
	above    uint // a key k matches prefix p when (k-base)>>above == p
	shift    uint // above less the bits of the round
	mask     uint64
	width    uint
	counts   []int64 // per prefix, per value of the next bits
	// For the first round of int64.
	n        int64
	min, max uint64
}

func (c *laneCounts) add(keys []uint64) {
	if !c.active {
		return
	}
	if c.minmax {
		for _, k := range keys {
			c.min, c.max = min(c.min, k), max(c.max, k)
		}
		c.n += int64(len(keys))
		return
	}
	if len(c.prefixes) == 1 {
		p := c.prefixes[0]
		for _, k := range keys {
			if k < c.lo || k > c.hi {
				c.nan++
				continue
			}
			d := k - c.base
			if d>>c.above == p {
				c.counts[(d>>c.shift)&c.mask]++
			}
		}
		return
	}
	for _, k := range keys {
		if k < c.lo || k > c.hi {
			c.nan++
			continue
		}
		d := k - c.base
		if s, ok := slices.BinarySearch(c.prefixes, d>>c.above); ok {
			c.counts[s<<c.width|int((d>>c.shift)&c.mask)]++
		}
	}
}

// pctSink counts the keys of the chunk computed by ev for a round of a
// radix select.
func pctSink(ctx context.Context, ev *evaluator, s *pctSpec, inputs []any) (any, error) {
	if !s.Kind.valid() || s.Bits < 1 || s.Bits > 16 || s.Slots < 1 {
		return nil, fmt.Errorf("percentile: bad round params %+v", *s)
	}
	if ev.dtype != s.Kind {
		return nil, fmt.Errorf("percentile: counts %s values of a %s chunk", s.Kind, ev.dtype)
	}
	lanes := 1
	if s.Axis >= 0 {
		if s.Axis >= len(ev.shape) {
			return nil, fmt.Errorf("percentile axis %d of a chunk of shape %v", s.Axis, ev.shape)
		}
		lanes = product(ev.shape[:s.Axis]) * product(ev.shape[s.Axis+1:])
	}
	var st []int64
	cols := stateCols(s.Slots)
	if s.State {
		d, ok := inputs[len(inputs)-1].(*Dense)
		if !ok || d.dtype != Int64 || len(d.shape) != 2 || d.shape[0] != lanes || d.shape[1] != cols {
			return nil, fmt.Errorf("percentile: the state is not that of %d lanes (got %v)", lanes, inputs[len(inputs)-1])
		}
		st = d.flat().([]int64)
	}
	lo, hi := keyRange(s.Kind)
	cs := make([]laneCounts, lanes)
	var out []int64
	offs := make([]int, lanes) // of each lane's counts in out
	if s.MinMax {
		out = make([]int64, 4*lanes)
		for l := range cs {
			cs[l] = laneCounts{lo: lo, hi: hi, active: true, minmax: true, min: math.MaxUint64}
		}
	} else {
		size := 0
		for l := range cs {
			c := laneCounts{lo: lo, hi: hi, active: true}
			var width, above int
			if st == nil {
				c.prefixes, width, above = []uint64{0}, min(s.Bits, keyBits(s.Kind)), keyBits(s.Kind)
			} else {
				row := st[l*cols : (l+1)*cols]
				c.prefixes, width, above = laneSlots(row, s.Bits)
				c.active = row[colStatus] == laneActive
				c.base = uint64(row[colBase])
			}
			c.width, c.above, c.shift, c.mask = uint(width), uint(above), uint(above-width), 1<<width-1
			offs[l] = size
			size += 1 + len(c.prefixes)<<width
			cs[l] = c
		}
		out = make([]int64, size)
		for l := range cs {
			if cs[l].active {
				cs[l].counts = out[offs[l]+1 : offs[l]+1+len(cs[l].prefixes)<<cs[l].width]
			}
		}
		if !slices.ContainsFunc(cs, func(c laneCounts) bool { return c.active }) {
			// Every lane is known: nothing to read.
			return &Dense{dtype: Int64, shape: []int{len(out)}, strides: []int{1}, data: out}, nil
		}
	}
	err := eachKeyRun(ctx, ev, s.Axis, func(lane, step int, keys []uint64) {
		if step == 0 {
			cs[lane].add(keys)
			return
		}
		for i := range keys {
			cs[lane+i].add(keys[i : i+1])
		}
	})
	if err != nil {
		return nil, err
	}
	for l, c := range cs {
		if s.MinMax {
			out[4*l], out[4*l+2], out[4*l+3] = c.n, int64(c.min), int64(c.max)
		} else {
			out[offs[l]] = c.nan
		}
	}
	return &Dense{dtype: Int64, shape: []int{len(out)}, strides: []int{1}, data: out}, nil
}

// eachKeyRun calls f with the keys of the values computed by ev, in runs:
// the run's keys belong to lanes lane, lane+step, ... (all to lane when
// step is 0). With no axis every value is of lane 0, and the chunk is
// computed a tile at a time, never held whole.
func eachKeyRun(ctx context.Context, ev *evaluator, axis int, f func(lane, step int, keys []uint64)) error {
	buf := make([]uint64, tileSize)
	emit := func(lane, step int, v any) {
		n := sliceLen(v)
		for p := 0; p < n; p += tileSize {
			m := min(tileSize, n-p)
			toKeys(buf[:m], subslice(v, p, p+m))
			f(lane+p*step, step, buf[:m])
		}
	}
	if axis < 0 {
		return ev.each(ctx, func(_ int, v any) error {
			emit(0, 0, v)
			return nil
		})
	}
	b, err := ev.materialize(ctx)
	if err != nil {
		return err
	}
	flat := b.flat()
	n := b.shape[axis]
	outer, inner := product(b.shape[:axis]), product(b.shape[axis+1:])
	for o := range outer {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		switch {
		case inner == 1:
			emit(o, 0, subslice(flat, o*n, (o+1)*n))
		case inner <= 16:
			// A few lanes: each one's keys, gathered a tile at a time.
			for i := range inner {
				for k0 := 0; k0 < n; k0 += tileSize {
					m := min(tileSize, n-k0)
					stridedKeys(buf[:m], flat, (o*n+k0)*inner+i, inner)
					f(o*inner+i, 0, buf[:m])
				}
			}
		default:
			for k := range n {
				at := (o*n + k) * inner
				emit(o*inner, 1, subslice(flat, at, at+inner))
			}
		}
	}
	return nil
}

// stridedKeys writes into dst the keys of the values of src at start,
// start+stride, ...
func stridedKeys(dst []uint64, src any, start, stride int) {
	switch x := src.(type) {
	case []float64:
		for i := range dst {
			dst[i] = keyF64(x[start+i*stride])
		}
	case []float32:
		for i := range dst {
			dst[i] = keyF32(x[start+i*stride])
		}
	case []int64:
		for i := range dst {
			dst[i] = uint64(x[start+i*stride]) ^ signBit
		}
	case []bool:
		for i := range dst {
			dst[i] = 0
			if x[start+i*stride] {
				dst[i] = 1
			}
		}
	}
}

// mergeCounts adds up the counts of chunks in a round of a radix select:
// histograms, or (minmax) counts, least and greatest keys.
func mergeCounts(minmax bool, blocks []*Dense) (*Dense, error) {
	if len(blocks) == 0 {
		return nil, fmt.Errorf("percentile: no counts to merge")
	}
	out := blocks[0].Copy()
	if out.dtype != Int64 || len(out.shape) != 1 {
		return nil, fmt.Errorf("percentile: counts of dtype %s and shape %v", out.dtype, out.shape)
	}
	o := out.data.([]int64)
	for i, b := range blocks[1:] {
		if b.dtype != Int64 || len(b.shape) != 1 || b.shape[0] != len(o) {
			return nil, fmt.Errorf("percentile: counts %d have dtype %s and shape %v, counts 0 shape %v", i+1, b.dtype, b.shape, out.shape)
		}
		v := b.flat().([]int64)
		if !minmax {
			for j, c := range v {
				o[j] += c
			}
			continue
		}
		if len(o)%4 != 0 {
			return nil, fmt.Errorf("percentile: %d least and greatest keys", len(o))
		}
		for j := 0; j < len(o); j += 4 {
			o[j] += v[j]
			o[j+1] += v[j+1]
			o[j+2] = int64(min(uint64(o[j+2]), uint64(v[j+2])))
			o[j+3] = int64(max(uint64(o[j+3]), uint64(v[j+3])))
		}
	}
	return out, nil
}

// pickPercentile picks the buckets of a round of a radix select for every
// lane of a group, from the counts of the round and the state of the
// round before (if any); the last round writes the percentiles.
func pickPercentile(p percentileParams, blocks []*Dense) (*Dense, error) {
	if !p.Kind.valid() || p.Bits < 1 || p.Bits > 16 || p.Slots < 2*len(p.Q) {
		return nil, fmt.Errorf("percentile: bad pick params")
	}
	lanes := product(p.Lanes)
	cols := stateCols(p.Slots)
	if len(blocks) < 1 || len(blocks) > 2 {
		return nil, fmt.Errorf("percentile: a pick takes counts and a state, got %d inputs", len(blocks))
	}
	total := blocks[0]
	if total.dtype != Int64 || len(total.shape) != 1 {
		return nil, fmt.Errorf("percentile: counts of dtype %s and shape %v", total.dtype, total.shape)
	}
	h := total.flat().([]int64)
	next := make([]int64, lanes*cols)
	if len(blocks) == 2 {
		st := blocks[1]
		if st.dtype != Int64 || !slices.Equal(st.shape, []int{lanes, cols}) {
			return nil, fmt.Errorf("percentile: a state of dtype %s and shape %v, want (%d, %d)", st.dtype, st.shape, lanes, cols)
		}
		copy(next, st.flat().([]int64))
	}
	empty := fmt.Errorf("percentile of an empty array")
	switch {
	case p.Mode == "pick-minmax":
		if len(h) != 4*lanes {
			return nil, fmt.Errorf("percentile: %d counts for %d lanes", len(h), lanes)
		}
		for l := range lanes {
			if h[4*l] == 0 {
				return nil, empty
			}
			lo, hi := uint64(h[4*l+2]), uint64(h[4*l+3])
			initLane(next[l*cols:(l+1)*cols], h[4*l], lo, bits.Len64(hi-lo), p.Q)
		}
	default:
		off := 0
		for l := range lanes {
			row := next[l*cols : (l+1)*cols]
			var prefixes []uint64
			var width int
			if len(blocks) == 1 {
				// The first round: every value counted under prefix 0.
				w := keyBits(p.Kind)
				prefixes, width = []uint64{0}, min(p.Bits, w)
				if off+1+1<<width > len(h) {
					return nil, fmt.Errorf("percentile: %d counts for %d lanes", len(h), lanes)
				}
				nan, n := h[off], h[off]
				for _, c := range h[off+1 : off+1+1<<width] {
					n += c
				}
				if n == 0 {
					return nil, empty
				}
				initLane(row, n, 0, w, p.Q)
				if nan > 0 {
					row[colStatus] = laneNaN
				}
			} else {
				prefixes, width, _ = laneSlots(row, p.Bits)
			}
			size := len(prefixes) << width
			if off+1+size > len(h) {
				return nil, fmt.Errorf("percentile: %d counts for %d lanes", len(h), lanes)
			}
			if row[colStatus] == laneActive {
				if err := resolveLane(row, prefixes, width, h[off+1:off+1+size]); err != nil {
					return nil, err
				}
			}
			off += 1 + size
		}
		if off != len(h) {
			return nil, fmt.Errorf("percentile: %d counts for %d lanes, want %d", len(h), lanes, off)
		}
	}
	if !p.Last {
		return &Dense{dtype: Int64, shape: []int{lanes, cols}, strides: []int{cols, 1}, data: next}, nil
	}
	res := make([]float64, len(p.Q)*lanes)
	for l := range lanes {
		row := next[l*cols : (l+1)*cols]
		for qi, q := range p.Q {
			v := math.NaN()
			switch row[colStatus] {
			case laneDone:
				lo, hi, t := position(row[colN], q)
				a, aok := rankKey(row, lo)
				b, bok := rankKey(row, hi)
				if !aok || !bok {
					return nil, fmt.Errorf("percentile: internal error: ranks %d and %d of lane %d were not selected", lo, hi, l)
				}
				v = interpolate(p.Kind, a, b, t)
			case laneActive:
				return nil, fmt.Errorf("percentile: internal error: lane %d is not resolved after the last round (%d of %d bits)", l, row[colResolved], row[colWidth])
			}
			res[qi*lanes+l] = v
		}
	}
	shape := append([]int{len(p.Q)}, p.Lanes...)
	d := &Dense{dtype: Float64, shape: shape, strides: rowMajorStrides(shape), data: res}
	return d.astype(p.OutT), nil
}

// initLane sets up the state of a lane of n values whose keys, less base,
// have width bits: the ranks the percentiles q need, none of their bits
// found yet.
func initLane(row []int64, n int64, base uint64, width int, q []num) {
	var ranks []int64
	for _, v := range q {
		lo, hi, _ := position(n, v)
		ranks = append(ranks, lo, hi)
	}
	slices.Sort(ranks)
	ranks = slices.Compact(ranks)
	row[colStatus], row[colN], row[colBase], row[colWidth], row[colResolved], row[colTargets] =
		laneActive, n, int64(base), int64(width), 0, int64(len(ranks))
	for j, r := range ranks {
		row[stateHead+3*j], row[stateHead+3*j+1], row[stateHead+3*j+2] = r, 0, r
	}
	if width == 0 {
		row[colStatus] = laneDone
	}
}

// resolveLane finds, for every rank of the lane, the bucket of counts
// (width bits per prefix) that holds it.
func resolveLane(row []int64, prefixes []uint64, width int, counts []int64) error {
	for j := range int(row[colTargets]) {
		at := stateHead + 3*j
		prefix, rem := uint64(row[at+1]), row[at+2]
		s, ok := slices.BinarySearch(prefixes, prefix)
		if !ok {
			return fmt.Errorf("percentile: internal error: prefix %#x has no counts", prefix)
		}
		c := counts[s<<width : (s+1)<<width]
		var cum int64
		b := 0
		for ; b < len(c) && rem >= cum+c[b]; b++ {
			cum += c[b]
		}
		if b == len(c) {
			return fmt.Errorf("percentile: internal error: rank %d is beyond the %d values counted under its prefix", row[at], cum)
		}
		row[at+1], row[at+2] = int64(prefix<<width|uint64(b)), rem-cum
	}
	row[colResolved] += int64(width)
	if row[colResolved] >= row[colWidth] {
		row[colStatus] = laneDone
	}
	return nil
}

// rankKey returns the key of a rank of a resolved lane.
func rankKey(row []int64, rank int64) (uint64, bool) {
	for j := range int(row[colTargets]) {
		if row[stateHead+3*j] == rank {
			return uint64(row[colBase]) + uint64(row[stateHead+3*j+1]), true
		}
	}
	return 0, false
}
