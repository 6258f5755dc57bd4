package distributed

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/distributed/security"
	"github.com/shoal-data/shoal/distributed/server"
	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/graph"
)

// LocalClusterOptions describe a cluster on this machine. The zero value
// gives two worker processes.
type LocalClusterOptions struct {
	// Workers is the number of workers (default 2).
	Workers int
	// ThreadsPerWorker is how many tasks each worker runs at once (default
	// GOMAXPROCS divided among the workers, at least 1).
	ThreadsPerWorker int
	// MemoryLimit is each worker's memory limit in bytes (0: none).
	MemoryLimit int64
	// InProcess runs the workers as goroutines of this process instead of
	// processes: faster to start, for tests. They share this process's
	// registry (or Registry).
	InProcess bool
	// LocalDir is where workers make their directories (default
	// os.TempDir()).
	LocalDir string
	// Resources every worker offers, such as {"GPU": 1}.
	Resources map[string]float64
	// Logger receives the scheduler's logs and the workers'; by default
	// nothing is logged.
	Logger *slog.Logger
	// WorkerLogLevel is the least level the worker processes log (default
	// Info).
	WorkerLogLevel slog.Level
	// Registry is the registry of in-process workers (default
	// graph.Default()). Worker processes use their own default registry:
	// the same program's.
	Registry *graph.Registry
	// Env is added to the environment of worker processes. Variables
	// set later with the Environ plugin are added by the nannies (see
	// Nanny).
	Env []string
	// Executable is the program started as workers (default the current
	// executable); it must call ServeIfWorker at the top of main.
	Executable string
	// Scheduler tunes the scheduler; its Listen defaults to a free
	// loopback port.
	Scheduler server.Config
	// HeartbeatInterval of the workers (default 1s).
	HeartbeatInterval time.Duration
	// Nanny restarts a worker process that dies, or that the nanny kills
	// for using more memory than TerminateFraction of MemoryLimit, and
	// serves the nanny's control service on a free loopback port, through
	// which the Environ plugin sets environment variables from the start
	// of the worker process (restarting it). Without it, a worker process
	// that dies stays dead (its tasks move to the others), and Environ
	// sets the variables inside the running worker. Every worker process
	// is watched either way: the scheduler learns why one ended (exit
	// code, signal, memory).
	Nanny bool
	// PauseFraction of MemoryLimit above which a worker process starts no
	// new tasks (default 0.8; in-process workers never pause);
	// TerminateFraction above which the nanny kills
	// it (default 0.95). TargetFraction above which it spills values to
	// disk (default 0.6).
	TargetFraction, PauseFraction, TerminateFraction float64
	// Security secures every connection of the cluster: mutual TLS with
	// the given certificates, and the token if it has one. Nil: mutual TLS
	// with temporary certificates (security.NewLocal), made for the
	// cluster and removed by Close. Plaintext only when asked for, with
	// &security.Config{Insecure: true}. Clients made with Client use it;
	// others need WithSecurity(lc.Security()).
	Security *security.Config
	// Metrics serves Prometheus metrics on /metrics from the scheduler and
	// every worker, each on a free loopback port (see Info's
	// MetricsAddress and WorkerInfo.Metrics).
	Metrics bool
	// NoDashboard turns the scheduler's dashboard off. By default the
	// scheduler serves it on a free loopback port, or on
	// Scheduler.DashboardListen when set; DashboardURL and Info say where.
	NoDashboard bool
	// Archive is the directory where the scheduler keeps the cluster's
	// telemetry in Parquet files that outlive it: the logs of every
	// process, events, one row per task run, transitions and metric
	// samples (see package diagnostics/archive; Scheduler.ArchiveOptions
	// tune it). Default: shoal-archive in LocalDir (or os.TempDir()), which
	// the cluster's later runs share, at most 1 GiB of files, the oldest
	// removed first. ArchiveDir says where.
	Archive string
	// NoArchive turns the archive off.
	NoArchive bool
}

// LocalCluster is a scheduler and workers on this machine, on loopback.
type LocalCluster struct {
	opts   LocalClusterOptions
	logger *slog.Logger
	sched  *server.Server
	shared string // the workers' shared scratch directory
	sec    security.Config
	tlsDir string // the temporary certificates', when the cluster made them
	procs  []*Nanny
	inproc []*inprocWorker
	closed bool
	mu     sync.Mutex
}

type inprocWorker struct {
	cancel context.CancelFunc
	done   chan error
}

// NewLocalCluster starts a scheduler and opts.Workers workers on loopback
// and waits until the workers have joined. Worker processes are this
// program started again (see ServeIfWorker), so that they have the same
// functions registered. Close stops them all.
func NewLocalCluster(ctx context.Context, opts LocalClusterOptions) (*LocalCluster, error) {
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.ThreadsPerWorker <= 0 {
		opts.ThreadsPerWorker = max(1, runtime.GOMAXPROCS(0)/opts.Workers)
	}
	logger := opts.Logger
	if logger == nil {
		logger = diagnostics.DiscardLogger()
	}
	scfg := opts.Scheduler
	if scfg.Logger == nil {
		scfg.Logger = logger
	}
	if scfg.HeartbeatInterval == 0 {
		scfg.HeartbeatInterval = opts.HeartbeatInterval
	}
	if opts.Metrics && scfg.MetricsListen == "" {
		scfg.MetricsListen = "127.0.0.1:0"
	}
	switch {
	case opts.NoDashboard:
		scfg.DashboardListen = ""
	case scfg.DashboardListen == "":
		scfg.DashboardListen = "127.0.0.1:0"
	}
	base := opts.LocalDir
	if base == "" {
		base = os.TempDir()
	}
	switch {
	case opts.NoArchive:
		scfg.Archive = ""
	case opts.Archive != "":
		scfg.Archive = opts.Archive
	case scfg.Archive == "":
		scfg.Archive = filepath.Join(base, "shoal-archive")
	}
	var sec security.Config
	var tlsDir string
	if opts.Security != nil {
		sec = *opts.Security
	} else {
		dir, err := os.MkdirTemp(base, "shoal-tls-*")
		if err != nil {
			return nil, fmt.Errorf("local cluster: make a directory for its certificates in %s: %w", base, err)
		}
		if sec, err = security.NewLocal(dir, false); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("local cluster: %w", err)
		}
		tlsDir = dir
	}
	sopts, err := sec.ServerOptions()
	if err == nil {
		var dopts []grpc.DialOption
		dopts, err = sec.DialOptions()
		scfg.ServerOptions = append(scfg.ServerOptions, sopts...)
		scfg.DialOptions = append(dopts, scfg.DialOptions...)
	}
	if err == nil && scfg.HTTPTLS == nil {
		scfg.HTTPTLS, err = sec.HTTPTLS() // beyond loopback, the dashboard is HTTPS
	}
	if err != nil {
		if tlsDir != "" {
			os.RemoveAll(tlsDir)
		}
		return nil, fmt.Errorf("local cluster: %w", err)
	}
	shared, err := os.MkdirTemp(base, "shoal-cluster-*")
	if err != nil {
		if tlsDir != "" {
			os.RemoveAll(tlsDir)
		}
		return nil, fmt.Errorf("local cluster: make the workers' shared directory in %s: %w", base, err)
	}
	sched, err := server.New(scfg)
	if err != nil {
		os.RemoveAll(shared)
		if tlsDir != "" {
			os.RemoveAll(tlsDir)
		}
		return nil, err
	}
	lc := &LocalCluster{opts: opts, logger: logger, sched: sched, shared: shared, sec: sec, tlsDir: tlsDir}
	spec := workerSpec{Scheduler: sched.Address(), Threads: opts.ThreadsPerWorker, MemoryLimit: opts.MemoryLimit,
		LocalDir: opts.LocalDir, ScratchDir: shared, Resources: opts.Resources, LogLevel: opts.WorkerLogLevel,
		HeartbeatInterval: opts.HeartbeatInterval, WatchStdin: true, DeathTimeout: 30 * time.Second,
		TargetFraction: opts.TargetFraction, PauseFraction: opts.PauseFraction, Security: &sec}
	if opts.Metrics {
		spec.MetricsListen = "127.0.0.1:0"
	}
	for i := range opts.Workers {
		if opts.InProcess {
			lc.startInProcess(spec)
			continue
		}
		if err := lc.startProcess(spec, i); err != nil {
			lc.Close()
			return nil, err
		}
	}
	if err := lc.waitWorkers(ctx, opts.Workers); err != nil {
		lc.Close()
		return nil, err
	}
	return lc, nil
}

func (lc *LocalCluster) startInProcess(spec workerSpec) {
	reg := lc.opts.Registry
	if reg == nil {
		reg = graph.Default()
	}
	// In-process workers share this process's memory: its size says
	// nothing of one of them, so they do not pause for it.
	spec.PauseFraction = -1
	spec.InProcess = true
	ctx, cancel := context.WithCancel(context.Background())
	w := &inprocWorker{cancel: cancel, done: make(chan error, 1)}
	go func() { w.done <- runWorker(ctx, spec, reg, lc.logger) }()
	lc.inproc = append(lc.inproc, w)
}

func (lc *LocalCluster) startProcess(spec workerSpec, i int) error {
	exe := lc.opts.Executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return fmt.Errorf("local cluster: find this program to start workers: %w", err)
		}
	}
	spec.Supervised = true
	var listen string
	var sopts []grpc.ServerOption
	if lc.opts.Nanny {
		listen = "127.0.0.1:0" // the nanny tells the worker its address (NannyEnv)
		var err error
		if sopts, err = lc.sec.ServerOptions(); err != nil {
			return fmt.Errorf("local cluster: %w", err)
		}
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	env := append(append(os.Environ(), WorkerEnv+"="+string(b)), lc.opts.Env...)
	n, err := StartNanny(NannyConfig{
		Command: func() *exec.Cmd {
			cmd := exec.Command(exe)
			cmd.Env = env
			return cmd
		},
		Restart:           lc.opts.Nanny,
		MemoryLimit:       lc.opts.MemoryLimit,
		TerminateFraction: lc.opts.TerminateFraction,
		Logger:            lc.logger.With("worker_process", i),
		OnExit: func(pid int, cause string, last []*wire.LogRecord) {
			lc.sched.WorkerExited("", pid, cause, last)
		},
		OnOutput: func(pid int, recs []*wire.LogRecord) {
			lc.sched.WorkerOutput("", pid, recs)
		},
		Listen:        listen,
		ServerOptions: sopts,
		WorkerDir:     spec.LocalDir,
	})
	if err != nil {
		return fmt.Errorf("local cluster: worker %d: %w", i, err)
	}
	lc.procs = append(lc.procs, n)
	return nil
}

// waitWorkers waits until n workers joined, failing early when a worker
// process ends or an in-process worker stops.
func (lc *LocalCluster) waitWorkers(ctx context.Context, n int) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- lc.sched.WaitForWorkers(ctx, n) }()
	exited := make(chan error, len(lc.procs)+len(lc.inproc))
	stopWatch := make(chan struct{})
	defer close(stopWatch)
	for i, n := range lc.procs {
		go func() {
			select {
			case <-n.Done():
				exited <- fmt.Errorf("local cluster: worker process %d ended before joining: %w", i, n.Err())
			case <-stopWatch:
			}
		}()
	}
	for i, w := range lc.inproc {
		go func() {
			select {
			case err := <-w.done:
				w.done <- err
				exited <- fmt.Errorf("local cluster: in-process worker %d stopped before joining: %w", i, err)
			case <-stopWatch:
			}
		}()
	}
	select {
	case err := <-done:
		return err
	case err := <-exited:
		cancel()
		<-done
		return err
	}
}

// Address returns the scheduler's address.
func (lc *LocalCluster) Address() string { return lc.sched.Address() }

// DashboardURL returns the address of the scheduler's dashboard, such as
// "http://127.0.0.1:40123/status", or "" when it is not served.
func (lc *LocalCluster) DashboardURL() string { return dashboardURL(lc.sched.DashboardAddress()) }

// ArchiveDir returns the directory of the cluster's archive (see
// LocalClusterOptions.Archive), or "" when it keeps none. Its files are
// complete once Close has returned.
func (lc *LocalCluster) ArchiveDir() string { return lc.sched.ArchiveDir() }

// Scheduler returns the scheduler server: its Events, Story and Dump.
func (lc *LocalCluster) Scheduler() *server.Server { return lc.sched }

// Client connects a client to the cluster.
func (lc *LocalCluster) Client(ctx context.Context, opts ...ClientOption) (*Client, error) {
	if lc.opts.InProcess && lc.opts.Registry != nil {
		opts = append([]ClientOption{WithRegistry(lc.opts.Registry)}, opts...)
	}
	opts = append([]ClientOption{withScratchDir(lc.shared), WithSecurity(lc.sec)}, opts...)
	return Connect(ctx, lc.Address(), opts...)
}

// Security returns how the cluster's processes secure their connections:
// the certificates (and token) of LocalClusterOptions.Security, or the
// temporary ones the cluster made, valid until Close. Programs that
// connect to the cluster otherwise than with Client, or workers that join
// it, use it: Connect(ctx, lc.Address(), WithSecurity(lc.Security())).
func (lc *LocalCluster) Security() security.Config { return lc.sec }

// WorkerProcesses returns the worker processes running now, one per
// worker (a restarted one replaces the one that died), in the order the
// workers were started; none for in-process workers.
func (lc *LocalCluster) WorkerProcesses() []*os.Process {
	var out []*os.Process
	for _, n := range lc.procs {
		out = append(out, n.Process())
	}
	return out
}

// Nannies returns the supervisors of the worker processes, in the order
// the workers were started.
func (lc *LocalCluster) Nannies() []*Nanny { return append([]*Nanny(nil), lc.procs...) }

// Close stops the workers and the scheduler, and waits until every worker
// process has ended.
func (lc *LocalCluster) Close() error {
	lc.mu.Lock()
	if lc.closed {
		lc.mu.Unlock()
		return nil
	}
	lc.closed = true
	lc.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, n := range lc.procs {
		n.Release() // the workers stop now: no restarts
	}
	err := lc.sched.Close(ctx)
	for _, w := range lc.inproc {
		w.cancel()
		<-w.done
	}
	var wg sync.WaitGroup
	for _, n := range lc.procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n.Close(5 * time.Second)
		}()
	}
	wg.Wait()
	if rerr := os.RemoveAll(lc.shared); rerr != nil && err == nil {
		err = fmt.Errorf("local cluster: remove %s: %w", lc.shared, rerr)
	}
	if lc.tlsDir != "" {
		if rerr := os.RemoveAll(lc.tlsDir); rerr != nil && err == nil {
			err = fmt.Errorf("local cluster: remove the temporary certificates in %s: %w", lc.tlsDir, rerr)
		}
	}
	return err
}

// SharedDir returns the scratch directory the cluster's workers share:
// ops such as shuffles write their files there, so that every worker can
// read them.
func (lc *LocalCluster) SharedDir() string { return lc.shared }

// forwardLogs passes the lines a worker process writes to stream
// ("stderr" or "stdout") to logger: its JSON log records as the records
// they are, any other line (what a task printed, a panic) as a record
// "worker output" with the line and the stream, which also goes to
// output. It keeps the last lines in tail.
func forwardLogs(r io.Reader, stream string, logger *slog.Logger, tail *tailBuffer, output func(*wire.LogRecord)) {
	rd := bufio.NewReaderSize(r, maxLine)
	ctx := context.Background()
	for {
		// A line longer than maxLine comes in pieces, each a record:
		// nothing the process writes is lost.
		b, err := rd.ReadSlice('\n')
		if len(b) == 0 && err != nil {
			return
		}
		// The records cross the wire, where strings are UTF-8: what a
		// task printed in another encoding (or a character cut at
		// maxLine) keeps its other bytes, and the rest marked.
		line := strings.ToValidUTF8(strings.TrimSuffix(string(b), "\n"), "\uFFFD")
		now := time.Now()
		tail.add(tailLine{time: now, stream: stream, text: line})
		var level slog.Level
		msg, attrs, ok := "", []slog.Attr(nil), false
		if stream == "stderr" {
			level, msg, attrs, ok = parseJSONRecord(b)
		}
		if !ok {
			level := slog.LevelInfo
			if stream == "stderr" {
				level = slog.LevelWarn
			}
			logger.LogAttrs(ctx, level, "worker output", slog.String("stream", stream), slog.String("line", line))
			if output != nil {
				output(&wire.LogRecord{TimeUnixNano: now.UnixNano(), Level: int32(slog.LevelInfo), Message: line,
					Attrs: map[string]string{"stream": stream}})
			}
			continue
		}
		logger.LogAttrs(ctx, level, msg, attrs...)
	}
}

// parseJSONRecord reads a line that slog's JSON handler wrote: its level,
// message and attributes, in their order, with whole numbers as int64 (not
// as floats, which print as 3.145728e+08). ok is false if the line is not
// a JSON object.
func parseJSONRecord(line []byte) (level slog.Level, msg string, attrs []slog.Attr, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, "", nil, false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return 0, "", nil, false
		}
		k, _ := t.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return 0, "", nil, false
		}
		switch k {
		case "time":
		case "level":
			s, _ := v.(string)
			level.UnmarshalText([]byte(s))
		case "msg":
			msg, _ = v.(string)
		default:
			attrs = append(attrs, jsonAttr(k, v))
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return 0, "", nil, false
	}
	return level, msg, attrs, true
}

// jsonAttr is the attribute k of a decoded JSON value: numbers as int64
// where they are whole, objects as groups.
func jsonAttr(k string, v any) slog.Attr {
	switch v := v.(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return slog.Int64(k, i)
		}
		f, _ := v.Float64()
		return slog.Float64(k, f)
	case map[string]any:
		keys := slices.Sorted(maps.Keys(v))
		group := make([]any, len(keys))
		for i, kk := range keys {
			group[i] = jsonAttr(kk, v[kk])
		}
		return slog.Group(k, group...)
	}
	return slog.Any(k, v)
}

// maxLine is the longest line of a worker process's output read as one
// record.
const maxLine = 1 << 20

// tailLine is a line of a process's output, and when it was read.
type tailLine struct {
	time   time.Time
	stream string // "stdout" or "stderr"
	text   string
}

// tailBuffer keeps the last lines of a process's output.
type tailBuffer struct {
	mu    sync.Mutex
	max   int
	lines []tailLine
}

func (t *tailBuffer) add(l tailLine) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, l)
	if len(t.lines) > t.max {
		t.lines = t.lines[1:]
	}
}

// last returns the last n lines.
func (t *tailBuffer) last(n int) []tailLine {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]tailLine(nil), t.lines[max(0, len(t.lines)-n):]...)
}

// lastText returns the text of the last n lines.
func (t *tailBuffer) lastText(n int) []string {
	var out []string
	for _, l := range t.last(n) {
		out = append(out, l.text)
	}
	return out
}

func (t *tailBuffer) String() string {
	return strings.Join(t.lastText(t.max), "\n")
}

// outputSink hands a worker process's output records to a function in
// batches, from a goroutine of its own, so that a slow receiver does not
// stall the readers until the batch waiting grows large.
type outputSink struct {
	pid  int
	fn   func(pid int, recs []*wire.LogRecord)
	mu   sync.Mutex
	cond *sync.Cond
	recs []*wire.LogRecord
	done bool
	stop chan struct{}
}

// maxOutputBatch is how many records may wait for the receiver before
// the readers wait for it.
const maxOutputBatch = 10_000

func newOutputSink(pid int, fn func(int, []*wire.LogRecord)) *outputSink {
	s := &outputSink{pid: pid, fn: fn, stop: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	if fn == nil {
		close(s.stop)
		return s
	}
	go s.run()
	return s
}

func (s *outputSink) add(r *wire.LogRecord) {
	if s.fn == nil {
		return
	}
	s.mu.Lock()
	for len(s.recs) >= maxOutputBatch && !s.done {
		s.cond.Wait()
	}
	s.recs = append(s.recs, r)
	s.cond.Broadcast()
	s.mu.Unlock()
}

func (s *outputSink) run() {
	defer close(s.stop)
	for {
		s.mu.Lock()
		for len(s.recs) == 0 && !s.done {
			s.cond.Wait()
		}
		recs, done := s.recs, s.done
		s.recs = nil
		s.cond.Broadcast()
		s.mu.Unlock()
		if len(recs) > 0 {
			s.fn(s.pid, recs)
		}
		if done {
			return
		}
	}
}

// close delivers what is left and waits for the receiver.
func (s *outputSink) close() {
	s.mu.Lock()
	s.done = true
	s.cond.Broadcast()
	s.mu.Unlock()
	<-s.stop
}
