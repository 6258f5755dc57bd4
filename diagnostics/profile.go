package diagnostics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/pprof/profile"
)

// The labels of a task's samples in a CPU profile, set around each task
// (goroutines the task starts inherit them): select with them in go tool
// pprof, as in -tagfocus prefix=read-csv.
const (
	LabelPrefix      = "prefix"      // the task's key prefix, such as "read-csv"
	LabelKey         = "key"         // the task's key
	LabelComputation = "computation" // the computation that asked for it
	LabelWorker      = "worker"      // the worker that ran it
)

// labelOwner tells apart the samples of profilers sharing a process: each
// keeps those of its own tasks. It is removed before anyone sees a
// profile.
const labelOwner = "shoal-profiler"

// DefaultProfileWindow is how long a Profiler samples before it cuts a
// window, unless told otherwise.
const DefaultProfileWindow = 5 * time.Second

// ProfileWindow is a CPU profile of a stretch of time on one worker.
type ProfileWindow struct {
	Worker  string
	Start   time.Time
	Stop    time.Time
	Profile *profile.Profile
	size    int64 // estimated bytes held, once known
}

// Size estimates the memory the window's profile holds, in bytes.
func (w *ProfileWindow) Size() int64 {
	if w.size == 0 {
		w.size = profileSize(w.Profile)
	}
	return w.size
}

// ProfilerOptions configure a Profiler.
type ProfilerOptions struct {
	// Window is how long a window of samples lasts (default
	// DefaultProfileWindow). Profilers of one process share its sampler,
	// which cuts windows at the shortest Window among them.
	Window time.Duration
	// Worker names the worker whose tasks the profiler samples: it is the
	// LabelWorker of their samples and the Worker of its windows.
	Worker string
	// OnWindow receives each window, from the sampler's goroutine; it must
	// not block for long, nor call the Profiler's methods. A window holds
	// the samples of the profiler's own tasks (Do) and, for the first
	// profiler of the process to start, those of no task (the garbage
	// collector, the network, the runtime). Windows without samples are
	// not delivered.
	OnWindow func(*ProfileWindow)
	// Logger says when the process's CPU profile is in use elsewhere (then
	// the profiler waits for it to be free); default nowhere.
	Logger *slog.Logger
}

// Profiler samples the CPU of the tasks of one worker (or in-process
// executor), continuously, with the Go runtime's profiler at 100 Hz: the
// samples of each task carry its labels (Do), so that time spent in
// Arrow kernels, Parquet decoding or the user's functions is attributed to
// the task that caused it. Samples are cut into windows handed to
// ProfilerOptions.OnWindow.
//
// A process has one CPU profile: while any Profiler runs,
// runtime/pprof.StartCPUProfile fails elsewhere in the process (go test
// -cpuprofile, net/http/pprof's /debug/pprof/profile). Stop the
// profilers, or do not start them, to take CPU profiles of your own; a
// profiler that finds the profile in use waits until it is free, saying
// so once in its log.
type Profiler struct {
	opts  ProfilerOptions
	owner string
	tags  pprof.LabelSet // the owner's and worker's labels, for Do

	stopOnce sync.Once
}

// StartProfiler starts sampling, sharing the process's sampler with the
// other Profilers running.
func StartProfiler(opts ProfilerOptions) *Profiler {
	if opts.Window <= 0 {
		opts.Window = DefaultProfileWindow
	}
	if opts.Logger == nil {
		opts.Logger = DiscardLogger()
	}
	p := &Profiler{opts: opts, owner: strconv.FormatUint(profilerIDs.Add(1), 10)}
	sampler.add(p)
	return p
}

var profilerIDs atomic.Uint64

// Worker returns the worker the profiler samples.
func (p *Profiler) Worker() string { return p.opts.Worker }

// Do runs f with the pprof labels of a task: its prefix, key and
// computation, the profiler's worker. A nil Profiler runs f unlabelled.
func (p *Profiler) Do(ctx context.Context, key, prefix, computation string, f func(context.Context)) {
	lctx := p.Begin(ctx, key, prefix, computation)
	defer p.End(ctx)
	f(lctx)
}

// Begin sets the pprof labels of a task on the calling goroutine (as Do
// does) and returns ctx with them, for the task; End(ctx) sets ctx's
// labels back. A nil Profiler returns ctx and sets nothing.
func (p *Profiler) Begin(ctx context.Context, key, prefix, computation string) context.Context {
	if p == nil {
		return ctx
	}
	// In the order of the keys: pprof.Labels sorts them otherwise.
	lctx := pprof.WithLabels(ctx, pprof.Labels(LabelComputation, computation, LabelKey, key, LabelPrefix, prefix,
		labelOwner, p.owner, LabelWorker, p.opts.Worker))
	pprof.SetGoroutineLabels(lctx)
	return lctx
}

// End sets the labels of ctx, the context given to Begin, back on the
// calling goroutine.
func (p *Profiler) End(ctx context.Context) {
	if p != nil {
		pprof.SetGoroutineLabels(ctx)
	}
}

// Flush cuts the current window now and returns once the windows of every
// profiler of the process have been delivered, or ctx is done: what ran
// until the call is then in a window.
func (p *Profiler) Flush(ctx context.Context) error {
	return sampler.flush(ctx)
}

// Stop delivers the last window and stops sampling for this profiler;
// the process's sampler stops with the last profiler. Stop is
// idempotent; a nil Profiler does nothing.
func (p *Profiler) Stop() {
	if p == nil {
		return
	}
	p.stopOnce.Do(func() {
		sampler.flush(context.Background())
		sampler.remove(p)
	})
}

// sampler is the process's CPU profile, shared by its Profilers.
var sampler processSampler

type processSampler struct {
	mu    sync.Mutex
	users []*Profiler // in the order they started: users[0] gets the unlabelled samples
	loop  *samplerLoop
	busy  bool // the CPU profile was in use elsewhere at the last try
}

type samplerLoop struct {
	flush chan chan struct{}
	stop  chan struct{}
	done  chan struct{}
}

func (s *processSampler) add(p *Profiler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users = append(s.users, p)
	if s.loop == nil {
		l := &samplerLoop{flush: make(chan chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
		s.loop = l
		go s.run(l)
	}
}

func (s *processSampler) remove(p *Profiler) {
	s.mu.Lock()
	i := slices.Index(s.users, p)
	if i < 0 {
		s.mu.Unlock()
		return
	}
	s.users = slices.Delete(s.users, i, i+1)
	var l *samplerLoop
	if len(s.users) == 0 {
		l, s.loop = s.loop, nil
	}
	s.mu.Unlock()
	if l != nil {
		close(l.stop)
		<-l.done
	}
}

func (s *processSampler) flush(ctx context.Context) error {
	s.mu.Lock()
	l := s.loop
	s.mu.Unlock()
	if l == nil {
		return nil
	}
	ch := make(chan struct{})
	select {
	case l.flush <- ch:
	case <-l.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// window returns the shortest window of the users.
func (s *processSampler) window() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := DefaultProfileWindow
	for i, u := range s.users {
		if i == 0 || u.opts.Window < w {
			w = u.opts.Window
		}
	}
	return w
}

func (s *processSampler) run(l *samplerLoop) {
	defer close(l.done)
	var buf bytes.Buffer
	for {
		buf.Reset()
		start := time.Now()
		err := pprof.StartCPUProfile(&buf)
		s.noteBusy(err)
		timer := time.NewTimer(s.window())
		var waiters []chan struct{}
		stopping := false
		select {
		case <-timer.C:
		case ch := <-l.flush:
			waiters = append(waiters, ch)
		case <-l.stop:
			stopping = true
		}
		timer.Stop()
		if err == nil {
			pprof.StopCPUProfile()
			stop := time.Now()
			if p, perr := profile.Parse(&buf); perr == nil {
				s.dispatch(p, start, stop)
			} else {
				s.logWarn("the CPU profile of a window could not be read; its samples are lost", "error", perr)
			}
		}
		// Flushes asked for while the window was being cut are answered
		// by it too.
		for more := true; more; {
			select {
			case ch := <-l.flush:
				waiters = append(waiters, ch)
			default:
				more = false
			}
		}
		for _, ch := range waiters {
			close(ch)
		}
		if stopping {
			return
		}
	}
}

// noteBusy logs, once per change, that the CPU profile is in use
// elsewhere or free again.
func (s *processSampler) noteBusy(err error) {
	s.mu.Lock()
	was := s.busy
	s.busy = err != nil
	s.mu.Unlock()
	switch {
	case err != nil && !was:
		s.logWarn("the process's CPU profile is in use elsewhere (runtime/pprof.StartCPUProfile): no CPU samples until it is free", "error", err)
	case err == nil && was:
		s.logInfo("the process's CPU profile is free again: CPU samples resume")
	}
}

func (s *processSampler) logWarn(msg string, args ...any) {
	s.mu.Lock()
	users := slices.Clone(s.users)
	s.mu.Unlock()
	for _, u := range users {
		u.opts.Logger.Warn(msg, append(args, "worker", u.opts.Worker)...)
	}
}

func (s *processSampler) logInfo(msg string) {
	s.mu.Lock()
	users := slices.Clone(s.users)
	s.mu.Unlock()
	for _, u := range users {
		u.opts.Logger.Info(msg, "worker", u.opts.Worker)
	}
}

// dispatch hands each user the samples of its own tasks.
func (s *processSampler) dispatch(p *profile.Profile, start, stop time.Time) {
	s.mu.Lock()
	users := slices.Clone(s.users)
	s.mu.Unlock()
	for i, u := range users {
		if u.opts.OnWindow == nil {
			continue
		}
		mine := p
		if len(users) > 1 {
			mine = p.Copy()
		}
		owner, first := u.owner, i == 0
		mine.FilterSamplesByTag(func(sm *profile.Sample) bool {
			o, ok := sm.Label[labelOwner]
			if !ok {
				return first
			}
			return len(o) == 1 && o[0] == owner
		}, nil)
		if len(mine.Sample) == 0 {
			continue
		}
		mine.RemoveLabel(labelOwner)
		for _, sm := range mine.Sample {
			if _, ok := sm.Label[LabelWorker]; !ok && u.opts.Worker != "" {
				if sm.Label == nil {
					sm.Label = map[string][]string{}
				}
				sm.Label[LabelWorker] = []string{u.opts.Worker}
			}
		}
		mine = mine.Compact()
		mine.TimeNanos, mine.DurationNanos = start.UnixNano(), stop.Sub(start).Nanoseconds()
		u.opts.OnWindow(&ProfileWindow{Worker: u.opts.Worker, Start: start, Stop: stop, Profile: mine})
	}
}

// ProfileOptions select the samples of a profile: those of windows that
// overlap [Start, Stop] (a zero time leaves that side open), of tasks of
// the given prefixes and of the given workers (empty: all). Samples of no
// task belong to no prefix: asking for prefixes leaves them out.
type ProfileOptions struct {
	Start, Stop time.Time
	Prefixes    []string
	Workers     []string
}

// ProfileSource is implemented by executors that profile their tasks:
// the in-process executor and the client of a cluster. Profile returns
// one CPU profile of the windows and samples opts selects, merged with
// github.com/google/pprof/profile; write it with its Write method for
// go tool pprof.
type ProfileSource interface {
	Profile(ctx context.Context, opts ProfileOptions) (*profile.Profile, error)
}

// ErrNoProfile is returned when a profile is asked of an executor that
// does not profile (it was told not to).
var ErrNoProfile = errors.New("profiling is off")

// ProfileStore keeps the CPU profile windows of one or many workers,
// within a bound on the memory they take: windows older than a minute
// are merged into one a minute per worker, older than a quarter of an
// hour into one per five minutes, and the oldest are dropped beyond the
// bound. It is safe for concurrent use.
type ProfileStore struct {
	max int64

	mu      sync.Mutex
	windows map[string][]*ProfileWindow // by worker, oldest first
	bytes   int64
	dropped time.Time // the stop of the newest window dropped
}

// DefaultProfileStoreBytes bounds a ProfileStore unless told otherwise.
const DefaultProfileStoreBytes = 64 << 20

// NewProfileStore returns a store of at most maxBytes of profiles
// (estimated; DefaultProfileStoreBytes when maxBytes <= 0).
func NewProfileStore(maxBytes int64) *ProfileStore {
	if maxBytes <= 0 {
		maxBytes = DefaultProfileStoreBytes
	}
	return &ProfileStore{max: maxBytes, windows: map[string][]*ProfileWindow{}}
}

// Add keeps a window. Its profile must not be modified afterwards.
func (s *ProfileStore) Add(w *ProfileWindow) {
	if w == nil || w.Profile == nil {
		return
	}
	size := w.Size()
	s.mu.Lock()
	defer s.mu.Unlock()
	ws := append(s.windows[w.Worker], w)
	// Windows arrive in order of time from each worker; keep them so.
	for i := len(ws) - 1; i > 0 && ws[i].Start.Before(ws[i-1].Start); i-- {
		ws[i], ws[i-1] = ws[i-1], ws[i]
	}
	s.windows[w.Worker] = ws
	s.bytes += size
	s.compact(w.Worker, w.Stop)
	for s.bytes > s.max && s.dropOldest() {
	}
}

// The ages beyond which windows are merged, and the spans they are merged
// into.
var compactions = []struct{ age, span time.Duration }{
	{15 * time.Minute, 5 * time.Minute},
	{time.Minute, time.Minute},
}

// compact merges the old windows of a worker. Called with s.mu held.
func (s *ProfileStore) compact(worker string, now time.Time) {
	ws := s.windows[worker]
	out := ws[:0:0]
	for i := 0; i < len(ws); {
		span := compactSpan(now, ws[i])
		j := i + 1
		if span > 0 {
			slot := ws[i].Start.Truncate(span)
			for j < len(ws) && compactSpan(now, ws[j]) == span && ws[j].Start.Truncate(span).Equal(slot) {
				j++
			}
		}
		if j-i == 1 {
			out = append(out, ws[i])
			i = j
			continue
		}
		merged, err := mergeWindows(ws[i:j])
		if err != nil {
			out = append(out, ws[i:j]...)
		} else {
			for _, x := range ws[i:j] {
				s.bytes -= x.Size()
			}
			s.bytes += merged.Size()
			out = append(out, merged)
		}
		i = j
	}
	s.windows[worker] = out
}

// compactSpan returns the span a window of that age is merged into, or 0.
func compactSpan(now time.Time, w *ProfileWindow) time.Duration {
	for _, c := range compactions {
		if now.Sub(w.Stop) > c.age {
			return c.span
		}
	}
	return 0
}

func mergeWindows(ws []*ProfileWindow) (*ProfileWindow, error) {
	ps := make([]*profile.Profile, len(ws))
	for i, w := range ws {
		ps[i] = w.Profile
	}
	p, err := profile.Merge(ps)
	if err != nil {
		return nil, err
	}
	start, stop := ws[0].Start, ws[len(ws)-1].Stop
	p.TimeNanos, p.DurationNanos = start.UnixNano(), stop.Sub(start).Nanoseconds()
	return &ProfileWindow{Worker: ws[0].Worker, Start: start, Stop: stop, Profile: p}, nil
}

// dropOldest forgets the oldest window of all. Called with s.mu held.
func (s *ProfileStore) dropOldest() bool {
	var oldest string
	found := false
	for w, ws := range s.windows {
		if len(ws) > 0 && (!found || ws[0].Start.Before(s.windows[oldest][0].Start)) {
			oldest, found = w, true
		}
	}
	if !found {
		return false
	}
	ws := s.windows[oldest]
	s.bytes -= ws[0].Size()
	if ws[0].Stop.After(s.dropped) {
		s.dropped = ws[0].Stop
	}
	ws[0] = nil
	if len(ws) == 1 {
		delete(s.windows, oldest)
	} else {
		s.windows[oldest] = ws[1:]
	}
	return true
}

// Bytes returns the estimated memory the windows kept take.
func (s *ProfileStore) Bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
}

// Dropped returns the end of the newest window forgotten to stay within
// the bound: profiles of earlier times are incomplete. Zero: none.
func (s *ProfileStore) Dropped() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// selected returns the windows opts selects. Called with s.mu held.
func (s *ProfileStore) selected(opts ProfileOptions) []*ProfileWindow {
	var out []*ProfileWindow
	for worker, ws := range s.windows {
		if len(opts.Workers) > 0 && !slices.Contains(opts.Workers, worker) {
			continue
		}
		for _, w := range ws {
			if !opts.Start.IsZero() && w.Stop.Before(opts.Start) || !opts.Stop.IsZero() && w.Start.After(opts.Stop) {
				continue
			}
			out = append(out, w)
		}
	}
	slices.SortFunc(out, func(a, b *ProfileWindow) int { return a.Start.Compare(b.Start) })
	return out
}

// Profile merges the windows and samples opts selects into one profile,
// spanning the windows' times. With nothing selected it returns an empty
// CPU profile (no samples), which go tool pprof opens too.
func (s *ProfileStore) Profile(opts ProfileOptions) (*profile.Profile, error) {
	s.mu.Lock()
	ws := s.selected(opts)
	s.mu.Unlock()
	return MergeProfiles(ws, opts)
}

// Labels returns the prefixes and workers of the samples kept, sorted.
func (s *ProfileStore) Labels() (prefixes, workers []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	for worker, ws := range s.windows {
		workers = append(workers, worker)
		for _, w := range ws {
			for _, sm := range w.Profile.Sample {
				for _, p := range sm.Label[LabelPrefix] {
					if !seen[p] {
						seen[p] = true
						prefixes = append(prefixes, p)
					}
				}
			}
		}
	}
	slices.Sort(prefixes)
	slices.Sort(workers)
	return prefixes, workers
}

// MergeProfiles merges windows into one profile, keeping the samples of
// opts.Prefixes (all when empty); opts' times and workers are not looked
// at (select the windows first). The result spans the windows' times.
func MergeProfiles(ws []*ProfileWindow, opts ProfileOptions) (*profile.Profile, error) {
	if len(ws) == 0 {
		return emptyCPUProfile(opts.Start, opts.Stop), nil
	}
	ps := make([]*profile.Profile, len(ws))
	start, stop := ws[0].Start, ws[0].Stop
	for i, w := range ws {
		ps[i] = w.Profile
		if w.Start.Before(start) {
			start = w.Start
		}
		if w.Stop.After(stop) {
			stop = w.Stop
		}
	}
	p, err := profile.Merge(ps)
	if err != nil {
		return nil, fmt.Errorf("merge %d profile windows: %w", len(ws), err)
	}
	if len(opts.Prefixes) > 0 {
		p.FilterSamplesByTag(func(sm *profile.Sample) bool {
			for _, v := range sm.Label[LabelPrefix] {
				if slices.Contains(opts.Prefixes, v) {
					return true
				}
			}
			return false
		}, nil)
		p = p.Compact()
	}
	p.TimeNanos, p.DurationNanos = start.UnixNano(), stop.Sub(start).Nanoseconds()
	return p, nil
}

// emptyCPUProfile is a CPU profile without samples.
func emptyCPUProfile(start, stop time.Time) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     int64(10 * time.Millisecond),
	}
	if !start.IsZero() {
		p.TimeNanos = start.UnixNano()
		if !stop.IsZero() {
			p.DurationNanos = stop.Sub(start).Nanoseconds()
		}
	}
	return p
}

// cpuIndex returns the index of the CPU time among p's sample values: the
// "cpu" type, else the last.
func cpuIndex(p *profile.Profile) int {
	for i, st := range p.SampleType {
		if st.Type == "cpu" {
			return i
		}
	}
	return len(p.SampleType) - 1
}

// CPUByPrefix returns the CPU seconds of p's samples per task prefix
// (LabelPrefix); samples of no task are left out.
func CPUByPrefix(p *profile.Profile) map[string]float64 {
	out := map[string]float64{}
	if p == nil || len(p.SampleType) == 0 {
		return out
	}
	i := cpuIndex(p)
	scale := 1.0
	if p.SampleType[i].Unit == "nanoseconds" {
		scale = 1e-9
	}
	for _, sm := range p.Sample {
		pre := sm.Label[LabelPrefix]
		if len(pre) == 0 || i >= len(sm.Value) {
			continue
		}
		out[pre[0]] += float64(sm.Value[i]) * scale
	}
	return out
}

// profileSize estimates the bytes a parsed profile holds.
func profileSize(p *profile.Profile) int64 {
	if p == nil {
		return 0
	}
	n := int64(256)
	for _, sm := range p.Sample {
		n += 64 + 8*int64(len(sm.Location)+len(sm.Value))
		for k, vs := range sm.Label {
			n += 48 + int64(len(k))
			for _, v := range vs {
				n += 16 + int64(len(v))
			}
		}
	}
	for _, l := range p.Location {
		n += 96 + 48*int64(len(l.Line))
	}
	for _, f := range p.Function {
		n += 96 + int64(len(f.Name)+len(f.SystemName)+len(f.Filename))
	}
	n += 128 * int64(len(p.Mapping))
	return n
}
