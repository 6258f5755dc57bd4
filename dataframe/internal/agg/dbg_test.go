package agg

import (
	"fmt"
	"testing"
	"time"
)

func TestDbgProbe(t *testing.T) {
	for _, format := range []string{"id%010d", "id%03d", "%d"} {
		tb := newStrTable()
		n := 100000
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf(format, i+1)
		}
		start := time.Now()
		for _, k := range keys {
			tb.find(k)
		}
		el := time.Since(start)
		// probe lengths
		total := 0
		for _, k := range keys {
			h := hashString(k)
			i := h & tb.mask
			p := 1
			for tb.value(tb.slots[i].id-1) != k {
				i = (i + 1) & tb.mask
				p++
			}
			total += p
		}
		t.Logf("%s: %d ids, %d slots, avg probe %.2f, %v", format, tb.size(), len(tb.slots), float64(total)/float64(n), el)
	}
}

func BenchmarkDbgInsert(b *testing.B) {
	n := 100000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("id%010d", i+1)
	}
	for b.Loop() {
		tb := newStrTable()
		for _, k := range keys {
			tb.find(k)
		}
	}
}

func BenchmarkDbgMap(b *testing.B) {
	n := 100000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("id%010d", i+1)
	}
	for b.Loop() {
		m := map[string]uint32{}
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				m[k] = uint32(len(m))
			}
		}
	}
}

func BenchmarkDbgInsertPresized(b *testing.B) {
	n := 100000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("id%010d", i+1)
	}
	for b.Loop() {
		tb := newStrTable()
		tb.slots = make([]strSlot, 1<<18)
		tb.mask = 1<<18 - 1
		for _, k := range keys {
			tb.find(k)
		}
	}
}

func BenchmarkDbgLookup(b *testing.B) {
	n := 100000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("id%010d", i+1)
	}
	tb := newStrTable()
	for _, k := range keys {
		tb.find(k)
	}
	m := map[string]uint32{}
	for _, k := range keys {
		m[k] = uint32(len(m))
	}
	b.Run("table", func(b *testing.B) {
		for b.Loop() {
			for _, k := range keys {
				tb.find(k)
			}
		}
	})
	b.Run("map", func(b *testing.B) {
		for b.Loop() {
			for _, k := range keys {
				_ = m[k]
			}
		}
	})
}
