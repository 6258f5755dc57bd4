package agg

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	rowbuf "github.com/shoal-data/shoal/dataframe/internal/distinct/rows"
)

// chunkRows is how many rows the kernels take at a time: the group ids of a
// chunk stay in cache while every aggregate runs over it, and the context is
// checked between chunks. (A variable so that tests can make chunks small.)
var chunkRows = 1 << 16

// Partial aggregates one record batch into a partial state: one row per
// group (one row in all when keys is empty), with the key columns first and
// then the state columns of each spec. Groups come in the order of their
// first row. States are record batches, so they can be sent to other
// processes or spilled; combine them with Merge and turn them into the
// result with Finalize, giving both the same keys, specs and options.
func Partial(ctx context.Context, rec arrow.RecordBatch, keys []string, specs []Spec, opts Options, mem memory.Allocator) (arrow.RecordBatch, error) {
	if rec == nil {
		return nil, errors.New("agg: Partial given a nil record batch")
	}
	p, err := newPlan(rec.Schema(), keys, specs)
	if err != nil {
		return nil, err
	}
	accs, err := p.accumulators()
	if err != nil {
		return nil, err
	}
	keyCols, keyTypes := p.keyColumns(rec)
	var g *grouper
	if len(keys) > 0 {
		g = newGrouper(keyTypes)
		defer g.release()
		g.prepare(keyCols)
	} else {
		for _, a := range accs {
			a.grow(1, 1)
		}
	}
	inputs := make([][]arrow.Array, len(specs))
	for i, c := range p.cols {
		if c >= 0 {
			inputs[i] = []arrow.Array{rec.Column(c)}
		}
	}
	err = eachChunk(ctx, mem, int(rec.NumRows()), g, keyCols, accs, inputs, false)
	if err != nil {
		return nil, err
	}
	return p.emit(mem, g, keyTypes, accs, opts)
}

// Merge combines partial states made by Partial or Merge into one, for the
// same keys, specs and options. Order matters for first and last: values of
// earlier states come first, and groups come in the order they first
// appear. The caller releases the result, which is states[0] itself,
// retained, when there is only one state.
func Merge(ctx context.Context, states []arrow.RecordBatch, keys []string, specs []Spec, opts Options, mem memory.Allocator) (arrow.RecordBatch, error) {
	if len(states) == 0 {
		return nil, errors.New("agg: Merge given no partial states")
	}
	var p *plan
	for i, st := range states {
		if st == nil {
			return nil, &StateError{Index: i, Detail: "nil record batch"}
		}
		q, err := statePlan(st.Schema(), keys, specs, i)
		if err != nil {
			return nil, err
		}
		if p == nil {
			p = q
		} else if !q.out.Equal(p.out) {
			return nil, &StateError{Index: i, Detail: fmt.Sprintf("schema %s differs from state 0's %s", q.out, p.out)}
		}
	}
	if len(states) == 1 {
		states[0].Retain()
		return states[0], nil
	}
	accs, err := p.accumulators()
	if err != nil {
		return nil, err
	}
	var keyTypes []arrow.DataType
	for _, f := range p.keyFlds {
		keyTypes = append(keyTypes, f.Type)
	}
	var g *grouper
	if len(keys) > 0 {
		g = newGrouper(keyTypes)
		defer g.release()
		// Each state has distinct groups: the largest is a lower bound.
		most := 0
		for _, st := range states {
			most = max(most, int(st.NumRows()))
		}
		g.reserve(most)
	} else {
		for _, a := range accs {
			a.grow(1, 1)
		}
	}
	for _, st := range states {
		keyCols, _ := p.keyColumns(st)
		if g != nil {
			g.prepare(keyCols)
		}
		inputs := make([][]arrow.Array, len(specs))
		for i, c := range p.cols {
			inputs[i] = st.Columns()[c : c+stateWidth(specs[i].Func)]
		}
		err := eachChunk(ctx, mem, int(st.NumRows()), g, keyCols, accs, inputs, true)
		if err != nil {
			return nil, err
		}
	}
	return p.emit(mem, g, keyTypes, accs, opts)
}

// eachChunk folds the rows of a batch into the accumulators (update from
// input columns, or merge from state columns): inputs[i] are the columns
// accumulator i reads. Rows are taken in order, in chunks, with their group
// ids, until the groups are so many that radix partitioning pays (see
// radix.go).
func eachChunk(ctx context.Context, mem memory.Allocator, rows int, g *grouper, keyCols []arrow.Array, accs []accumulator, inputs [][]arrow.Array, merge bool) error {
	fold := func(in [][]arrow.Array, s span, gids []uint32) {
		for i, a := range accs {
			if merge {
				a.merge(in[i], s, gids)
				continue
			}
			var col arrow.Array
			if len(in[i]) > 0 {
				col = in[i][0]
			}
			a.update(col, s, gids)
		}
	}
	if g == nil {
		for lo := 0; lo < rows; lo += chunkRows {
			if err := ctx.Err(); err != nil {
				return err
			}
			fold(inputs, rowRange(lo, min(lo+chunkRows, rows)), nil)
		}
		return ctx.Err()
	}
	gids := make([]uint32, min(rows, chunkRows))
	for lo := 0; lo < rows; {
		if err := ctx.Err(); err != nil {
			return err
		}
		if lo > 0 {
			hi := min(lo+radixBlockRows, rows)
			g.noteCreated()
			if pos, perm, pg, first, ok := g.radixIDs(keyCols, lo, hi, &g.radix); ok {
				g.noteRadix(byFirstRow(first, uint32(g.size()-len(first)), lo, hi, &g.radix))
				for _, a := range accs {
					a.grow(g.size(), g.hint)
				}
				if err := radixFold(ctx, mem, inputs, lo, hi, pos, perm, pg, fold, &g.keep); err != nil {
					return err
				}
				lo = hi
				continue
			}
		}
		hi := min(lo+chunkRows, rows)
		ids := gids[:hi-lo]
		g.ids(keyCols, lo, hi, ids)
		n := g.size()
		if lo == 0 && hi < rows && n > 1024 {
			g.reserve(estimateDistinct(n, hi, rows))
		}
		for _, a := range accs {
			a.grow(n, g.hint)
		}
		fold(inputs, rowRange(lo, hi), ids)
		lo = hi
	}
	g.noteCreated()
	return ctx.Err()
}

// radixFold scatters rows [lo, hi) of the input columns to their
// partitioned positions pos and folds them in that order, with the group
// ids gids of those positions.
// Scattered columns of strings (or lists of them) go to keep, not
// released: accumulators hold strings that point into them until the state
// is built.
func radixFold(ctx context.Context, mem memory.Allocator, inputs [][]arrow.Array, lo, hi int, pos, perm, gids []uint32, fold func([][]arrow.Array, span, []uint32), keep *[]arrow.Array) error {
	scattered := map[arrow.Array]arrow.Array{}
	defer func() {
		for _, c := range scattered {
			if isFixedWidth(c.DataType()) {
				c.Release()
			} else {
				*keep = append(*keep, c)
			}
		}
	}()
	in := make([][]arrow.Array, len(inputs))
	for i, cols := range inputs {
		for _, c := range cols {
			sc, ok := scattered[c]
			if !ok {
				var err error
				if sc, err = scatterColumn(ctx, mem, c, lo, hi, pos, perm); err != nil {
					return err
				}
				scattered[c] = sc
			}
			in[i] = append(in[i], sc)
		}
	}
	n := hi - lo
	for a := 0; a < n; a += chunkRows {
		if err := ctx.Err(); err != nil {
			return err
		}
		b := min(a+chunkRows, n)
		fold(in, rowRange(a, b), gids[a:b])
	}
	return nil
}

// isFixedWidth reports whether t's values are held in a fixed-width
// buffer (no strings an accumulator could point into).
func isFixedWidth(t arrow.DataType) bool {
	c := classify(t)
	return c == classInt || c == classUint || c == classFloat || c == classBool
}

// estimateDistinct guesses how many distinct keys rows rows hold when the
// first k rows hold d, as if keys were drawn uniformly from a set of N:
// it finds N from d = N(1 - exp(-k/N)), then returns N(1 - exp(-rows/N)).
// It lets a table start at its final size instead of doubling its way
// there when there are many groups.
func estimateDistinct(d, k, rows int) int {
	if d >= k {
		return rows
	}
	expect := func(n float64, draws int) float64 { return n * -math.Expm1(-float64(draws)/n) }
	lo, hi := float64(d), float64(d)
	for expect(hi, k) < float64(d) && hi < 1e15 {
		hi *= 2
	}
	for range 60 {
		mid := (lo + hi) / 2
		if expect(mid, k) < float64(d) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return min(rows, int(expect(hi, rows)))
}

func (p *plan) accumulators() ([]accumulator, error) {
	accs := make([]accumulator, len(p.specs))
	for i := range p.specs {
		a, err := newAcc(&p.specs[i], p.inTypes[i])
		if err != nil {
			return nil, err
		}
		accs[i] = a
	}
	return accs, nil
}

func (p *plan) keyColumns(rec arrow.RecordBatch) ([]arrow.Array, []arrow.DataType) {
	cols := make([]arrow.Array, len(p.keys))
	types := make([]arrow.DataType, len(p.keys))
	for i, k := range p.keys {
		cols[i] = rec.Column(k)
		types[i] = cols[i].DataType()
	}
	return cols, types
}

// emit builds the state record: key columns, then each spec's state columns.
func (p *plan) emit(mem memory.Allocator, g *grouper, keyTypes []arrow.DataType, accs []accumulator, opts Options) (arrow.RecordBatch, error) {
	rows := 1
	var order []uint32
	var cols []arrow.Array
	if g != nil {
		rows = g.size()
		order = g.order
		if opts.DropNullKeys {
			order = nonNullGroups(g, order)
		}
		if order != nil {
			rows = len(order)
		}
		kc, err := g.keyColumns(mem, keyTypes, order)
		if err != nil {
			return nil, err
		}
		cols = kc
	}
	for _, a := range accs {
		cols = append(cols, a.state(mem, order)...)
	}
	defer releaseAll(cols)
	return array.NewRecordBatch(p.stateSchema(), cols, int64(rows)), nil
}

// nonNullGroups returns the groups of order (all, in id order, when nil)
// with no null key; order itself when no group has one.
func nonNullGroups(g *grouper, order []uint32) []uint32 {
	hasNull := false
	for _, t := range g.tables {
		if t.nullID() >= 0 {
			hasNull = true
		}
	}
	if !hasNull {
		return order
	}
	out := make([]uint32, 0, g.size())
	if order == nil {
		for gid := range uint32(g.size()) {
			if !g.hasNullKey(gid) {
				out = append(out, gid)
			}
		}
		return out
	}
	for _, gid := range order {
		if !g.hasNullKey(gid) {
			out = append(out, gid)
		}
	}
	return out
}

// stateWidth is the number of state columns of a function.
func stateWidth(f Func) int {
	switch f {
	case Mean:
		return 2
	case Std, Var:
		return 4
	case Sum, Count, Size, Min, Max, First, Last, NUnique, Any, All:
		return 1
	}
	return 0
}

// statePlan checks a state schema against keys and specs and returns the
// plan to merge or finalize it: cols[i] is the first state column of spec
// i, inTypes[i] the input type the state was made from (as far as the
// kernels care), out the result schema.
func statePlan(schema *arrow.Schema, keys []string, specs []Spec, idx int) (*plan, error) {
	p := &plan{specs: specs}
	if schema.NumFields() < len(keys) {
		return nil, &StateError{Index: idx, Detail: fmt.Sprintf("%d columns, fewer than the %d keys", schema.NumFields(), len(keys))}
	}
	fields := make([]arrow.Field, 0, len(keys)+len(specs))
	for i, k := range keys {
		f := schema.Field(i)
		if f.Name != k {
			return nil, &StateError{Index: idx, Column: f.Name, Detail: fmt.Sprintf("column %d should be key %q", i, k)}
		}
		if !keyTypeOK(f.Type) {
			return nil, &StateError{Index: idx, Column: f.Name, Detail: fmt.Sprintf("key of type %s", f.Type)}
		}
		p.keys = append(p.keys, i)
		p.keyFlds = append(p.keyFlds, f)
		fields = append(fields, f)
	}
	pos := len(keys)
	for si := range specs {
		s := &specs[si]
		w := stateWidth(s.Func)
		if w == 0 {
			return nil, &SpecError{Spec: s, Column: s.Column, Err: ErrUnknownFunc,
				Detail: fmt.Sprintf("unknown function %q (known: %s)", s.Func, funcList())}
		}
		if pos+w > schema.NumFields() {
			return nil, &StateError{Index: idx, Detail: fmt.Sprintf("%d columns, too few for the keys and specs (%s needs %d more)", schema.NumFields(), s, pos+w-schema.NumFields())}
		}
		first := schema.Field(pos).Type
		var in arrow.DataType
		switch s.Func {
		case Sum, Min, Max, First, Last:
			in = first
		case NUnique:
			lt, ok := first.(*arrow.ListType)
			if !ok {
				return nil, &StateError{Index: idx, Column: schema.Field(pos).Name, Detail: fmt.Sprintf("type %s, want a list", first)}
			}
			in = lt.Elem()
		case Mean, Std, Var:
			in = arrow.PrimitiveTypes.Float64
		case Any, All:
			in = arrow.FixedWidthTypes.Boolean
		}
		ot, nullable, err := outputType(s, in)
		if err != nil {
			return nil, &StateError{Index: idx, Column: schema.Field(pos).Name, Detail: err.Error()}
		}
		for j, lf := range stateLayout(s, in) {
			f := schema.Field(pos + j)
			want := s.outName() + ":" + lf.suffix
			if f.Name != want || !arrow.TypeEqual(f.Type, lf.typ) {
				return nil, &StateError{Index: idx, Column: f.Name, Detail: fmt.Sprintf("column %d is %q of type %s, want %q of type %s", pos+j, f.Name, f.Type, want, lf.typ)}
			}
		}
		p.cols = append(p.cols, pos)
		p.inTypes = append(p.inTypes, in)
		fields = append(fields, arrow.Field{Name: s.outName(), Type: ot, Nullable: nullable})
		pos += w
	}
	if pos != schema.NumFields() {
		return nil, &StateError{Index: idx, Detail: fmt.Sprintf("%d columns, %d more than the keys and specs call for", schema.NumFields(), schema.NumFields()-pos)}
	}
	p.out = arrow.NewSchema(fields, nil)
	return p, nil
}

// Finalize turns a partial state (from Partial or Merge) into the result:
// the key columns, then one column per spec, with the schema ResultSchema
// gives. With opts.Sort the rows are sorted by the keys, nulls last;
// otherwise they keep the state's order.
func Finalize(ctx context.Context, state arrow.RecordBatch, keys []string, specs []Spec, opts Options, mem memory.Allocator) (arrow.RecordBatch, error) {
	if state == nil {
		return nil, errors.New("agg: Finalize given a nil partial state")
	}
	p, err := statePlan(state.Schema(), keys, specs, 0)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rows := int(state.NumRows())
	keyCols, _ := p.keyColumns(state)
	var order []uint32
	if len(keys) > 0 {
		if opts.DropNullKeys {
			order = rowsWithoutNullKeys(keyCols)
		}
		if opts.Sort {
			var err error
			if order, err = sortedRows(ctx, keyCols, order, rows); err != nil {
				return nil, err
			}
		}
	}
	if order != nil {
		rows = len(order)
	}
	cols := make([]arrow.Array, 0, len(p.out.Fields()))
	defer func() { releaseAll(cols) }()
	for _, c := range keyCols {
		t, err := take(ctx, mem, c, order)
		if err != nil {
			return nil, err
		}
		cols = append(cols, t)
	}
	for i := range specs {
		sc := state.Columns()[p.cols[i] : p.cols[i]+stateWidth(specs[i].Func)]
		c, err := finalizeSpec(ctx, mem, &specs[i], sc, order)
		if err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	return array.NewRecordBatch(p.out, cols, int64(rows)), nil
}

// rowsWithoutNullKeys lists the rows with no null key, or nil when all are.
func rowsWithoutNullKeys(keyCols []arrow.Array) []uint32 {
	any := false
	for _, c := range keyCols {
		if c.NullN() > 0 || dictHasNulls(c) {
			any = true
		}
	}
	if !any {
		return nil
	}
	n := keyCols[0].Len()
	order := make([]uint32, 0, n)
rows:
	for i := range n {
		for _, c := range keyCols {
			if isNullKey(c, i) {
				continue rows
			}
		}
		order = append(order, uint32(i))
	}
	return order
}

func dictHasNulls(c arrow.Array) bool {
	d, ok := c.(*array.Dictionary)
	return ok && d.Dictionary().NullN() > 0
}

func isNullKey(c arrow.Array, i int) bool {
	if c.IsNull(i) {
		return true
	}
	if d, ok := c.(*array.Dictionary); ok {
		return d.Dictionary().IsNull(d.GetValueIndex(i))
	}
	return false
}

// finalizeSpec computes a spec's result column from its state columns, for
// the rows in order (all when nil).
func finalizeSpec(ctx context.Context, mem memory.Allocator, s *Spec, sc []arrow.Array, order []uint32) (arrow.Array, error) {
	switch s.Func {
	case Mean:
		sums := rowbuf.Values[float64](sc[0])
		counts := rowbuf.Values[int64](sc[1])
		return floatResult(mem, order, len(counts), func(r int) (float64, bool) {
			c := counts[r]
			return sums[r] / float64(c), c > 0
		}), nil
	case Std, Var:
		counts := rowbuf.Values[int64](sc[0])
		m2s := rowbuf.Values[float64](sc[2])
		ddof := int64(s.DDOF)
		std := s.Func == Std
		return floatResult(mem, order, len(counts), func(r int) (float64, bool) {
			d := counts[r] - ddof
			if d <= 0 {
				return 0, false
			}
			v := m2s[r] / float64(d)
			if std {
				v = math.Sqrt(v)
			}
			return v, true
		}), nil
	case NUnique:
		offs := listOffsets(sc[0].(*array.List))
		n := sc[0].Len()
		if order != nil {
			n = len(order)
		}
		buf, out := rowbuf.NewBuffer[int64](mem, n)
		for j := range n {
			r := j
			if order != nil {
				r = int(order[j])
			}
			out[j] = int64(offs[r+1] - offs[r])
		}
		return rowbuf.MakeArray(arrow.PrimitiveTypes.Int64, n, []*memory.Buffer{nil, buf}, 0), nil
	}
	return take(ctx, mem, sc[0], order)
}

// floatResult builds a float64 column of n rows (or len(order)) from f,
// whose second result says whether the value is valid.
func floatResult(mem memory.Allocator, order []uint32, n int, f func(r int) (float64, bool)) arrow.Array {
	if order != nil {
		n = len(order)
	}
	buf, out := rowbuf.NewBuffer[float64](mem, n)
	valid := make([]bool, n)
	for j := range n {
		r := j
		if order != nil {
			r = int(order[j])
		}
		out[j], valid[j] = f(r)
		if !valid[j] {
			out[j] = 0
		}
	}
	vbuf, nulls := rowbuf.ValidityFrom(mem, valid)
	return rowbuf.MakeArray(arrow.PrimitiveTypes.Float64, n, []*memory.Buffer{vbuf, buf}, nulls)
}
