package csv

import (
	"math/bits"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// poolAllocator recycles buffers by power-of-two size class, as an
// executor's allocator could; it shows what reading costs without fresh
// memory from the operating system.
type poolAllocator struct {
	mu    sync.Mutex
	free  [64][][]byte
	inner memory.GoAllocator
}

func (a *poolAllocator) Allocate(size int) []byte {
	c := bits.Len(uint(max(size, 64) - 1))
	a.mu.Lock()
	if n := len(a.free[c]); n > 0 {
		b := a.free[c][n-1]
		a.free[c] = a.free[c][:n-1]
		a.mu.Unlock()
		return b[:size]
	}
	a.mu.Unlock()
	return a.inner.Allocate(1 << c)[:size]
}

func (a *poolAllocator) Reallocate(size int, b []byte) []byte {
	if cap(b) >= size {
		return b[:size]
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

func (a *poolAllocator) Free(b []byte) {
	c := bits.Len(uint(cap(b)) - 1)
	if cap(b) != 1<<c {
		return
	}
	a.mu.Lock()
	a.free[c] = append(a.free[c], b[:cap(b)])
	a.mu.Unlock()
}
