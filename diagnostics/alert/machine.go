package alert

import (
	"cmp"
	"slices"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/graph"
)

// The rules, by the name their alerts carry.
const (
	// DiskFull: a worker's directory is on a file system fuller than
	// Config.DiskFull.
	DiskFull = "disk-full"
	// DiskShuffle: a running shuffle still needs more space in a
	// worker's directory than its file system has free, going by what its
	// finished splits wrote there.
	DiskShuffle = "disk-shuffle"
	// MemoryUnmanaged: a worker's unmanaged memory is above
	// Config.UnmanagedMemory of its limit.
	MemoryUnmanaged = "memory-unmanaged"
	// MemoryTerminate: a worker's process memory is above
	// Config.NearTerminate of its limit, near where it is killed.
	MemoryTerminate = "memory-terminate"
	// WorkerSilent: a worker sent no report for Config.HeartbeatLate.
	WorkerSilent = "worker-silent"
	// WorkerSlow: a message takes longer than Config.Latency to a worker
	// and back.
	WorkerSlow = "worker-slow"
	// Straggler: a task has run far longer than the tasks of its prefix
	// took (Config.StragglerFactor).
	Straggler = "straggler"
	// ShuffleSkew: a partition of a shuffle read far more than the
	// median partition of that shuffle (Config.SkewFactor).
	ShuffleSkew = "shuffle-skew"
	// Spilling: a worker writes results to disk faster than
	// Config.SpillRate.
	Spilling = "spilling"
)

// Rules lists the names of the rules.
var Rules = []string{DiskFull, DiskShuffle, MemoryUnmanaged, MemoryTerminate, WorkerSilent, WorkerSlow, Straggler,
	ShuffleSkew, Spilling}

// Severities of alerts.
const (
	Warning  = "warning"
	Critical = "critical" // work is about to fail: a disk, a worker's memory, a worker about to be removed
)

// recentSize is how many resolved alerts a Machine keeps.
const recentSize = 100

// Bounds of what a Machine remembers of prefixes and shuffles; beyond
// them the oldest are forgotten.
const (
	maxPrefixes  = 10_000
	maxShuffles  = 1000
	durationRing = 256 // durations kept per prefix for its median
)

// An Input is something the rules take in: *WorkerReport, *WorkerGone,
// *TaskEnded, *ShuffleStarted, *ComputationEnded or *Tick.
type Input interface{ input() }

// WorkerReport is what a worker says of itself, at each heartbeat.
type WorkerReport struct {
	Worker      string
	MemoryLimit int64 // bytes; 0: none, and the memory rules do not apply
	Managed     int64 // bytes of the results it holds in memory
	Process     int64 // bytes of its process; 0: unknown
	// SpillWrite is the bytes of results it wrote to disk to free memory
	// since its previous report.
	SpillWrite int64
	// Latency is the round trip of a message to it and back; 0: not
	// measured.
	Latency time.Duration
	// Disks are its directories; nil: not measured this time (the
	// previous report's hold).
	Disks []Disk
	// Running are the tasks it is running now.
	Running []Running
}

// Disk is one directory of a worker.
type Disk struct {
	Name string // such as "local" or "scratch"
	Path string
	Free int64 // bytes free on its file system
	Size int64 // bytes of its file system; 0: unknown
	// Shuffles are the bytes of each shuffle's files under it, by
	// shuffle ID.
	Shuffles map[string]int64
}

// Running is a task a worker is running.
type Running struct {
	Key   graph.Key
	Start time.Time
}

// WorkerGone says a worker left: its alerts are resolved.
type WorkerGone struct{ Worker string }

// TaskEnded says a worker finished running a task.
type TaskEnded struct {
	Key      graph.Key
	Worker   string
	Duration time.Duration
	Failed   bool
	Bytes    int64 // of its result
	// Read is the bytes it read from files, such as a shuffle's shards
	// (see Reads); 0: not counted, and Bytes stands for it.
	Read int64
}

// ShuffleStarted announces a shuffle of a computation: the task group
// of its splits, which write its files, how many there are, and the task
// groups that read its output partitions (see Shuffles).
type ShuffleStarted struct {
	ID          string
	Computation uint64
	SplitGroup  string
	Splits      int
	Readers     []string
}

// ComputationEnded says a computation ended: the alerts of its shuffles
// are resolved.
type ComputationEnded struct{ Computation uint64 }

// Tick says time passed: the rules that depend on it (silent workers,
// stragglers) look again.
type Tick struct {
	// Sent are the tasks the scheduler sent each worker to run and has
	// not heard the end of, by worker, if it says: an alert about a
	// worker that hangs names them when the worker's last report did
	// not.
	Sent map[string][]graph.Key
}

func (*WorkerReport) input()     {}
func (*WorkerGone) input()       {}
func (*TaskEnded) input()        {}
func (*ShuffleStarted) input()   {}
func (*ComputationEnded) input() {}
func (*Tick) input()             {}

// Machine applies the rules to what it is told. Its only way in is
// Handle, which takes the time and returns the alerts raised and
// resolved: it starts no goroutine and reads no clock. It is not safe
// for concurrent use.
type Machine struct {
	cfg Config
	off map[string]bool

	active map[string]*diagnostics.Alert // by ID
	recent []diagnostics.Alert           // ring of recentSize resolved
	next   int                           // where the next resolved one goes, once full
	out    []diagnostics.Alert

	workers map[string]*workerState

	prefixes    map[string]*durations
	prefixOrder []string // oldest first, to forget beyond maxPrefixes

	shuffles     map[string]*shuffleState // by ID
	shuffleOrder []string
	bySplit      map[string]*shuffleState // by split group
	byReader     map[string]*shuffleState // by reader group
}

type workerState struct {
	last   time.Time // its last report
	report WorkerReport
	spills []spillMark // in the last SpillWindow, oldest first
}

type spillMark struct {
	at    time.Time
	bytes int64
}

// durations are the last durations of a prefix's tasks.
type durations struct {
	ring   []time.Duration
	next   int
	n      int           // tasks ended
	median time.Duration // of ring, or -1 to compute again
}

type shuffleState struct {
	ShuffleStarted
	done   int        // splits ended
	sizes  []int64    // of the partitions read, sorted
	reads  []readMark // the same: those raised first, then the others by bytes, largest first
	skewed int        // of reads, the first this many were raised
}

type readMark struct {
	key    graph.Key
	worker string
	bytes  int64
}

// New returns a Machine with the thresholds of cfg.
func New(cfg Config) *Machine {
	cfg = cfg.withDefaults()
	m := &Machine{cfg: cfg, off: map[string]bool{}, active: map[string]*diagnostics.Alert{},
		workers: map[string]*workerState{}, prefixes: map[string]*durations{},
		shuffles: map[string]*shuffleState{}, bySplit: map[string]*shuffleState{}, byReader: map[string]*shuffleState{}}
	for _, name := range cfg.Off {
		m.off[name] = true
	}
	return m
}

// Config returns the thresholds in use, defaults filled in.
func (m *Machine) Config() Config {
	c := m.cfg
	c.Off = slices.Clone(c.Off)
	return c
}

// Handle takes inputs in at time now and returns the alerts it raised
// (End zero) and resolved (End now), in that order of events.
func (m *Machine) Handle(now time.Time, inputs ...Input) []diagnostics.Alert {
	m.out = nil
	for _, in := range inputs {
		switch in := in.(type) {
		case *WorkerReport:
			m.workerReport(now, in)
		case *WorkerGone:
			m.workerGone(now, in.Worker)
		case *TaskEnded:
			m.taskEnded(now, in)
		case *ShuffleStarted:
			m.shuffleStarted(in)
		case *ComputationEnded:
			m.computationEnded(now, in.Computation)
		case *Tick:
			m.tick(now, in.Sent)
		}
	}
	out := m.out
	m.out = nil
	return out
}

// Active returns the alerts raised and not resolved, oldest first.
func (m *Machine) Active() []diagnostics.Alert {
	out := make([]diagnostics.Alert, 0, len(m.active))
	for _, a := range m.active {
		out = append(out, *a)
	}
	slices.SortFunc(out, func(a, b diagnostics.Alert) int {
		return cmp.Or(a.Start.Compare(b.Start), cmp.Compare(a.ID(), b.ID()))
	})
	return out
}

// Recent returns the last resolved alerts (at most 100), oldest first.
func (m *Machine) Recent() []diagnostics.Alert {
	out := make([]diagnostics.Alert, 0, len(m.recent))
	out = append(out, m.recent[m.next:]...)
	return append(out, m.recent[:m.next]...)
}

// raise raises a, or refreshes the value and message of the alert of its
// ID when it is raised already.
func (m *Machine) raise(now time.Time, a diagnostics.Alert) {
	if m.off[a.Name] {
		return
	}
	id := a.ID()
	if old := m.active[id]; old != nil {
		old.Value, old.Threshold, old.Message = a.Value, a.Threshold, a.Message
		return
	}
	a.Start, a.End = now, time.Time{}
	m.active[id] = &a
	m.out = append(m.out, a)
}

// resolve resolves the alert of an ID, if it is raised.
func (m *Machine) resolve(now time.Time, id string) {
	a := m.active[id]
	if a == nil {
		return
	}
	delete(m.active, id)
	a.End = now
	m.out = append(m.out, *a)
	if len(m.recent) < recentSize {
		m.recent = append(m.recent, *a)
	} else {
		m.recent[m.next] = *a
		m.next = (m.next + 1) % recentSize
	}
}

// resolveWhere resolves the raised alerts that match, in the order of
// their IDs.
func (m *Machine) resolveWhere(now time.Time, match func(a *diagnostics.Alert) bool) {
	var ids []string
	for id, a := range m.active {
		if match(a) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		m.resolve(now, id)
	}
}

// check raises a when over, and resolves it when under. Between the two
// (the hysteresis band) it stays as it is.
func (m *Machine) check(now time.Time, a diagnostics.Alert, over, under bool) {
	switch {
	case over:
		m.raise(now, a)
	case under:
		m.resolve(now, a.ID())
	}
}

// above tells whether v is over threshold, and whether it is far enough
// under it to resolve.
func (m *Machine) above(v, threshold float64) (over, under bool) {
	return v > threshold, v < threshold*(1-m.cfg.Hysteresis)
}
