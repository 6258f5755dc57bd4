package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/diagnostics/alert"
	"github.com/shoal-data/shoal/diagnostics/dashboard"
	"github.com/shoal-data/shoal/distributed/internal/pace"
	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/scheduler"
)

// service implements the gRPC Scheduler service.
type service struct {
	wire.UnimplementedSchedulerServer
	s *Server
}

// workerConn is a connected worker.
type workerConn struct {
	addr     string
	info     *wire.RegisterWorker
	sinfo    scheduler.WorkerInfo
	epoch    uint64
	out      []*wire.Instruction
	reset    bool
	shutdown bool
	box      outbox
	cancel   context.CancelFunc
	lastSeen time.Time
	lost     string // why the server dropped it, if it did
	// restarting counts the calls to its nanny that may restart it (to
	// set environment variables): its removal meanwhile is safe.
	restarting int
	logs       []*wire.LogRecord
	memory     *wire.Memory
	ping       int64         // the ping to send, or 0
	pingSent   int64         // the ping sent and not answered yet
	latency    time.Duration // the round trip of the last ping
}

func (wc *workerConn) push(in *wire.Instruction) { wc.out = append(wc.out, in) }

// clientConn is a connected client.
type clientConn struct {
	id       string
	name     string
	registry *wire.Registry
	comps    map[string]*computation // by the client's name
	results  []*wire.KeyResult
	errors   []*wire.KeyError
	events   []*wire.Event
	box      outbox
}

func (x *service) WorkerStream(stream wire.Scheduler_WorkerStreamServer) error {
	s := x.s
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	reg := first.GetRegister()
	if reg == nil {
		return invalid("the first message of a worker must be a registration, not %T", first.Msg)
	}
	if reg.Address == "" {
		return invalid("worker registration without an address")
	}
	if reg.Threads <= 0 || reg.Threads > 1<<16 {
		return invalid("worker %s: %d threads", reg.Address, reg.Threads)
	}
	if reg.Registry == nil {
		return invalid("worker %s: registration without a registry", reg.Address)
	}
	for r, n := range reg.Resources {
		if n < 0 || n != n {
			return invalid("worker %s: resource %s=%v", reg.Address, r, n)
		}
	}
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	wc := &workerConn{addr: reg.Address, info: reg, cancel: cancel, box: outbox{notify: make(chan struct{}, 1)},
		lastSeen: time.Now(), sinfo: scheduler.WorkerInfo{Name: reg.Address, Threads: int(reg.Threads),
			MemoryLimit: reg.MemoryLimit, Resources: reg.Resources}}

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return status.Error(codes.Unavailable, "scheduler is closing")
	}
	if diffs, with := s.checkWorker(reg); diffs != nil {
		s.mu.Unlock()
		s.logger.Error("refused a worker whose registry differs", "worker", reg.Address, "from", with,
			"differences", len(diffs))
		stream.Send(&wire.WorkerDown{Msg: &wire.WorkerDown_Refused{Refused: &wire.Refused{
			Reason:      fmt.Sprintf("worker %s registers other ops or codecs than %s", reg.Address, with),
			Differences: diffs}}})
		return status.Errorf(codes.FailedPrecondition, "worker %s: registry differs from %s", reg.Address, with)
	}
	if old := s.workers[reg.Address]; old != nil {
		old.lost = "replaced by a new connection from the same address"
		old.cancel()
		s.removeWorker(old)
	}
	s.workers[reg.Address] = wc
	if k := pidKey(int(reg.Pid)); k != "" && s.earlyOutput[k] != nil {
		wc.addOutput(s.earlyOutput[k], s.cfg.WorkerLogs)
		delete(s.earlyOutput, k)
	}
	s.handle(&scheduler.WorkerAdded{Meta: now(), Worker: wc.sinfo})
	s.signalChange()
	s.hub.Publish(diagnostics.Event{Kind: diagnostics.WorkerAdded, Worker: wc.addr})
	s.flush()
	s.mu.Unlock()
	// Watched for silence from now, not from its first heartbeat: a
	// worker may hang before it sends one.
	s.alert(time.Now(), &alert.WorkerReport{Worker: wc.addr, MemoryLimit: reg.MemoryLimit})
	s.logger.Info("worker joined", "worker", reg.Address, "name", reg.Name, "threads", reg.Threads,
		"memory_limit", reg.MemoryLimit, "pid", reg.Pid)
	s.pluginsFor(wc)

	err = stream.Send(&wire.WorkerDown{Msg: &wire.WorkerDown_Welcome{Welcome: &wire.Welcome{SchedulerId: s.id,
		Name: reg.Address, HeartbeatIntervalNanos: int64(s.cfg.HeartbeatInterval), OtelInputs: s.otel.Tracing()}}})
	sendDone := make(chan error, 1)
	recvDone := make(chan error, 1)
	if err == nil {
		go func() { sendDone <- s.sendWorker(ctx, wc, stream) }()
		go func() {
			for {
				m, err := stream.Recv()
				if err != nil {
					recvDone <- err
					return
				}
				b := m.GetBatch()
				if b == nil {
					recvDone <- invalid("worker %s sent %T after registering", wc.addr, m.Msg)
					return
				}
				s.workerBatch(wc, b)
			}
		}()
		select {
		case err = <-recvDone:
		case err = <-sendDone:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	cancel()

	var exit workerExit
	s.mu.Lock()
	lost := wc.lost == "" && !wc.shutdown && s.workers[wc.addr] == wc
	s.mu.Unlock()
	if lost {
		exit = s.exitCause(wc)
	}
	s.mu.Lock()
	if wc.lost == "" && exit.cause != "" {
		wc.lost = "process ended: " + exit.cause
	}
	s.archiveLogs(wc.addr, wc.info.Pid, wc.mergeLogs(exit.logs, s.cfg.WorkerLogs))
	reason := wc.lost
	if reason == "" {
		reason = "connection closed"
		if err != nil && !errors.Is(err, io.EOF) {
			reason = "connection lost: " + err.Error()
		}
		wc.lost = reason
	}
	if s.workers[wc.addr] == wc {
		running := s.state.Running(wc.addr)
		s.removeWorker(wc)
		s.keepGone(wc, reason)
		s.metrics.removed.Inc()
		switch {
		case wc.shutdown:
			s.logger.Info("worker left", "worker", wc.addr)
		case wc.restarting > 0:
			s.logger.Info("worker left", "worker", wc.addr, "reason", reason)
		default:
			s.logger.Warn("worker lost", "worker", wc.addr, "reason", reason, "running", keyList(running, 8))
		}
		s.hub.Publish(diagnostics.Event{Kind: diagnostics.WorkerRemoved, Worker: wc.addr, Err: reason})
		s.alert(time.Now(), &alert.WorkerGone{Worker: wc.addr})
	}
	s.mu.Unlock()
	if st, ok := status.FromError(err); ok && st.Code() == codes.InvalidArgument {
		return err
	}
	return nil
}

// removeWorker tells the core a worker is gone. Called with s.mu held.
func (s *Server) removeWorker(wc *workerConn) {
	if wc.restarting == 0 && !wc.shutdown {
		for _, w := range s.state.Workers() {
			if w.Name == wc.addr {
				s.metrics.suspect.Add(float64(w.Processing))
			}
		}
	}
	s.metrics.latency.DeleteLabelValues(wc.addr)
	delete(s.workers, wc.addr)
	reason := wc.lost
	if reason == "" {
		reason = "connection closed"
	}
	s.handle(&scheduler.WorkerRemoved{Meta: now(), Worker: wc.addr, Reason: reason, Safe: wc.restarting > 0})
	s.signalChange()
	s.flush()
}

// checkWorker compares a new worker's registry with the clients' and the
// other workers'. Called with s.mu held.
func (s *Server) checkWorker(reg *wire.RegisterWorker) ([]string, string) {
	name := "worker " + reg.Address
	for _, c := range s.clients {
		if d := diffRegistries(c.registry, "client "+c.name, reg.Registry, name); d != nil {
			return d, "client " + c.name
		}
	}
	for _, wc := range s.workers {
		if wc.addr == reg.Address {
			continue
		}
		if d := diffRegistries(wc.info.Registry, "worker "+wc.addr, reg.Registry, name); d != nil {
			return d, "worker " + wc.addr
		}
		break // the others have the same registry as this one
	}
	return nil, ""
}

// sendWorker sends a worker's queued instructions in batches.
func (s *Server) sendWorker(ctx context.Context, wc *workerConn, stream wire.Scheduler_WorkerStreamServer) error {
	pacer := pace.New(s.cfg.BatchInterval)
	defer pacer.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wc.box.notify:
		}
		if err := pacer.Wait(ctx); err != nil {
			return err
		}
		for {
			s.mu.Lock()
			b := &wire.WorkerInstructions{Reset_: wc.reset, Epoch: wc.epoch, Shutdown: wc.shutdown, Ping: wc.ping}
			if wc.ping != 0 {
				wc.pingSent, wc.ping = wc.ping, 0
			}
			n := min(len(wc.out), s.cfg.BatchSize)
			b.Instructions = wc.out[:n:n]
			if n == len(wc.out) {
				wc.out = nil
			} else {
				wc.out = append([]*wire.Instruction(nil), wc.out[n:]...)
			}
			more := len(wc.out) > 0
			wc.reset = false
			s.mu.Unlock()
			if n == 0 && !b.Reset_ && !b.Shutdown && b.Ping == 0 {
				break
			}
			if err := stream.Send(&wire.WorkerDown{Msg: &wire.WorkerDown_Batch{Batch: b}}); err != nil {
				return err
			}
			pacer.Sent()
			if !more {
				break
			}
		}
	}
}

// workerBatch applies a batch of a worker's reports.
func (s *Server) workerBatch(wc *workerConn, b *wire.WorkerBatch) {
	s.workerTelemetry(wc.addr, b)
	s.archiveLogs(wc.addr, wc.info.Pid, b.Logs)
	s.exportWorkerLogs(wc.addr, b.Logs)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.workers[wc.addr] != wc {
		return
	}
	t := time.Now()
	var alerts []alert.Input
	defer func() { s.alert(t, alerts...) }()
	wc.lastSeen = t
	if len(b.Logs) > 0 {
		wc.logs = append(wc.logs, b.Logs...)
		if over := len(wc.logs) - s.cfg.WorkerLogs; over > 0 {
			wc.logs = append([]*wire.LogRecord(nil), wc.logs[over:]...)
		}
	}
	if b.Pong != 0 && b.Pong == wc.pingSent {
		wc.latency = t.Sub(time.Unix(0, b.Pong))
		wc.pingSent = 0
		s.metrics.latency.WithLabelValues(wc.addr).Set(wc.latency.Seconds())
	}
	if m := b.Memory; m != nil {
		if wc.pingSent == 0 && wc.ping == 0 {
			// Measure the round trip to the worker once a heartbeat.
			wc.ping = t.UnixNano()
			s.touch(&wc.box)
		}
		wc.memory = m
		s.handle(&scheduler.WorkerMemory{Meta: scheduler.Meta{Time: t}, Worker: wc.addr, Managed: m.Managed,
			Process: m.Process, Spilled: m.Spilled})
	}
	if b.Stats != nil {
		alerts = append(alerts, alertReport(wc, b))
	}
	if b.Epoch != wc.epoch {
		s.flush()
		return // reports about values the worker dropped when it was reset
	}
	// What the worker could not get: neither it nor the peers it asked
	// hold it, whatever the core believed (a peer died, or dropped it); a
	// value held nowhere any more is computed again. Heard before the
	// failures of the tasks that needed it, so that they wait for it.
	for _, mk := range b.MissingFrom {
		keys := []graph.Key{graph.Key(mk.Key)}
		for _, w := range append([]string{wc.addr}, mk.From...) {
			s.handle(&scheduler.DataMissing{Meta: scheduler.Meta{Time: t}, Worker: w, Keys: keys})
		}
	}
	for _, d := range b.Done {
		if md := d.Error.Find(wire.Error_MISSING_DATA); md != nil {
			keys := make([]graph.Key, len(md.MissingKeys))
			for i, k := range md.MissingKeys {
				keys[i] = graph.Key(k)
			}
			s.handle(&scheduler.DataMissing{Meta: scheduler.Meta{Time: t}, Worker: wc.addr, Keys: keys})
		}
	}
	for _, d := range b.Done {
		var ev scheduler.Event
		start := time.Unix(0, d.StartUnixNano)
		if d.StartUnixNano == 0 {
			start = time.Time{}
		}
		prefix := graph.Key(d.Key).Prefix()
		if d.DurationNanos > 0 {
			s.metrics.compute.WithLabelValues(prefix).Add(time.Duration(d.DurationNanos).Seconds())
		}
		if d.Error == nil {
			s.metrics.finished.WithLabelValues(prefix, "memory").Inc()
			s.metrics.output.WithLabelValues(prefix).Add(float64(d.Size))
		} else if d.Error.Find(wire.Error_MISSING_DATA) == nil && d.Error.Find(wire.Error_CANCELED) == nil {
			s.metrics.finished.WithLabelValues(prefix, "erred").Inc()
		}
		if in := alertEnded(wc.addr, d); in != nil {
			alerts = append(alerts, in)
		}
		if d.Error == nil {
			ev = &scheduler.TaskFinished{Meta: scheduler.Meta{Time: t}, Key: graph.Key(d.Key), ID: d.Id,
				Worker: wc.addr, Size: d.Size, Start: start, Duration: time.Duration(d.DurationNanos)}
		} else {
			err := wire.DecodeError(d.Error)
			s.explainLost(err)
			ev = &scheduler.TaskFailed{Meta: scheduler.Meta{Time: t}, Key: graph.Key(d.Key), ID: d.Id,
				Worker: wc.addr, Err: err, Start: start, Duration: time.Duration(d.DurationNanos)}
		}
		s.runInputs = runInputs(d)
		s.handle(ev)
		s.runInputs = nil
	}
	s.flush()
}

// explainLost says, in a task's error about a worker it could not reach,
// why the scheduler removed that worker, when it did. Called with s.mu
// held.
func (s *Server) explainLost(err error) {
	var lost *graph.WorkerLostError
	if errors.As(err, &lost) && lost.Reason == "" {
		if g := s.gone[lost.Worker]; g != nil {
			lost.Reason = g.reason
		}
	}
}

func (x *service) ClientStream(stream wire.Scheduler_ClientStreamServer) error {
	s := x.s
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	reg := first.GetRegister()
	if reg == nil {
		return invalid("the first message of a client must be a registration, not %T", first.Msg)
	}
	if reg.Registry == nil {
		return invalid("client registration without a registry")
	}
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return status.Error(codes.Unavailable, "scheduler is closing")
	}
	s.nclients++
	cc := &clientConn{id: fmt.Sprintf("client-%d", s.nclients), name: reg.Name, registry: reg.Registry,
		comps: map[string]*computation{}, box: outbox{notify: make(chan struct{}, 1)}}
	if cc.name == "" {
		cc.name = cc.id
	}
	for _, wc := range s.workers {
		if d := diffRegistries(reg.Registry, "client "+cc.name, wc.info.Registry, "worker "+wc.addr); d != nil {
			s.mu.Unlock()
			s.logger.Error("refused a client whose registry differs from the workers'", "client", cc.name,
				"worker", wc.addr, "differences", len(d))
			stream.Send(&wire.ClientDown{Msg: &wire.ClientDown_Refused{Refused: &wire.Refused{
				Reason:      fmt.Sprintf("client %s registers other ops or codecs than worker %s", cc.name, wc.addr),
				Differences: d}}})
			return status.Errorf(codes.FailedPrecondition, "client %s: registry differs from worker %s", cc.name, wc.addr)
		}
		break
	}
	s.clients[cc.id] = cc
	s.mu.Unlock()
	s.logger.Info("client connected", "client", cc.name, "id", cc.id)
	var sub *diagnostics.Subscription
	if reg.Events {
		sub = s.hub.Subscribe(func(evs []diagnostics.Event) {
			s.mu.Lock()
			defer s.mu.Unlock()
			for i := range evs {
				cc.events = append(cc.events, encodeEvent(&evs[i]))
			}
			cc.box.wake()
		})
	}
	err = stream.Send(&wire.ClientDown{Msg: &wire.ClientDown_Welcome{Welcome: &wire.Welcome{SchedulerId: s.id,
		Name: cc.id}}})
	sendDone := make(chan error, 1)
	recvDone := make(chan error, 1)
	if err == nil {
		go func() { sendDone <- s.sendClient(ctx, cc, stream) }()
		go func() {
			for {
				m, err := stream.Recv()
				if err != nil {
					recvDone <- err
					return
				}
				b := m.GetBatch()
				if b == nil {
					recvDone <- invalid("client %s sent %T after registering", cc.name, m.Msg)
					return
				}
				if err := s.clientBatch(cc, b); err != nil {
					recvDone <- err
					return
				}
			}
		}()
		select {
		case err = <-recvDone:
		case err = <-sendDone:
		case <-ctx.Done():
		}
	}
	cancel()
	if sub != nil {
		sub.Close()
	}
	// A client that leaves releases everything it holds or waits for.
	s.mu.Lock()
	delete(s.clients, cc.id)
	for _, c := range cc.comps {
		s.endComputation(c, errors.New("client disconnected"))
	}
	s.flush()
	s.mu.Unlock()
	s.logger.Info("client disconnected", "client", cc.name, "id", cc.id)
	if st, ok := status.FromError(err); ok && st.Code() == codes.InvalidArgument {
		return err
	}
	return nil
}

// endComputation releases a computation's keys. Called with s.mu held.
func (s *Server) endComputation(c *computation, reason error) {
	s.handle(&scheduler.KeysReleased{Meta: now(), Client: c.id})
	delete(s.comps, c.id)
	delete(c.client.comps, c.name)
	if c.pending != nil {
		c.pending = nil
		ev := diagnostics.Event{Kind: diagnostics.ComputeFinished, Compute: c.number}
		if reason != nil {
			ev.Err = reason.Error()
		}
		s.hub.Publish(ev)
	}
	if len(s.comps) == 0 {
		s.owner = nil
	}
}

// sendClient sends a client's queued reports in batches.
func (s *Server) sendClient(ctx context.Context, cc *clientConn, stream wire.Scheduler_ClientStreamServer) error {
	pacer := pace.New(s.cfg.BatchInterval)
	defer pacer.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-cc.box.notify:
		}
		if err := pacer.Wait(ctx); err != nil {
			return err
		}
		s.mu.Lock()
		b := &wire.ClientReports{Results: cc.results, Errors: cc.errors, Events: cc.events}
		cc.results, cc.errors, cc.events = nil, nil, nil
		s.mu.Unlock()
		if len(b.Results)+len(b.Errors)+len(b.Events) == 0 {
			continue
		}
		if err := stream.Send(&wire.ClientDown{Msg: &wire.ClientDown_Batch{Batch: b}}); err != nil {
			return err
		}
		pacer.Sent()
	}
}

// clientBatch applies a batch of a client's requests.
func (s *Server) clientBatch(cc *clientConn, b *wire.ClientBatch) error {
	type decoded struct {
		sub *wire.Submit
		g   *graph.Graph
		err error
	}
	subs := make([]decoded, len(b.Submit))
	for i, sub := range b.Submit {
		subs[i].sub = sub
		if sub.Computation == "" {
			return invalid("client %s: submit without a computation name", cc.name)
		}
		subs[i].g, subs[i].err = graph.Decode(sub.Graph)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.flush()
	for _, d := range subs {
		sub := d.sub
		if _, dup := cc.comps[sub.Computation]; dup {
			return invalid("client %s: computation %q submitted twice", cc.name, sub.Computation)
		}
		keys := make([]graph.Key, len(sub.Keys))
		for i, k := range sub.Keys {
			keys[i] = graph.Key(k)
		}
		s.ncompute++
		c := &computation{id: cc.id + "/" + sub.Computation, name: sub.Computation, number: s.ncompute, client: cc}
		cc.comps[c.name] = c
		s.comps[c.id] = c
		if d.err != nil {
			te := &graph.TaskError{Err: fmt.Errorf("scheduler %s: %w", s.Address(), d.err)}
			for i, k := range keys {
				te := *te
				te.Key, te.Root = k, k
				cc.errors = append(cc.errors, &wire.KeyError{Computation: c.name, Key: string(k), Index: int32(i),
					Error: wire.EncodeError(&te)})
			}
			s.touch(&cc.box)
			continue
		}
		g := s.resolveRestrictions(d.g)
		if s.hub.Active() {
			tasks := map[string]int{}
			if s.owner == nil {
				s.owner = map[graph.Key]uint64{}
			}
			for _, t := range g.Tasks() {
				tasks[t.Key.Prefix()]++
				if _, ok := s.owner[t.Key]; !ok {
					s.owner[t.Key] = c.number
				}
			}
			if s.dash != nil || len(s.reports) > 0 {
				groups, edges := dashboard.GraphGroups(g)
				if s.dash != nil {
					s.dash.AddGraph(c.number, groups, edges)
				}
				for _, r := range s.reports {
					r.AddGraph(c.number, groups, edges)
				}
			}
			c.pending = make(map[graph.Key]bool, len(keys))
			for _, k := range keys {
				c.pending[k] = true
			}
			s.hub.Publish(diagnostics.Event{Kind: diagnostics.ComputeStarted, Compute: c.number, Tasks: tasks,
				Caller: sub.Caller, Trace: sub.OtelTraceparent})
		}
		s.handle(&scheduler.GraphSubmitted{Meta: scheduler.Meta{Time: time.Now(), Stimulus: c.id}, Client: c.id,
			Graph: g, Keys: keys, Priority: int(sub.Priority)})
		for _, sh := range alert.Shuffles(g, c.number) {
			s.alert(time.Now(), sh)
		}
	}
	for _, r := range b.Release {
		c := cc.comps[r.Computation]
		if c == nil {
			continue
		}
		if len(r.Keys) == 0 {
			s.endComputation(c, nil)
			continue
		}
		s.handle(&scheduler.KeysReleased{Meta: now(), Client: c.id, Keys: toKeys(r.Keys)})
		if s.state.Wants(c.id) == 0 {
			s.endComputation(c, nil)
		}
	}
	for _, r := range b.Cancel {
		c := cc.comps[r.Computation]
		if c == nil {
			continue
		}
		reason := r.Reason
		if reason == "" {
			reason = "cancelled by the client"
		}
		var keys []graph.Key
		if len(r.Keys) > 0 {
			keys = toKeys(r.Keys)
		}
		s.handle(&scheduler.Cancel{Meta: now(), Client: c.id, Keys: keys,
			Reason: fmt.Errorf("%s: %w", reason, context.Canceled)})
	}
	return nil
}

func toKeys(ss []string) []graph.Key {
	ks := make([]graph.Key, len(ss))
	for i, k := range ss {
		ks[i] = graph.Key(k)
	}
	return ks
}

// resolveRestrictions rewrites worker restrictions given by name into
// addresses, which the core knows workers by. Called with s.mu held.
func (s *Server) resolveRestrictions(g *graph.Graph) *graph.Graph {
	byName := map[string]string{}
	for _, wc := range s.workers {
		if wc.info.Name != "" && wc.info.Name != wc.addr {
			byName[wc.info.Name] = wc.addr
		}
	}
	if len(byName) == 0 {
		return g
	}
	rewrite := func(t *graph.Task) bool {
		for _, w := range t.Workers {
			if _, ok := byName[w]; ok {
				return true
			}
		}
		return false
	}
	need := false
	for _, t := range g.Tasks() {
		need = need || rewrite(t)
	}
	if !need {
		return g
	}
	out := graph.New()
	for _, t := range g.Tasks() {
		if rewrite(t) {
			c := t.Clone()
			for i, w := range c.Workers {
				if a, ok := byName[w]; ok {
					c.Workers[i] = a
				}
			}
			t = c
		}
		out.Add(t)
	}
	out.AddExternal(g.External()...)
	return out
}

func (x *service) Info(context.Context, *wire.InfoRequest) (*wire.ClusterInfo, error) {
	return x.s.Info(), nil
}

// Info describes the cluster: the scheduler and every worker.
func (s *Server) Info() *wire.ClusterInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	ci := &wire.ClusterInfo{SchedulerId: s.id, Address: s.Address(), DashboardAddress: s.cfg.DashboardAddress,
		MetricsAddress: s.MetricsAddress(),
		Clients:        int32(len(s.clients)), Tasks: map[string]int64{}}
	for st, n := range s.state.Counts() {
		ci.Tasks[st.String()] = int64(n)
	}
	for _, ws := range s.state.Workers() {
		wc := s.workers[ws.Name]
		if wc == nil {
			continue
		}
		r := wc.info
		ci.Workers = append(ci.Workers, &wire.WorkerInfo{Address: wc.addr, Name: r.Name, Threads: r.Threads,
			MemoryLimit: r.MemoryLimit, Resources: r.Resources, LocalDir: r.LocalDir, Nanny: r.Nanny, Pid: r.Pid,
			Memory: wc.memory, State: ws.State.String(), Processing: int32(ws.Processing), HeldBytes: ws.Bytes,
			MetricsAddress: r.MetricsAddress})
	}
	return ci
}

func encodeEvent(e *diagnostics.Event) *wire.Event {
	w := &wire.Event{Kind: int32(e.Kind), Compute: e.Compute, Key: string(e.Key), From: e.From, To: e.To,
		Worker: e.Worker, DurationNanos: int64(e.Duration), Bytes: e.Bytes, Path: e.Path, Err: e.Err,
		Stimulus: e.Stimulus, Op: e.Op, Caller: e.Caller}
	for _, m := range e.Metrics {
		w.Metrics = append(w.Metrics, &wire.FineMetric{Worker: m.Worker, Prefix: m.Prefix, Activity: m.Activity,
			Unit: m.Unit, Value: m.Value})
	}
	if !e.Time.IsZero() {
		w.TimeUnixNano = e.Time.UnixNano()
	}
	if !e.Start.IsZero() {
		w.StartUnixNano = e.Start.UnixNano()
	}
	if e.Alert != nil {
		w.Alert = wire.EncodeAlert(e.Alert)
	}
	if len(e.Tasks) > 0 {
		w.Tasks = make(map[string]int64, len(e.Tasks))
		for k, v := range e.Tasks {
			w.Tasks[k] = int64(v)
		}
	}
	return w
}

// keyList names at most n keys, and how many more there are.
func keyList(keys []graph.Key, n int) string {
	var b strings.Builder
	for i, k := range keys {
		if i == n {
			fmt.Fprintf(&b, " and %d more", len(keys)-n)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(k))
	}
	return b.String()
}
