// Package procmem reads what the process uses of the machine: memory, CPU
// time, file descriptors.
package procmem

import (
	"bytes"
	"os"
	"runtime/metrics"
	"strconv"

	"github.com/shoal-data/shoal/internal/units"
)

var pageSize = int64(os.Getpagesize())

// RSS returns the resident set size of the process in bytes: what the
// operating system counts against it. Where /proc is not available, it
// returns the memory the Go runtime holds from the system.
func RSS() int64 {
	if b, err := os.ReadFile("/proc/self/statm"); err == nil {
		f := bytes.Fields(b)
		if len(f) > 1 {
			if pages, err := strconv.ParseInt(string(f[1]), 10, 64); err == nil {
				return pages * pageSize
			}
		}
	}
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		return int64(s[0].Value.Uint64())
	}
	return 0
}

// RSSOf returns the resident set size of process pid in bytes, read from
// /proc; ok is false where it cannot be read (the process is gone, or there
// is no /proc).
func RSSOf(pid int) (n int64, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0, false
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * pageSize, true
}

// Format writes a byte count in binary units, for logs.
func Format(n int64) string { return units.Bytes(n) }
