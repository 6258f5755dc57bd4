package distributed

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/distributed/server"
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
	// Env is added to the environment of worker processes.
	Env []string
	// Executable is the program started as workers (default the current
	// executable); it must call ServeIfWorker at the top of main.
	Executable string
	// Scheduler tunes the scheduler; its Listen defaults to a free
	// loopback port.
	Scheduler server.Config
	// HeartbeatInterval of the workers (default 1s).
	HeartbeatInterval time.Duration
}

// LocalCluster is a scheduler and workers on this machine, on loopback.
type LocalCluster struct {
	opts   LocalClusterOptions
	logger *slog.Logger
	sched  *server.Server
	shared string // the workers' shared scratch directory
	procs  []*workerProc
	inproc []*inprocWorker
	closed bool
	mu     sync.Mutex
}

type workerProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	exited chan struct{}
	err    error
	logs   *tailBuffer
	fwd    sync.WaitGroup
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
	base := opts.LocalDir
	if base == "" {
		base = os.TempDir()
	}
	shared, err := os.MkdirTemp(base, "shoal-cluster-*")
	if err != nil {
		return nil, fmt.Errorf("local cluster: make the workers' shared directory in %s: %w", base, err)
	}
	sched, err := server.New(scfg)
	if err != nil {
		os.RemoveAll(shared)
		return nil, err
	}
	lc := &LocalCluster{opts: opts, logger: logger, sched: sched, shared: shared}
	spec := workerSpec{Scheduler: sched.Address(), Threads: opts.ThreadsPerWorker, MemoryLimit: opts.MemoryLimit,
		LocalDir: opts.LocalDir, ScratchDir: shared, Resources: opts.Resources, LogLevel: opts.WorkerLogLevel,
		HeartbeatInterval: opts.HeartbeatInterval, WatchStdin: true, DeathTimeout: 30 * time.Second}
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
	b, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(append(os.Environ(), WorkerEnv+"="+string(b)), lc.opts.Env...)
	setProcAttr(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	cmd.Stdout = nil // a worker writes nothing there; what it would is dropped
	p := &workerProc{cmd: cmd, stdin: stdin, exited: make(chan struct{}), logs: &tailBuffer{max: 40}}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("local cluster: start worker %d (%s): %w", i, exe, err)
	}
	p.fwd.Add(1)
	go func() {
		defer p.fwd.Done()
		forwardLogs(out, lc.logger.With("process", cmd.Process.Pid), p.logs)
	}()
	go func() {
		p.fwd.Wait()
		p.err = cmd.Wait()
		close(p.exited)
	}()
	lc.procs = append(lc.procs, p)
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
	for i, p := range lc.procs {
		go func() {
			select {
			case <-p.exited:
				exited <- fmt.Errorf("local cluster: worker process %d (pid %d) ended before joining: %v\n%s",
					i, p.cmd.Process.Pid, p.err, p.logs.String())
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

// Scheduler returns the scheduler server: its Events, Story and Dump.
func (lc *LocalCluster) Scheduler() *server.Server { return lc.sched }

// Client connects a client to the cluster.
func (lc *LocalCluster) Client(ctx context.Context, opts ...ClientOption) (*Client, error) {
	if lc.opts.InProcess && lc.opts.Registry != nil {
		opts = append([]ClientOption{WithRegistry(lc.opts.Registry)}, opts...)
	}
	opts = append([]ClientOption{withScratchDir(lc.shared)}, opts...)
	return Connect(ctx, lc.Address(), opts...)
}

// WorkerProcesses returns the worker processes, in the order they were
// started (none for in-process workers).
func (lc *LocalCluster) WorkerProcesses() []*os.Process {
	var out []*os.Process
	for _, p := range lc.procs {
		out = append(out, p.cmd.Process)
	}
	return out
}

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
	err := lc.sched.Close(ctx)
	for _, w := range lc.inproc {
		w.cancel()
		<-w.done
	}
	for _, p := range lc.procs {
		p.stdin.Close()
	}
	for _, p := range lc.procs {
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
			lc.logger.Warn("worker process did not stop; killing it", "pid", p.cmd.Process.Pid)
			p.cmd.Process.Kill()
			<-p.exited
		}
	}
	if rerr := os.RemoveAll(lc.shared); rerr != nil && err == nil {
		err = fmt.Errorf("local cluster: remove %s: %w", lc.shared, rerr)
	}
	return err
}

// SharedDir returns the scratch directory the cluster's workers share:
// ops such as shuffles write their files there, so that every worker can
// read them.
func (lc *LocalCluster) SharedDir() string { return lc.shared }

// forwardLogs passes a worker process's JSON log lines to logger, and
// keeps the last lines in tail.
func forwardLogs(r io.Reader, logger *slog.Logger, tail *tailBuffer) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	ctx := context.Background()
	for sc.Scan() {
		line := sc.Text()
		tail.add(line)
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			logger.Error("worker output", "line", line)
			continue
		}
		var level slog.Level
		if s, ok := m["level"].(string); ok {
			level.UnmarshalText([]byte(s))
		}
		msg, _ := m["msg"].(string)
		delete(m, "time")
		delete(m, "level")
		delete(m, "msg")
		attrs := make([]slog.Attr, 0, len(m))
		for k, v := range m {
			attrs = append(attrs, slog.Any(k, v))
		}
		logger.LogAttrs(ctx, level, msg, attrs...)
	}
	io.Copy(io.Discard, r)
}

// tailBuffer keeps the last lines of a process's output.
type tailBuffer struct {
	mu    sync.Mutex
	max   int
	lines []string
}

func (t *tailBuffer) add(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, s)
	if len(t.lines) > t.max {
		t.lines = t.lines[1:]
	}
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}
