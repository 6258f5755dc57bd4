package distributed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/diagnostics/otelshoal"
	"github.com/shoal-data/shoal/distributed/internal/conns"
	"github.com/shoal-data/shoal/distributed/internal/flightdata"
	"github.com/shoal-data/shoal/distributed/security"
	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/graph"
)

// ErrClientClosed is the error of calls on a closed Client, and of the
// futures it had not answered.
var ErrClientClosed = errors.New("distributed client is closed")

// ErrSchedulerLost matches the error of every call and future a Client
// had not answered when its connection to the scheduler broke (the
// scheduler died, was restarted, or the network failed): the error also
// wraps what the connection gave. The Client stays failed; connect a new
// one, to the restarted scheduler.
var ErrSchedulerLost = errors.New("lost the scheduler")

// ErrRefused matches the error of a Connect that the scheduler refused.
var ErrRefused = errors.New("refused by the scheduler")

// RefusedError says why the scheduler refused a client or a worker:
// typically that their registries of ops differ, one line per name.
type RefusedError struct {
	Reason      string
	Differences []string
}

func (e *RefusedError) Error() string {
	msg := "refused by the scheduler: " + e.Reason
	for _, d := range e.Differences {
		msg += "\n  " + d
	}
	return msg
}

// Is makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// Client is a connection to a cluster's scheduler. It implements
// graph.Executor, so that DataFrames, arrays and Delayed values compute on
// the cluster exactly as on the in-process executor:
//
//	client, err := distributed.Connect(ctx, "127.0.0.1:8786")
//	...
//	table, err := df.Compute(ctx, client)
//
// Besides, it submits registered functions directly (SubmitCall, Map) and
// returns futures for values that stay on the workers until released
// (Gather, Wait, AsCompleted, Cancel). A Client is safe for concurrent use.
type Client struct {
	cfg         clientConfig
	logger      *slog.Logger
	addr        string
	conn        *grpc.ClientConn
	peers       *conns.Pool
	hub         *diagnostics.Hub
	id          string
	schedulerID string
	cancel      context.CancelFunc
	wg          sync.WaitGroup
	notify      chan struct{}

	mu        sync.Mutex
	comps     map[string]*computation
	moved     chan struct{} // closed when a computed value has new holders
	ncomp     uint64
	outSubmit []*wire.Submit
	outRel    []*wire.Release
	outCancel []*wire.Cancel
	closed    bool
	err       error // why the connection ended
	info      *Info
}

// Connect connects to the scheduler at addr (host:port). It needs
// WithSecurity: mutual TLS with the cluster's certificates (those of
// `shoal scheduler --tls-*`, or LocalCluster.Security()), or plaintext
// asked for with security.Config{Insecure: true}; or
// WithTransportCredentials. Without either it fails with
// security.ErrPlaintext, on loopback too. It fails
// with a *RefusedError when the scheduler's workers registered other ops than
// this program: workers must run the same program (see ServeIfWorker), or
// one that registers the same ops.
func Connect(ctx context.Context, addr string, opts ...ClientOption) (*Client, error) {
	cfg := defaultClientConfig()
	for _, o := range opts {
		o(&cfg)
	}
	logger := cfg.logger
	if logger == nil {
		logger = diagnostics.DiscardLogger()
	}
	var dial []grpc.DialOption
	switch {
	case cfg.security != nil:
		sec, err := cfg.security.DialOptions()
		if err != nil {
			return nil, fmt.Errorf("connect to scheduler %s: %w", addr, err)
		}
		dial = sec
	case cfg.creds != nil:
		dial = append(dial, grpc.WithTransportCredentials(cfg.creds))
	default:
		return nil, fmt.Errorf("connect to scheduler %s: no security given: use WithSecurity with the cluster's "+
			"certificates (security.Config{CAFile, CertFile, KeyFile}; LocalCluster.Security() for a local "+
			"cluster, whose Client method does it), or WithSecurity(security.Config{Insecure: true}) for a "+
			"plaintext scheduler: %w", addr, security.ErrPlaintext)
	}
	dial = append(dial, cfg.dial...)
	conn, err := grpc.NewClient(addr, append([]grpc.DialOption{grpc.WithDefaultCallOptions(
		grpc.MaxCallRecvMsgSize(flightdata.MaxMessageBytes), grpc.MaxCallSendMsgSize(flightdata.MaxMessageBytes))},
		dial...)...)
	if err != nil {
		return nil, fmt.Errorf("connect to scheduler %s: %w", addr, err)
	}
	sctx, cancel := context.WithCancel(context.Background())
	c := &Client{cfg: cfg, logger: logger.With("scheduler", addr), addr: addr, conn: conn, peers: conns.New(append(flightdata.DialOptions(), dial...)...),
		cancel: cancel, notify: make(chan struct{}, 1), comps: map[string]*computation{}}
	if cfg.events {
		c.hub = diagnostics.NewHub()
	}
	fail := func(err error) (*Client, error) {
		cancel()
		conn.Close()
		c.peers.Close()
		if c.hub != nil {
			c.hub.Close()
		}
		return nil, err
	}
	stream, err := wire.NewSchedulerClient(conn).ClientStream(sctx)
	if err != nil {
		if hint := security.Describe(err); hint != "" {
			return fail(fmt.Errorf("connect to scheduler %s: %s: %w", addr, hint, err))
		}
		return fail(fmt.Errorf("connect to scheduler %s: %w", addr, err))
	}
	reg := cfg.registry
	err = stream.Send(&wire.ClientUp{Msg: &wire.ClientUp_Register{Register: &wire.RegisterClient{Name: cfg.name,
		Registry: &wire.Registry{Fingerprint: reg.Fingerprint(), Signatures: reg.Signatures()}, Events: cfg.events}}})
	if errors.Is(err, io.EOF) {
		_, err = stream.Recv() // the stream ended: its status says why
	}
	if err != nil {
		if hint := security.Describe(err); hint != "" {
			return fail(fmt.Errorf("connect to scheduler %s: %s: %w", addr, hint, err))
		}
		return fail(fmt.Errorf("connect to scheduler %s: %w", addr, err))
	}
	type recv struct {
		m   *wire.ClientDown
		err error
	}
	first := make(chan recv, 1)
	go func() {
		m, err := stream.Recv()
		first <- recv{m, err}
	}()
	var r recv
	select {
	case r = <-first:
	case <-ctx.Done():
		cancel()
		<-first
		return fail(fmt.Errorf("connect to scheduler %s: %w", addr, ctx.Err()))
	}
	if r.err != nil {
		if hint := security.Describe(r.err); hint != "" {
			return fail(fmt.Errorf("connect to scheduler %s: %s: %w", addr, hint, r.err))
		}
		return fail(fmt.Errorf("connect to scheduler %s: %w", addr, r.err))
	}
	switch m := r.m.Msg.(type) {
	case *wire.ClientDown_Refused:
		return fail(&RefusedError{Reason: m.Refused.Reason, Differences: m.Refused.Differences})
	case *wire.ClientDown_Welcome:
		c.id, c.schedulerID = m.Welcome.Name, m.Welcome.SchedulerId
	default:
		return fail(fmt.Errorf("connect to scheduler %s: unexpected first message %T", addr, r.m.Msg))
	}
	c.logger = c.logger.With("client", c.id)
	c.wg.Add(2)
	go c.recvLoop(stream)
	go c.sendLoop(sctx, stream)
	if _, err := c.Info(ctx); err != nil {
		c.Close()
		return nil, err
	}
	c.logger.Info("connected")
	return c, nil
}

// LocalDir returns the scratch directory the cluster's workers share, when
// the client knows one (a client of a LocalCluster does), or "". Ops such
// as shuffles write files there; dataframe removes a computation's shuffle
// files from it when the computation ends.
func (c *Client) LocalDir() string { return c.cfg.scratch }

// ID returns the name the scheduler gave the client.
func (c *Client) ID() string { return c.id }

// Scheduler returns the scheduler's address.
func (c *Client) Scheduler() string { return c.addr }

// Events returns the hub of the scheduler's diagnostics events, or nil
// unless the client was made WithEvents.
func (c *Client) Events() *diagnostics.Hub { return c.hub }

// Close disconnects from the scheduler, which releases everything the
// client holds and cancels what it computes. Futures not yet answered fail
// with ErrClientClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	c.fail(ErrClientClosed)
	c.cancel()
	c.wg.Wait()
	c.peers.Close()
	if c.hub != nil {
		c.hub.Close()
	}
	return c.conn.Close()
}

func (c *Client) wake() {
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

// sendLoop sends queued requests in batches.
func (c *Client) sendLoop(ctx context.Context, stream wire.Scheduler_ClientStreamClient) {
	defer c.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.notify:
		}
		c.mu.Lock()
		b := &wire.ClientBatch{Submit: c.outSubmit, Release: c.outRel, Cancel: c.outCancel}
		c.outSubmit, c.outRel, c.outCancel = nil, nil, nil
		c.mu.Unlock()
		if len(b.Submit)+len(b.Release)+len(b.Cancel) == 0 {
			continue
		}
		if err := stream.Send(&wire.ClientUp{Msg: &wire.ClientUp_Batch{Batch: b}}); err != nil {
			c.logger.Warn("lost the scheduler", "error", err)
			c.fail(fmt.Errorf("%w %s: %w", ErrSchedulerLost, c.addr, err))
			return
		}
	}
}

// recvLoop applies the scheduler's reports.
func (c *Client) recvLoop(stream wire.Scheduler_ClientStreamClient) {
	defer c.wg.Done()
	var evbuf []diagnostics.Event
	for {
		m, err := stream.Recv()
		if err != nil {
			c.mu.Lock()
			closed := c.closed
			c.mu.Unlock()
			if !closed {
				c.logger.Warn("lost the scheduler", "error", err)
			}
			c.fail(fmt.Errorf("%w %s: %w", ErrSchedulerLost, c.addr, err))
			return
		}
		b := m.GetBatch()
		if b == nil {
			continue
		}
		c.mu.Lock()
		for _, r := range b.Results {
			if comp := c.comps[r.Computation]; comp != nil {
				comp.result(graph.Key(r.Key), r.Workers, r.Size)
			}
		}
		for _, e := range b.Errors {
			if comp := c.comps[e.Computation]; comp != nil {
				comp.error(graph.Key(e.Key), wire.DecodeError(e.Error))
			}
		}
		c.mu.Unlock()
		if c.hub != nil && len(b.Events) > 0 {
			evbuf = evbuf[:0]
			for _, e := range b.Events {
				evbuf = append(evbuf, decodeEvent(e))
			}
			c.hub.Publish(evbuf...)
		}
	}
}

// fail ends every unanswered future with err.
func (c *Client) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
	}
	for _, comp := range c.comps {
		comp.failAll(c.err)
	}
}

func decodeEvent(e *wire.Event) diagnostics.Event {
	ev := diagnostics.Event{Kind: diagnostics.Kind(e.Kind), Compute: e.Compute, Key: graph.Key(e.Key),
		From: e.From, To: e.To, Worker: e.Worker, Duration: time.Duration(e.DurationNanos), Bytes: e.Bytes,
		Path: e.Path, Err: e.Err, Stimulus: e.Stimulus, Op: e.Op, Caller: e.Caller}
	ev.Prefix = ev.Key.Prefix()
	for _, m := range e.Metrics {
		ev.Metrics = append(ev.Metrics, diagnostics.FineMetric{Worker: m.Worker, Prefix: m.Prefix,
			Activity: m.Activity, Unit: m.Unit, Value: m.Value})
	}
	if e.TimeUnixNano != 0 {
		ev.Time = time.Unix(0, e.TimeUnixNano)
	}
	if e.StartUnixNano != 0 {
		ev.Start = time.Unix(0, e.StartUnixNano)
	}
	if e.Alert != nil {
		a := wire.DecodeAlert(e.Alert)
		ev.Alert = &a
	}
	if len(e.Tasks) > 0 {
		ev.Tasks = make(map[string]int, len(e.Tasks))
		for k, v := range e.Tasks {
			ev.Tasks[k] = int(v)
		}
	}
	return ev
}

// computation is one Compute or Submit: the keys asked for and their
// futures.
type computation struct {
	c        *Client
	name     string
	futures  []*Future
	byKey    map[graph.Key][]*Future
	pending  int // distinct keys not answered yet
	released int // futures released
	failFast bool
	err      error
	done     chan struct{}
	finished bool
}

func (comp *computation) finish() {
	if !comp.finished {
		comp.finished = true
		close(comp.done)
	}
}

// result records that k is held by workers. Called with c.mu held.
func (comp *computation) result(k graph.Key, workers []string, size int64) {
	fs := comp.byKey[k]
	if len(fs) == 0 {
		return
	}
	first := !fs[0].isDone()
	for _, f := range fs {
		f.workers, f.size = workers, size
		if f.isDone() {
			f.signalUpdate()
		} else {
			f.settle(nil)
		}
	}
	if first {
		comp.answered()
	}
}

// error records that k failed. Called with c.mu held.
func (comp *computation) error(k graph.Key, err error) {
	fs := comp.byKey[k]
	if len(fs) == 0 {
		return
	}
	first := !fs[0].isDone()
	for _, f := range fs {
		if f.isDone() {
			f.err = err
			f.signalUpdate()
		} else {
			f.settle(err)
		}
	}
	if comp.err == nil {
		comp.err = err
	}
	if first {
		comp.answered()
	}
	if comp.failFast {
		comp.finish()
	}
}

func (comp *computation) answered() {
	comp.pending--
	if comp.pending == 0 {
		comp.finish()
	}
}

func (comp *computation) failAll(err error) {
	for _, f := range comp.futures {
		if !f.isDone() {
			f.settle(err)
		} else {
			f.signalUpdate()
		}
	}
	if comp.err == nil {
		comp.err = err
	}
	comp.finish()
}

// prepare checks and optimizes a graph for keys.
func (c *Client) prepare(g *graph.Graph, keys []graph.Key) (*graph.Graph, error) {
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
	if c.cfg.optimize {
		return graph.Optimize(g, keys, c.cfg.registry)
	}
	return graph.Cull(g, keys...)
}

// submit sends a graph and returns the computation that waits for it.
// The trace context of ctx goes with it, for the computation's span.
func (c *Client) submit(ctx context.Context, g *graph.Graph, keys []graph.Key, failFast bool) (*computation, error) {
	b, err := graph.Encode(g)
	if err != nil {
		return nil, err
	}
	caller := diagnostics.Caller()
	ks := make([]string, len(keys))
	for i, k := range keys {
		ks[i] = string(k)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClientClosed
	}
	if c.err != nil {
		return nil, c.err
	}
	c.ncomp++
	comp := &computation{c: c, name: strconv.FormatUint(c.ncomp, 10), byKey: make(map[graph.Key][]*Future, len(keys)),
		futures: make([]*Future, len(keys)), failFast: failFast, done: make(chan struct{})}
	for i, k := range keys {
		f := &Future{c: c, comp: comp, key: k, done: make(chan struct{})}
		comp.futures[i] = f
		if len(comp.byKey[k]) == 0 {
			comp.pending++
		}
		comp.byKey[k] = append(comp.byKey[k], f)
	}
	c.comps[comp.name] = comp
	if comp.pending == 0 {
		comp.finish()
	}
	c.outSubmit = append(c.outSubmit, &wire.Submit{Computation: comp.name, Graph: b, Keys: ks, Caller: caller,
		OtelTraceparent: otelshoal.Traceparent(ctx)})
	c.wake()
	return comp, nil
}

// end releases a computation on the scheduler. Called with c.mu held.
func (c *Client) end(comp *computation, cancel error) {
	if _, ok := c.comps[comp.name]; !ok {
		return
	}
	delete(c.comps, comp.name)
	if cancel != nil {
		c.outCancel = append(c.outCancel, &wire.Cancel{Computation: comp.name, Reason: cancel.Error()})
	}
	c.outRel = append(c.outRel, &wire.Release{Computation: comp.name})
	comp.failAll(fmt.Errorf("released"))
	c.wake()
}

// Compute runs the tasks of g needed for keys on the cluster and returns
// their values, gathered from the workers, in the order of keys. When a
// task fails, the rest is cancelled and the error is a *graph.TaskError
// naming the task that failed first and the worker it ran on. Cancelling
// ctx cancels the computation and returns ctx.Err().
func (c *Client) Compute(ctx context.Context, g *graph.Graph, keys ...graph.Key) ([]any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	g, err := c.prepare(g, keys)
	if err != nil {
		return nil, err
	}
	comp, err := c.submit(ctx, g, keys, true)
	if err != nil {
		return nil, err
	}
	select {
	case <-comp.done:
	case <-ctx.Done():
		c.mu.Lock()
		c.end(comp, ctx.Err())
		c.mu.Unlock()
		return nil, ctx.Err()
	}
	c.mu.Lock()
	err = comp.err
	if err != nil {
		c.end(comp, err)
		c.mu.Unlock()
		return nil, err
	}
	c.mu.Unlock()
	vals, err := c.gather(ctx, comp.futures)
	c.mu.Lock()
	c.end(comp, nil)
	c.mu.Unlock()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return vals, nil
}

// Submit starts the tasks of g needed for keys and returns one future per
// key at once. The values stay on the workers until the futures are
// released; later graphs can use them as external keys. Cancelling ctx
// cancels the tasks not finished yet. The futures are *Future values.
func (c *Client) Submit(ctx context.Context, g *graph.Graph, keys ...graph.Key) ([]graph.Future, error) {
	fs, err := c.submitFutures(ctx, g, keys)
	if err != nil {
		return nil, err
	}
	out := make([]graph.Future, len(fs))
	for i, f := range fs {
		out[i] = f
	}
	return out, nil
}

func (c *Client) submitFutures(ctx context.Context, g *graph.Graph, keys []graph.Key) ([]*Future, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	g, err := c.prepare(g, keys)
	if err != nil {
		return nil, err
	}
	comp, err := c.submit(ctx, g, keys, false)
	if err != nil {
		return nil, err
	}
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if _, ok := c.comps[comp.name]; ok && !comp.finished {
				c.outCancel = append(c.outCancel, &wire.Cancel{Computation: comp.name, Reason: ctx.Err().Error()})
				c.wake()
			}
		})
		go func() {
			<-comp.done
			stop()
		}()
	}
	return comp.futures, nil
}

// SubmitCall calls the function registered under fn (see
// graph.RegisterFunc) on args, each a constant, a graph.Delayed or a
// *Future's Delayed, on the cluster, and returns its future.
func (c *Client) SubmitCall(ctx context.Context, fn string, args []any, opts ...TaskOption) (*Future, error) {
	d, err := c.call(fn, args, opts)
	if err != nil {
		return nil, err
	}
	fs, err := c.Persist(ctx, d)
	if err != nil {
		return nil, err
	}
	return fs[0], nil
}

func (c *Client) call(fn string, args []any, opts []TaskOption) (graph.Delayed, error) {
	for i, a := range args {
		if f, ok := a.(*Future); ok {
			args[i] = f.Delayed()
		}
	}
	d := c.cfg.registry.Call(fn, args...)
	if err := d.Err(); err != nil {
		return d, err
	}
	if len(opts) > 0 {
		var a graph.Annotations
		for _, o := range opts {
			o(&a)
		}
		d = d.WithAnnotations(a)
	}
	return d, nil
}

// Map calls the one-argument function registered under fn on each of
// inputs, as one graph submitted in one message, and returns one future
// per input.
func (c *Client) Map(ctx context.Context, fn string, inputs []any, opts ...TaskOption) ([]*Future, error) {
	ds := make([]graph.Delayed, len(inputs))
	for i, in := range inputs {
		d, err := c.call(fn, []any{in}, opts)
		if err != nil {
			return nil, fmt.Errorf("map %s: input %d: %w", fn, i, err)
		}
		ds[i] = d
	}
	return c.Persist(ctx, ds...)
}

// Persist starts computing ds on the cluster and returns their futures; the
// values stay on the workers until the futures are released.
func (c *Client) Persist(ctx context.Context, ds ...graph.Delayed) ([]*Future, error) {
	g, keys, err := graph.Collect(ds...)
	if err != nil {
		return nil, err
	}
	return c.submitFutures(ctx, g, keys)
}

// Gather waits for futures and returns their values, fetched from the
// workers that hold them. The first error of a future is returned.
func (c *Client) Gather(ctx context.Context, fs ...*Future) ([]any, error) {
	if err := c.Wait(ctx, fs...); err != nil {
		return nil, err
	}
	for _, f := range fs {
		if err := f.Err(); err != nil {
			return nil, err
		}
	}
	return c.gather(ctx, fs)
}

// Wait waits until every future is computed or failed, or ctx is done.
func (c *Client) Wait(ctx context.Context, fs ...*Future) error {
	for _, f := range fs {
		select {
		case <-f.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// AsCompleted yields the futures as they are computed or fail, until all
// are or ctx is done.
func (c *Client) AsCompleted(ctx context.Context, fs ...*Future) iter.Seq[*Future] {
	return func(yield func(*Future) bool) {
		ch := make(chan *Future, len(fs))
		c.mu.Lock()
		for _, f := range fs {
			if f.isDone() {
				ch <- f
			} else {
				f.watchers = append(f.watchers, ch)
			}
		}
		c.mu.Unlock()
		for range fs {
			select {
			case f := <-ch:
				if !yield(f) {
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}
}

// Cancel stops computing the futures' values; futures not yet computed
// fail with an error that matches context.Canceled.
func (c *Client) Cancel(fs ...*Future) {
	c.mu.Lock()
	defer c.mu.Unlock()
	byComp := map[*computation][]string{}
	for _, f := range fs {
		if !f.isDone() {
			byComp[f.comp] = append(byComp[f.comp], string(f.key))
		}
	}
	for comp, keys := range byComp {
		if _, ok := c.comps[comp.name]; ok {
			c.outCancel = append(c.outCancel, &wire.Cancel{Computation: comp.name, Keys: keys,
				Reason: "cancelled by the client"})
		}
	}
	c.wake()
}

// gather fetches the values of computed futures from the workers: small
// values many at a time from each worker, large ones one stream each.
func (c *Client) gather(ctx context.Context, fs []*Future) ([]any, error) {
	out := make([]any, len(fs))
	type job struct {
		addr string
		idx  []int
		keys []string
		size int64
	}
	var jobs []*job
	open := map[string]*job{}
	c.mu.Lock()
	for i, f := range fs {
		if f.settled && f.err != nil {
			c.mu.Unlock()
			return nil, f.err
		}
		if len(f.workers) == 0 || f.size >= flightdata.SmallValue {
			jobs = append(jobs, &job{idx: []int{i}})
			continue
		}
		addr := f.workers[0]
		j := open[addr]
		if j == nil || len(j.idx) >= 4096 || j.size >= flightdata.ChunkBytes {
			j = &job{addr: addr}
			open[addr] = j
			jobs = append(jobs, j)
		}
		j.idx = append(j.idx, i)
		j.keys = append(j.keys, string(f.key))
		j.size += f.size
	}
	c.mu.Unlock()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  int
	)
	setErr := func(err error) {
		mu.Lock()
		if first == nil {
			first = err
			cancel()
		}
		mu.Unlock()
	}
	single := func(i int) {
		v, err := c.fetch(ctx, fs[i])
		if err != nil {
			setErr(err)
			return
		}
		out[i] = v
	}
	run := func(j *job) {
		if j.addr == "" {
			single(j.idx[0])
			return
		}
		conn, err := c.peers.Get(j.addr)
		var vals []any
		var missing []int
		moved := new(atomic.Bool)
		if err == nil {
			jfs := make([]*Future, len(j.idx))
			for n, i := range j.idx {
				jfs[n] = fs[i]
			}
			jctx, stop, m := c.untilMoved(ctx, j.addr, jfs...)
			vals, missing, err = flightdata.GetMany(jctx, flight.NewFlightServiceClient(conn), j.keys, c.cfg.registry)
			stop()
			moved = m
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if !flightdata.IsNotHeld(err) && !moved.Load() {
				setErr(fmt.Errorf("gather %d values from worker %s: %w", len(j.keys), j.addr, err))
				return
			}
			for _, i := range j.idx {
				single(i)
			}
			return
		}
		for n, i := range j.idx {
			out[i] = vals[n]
		}
		for _, n := range missing {
			single(j.idx[n])
		}
	}
	worker := func() {
		defer wg.Done()
		for {
			mu.Lock()
			i := next
			next++
			stop := first != nil
			mu.Unlock()
			if i >= len(jobs) || stop {
				return
			}
			run(jobs[i])
		}
	}
	n := min(c.cfg.gather, len(jobs))
	wg.Add(n)
	for range n {
		go worker()
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// fetch gets a future's value from a worker that holds it. When none does
// any more (it died), it waits for the scheduler to compute the value
// again.
func (c *Client) fetch(ctx context.Context, f *Future) (any, error) {
	for {
		c.mu.Lock()
		workers, err, updated := f.workers, f.err, f.updatedChan()
		c.mu.Unlock()
		if err != nil {
			return nil, err
		}
		var errs []error
		for _, addr := range workers {
			conn, err := c.peers.Get(addr)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			gctx, stop, moved := c.untilMoved(ctx, addr, f)
			v, err := flightdata.Get(gctx, flight.NewFlightServiceClient(conn), string(f.key), c.cfg.registry)
			stop()
			if err == nil {
				return v, nil
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if moved.Load() {
				break // computed again elsewhere: fetch it from there
			}
			if !flightdata.IsNotHeld(err) {
				return nil, fmt.Errorf("gather %q from worker %s: %w", f.key, addr, err)
			}
			errs = append(errs, fmt.Errorf("worker %s: %w", addr, err))
		}
		c.logger.Debug("value not held where reported; waiting for it", "key", f.key, "workers", workers,
			"error", errors.Join(errs...))
		select {
		case <-updated:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Future is a value that the cluster computes, or has computed and holds.
// It implements graph.Future.
type Future struct {
	c    *Client
	comp *computation
	key  graph.Key
	done chan struct{}

	// guarded by c.mu
	err      error
	workers  []string
	size     int64
	updated  chan struct{}
	watchers []chan *Future
	released bool
	settled  bool
}

func (f *Future) isDone() bool { return f.settled }

// settle answers the future. Called with c.mu held.
func (f *Future) settle(err error) {
	if f.settled {
		return
	}
	f.settled = true
	f.err = err
	close(f.done)
	for _, w := range f.watchers {
		w <- f
	}
	f.watchers = nil
}

// signalUpdate wakes fetches waiting for new holders, and those fetching
// from the old ones. Called with c.mu held.
func (f *Future) signalUpdate() {
	if f.updated != nil {
		close(f.updated)
		f.updated = nil
	}
	if c := f.c; c != nil && c.moved != nil {
		close(c.moved)
		c.moved = nil
	}
}

// movedChan is closed when a computed value gets new holders. Called with
// c.mu held.
func (c *Client) movedChan() chan struct{} {
	if c.moved == nil {
		c.moved = make(chan struct{})
	}
	return c.moved
}

// untilMoved returns a context that ends with ctx, or when one of fs has
// holders that do not include addr any more (it was computed again
// elsewhere: the worker left, or hangs), and whether it ended so.
func (c *Client) untilMoved(ctx context.Context, addr string, fs ...*Future) (context.Context, context.CancelFunc, *atomic.Bool) {
	mctx, cancel := context.WithCancel(ctx)
	var moved atomic.Bool
	go func() {
		for {
			c.mu.Lock()
			ch := c.movedChan()
			gone := false
			for _, f := range fs {
				if !slices.Contains(f.workers, addr) {
					gone = true
					break
				}
			}
			c.mu.Unlock()
			if gone {
				moved.Store(true)
				cancel()
				return
			}
			select {
			case <-ch:
			case <-mctx.Done():
				return
			}
		}
	}()
	return mctx, cancel, &moved
}

func (f *Future) updatedChan() chan struct{} {
	if f.updated == nil {
		f.updated = make(chan struct{})
	}
	return f.updated
}

// Key names the value.
func (f *Future) Key() graph.Key { return f.key }

// Done is closed when the value is computed or has failed.
func (f *Future) Done() <-chan struct{} { return f.done }

// Err returns the future's error once it is done: nil when it was
// computed.
func (f *Future) Err() error {
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	if !f.settled {
		return nil
	}
	return f.err
}

// Workers returns the addresses of the workers that hold the value.
func (f *Future) Workers() []string {
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	return append([]string(nil), f.workers...)
}

// Size returns the size of the value in bytes, as the worker counted it.
func (f *Future) Size() int64 {
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	return f.size
}

// Delayed returns a graph.Delayed for the future's value, to pass to
// further calls: the value is used where it is, not sent back.
func (f *Future) Delayed() graph.Delayed { return graph.FromKey(f.key) }

// Result waits until the value is computed, then fetches it from a worker
// that holds it.
func (f *Future) Result(ctx context.Context) (any, error) {
	select {
	case <-f.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	f.c.mu.Lock()
	released, err := f.released, f.err
	f.c.mu.Unlock()
	if released {
		return nil, fmt.Errorf("future %q was released", f.key)
	}
	if err != nil {
		return nil, err
	}
	return f.c.fetch(ctx, f)
}

// Release tells the scheduler that this future no longer needs the value;
// when nothing does, the workers drop it or stop computing it. Release is
// idempotent.
func (f *Future) Release() {
	c := f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if f.released {
		return
	}
	f.released = true
	comp := f.comp
	for _, g := range comp.byKey[f.key] {
		if !g.released {
			return
		}
	}
	if !f.settled {
		comp.answered()
	}
	for _, g := range comp.byKey[f.key] {
		g.settle(fmt.Errorf("future %q was released", f.key))
	}
	comp.released += len(comp.byKey[f.key])
	if comp.released == len(comp.futures) {
		c.end(comp, nil)
		return
	}
	if _, ok := c.comps[comp.name]; ok {
		c.outRel = append(c.outRel, &wire.Release{Computation: comp.name, Keys: []string{string(f.key)}})
		c.wake()
	}
}

func (f *Future) String() string { return fmt.Sprintf("future(%s)", f.key) }

var _ graph.Executor = (*Client)(nil)
var _ graph.Future = (*Future)(nil)
