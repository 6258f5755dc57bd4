// Package worker is the worker process of a Shoal cluster: it connects to
// the scheduler, runs the tasks it is given on a pool of goroutines, holds
// their values (spilling the least recently used to disk beyond a memory
// target), serves them to peers and clients over Arrow Flight, and fetches
// the inputs it lacks from its peers.
//
// Its logic is the pure state machine State; Worker carries out State's
// instructions and feeds it what happens.
package worker

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/distributed/internal/conns"
	"github.com/shoal-data/shoal/distributed/internal/flightdata"
	"github.com/shoal-data/shoal/distributed/internal/metrics"
	"github.com/shoal-data/shoal/distributed/internal/pace"
	"github.com/shoal-data/shoal/distributed/internal/procmem"
	"github.com/shoal-data/shoal/distributed/security"
	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/internal/dirlock"
	"github.com/shoal-data/shoal/internal/logring"
	"github.com/shoal-data/shoal/internal/spillfile"
)

// Config describes a worker. Only Scheduler is required.
type Config struct {
	// Scheduler is the address (host:port) of the scheduler.
	Scheduler string
	// Listen is the address the worker serves Flight on; default
	// "127.0.0.1:0" (loopback, any free port).
	Listen string
	// Name names the worker in logs and task restrictions; default its
	// address.
	Name string
	// Threads is how many tasks run at once; default runtime.GOMAXPROCS(0).
	Threads int
	// MemoryLimit is the memory the worker may use, in bytes; 0 means no
	// limit. Values beyond TargetFraction of it are spilled to disk.
	MemoryLimit int64
	// TargetFraction of MemoryLimit above which held values spill to disk
	// (default 0.6).
	TargetFraction float64
	// PauseFraction of MemoryLimit: when the process uses more, the
	// worker starts no new tasks until it uses less (default 0.8; negative
	// never pauses). The nanny's terminate threshold (0.95) is above it.
	PauseFraction float64
	// MemoryInterval is how often the worker measures its process memory
	// against the pause threshold (default 100ms).
	MemoryInterval time.Duration
	// LocalDir is where the worker makes its own directory for spill files
	// and ops' scratch files, removed when it closes; default os.TempDir().
	LocalDir string
	// ScratchDir is the directory ops write scratch files to
	// (graph.Env.LocalDir), such as shuffle shards; default the worker's own
	// directory. Workers on one machine that share it (as those of a
	// LocalCluster do) read each other's shuffle shards from it, so that a
	// shuffle can run across them; workers that do not share one can only
	// run shuffles whose inputs and outputs are on one worker.
	ScratchDir string
	// Resources are abstract resources the worker offers, such as GPU=1.
	Resources map[string]float64
	// Nanny is the address of the nanny supervising this worker, if any.
	Nanny string
	// Supervised says a nanny (or the LocalCluster that started the
	// process) reports to the scheduler why the process ends, so that the
	// scheduler waits for that cause when the worker's connection breaks.
	Supervised bool
	// Registry holds the ops the worker runs; default graph.Default().
	Registry *graph.Registry
	// Logger is where the worker logs; by default nowhere. The worker also
	// keeps its last LogRing records (default 10,000) and sends those of
	// level Info and above to the scheduler as they happen.
	Logger  *slog.Logger
	LogRing int
	// ServerCredentials secure the worker's Flight server; DialOptions are
	// used to reach the scheduler and the peers. Both default to
	// plaintext.
	ServerCredentials credentials.TransportCredentials
	DialOptions       []grpc.DialOption
	// ServerOptions are added to the options of the worker's gRPC server
	// (security.Config.ServerOptions: mutual TLS, token check).
	ServerOptions []grpc.ServerOption
	// Insecure allows serving plaintext beyond loopback: without it, a
	// Listen address that is not loopback needs ServerCredentials or TLS
	// in ServerOptions.
	Insecure bool
	// HeartbeatInterval is how often the worker reports its memory when it
	// has nothing else to say (default 1s).
	HeartbeatInterval time.Duration
	// BatchInterval is the shortest time between two reports to the
	// scheduler while tasks finish in quick succession: what finishes
	// meanwhile goes in one message. A report after a quiet spell goes at
	// once. Default 1ms; negative: no wait.
	BatchInterval time.Duration
	// MetricsListen is where to serve Prometheus metrics on /metrics
	// (host:port, port 0 for a free one); empty: not served.
	MetricsListen string
	// HTTPTLS serves /metrics over HTTPS when it listens beyond loopback
	// (security.Config.HTTPTLS); without it /metrics is plain HTTP there,
	// and the worker warns that the network reaches it.
	HTTPTLS *tls.Config
	// InProcess says the worker shares its process with others (a test
	// cluster): its metrics then leave out the process's own.
	InProcess bool
	// DeathTimeout is how long the worker keeps trying to reach a
	// scheduler it lost, or never reached, before it gives up (default 60s).
	DeathTimeout time.Duration
	// NoProfile turns the worker's CPU profiler off. By default the
	// worker samples the CPU of its tasks continuously (see
	// diagnostics.Profiler) and sends the windows of samples, ProfileWindow
	// long (default 5s), to the scheduler with its heartbeats.
	NoProfile     bool
	ProfileWindow time.Duration
}

// Worker is a running worker.
type Worker struct {
	cfg Config
	// dirLock is held while the worker runs, so that later workers know
	// its directory is in use (see dirlock.Sweep).
	dirLock *os.File
	logger  *slog.Logger
	ring    *logring.Ring
	lis     net.Listener
	grpc    *grpc.Server
	peers   *conns.Pool
	env     *graph.Env
	addr    string
	dir     string

	baseCtx    context.Context
	baseCancel context.CancelFunc
	wg         sync.WaitGroup // tasks, fetches, the server

	mu         sync.Mutex
	state      *State
	store      store
	running    map[uint64]runningTask // by Execute.Seq
	epoch      uint64
	outDone    []*wire.TaskDone
	outMiss    []*wire.MissingKey
	notify     chan struct{}
	spilling   bool
	memDirty   bool  // report memory in the next batch
	pong       int64 // the scheduler's ping, to send back
	overTarget bool  // managed memory was above the target at the last check
	closed     bool

	spillTarget int64     // the store's limit when memory is not short
	freedAt     time.Time // when memory was last given back to the system
	stuck       int       // checks paused with nothing to free and no task running

	plugins    map[string]Plugin
	pluginList []Plugin // sorted by name

	metrics *workerMetrics
	tel     telemetry
}

// ErrRefused wraps the scheduler's refusal of a worker.
var ErrRefused = errors.New("refused by the scheduler")

// RefusedError says why the scheduler refused the worker.
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

func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// New starts a worker's Flight server. Run connects it to the scheduler.
func New(cfg Config) (*Worker, error) {
	if cfg.Threads <= 0 {
		cfg.Threads = runtime.GOMAXPROCS(0)
	}
	if cfg.TargetFraction <= 0 || cfg.TargetFraction > 1 {
		cfg.TargetFraction = 0.6
	}
	if cfg.PauseFraction == 0 {
		cfg.PauseFraction = 0.8
	}
	if cfg.MemoryInterval <= 0 {
		cfg.MemoryInterval = 100 * time.Millisecond
	}
	if cfg.Registry == nil {
		cfg.Registry = graph.Default()
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = time.Second
	}
	if cfg.BatchInterval == 0 {
		cfg.BatchInterval = pace.DefaultInterval
	}
	if cfg.DeathTimeout <= 0 {
		cfg.DeathTimeout = 60 * time.Second
	}
	ring := logring.New(cfg.LogRing, true)
	var next slog.Handler
	if cfg.Logger != nil {
		next = cfg.Logger.Handler()
	}
	if !cfg.Insecure && cfg.ServerCredentials == nil && len(cfg.ServerOptions) == 0 && !security.IsLoopback(cfg.Listen) {
		return nil, fmt.Errorf("worker: listen on %s: %w", cfg.Listen, security.ErrPlaintext)
	}
	lis, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("worker: listen on %s: %w", cfg.Listen, err)
	}
	addr := lis.Addr().String()
	if cfg.Name == "" {
		cfg.Name = addr
	}
	base := cfg.LocalDir
	if base == "" {
		base = os.TempDir()
	}
	removed, sweepErr := dirlock.Sweep(filepath.Join(base, "shoal-worker-*-*"))
	dir, err := os.MkdirTemp(base, DirPattern(os.Getpid()))
	if err != nil {
		lis.Close()
		return nil, fmt.Errorf("worker %s: make local directory in %s: %w", addr, base, err)
	}
	dirLock, err := dirlock.Lock(dir)
	if err != nil {
		lis.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("worker %s: lock local directory %s: %w", addr, dir, err)
	}
	w := &Worker{cfg: cfg, ring: ring, lis: lis, addr: addr, dir: dir, dirLock: dirLock, running: map[uint64]runningTask{},
		notify: make(chan struct{}, 1), state: NewState(cfg.Threads)}
	w.logger = slog.New(ring.Handler(next, slog.LevelInfo)).With("worker", addr)
	if cfg.Name != addr {
		w.logger = w.logger.With("name", cfg.Name)
	}
	if len(removed) > 0 || sweepErr != nil {
		w.logger.Info("removed the directories of workers that were killed", "paths", removed, "error", sweepErr)
	}
	ring.OnQueue(w.wake)
	w.startTelemetry()
	w.baseCtx, w.baseCancel = context.WithCancel(context.Background())
	scratch := cfg.ScratchDir
	if scratch == "" {
		scratch = dir
	}
	w.env = &graph.Env{Registry: cfg.Registry, Logger: w.logger, Worker: addr, LocalDir: scratch, Peers: peerFiles{w}}
	var limit int64
	if cfg.MemoryLimit > 0 {
		limit = int64(float64(cfg.MemoryLimit) * cfg.TargetFraction)
	}
	w.store.init(limit, dir, cfg.Registry, w.logger)
	w.spillTarget = limit
	if above := w.pauseAbove(); above > 0 && !cfg.InProcess {
		// The Go runtime collects harder as the heap nears the pause
		// threshold, before the worker has to pause.
		debug.SetMemoryLimit(above)
	}
	dial := cfg.DialOptions
	if len(dial) == 0 {
		dial = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	}
	w.cfg.DialOptions = dial
	w.peers = conns.New(append(flightdata.DialOptions(), dial...)...)
	opts := flightdata.ServerOptions()
	if cfg.ServerCredentials != nil {
		opts = append(opts, grpc.Creds(cfg.ServerCredentials))
	}
	opts = append(opts, cfg.ServerOptions...)
	w.grpc = grpc.NewServer(opts...)
	flight.RegisterFlightServiceServer(w.grpc, &flightServer{w: w})
	wire.RegisterWorkerServer(w.grpc, &infoServer{w: w})
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		if err := w.grpc.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			w.logger.Error("flight server stopped", "error", err)
		}
	}()
	w.metrics = newWorkerMetrics(w, !cfg.InProcess)
	if cfg.MetricsListen != "" {
		ms, err := metrics.Serve(cfg.MetricsListen, w.metrics.reg, cfg.HTTPTLS, w.logger)
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("worker %s: %w", addr, err)
		}
		w.metrics.http = ms
	}
	if cfg.MemoryLimit > 0 && cfg.PauseFraction > 0 {
		w.wg.Add(1)
		go w.watchMemory()
	}
	w.logger.Info("worker started", "threads", cfg.Threads, "memory_limit", cfg.MemoryLimit,
		"spill_above", limit, "pause_above", w.pauseAbove(), "local_dir", dir, "scratch_dir", scratch,
		"metrics", w.MetricsAddress())
	return w, nil
}

// pauseAbove is the process memory in bytes above which the worker pauses,
// or 0.
func (w *Worker) pauseAbove() int64 {
	if w.cfg.MemoryLimit <= 0 || w.cfg.PauseFraction <= 0 {
		return 0
	}
	return int64(w.cfg.PauseFraction * float64(w.cfg.MemoryLimit))
}

// watchMemory pauses the worker while its process uses more memory than
// the pause threshold.
func (w *Worker) watchMemory() {
	defer w.wg.Done()
	t := time.NewTicker(w.cfg.MemoryInterval)
	defer t.Stop()
	for {
		select {
		case <-w.baseCtx.Done():
			return
		case <-t.C:
			w.checkMemory(procmem.RSS())
		}
	}
}

// stuckChecks is how many memory checks in a row a paused worker may hold
// nothing it could free and run no task before it fails the tasks waiting
// to start.
const stuckChecks = 5

// checkMemory pauses or resumes the worker for a process memory of rss
// bytes, and logs the change with the numbers. Above the pause threshold
// it first frees what it can: the Go runtime gives its free memory back
// to the system (for a worker with a process of its own, at most once a
// second), and values are spilled until the process would be under the
// threshold. A worker paused with nothing left to free and no task
// running would wait for ever: after stuckChecks checks it fails the
// tasks waiting to start, saying why.
func (w *Worker) checkMemory(rss int64) {
	above := w.pauseAbove()
	if above <= 0 {
		return
	}
	if rss >= above && !w.cfg.InProcess && time.Since(w.freedAt) >= time.Second {
		debug.FreeOSMemory()
		w.freedAt = time.Now()
		rss = procmem.RSS()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	over := rss >= above
	if over {
		w.relieve(rss - above + above/10)
	} else if w.store.limit != w.spillTarget {
		w.store.limit = w.spillTarget
	}
	if over && w.state.Paused() {
		w.checkStuck(rss, above)
	} else {
		w.stuck = 0
	}
	if over == w.state.Paused() {
		return
	}
	attrs := []any{"process_memory", rss, "pause_threshold", above, "pause_fraction", w.cfg.PauseFraction,
		"memory_limit", w.cfg.MemoryLimit, "managed", w.store.managed, "spilled", w.store.spilled}
	if over {
		w.logger.Warn(fmt.Sprintf("pausing: process memory %s is above the pause threshold %s (%.2f of the %s limit); no new tasks start",
			procmem.Format(rss), procmem.Format(above), w.cfg.PauseFraction, procmem.Format(w.cfg.MemoryLimit)), attrs...)
	} else {
		w.logger.Info(fmt.Sprintf("resuming: process memory %s is below the pause threshold %s",
			procmem.Format(rss), procmem.Format(above)), attrs...)
	}
	w.handle(&Pause{Paused: over})
	w.wake() // report the memory at once, so the scheduler pauses placement too
	w.memDirty = true
}

// relieve lowers the spill target so that excess bytes of values go to
// disk. Called with w.mu held.
func (w *Worker) relieve(excess int64) {
	if w.spillTarget <= 0 || excess <= 0 {
		return // the worker does not spill
	}
	if target := max(w.store.managed-excess, 0); target < w.store.limit {
		w.store.limit = target
	}
	w.startSpill()
}

// checkStuck counts the checks at which the paused worker holds nothing
// it could spill and runs no task, and fails the tasks waiting to start
// after stuckChecks of them. Called with w.mu held.
func (w *Worker) checkStuck(rss, above int64) {
	if w.store.managed > 0 || w.spilling || w.state.Executing() > 0 {
		w.stuck = 0
		return
	}
	if w.stuck++; w.stuck < stuckChecks {
		return
	}
	w.stuck = 0
	err := fmt.Errorf("worker %s: paused with process memory %s above its pause threshold %s (%.2f of the %s limit) "+
		"while it holds no value it could spill and runs no task: the memory is not the tasks' (the Go runtime, "+
		"caches, leaks); raise the worker's memory limit or its pause fraction",
		w.addr, procmem.Format(rss), procmem.Format(above), w.cfg.PauseFraction, procmem.Format(w.cfg.MemoryLimit))
	w.logger.Error("failing the tasks waiting to start: paused with nothing to free", "process_memory", rss,
		"pause_threshold", above, "memory_limit", w.cfg.MemoryLimit, "error", err)
	w.handle(&FailReady{Err: err})
}

// Address returns the host:port the worker serves on.
func (w *Worker) Address() string { return w.addr }

// Name returns the worker's name.
func (w *Worker) Name() string { return w.cfg.Name }

// LocalDir returns the worker's own directory.
func (w *Worker) LocalDir() string { return w.dir }

// Logs returns the worker's last log records.
func (w *Worker) Logs() []logring.Record { return w.ring.Records() }

// Close stops the worker: running tasks are cancelled, the Flight server
// stops, and the local directory is removed.
func (w *Worker) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	w.baseCancel()
	w.grpc.Stop()
	w.wg.Wait()
	w.stopTelemetry()
	w.teardownPlugins()
	if w.metrics != nil {
		w.metrics.close()
	}
	w.peers.Close()
	w.mu.Lock()
	w.store.dropAll()
	w.mu.Unlock()
	err := os.RemoveAll(w.dir)
	if w.dirLock != nil {
		w.dirLock.Close()
	}
	if err != nil {
		return fmt.Errorf("worker %s: remove %s: %w", w.addr, w.dir, err)
	}
	w.logger.Info("worker closed")
	return nil
}

// errShutdown ends a session when the scheduler asks the worker to stop.
var errShutdown = errors.New("scheduler asked the worker to shut down")

// Run connects the worker to the scheduler and serves it until ctx is
// cancelled (it returns ctx's error), the scheduler asks it to shut down
// (nil), refuses it (a *RefusedError), or stays out of reach longer than
// DeathTimeout. A worker that loses its scheduler drops what it holds and
// connects again.
func (w *Worker) Run(ctx context.Context) error {
	conn, err := grpc.NewClient(w.cfg.Scheduler, append([]grpc.DialOption{
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(flightdata.MaxMessageBytes),
			grpc.MaxCallSendMsgSize(flightdata.MaxMessageBytes))}, w.cfg.DialOptions...)...)
	if err != nil {
		return fmt.Errorf("worker %s: scheduler %s: %w", w.addr, w.cfg.Scheduler, err)
	}
	defer conn.Close()
	client := wire.NewSchedulerClient(conn)
	lastContact := time.Now()
	backoff := 50 * time.Millisecond
	for {
		connected, err := w.session(ctx, client)
		if connected {
			lastContact = time.Now()
			backoff = 50 * time.Millisecond
		}
		w.resetAll()
		switch {
		case errors.Is(err, errShutdown):
			w.logger.Info("scheduler asked to shut down")
			return nil
		case errors.Is(err, ErrRefused):
			w.logger.Error("scheduler refused the worker", "scheduler", w.cfg.Scheduler, "error", err)
			return err
		case ctx.Err() != nil:
			return ctx.Err()
		}
		if time.Since(lastContact) > w.cfg.DeathTimeout {
			return fmt.Errorf("worker %s: scheduler %s out of reach for %v: %w", w.addr, w.cfg.Scheduler,
				w.cfg.DeathTimeout, err)
		}
		if connected {
			w.logger.Warn("lost the scheduler; reconnecting", "scheduler", w.cfg.Scheduler, "error", err)
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// session is one connection to the scheduler. connected tells whether the
// scheduler welcomed the worker.
func (w *Worker) session(ctx context.Context, client wire.SchedulerClient) (connected bool, err error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := client.WorkerStream(sctx)
	if err != nil {
		return false, err
	}
	reg := w.cfg.Registry
	err = stream.Send(&wire.WorkerUp{Msg: &wire.WorkerUp_Register{Register: &wire.RegisterWorker{
		Address: w.addr, Name: w.cfg.Name, Threads: int32(w.cfg.Threads), MemoryLimit: w.cfg.MemoryLimit,
		Resources: w.cfg.Resources, LocalDir: w.dir, Nanny: w.cfg.Nanny, Pid: int32(os.Getpid()),
		Supervised: w.cfg.Supervised || w.cfg.Nanny != "", MetricsAddress: w.MetricsAddress(),
		Registry: &wire.Registry{Fingerprint: reg.Fingerprint(), Signatures: reg.Signatures()},
	}}})
	if err != nil {
		return false, err
	}
	first, err := stream.Recv()
	if err != nil {
		return false, err
	}
	switch m := first.Msg.(type) {
	case *wire.WorkerDown_Refused:
		return false, &RefusedError{Reason: m.Refused.Reason, Differences: m.Refused.Differences}
	case *wire.WorkerDown_Welcome:
		w.tel.inputs.setOn(m.Welcome.OtelInputs)
	default:
		return false, fmt.Errorf("worker %s: scheduler sent %T before welcoming it", w.addr, first.Msg)
	}
	w.logger.Info("connected to the scheduler", "scheduler", w.cfg.Scheduler)
	w.mu.Lock()
	w.epoch = 0
	w.mu.Unlock()
	// The records logged so far reach the scheduler before any task runs,
	// so that even a worker that dies in its first task leaves them.
	if logs := w.drainLogs(); len(logs) > 0 {
		if err := stream.Send(&wire.WorkerUp{Msg: &wire.WorkerUp_Batch{Batch: &wire.WorkerBatch{Logs: logs}}}); err != nil {
			return true, err
		}
	}

	sendErr := make(chan error, 1)
	go func() { sendErr <- w.sendLoop(sctx, stream) }()
	for {
		msg, err := stream.Recv()
		if err != nil {
			cancel()
			<-sendErr
			return true, err
		}
		b, ok := msg.Msg.(*wire.WorkerDown_Batch)
		if !ok {
			continue
		}
		if err := w.apply(b.Batch); err != nil {
			cancel()
			<-sendErr
			return true, err
		}
	}
}

// sendLoop sends the worker's reports in batches: whatever is queued when
// the previous send ends, and a memory report every heartbeat.
func (w *Worker) sendLoop(ctx context.Context, stream wire.Scheduler_WorkerStreamClient) error {
	tick := time.NewTicker(w.cfg.HeartbeatInterval)
	defer tick.Stop()
	pacer := pace.New(w.cfg.BatchInterval)
	defer pacer.Stop()
	for {
		heartbeat := false
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-w.notify:
			if err := pacer.Wait(ctx); err != nil {
				return err
			}
		case <-tick.C:
			heartbeat = true
		}
		w.mu.Lock()
		b := &wire.WorkerBatch{Epoch: w.epoch, Done: w.outDone, MissingFrom: w.outMiss, Pong: w.pong}
		w.outDone, w.outMiss, w.pong = nil, nil, 0
		heartbeat = heartbeat || w.memDirty
		w.memDirty = false
		if heartbeat {
			b.Memory = &wire.Memory{Managed: w.store.managed, Spilled: w.store.spilled}
		}
		w.mu.Unlock()
		if heartbeat && !w.cfg.InProcess {
			// A worker sharing its process with others (a test cluster)
			// has no process memory of its own: the process's would
			// make the scheduler pause it for what others use.
			b.Memory.Process = procmem.RSS()
		}
		if heartbeat {
			w.heartbeat(b)
		}
		b.Logs = w.drainLogs()
		if err := stream.Send(&wire.WorkerUp{Msg: &wire.WorkerUp_Batch{Batch: b}}); err != nil {
			return err
		}
		pacer.Sent()
	}
}

// drainLogs takes the records queued for the scheduler.
func (w *Worker) drainLogs() []*wire.LogRecord {
	var out []*wire.LogRecord
	for _, r := range w.ring.Drain() {
		out = append(out, &wire.LogRecord{TimeUnixNano: r.Time.UnixNano(), Level: int32(r.Level),
			Message: r.Message, Attrs: r.Attrs})
	}
	return out
}

func (w *Worker) wake() {
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

// apply carries out a batch of the scheduler's instructions.
func (w *Worker) apply(b *wire.WorkerInstructions) error {
	evs := make([]Event, 0, len(b.Instructions)+1)
	now := time.Now()
	if b.Reset_ {
		evs = append(evs, &Reset{})
	}
	for _, in := range b.Instructions {
		switch x := in.Op.(type) {
		case *wire.Instruction_Run:
			r := x.Run
			deps := make([]graph.Key, len(r.Deps))
			for i, d := range r.Deps {
				deps[i] = graph.Key(d)
			}
			t := &graph.Task{Key: graph.Key(r.Key), Op: r.Op, Params: r.Params, Deps: deps}
			t.Resources = r.Resources
			evs = append(evs, &RunTask{ID: r.Id, Task: t, Computation: r.Computation, Time: now})
		case *wire.Instruction_Fetch:
			evs = append(evs, &FetchKey{Key: graph.Key(x.Fetch.Key), From: x.Fetch.From, Size: x.Fetch.Size})
		case *wire.Instruction_Release:
			evs = append(evs, &ReleaseKey{Key: graph.Key(x.Release.Key)})
		case *wire.Instruction_Cancel:
			evs = append(evs, &CancelTask{Key: graph.Key(x.Cancel.Key), Steal: x.Cancel.Steal})
		}
	}
	w.mu.Lock()
	if b.Ping != 0 {
		w.pong = b.Ping
		w.wake()
	}
	if b.Reset_ {
		w.epoch = b.Epoch
		w.outDone, w.outMiss = nil, nil
		w.logger.Warn("the scheduler reset this worker: dropping every value", "epoch", b.Epoch)
	}
	w.handle(evs...)
	w.mu.Unlock()
	if b.Shutdown {
		return errShutdown
	}
	return nil
}

// resetAll drops everything after the scheduler connection ends.
func (w *Worker) resetAll() {
	w.mu.Lock()
	w.handle(&Reset{})
	w.outDone, w.outMiss = nil, nil
	w.mu.Unlock()
}

// handle feeds events to the state machine and carries out its
// instructions. Called with w.mu held.
func (w *Worker) handle(evs ...Event) {
	now := time.Now()
	w.accountIdle(now)
	ins := w.state.HandleAt(now, evs...)
	report := false
	for _, in := range ins {
		switch in := in.(type) {
		case *Execute:
			w.transition(in.Task.Key, "waiting", "executing")
			w.start(in)
		case *StartFetch:
			w.startFetch(in)
		case *Store:
			w.store.put(in.Key, in.Value, in.Size)
		case *Drop:
			w.store.drop(in.Key)
			w.tel.inputs.drop(in.Key)
			w.transition(in.Key, "memory", "released")
		case *DropAll:
			w.store.dropAll()
			w.tel.reads.Forget()
			w.tel.inputs.reset()
		case *Abort:
			if r, ok := w.running[in.Seq]; ok {
				r.cancel()
			}
		case *Report:
			d := &wire.TaskDone{Key: string(in.Key), Id: in.ID, Size: in.Size, DurationNanos: int64(in.Duration),
				ReadBytes: w.tel.reads.Take(in.Key), OtelInputs: w.tel.inputs.take(in.Key)}
			if !in.Start.IsZero() {
				d.StartUnixNano = in.Start.UnixNano()
			}
			if in.Err != nil {
				d.Error = wire.EncodeError(in.Err)
				w.transition(in.Key, "executing", "error")
			} else if !in.Start.IsZero() {
				w.transition(in.Key, "executing", "memory")
			}
			w.outDone = append(w.outDone, d)
			report = true
		case *ReportMissing:
			w.outMiss = append(w.outMiss, &wire.MissingKey{Key: string(in.Key), From: in.From})
			report = true
		}
	}
	if report {
		w.wake()
	}
	over := w.store.overLimit()
	if over && !w.overTarget {
		w.logger.Info(fmt.Sprintf("spilling: managed memory %s is above the target %s (%.2f of the %s limit); writing the least recently used values to disk",
			procmem.Format(w.store.managed), procmem.Format(w.store.limit), w.cfg.TargetFraction, procmem.Format(w.cfg.MemoryLimit)),
			"managed", w.store.managed, "target", w.store.limit, "memory_limit", w.cfg.MemoryLimit, "spilled", w.store.spilled)
	}
	w.overTarget = over
	w.startSpill()
}

// startSpill starts writing values to disk when they are over the target
// and no spill runs. Called with w.mu held.
func (w *Worker) startSpill() {
	if w.store.overLimit() && !w.spilling && !w.closed {
		w.spilling = true
		w.wg.Add(1)
		go w.spill()
	}
}

// spill writes least recently used values to disk until the rest fit
// under the memory target.
func (w *Worker) spill() {
	defer w.wg.Done()
	w.mu.Lock()
	defer func() {
		w.spilling = false
		w.mu.Unlock()
	}()
	for w.store.overLimit() && !w.closed {
		victims := w.store.spillVictims()
		if len(victims) == 0 {
			return
		}
		vals := make([]any, len(victims))
		paths := make([]string, len(victims))
		for i, en := range victims {
			vals[i], paths[i] = en.value, en.path
		}
		w.mu.Unlock()
		errs := make([]error, len(victims))
		start := time.Now()
		var written int64
		for i, en := range victims {
			var tm spillfile.Timing
			tm, errs[i] = spillfile.WriteTimed(paths[i], vals[i], w.cfg.Registry)
			if errs[i] == nil {
				written += en.size
				w.spillMetrics(en.key, diagnostics.ActivitySpillWrite, diagnostics.ActivityEncode, en.size, tm)
				w.metrics.spillCount.WithLabelValues("write").Inc()
			}
		}
		w.metrics.spill.WithLabelValues("write").Add(float64(written))
		w.metrics.spillTime.WithLabelValues("write").Add(time.Since(start).Seconds())
		w.mu.Lock()
		if err := w.store.spillDone(victims, errs, w.addr); err != nil {
			return // logged; the values stay in memory
		}
	}
}

// value returns the value of k, reading it back from disk if it was
// spilled. ok is false when k is not held.
func (w *Worker) value(k graph.Key) (v any, ok bool, err error) {
	w.mu.Lock()
	en := w.store.get(k)
	if en == nil {
		w.mu.Unlock()
		return nil, false, nil
	}
	if en.state != onDisk {
		v := en.value
		w.mu.Unlock()
		return v, true, nil
	}
	path, size := en.path, en.size
	w.mu.Unlock()
	v, tm, err := spillfile.ReadTimed(path, w.cfg.Registry)
	if err == nil {
		w.metrics.spill.WithLabelValues("read").Add(float64(size))
		w.metrics.spillTime.WithLabelValues("read").Add(tm.Total.Seconds())
		w.metrics.spillCount.WithLabelValues("read").Inc()
		w.spillMetrics(k, diagnostics.ActivitySpillRead, diagnostics.ActivityDecode, size, tm)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		if cur := w.store.m[k]; cur != nil && cur.state != onDisk {
			return cur.value, true, nil // read back by someone else meanwhile
		}
		return nil, true, fmt.Errorf("worker %s: read spilled value of %q from %s: %w", w.addr, k, path, err)
	}
	w.store.loaded(en, v)
	return v, true, nil
}

// start runs a task on a new goroutine. Called with w.mu held.
// runningTask is a task the worker executes.
type runningTask struct {
	cancel context.CancelFunc
	key    graph.Key
	start  time.Time
}

func (w *Worker) start(ex *Execute) {
	ctx, cancel := context.WithCancel(w.baseCtx)
	w.running[ex.Seq] = runningTask{cancel: cancel, key: ex.Task.Key, start: time.Now()}
	t := ex.Task
	seq := ex.Seq
	comp := w.computation(ex.Computation)
	w.tel.inputs.started(t)
	inputs := make([]any, len(t.Deps))
	var spilled []int
	for i, d := range t.Deps {
		en := w.store.get(d)
		switch {
		case en == nil:
			// Dropped after the task became ready: it fails below.
		case en.state == onDisk:
			spilled = append(spilled, i)
		default:
			inputs[i] = en.value
		}
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		start := time.Now()
		prefix := t.Key.Prefix()
		tctx := graph.TaskContext(ctx, t, w.env, comp, w.tel.meter)
		v, err := w.runTask(w.tel.profiler.Begin(tctx, string(t.Key), prefix, comp), t, inputs, spilled)
		w.tel.profiler.End(ctx)
		dur := time.Since(start)
		cancel()
		var size int64
		w.metrics.compute.WithLabelValues(prefix).Add(dur.Seconds())
		if err == nil {
			size = graph.SizeOf(v)
			w.metrics.finished.WithLabelValues(prefix, "memory").Inc()
		} else if !errors.Is(err, context.Canceled) {
			w.metrics.finished.WithLabelValues(prefix, "erred").Inc()
			w.logger.Warn("task failed", "key", t.Key, "op", graph.DisplayOp(t), "error", err)
		}
		w.mu.Lock()
		delete(w.running, seq)
		w.addTimes(prefix, dur, start.Sub(ex.Ready), ex.Ready.Sub(ex.Received))
		if !w.closed {
			w.handle(&Executed{Key: t.Key, Seq: seq, Value: v, Size: size, Err: err, Start: start, Duration: dur})
		}
		w.tel.inputs.take(t.Key) // reported, or of a run from before a reset
		w.mu.Unlock()
	}()
}

func (w *Worker) runTask(ctx context.Context, t *graph.Task, inputs []any, spilled []int) (any, error) {
	for _, i := range spilled {
		v, ok, err := w.value(t.Deps[i])
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		inputs[i] = v
	}
	for i, d := range t.Deps {
		if inputs[i] == nil {
			if _, ok, _ := w.value(d); !ok {
				return nil, &wire.MissingDataError{Keys: []string{string(d)},
					Message: fmt.Sprintf("task %q: dependency %q was dropped from worker %s before the task ran (missing dependency data)", t.Key, d, w.addr)}
			}
		}
	}
	op, ok := w.cfg.Registry.Lookup(t.Op)
	if !ok {
		return nil, &graph.UnknownOpError{Op: t.Op, Key: t.Key}
	}
	return graph.RunOp(ctx, op, t, inputs, w.env)
}

// startFetch gets a value from a peer on a new goroutine. Called with w.mu
// held.
func (w *Worker) startFetch(f *StartFetch) {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		start := time.Now()
		w.tel.inFlight(1, f.Size)
		v, peer, err := w.fetchFrom(f.Key, f.From)
		w.tel.inFlight(-1, -f.Size)
		d := time.Since(start)
		var size int64
		w.metrics.transferTime.WithLabelValues(f.Key.Prefix()).Add(d.Seconds())
		if err == nil {
			size = graph.SizeOf(v)
			w.fetched(peer, f.Key, size, d)
			w.tel.inputs.fetchedValue(f.Key, peer, start, d, size)
		} else {
			w.logger.Warn("fetch failed", "key", f.Key, "from", f.From, "error", err)
		}
		w.mu.Lock()
		if !w.closed {
			w.handle(&Fetched{Key: f.Key, Seq: f.Seq, Value: v, Size: size, Err: err, Time: time.Now()})
		}
		w.mu.Unlock()
	}()
}

// fetchFrom gets the value of k from one of the workers from, and says
// which.
func (w *Worker) fetchFrom(k graph.Key, from []string) (any, string, error) {
	var errs []error
	ctx := w.peerContext(w.baseCtx, k.Prefix())
	for _, addr := range from {
		if addr == w.addr {
			continue
		}
		conn, err := w.peers.Get(addr)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		v, err := flightdata.Get(ctx, flight.NewFlightServiceClient(conn), string(k), w.cfg.Registry)
		if err == nil {
			return v, addr, nil
		}
		errs = append(errs, fmt.Errorf("from %s: %w", addr, err))
		if !flightdata.IsNotHeld(err) {
			break
		}
	}
	if len(errs) == 0 {
		return nil, "", fmt.Errorf("no peer holds it")
	}
	return nil, "", errors.Join(errs...)
}

// DirPattern matches the directories that the worker processes of pid
// make (filepath.Glob): whoever watches a process that ended removes
// what it left.
func DirPattern(pid int) string { return fmt.Sprintf("shoal-worker-%d-*", pid) }
