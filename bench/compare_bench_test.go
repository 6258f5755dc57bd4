package main

import (
	"fmt"
	"testing"
)

// BenchmarkCompareTables compares two q10-like answers of a million rows.
func BenchmarkCompareTables(b *testing.B) {
	const n = 1_000_000
	mk := func(rev bool) *table {
		t := newTable("id1", "id2", "id3", "id4", "id5", "id6", "v3", "count")
		for i := range n {
			r := i
			if rev {
				r = n - 1 - i
			}
			if err := t.appendRow(fmt.Sprintf("id%03d", r%100), fmt.Sprintf("id%03d", r%97), fmt.Sprintf("id%010d", r),
				int64(r%100), int64(r%89), int64(r), float64(r)*0.5, int64(1)); err != nil {
				b.Fatal(err)
			}
		}
		return t
	}
	want := mk(false)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		got := mk(true)
		b.StartTimer()
		if err := compareTables(got, want); err != nil {
			b.Fatal(err)
		}
	}
}
