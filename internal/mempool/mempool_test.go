package mempool

import (
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestReuseAndZeroing(t *testing.T) {
	a := New(1 << 20)
	tests := []int{1, 63, 64, 65, 1000, 4096, 100_000, 5 << 20} // the last one huge-page backed
	for _, size := range tests {
		b := a.Allocate(size)
		if len(b) != size {
			t.Fatalf("len %d, want %d", len(b), size)
		}
		for i := range b {
			b[i] = 0xff
		}
		a.Free(b)
		c := a.Allocate(size)
		for i, x := range c {
			if x != 0 {
				t.Fatalf("size %d: reused byte %d is %x, not zero", size, i, x)
			}
		}
		a.Free(c)
	}
	reused, fresh, idle := a.Stats()
	// Small sizes share a class, so later first allocations reuse too.
	if reused < int64(len(tests)) || fresh > int64(len(tests)) || idle == 0 {
		t.Errorf("reused %d fresh %d idle %d", reused, fresh, idle)
	}
}

func TestAllocateUninitRecycles(t *testing.T) {
	a := New(1 << 20)
	for _, size := range []int{1, 64, 4096, 100_000} {
		b := a.AllocateUninit(size)
		if len(b) != size || cap(b) != 1<<class(size) {
			t.Fatalf("size %d: len %d cap %d", size, len(b), cap(b))
		}
		b[0] = 0xab
		a.Free(b)
		c := a.AllocateUninit(size)
		if &c[0] != &b[0] || c[0] != 0xab {
			t.Errorf("size %d: the freed buffer was not handed out again as it was", size)
		}
		// Zeroed allocations of the same class still get zeros.
		a.Free(c)
		if z := a.Allocate(size); z[0] != 0 {
			t.Errorf("size %d: Allocate after AllocateUninit gave %x, not zero", size, z[0])
		}
	}
}

func TestIdleBound(t *testing.T) {
	a := New(8 << 10)
	var bufs [][]byte
	for range 10 {
		bufs = append(bufs, a.Allocate(4<<10))
	}
	for _, b := range bufs {
		a.Free(b)
	}
	if _, _, idle := a.Stats(); idle > 8<<10 {
		t.Errorf("idle %d beyond the bound", idle)
	}
	// Foreign buffers (not a power of two) are dropped, not kept.
	a.Free(make([]byte, 100))
	if _, _, idle := a.Stats(); idle > 8<<10 {
		t.Errorf("idle %d", idle)
	}
}

func TestReallocate(t *testing.T) {
	a := New(1 << 20)
	b := a.Allocate(10)
	copy(b, "0123456789")
	b = a.Reallocate(1000, b)
	if string(b[:10]) != "0123456789" || len(b) != 1000 || b[999] != 0 {
		t.Errorf("reallocate lost contents")
	}
	b = a.Reallocate(5, b)
	if string(b) != "01234" {
		t.Errorf("shrink: %q", b)
	}
}

// TestWithArrow builds arrays through a checked allocator on top of the
// pool, concurrently, and checks nothing leaks.
func TestWithArrow(t *testing.T) {
	pool := New(64 << 20)
	mem := memory.NewCheckedAllocator(pool)
	defer mem.AssertSize(t, 0)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				b := array.NewInt64Builder(mem)
				for j := range 1000 + g*i {
					if j%7 == 0 {
						b.AppendNull()
					} else {
						b.Append(int64(j))
					}
				}
				arr := b.NewArray()
				if arr.NullN() != (1000+g*i+6)/7 {
					t.Errorf("nulls %d", arr.NullN())
				}
				arr.Release()
				b.Release()
			}
		}()
	}
	wg.Wait()
}
