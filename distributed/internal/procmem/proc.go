package procmem

import (
	"os"
	"syscall"
	"time"
)

// CPUSeconds returns the CPU time the process has used so far, user and
// system, or a negative number where it cannot be read.
func CPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	d := time.Duration(ru.Utime.Nano()) + time.Duration(ru.Stime.Nano())
	return d.Seconds()
}

// OpenFiles returns how many file descriptors the process has open, or -1
// where it cannot be read (no /proc).
func OpenFiles() int {
	f, err := os.Open("/proc/self/fd")
	if err != nil {
		return -1
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return -1
	}
	return len(names) - 1 // the directory being read
}
