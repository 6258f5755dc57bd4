package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc/status"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/distributed/internal/runcall"
	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/internal/logring"
	"github.com/shoal-data/shoal/scheduler"
)

// Plugin is code the scheduler calls when tasks change state and when
// workers come and go (Dask's SchedulerPlugin). Its methods are called one
// at a time, in order, on a goroutine of their own, not under the
// scheduler's lock; they may take their time, but events pile up meanwhile.
type Plugin interface {
	Transition(key graph.Key, from, to string)
	WorkerAdded(worker string)
	WorkerRemoved(worker, reason string)
}

// goneWorker keeps what is known of a worker that left.
type goneWorker struct {
	addr   string
	name   string
	reason string
	logs   []*wire.LogRecord
}

// maxGone bounds the workers whose last logs are kept after they left.
const maxGone = 256

// exitWaiter waits for the supervisor's word on why a worker ended.
type exitWaiter struct {
	ch   chan string
	exit workerExit
}

// workerExit is what a supervisor said of a worker process that ended.
type workerExit struct {
	cause string
	logs  []*wire.LogRecord // its last records, read from its standard error
}

// startPlugins subscribes the scheduler plugins to the server's events.
func (s *Server) startPlugins() {
	for _, p := range s.cfg.Plugins {
		sub := s.hub.Subscribe(func(evs []diagnostics.Event) {
			for i := range evs {
				e := &evs[i]
				switch e.Kind {
				case diagnostics.TaskTransition:
					p.Transition(e.Key, e.From, e.To)
				case diagnostics.WorkerAdded:
					p.WorkerAdded(e.Worker)
				case diagnostics.WorkerRemoved:
					p.WorkerRemoved(e.Worker, e.Err)
				}
			}
		})
		s.subs = append(s.subs, sub)
	}
}

// WorkerExited records why a worker process ended, as its nanny (or the
// LocalCluster that started it) saw it: the exit code, the signal, or the
// memory limit. The scheduler gives this cause when it removes the worker,
// and KilledWorkerError lists it. pid identifies the process when addr is
// not known.
//
// last are the last records the process wrote to its standard error: they
// join the worker's logs, which keeps the records it logged just before it
// died even when it could not send them.
func (s *Server) WorkerExited(addr string, pid int, cause string, last []*wire.LogRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logger.Warn("worker process ended", "worker", addr, "pid", pid, "reason", cause)
	e := workerExit{cause: cause, logs: last}
	for _, k := range []string{addr, pidKey(pid)} {
		if k == "" {
			continue
		}
		if w := s.exitWait[k]; w != nil {
			w.exit = e
			close(w.ch)
			delete(s.exitWait, k)
			return
		}
	}
	if len(s.exits) >= 1024 {
		clear(s.exits)
	}
	if addr != "" {
		s.exits[addr] = e
	}
	if pid > 0 {
		s.exits[pidKey(pid)] = e
	}
}

// WorkerOutput adds to the log of the worker with address addr, or whose
// process is pid, what its process wrote to its standard output and error
// (records with the attribute stream), as its nanny read it. Output of a
// process that has not joined yet waits for it (a little of it).
func (s *Server) WorkerOutput(addr string, pid int, recs []*wire.LogRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var wc *workerConn
	if addr != "" {
		wc = s.workers[addr]
	}
	if wc == nil && pid > 0 {
		for _, w := range s.workers {
			if int(w.info.Pid) == pid {
				wc = w
				break
			}
		}
	}
	if wc == nil {
		s.archiveLogs("", int32(pid), recs)
		k := pidKey(pid)
		if k == "" {
			return
		}
		if len(s.earlyOutput) >= 1024 {
			clear(s.earlyOutput)
		}
		s.earlyOutput[k] = append(s.earlyOutput[k], recs...)
		if over := len(s.earlyOutput[k]) - s.cfg.WorkerLogs; over > 0 {
			s.earlyOutput[k] = s.earlyOutput[k][over:]
		}
		return
	}
	s.archiveLogs(wc.addr, wc.info.Pid, recs)
	wc.addOutput(recs, s.cfg.WorkerLogs)
}

// addOutput adds output records to a worker's logs, tagged with it.
// Called with s.mu held.
func (wc *workerConn) addOutput(recs []*wire.LogRecord, max int) {
	for _, r := range recs {
		if r.Attrs == nil {
			r.Attrs = map[string]string{}
		}
		r.Attrs["worker"] = wc.addr
	}
	wc.logs = append(wc.logs, recs...)
	if over := len(wc.logs) - max; over > 0 {
		wc.logs = append([]*wire.LogRecord(nil), wc.logs[over:]...)
	}
}

func (x *service) WorkerOutput(_ context.Context, e *wire.WorkerExit) (*wire.Ack, error) {
	x.s.WorkerOutput(e.Address, int(e.Pid), e.Logs)
	return &wire.Ack{}, nil
}

func pidKey(pid int) string {
	if pid <= 0 {
		return ""
	}
	return fmt.Sprintf("pid:%d", pid)
}

// exitCause waits up to ExitWait for the supervisor of a supervised worker
// whose connection broke to say why its process ended; "" when it does not
// say.
func (s *Server) exitCause(wc *workerConn) workerExit {
	if !wc.info.Supervised || s.cfg.ExitWait <= 0 {
		return workerExit{}
	}
	keys := []string{wc.addr, pidKey(int(wc.info.Pid))}
	s.mu.Lock()
	for _, k := range keys {
		if e, ok := s.exits[k]; ok && k != "" {
			for _, k := range keys {
				delete(s.exits, k)
			}
			s.mu.Unlock()
			return e
		}
	}
	w := &exitWaiter{ch: make(chan string)}
	for _, k := range keys {
		if k != "" {
			s.exitWait[k] = w
		}
	}
	s.mu.Unlock()
	t := time.NewTimer(s.cfg.ExitWait)
	defer t.Stop()
	select {
	case <-w.ch:
	case <-t.C:
	case <-s.stop:
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		if s.exitWait[k] == w {
			delete(s.exitWait, k)
		}
	}
	return w.exit
}

// mergeLogs adds to a worker's logs the records its supervisor read that
// the worker had not sent, in time order, and returns them. Called with
// s.mu held.
func (wc *workerConn) mergeLogs(last []*wire.LogRecord, max int) []*wire.LogRecord {
	if len(last) == 0 {
		return nil
	}
	type id struct {
		t   int64
		msg string
	}
	have := make(map[id]bool, len(wc.logs))
	for _, r := range wc.logs {
		have[id{r.TimeUnixNano, r.Message}] = true
	}
	var added []*wire.LogRecord
	for _, r := range last {
		if !have[id{r.TimeUnixNano, r.Message}] {
			wc.logs = append(wc.logs, r)
			added = append(added, r)
		}
	}
	if len(added) == 0 {
		return nil
	}
	slices.SortStableFunc(wc.logs, func(a, b *wire.LogRecord) int {
		switch {
		case a.TimeUnixNano < b.TimeUnixNano:
			return -1
		case a.TimeUnixNano > b.TimeUnixNano:
			return 1
		}
		return 0
	})
	if over := len(wc.logs) - max; over > 0 {
		wc.logs = slices.Clone(wc.logs[over:])
	}
	return added
}

// keepGone keeps a removed worker's last logs. Called with s.mu held.
func (s *Server) keepGone(wc *workerConn, reason string) {
	s.gone[wc.addr] = &goneWorker{addr: wc.addr, name: wc.info.Name, reason: reason, logs: wc.logs}
	s.goneOrder = append(s.goneOrder, wc.addr)
	for len(s.goneOrder) > maxGone {
		old := s.goneOrder[0]
		s.goneOrder = s.goneOrder[1:]
		if g := s.gone[old]; g != nil && !slices.Contains(s.goneOrder, old) {
			delete(s.gone, old)
			if s.workers[old] == nil {
				s.tel.forgetWorker(old)
			}
		}
	}
}

// SchedulerLogs returns the scheduler's last n log records (all it keeps
// when n <= 0), oldest first.
func (s *Server) SchedulerLogs(n int) []logring.Record { return s.ring.Last(n) }

// WorkerLogs returns the last n log records (all kept when n <= 0) of the
// named workers (addresses or names; none: every worker, including those
// that left), by worker address. gone lists the workers among them that
// left the cluster.
func (s *Server) WorkerLogs(n int, names ...string) (logs map[string][]*wire.LogRecord, gone map[string]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	logs, gone = map[string][]*wire.LogRecord{}, map[string]bool{}
	want := func(addr, name string) bool {
		return len(names) == 0 || slices.Contains(names, addr) || (name != "" && slices.Contains(names, name))
	}
	last := func(rs []*wire.LogRecord) []*wire.LogRecord {
		if n > 0 && len(rs) > n {
			rs = rs[len(rs)-n:]
		}
		return slices.Clone(rs)
	}
	for addr, g := range s.gone {
		if want(addr, g.name) {
			logs[addr], gone[addr] = last(g.logs), true
		}
	}
	for addr, wc := range s.workers {
		if want(addr, wc.info.Name) {
			logs[addr] = last(wc.logs)
			delete(gone, addr)
		}
	}
	return logs, gone
}

// LogEvent records an event under topic; clients read them with Events.
func (s *Server) LogEvent(topic, msg, client string, t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.archiveTopic(topic, msg, t)
	ev := &wire.TopicEvent{Topic: topic, Message: msg, TimeUnixNano: t.UnixNano(), Client: client}
	evs := append(s.topics[topic], ev)
	if over := len(evs) - s.cfg.TopicEvents; over > 0 {
		evs = slices.Clone(evs[over:])
	}
	s.topics[topic] = evs
}

// TopicEvents returns the events recorded under topic, oldest first.
func (s *Server) TopicEvents(topic string) []*wire.TopicEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.topics[topic])
}

// datasetClient is the scheduling core's client that holds a dataset.
func datasetClient(name string) string { return "dataset:" + name }

// Publish names keys so that they stay on the workers until Unpublish,
// whoever computed them.
func (s *Server) Publish(name string, keys []graph.Key, overwrite bool) error {
	if name == "" {
		return fmt.Errorf("publish: empty dataset name")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.flush()
	if _, ok := s.datasets[name]; ok {
		if !overwrite {
			return fmt.Errorf("publish: dataset %q exists (unpublish it first, or overwrite it)", name)
		}
		s.handle(&scheduler.KeysReleased{Meta: now(), Client: datasetClient(name)})
	}
	for _, k := range keys {
		if _, ok := s.state.Task(k); !ok {
			return fmt.Errorf("publish %q: key %q is not held by the scheduler (released, or never submitted)", name, k)
		}
	}
	s.datasets[name] = slices.Clone(keys)
	s.handle(&scheduler.GraphSubmitted{Meta: scheduler.Meta{Time: time.Now(), Stimulus: "publish-" + name},
		Client: datasetClient(name), Keys: keys})
	s.logger.Info("dataset published", "dataset", name, "keys", len(keys))
	return nil
}

// Unpublish forgets a dataset; its values are released unless someone
// else holds them.
func (s *Server) Unpublish(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.datasets[name]; !ok {
		return fmt.Errorf("unpublish: no dataset %q", name)
	}
	delete(s.datasets, name)
	s.handle(&scheduler.KeysReleased{Meta: now(), Client: datasetClient(name)})
	s.flush()
	return nil
}

// Dataset returns the keys of a dataset.
func (s *Server) Dataset(name string) ([]graph.Key, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys, ok := s.datasets[name]
	return slices.Clone(keys), ok
}

// Datasets returns the names of the datasets, sorted.
func (s *Server) Datasets() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.datasets))
	for n := range s.datasets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// RegisterWorkerPlugin sets a worker plugin up on every worker, and
// remembers it for the workers that join later. It returns the status per
// worker address: nil, or why the setup failed there.
//
// The Environ plugin (wire.EnvironPlugin) goes to the nanny of a worker
// that has one (Nanny.Environ): the nanny keeps the variables for every
// later start of its worker and restarts it, and the status is nil once
// the new worker process has joined, under its new address. Registering
// Environ again adds to the variables.
func (s *Server) RegisterWorkerPlugin(ctx context.Context, name string, config []byte) map[string]error {
	var bad error
	if name == wire.EnvironPlugin {
		_, bad = wire.DecodeEnviron(config)
	}
	s.mu.Lock()
	if bad != nil {
		// Not kept: it would fail on every worker that joins, and spoil the
		// variables registered later.
		out := make(map[string]error, len(s.workers))
		for a := range s.workers {
			out[a] = fmt.Errorf("worker %s: %w", a, bad)
		}
		s.mu.Unlock()
		return out
	}
	req := &wire.PluginRequest{Name: name, Config: config}
	if name == wire.EnvironPlugin {
		req = s.mergeEnviron(req)
	}
	s.plugins = slices.DeleteFunc(s.plugins, func(p *wire.PluginRequest) bool { return p.Name == name })
	s.plugins = append(s.plugins, req)
	targets := make([]pluginTarget, 0, len(s.workers))
	for _, wc := range s.workers {
		targets = append(targets, targetOf(wc))
	}
	s.mu.Unlock()
	out := make(map[string]error, len(targets))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			addr, err := t.addr, error(nil)
			if req.Name == wire.EnvironPlugin && t.nanny != "" {
				addr, err = s.environByNanny(ctx, t, req)
			} else {
				err = s.setupPlugin(ctx, t.addr, req)
			}
			mu.Lock()
			out[addr] = err
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// pluginTarget is a worker to set a plugin up on.
type pluginTarget struct {
	addr  string
	nanny string // its nanny's address, if it has one
	pid   int32
}

func targetOf(wc *workerConn) pluginTarget {
	return pluginTarget{addr: wc.addr, nanny: wc.info.Nanny, pid: wc.info.Pid}
}

// mergeEnviron adds the variables of an earlier Environ plugin to those
// of req, which win. Called with s.mu held.
func (s *Server) mergeEnviron(req *wire.PluginRequest) *wire.PluginRequest {
	i := slices.IndexFunc(s.plugins, func(p *wire.PluginRequest) bool { return p.Name == wire.EnvironPlugin })
	if i < 0 {
		return req
	}
	var old, vars map[string]string
	if json.Unmarshal(s.plugins[i].Config, &old) != nil || json.Unmarshal(req.Config, &vars) != nil || old == nil {
		return req
	}
	maps.Copy(old, vars)
	b, err := json.Marshal(old)
	if err != nil {
		return req
	}
	return &wire.PluginRequest{Name: req.Name, Config: b}
}

func (s *Server) setupPlugin(ctx context.Context, addr string, req *wire.PluginRequest) error {
	conn, err := s.peers.Get(addr)
	if err != nil {
		return fmt.Errorf("worker %s: %w", addr, err)
	}
	st, err := wire.NewWorkerClient(conn).Plugin(ctx, req)
	if err != nil {
		return fmt.Errorf("worker %s: plugin %q: %w", addr, req.Name, err)
	}
	if st.Error != "" {
		return fmt.Errorf("%s", st.Error)
	}
	return nil
}

// restartWait bounds how long RegisterWorkerPlugin waits for a worker
// that its nanny restarted to join again.
const restartWait = time.Minute

// environByNanny has the nanny of a worker set the variables of an
// Environ plugin, and waits until the worker it restarted for them (if it
// did) has joined. It returns the address of the worker that has them.
func (s *Server) environByNanny(ctx context.Context, t pluginTarget, req *wire.PluginRequest) (string, error) {
	restarted, pid, err := s.nannyEnviron(ctx, t, req)
	if err != nil || !restarted {
		return t.addr, err
	}
	ctx, cancel := context.WithTimeout(ctx, restartWait)
	defer cancel()
	addr, err := s.waitRestarted(ctx, t)
	if err != nil {
		return t.addr, fmt.Errorf("worker %s: its nanny %s restarted it (process %d) to set environment variables, "+
			"but no new worker process joined: %w", t.addr, t.nanny, pid, err)
	}
	return addr, nil
}

// nannyEnviron asks the nanny of a worker to set the variables of an
// Environ plugin. restarted tells whether the nanny restarted the worker
// for them, as process pid.
func (s *Server) nannyEnviron(ctx context.Context, t pluginTarget, req *wire.PluginRequest) (restarted bool, pid int32, err error) {
	vars, err := wire.DecodeEnviron(req.Config)
	if err != nil {
		return false, 0, fmt.Errorf("worker %s: %w", t.addr, err)
	}
	conn, err := s.peers.Get(t.nanny)
	if err != nil {
		return false, 0, fmt.Errorf("worker %s: nanny %s: %w", t.addr, t.nanny, err)
	}
	// The nanny may restart the worker: its tasks are not to blame.
	s.markRestarting(t, 1)
	rep, err := wire.NewNannyClient(conn).Environ(ctx, &wire.EnvironRequest{Vars: vars})
	if err != nil || !rep.Restarted {
		s.markRestarting(t, -1)
	}
	if err != nil {
		return false, 0, fmt.Errorf("worker %s: %s", t.addr, status.Convert(err).Message())
	}
	if rep.Restarted {
		s.logger.Info("a nanny restarted its worker to set environment variables", "worker", t.addr,
			"nanny", t.nanny, "old_pid", t.pid, "pid", rep.Pid)
	}
	return rep.Restarted, rep.Pid, nil
}

// markRestarting counts a call to the nanny of t that may restart it
// (delta 1), or its end without a restart (-1).
func (s *Server) markRestarting(t pluginTarget, delta int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if wc := s.workers[t.addr]; wc != nil && wc.info.Pid == t.pid {
		wc.restarting += delta
	}
}

// waitRestarted waits until the worker t has left and a worker process of
// its nanny other than t's has joined, and returns its address.
func (s *Server) waitRestarted(ctx context.Context, t pluginTarget) (string, error) {
	for {
		s.mu.Lock()
		if old := s.workers[t.addr]; old == nil || old.info.Pid != t.pid {
			for _, wc := range s.workers {
				if wc.info.Nanny == t.nanny && wc.info.Pid != t.pid {
					s.mu.Unlock()
					return wc.addr, nil
				}
			}
		}
		ch, closed := s.changed, s.closed
		s.mu.Unlock()
		if closed {
			return "", errors.New("the scheduler is closing")
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-s.stop:
			return "", errors.New("the scheduler closed")
		case <-ch:
		}
	}
}

// pluginsFor sets the registered plugins up on a worker that joined. The
// nanny of a worker that has one sets the variables of Environ: when it
// restarts the worker for them, the new worker gets the plugins when it
// joins.
func (s *Server) pluginsFor(wc *workerConn) {
	s.mu.Lock()
	reqs := slices.Clone(s.plugins)
	t := targetOf(wc)
	s.mu.Unlock()
	if len(reqs) == 0 {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		go func() {
			select {
			case <-s.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		if i := slices.IndexFunc(reqs, func(r *wire.PluginRequest) bool { return r.Name == wire.EnvironPlugin }); i >= 0 && t.nanny != "" {
			restarted, _, err := s.nannyEnviron(ctx, t, reqs[i])
			switch {
			case err != nil:
				s.logger.Warn("environment variables not set on a worker that joined", "worker", t.addr,
					"nanny", t.nanny, "error", err)
			case restarted:
				return // the new worker gets the plugins when it joins
			}
			reqs = slices.Delete(reqs, i, i+1)
		}
		for _, r := range reqs {
			if err := s.setupPlugin(ctx, t.addr, r); err != nil {
				s.logger.Warn("worker plugin setup failed on a worker that joined", "worker", t.addr, "plugin", r.Name,
					"error", err)
			}
		}
	}()
}

// RunOnScheduler runs a call of a registered function in the scheduler
// process.
func (s *Server) run(ctx context.Context, req *wire.RunRequest) *wire.RunReply {
	s.logger.Info("running a call from a client", "key", req.Key)
	env := &graph.Env{Registry: s.cfg.Registry, Logger: s.logger.With("key", req.Key), Worker: s.Address()}
	return runcall.Serve(ctx, s.cfg.Registry, env, req)
}

// ---- gRPC ----

func (x *service) WorkerExited(_ context.Context, e *wire.WorkerExit) (*wire.Ack, error) {
	if e.Address == "" && e.Pid <= 0 {
		return nil, invalid("worker exit without an address or a pid")
	}
	x.s.WorkerExited(e.Address, int(e.Pid), e.Cause, e.Logs)
	return &wire.Ack{}, nil
}

func (x *service) Logs(_ context.Context, r *wire.LogsRequest) (*wire.LogsReply, error) {
	rep := &wire.LogsReply{}
	if !r.Workers {
		for _, rec := range x.s.SchedulerLogs(int(r.N)) {
			rep.Scheduler = append(rep.Scheduler, &wire.LogRecord{TimeUnixNano: rec.Time.UnixNano(),
				Level: int32(rec.Level), Message: rec.Message, Attrs: rec.Attrs})
		}
		return rep, nil
	}
	logs, gone := x.s.WorkerLogs(int(r.N), r.Names...)
	rep.Workers = make(map[string]*wire.LogList, len(logs))
	for a, rs := range logs {
		rep.Workers[a] = &wire.LogList{Records: rs, Gone: gone[a]}
	}
	return rep, nil
}

func (x *service) LogEvent(_ context.Context, e *wire.TopicEvent) (*wire.Ack, error) {
	if e.Topic == "" {
		return nil, invalid("event without a topic")
	}
	t := time.Now()
	if e.TimeUnixNano != 0 {
		t = time.Unix(0, e.TimeUnixNano)
	}
	x.s.LogEvent(e.Topic, e.Message, e.Client, t)
	return &wire.Ack{}, nil
}

func (x *service) Events(_ context.Context, r *wire.EventsRequest) (*wire.EventsReply, error) {
	return &wire.EventsReply{Events: x.s.TopicEvents(r.Topic)}, nil
}

func (x *service) Publish(_ context.Context, r *wire.PublishRequest) (*wire.Ack, error) {
	if err := x.s.Publish(r.Name, toKeys(r.Keys), r.Overwrite); err != nil {
		return nil, invalid("%v", err)
	}
	return &wire.Ack{}, nil
}

func (x *service) Unpublish(_ context.Context, r *wire.DatasetRequest) (*wire.Ack, error) {
	if err := x.s.Unpublish(r.Name); err != nil {
		return nil, invalid("%v", err)
	}
	return &wire.Ack{}, nil
}

func (x *service) GetDataset(_ context.Context, r *wire.DatasetRequest) (*wire.Dataset, error) {
	keys, ok := x.s.Dataset(r.Name)
	if !ok {
		return nil, invalid("no dataset %q (datasets: %v)", r.Name, x.s.Datasets())
	}
	d := &wire.Dataset{Name: r.Name}
	for _, k := range keys {
		d.Keys = append(d.Keys, string(k))
	}
	return d, nil
}

func (x *service) ListDatasets(context.Context, *wire.InfoRequest) (*wire.DatasetList, error) {
	return &wire.DatasetList{Names: x.s.Datasets()}, nil
}

func (x *service) Run(ctx context.Context, r *wire.RunRequest) (*wire.RunReply, error) {
	return x.s.run(ctx, r), nil
}

func (x *service) RegisterWorkerPlugin(ctx context.Context, r *wire.PluginRequest) (*wire.PluginReply, error) {
	if r.Name == "" {
		return nil, invalid("worker plugin without a name")
	}
	st := x.s.RegisterWorkerPlugin(ctx, r.Name, r.Config)
	rep := &wire.PluginReply{}
	for a, err := range st {
		ps := &wire.PluginStatus{Worker: a}
		if err != nil {
			ps.Error = err.Error()
		}
		rep.Statuses = append(rep.Statuses, ps)
	}
	slices.SortFunc(rep.Statuses, func(a, b *wire.PluginStatus) int {
		if a.Worker < b.Worker {
			return -1
		}
		if a.Worker > b.Worker {
			return 1
		}
		return 0
	})
	return rep, nil
}
