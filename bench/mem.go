package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
	"time"
)

// peakMeter measures the peak memory of the process during a span of code,
// above what it held when the span began.
type peakMeter interface {
	// method says how the meter measures, for the results' header.
	method() string
	// start collects garbage, returns freed memory to the system and starts
	// a span.
	start()
	// stop ends the span and returns its peak above the start, in bytes.
	stop() int64
}

// newPeakMeter returns the resident-set meter where the kernel lets the
// process reset its peak (Linux), and a sampler of the Go runtime's memory
// otherwise.
func newPeakMeter() peakMeter {
	m := &rssMeter{}
	if m.reset() == nil {
		if _, err := statusKB("VmHWM"); err == nil {
			return m
		}
	}
	return &sampleMeter{}
}

// quiesce collects garbage and hands freed memory back to the system, so
// that a span starts from what is live.
func quiesce() {
	runtime.GC()
	debug.FreeOSMemory()
}

// rssMeter reads the kernel's peak resident set size (VmHWM) after
// resetting it by writing "5" to /proc/self/clear_refs. It counts every
// byte the process touches, Go heap, Arrow buffers and C allocations alike.
type rssMeter struct {
	base int64
}

func (m *rssMeter) method() string {
	return "peak resident set size (VmHWM of /proc/self/status, reset through /proc/self/clear_refs) above the resident size at the start of each run, after a GC; the largest over the runs"
}

func (m *rssMeter) reset() error {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

func (m *rssMeter) start() {
	quiesce()
	_ = m.reset()
	rss, _ := statusKB("VmRSS")
	m.base = rss
}

func (m *rssMeter) stop() int64 {
	hwm, err := statusKB("VmHWM")
	if err != nil {
		return -1
	}
	return max(hwm-m.base, 0)
}

// statusKB reads a field of /proc/self/status, in bytes.
func statusKB(field string) (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, rest, ok := bytes.Cut(sc.Bytes(), []byte(":"))
		if !ok || string(name) != field {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) == 0 {
			break
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return 0, err
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("no %s in /proc/self/status", field)
}

// sampleMeter samples the Go runtime's mapped memory every millisecond.
// It misses memory allocated outside the Go runtime and peaks shorter than
// the sampling period.
type sampleMeter struct {
	base, peak int64
	done       chan struct{}
	wg         sync.WaitGroup
}

func (m *sampleMeter) method() string {
	return "peak of the Go runtime's memory (runtime/metrics /memory/classes/total minus heap/released, sampled every ms) above its value at the start of each run, after a GC; the largest over the runs"
}

func goMemory() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64()) - int64(s[1].Value.Uint64())
}

func (m *sampleMeter) start() {
	quiesce()
	m.base = goMemory()
	m.peak = m.base
	m.done = make(chan struct{})
	m.wg.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-m.done:
				return
			case <-t.C:
				m.peak = max(m.peak, goMemory())
			}
		}
	})
}

func (m *sampleMeter) stop() int64 {
	close(m.done)
	m.wg.Wait()
	m.peak = max(m.peak, goMemory())
	return m.peak - m.base
}
