package alert

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/internal/units"
)

// What each rule makes of the inputs.

func (m *Machine) workerReport(now time.Time, r *WorkerReport) {
	ws := m.workers[r.Worker]
	if ws == nil {
		ws = &workerState{}
		m.workers[r.Worker] = ws
	}
	disks := ws.report.Disks
	ws.report = *r
	if r.Disks == nil {
		ws.report.Disks = disks
	}
	ws.last = now
	m.resolve(now, (&diagnostics.Alert{Name: WorkerSilent, Worker: r.Worker}).ID())
	m.disks(now, ws)
	m.memory(now, r)
	m.latency(now, r)
	m.spilling(now, ws, r.SpillWrite)
	m.stragglers(now, ws)
}

func (m *Machine) workerGone(now time.Time, worker string) {
	delete(m.workers, worker)
	m.resolveWhere(now, func(a *diagnostics.Alert) bool { return a.Worker == worker })
}

func (m *Machine) tick(now time.Time, sent map[string][]graph.Key) {
	names := make([]string, 0, len(m.workers))
	for w := range m.workers {
		names = append(names, w)
	}
	slices.Sort(names)
	for _, w := range names {
		ws := m.workers[w]
		if silent := now.Sub(ws.last); silent > m.cfg.HeartbeatLate {
			m.raise(now, diagnostics.Alert{Name: WorkerSilent, Severity: Critical, Worker: w,
				Value: silent.Seconds(), Threshold: m.cfg.HeartbeatLate.Seconds(),
				Message: fmt.Sprintf("worker %s sent nothing for %v%s", w, silent.Round(100*time.Millisecond),
					runningNote(ws.report.Running, sent[w])),
				Action: "its process may hang (stopped, swapping, stuck in a system call) or the network to it is cut; " +
					"look at its host, or restart it: the scheduler removes a worker that stays silent"})
		}
		m.stragglers(now, ws)
	}
}

// disks checks how full a worker's directories are, and whether the
// running shuffles still fit in them.
func (m *Machine) disks(now time.Time, ws *workerState) {
	r := &ws.report
	paths := map[string]bool{}
	shuffles := map[string]bool{}
	for _, d := range r.Disks {
		paths[d.Path] = true
		if d.Size > 0 {
			used := 1 - float64(d.Free)/float64(d.Size)
			over, under := m.above(used, m.cfg.DiskFull)
			m.check(now, diagnostics.Alert{Name: DiskFull, Severity: Warning, Worker: r.Worker, Path: d.Path,
				Value: used, Threshold: m.cfg.DiskFull,
				Message: fmt.Sprintf("worker %s: the file system of its %s directory %s is %.0f%% full, %s free of %s",
					r.Worker, d.Name, d.Path, 100*used, units.Bytes(d.Free), units.Bytes(d.Size)),
				Action: "free space there, or give the worker a directory on a larger file system: " +
					"spilled results and shuffle files are written there, and fail when it is full"}, over, under)
		}
		for id, bytes := range d.Shuffles {
			shuffles[id] = true
			m.shuffleDisk(now, r.Worker, d, id, bytes)
		}
	}
	m.resolveWhere(now, func(a *diagnostics.Alert) bool {
		return a.Worker == r.Worker && (a.Name == DiskFull && !paths[a.Path] ||
			a.Name == DiskShuffle && !shuffles[a.Shuffle])
	})
}

// shuffleDisk checks that a running shuffle's files fit on a worker's
// disk: its splits that ended wrote bytes there, and the others will
// write as much again in proportion.
func (m *Machine) shuffleDisk(now time.Time, worker string, d Disk, id string, bytes int64) {
	a := diagnostics.Alert{Name: DiskShuffle, Severity: Critical, Worker: worker, Path: d.Path, Shuffle: id}
	sh := m.shuffles[id]
	if sh == nil || sh.done == 0 || sh.done >= sh.Splits {
		m.resolve(now, a.ID())
		return
	}
	need := float64(bytes) * float64(sh.Splits-sh.done) / float64(sh.done)
	a.Value, a.Threshold = need, float64(d.Free)
	a.Message = fmt.Sprintf("worker %s: shuffle %s needs about %s more in %s (%d of %d splits wrote %s there), "+
		"and %s is free", worker, id, units.Bytes(int64(need)), d.Path, sh.done, sh.Splits, units.Bytes(bytes),
		units.Bytes(d.Free))
	a.Action = "free space there, give the workers directories on larger file systems or add workers, " +
		"or shuffle less data (select the columns needed before the shuffle); otherwise the shuffle fails " +
		"with no space left on device"
	over := need > float64(d.Free)
	m.check(now, a, over, need < float64(d.Free)*(1-m.cfg.Hysteresis))
}

func (m *Machine) memory(now time.Time, r *WorkerReport) {
	if r.MemoryLimit <= 0 || r.Process <= 0 {
		m.resolveWhere(now, func(a *diagnostics.Alert) bool {
			return a.Worker == r.Worker && (a.Name == MemoryUnmanaged || a.Name == MemoryTerminate)
		})
		return
	}
	limit := float64(r.MemoryLimit)
	unmanaged := max(0, r.Process-r.Managed)
	frac := float64(unmanaged) / limit
	over, under := m.above(frac, m.cfg.UnmanagedMemory)
	m.check(now, diagnostics.Alert{Name: MemoryUnmanaged, Severity: Warning, Worker: r.Worker, Value: frac,
		Threshold: m.cfg.UnmanagedMemory,
		Message: fmt.Sprintf("worker %s: unmanaged memory %s is %.0f%% of its %s limit (results held: %s)",
			r.Worker, units.Bytes(unmanaged), 100*frac, units.Bytes(r.MemoryLimit), units.Bytes(r.Managed)),
		Action: "memory the worker's tasks use beyond their results: large temporary values, a leak in a task's " +
			"function, or memory the Go runtime has not returned yet; use smaller partitions, or look at the " +
			"worker's heap"}, over, under)
	frac = float64(r.Process) / limit
	over, under = m.above(frac, m.cfg.NearTerminate)
	m.check(now, diagnostics.Alert{Name: MemoryTerminate, Severity: Critical, Worker: r.Worker, Value: frac,
		Threshold: m.cfg.NearTerminate,
		Message: fmt.Sprintf("worker %s: process memory %s is %.0f%% of its %s limit, near where it is killed",
			r.Worker, units.Bytes(r.Process), 100*frac, units.Bytes(r.MemoryLimit)),
		Action: "use smaller partitions, hold fewer results (persist less), add workers or raise the memory limit; " +
			"a worker killed for its memory loses the results it holds"}, over, under)
}

func (m *Machine) latency(now time.Time, r *WorkerReport) {
	if r.Latency <= 0 {
		return
	}
	over, under := m.above(r.Latency.Seconds(), m.cfg.Latency.Seconds())
	m.check(now, diagnostics.Alert{Name: WorkerSlow, Severity: Warning, Worker: r.Worker,
		Value: r.Latency.Seconds(), Threshold: m.cfg.Latency.Seconds(),
		Message: fmt.Sprintf("worker %s: a message takes %v to it and back", r.Worker,
			r.Latency.Round(time.Millisecond)),
		Action: "its process or host is overloaded (CPU, garbage collection, swapping) or the network to it is slow; " +
			"look at its CPU and memory on the dashboard"}, over, under)
}

func (m *Machine) spilling(now time.Time, ws *workerState, wrote int64) {
	if wrote > 0 {
		ws.spills = append(ws.spills, spillMark{now, wrote})
	}
	from := now.Add(-m.cfg.SpillWindow)
	i := 0
	for i < len(ws.spills) && !ws.spills[i].at.After(from) {
		i++
	}
	ws.spills = slices.Delete(ws.spills, 0, i)
	var sum int64
	for _, s := range ws.spills {
		sum += s.bytes
	}
	rate := float64(sum) / m.cfg.SpillWindow.Seconds()
	over, under := m.above(rate, m.cfg.SpillRate)
	w := ws.report.Worker
	m.check(now, diagnostics.Alert{Name: Spilling, Severity: Warning, Worker: w, Value: rate,
		Threshold: m.cfg.SpillRate,
		Message: fmt.Sprintf("worker %s wrote %s of results to disk to free memory in the last %v (%s/s)",
			w, units.Bytes(sum), m.cfg.SpillWindow, units.Bytes(int64(rate))),
		Action: "it holds more results than fit in its memory: add workers or memory, hold fewer results " +
			"(persist less), or use smaller partitions"}, over, under)
}

// stragglers checks the tasks a worker runs against the median duration
// of their prefixes.
func (m *Machine) stragglers(now time.Time, ws *workerState) {
	w := ws.report.Worker
	running := map[graph.Key]bool{}
	for _, r := range ws.report.Running {
		running[r.Key] = true
		a := diagnostics.Alert{Name: Straggler, Severity: Warning, Worker: w, Key: r.Key}
		prefix := r.Key.Prefix()
		d := m.prefixes[prefix]
		if d == nil || d.n < m.cfg.StragglerTasks {
			continue
		}
		med := d.medianOf()
		ran := now.Sub(r.Start)
		limit := max(time.Duration(m.cfg.StragglerFactor*float64(med)), m.cfg.StragglerMin)
		if ran <= limit {
			continue
		}
		a.Value, a.Threshold = ran.Seconds(), limit.Seconds()
		a.Message = fmt.Sprintf("task %s has run for %v on worker %s, %.0f times the median %v of the %d %s tasks that ended",
			r.Key, roundDuration(ran), w, float64(ran)/float64(max(med, 1)), med.Round(time.Millisecond), d.n, prefix)
		a.Action = "look at the worker (CPU, memory, disk on the dashboard) and at the task's input: a larger " +
			"partition than the others, or a task stuck waiting; cancel the computation if it hangs"
		m.raise(now, a)
	}
	m.resolveWhere(now, func(a *diagnostics.Alert) bool {
		return a.Name == Straggler && a.Worker == w && !running[a.Key]
	})
}

func (m *Machine) taskEnded(now time.Time, t *TaskEnded) {
	if ws := m.workers[t.Worker]; ws != nil && len(ws.report.Running) > 0 {
		ws.report.Running = slices.DeleteFunc(ws.report.Running, func(r Running) bool { return r.Key == t.Key })
	}
	if len(m.active) > 0 {
		m.resolve(now, (&diagnostics.Alert{Name: Straggler, Worker: t.Worker, Key: t.Key}).ID())
	}
	if t.Failed {
		return
	}
	if t.Duration > 0 {
		m.addDuration(t.Key.Prefix(), t.Duration)
	}
	if len(m.shuffles) == 0 {
		return
	}
	group := t.Key.Group()
	if sh := m.bySplit[group]; sh != nil {
		sh.done++
		if sh.done >= sh.Splits {
			m.resolveWhere(now, func(a *diagnostics.Alert) bool { return a.Name == DiskShuffle && a.Shuffle == sh.ID })
		}
	}
	if sh := m.byReader[group]; sh != nil {
		bytes := t.Read
		if bytes <= 0 {
			bytes = t.Bytes
		}
		m.partitionRead(now, sh, readMark{t.Key, t.Worker, bytes})
	}
}

func (m *Machine) addDuration(prefix string, d time.Duration) {
	p := m.prefixes[prefix]
	if p == nil {
		if len(m.prefixOrder) >= maxPrefixes {
			delete(m.prefixes, m.prefixOrder[0])
			m.prefixOrder = m.prefixOrder[1:]
		}
		p = &durations{}
		m.prefixes[prefix] = p
		m.prefixOrder = append(m.prefixOrder, prefix)
	}
	if len(p.ring) < durationRing {
		p.ring = append(p.ring, d)
	} else {
		p.ring[p.next] = d
		p.next = (p.next + 1) % durationRing
	}
	p.n++
	p.median = -1
}

func (d *durations) medianOf() time.Duration {
	if d.median < 0 {
		s := slices.Clone(d.ring)
		slices.Sort(s)
		d.median = s[len(s)/2]
	}
	return d.median
}

// partitionRead takes in a shuffle's partition that was read, and raises
// ShuffleSkew for the partitions far above the median.
func (m *Machine) partitionRead(now time.Time, sh *shuffleState, r readMark) {
	i, _ := slices.BinarySearch(sh.sizes, r.bytes)
	sh.sizes = slices.Insert(sh.sizes, i, r.bytes)
	// The partitions raised stay first; the others are sorted after them.
	j, _ := slices.BinarySearchFunc(sh.reads[sh.skewed:], r.bytes, func(x readMark, b int64) int {
		return cmp.Compare(b, x.bytes)
	})
	sh.reads = slices.Insert(sh.reads, sh.skewed+j, r)
	n := len(sh.sizes)
	if n < m.cfg.SkewPartitions {
		return
	}
	med := sh.sizes[n/2]
	for sh.skewed < len(sh.reads) {
		x := sh.reads[sh.skewed]
		limit := max(m.cfg.SkewFactor*float64(med), float64(m.cfg.SkewMinBytes))
		if float64(x.bytes) <= limit {
			break
		}
		sh.skewed++
		m.raise(now, diagnostics.Alert{Name: ShuffleSkew, Severity: Warning, Worker: x.worker, Key: x.key,
			Shuffle: sh.ID, Value: float64(x.bytes), Threshold: limit,
			Message: fmt.Sprintf("shuffle %s: task %s on worker %s read %s, %.0f times the median %s of the %d partitions read",
				sh.ID, x.key, x.worker, units.Bytes(x.bytes), float64(x.bytes)/float64(max(med, 1)), units.Bytes(med), n),
			Action: "a few keys hold most of the rows: shuffle on a key with more distinct values, or split the " +
				"hot keys (add a random salt to them, aggregate, then aggregate again)"})
	}
}

func (m *Machine) shuffleStarted(s *ShuffleStarted) {
	if old := m.shuffles[s.ID]; old != nil {
		m.forgetShuffle(old)
	}
	if len(m.shuffleOrder) >= maxShuffles {
		m.forgetShuffle(m.shuffles[m.shuffleOrder[0]])
	}
	sh := &shuffleState{ShuffleStarted: *s}
	sh.Readers = slices.Clone(s.Readers)
	m.shuffles[s.ID] = sh
	m.shuffleOrder = append(m.shuffleOrder, s.ID)
	m.bySplit[s.SplitGroup] = sh
	for _, g := range sh.Readers {
		m.byReader[g] = sh
	}
}

// forgetShuffle forgets a shuffle the machine knows.
func (m *Machine) forgetShuffle(sh *shuffleState) {
	delete(m.shuffles, sh.ID)
	m.shuffleOrder = slices.DeleteFunc(m.shuffleOrder, func(id string) bool { return id == sh.ID })
	if m.bySplit[sh.SplitGroup] == sh {
		delete(m.bySplit, sh.SplitGroup)
	}
	for _, g := range sh.Readers {
		if m.byReader[g] == sh {
			delete(m.byReader, g)
		}
	}
}

func (m *Machine) computationEnded(now time.Time, comp uint64) {
	ended := map[string]bool{}
	for id, sh := range m.shuffles {
		if sh.Computation == comp {
			ended[id] = true
			m.forgetShuffle(sh)
		}
	}
	if len(ended) == 0 {
		return
	}
	m.resolveWhere(now, func(a *diagnostics.Alert) bool { return a.Shuffle != "" && ended[a.Shuffle] })
}

// roundDuration rounds d for a message: to the millisecond under ten
// seconds, to the second above.
func roundDuration(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}

// runningNote says which tasks a worker ran at its last report (or, when
// it reported none, which it was sent), for the message of an alert
// about it.
func runningNote(rs []Running, sent []graph.Key) string {
	keys := sent
	if len(rs) > 0 {
		keys = make([]graph.Key, len(rs))
		for i, r := range rs {
			keys[i] = r.Key
		}
	}
	switch len(keys) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf(", while it ran task %s", keys[0])
	}
	return fmt.Sprintf(", while it ran task %s and %d more", keys[0], len(keys)-1)
}
