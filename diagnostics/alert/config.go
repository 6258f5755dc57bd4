package alert

import (
	"slices"
	"time"
)

// Config holds the thresholds of the rules. A zero field takes its
// default, given with each field.
type Config struct {
	// DiskFull is the fraction of a worker directory's file system in
	// use above which DiskFull is raised (default 0.9).
	DiskFull float64
	// UnmanagedMemory is the fraction of a worker's memory limit that
	// its unmanaged memory (the process's memory beyond the results it
	// holds) may take before MemoryUnmanaged is raised (default 0.5).
	UnmanagedMemory float64
	// NearTerminate is the fraction of a worker's memory limit that its
	// process may take before MemoryTerminate is raised (default 0.9;
	// a nanny kills a worker at 0.95 by default).
	NearTerminate float64
	// HeartbeatLate is how long a worker may send no report before
	// WorkerSilent is raised (default 5s; a scheduler removes a worker
	// silent for 10s by default).
	HeartbeatLate time.Duration
	// Latency is the round trip to a worker and back above which
	// WorkerSlow is raised (default 1s).
	Latency time.Duration
	// StragglerFactor is how many times the median duration of its
	// prefix a task may run before Straggler is raised (default 5), once
	// it has run StragglerMin (default 10s) and at least StragglerTasks
	// tasks of its prefix have ended (default 5).
	StragglerFactor float64
	StragglerMin    time.Duration
	StragglerTasks  int
	// SkewFactor is how many times the median of its shuffle's
	// partitions a partition may read before ShuffleSkew is raised
	// (default 4), when it is at least SkewMinBytes (default 16 MiB) and
	// at least SkewPartitions partitions of the shuffle have been read
	// (default 4).
	SkewFactor     float64
	SkewMinBytes   int64
	SkewPartitions int
	// SpillRate is the rate, in bytes per second over the last
	// SpillWindow (default 30s), at which a worker may write results to
	// disk to free memory before Spilling is raised (default 64 MiB/s).
	SpillRate   float64
	SpillWindow time.Duration
	// Hysteresis keeps an alert raised until its value is this fraction
	// below its threshold (default 0.05), so that a value hovering at
	// the threshold does not raise it again and again.
	Hysteresis float64
	// Off names the rules turned off.
	Off []string
}

// DefaultConfig returns the default thresholds.
func DefaultConfig() Config {
	return Config{
		DiskFull:        0.9,
		UnmanagedMemory: 0.5,
		NearTerminate:   0.9,
		HeartbeatLate:   5 * time.Second,
		Latency:         time.Second,
		StragglerFactor: 5,
		StragglerMin:    10 * time.Second,
		StragglerTasks:  5,
		SkewFactor:      4,
		SkewMinBytes:    16 << 20,
		SkewPartitions:  4,
		SpillRate:       64 << 20,
		SpillWindow:     30 * time.Second,
		Hysteresis:      0.05,
	}
}

// withDefaults fills in the zero fields.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	or := func(v *float64, def float64) {
		if *v <= 0 {
			*v = def
		}
	}
	or(&c.DiskFull, d.DiskFull)
	or(&c.UnmanagedMemory, d.UnmanagedMemory)
	or(&c.NearTerminate, d.NearTerminate)
	or(&c.StragglerFactor, d.StragglerFactor)
	or(&c.SkewFactor, d.SkewFactor)
	or(&c.SpillRate, d.SpillRate)
	or(&c.Hysteresis, d.Hysteresis)
	for _, p := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&c.HeartbeatLate, d.HeartbeatLate}, {&c.Latency, d.Latency}, {&c.StragglerMin, d.StragglerMin},
		{&c.SpillWindow, d.SpillWindow}} {
		if *p.v <= 0 {
			*p.v = p.def
		}
	}
	if c.StragglerTasks <= 0 {
		c.StragglerTasks = d.StragglerTasks
	}
	if c.SkewPartitions <= 0 {
		c.SkewPartitions = d.SkewPartitions
	}
	if c.SkewMinBytes <= 0 {
		c.SkewMinBytes = d.SkewMinBytes
	}
	c.Off = slices.Clone(c.Off)
	return c
}
