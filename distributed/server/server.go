// Package server is the scheduler process of a Shoal cluster: a gRPC
// server that drives the scheduling core (package scheduler) for the
// workers and clients connected to it.
//
// Every worker and client keeps one bidirectional stream to the server.
// The core runs under one lock: the server turns the batches that arrive on
// the streams into events, hands them to scheduler.State.Handle, and queues
// the instructions that come out on the stream of the worker or client they
// are for. One goroutine per stream sends what is queued, so instructions
// that pile up while a message is being sent go out together in the next
// one.
package server

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/diagnostics/alert"
	"github.com/shoal-data/shoal/diagnostics/archive"
	"github.com/shoal-data/shoal/diagnostics/dashboard"
	"github.com/shoal-data/shoal/diagnostics/otelshoal"
	"github.com/shoal-data/shoal/diagnostics/otelshoal/otlp"
	"github.com/shoal-data/shoal/distributed/internal/conns"
	"github.com/shoal-data/shoal/distributed/internal/metrics"
	"github.com/shoal-data/shoal/distributed/internal/pace"
	"github.com/shoal-data/shoal/distributed/security"
	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/internal/logring"
	"github.com/shoal-data/shoal/scheduler"
)

// Config describes a scheduler server. The zero value serves on a free
// loopback port.
type Config struct {
	// Listen is the address to serve on; default "127.0.0.1:0".
	Listen string
	// Logger is where the server logs; by default nowhere.
	Logger *slog.Logger
	// Saturation is how many tasks a worker gets per thread before ready
	// tasks wait in the scheduler (default 4: a worker has the next tasks
	// at hand when one ends, instead of waiting a round trip for them;
	// lower keeps placement more flexible for long tasks).
	Saturation float64
	// Backlog lets a worker hold more than Saturation tasks per thread
	// when they are short: as many as take about this long by the mean
	// duration of their prefix so far (at most 64 per thread), so that
	// it stays busy while its reports and new tasks cross the network.
	// Default 5ms; negative: off.
	Backlog time.Duration
	// NoStealing turns work stealing off: by default, tasks waiting on a
	// busy worker move to a worker with an idle thread when computing them
	// takes longer than moving their inputs (scheduler.Config.Steal).
	NoStealing bool
	// AllowedFailures is how many workers may die while running a task
	// before it is declared erred (default 3).
	AllowedFailures int
	// HeartbeatTimeout removes a worker that has sent nothing for this
	// long (default 10s: ten missed heartbeats). A worker whose connection
	// breaks is removed at once.
	HeartbeatTimeout time.Duration
	// HeartbeatInterval is how often workers report when idle (default 1s).
	HeartbeatInterval time.Duration
	// Credentials secure the server; default plaintext.
	Credentials credentials.TransportCredentials
	// ServerOptions are added to the gRPC server's options: those of
	// security.Config.ServerOptions (mutual TLS, token check).
	ServerOptions []grpc.ServerOption
	// Insecure allows serving plaintext beyond loopback: without it, a
	// Listen address that is not loopback needs Credentials or TLS in
	// ServerOptions.
	Insecure bool
	// MaxMessageBytes bounds the messages the server accepts (default
	// 256 MiB); a larger one fails its stream.
	MaxMessageBytes int
	// BatchSize bounds the instructions sent in one message (default
	// 20,000).
	BatchSize int
	// BatchInterval is the shortest time between two messages to a worker
	// or client while there is a lot to say: what is decided meanwhile
	// goes in one message. A message after a quiet spell goes at once.
	// Default 1ms; negative: no wait.
	BatchInterval time.Duration
	// LogSize is the number of task transitions kept (default 100,000).
	LogSize int
	// WorkerLogs is how many log records are kept per worker, and kept
	// after it left (default 10,000).
	WorkerLogs int
	// LogRecords is how many of its own log records the scheduler keeps
	// for Client.SchedulerLogs (default 10,000).
	LogRecords int
	// TopicEvents is how many events are kept per topic of
	// Client.LogEvent (default 10,000).
	TopicEvents int
	// ExitWait is how long the scheduler waits, when the connection of a
	// supervised worker breaks, for its supervisor to say why the process
	// ended (default 2s; negative: not at all). The cause is then the
	// reason the worker was removed, which KilledWorkerError reports.
	ExitWait time.Duration
	// Registry runs Client.RunOnScheduler calls (default graph.Default()).
	Registry *graph.Registry
	// Plugins are called as tasks change state and workers come and go.
	Plugins []Plugin
	// DialOptions reach the workers (to set worker plugins up); default
	// plaintext.
	DialOptions []grpc.DialOption
	// MetricsListen is where to serve Prometheus metrics on /metrics
	// (host:port, port 0 for a free one); empty: not served (Metrics
	// still returns them).
	MetricsListen string
	// DashboardListen is where to serve the dashboard: a live web page of
	// the workers, their memory, the progress of each kind of task, the
	// task stream and the scheduler's log, with its JSON under /api
	// (host:port, port 0 for a free one); empty: not served. It is
	// read-only.
	DashboardListen string
	// HTTPTLS serves the dashboard and /metrics over HTTPS when they
	// listen beyond loopback (the cluster's certificates:
	// security.Config.HTTPTLS); without it they are plain HTTP there, and
	// the scheduler warns that the network reaches them: task errors hold
	// values of input files. On loopback they are plain HTTP.
	HTTPTLS *tls.Config
	// NoWorkersTimeout is how long tasks wait for a worker while there is
	// none (the last one left, or none joined) before they fail with a
	// *scheduler.NoWorkersError naming the last workers and why they left
	// (default 1 minute; negative: wait for ever).
	NoWorkersTimeout time.Duration
	// Alerts holds the thresholds of the alerts the scheduler raises
	// (see package diagnostics/alert); zero fields take their defaults,
	// and a worker is late after five missed heartbeats (at most half
	// of HeartbeatTimeout).
	Alerts alert.Config
	// DashboardAddress is the dashboard's address as Info reports it:
	// by default where DashboardListen serves it. Set it when people reach
	// the dashboard another way, such as through a proxy (host:port, or a
	// URL).
	DashboardAddress string
	// Archive is a directory where the scheduler keeps the cluster's
	// telemetry in Parquet files that outlive it (see package
	// diagnostics/archive): the logs of the scheduler and of every worker
	// (with what worker processes wrote to their standard output and
	// error), events, one row per task run, transitions, and samples of
	// the memory, CPU, disks and network of every process. Empty: none.
	Archive string
	// ArchiveOptions tune the archive: archive.WithMaxBytes (1 GiB by
	// default), archive.WithFlushInterval (10s), and so on.
	ArchiveOptions []archive.Option
	// OpenTelemetry exports traces (a span per computation, task run and
	// transfer between workers), metrics and logs (the scheduler's and
	// the workers') to the providers given (otelshoal.WithTracerProvider
	// ...). The signals given none are exported over OTLP as the OTEL_*
	// environment variables say, and not at all when they say nothing,
	// or as an otlp.Export option given here says.
	OpenTelemetry []otelshoal.Option
}

// Server is a running scheduler.
type Server struct {
	cfg     Config
	logger  *slog.Logger
	id      string
	lis     net.Listener
	grpc    *grpc.Server
	hub     *diagnostics.Hub
	stop    chan struct{}
	wg      sync.WaitGroup
	ring    *logring.Ring
	peers   *conns.Pool
	subs    []*diagnostics.Subscription
	metrics *serverMetrics
	started time.Time
	tel     *telemetry
	archive *archive.Writer // nil without Config.Archive
	sampled archiveSampler  // used by the archive's sampler only
	alerts  alerts
	otel    *otelshoal.Exporter // nil when nothing is exported

	dash       *dashboard.Recorder // the task stream and progress, when the dashboard is served
	dashHTTP   *metrics.Server
	dashCancel context.CancelFunc // ends the dashboard's event streams

	// The recorders of the performance reports recording (under mu).
	reports []*dashboard.Recorder

	// The dashboard's last description of the workers (under mu).
	dashWorkersAt   time.Time
	dashWorkersLast []dashboard.Worker

	sysMu   sync.Mutex
	system  []dashboard.SystemSample // ring of historySize, sampled every second while the dashboard is served
	sysNext int

	mu        sync.Mutex
	state     *scheduler.State
	workers   map[string]*workerConn // by address
	clients   map[string]*clientConn // by id
	comps     map[string]*computation
	nclients  int
	ncompute  uint64
	owner     map[graph.Key]uint64
	published uint64
	trbuf     []scheduler.Transition
	evbuf     []diagnostics.Event
	runInputs []diagnostics.Transfer // of the TaskDone being handled, while tracing
	dirty     []*outbox
	closed    bool
	// The core's handling of events since the last system sample.
	handles    int64
	handleTime time.Duration
	handleMax  time.Duration
	changed    chan struct{}         // closed and replaced when workers come or go
	exits      map[string]workerExit // exits not yet claimed, by address or "pid:N"
	// earlyOutput is what processes wrote before their worker joined, by
	// "pid:N".
	earlyOutput map[string][]*wire.LogRecord
	exitWait    map[string]*exitWaiter // by address and "pid:N"
	gone        map[string]*goneWorker // by address
	goneOrder   []string
	topics      map[string][]*wire.TopicEvent
	datasets    map[string][]graph.Key
	plugins     []*wire.PluginRequest // worker plugins, in the order registered
}

// computation is one Submit of a client: a client of the scheduling core.
type computation struct {
	id      string // the core's client id: client id + "/" + the client's name for it
	name    string
	number  uint64
	client  *clientConn
	pending map[graph.Key]bool // keys not reported yet, while someone listens to events
	failed  string
}

// outbox queues messages for one stream.
type outbox struct {
	notify chan struct{}
	queued bool
}

func (o *outbox) wake() {
	select {
	case o.notify <- struct{}{}:
	default:
	}
}

// New starts a scheduler server.
func New(cfg Config) (*Server, error) {
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.Saturation <= 0 {
		cfg.Saturation = 4
	}
	if cfg.HeartbeatTimeout <= 0 {
		cfg.HeartbeatTimeout = 10 * time.Second
	}
	if cfg.NoWorkersTimeout == 0 {
		cfg.NoWorkersTimeout = time.Minute
	}
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = time.Second
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = 256 << 20
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 20_000
	}
	if cfg.BatchInterval == 0 {
		cfg.BatchInterval = pace.DefaultInterval
	}
	if cfg.Backlog == 0 {
		cfg.Backlog = 5 * time.Millisecond
	}
	if cfg.WorkerLogs <= 0 {
		cfg.WorkerLogs = logring.DefaultSize
	}
	if cfg.TopicEvents <= 0 {
		cfg.TopicEvents = 10_000
	}
	if cfg.ExitWait == 0 {
		cfg.ExitWait = 2 * time.Second
	}
	if cfg.Registry == nil {
		cfg.Registry = graph.Default()
	}
	if len(cfg.DialOptions) == 0 {
		cfg.DialOptions = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	}
	if !cfg.Insecure && cfg.Credentials == nil && len(cfg.ServerOptions) == 0 && !security.IsLoopback(cfg.Listen) {
		return nil, fmt.Errorf("scheduler: listen on %s: %w", cfg.Listen, security.ErrPlaintext)
	}
	hub := diagnostics.NewHub()
	otel, envErr := otelshoal.Start(context.Background(), hub, append([]otelshoal.Option{otlp.Export()},
		cfg.OpenTelemetry...)...)
	if envErr != nil {
		// The OTEL_* variables are the whole program's: one that Shoal
		// cannot follow does not keep the scheduler from running, as
		// options that are wrong do.
		var err error
		if otel, err = otelshoal.Start(context.Background(), hub, cfg.OpenTelemetry...); err != nil {
			return nil, fmt.Errorf("scheduler: %w", err)
		}
	}
	lis, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		otel.Shutdown(context.Background())
		return nil, fmt.Errorf("scheduler: listen on %s: %w", cfg.Listen, err)
	}
	var idb [6]byte
	rand.Read(idb[:])
	id := "scheduler-" + hex.EncodeToString(idb[:])
	aw, self, err := openArchive(cfg, id)
	if err != nil {
		lis.Close()
		otel.Shutdown(context.Background())
		return nil, err
	}
	var next slog.Handler
	if cfg.Logger != nil {
		next = cfg.Logger.Handler()
	}
	if h := otel.LogHandler(); h != nil && next != nil {
		next = slog.NewMultiHandler(next, h)
	} else if h != nil {
		next = h
	}
	if aw != nil {
		next = aw.LogHandler(next, archive.ProcessScheduler, "")
	}
	ring := logring.New(cfg.LogRecords, false)
	logger := slog.New(ring.Handler(next, slog.LevelInfo))
	s := &Server{
		cfg:         cfg,
		started:     time.Now(),
		logger:      logger.With("scheduler", lis.Addr().String()),
		ring:        ring,
		peers:       conns.New(cfg.DialOptions...),
		exits:       map[string]workerExit{},
		earlyOutput: map[string][]*wire.LogRecord{},
		exitWait:    map[string]*exitWaiter{},
		gone:        map[string]*goneWorker{},
		topics:      map[string][]*wire.TopicEvent{},
		datasets:    map[string][]graph.Key{},
		id:          id,
		tel:         newTelemetry(),
		archive:     aw,
		lis:         lis,
		hub:         hub,
		otel:        otel,
		stop:        make(chan struct{}),
		workers:     map[string]*workerConn{},
		clients:     map[string]*clientConn{},
		comps:       map[string]*computation{},
		changed:     make(chan struct{}),
		state: scheduler.New(scheduler.Config{Saturation: cfg.Saturation, AllowedFailures: cfg.AllowedFailures,
			LogSize: cfg.LogSize, Steal: !cfg.NoStealing, Backlog: max(cfg.Backlog, 0),
			NoWorkersTimeout: max(cfg.NoWorkersTimeout, 0)}),
	}
	s.alerts.m = alert.New(alertConfig(cfg))
	opts := []grpc.ServerOption{grpc.MaxRecvMsgSize(cfg.MaxMessageBytes), grpc.MaxSendMsgSize(cfg.MaxMessageBytes)}
	if cfg.Credentials != nil {
		opts = append(opts, grpc.Creds(cfg.Credentials))
	}
	opts = append(opts, cfg.ServerOptions...)
	s.grpc = grpc.NewServer(opts...)
	wire.RegisterSchedulerServer(s.grpc, &service{s: s})
	s.metrics = newServerMetrics(s)
	if cfg.MetricsListen != "" {
		ms, err := metrics.Serve(cfg.MetricsListen, s.metrics.reg, cfg.HTTPTLS, s.logger)
		if err != nil {
			s.metrics.close()
			lis.Close()
			s.closeArchive()
			otel.Shutdown(context.Background())
			return nil, fmt.Errorf("scheduler: %w", err)
		}
		s.metrics.http = ms
	}
	if cfg.DashboardListen != "" {
		if err := s.serveDashboard(); err != nil {
			s.metrics.close()
			lis.Close()
			s.closeArchive()
			otel.Shutdown(context.Background())
			return nil, fmt.Errorf("scheduler: %w", err)
		}
	}
	if envErr != nil {
		s.logger.Warn("not exporting to OpenTelemetry as the OTEL_* variables say", "reason", envErr)
	}
	s.subs = append(s.subs, s.hub.Subscribe(s.observe))
	if aw != nil {
		aw.Attach(s.hub)
		self.Store(s)
	}
	s.startPlugins()
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		if err := s.grpc.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			s.logger.Error("scheduler server stopped", "error", err)
		}
	}()
	go s.watchHeartbeats()
	s.logger.Info("scheduler started", "id", s.id, "metrics", s.MetricsAddress(), "dashboard", s.DashboardAddress(),
		"archive", s.ArchiveDir())
	return s, nil
}

// Address returns the host:port the server listens on.
func (s *Server) Address() string { return s.lis.Addr().String() }

// ID returns the server's random identity.
func (s *Server) ID() string { return s.id }

// Events returns the hub on which the server publishes task transitions
// (with the worker that ran the task, its duration and result size),
// computations started and finished, and workers that come and go: the
// same events as the in-process executor, so progress bars and recorders
// work with a cluster too.
func (s *Server) Events() *diagnostics.Hub { return s.hub }

// Story returns the recorded transitions of keys, oldest first.
func (s *Server) Story(keys ...graph.Key) []scheduler.Transition {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.Story(keys...)
}

// Dump returns the scheduling core's state as JSON.
func (s *Server) Dump() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.Dump()
}

// NumTasks returns how many tasks the scheduler knows.
func (s *Server) NumTasks() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.NumTasks()
}

// WaitForWorkers waits until at least n workers are connected.
func (s *Server) WaitForWorkers(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		have, ch, closed := len(s.workers), s.changed, s.closed
		s.mu.Unlock()
		if have >= n {
			return nil
		}
		if closed {
			return errors.New("scheduler is closed")
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %d workers (have %d): %w", n, have, ctx.Err())
		case <-ch:
		}
	}
}

// Close asks the workers to shut down, waits for them to go (until ctx is
// done), then stops serving, and flushes what it exported to
// OpenTelemetry (until ctx is done at most).
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for _, wc := range s.workers {
		wc.shutdown = true
		wc.box.wake()
	}
	s.signalChange()
	s.mu.Unlock()
	for {
		s.mu.Lock()
		n, ch := len(s.workers), s.changed
		s.mu.Unlock()
		if n == 0 {
			break
		}
		select {
		case <-ctx.Done():
		case <-ch:
			continue
		}
		break
	}
	close(s.stop)
	s.closeDashboard()
	s.grpc.Stop()
	s.wg.Wait()
	for _, sub := range s.subs {
		sub.Close()
	}
	s.hub.Close()
	s.peers.Close()
	s.metrics.close()
	s.logger.Info("scheduler closed")
	err := s.closeArchive()
	if oerr := s.otel.Shutdown(ctx); oerr != nil {
		s.logger.Warn("could not flush what was exported to OpenTelemetry", "reason", oerr)
	}
	return err
}

func (s *Server) signalChange() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Server) watchHeartbeats() {
	defer s.wg.Done()
	every := s.cfg.HeartbeatTimeout / 4
	if s.cfg.NoWorkersTimeout > 0 {
		every = min(every, s.cfg.NoWorkersTimeout/4)
	}
	t := time.NewTicker(max(every, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			s.mu.Lock()
			var sent map[string][]graph.Key // what the late workers were sent to run
			for _, wc := range s.workers {
				if now.Sub(wc.lastSeen) > 2*s.cfg.HeartbeatInterval {
					if sent == nil {
						sent = map[string][]graph.Key{}
					}
					sent[wc.addr] = s.state.Running(wc.addr)
				}
				if now.Sub(wc.lastSeen) > s.cfg.HeartbeatTimeout {
					s.logger.Warn("worker silent for too long; removing it", "worker", wc.addr,
						"silent", now.Sub(wc.lastSeen).Round(time.Millisecond), "timeout", s.cfg.HeartbeatTimeout)
					wc.lost = fmt.Sprintf("no heartbeat for %v", s.cfg.HeartbeatTimeout)
					wc.cancel()
				}
			}
			if len(s.workers) == 0 && s.cfg.NoWorkersTimeout > 0 {
				s.handle(&scheduler.Tick{Meta: scheduler.Meta{Time: now}})
				s.flush()
			}
			s.mu.Unlock()
			s.alert(now, &alert.Tick{Sent: sent})
		}
	}
}

// handle feeds events to the core and queues its instructions. Called with
// s.mu held.
func (s *Server) handle(evs ...scheduler.Event) {
	start := time.Now()
	ins := s.state.Handle(evs...)
	took := time.Since(start)
	s.metrics.handle.Observe(took.Seconds())
	s.handles++
	s.handleTime += took
	s.handleMax = max(s.handleMax, took)
	if s.hub.Active() {
		s.publishTransitions(evs, ins)
	} else {
		s.published = s.state.TransitionCount()
	}
	for _, in := range ins {
		switch in := in.(type) {
		case *scheduler.Run:
			wc := s.workers[in.Worker]
			if wc == nil {
				continue
			}
			t := in.Task
			deps := make([]string, len(t.Deps))
			for i, d := range t.Deps {
				deps[i] = string(d)
			}
			var comp uint64
			if c := s.comps[in.Client]; c != nil {
				comp = c.number
			}
			wc.push(&wire.Instruction{Op: &wire.Instruction_Run{Run: &wire.RunTask{Id: in.ID, Key: string(t.Key),
				Op: t.Op, Params: t.Params, Deps: deps, Resources: t.Resources, Computation: comp}}})
			s.touch(&wc.box)
		case *scheduler.Fetch:
			if wc := s.workers[in.To]; wc != nil {
				wc.push(&wire.Instruction{Op: &wire.Instruction_Fetch{Fetch: &wire.FetchKey{Key: string(in.Key),
					From: append([]string(nil), in.From...), Size: in.Size}}})
				s.touch(&wc.box)
			}
		case *scheduler.Release:
			for _, w := range in.Workers {
				if wc := s.workers[w]; wc != nil {
					wc.push(&wire.Instruction{Op: &wire.Instruction_Release{Release: &wire.ReleaseKey{Key: string(in.Key)}}})
					s.touch(&wc.box)
				}
			}
		case *scheduler.CancelRun:
			if in.Steal {
				s.metrics.steals.Inc()
			}
			if wc := s.workers[in.Worker]; wc != nil {
				wc.push(&wire.Instruction{Op: &wire.Instruction_Cancel{Cancel: &wire.CancelTask{Key: string(in.Key),
					Steal: in.Steal}}})
				s.touch(&wc.box)
			}
		case *scheduler.ReportResult:
			if c := s.comps[in.Client]; c != nil {
				c.client.results = append(c.client.results, &wire.KeyResult{Computation: c.name, Key: string(in.Key),
					Index: int32(in.Index), Workers: append([]string(nil), in.Workers...), Size: in.Size})
				s.touch(&c.client.box)
				s.reported(c, in.Key, "")
			}
		case *scheduler.ReportError:
			if c := s.comps[in.Client]; c != nil {
				c.client.errors = append(c.client.errors, &wire.KeyError{Computation: c.name, Key: string(in.Key),
					Index: int32(in.Index), Error: wire.EncodeError(in.Err)})
				s.touch(&c.client.box)
				s.reported(c, in.Key, in.Err.Error())
			}
		}
	}
}

// touch marks an outbox to wake once the current events are handled.
func (s *Server) touch(o *outbox) {
	if !o.queued {
		o.queued = true
		s.dirty = append(s.dirty, o)
	}
}

// flush wakes the senders of the outboxes that got messages. Called with
// s.mu held, after handle.
func (s *Server) flush() {
	for _, o := range s.dirty {
		o.queued = false
		o.wake()
	}
	clear(s.dirty)
	s.dirty = s.dirty[:0]
}

// reported notes that a computation got the answer for k, and publishes
// its end when it has them all.
func (s *Server) reported(c *computation, k graph.Key, err string) {
	if c.pending == nil {
		return
	}
	delete(c.pending, k)
	if err != "" && c.failed == "" {
		c.failed = err
	}
	if len(c.pending) == 0 {
		c.pending = nil
		s.hub.Publish(diagnostics.Event{Kind: diagnostics.ComputeFinished, Compute: c.number, Err: c.failed})
	}
}

func now() scheduler.Meta { return scheduler.Meta{Time: time.Now()} }

// publishTransitions publishes the transitions made since the last call.
// Called with s.mu held.
func (s *Server) publishTransitions(evs []scheduler.Event, ins []scheduler.Instruction) {
	s.trbuf = s.state.TransitionsSince(s.published, s.trbuf[:0])
	s.published = s.state.TransitionCount()
	s.evbuf = s.evbuf[:0]
	var ran graph.Key
	var worker string
	var start time.Time
	var dur time.Duration
	var size int64
	if len(evs) == 1 {
		switch ev := evs[0].(type) {
		case *scheduler.TaskFinished:
			ran, worker, start, dur, size = ev.Key, ev.Worker, ev.Start, ev.Duration, ev.Size
		case *scheduler.TaskFailed:
			ran, worker, start, dur = ev.Key, ev.Worker, ev.Start, ev.Duration
		}
	}
	next := 0 // the next Run instruction: they come in the order the tasks started
	for i := range s.trbuf {
		tr := &s.trbuf[i]
		ev := diagnostics.Event{Time: tr.Time, Kind: diagnostics.TaskTransition, Compute: s.owner[tr.Key],
			Key: tr.Key, Prefix: tr.Key.Prefix(), From: tr.From.String(), To: tr.To.String(), Stimulus: tr.Stimulus}
		if tr.To == scheduler.Processing {
			for j := next; j < len(ins); j++ {
				if r, ok := ins[j].(*scheduler.Run); ok && r.Task.Key == tr.Key {
					ev.Worker, next = r.Worker, j+1
					break
				}
			}
		}
		if tr.Key == ran && (tr.From == scheduler.Processing || tr.From == scheduler.Cancelled) {
			ev.Worker, ev.Start, ev.Duration, ev.Inputs = worker, start, dur, s.runInputs
			if tr.To == scheduler.Memory {
				ev.Bytes = size
			}
		}
		if tr.To == scheduler.Erred {
			if ti, ok := s.state.Task(tr.Key); ok {
				ev.Err, ev.Op = ti.Error, ti.Op
			}
		}
		if tr.To == scheduler.Forgotten && s.owner != nil {
			delete(s.owner, tr.Key)
		}
		s.evbuf = append(s.evbuf, ev)
	}
	s.hub.Publish(s.evbuf...)
}

// observe takes the server's events in for its metrics, its alerts and
// its dashboard: one subscriber for all, so that each event is queued
// once.
func (s *Server) observe(evs []diagnostics.Event) {
	s.metrics.countTransitions(evs)
	s.alertEvents(evs)
	if s.dash != nil {
		s.dash.Record(evs)
	}
}

// invalid is the error for a malformed message: the stream ends with it,
// the server goes on.
func invalid(format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, format, args...)
}

// diffRegistries lists how two registries differ, or nil.
func diffRegistries(a *wire.Registry, aName string, b *wire.Registry, bName string) []string {
	if a.GetFingerprint() == b.GetFingerprint() && a.GetFingerprint() != "" {
		return nil
	}
	diffs := graph.DiffSignatures(a.GetSignatures(), b.GetSignatures())
	if len(diffs) == 0 && a.GetFingerprint() != b.GetFingerprint() {
		diffs = []string{fmt.Sprintf("fingerprints differ: %q on %s, %q on %s", a.GetFingerprint(), aName,
			b.GetFingerprint(), bName)}
	}
	r := strings.NewReplacer("registered here", "registered on "+aName, "missing here", "missing on "+aName,
		"on the other side", "on "+bName, " here,", " on "+aName+",")
	for i, d := range diffs {
		diffs[i] = r.Replace(d)
	}
	return diffs
}
