package dashboard

import (
	"math"
	"time"
)

// The Recorder keeps, besides the last task runs, the busy time of every
// second of the last hour per worker and prefix, so that a window of the
// task stream shows everything in it however many tasks ran.

// windowSeconds is how far back the Recorder keeps busy time.
const windowSeconds = 3600

// MaxWindow is the longest window of the task stream.
const MaxWindow = windowSeconds * time.Second

// maxColumns bounds the buckets of an aggregated window across time.
const maxColumns = 300

type secondRing struct {
	secs      []second // windowSeconds of them, once a run was added
	workers   []string
	workerIdx map[string]uint16
	prefixes  []string
	prefixIdx map[string]uint16
	latest    int64 // the newest second a run ended in
}

// second is the busy time of one second.
type second struct {
	unix  int64
	cells []cell
	idx   map[uint32]int32 // worker<<16|prefix -> index in cells
}

type cell struct {
	worker, prefix uint16
	busy           float64 // thread-seconds in this second
	count, erred   int32   // runs that ended in this second
}

func (r *secondRing) intern(worker, prefix string) (uint16, uint16) {
	if r.workerIdx == nil || len(r.workers) >= math.MaxUint16 || len(r.prefixes) >= math.MaxUint16 {
		// Too many names to index: start again.
		*r = secondRing{secs: r.secs, workerIdx: map[string]uint16{}, prefixIdx: map[string]uint16{}}
		for i := range r.secs {
			r.secs[i].unix = 0
		}
	}
	w, ok := r.workerIdx[worker]
	if !ok {
		w = uint16(len(r.workers))
		r.workers = append(r.workers, worker)
		r.workerIdx[worker] = w
	}
	p, ok := r.prefixIdx[prefix]
	if !ok {
		p = uint16(len(r.prefixes))
		r.prefixes = append(r.prefixes, prefix)
		r.prefixIdx[prefix] = p
	}
	return w, p
}

// at returns the second unix, reset for it when it held an older one, or
// nil when the ring holds a newer second in its place.
func (r *secondRing) at(unix int64) *second {
	if r.secs == nil {
		r.secs = make([]second, windowSeconds)
	}
	s := &r.secs[unix%windowSeconds]
	switch {
	case s.unix == unix:
	case s.unix > unix:
		return nil
	default:
		s.unix = unix
		s.cells = s.cells[:0]
		clear(s.idx)
	}
	return s
}

func (s *second) cell(w, p uint16) *cell {
	k := uint32(w)<<16 | uint32(p)
	if s.idx == nil {
		s.idx = map[uint32]int32{}
	}
	i, ok := s.idx[k]
	if !ok {
		i = int32(len(s.cells))
		s.cells = append(s.cells, cell{worker: w, prefix: p})
		s.idx[k] = i
	}
	return &s.cells[i]
}

// add counts a run: its busy time in every second it spans, its end in
// the second it ended.
func (r *secondRing) add(run *TaskRun) {
	stop := run.Stop
	start := run.Start
	if start.IsZero() || start.After(stop) {
		start = stop
	}
	end := stop.Unix()
	if end > r.latest {
		r.latest = end
	}
	if end <= r.latest-windowSeconds {
		return // older than the ring
	}
	w, p := r.intern(run.Worker, run.Prefix)
	first := max(start.Unix(), r.latest-windowSeconds+1)
	for u := first; u <= end; u++ {
		s := r.at(u)
		if s == nil {
			continue
		}
		lo, hi := start, stop
		if b := time.Unix(u, 0); b.After(lo) {
			lo = b
		}
		if e := time.Unix(u+1, 0); e.Before(hi) {
			hi = e
		}
		c := s.cell(w, p)
		if hi.After(lo) {
			c.busy += hi.Sub(lo).Seconds()
		}
		if u == end {
			c.count++
			if run.State == "erred" {
				c.erred++
			}
		}
	}
}

// each calls f for every cell of the seconds from first to last.
func (r *secondRing) each(first, last int64, f func(unix int64, c *cell)) {
	if r.secs == nil {
		return
	}
	first = max(first, last-windowSeconds+1)
	for u := first; u <= last; u++ {
		s := &r.secs[u%windowSeconds]
		if s.unix != u {
			continue
		}
		for i := range s.cells {
			f(u, &s.cells[i])
		}
	}
}

// TaskWindow returns the task stream of the window that ends at now (see
// the type TaskWindow): the runs themselves when at most maxBars ended in
// it and all of them are kept, else busy time in buckets. Workers have no
// Threads (the Recorder does not know them). Windows longer than
// MaxWindow are cut to it.
func (r *Recorder) TaskWindow(now time.Time, window time.Duration, maxBars int) *TaskWindow {
	window = min(max(window, time.Second), MaxWindow)
	start := now.Add(-window)
	r.mu.Lock()
	defer r.mu.Unlock()
	tw := &TaskWindow{Start: start, Stop: now, Workers: []StreamWorker{}, Prefixes: []string{}, Runs: []TaskRun{}}
	first, last := start.Unix(), now.Unix()
	r.secs.each(first, last, func(u int64, c *cell) {
		tw.Count += int(c.count)
		tw.Erred += int(c.erred)
	})
	// Every run that ended in the window is kept when the oldest run kept
	// ended before it.
	kept := len(r.runs) > 0 && (r.total == uint64(len(r.runs)) ||
		r.runs[r.total%uint64(r.size)].stop < start.UnixNano())
	if len(r.runs) == 0 {
		kept = true
	}
	workers := map[string]int{}
	prefixes := map[string]int{}
	index := func(m map[string]int, list *[]string, name string) int {
		i, ok := m[name]
		if !ok {
			i = len(*list)
			*list = append(*list, name)
			m[name] = i
		}
		return i
	}
	var wl []string
	if tw.Count <= maxBars && kept {
		// The runs, oldest first; a run ends in the order it was
		// recorded, give or take the clocks of the workers.
		from, to, slack := start.UnixNano(), now.UnixNano(), start.Add(-time.Minute).UnixNano()
		for q := r.total; q > r.total-uint64(len(r.runs)); q-- {
			stop := r.runs[(q-1)%uint64(r.size)].stop
			if stop < from {
				if stop < slack {
					break
				}
				continue
			}
			if stop > to {
				continue
			}
			tw.Runs = append(tw.Runs, r.run(q))
		}
		for i, j := 0, len(tw.Runs)-1; i < j; i, j = i+1, j-1 {
			tw.Runs[i], tw.Runs[j] = tw.Runs[j], tw.Runs[i]
		}
		for _, run := range tw.Runs {
			index(workers, &wl, run.Worker)
			index(prefixes, &tw.Prefixes, run.Prefix)
		}
		tw.Count, tw.Erred = len(tw.Runs), 0
		for _, run := range tw.Runs {
			if run.State == "erred" {
				tw.Erred++
			}
		}
	} else {
		tw.Aggregated = true
		width := int64(math.Ceil(window.Seconds() / maxColumns))
		tw.BucketSeconds = float64(width)
		type bkey struct {
			col  int64
			w, p int
		}
		sums := map[bkey]int{}
		r.secs.each(first, last, func(u int64, c *cell) {
			k := bkey{(u - first) / width, index(workers, &wl, r.secs.workers[c.worker]),
				index(prefixes, &tw.Prefixes, r.secs.prefixes[c.prefix])}
			i, ok := sums[k]
			if !ok {
				i = len(tw.Buckets)
				sums[k] = i
				tw.Buckets = append(tw.Buckets, [6]float64{float64(k.col), float64(k.w), float64(k.p)})
			}
			b := &tw.Buckets[i]
			b[3] += c.busy
			b[4] += float64(c.count)
			b[5] += float64(c.erred)
		})
	}
	for _, w := range wl {
		tw.Workers = append(tw.Workers, StreamWorker{Address: w})
	}
	return tw
}

// Timeline returns the thread-seconds tasks of each prefix ran in at
// most cols equal buckets from start to stop.
func (r *Recorder) Timeline(start, stop time.Time, cols int) Timeline {
	if cols <= 0 {
		cols = maxColumns
	}
	if !stop.After(start) {
		stop = start.Add(time.Second)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	first, last := start.Unix(), stop.Unix()
	if last-first >= windowSeconds {
		first = last - windowSeconds + 1
	}
	width := max(1, int64(math.Ceil(float64(last-first+1)/float64(cols))))
	n := int((last-first)/width) + 1
	tl := Timeline{Start: time.Unix(first, 0), BucketSeconds: float64(width), Prefixes: []string{},
		Busy: [][]float64{}}
	index := map[uint16]int{}
	r.secs.each(first, last, func(u int64, c *cell) {
		i, ok := index[c.prefix]
		if !ok {
			i = len(tl.Prefixes)
			index[c.prefix] = i
			tl.Prefixes = append(tl.Prefixes, r.secs.prefixes[c.prefix])
			tl.Busy = append(tl.Busy, make([]float64, n))
		}
		tl.Busy[i][(u-first)/width] += c.busy
	})
	return tl
}
