package inproc

import (
	"slices"
	"testing"
)

func TestTable(t *testing.T) {
	var released []string
	tab := Table[string, string]{OnRelease: func(v string) { released = append(released, v) }}
	a := tab.Hold("a", "A")
	a2 := tab.Hold("a", "A") // held twice: the same id
	b := tab.Hold("b", "B")
	if a != a2 || a == b {
		t.Fatalf("ids %d %d %d", a, a2, b)
	}
	tab.Release([]uint64{a, b})
	if v, ok := tab.Get(a); !ok || v != "A" {
		t.Errorf("a after one release: %q %v", v, ok)
	}
	if _, ok := tab.Get(b); ok {
		t.Error("b still held")
	}
	tab.Release([]uint64{a, a, 999}) // extra and unknown releases do nothing
	if _, ok := tab.Get(a); ok {
		t.Error("a still held")
	}
	if !slices.Equal(released, []string{"B", "A"}) {
		t.Errorf("released %v", released)
	}
	if c := tab.Hold("a", "A2"); c == a {
		t.Error("an id reused after release")
	}
}
