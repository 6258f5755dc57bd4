package scheduler

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/shoal-data/shoal/graph"
)

// decideWorker picks a worker with a free slot for t: the one holding the
// most bytes of t's inputs, then the least loaded, then the first to join.
// It returns nil when no allowed worker has a free slot.
func (s *State) decideWorker(t *task) *worker {
	d := s.meanDuration(t)
	if w := t.prefer; w != nil && s.canTake(w, d) && s.allowed(t, w) && hasResources(t, w) {
		return w
	}
	var best *worker
	var bestBytes int64 = -1
	for _, w := range s.wlist {
		if !s.canTake(w, d) || !s.allowed(t, w) || !hasResources(t, w) {
			continue
		}
		var b int64
		for _, d := range t.deps {
			if d.holds(w) {
				b += d.nbytes
			}
		}
		if best == nil || b > bestBytes || (b == bestBytes && w.load() < best.load()) {
			best, bestBytes = w, b
		}
	}
	return best
}

// meanDuration is the mean compute seconds of t's prefix so far, when
// Config.Backlog needs it; 0 when unknown or not needed.
func (s *State) meanDuration(t *task) float64 {
	if s.cfg.Backlog <= 0 {
		return 0
	}
	return s.durations[t.key.Prefix()]
}

// canTake reports whether w has a free slot for a task whose prefix takes
// d seconds on average (0: unknown): one of its Saturation slots, or, for
// a short task, one of the slots that Config.Backlog allows.
func (s *State) canTake(w *worker, d float64) bool {
	if w.state != WorkerRunning {
		return false
	}
	if w.processing < w.slots {
		return true
	}
	if w.processing >= w.maxSlots || d <= 0 {
		return false
	}
	return float64(w.processing) < float64(w.info.Threads)*s.cfg.Backlog.Seconds()/d
}

func (w *worker) load() float64 {
	return float64(w.processing) / float64(w.info.Threads)
}

// allowed reports whether t's worker restrictions let it run on w.
func (s *State) allowed(t *task, w *worker) bool {
	ws := t.spec.Workers
	if len(ws) == 0 {
		return true
	}
	if slices.Contains(ws, w.info.Name) {
		return true
	}
	if !t.spec.LooseRestrictions {
		return false
	}
	for _, n := range ws {
		if x, ok := s.workers[n]; ok && x.state != WorkerGone {
			return false // a listed worker exists: wait for it
		}
	}
	return true
}

func hasResources(t *task, w *worker) bool {
	for r, n := range t.spec.Resources {
		if w.info.Resources[r]-w.used[r] < n {
			return false
		}
	}
	return true
}

// couldRun reports whether some current worker could ever run t, were it
// idle.
func (s *State) couldRun(t *task) bool {
	for _, w := range s.wlist {
		if w.state == WorkerClosing || !s.allowed(t, w) {
			continue
		}
		ok := true
		for r, n := range t.spec.Resources {
			if w.info.Resources[r] < n {
				ok = false
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// UnrunnableError is the cause of a task that no worker can run (with
// Config.FailUnrunnable).
type UnrunnableError struct {
	Key       graph.Key
	Workers   []string
	Resources map[string]float64
	Have      []string
}

func (e *UnrunnableError) Error() string {
	var need []string
	if len(e.Workers) > 0 {
		need = append(need, fmt.Sprintf("one of the workers %v", e.Workers))
	}
	if len(e.Resources) > 0 {
		keys := make([]string, 0, len(e.Resources))
		for r := range e.Resources {
			keys = append(keys, r)
		}
		sort.Strings(keys)
		var rs []string
		for _, r := range keys {
			rs = append(rs, fmt.Sprintf("%s=%g", r, e.Resources[r]))
		}
		need = append(need, "resources "+strings.Join(rs, ","))
	}
	return fmt.Sprintf("task %q can run on no worker: it needs %s; the workers are %v",
		e.Key, strings.Join(need, " and "), e.Have)
}

func (s *State) unrunnableError(t *task) error {
	e := &UnrunnableError{Key: t.key, Workers: t.spec.Workers, Resources: t.spec.Resources}
	for _, w := range s.wlist {
		desc := w.info.Name
		if len(w.info.Resources) > 0 {
			desc += fmt.Sprintf(" %v", w.info.Resources)
		}
		e.Have = append(e.Have, desc)
	}
	return e
}

func constrained(t *task) bool {
	return len(t.spec.Workers) > 0 || len(t.spec.Resources) > 0
}

func (s *State) enqueue(t *task) {
	s.setState(t, Queued)
	if constrained(t) {
		i, _ := slices.BinarySearchFunc(s.constrained, t, func(a, b *task) int {
			if a.prio.less(b.prio) {
				return -1
			}
			return 1
		})
		s.constrained = slices.Insert(s.constrained, i, t)
		return
	}
	if s.deferStart {
		// handleGraph orders the whole queue once at the end.
		t.heapIdx = int32(len(s.queue))
		s.queue = append(s.queue, t)
		return
	}
	s.queue.push(t)
}

func (s *State) dequeue(t *task) {
	if t.heapIdx >= 0 {
		s.queue.remove(int(t.heapIdx))
		return
	}
	if i := slices.Index(s.constrained, t); i >= 0 {
		s.constrained = slices.Delete(s.constrained, i, i+1)
	}
}

// fillAll starts queued tasks, best priority first, each on the worker
// decideWorker picks, while some worker has a free slot.
func (s *State) fillAll() {
	for len(s.queue) > 0 {
		t := s.queue[0]
		w := s.decideWorker(t)
		if w == nil {
			break
		}
		s.queue.pop()
		s.startOn(t, w)
	}
	for i := 0; i < len(s.constrained); {
		t := s.constrained[i]
		w := s.decideWorker(t)
		if w == nil {
			if s.cfg.FailUnrunnable && len(s.wlist) > 0 && !s.couldRun(t) {
				t.failure = &failure{root: t.key, rootOp: graph.DisplayOp(t.spec), err: s.unrunnableError(t)}
				s.recommend(t, Erred)
			}
			i++
			continue
		}
		s.constrained = slices.Delete(s.constrained, i, i+1)
		s.startOn(t, w)
	}
}

// taskHeap orders queued tasks by priority: a binary min-heap written out
// for *task, which is several times faster than container/heap's
// interface calls on this hot path.
type taskHeap []*task

func (h taskHeap) less(i, j int) bool { return h[i].prio.less(h[j].prio) }

func (h taskHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIdx = int32(i)
	h[j].heapIdx = int32(j)
}

func (h taskHeap) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !h.less(j, i) {
			break
		}
		h.swap(i, j)
		j = i
	}
}

func (h taskHeap) down(i int) bool {
	start, n := i, len(h)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		j := l
		if r := l + 1; r < n && h.less(r, l) {
			j = r
		}
		if !h.less(j, i) {
			break
		}
		h.swap(i, j)
		i = j
	}
	return i > start
}

func (h *taskHeap) push(t *task) {
	t.heapIdx = int32(len(*h))
	*h = append(*h, t)
	h.up(len(*h) - 1)
}

func (h *taskHeap) pop() *task {
	old := *h
	n := len(old) - 1
	old.swap(0, n)
	t := old[n]
	old[n] = nil
	*h = old[:n]
	if n > 0 {
		h.down(0)
	}
	t.heapIdx = -1
	return t
}

func (h *taskHeap) remove(i int) {
	old := *h
	n := len(old) - 1
	if i != n {
		old.swap(i, n)
	}
	t := old[n]
	old[n] = nil
	*h = old[:n]
	if i != n {
		if !h.down(i) {
			h.up(i)
		}
	}
	t.heapIdx = -1
}

// init restores the heap order of an unordered slice.
func (h taskHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func sortByPriority(ts []*task) {
	slices.SortFunc(ts, func(a, b *task) int {
		if a.prio.less(b.prio) {
			return -1
		}
		if b.prio.less(a.prio) {
			return 1
		}
		return strings.Compare(string(a.key), string(b.key))
	})
}

func sortKeys(ks []graph.Key) { slices.Sort(ks) }
