package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/diagnostics/alert"
	"github.com/shoal-data/shoal/diagnostics/archive"
	"github.com/shoal-data/shoal/diagnostics/dashboard"
	"github.com/shoal-data/shoal/diagnostics/otelshoal"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/internal/logring"
	"github.com/shoal-data/shoal/scheduler"
)

// workerName is the scheduler's name for the executor's single worker.
const workerName = "local"

// ErrClosed is returned by calls on a closed Executor.
var ErrClosed = errors.New("local executor is closed")

// Executor runs task graphs on a pool of goroutines in this process. It
// implements graph.Executor. The zero value is not usable; call New.
//
// Goroutines are started when tasks are ready and stop when none are, so an
// idle Executor holds none. Close releases its spill directory.
type Executor struct {
	cfg      config
	logger   *slog.Logger
	ring     *logring.Ring // its last log records, its tasks' among them
	env      *graph.Env
	hub      *diagnostics.Hub
	progress *diagnostics.Progress
	otel     *otelshoal.Exporter       // nil when nothing is exported
	profiler *diagnostics.Profiler     // nil when profiling is off
	profiles *diagnostics.ProfileStore // its windows
	archive  *archive.Writer           // nil without WithArchive
	fine     diagnostics.FineMetrics
	meter    graph.Meter // of fine, for the tasks
	alerts   alerts
	started  time.Time

	baseCtx    context.Context
	baseCancel context.CancelFunc

	mu        sync.Mutex
	cond      *sync.Cond // signalled when a slot ends a task while someone waits for that
	waiters   int        // goroutines waiting on cond
	stopping  []slotMark // slots told to stop their task, for end to wait on
	state     *scheduler.State
	store     store
	ready     []readyRun
	readyHead int
	busy      int                   // slots running a task
	idleMark  time.Time             // when idle time was last accounted
	idleTime  time.Duration         // not yet added to fine
	times     map[string]*taskTimes // per prefix, not yet added to fine
	slots     []*slot
	idle      []*slot
	clients   map[string]*computation
	owner     map[graph.Key]uint64 // computation that submitted a task, while someone listens to events
	nextID    uint64
	closed    bool
	published uint64 // transitions already published
	trbuf     []scheduler.Transition
	evbuf     []diagnostics.Event
	wg        sync.WaitGroup

	// The recorders of the performance reports recording (under mu).
	reports []*dashboard.Recorder
}

// readyRun is a task ready to run, since when.
type readyRun struct {
	scheduler.Run
	since time.Time
}

// slot is one place to run a task; a goroutine serves it while there is
// work.
type slot struct {
	id      int
	name    string
	ctx     context.Context
	cancel  context.CancelFunc
	running graph.Key // "" when idle
	start   time.Time // when it started running it
	seq     uint64    // counts tasks started and ended, for waiters
	fin     scheduler.TaskFinished
	fail    scheduler.TaskFailed
	inputs  []any
	op      *graph.Op // the op of the last task, reused while tasks name the same op
}

// New returns an Executor. See the Option functions for what can be set.
func New(opts ...Option) *Executor {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	logger := cfg.logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	aw, self := openArchive(cfg, logger)
	if aw != nil {
		logger = slog.New(aw.LogHandler(logger.Handler(), archive.ProcessLocal, workerName))
	}
	hub := diagnostics.NewHub()
	otel, otelErr := otelshoal.Start(context.Background(), hub, cfg.otel...)
	if h := otel.LogHandler(); h != nil {
		logger = slog.New(slog.NewMultiHandler(logger.Handler(), h))
	}
	ring := logring.New(0, false)
	logger = slog.New(ring.Handler(logger.Handler(), slog.LevelInfo))
	logger = logger.With("executor", "local")
	if otelErr != nil {
		logger.Warn("not exporting to OpenTelemetry", "reason", otelErr)
	}
	e := &Executor{
		cfg:     cfg,
		logger:  logger,
		ring:    ring,
		hub:     hub,
		otel:    otel,
		clients: make(map[string]*computation),
		archive: aw,
		started: time.Now(),
	}
	e.cond = sync.NewCond(&e.mu)
	e.baseCtx, e.baseCancel = context.WithCancel(context.Background())
	e.store.init(cfg, logger)
	e.env = &graph.Env{Registry: cfg.registry, Logger: logger.With("worker", workerName), Worker: workerName,
		LocalDir: e.LocalDir()}
	e.state = scheduler.New(scheduler.Config{Saturation: 1, FailUnrunnable: true, LogSize: cfg.logSize})
	e.state.Handle(&scheduler.WorkerAdded{Meta: scheduler.Meta{Time: time.Now()},
		Worker: scheduler.WorkerInfo{Name: workerName, Threads: cfg.threads, MemoryLimit: cfg.memoryLimit,
			Resources: cfg.resources}})
	e.slots = make([]*slot, cfg.threads)
	for i := range e.slots {
		s := &slot{id: i, name: fmt.Sprintf("local-%d", i)}
		s.ctx, s.cancel = context.WithCancel(e.baseCtx)
		e.slots[i] = s
		e.idle = append(e.idle, s)
	}
	if cfg.progress != nil {
		e.progress = diagnostics.ShowProgress(e.hub, cfg.progress)
	}
	e.alerts.m = alert.New(localAlertConfig(cfg.alerts))
	e.alerts.reads = alert.NewReads(e.fine.Meter(workerName))
	e.meter = e.alerts.reads
	e.startProfiler()
	if aw != nil {
		aw.Attach(e.hub)
		self.Store(e)
	}
	return e
}

// Events returns the hub on which the executor publishes what happens:
// computations started and finished, task transitions with the slot that
// ran them, their duration and result size, and spills. Subscribe to it
// for progress bars, task streams or logs.
func (e *Executor) Events() *diagnostics.Hub { return e.hub }

// LocalDir returns the executor's directory, where results spill and tasks
// write scratch files (shuffle shards): a directory of its own under
// WithLocalDir's (or os.TempDir()), which no other executor shares, made
// by New and removed by Close. New also removes the directories that
// executors of killed processes left there.
func (e *Executor) LocalDir() string { return e.store.dir }

// Threads returns how many tasks run at once.
func (e *Executor) Threads() int { return e.cfg.threads }

// Close cancels every running computation, waits for the goroutines to
// stop, flushes what is exported to OpenTelemetry (waiting for it
// otelShutdownTimeout at most), removes the spill directory and writes
// what is left of the archive (WithArchive). Calls after Close fail with
// ErrClosed.
func (e *Executor) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	for _, c := range e.clients {
		c.finish(ErrClosed)
	}
	e.ready = e.ready[:0]
	e.readyHead = 0
	e.mu.Unlock()
	e.baseCancel()
	e.wg.Wait()
	e.profiler.Stop()
	if e.progress != nil {
		e.progress.Close()
	}
	e.hub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), otelShutdownTimeout)
	if err := e.otel.Shutdown(ctx); err != nil {
		e.logger.Warn("could not flush what was exported to OpenTelemetry", "reason", err)
	}
	cancel()
	err := e.store.close()
	if e.archive != nil {
		err = errors.Join(err, e.archive.Close())
	}
	return err
}

// otelShutdownTimeout bounds how long Close waits for the last spans,
// metrics and logs to be exported.
const otelShutdownTimeout = 10 * time.Second

// pushReady queues a task to run, ready since now, and starts a goroutine
// for it if a slot is free. Called with e.mu held.
func (e *Executor) pushReady(r *scheduler.Run, now time.Time) {
	if e.readyHead > 64 && 2*e.readyHead > len(e.ready) {
		n := copy(e.ready, e.ready[e.readyHead:])
		clear(e.ready[n:])
		e.ready = e.ready[:n]
		e.readyHead = 0
	}
	if e.readyHead == len(e.ready) && e.busy == 0 {
		e.accountIdle(now) // work begins: no idle time before
	}
	e.ready = append(e.ready, readyRun{Run: *r, since: now})
	if n := len(e.idle); n > 0 {
		s := e.idle[n-1]
		e.idle = e.idle[:n-1]
		e.wg.Add(1)
		go e.serve(s)
	}
}

// popReady takes the oldest queued task that was not cancelled before it
// started. Called with e.mu held.
func (e *Executor) popReady() (readyRun, bool) {
	for e.readyHead < len(e.ready) {
		r := e.ready[e.readyHead]
		e.ready[e.readyHead] = readyRun{}
		e.readyHead++
		if r.Task != nil {
			return r, true
		}
	}
	e.ready = e.ready[:0]
	e.readyHead = 0
	return readyRun{}, false
}

// serve runs tasks on slot s until none are ready.
func (e *Executor) serve(s *slot) {
	defer e.wg.Done()
	e.mu.Lock()
	var last time.Time // when the slot's last task ended, if it just did
	for {
		run, ok := e.popReady()
		t := run.Task
		if !ok || e.closed {
			e.idle = append(e.idle, s)
			in := e.alertInputs()
			e.mu.Unlock()
			e.raiseAlerts(time.Now(), in...)
			return
		}
		s.inputs = s.inputs[:0]
		var load []*entry
		for i, d := range t.Deps {
			en := e.store.get(run.DepIDs[i], d)
			if en == nil {
				s.inputs = append(s.inputs, nil)
				load = append(load, nil)
				continue
			}
			s.inputs = append(s.inputs, en.value)
			if en.state == onDisk {
				load = append(load, en)
			}
		}
		s.running = t.Key
		s.seq++
		now := last // a slot that goes on from one task to the next
		if now.IsZero() {
			now = time.Now()
		}
		s.start = now
		last = time.Time{}
		e.accountIdle(now)
		e.busy++
		comp := e.computationOf(run.Client)
		e.mu.Unlock()

		prefix := t.Key.Prefix()
		var v any
		var err error
		start := now
		if load != nil {
			err = e.loadInputs(run.Run, s)
			start = time.Now()
		}
		if err == nil {
			if s.op == nil || s.op.Name != t.Op {
				if op, ok := e.cfg.registry.Lookup(t.Op); ok {
					s.op = op
				} else {
					s.op = nil
					err = &graph.UnknownOpError{Op: t.Op, Key: t.Key}
				}
			}
			if err == nil {
				ctx := graph.TaskContext(s.ctx, t, e.env, comp, e.meter)
				v, err = graph.RunOp(e.profiler.Begin(ctx, string(t.Key), prefix, comp), s.op, t, s.inputs, e.env)
				e.profiler.End(s.ctx)
			}
		}
		end := time.Now()
		dur := end.Sub(start)
		clear(s.inputs)
		var size int64
		var spillErr error
		if err == nil {
			size = graph.SizeOf(v)
		}

		e.mu.Lock()
		e.accountIdle(end)
		e.busy--
		e.addTimes(prefix, now.Sub(run.since), dur)
		if s.ctx.Err() != nil && !e.closed {
			s.ctx, s.cancel = context.WithCancel(e.baseCtx)
		}
		if e.closed {
			s.end(e)
			continue
		}
		last = end
		if err == nil {
			e.store.put(run.ID, t.Key, v, size)
			if e.store.overLimit() {
				spillErr = e.spill(e.store.m[run.ID])
			}
		}
		var ev scheduler.Event
		switch {
		case spillErr != nil:
			e.store.drop(run.ID, t.Key)
			s.fail = scheduler.TaskFailed{Meta: scheduler.Meta{Time: end}, Key: t.Key, ID: run.ID, Worker: workerName,
				Err: spillErr, Start: start, Duration: dur}
			ev = &s.fail
		case err != nil:
			if e.logger.Enabled(context.Background(), slog.LevelWarn) && !errors.Is(err, context.Canceled) {
				e.logger.Warn("task failed", "key", t.Key, "op", t.Op, "slot", s.name, "error", err)
			}
			s.fail = scheduler.TaskFailed{Meta: scheduler.Meta{Time: end}, Key: t.Key, ID: run.ID, Worker: workerName,
				Err: err, Start: start, Duration: dur}
			ev = &s.fail
		default:
			s.fin = scheduler.TaskFinished{Meta: scheduler.Meta{Time: end}, Key: t.Key, ID: run.ID, Worker: workerName,
				Size: size, Start: start, Duration: dur}
			ev = &s.fin
		}
		e.handle(s, end, ev)
		s.end(e)
		if errors.Is(err, context.Canceled) {
			e.alerts.reads.Take(t.Key)
		} else {
			e.taskEnded(t.Key, dur, size, err != nil || spillErr != nil)
		}
		if len(e.alerts.ended) >= alertBatch {
			in := e.alertInputs()
			e.mu.Unlock()
			e.raiseAlerts(end, in...)
			e.mu.Lock()
		}
	}
}

// end marks the slot's task as over, spill included, for waitSlots.
// Called with e.mu held.
func (s *slot) end(e *Executor) {
	s.running = ""
	s.seq++
	if e.waiters > 0 {
		e.cond.Broadcast()
	}
}

// handle feeds events to the scheduler and carries out its instructions.
// Called with e.mu held; s is the slot that caused them, or nil; now is
// when they happened (the zero time: look at the clock when needed).
func (e *Executor) handle(s *slot, now time.Time, evs ...scheduler.Event) {
	ins := e.state.Handle(evs...)
	var gaveUp []scheduler.Event
	// Transitions are published before the instructions are carried out,
	// so that listeners hear of a task's end before its computation's.
	if e.hub.Active() {
		e.publishTransitions(s, evs)
	} else {
		e.published = e.state.TransitionCount()
	}
	for _, in := range ins {
		switch in := in.(type) {
		case *scheduler.Run:
			if now.IsZero() {
				now = time.Now() // once for the tasks made ready together
			}
			e.pushReady(in, now)
		case *scheduler.Release:
			e.store.release(in.ID, in.Key)
		case *scheduler.CancelRun:
			for _, x := range e.slots {
				if x.running == in.Key {
					x.cancel()
					e.stopping = append(e.stopping, slotMark{x, x.seq})
				}
			}
			// Not started yet: it never will be. A slot may be on its
			// way to take it, and nothing would wait for it then.
			for i := e.readyHead; i < len(e.ready); i++ {
				if r := &e.ready[i]; r.Task != nil && r.Task.Key == in.Key {
					gaveUp = append(gaveUp, &scheduler.TaskFailed{Key: in.Key, ID: r.ID, Worker: workerName, Err: context.Canceled})
					*r = readyRun{}
				}
			}
		case *scheduler.ReportResult:
			if c := e.clients[in.Client]; c != nil {
				c.result(in.Key, in.Index, in.ID)
			}
		case *scheduler.ReportError:
			if c := e.clients[in.Client]; c != nil {
				c.error(in.Key, in.Index, in.Err)
			}
		case *scheduler.Fetch:
			// One worker holds everything: nothing to move.
		}
	}
	if len(gaveUp) > 0 {
		e.handle(nil, now, gaveUp...)
	}
}

// loadInputs reads the spilled inputs of t back into memory.
func (e *Executor) loadInputs(run scheduler.Run, s *slot) error {
	for i, d := range run.Task.Deps {
		if s.inputs[i] != nil {
			continue
		}
		v, err := e.unspill(run.DepIDs[i], d)
		if err != nil {
			return err
		}
		s.inputs[i] = v
	}
	return nil
}

// slotMark is a slot running a task, as it was when the mark was taken.
type slotMark struct {
	s   *slot
	seq uint64
}

// waitSlots waits until each marked slot has ended the task it was running
// when marked. Called with e.mu held.
func (e *Executor) waitSlots(marks []slotMark) {
	e.waiters++
	for _, m := range marks {
		for m.s.seq == m.seq {
			e.cond.Wait()
		}
	}
	e.waiters--
}

// Story returns the recorded state transitions of the given keys, oldest
// first: how each task came to be where it is.
func (e *Executor) Story(keys ...graph.Key) []scheduler.Transition {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.state.Story(keys...)
}

// Dump returns the scheduler state and the recent transitions as JSON.
func (e *Executor) Dump() ([]byte, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.state.Dump()
}

// MemoryStats describes the memory held by results.
type MemoryStats struct {
	Limit   int64 // the memory limit; 0 means none
	Managed int64 // bytes of results held in memory
	Spilled int64 // bytes of results spilled to disk
	Keys    int   // results held, in memory or on disk
}

// Memory returns the executor's memory use.
func (e *Executor) Memory() MemoryStats {
	e.mu.Lock()
	defer e.mu.Unlock()
	return MemoryStats{Limit: e.cfg.memoryLimit, Managed: e.store.managed, Spilled: e.store.spilled, Keys: e.store.n}
}

func removeAll(dir string) error {
	if dir == "" {
		return nil
	}
	return os.RemoveAll(dir)
}

// publishTransitions publishes the transitions made since the last call.
// Called with e.mu held; s is the slot whose task ended, if any.
func (e *Executor) publishTransitions(s *slot, evs []scheduler.Event) {
	e.trbuf = e.state.TransitionsSince(e.published, e.trbuf[:0])
	e.published = e.state.TransitionCount()
	e.evbuf = e.evbuf[:0]
	var ran graph.Key
	var start time.Time
	var dur time.Duration
	var size int64
	if s != nil && len(evs) == 1 {
		switch ev := evs[0].(type) {
		case *scheduler.TaskFinished:
			ran, start, dur, size = ev.Key, ev.Start, ev.Duration, ev.Size
		case *scheduler.TaskFailed:
			ran, start, dur = ev.Key, ev.Start, ev.Duration
		}
	}
	for i := range e.trbuf {
		tr := &e.trbuf[i]
		ev := diagnostics.Event{Time: tr.Time, Kind: diagnostics.TaskTransition, Compute: e.owner[tr.Key],
			Key: tr.Key, Prefix: tr.Key.Prefix(), From: tr.From.String(), To: tr.To.String(), Stimulus: tr.Stimulus}
		if tr.Key == ran && tr.From == scheduler.Processing || tr.Key == ran && tr.From == scheduler.Cancelled {
			ev.Worker, ev.Start, ev.Duration = s.name, start, dur
			if tr.To == scheduler.Memory {
				ev.Bytes = size
			}
		}
		if tr.To == scheduler.Erred {
			if ti, ok := e.state.Task(tr.Key); ok {
				ev.Err, ev.Op = ti.Error, ti.Op
			}
		}
		if tr.To == scheduler.Forgotten && e.owner != nil {
			delete(e.owner, tr.Key)
		}
		e.evbuf = append(e.evbuf, ev)
	}
	e.hub.Publish(e.evbuf...)
}

// InProcess reports that tasks run in this process: collections may hand
// them Go values (in-memory partitions) directly instead of encoding them.
func (e *Executor) InProcess() bool { return true }
