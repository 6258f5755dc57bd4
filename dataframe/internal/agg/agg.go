package agg

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// chunkRows is how many rows the kernels take at a time: the group ids of a
// chunk stay in cache while every aggregate runs over it, and the context is
// checked between chunks.
const chunkRows = 1 << 16

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
		g.prepare(keyCols)
	} else {
		for _, a := range accs {
			a.grow(1)
		}
	}
	inputs := make([]arrow.Array, len(specs))
	for i, c := range p.cols {
		if c >= 0 {
			inputs[i] = rec.Column(c)
		}
	}
	err = eachChunk(ctx, int(rec.NumRows()), g, keyCols, func(lo, hi int, gids []uint32) {
		for i, a := range accs {
			a.update(inputs[i], lo, hi, gids)
		}
	}, accs)
	if err != nil {
		return nil, err
	}
	return p.emit(mem, g, keyTypes, accs, opts)
}

// Merge combines partial states made by Partial or Merge into one, for the
// same keys, specs and options. Order matters for first and last: values of
// earlier states come first.
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
		// Each state has distinct groups: the largest is a lower bound.
		most := 0
		for _, st := range states {
			most = max(most, int(st.NumRows()))
		}
		g.reserve(most)
	} else {
		for _, a := range accs {
			a.grow(1)
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
		err := eachChunk(ctx, int(st.NumRows()), g, keyCols, func(lo, hi int, gids []uint32) {
			for i, a := range accs {
				a.merge(inputs[i], lo, hi, gids)
			}
		}, accs)
		if err != nil {
			return nil, err
		}
	}
	return p.emit(mem, g, keyTypes, accs, opts)
}

// eachChunk runs fn over the rows in chunks, with the chunk's group ids
// (nil when there are no keys), growing the accumulators to the number of
// groups first.
func eachChunk(ctx context.Context, rows int, g *grouper, keyCols []arrow.Array, fn func(lo, hi int, gids []uint32), accs []accumulator) error {
	var gids []uint32
	if g != nil {
		gids = make([]uint32, min(rows, chunkRows))
	}
	for lo := 0; lo < rows; lo += chunkRows {
		if err := ctx.Err(); err != nil {
			return err
		}
		hi := min(lo+chunkRows, rows)
		var ids []uint32
		if g != nil {
			ids = gids[:hi-lo]
			g.ids(keyCols, lo, hi, ids)
			n := g.size()
			for _, a := range accs {
				a.grow(n)
			}
		}
		fn(lo, hi, ids)
	}
	return ctx.Err()
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
		if opts.DropNullKeys {
			order = nonNullGroups(g)
			if order != nil {
				rows = len(order)
			}
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

// nonNullGroups lists the groups with no null key, or returns nil when no
// group has one.
func nonNullGroups(g *grouper) []uint32 {
	hasNull := false
	for _, t := range g.tables {
		if t.nullID() >= 0 {
			hasNull = true
		}
	}
	if !hasNull {
		return nil
	}
	order := make([]uint32, 0, g.size())
	for gid := range uint32(g.size()) {
		if !g.hasNullKey(gid) {
			order = append(order, gid)
		}
	}
	return order
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
			if order == nil {
				order = make([]uint32, rows)
				for i := range order {
					order[i] = uint32(i)
				}
			}
			sortRows(keyCols, order)
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
		sums := fixedValues[float64](sc[0])
		counts := fixedValues[int64](sc[1])
		return floatResult(mem, order, len(counts), func(r int) (float64, bool) {
			c := counts[r]
			return sums[r] / float64(c), c > 0
		}), nil
	case Std, Var:
		counts := fixedValues[int64](sc[0])
		m2s := fixedValues[float64](sc[2])
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
		buf, out := newBuffer[int64](mem, n)
		for j := range n {
			r := j
			if order != nil {
				r = int(order[j])
			}
			out[j] = int64(offs[r+1] - offs[r])
		}
		return makeArray(arrow.PrimitiveTypes.Int64, n, []*memory.Buffer{nil, buf}, 0), nil
	}
	return take(ctx, mem, sc[0], order)
}

// floatResult builds a float64 column of n rows (or len(order)) from f,
// whose second result says whether the value is valid.
func floatResult(mem memory.Allocator, order []uint32, n int, f func(r int) (float64, bool)) arrow.Array {
	if order != nil {
		n = len(order)
	}
	buf, out := newBuffer[float64](mem, n)
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
	vbuf, nulls := validityFrom(mem, valid)
	return makeArray(arrow.PrimitiveTypes.Float64, n, []*memory.Buffer{vbuf, buf}, nulls)
}
