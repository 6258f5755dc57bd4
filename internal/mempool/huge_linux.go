package mempool

import "syscall"

// adviseHuge asks Linux to back b with transparent huge pages when it is
// first touched (MADV_HUGEPAGE; only where THP is "madvise" or "always").
// Advice that fails changes nothing: the buffer works the same.
func adviseHuge(b []byte) { _ = syscall.Madvise(b, syscall.MADV_HUGEPAGE) }
