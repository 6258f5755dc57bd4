package joink

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/internal/distinct/rows"
)

// Probe joins the batch probe (the side spec.Build does not name) with the
// build side held by ht, whose keys must be spec's keys of the build side.
//
// It returns the probe rows in order, each followed by its matches in the
// order of the build rows; a probe row without a match appears once, with
// nulls for the build columns, when the join keeps the probe side's rows
// (a left join probed by the left side, a right join probed by the right
// side, an outer join), and not at all otherwise. Keys match when they are
// equal and not null; a null or NaN key never matches (as in SQL; pandas
// would match NaN with NaN).
func Probe(ctx context.Context, ht *HashTable, probe arrow.RecordBatch, spec Spec, mem memory.Allocator) (arrow.RecordBatch, error) {
	if ht == nil || ht.rec == nil {
		return nil, errors.New("joink: Probe given no hash table (nil or released)")
	}
	if probe == nil {
		return nil, errors.New("joink: Probe given a nil record batch")
	}
	p, err := planFor(ht, probe.Schema(), spec)
	if err != nil {
		return nil, err
	}
	probeSide := LeftSide
	pkeys := p.lkeys
	if spec.Build == LeftSide {
		probeSide, pkeys = RightSide, p.rkeys
	}
	cols := make([]arrow.Array, len(pkeys))
	for k, i := range pkeys {
		cols[k] = probe.Column(i)
	}
	ids, err := ht.enc.Lookup(ctx, cols)
	if err != nil {
		return nil, fmt.Errorf("joink: probe: %w", err)
	}
	keepProbe := spec.How.preserves(probeSide)
	trackBuild := spec.How.preserves(spec.Build)

	// Count the output rows, then fill the row numbers of both sides.
	total := 0
	for _, g := range ids {
		if g == rows.NoID {
			if keepProbe {
				total++
			}
			continue
		}
		lo, hi := ht.rowsOf(g)
		total += int(hi - lo)
	}
	if total > math.MaxInt32 {
		return nil, fmt.Errorf("joink: %s join of %d probe rows gives %d rows, more than a batch holds (%d); split the probe side",
			spec.How, probe.NumRows(), total, math.MaxInt32)
	}
	pi := make([]int32, total)
	bi := make([]int32, total)
	j := 0
	for r, g := range ids {
		if r%rows.ChunkRows == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if g == rows.NoID {
			if keepProbe {
				pi[j], bi[j] = int32(r), -1
				j++
			}
			continue
		}
		if trackBuild {
			ht.markMatched(g)
		}
		lo, hi := ht.rowsOf(g)
		for k := lo; k < hi; k++ {
			pi[j], bi[j] = int32(r), ht.row(k)
			j++
		}
	}
	if spec.Build == RightSide {
		return p.assemble(ctx, mem, probe, pi, ht.rec, bi)
	}
	return p.assemble(ctx, mem, ht.rec, bi, probe, pi)
}

// Unmatched returns the build rows that no probe has matched so far, in
// build order, with nulls for the probe side's columns (probeSchema is the
// probe side's schema), when the join keeps the build side's rows (a left
// join built on the left side, a right join built on the right, an outer
// join); otherwise it returns no rows. Call it after every probe of the
// table: rows with a null key are always among them.
func (ht *HashTable) Unmatched(ctx context.Context, probeSchema *arrow.Schema, spec Spec, mem memory.Allocator) (arrow.RecordBatch, error) {
	if ht == nil || ht.rec == nil {
		return nil, errors.New("joink: Unmatched given no hash table (nil or released)")
	}
	p, err := planFor(ht, probeSchema, spec)
	if err != nil {
		return nil, err
	}
	var bi []int32
	if spec.How.preserves(spec.Build) {
		keep := make([]bool, ht.NumRows())
		for _, r := range ht.noKey {
			keep[r] = true
		}
		for g := range ht.nkeys {
			if atomic.LoadUint32(&ht.matched[g]) != 0 {
				continue
			}
			lo, hi := ht.rowsOf(uint32(g))
			for k := lo; k < hi; k++ {
				keep[ht.row(k)] = true
			}
		}
		for r, k := range keep {
			if k {
				bi = append(bi, int32(r))
			}
		}
	}
	pi := make([]int32, len(bi))
	for j := range pi {
		pi[j] = -1
	}
	if spec.Build == RightSide {
		return p.assemble(ctx, mem, nil, pi, ht.rec, bi)
	}
	return p.assemble(ctx, mem, ht.rec, bi, nil, pi)
}

// planFor checks spec against the build side of ht and the probe schema.
func planFor(ht *HashTable, probeSchema *arrow.Schema, spec Spec) (*plan, error) {
	left, right := probeSchema, ht.rec.Schema()
	buildKeys := spec.RightOn
	if spec.Build == LeftSide {
		left, right = right, left
		buildKeys = spec.LeftOn
	}
	if !slices.Equal(buildKeys, ht.keys) {
		return nil, fmt.Errorf("joink: the hash table was built on keys %v, but the spec's %s keys are %v: %w",
			ht.keys, spec.Build, buildKeys, ErrBadSpec)
	}
	return newPlan(left, right, spec)
}

// assemble builds the output rows: row j joins left row li[j] with right
// row ri[j], -1 meaning none (nulls). A nil side has no rows at all.
func (p *plan) assemble(ctx context.Context, mem memory.Allocator, left arrow.RecordBatch, li []int32, right arrow.RecordBatch, ri []int32) (arrow.RecordBatch, error) {
	n := len(li)
	cols := make([]arrow.Array, len(p.cols))
	ok := false
	defer func() {
		if !ok {
			rows.ReleaseAll(cols)
		}
	}()
	gather := func(rec arrow.RecordBatch, c int, idx []int32, typ arrow.DataType) (arrow.Array, error) {
		if rec == nil {
			return rows.Nulls(mem, typ, n), nil
		}
		col := rec.Column(c)
		if rows.IsIdentity(idx, int(rec.NumRows())) {
			col.Retain()
			return col, nil
		}
		return rows.Take(ctx, mem, col, idx)
	}
	for k, oc := range p.cols {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var a arrow.Array
		var err error
		switch oc.src {
		case fromLeft:
			a, err = gather(left, oc.li, li, oc.typ)
		case fromRight:
			a, err = gather(right, oc.ri, ri, oc.typ)
		case fromMerged:
			a, err = p.mergedKey(ctx, mem, oc, left, li, right, ri)
		case fromIndicator:
			a = indicator(mem, li, ri)
		}
		if err != nil {
			return nil, fmt.Errorf("joink: output column %q: %w", p.out.Field(k).Name, err)
		}
		cols[k] = a
	}
	out := array.NewRecordBatch(p.out, cols, int64(n))
	rows.ReleaseAll(cols)
	ok = true
	return out, nil
}

// mergedKey builds a key column that both sides share: the left value
// where there is a left row, else the right value, in the output type.
func (p *plan) mergedKey(ctx context.Context, mem memory.Allocator, oc outCol, left arrow.RecordBatch, li []int32, right arrow.RecordBatch, ri []int32) (arrow.Array, error) {
	var lc, rc arrow.Array
	if left != nil && p.spec.How != Right {
		c, err := castTo(ctx, mem, left.Column(oc.li), oc.typ)
		if err != nil {
			return nil, fmt.Errorf("left key %q: %w", p.left.Field(oc.li).Name, err)
		}
		defer c.Release()
		lc = c
	}
	if right != nil && (p.spec.How == Right || p.spec.How == Outer || left == nil) {
		c, err := castTo(ctx, mem, right.Column(oc.ri), oc.typ)
		if err != nil {
			return nil, fmt.Errorf("right key %q: %w", p.right.Field(oc.ri).Name, err)
		}
		defer c.Release()
		rc = c
	}
	take := func(a arrow.Array, idx []int32) (arrow.Array, error) {
		if rows.IsIdentity(idx, a.Len()) {
			a.Retain()
			return a, nil
		}
		return rows.Take(ctx, mem, a, idx)
	}
	switch {
	case lc != nil && rc != nil:
		return rows.Coalesce(ctx, mem, lc, li, rc, ri)
	case lc != nil:
		return take(lc, li)
	case rc != nil:
		return take(rc, ri)
	}
	return rows.Nulls(mem, oc.typ, len(li)), nil
}

// castTo returns arr in type typ (arr itself, retained, when it has it).
func castTo(ctx context.Context, mem memory.Allocator, arr arrow.Array, typ arrow.DataType) (arrow.Array, error) {
	if arrow.TypeEqual(arr.DataType(), typ) {
		arr.Retain()
		return arr, nil
	}
	out, err := compute.CastArray(compute.WithAllocator(ctx, mem), arr, compute.SafeCastOptions(typ))
	if err != nil {
		return nil, fmt.Errorf("cast %s to %s: %w", arr.DataType(), typ, err)
	}
	return out, nil
}

// indicator builds the _merge column.
func indicator(mem memory.Allocator, li, ri []int32) arrow.Array {
	buf, idx := rows.NewBuffer[int8](mem, len(li))
	for j := range idx {
		switch {
		case li[j] >= 0 && ri[j] >= 0:
			idx[j] = indBoth
		case li[j] >= 0:
			idx[j] = indLeftOnly
		default:
			idx[j] = indRightOnly
		}
	}
	ind := rows.MakeArray(arrow.PrimitiveTypes.Int8, len(li), []*memory.Buffer{nil, buf}, 0)
	defer ind.Release()
	dict := rows.Strings(mem, arrow.BinaryTypes.String, []string{"left_only", "right_only", "both"}, nil)
	defer dict.Release()
	return array.NewDictionaryArray(IndicatorType, ind, dict)
}
