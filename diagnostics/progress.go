package diagnostics

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoal-data/shoal/graph"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// Progress shows how far computations have got: one bar per key prefix,
// "prefix done/total", and a total line with the elapsed time. It listens to
// a hub for ComputeStarted (which gives the totals), task transitions
// (a task is done when it reaches "memory", "erred" or "cancelled", counted
// once per task) and ComputeFinished (which ends the bars).
//
// On a terminal the bars are redrawn in place. On any other writer (a
// file, a buffer, a pipe) the bars are written as plain lines: once when
// each computation ends and, while it runs, at most once per refresh
// interval (10s unless set by RefreshRate).
type Progress struct {
	cfg      progressConfig
	terminal bool
	bars     *mpb.Progress
	manual   chan any // asks mpb for a frame (non-terminal)
	shutdown chan any // closed by mpb when it has shut down

	mu        sync.Mutex
	computes  []*computeProgress
	byID      map[uint64]*computeProgress
	subs      []*Subscription
	lastFrame time.Time // non-terminal: when a frame was last asked for
	closed    bool

	closeOnce sync.Once
	closeErr  error
}

type progressConfig struct {
	compute uint64
	onlyOne bool
	refresh time.Duration
	width   int
	tty     int // tests: 1 draws as on a terminal, -1 as elsewhere
}

// ProgressOption configures a Progress.
type ProgressOption func(*progressConfig)

// ForCompute shows only the computation with the given id.
func ForCompute(id uint64) ProgressOption {
	return func(c *progressConfig) {
		c.compute = id
		c.onlyOne = true
	}
}

// RefreshRate sets how often the bars are redrawn: on a terminal every d
// (150ms unless set); elsewhere at most once per d while a computation runs
// (10s unless set), besides the final lines.
func RefreshRate(d time.Duration) ProgressOption {
	return func(c *progressConfig) {
		if d > 0 {
			c.refresh = d
		}
	}
}

// Width sets the width of the bars' lines, in columns. By default it is the
// terminal's width, or 80 on other writers.
func Width(n int) ProgressOption {
	return func(c *progressConfig) {
		if n > 0 {
			c.width = n
		}
	}
}

// computeProgress is what a Progress knows of one computation.
type computeProgress struct {
	id       uint64
	start    time.Time
	prefixes []string // sorted
	counts   map[string]*prefixCount
	all      prefixCount // every task of the computation
	doneKeys map[graph.Key]struct{}

	finished bool
	err      string
	// stop is when the computation ended or its last task got done, in
	// UnixNano; 0 while it runs. failed is set when it ended with an
	// error. Both are read by the bars' decorators.
	stop   atomic.Int64
	failed atomic.Bool
}

type prefixCount struct {
	done, total int
	erred       atomic.Int64 // read by decorators
	pending     int          // done but not yet added to bar
	bar         *mpb.Bar
}

// NewProgress returns a Progress that draws on w. Attach it to a hub, and
// Close it when done.
func NewProgress(w io.Writer, opts ...ProgressOption) *Progress {
	p := &Progress{
		terminal: isTerminal(w),
		byID:     make(map[uint64]*computeProgress),
		shutdown: make(chan any),
	}
	for _, o := range opts {
		o(&p.cfg)
	}
	if p.cfg.tty != 0 {
		p.terminal = p.cfg.tty > 0
	}
	copts := []mpb.ContainerOption{
		mpb.WithOutput(w),
		mpb.WithShutdownNotifier(p.shutdown),
	}
	if p.cfg.width > 0 {
		copts = append(copts, mpb.WithWidth(p.cfg.width))
	}
	if p.terminal {
		copts = append(copts, mpb.PopCompletedMode(), mpb.WithAutoRefresh())
		if p.cfg.refresh > 0 {
			copts = append(copts, mpb.WithRefreshRate(p.cfg.refresh))
		}
	} else {
		// mpb draws nothing on a non-terminal unless asked to; ask for
		// frames ourselves so that logs get a few, not one per tick.
		p.manual = make(chan any)
		copts = append(copts, mpb.WithManualRefresh(p.manual))
		if p.cfg.refresh == 0 {
			p.cfg.refresh = 10 * time.Second
		}
	}
	p.bars = mpb.New(copts...)
	return p
}

// ShowProgress returns a Progress drawing on w the computations published
// to h.
func ShowProgress(h *Hub, w io.Writer, opts ...ProgressOption) *Progress {
	p := NewProgress(w, opts...)
	p.Attach(h)
	return p
}

// Attach subscribes the Progress to h. Attaching a closed Progress does
// nothing.
func (p *Progress) Attach(h *Hub) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.subs = append(p.subs, h.Subscribe(p.handle))
}

// handle is the subscriber function.
func (p *Progress) handle(events []Event) {
	p.mu.Lock()
	var touched []*computeProgress
	for i := range events {
		e := &events[i]
		if p.cfg.onlyOne && e.Compute != p.cfg.compute {
			continue
		}
		switch e.Kind {
		case ComputeStarted:
			if _, ok := p.byID[e.Compute]; !ok {
				p.start(e)
			}
		case TaskTransition:
			c := p.byID[e.Compute]
			if c == nil || c.finished {
				continue
			}
			if e.To != StateMemory && e.To != StateErred && e.To != StateCancelled {
				continue
			}
			if _, seen := c.doneKeys[e.Key]; seen {
				continue
			}
			c.doneKeys[e.Key] = struct{}{}
			prefix := e.Prefix
			if prefix == "" {
				prefix = e.Key.Prefix()
			}
			pc := c.counts[prefix]
			if pc == nil { // a task the totals did not announce
				continue
			}
			pc.done++
			pc.pending++
			c.all.done++
			c.all.pending++
			if e.To == StateErred {
				pc.erred.Add(1)
				c.all.erred.Add(1)
			}
			if c.all.done == c.all.total {
				// Before the bars hear of it: the final frame reads it.
				c.stop.Store(eventTime(e).UnixNano())
			}
			if !slices.Contains(touched, c) {
				touched = append(touched, c)
			}
		case ComputeFinished:
			c := p.byID[e.Compute]
			if c == nil || c.finished {
				continue
			}
			c.advance()
			p.finish(c, e)
		}
	}
	for _, c := range touched {
		c.advance()
	}
	frame := false
	if !p.terminal && len(touched) > 0 {
		if now := time.Now(); now.Sub(p.lastFrame) >= p.cfg.refresh {
			p.lastFrame = now
			frame = true
		}
	}
	p.mu.Unlock()
	if frame {
		select {
		case p.manual <- time.Now():
		case <-p.shutdown:
		}
	}
}

func eventTime(e *Event) time.Time {
	if e.Time.IsZero() {
		return time.Now()
	}
	return e.Time
}

// start adds the bars of a computation. Called with p.mu held.
func (p *Progress) start(e *Event) {
	c := &computeProgress{
		id:       e.Compute,
		start:    eventTime(e),
		counts:   make(map[string]*prefixCount, len(e.Tasks)),
		doneKeys: make(map[graph.Key]struct{}),
	}
	for prefix, n := range e.Tasks {
		if n <= 0 {
			continue
		}
		c.prefixes = append(c.prefixes, prefix)
		c.counts[prefix] = &prefixCount{total: n}
		c.all.total += n
	}
	slices.Sort(c.prefixes)
	p.byID[c.id] = c
	p.computes = append(p.computes, c)
	// Until the first frame, a non-terminal writer gets none.
	p.lastFrame = time.Now()

	if c.all.total == 0 {
		c.stop.Store(c.start.UnixNano())
		return
	}
	for _, prefix := range c.prefixes {
		pc := c.counts[prefix]
		pc.bar = p.addBar(prefix, pc, nil)
	}
	c.all.bar = p.addBar("total", &c.all, c)
}

// addBar adds one bar; c is set for the total bar, which shows the time.
func (p *Progress) addBar(name string, pc *prefixCount, c *computeProgress) *mpb.Bar {
	// Lines read "load  3/3 [=====>    ] 1 erred 1.2s", with the names
	// and counts in aligned columns and nothing trailing.
	status := decor.Any(func(decor.Statistics) string {
		var b strings.Builder
		if n := pc.erred.Load(); n > 0 {
			fmt.Fprintf(&b, " %d erred", n)
		}
		if c != nil {
			b.WriteString(" " + formatElapsed(c.elapsed()))
			if c.failed.Load() {
				b.WriteString(" failed")
			}
		}
		return b.String()
	})
	opts := []mpb.BarOption{
		mpb.PrependDecorators(
			decor.Name(name, decor.WCSyncSpaceR),
			decor.CountersNoUnit("%d/%d", decor.WCSyncSpaceR),
		),
		mpb.AppendDecorators(status),
		mpb.BarFillerTrim(),
	}
	if !p.terminal {
		// Each finished bar is written once, in the frame where it ends.
		opts = append(opts, mpb.BarRemoveOnComplete())
	}
	if c != nil {
		opts = append(opts, mpb.BarPriority(1<<30)) // below its prefixes
	}
	bar, err := p.bars.Add(int64(pc.total), mpb.BarStyle().Build(), opts...)
	if err != nil {
		return nil // mpb has shut down (a write failed); Close reports it
	}
	return bar
}

// advance moves the bars by what was counted since the last call.
func (c *computeProgress) advance() {
	for _, prefix := range c.prefixes {
		c.counts[prefix].advance()
	}
	c.all.advance()
}

func (pc *prefixCount) advance() {
	if pc.pending > 0 && pc.bar != nil {
		pc.bar.IncrBy(pc.pending)
	}
	pc.pending = 0
}

// finish ends the bars of c. Called with p.mu held.
func (p *Progress) finish(c *computeProgress, e *Event) {
	c.finished = true
	c.err = e.Err
	c.doneKeys = nil
	c.stop.Store(eventTime(e).UnixNano())
	if e.Err != "" {
		c.failed.Store(true)
	}
	c.abortBars()
}

// abortBars stops the bars of c that have not reached their totals.
func (c *computeProgress) abortBars() {
	for _, prefix := range c.prefixes {
		if pc := c.counts[prefix]; pc.bar != nil && pc.done < pc.total {
			pc.bar.Abort(false)
		}
	}
	if c.all.bar != nil && c.all.done < c.all.total {
		c.all.bar.Abort(false)
	}
}

func (c *computeProgress) elapsed() time.Duration {
	if stop := c.stop.Load(); stop != 0 {
		return time.Unix(0, stop).Sub(c.start)
	}
	return time.Since(c.start)
}

func formatElapsed(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < 100*time.Millisecond:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return strconv.FormatFloat(d.Round(10*time.Millisecond).Seconds(), 'f', -1, 64) + "s"
	default:
		return d.Round(time.Second).String()
	}
}

// Summary returns a few lines of plain text on each computation seen: how
// many of its tasks are done, how many erred, how long it took and whether
// it failed, then the same per key prefix.
func (p *Progress) Summary() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	for _, c := range p.computes {
		fmt.Fprintf(&b, "compute %d: %d/%d tasks", c.id, c.all.done, c.all.total)
		if n := c.all.erred.Load(); n > 0 {
			fmt.Fprintf(&b, ", %d erred", n)
		}
		switch {
		case c.err != "":
			fmt.Fprintf(&b, ", failed after %s: %s\n", formatElapsed(c.elapsed()), c.err)
		case c.finished:
			fmt.Fprintf(&b, ", finished in %s\n", formatElapsed(c.elapsed()))
		default:
			fmt.Fprintf(&b, ", running for %s\n", formatElapsed(c.elapsed()))
		}
		width := 0
		for _, prefix := range c.prefixes {
			width = max(width, len(prefix))
		}
		for _, prefix := range c.prefixes {
			pc := c.counts[prefix]
			fmt.Fprintf(&b, "  %-*s  %d/%d", width, prefix, pc.done, pc.total)
			if n := pc.erred.Load(); n > 0 {
				fmt.Fprintf(&b, "  %d erred", n)
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// Close detaches the Progress from its hubs after handling what they had
// queued for it, ends the bars of computations still running, and waits
// until the last lines are drawn. It returns the error, if any, of writing
// to w. Close is idempotent.
func (p *Progress) Close() error {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closed = true
		subs := p.subs
		p.mu.Unlock()
		for _, s := range subs {
			s.Close()
		}
		p.mu.Lock()
		for _, c := range p.computes {
			if !c.finished {
				c.advance()
				c.stop.CompareAndSwap(0, time.Now().UnixNano())
				c.abortBars()
			}
		}
		p.mu.Unlock()
		p.bars.Wait()
		if p.bars.Error != nil {
			p.closeErr = fmt.Errorf("diagnostics: draw progress: %w", p.bars.Error)
		}
	})
	return p.closeErr
}
