package dataframe_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	df "github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/dataframe/dftest"
)

func TestRepartitionSize(t *testing.T) {
	ctx := context.Background()
	e := newExec(t)
	// 6 partitions of 1000 int64 rows (8 kB of values each) and one
	// small one.
	var parts []df.DataFrame
	var all []int64
	for p := range 7 {
		n := 1000
		if p == 3 {
			n = 10
		}
		vals := make([]int64, n)
		for i := range vals {
			vals[i] = int64(len(all))
			all = append(all, vals[i])
		}
		parts = append(parts, df.FromColumns("x", vals))
	}
	frame := df.Concat(parts...)
	for _, tc := range []struct {
		target   int64
		min, max int
	}{
		{2_000, 24, 40}, // cut: each partition in pieces
		{20_000, 2, 4},  // concatenated by twos
		{1 << 30, 1, 1}, // all in one
		{12_000, 5, 8},  // about as they are
	} {
		got, err := frame.RepartitionSize(ctx, e, tc.target)
		if err != nil {
			t.Fatal(err)
		}
		if n := got.NPartitions(); n < tc.min || n > tc.max {
			t.Errorf("target %d: %d partitions, want %d to %d", tc.target, n, tc.min, tc.max)
		}
		want := dftest.Table(t, dftest.Int64s("x", anys(all)...))
		dftest.AssertEqual(t, compute(t, got), want) // in order
	}
	if _, err := frame.RepartitionSize(ctx, e, 0); err == nil {
		t.Error("a target of 0 bytes: no error")
	}
}

func anys[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

func TestRepartitionDivisions(t *testing.T) {
	ctx := context.Background()
	d, keys := randomFrame(t, 21, 3000, 5)
	indexed, err := d.DropNull("k").SetIndex(ctx, newExec(t), "k")
	if err != nil {
		t.Fatal(err)
	}
	got := indexed.RepartitionDivisions(0, 100, 400, 700, 1000)
	if err := got.Err(); err != nil {
		t.Fatal(err)
	}
	if got.NPartitions() != 4 {
		t.Fatalf("%d partitions, want 4", got.NPartitions())
	}
	if divs := got.Divisions(); len(divs) != 5 || divs[0] != nil || divs[1] != int64(100) || divs[4] != nil {
		t.Errorf("divisions %v", divs)
	}
	// Each partition holds its range, sorted.
	ranges := [][2]int64{{-1 << 62, 100}, {100, 400}, {400, 700}, {700, 1 << 62}}
	var seen []int64
	g, pkeys, err := got.Graph()
	if err != nil {
		t.Fatal(err)
	}
	vals, err := newExec(t).Compute(ctx, g, pkeys...)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vals {
		rec := v.(arrow.RecordBatch)
		defer rec.Release()
		col := rec.Column(rec.Schema().FieldIndices("k")[0]).(*array.Int64)
		for j := range col.Len() {
			v := col.Value(j)
			if v < ranges[i][0] || v >= ranges[i][1] {
				t.Fatalf("partition %d holds %d", i, v)
			}
			if j > 0 && col.Value(j-1) > v {
				t.Fatalf("partition %d is not sorted at row %d", i, j)
			}
			seen = append(seen, v)
		}
	}
	slices.Sort(keys)
	if !slices.Equal(seen, keys) {
		t.Fatalf("%d keys after repartitioning, want %d", len(seen), len(keys))
	}
	// Loc reads only the partitions that can match.
	if plan := got.Loc(int64(150), int64(300)).Explain(); !strings.Contains(plan, "Partitions [1]") {
		t.Errorf("Loc(150, 300) does not select partition 1 only:\n%s", plan)
	}
	for _, tc := range []struct {
		name string
		got  df.DataFrame
		want string
	}{
		{"no index", d.RepartitionDivisions(1, 2), "no index"},
		{"decreasing", indexed.RepartitionDivisions(5, 3), "increase"},
		{"one", indexed.RepartitionDivisions(5), "at least 2"},
		{"wrong type", indexed.RepartitionDivisions("a", "b", "c"), "does not fit"},
	} {
		if err := tc.got.Err(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one that says %q", tc.name, err, tc.want)
		}
	}
}
