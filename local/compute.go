package local

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/diagnostics/alert"
	"github.com/shoal-data/shoal/diagnostics/dashboard"
	"github.com/shoal-data/shoal/diagnostics/otelshoal"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/scheduler"
)

// computation is one Compute or Submit call: a client of the scheduler.
type computation struct {
	e        *Executor
	id       uint64
	name     string // id, for logs and profiles, once asked for
	trace    string // the caller's trace context (otelshoal.Traceparent)
	client   string
	keys     []graph.Key
	ids      []int32       // per position: the task id once computed, -1 once failed or released
	dups     map[int][]int // first position of a repeated key -> its other positions
	pending  int           // distinct keys not answered yet
	err      error
	done     chan struct{}
	finished bool
	futures  []*future // Submit only: one per position
	stop     func() bool
}

// positions returns where the scheduler's report of k at idx belongs.
func (c *computation) position(k graph.Key, idx int) int {
	if idx >= 0 && idx < len(c.keys) && c.keys[idx] == k {
		return idx
	}
	for i, x := range c.keys {
		if x == k {
			return i
		}
	}
	return -1
}

func (c *computation) answer(k graph.Key, idx int, id int32, err error) {
	p := c.position(k, idx)
	if p < 0 || c.ids[p] != 0 {
		return
	}
	ps := append([]int{p}, c.dups[p]...)
	for _, p := range ps {
		c.ids[p] = id
		if c.futures != nil {
			c.futures[p].settle(err)
		}
	}
	c.pending--
	if err != nil && c.err == nil {
		c.err = err
	}
	if c.pending == 0 || (err != nil && c.futures == nil) {
		c.finish(c.err)
	}
}

func (c *computation) result(k graph.Key, idx int, id int32) { c.answer(k, idx, id, nil) }

func (c *computation) error(k graph.Key, idx int, err error) { c.answer(k, idx, -1, err) }

// unanswered returns the keys not computed yet.
func (c *computation) unanswered() []graph.Key {
	var out []graph.Key
	seen := map[graph.Key]bool{}
	for i, k := range c.keys {
		if c.ids[i] == 0 && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

func (c *computation) finish(err error) {
	if c.finished {
		return
	}
	c.finished = true
	if c.err == nil {
		c.err = err
	}
	c.e.alerts.comps = append(c.e.alerts.comps, c.id)
	if c.e.hub.Active() {
		c.e.publishMetrics()
		ev := diagnostics.Event{Kind: diagnostics.ComputeFinished, Compute: c.id}
		if c.err != nil {
			ev.Err = c.err.Error()
		}
		c.e.hub.Publish(ev)
	}
	for _, f := range c.futures {
		f.settle(err)
	}
	close(c.done)
}

// prepare checks and optimizes a graph for keys.
func (e *Executor) prepare(g *graph.Graph, keys []graph.Key) (*graph.Graph, error) {
	if g == nil {
		g = graph.New()
	}
	for _, k := range keys {
		if !g.Has(k) && !g.IsExternal(k) {
			return nil, fmt.Errorf("compute: key %q is not in the graph", k)
		}
	}
	if err := g.Validate(); err != nil {
		return nil, err
	}
	if e.cfg.optimize {
		return graph.Optimize(g, keys, e.cfg.registry)
	}
	return graph.Cull(g, keys...)
}

// newComputation numbers a new computation of keys. Called with e.mu held.
func (e *Executor) newComputation(kind string, keys []graph.Key) *computation {
	e.nextID++
	return &computation{e: e, id: e.nextID, client: fmt.Sprintf("%s-%d", kind, e.nextID), keys: keys,
		ids: make([]int32, len(keys)), pending: len(keys), done: make(chan struct{})}
}

// start hands a computation's graph to the scheduler. Called with e.mu
// held.
func (e *Executor) start(c *computation, g *graph.Graph, keys []graph.Key) {
	e.clients[c.client] = c
	if e.hub.Active() {
		tasks := make(map[string]int)
		if e.owner == nil {
			e.owner = make(map[graph.Key]uint64)
		}
		for _, t := range g.Tasks() {
			tasks[t.Key.Prefix()]++
			if _, ok := e.owner[t.Key]; !ok {
				e.owner[t.Key] = c.id
			}
		}
		if len(e.reports) > 0 {
			groups, edges := dashboard.GraphGroups(g)
			for _, r := range e.reports {
				r.AddGraph(c.id, groups, edges)
			}
		}
		e.hub.Publish(diagnostics.Event{Kind: diagnostics.ComputeStarted, Compute: c.id, Tasks: tasks,
			Caller: diagnostics.Caller(), Trace: c.trace})
	}
	e.alerts.shuffles = append(e.alerts.shuffles, alert.Shuffles(g, c.id)...)
	now := time.Now()
	e.handle(nil, now, &scheduler.GraphSubmitted{Meta: scheduler.Meta{Time: now, Stimulus: c.client},
		Client: c.client, Graph: g, Keys: keys})
	if distinct := e.state.Wants(c.client); distinct < len(keys) && !c.finished {
		// Some keys are asked for twice: the scheduler answers each once,
		// at its first position.
		first := make(map[graph.Key]int, len(keys))
		c.dups = make(map[int][]int)
		for i, k := range keys {
			if j, ok := first[k]; ok {
				c.dups[j] = append(c.dups[j], i)
				c.pending--
			} else {
				first[k] = i
			}
		}
	}
	if c.pending == 0 {
		c.finish(c.err)
	}
}

// end releases what a computation holds and forgets it. Called with e.mu
// held. An unfinished computation is cancelled and end waits until none of
// its tasks runs any more.
func (e *Executor) end(c *computation, reason error) {
	if _, ok := e.clients[c.client]; !ok {
		return
	}
	if !c.finished {
		c.finish(reason)
	}
	now := time.Now()
	e.stopping = e.stopping[:0]
	e.handle(nil, now, &scheduler.Cancel{Meta: scheduler.Meta{Time: now, Stimulus: c.client + "-end"},
		Client: c.client, Reason: reason})
	// Only the tasks this computation alone wanted were stopped: wait for
	// those, not for the tasks of other computations (a task that calls
	// Compute on this executor among them).
	stopping := slices.Clone(e.stopping)
	e.stopping = e.stopping[:0]
	delete(e.clients, c.client)
	if len(e.clients) == 0 {
		e.owner = nil
	}
	e.waitSlots(stopping)
	// A task that finished before the end may still be writing values
	// to disk, this computation's among them: once written, those
	// released meanwhile are removed. Wait for that, so that nothing of
	// the computation is left on disk when it returns.
	e.waiters++
	for e.store.writing > 0 {
		e.cond.Wait()
	}
	e.waiters--
}

// Compute runs the tasks of g needed for keys and returns their values in
// the order of keys. When a task fails, the rest of the computation is
// cancelled and the error is a *graph.TaskError naming the task that failed
// first. Cancelling ctx stops the work and returns ctx.Err() once no task of
// the computation runs any more.
func (e *Executor) Compute(ctx context.Context, g *graph.Graph, keys ...graph.Key) ([]any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	g, err := e.prepare(g, keys)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, ErrClosed
	}
	c := e.newComputation("compute", keys)
	c.trace = otelshoal.Traceparent(ctx)
	e.start(c, g, keys)
	e.mu.Unlock()

	select {
	case <-c.done:
	case <-ctx.Done():
	}
	e.mu.Lock()
	if !c.finished {
		err := ctx.Err()
		e.end(c, err)
		e.mu.Unlock()
		return nil, err
	}
	if c.err != nil {
		err := c.err
		e.end(c, err)
		e.mu.Unlock()
		return nil, err
	}
	out := make([]any, len(keys))
	var spilled []int
	for i, k := range keys {
		en := e.store.get(c.ids[i], k)
		switch {
		case en == nil:
			e.end(c, nil)
			e.mu.Unlock()
			return nil, fmt.Errorf("compute: value of %q is missing", k)
		case en.state == onDisk:
			spilled = append(spilled, i)
		default:
			out[i] = en.value
		}
	}
	e.mu.Unlock()
	for _, i := range spilled {
		v, err := e.unspill(c.ids[i], keys[i])
		if err != nil {
			e.mu.Lock()
			e.end(c, nil)
			e.mu.Unlock()
			return nil, err
		}
		out[i] = v
	}
	e.mu.Lock()
	e.end(c, nil)
	e.mu.Unlock()
	return out, nil
}

// Submit starts the tasks of g needed for keys and returns one Future per
// key at once. The values stay in the executor until their futures are
// released; other graphs can use them as external keys.
func (e *Executor) Submit(ctx context.Context, g *graph.Graph, keys ...graph.Key) ([]graph.Future, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	g, err := e.prepare(g, keys)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	c := e.newComputation("submit", keys)
	c.trace = otelshoal.Traceparent(ctx)
	c.futures = make([]*future, len(keys))
	out := make([]graph.Future, len(keys))
	for i, k := range keys {
		f := &future{e: e, c: c, pos: i, key: k, done: make(chan struct{})}
		c.futures[i] = f
		out[i] = f
	}
	e.start(c, g, keys)
	c.stop = context.AfterFunc(ctx, func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if !c.finished {
			now := time.Now()
			e.handle(nil, now, &scheduler.Cancel{Meta: scheduler.Meta{Time: now}, Client: c.client,
				Keys: c.unanswered(), Reason: ctx.Err()})
			c.finish(ctx.Err())
		}
	})
	return out, nil
}

// future is a value computed, or being computed, by the executor.
type future struct {
	e        *Executor
	c        *computation
	pos      int
	key      graph.Key
	done     chan struct{}
	once     sync.Once
	err      error
	released bool
}

func (f *future) settle(err error) {
	f.once.Do(func() {
		f.err = err
		close(f.done)
	})
}

func (f *future) Key() graph.Key        { return f.key }
func (f *future) Done() <-chan struct{} { return f.done }
func (f *future) String() string        { return fmt.Sprintf("future(%s)", f.key) }

func (f *future) Result(ctx context.Context) (any, error) {
	select {
	case <-f.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	e := f.e
	e.mu.Lock()
	if f.released {
		e.mu.Unlock()
		return nil, fmt.Errorf("future %q was released", f.key)
	}
	if f.err != nil {
		e.mu.Unlock()
		return nil, f.err
	}
	en := e.store.get(f.c.ids[f.pos], f.key)
	if en == nil {
		e.mu.Unlock()
		return nil, fmt.Errorf("value of %q is no longer held", f.key)
	}
	if en.state != onDisk {
		v := en.value
		e.mu.Unlock()
		return v, nil
	}
	e.mu.Unlock()
	return e.unspill(f.c.ids[f.pos], f.key)
}

func (f *future) Release() {
	e := f.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if f.released {
		return
	}
	f.released = true
	c := f.c
	// The value stays while another future of the same computation holds
	// the same key.
	first := c.position(f.key, -1)
	ps := append([]int{first}, c.dups[first]...)
	for _, p := range ps {
		if !c.futures[p].released {
			return
		}
	}
	if c.ids[first] == 0 {
		c.pending--
	}
	for _, p := range ps {
		c.ids[p] = -1
	}
	now := time.Now()
	e.handle(nil, now, &scheduler.KeysReleased{Meta: scheduler.Meta{Time: now}, Client: c.client,
		Keys: []graph.Key{f.key}})
	f.settle(fmt.Errorf("future %q was released", f.key))
	for _, g := range c.futures {
		if !g.released {
			return
		}
	}
	// Every future is released: the computation is over.
	if c.stop != nil {
		c.stop()
	}
	if !c.finished {
		c.finish(nil)
	}
	delete(e.clients, c.client)
}

var _ graph.Executor = (*Executor)(nil)
