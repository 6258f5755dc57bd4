package distinct

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/dataframe/internal/distinct/rows"
)

// groups are the rows of a batch grouped by key columns.
type groups struct {
	keyCols []int
	ids     []uint32 // group id of each row; NoID for rows left out
	groups  []uint32 // group ids in output order
	first   []int32  // first row of each group, in output order
	starts  []int32  // rows of group g: order[starts[g]:starts[g+1]]
	order   []int32
}

func (g *groups) rowsOf(gid uint32) []int32 { return g.order[g.starts[gid]:g.starts[gid+1]] }

func columnIndex(s *arrow.Schema, name, what string) (int, error) {
	is := s.FieldIndices(name)
	if len(is) == 1 {
		return is[0], nil
	}
	if len(is) > 1 {
		return 0, fmt.Errorf("distinct: %s: %d columns are named %q: %w", what, len(is), name, ErrBadColumn)
	}
	var names []string
	for _, f := range s.Fields() {
		names = append(names, f.Name)
	}
	return 0, fmt.Errorf("distinct: %s: no column %q (columns: %v): %w", what, name, names, ErrBadColumn)
}

// keyColumns checks key columns: they exist and can be keys.
func keyColumns(s *arrow.Schema, keys []string, what string) ([]int, error) {
	idx := make([]int, len(keys))
	for i, k := range keys {
		c, err := columnIndex(s, k, what)
		if err != nil {
			return nil, err
		}
		if t := s.Field(c).Type; rows.KindOf(t) == rows.KindNone {
			return nil, fmt.Errorf("distinct: %s: column %q has type %s, which cannot be compared for equality: %w", what, k, t, ErrBadColumn)
		}
		idx[i] = c
	}
	return idx, nil
}

// encode gives each row the id of its tuple of key values (ids in order of
// first rows). With dropNulls, rows with a null (or NaN) key get NoID.
func encode(ctx context.Context, rec arrow.RecordBatch, keyCols []int, dropNulls bool) ([]uint32, int, error) {
	types := make([]arrow.DataType, len(keyCols))
	cols := make([]arrow.Array, len(keyCols))
	for i, c := range keyCols {
		types[i], cols[i] = rec.Schema().Field(c).Type, rec.Column(c)
	}
	enc, err := rows.NewEncoder(types, !dropNulls)
	if err != nil {
		return nil, 0, fmt.Errorf("distinct: %w", err)
	}
	ids, err := enc.Insert(ctx, cols)
	if err != nil {
		return nil, 0, fmt.Errorf("distinct: %w", err)
	}
	return ids, enc.Len(), nil
}

func groupRows(ctx context.Context, rec arrow.RecordBatch, keys []string, opts GroupOptions) (*groups, error) {
	keyCols, err := keyColumns(rec.Schema(), keys, "group key")
	if err != nil {
		return nil, err
	}
	g := &groups{keyCols: keyCols}
	var n int
	if len(keys) == 0 {
		// One group of every row.
		g.ids = make([]uint32, rec.NumRows())
		if rec.NumRows() > 0 {
			n = 1
		}
	} else if g.ids, n, err = encode(ctx, rec, keyCols, opts.DropNullKeys); err != nil {
		return nil, err
	}
	first := rows.FirstRows(g.ids, n)
	g.starts, g.order = rows.Group(g.ids, n)
	g.groups = make([]uint32, n)
	for i := range g.groups {
		g.groups[i] = uint32(i)
	}
	if opts.Sort && len(keys) > 0 {
		cmps := make([]func(a, b int32) int, len(keyCols))
		for i, c := range keyCols {
			cmps[i] = rows.Comparator(rec.Column(c), false)
		}
		slices.SortStableFunc(g.groups, func(a, b uint32) int {
			for _, cmp := range cmps {
				if cmp == nil {
					continue
				}
				if r := cmp(first[a], first[b]); r != 0 {
					return r
				}
			}
			return 0
		})
	}
	g.first = make([]int32, n)
	for i, gid := range g.groups {
		g.first[i] = first[gid]
	}
	return g, nil
}
