package distributed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/distributed/internal/procmem"
	"github.com/shoal-data/shoal/distributed/security"
	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/distributed/worker"
)

// NannyEnv is the environment variable in which a nanny that serves its
// control service (NannyConfig.Listen) tells the worker processes it
// starts its address, which they register with the scheduler.
const NannyEnv = "SHOAL_NANNY"

// NannyConfig describes a nanny: the supervisor of one worker process.
type NannyConfig struct {
	// Command makes the command that starts the worker process; it is
	// called for every start. The nanny sets its standard input (the
	// worker must stop when it closes, as ServeIfWorker's workers do) and
	// its standard error (passed to Output, or to Logger as JSON lines),
	// and adds to its environment the variables set with Environ, and
	// NannyEnv.
	Command func() *exec.Cmd
	// Restart starts the worker again when it ends without being asked
	// to (it died, or the nanny killed it for its memory).
	Restart bool
	// MemoryLimit is the worker's memory limit in bytes; 0: none.
	MemoryLimit int64
	// TerminateFraction of MemoryLimit: a worker process using more is
	// killed (and restarted with Restart). Default 0.95; negative: never.
	TerminateFraction float64
	// MemoryInterval is how often the nanny measures the worker's memory
	// (default 100ms).
	MemoryInterval time.Duration
	// Logger receives the nanny's logs and the worker's (its JSON lines);
	// by default nothing is logged.
	Logger *slog.Logger
	// OnOutput receives what the worker process writes to its standard
	// output, and the lines of its standard error that are not log
	// records (what its tasks print), as log records at level Info with
	// the attribute stream ("stdout" or "stderr"), in batches, as they
	// come, from a goroutine of the nanny's: a LocalCluster and `shoal
	// worker --nanny` send them to the scheduler, which keeps them with
	// the worker's log. The last lines are in OnExit's records too.
	OnOutput func(pid int, recs []*wire.LogRecord)
	// OnExit is called each time the worker process ends unasked, with
	// its pid, the cause (such as "exit code 3", "signal: killed",
	// "killed by the nanny: process memory ... above the terminate
	// threshold ...") and the last records it wrote to its standard error;
	// and when the nanny restarted it (Environ), with the reason. A
	// LocalCluster and `shoal worker --nanny` tell the scheduler with it.
	OnExit func(pid int, cause string, last []*wire.LogRecord)
	// Listen is where the nanny serves its control service (wire.Nanny;
	// host:port, port 0 for a free one), through which the scheduler sets
	// the worker's environment variables (the Environ worker plugin); the
	// worker process finds the address in NannyEnv. Empty: not served.
	Listen string
	// ServerOptions secure the control service (those of
	// security.Config.ServerOptions: mutual TLS, token check).
	ServerOptions []grpc.ServerOption
	// WorkerDir is where the worker process makes its directory (its
	// LocalDir; default os.TempDir()): the nanny removes the directory of
	// a process that ended without removing it (killed, crashed).
	WorkerDir string
	// Insecure allows serving the control service in plaintext beyond
	// loopback: without it, a Listen address that is not loopback needs
	// TLS in ServerOptions.
	Insecure bool
	// StopGrace is how long a worker process that the nanny restarts has
	// to stop after its standard input closes, before it is killed
	// (default 10s).
	StopGrace time.Duration
}

// Nanny starts a worker process, restarts it when it dies, and kills it
// when it uses more memory than its terminate threshold. It keeps the
// environment variables set with Environ for every start.
type Nanny struct {
	cfg    NannyConfig
	logger *slog.Logger
	lis    net.Listener
	grpc   *grpc.Server
	served chan struct{} // closed when the control service stops

	mu       sync.Mutex
	cur      *nannyProc
	closing  bool
	starts   int
	env      map[string]string // set by Environ, for every start
	restarts chan struct{}     // closed and replaced at each start
	stop     chan struct{}     // closed by Close
	done     chan struct{}     // closed when supervision ends
	err      error             // why it ended, when not closed
}

type nannyProc struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	exited  chan struct{}
	state   *os.ProcessState
	logs    *tailBuffer
	env     map[string]string // the variables of Environ it was started with
	killed  string            // why the nanny killed it
	restart string            // why the nanny stopped it to start it again (under Nanny.mu)
}

// StartNanny starts the worker process and supervises it until Close.
func StartNanny(cfg NannyConfig) (*Nanny, error) {
	if cfg.Command == nil {
		return nil, errors.New("nanny: no command")
	}
	if cfg.TerminateFraction == 0 {
		cfg.TerminateFraction = 0.95
	}
	if cfg.MemoryInterval <= 0 {
		cfg.MemoryInterval = 100 * time.Millisecond
	}
	if cfg.StopGrace <= 0 {
		cfg.StopGrace = 10 * time.Second
	}
	logger := cfg.Logger
	if logger == nil {
		logger = diagnostics.DiscardLogger()
	}
	n := &Nanny{cfg: cfg, logger: logger, restarts: make(chan struct{}), done: make(chan struct{}),
		stop: make(chan struct{})}
	if cfg.Listen != "" {
		if err := n.serve(); err != nil {
			return nil, err
		}
	}
	p, err := n.start()
	if err != nil {
		n.stopServing()
		return nil, err
	}
	go n.supervise(p)
	return n, nil
}

// serve starts the control service.
func (n *Nanny) serve() error {
	if !n.cfg.Insecure && len(n.cfg.ServerOptions) == 0 && !security.IsLoopback(n.cfg.Listen) {
		return fmt.Errorf("nanny: listen on %s: %w", n.cfg.Listen, security.ErrPlaintext)
	}
	lis, err := net.Listen("tcp", n.cfg.Listen)
	if err != nil {
		return fmt.Errorf("nanny: listen on %s: %w", n.cfg.Listen, err)
	}
	n.lis = lis
	n.logger = n.logger.With("nanny", lis.Addr().String())
	n.grpc = grpc.NewServer(n.cfg.ServerOptions...)
	wire.RegisterNannyServer(n.grpc, &nannyService{n: n})
	n.served = make(chan struct{})
	go func() {
		defer close(n.served)
		if err := n.grpc.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			n.logger.Error("nanny control service stopped", "error", err)
		}
	}()
	return nil
}

func (n *Nanny) stopServing() {
	if n.grpc == nil {
		return
	}
	n.grpc.Stop()
	<-n.served
}

// Address returns the host:port of the nanny's control service, or ""
// when it serves none.
func (n *Nanny) Address() string {
	if n.lis == nil {
		return ""
	}
	return n.lis.Addr().String()
}

// terminateAbove is the memory in bytes above which the worker is killed,
// or 0.
func (n *Nanny) terminateAbove() int64 {
	if n.cfg.MemoryLimit <= 0 || n.cfg.TerminateFraction <= 0 {
		return 0
	}
	return int64(n.cfg.TerminateFraction * float64(n.cfg.MemoryLimit))
}

func (n *Nanny) start() (*nannyProc, error) {
	cmd := n.cfg.Command()
	n.mu.Lock()
	vars := maps.Clone(n.env)
	n.mu.Unlock()
	if len(vars) > 0 || n.lis != nil {
		if cmd.Env == nil {
			cmd.Env = os.Environ()
		}
		for _, k := range slices.Sorted(maps.Keys(vars)) {
			cmd.Env = append(cmd.Env, k+"="+vars[k])
		}
		if n.lis != nil {
			cmd.Env = append(cmd.Env, NannyEnv+"="+n.Address())
		}
	}
	setProcAttr(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("nanny: %w", err)
	}
	out, err := cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("nanny: %w", err)
	}
	var stdout io.ReadCloser
	if cmd.Stdout == nil {
		if stdout, err = cmd.StdoutPipe(); err != nil {
			return nil, fmt.Errorf("nanny: %w", err)
		}
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("nanny: start worker %s: %w", cmd.Path, err)
	}
	p := &nannyProc{cmd: cmd, stdin: stdin, exited: make(chan struct{}), logs: &tailBuffer{max: tailLines}, env: vars}
	pid := cmd.Process.Pid
	logger := n.logger.With("pid", pid)
	sink := newOutputSink(pid, n.cfg.OnOutput)
	var fwd sync.WaitGroup
	fwd.Add(1)
	go func() {
		defer fwd.Done()
		forwardLogs(out, "stderr", logger, p.logs, sink.add)
	}()
	if stdout != nil {
		fwd.Add(1)
		go func() {
			defer fwd.Done()
			forwardLogs(stdout, "stdout", logger, p.logs, sink.add)
		}()
	}
	go func() {
		fwd.Wait()
		sink.close()
		cmd.Wait()
		p.state = cmd.ProcessState
		close(p.exited)
	}()
	n.mu.Lock()
	n.cur = p
	n.starts++
	close(n.restarts)
	n.restarts = make(chan struct{})
	if n.closing {
		stdin.Close() // Close ran meanwhile: stop at once
	}
	n.mu.Unlock()
	n.logger.Info("nanny started the worker process", "pid", cmd.Process.Pid, "memory_limit", n.cfg.MemoryLimit,
		"terminate_threshold", n.terminateAbove(), "environ", strings.Join(slices.Sorted(maps.Keys(vars)), ","))
	return p, nil
}

// Environ sets environment variables in the environment the nanny starts
// the worker process with, for this start and every later one: unless
// the process running now was started with them, the nanny restarts it
// (closing its standard input, killing it after StopGrace) and returns
// once the new process has started. It returns the pid of the process
// that has the variables, and whether the nanny restarted the worker.
func (n *Nanny) Environ(ctx context.Context, vars map[string]string) (pid int, restarted bool, err error) {
	if err := wire.CheckEnviron(vars); err != nil {
		return 0, false, err
	}
	names := slices.Sorted(maps.Keys(vars))
	select {
	case <-n.done:
		if err := n.Err(); err != nil {
			return 0, false, fmt.Errorf("environ: the nanny no longer supervises its worker: %w", err)
		}
		return 0, false, errors.New("environ: the nanny is closed")
	default:
	}
	n.mu.Lock()
	if n.closing {
		n.mu.Unlock()
		return 0, false, errors.New("environ: the nanny is closing")
	}
	if n.env == nil {
		n.env = map[string]string{}
	}
	maps.Copy(n.env, vars)
	p := n.cur
	if hasVars(p.env, vars) {
		n.mu.Unlock()
		return p.cmd.Process.Pid, false, nil
	}
	next := n.restarts // closed at the next start, which has the variables
	if p.restart == "" {
		p.restart = "restarted by its nanny to set environment variables " + strings.Join(names, ", ")
	}
	n.mu.Unlock()
	n.logger.Info("nanny is restarting the worker to set environment variables", "pid", p.cmd.Process.Pid,
		"names", strings.Join(names, ","))
	n.stopProc(p, n.cfg.StopGrace)
	select {
	case <-next:
	case <-n.done:
		if err := n.Err(); err != nil {
			return 0, false, fmt.Errorf("environ: %w", err)
		}
		return 0, false, errors.New("environ: the nanny closed while restarting its worker")
	case <-ctx.Done():
		return 0, false, fmt.Errorf("environ: wait for the worker to start again: %w", ctx.Err())
	}
	return n.Process().Pid, true, nil
}

// hasVars tells whether env holds vars.
func hasVars(env, vars map[string]string) bool {
	for k, v := range vars {
		if have, ok := env[k]; !ok || have != v {
			return false
		}
	}
	return true
}

// stopProc stops a worker process gracefully: it closes its standard
// input, and kills it when it has not ended after grace.
func (n *Nanny) stopProc(p *nannyProc, grace time.Duration) {
	p.stdin.Close()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
		n.logger.Warn("worker process did not stop; killing it", "pid", p.cmd.Process.Pid)
		p.cmd.Process.Kill()
		<-p.exited
	}
}

// nannyService serves the wire.Nanny service.
type nannyService struct {
	wire.UnimplementedNannyServer
	n *Nanny
}

func (s *nannyService) Environ(ctx context.Context, r *wire.EnvironRequest) (*wire.EnvironReply, error) {
	pid, restarted, err := s.n.Environ(ctx, r.Vars)
	if err != nil {
		return nil, status.Errorf(codes.FailedPrecondition, "nanny %s: %v", s.n.Address(), err)
	}
	return &wire.EnvironReply{Restarted: restarted, Pid: int32(pid)}, nil
}

// supervise watches processes, one after the other, until Close.
func (n *Nanny) supervise(p *nannyProc) {
	defer close(n.done)
	backoff := 100 * time.Millisecond
	for {
		started := time.Now()
		n.watch(p)
		n.removeWorkerDir(p.cmd.Process.Pid)
		cause := exitCause(p)
		n.mu.Lock()
		closing, asked := n.closing, p.restart
		n.mu.Unlock()
		if closing {
			return
		}
		if asked == "" && p.state != nil && p.state.Success() {
			// It stopped on its own, as asked by its scheduler (which shut
			// down): there is nothing to restart it for.
			n.logger.Info("worker process stopped", "pid", p.cmd.Process.Pid)
			return
		}
		if asked != "" {
			// Restarted on purpose: at once, whatever Restart says.
			n.logger.Info("worker process stopped to be restarted", "pid", p.cmd.Process.Pid, "reason", asked)
			if n.cfg.OnExit != nil {
				n.cfg.OnExit(p.cmd.Process.Pid, asked, parseLogLines(p.logs.last(tailLines)))
			}
			q, err := n.start()
			if err != nil {
				n.logger.Error("nanny cannot restart the worker", "error", err)
				n.mu.Lock()
				n.err = err
				n.mu.Unlock()
				return
			}
			backoff = 100 * time.Millisecond
			p = q
			continue
		}
		n.logger.Warn("worker process ended", "pid", p.cmd.Process.Pid, "reason", cause,
			"last_output", p.logs.lastText(5))
		if n.cfg.OnExit != nil {
			n.cfg.OnExit(p.cmd.Process.Pid, cause, parseLogLines(p.logs.last(tailLines)))
		}
		if !n.cfg.Restart {
			n.mu.Lock()
			n.err = fmt.Errorf("worker process %d ended: %s\n%s", p.cmd.Process.Pid, cause, p.logs.String())
			n.mu.Unlock()
			return
		}
		if time.Since(started) > 10*time.Second {
			backoff = 100 * time.Millisecond
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-n.stop:
			t.Stop()
			return
		}
		backoff = min(2*backoff, 5*time.Second)
		n.mu.Lock()
		closing = n.closing
		n.mu.Unlock()
		if closing {
			return
		}
		q, err := n.start()
		if err != nil {
			n.logger.Error("nanny cannot restart the worker", "error", err)
			n.mu.Lock()
			n.err = err
			n.mu.Unlock()
			return
		}
		n.logger.Info("nanny restarted the worker", "pid", q.cmd.Process.Pid, "after", cause)
		p = q
	}
}

// removeWorkerDir removes what is left of the directory of the worker
// process pid, which ended: a worker names it shoal-worker-<pid>-*.
func (n *Nanny) removeWorkerDir(pid int) {
	base := n.cfg.WorkerDir
	if base == "" {
		base = os.TempDir()
	}
	dirs, _ := filepath.Glob(filepath.Join(base, worker.DirPattern(pid)))
	for _, d := range dirs {
		if err := os.RemoveAll(d); err != nil {
			n.logger.Warn("could not remove the directory of an ended worker process", "pid", pid, "path", d, "error", err)
		}
	}
}

// watch waits until p ends, killing it when it uses more memory than the
// terminate threshold.
func (n *Nanny) watch(p *nannyProc) {
	above := n.terminateAbove()
	if above <= 0 {
		<-p.exited
		return
	}
	t := time.NewTicker(n.cfg.MemoryInterval)
	defer t.Stop()
	pid := p.cmd.Process.Pid
	for {
		select {
		case <-p.exited:
			return
		case <-t.C:
			rss, ok := procmem.RSSOf(pid)
			if !ok || rss < above {
				continue
			}
			why := fmt.Sprintf("process memory %s is above the terminate threshold %s (%.2f of the %s limit)",
				procmem.Format(rss), procmem.Format(above), n.cfg.TerminateFraction, procmem.Format(n.cfg.MemoryLimit))
			n.logger.Error("nanny is killing the worker: "+why, "pid", pid, "process_memory", rss,
				"terminate_threshold", above, "memory_limit", n.cfg.MemoryLimit, "reason", "memory")
			n.mu.Lock()
			p.killed = "killed by the nanny: " + why
			n.mu.Unlock()
			p.cmd.Process.Kill()
			<-p.exited
			return
		}
	}
}

// exitCause says why a worker process ended.
func exitCause(p *nannyProc) string {
	if p.killed != "" {
		return p.killed
	}
	st := p.state
	if st == nil {
		return "unknown"
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		cause := "signal: " + ws.Signal().String()
		if ws.Signal() == syscall.SIGKILL {
			cause += " (SIGKILL: by someone, or by the system when out of memory)"
		}
		return cause
	}
	return fmt.Sprintf("exit code %d", st.ExitCode())
}

// tailLines is how many of the last lines of a worker's standard error a
// nanny keeps.
const tailLines = 200

// parseLogLines turns the last lines of a worker's output into log
// records: the JSON records of its log, and any other line (what a task
// printed, a Go panic, a fatal error) as a record of its own, at level
// Error when it is on the standard error (which a dying process writes
// its last words to), stamped with when the nanny read it.
func parseLogLines(lines []tailLine) []*wire.LogRecord {
	out := make([]*wire.LogRecord, 0, len(lines))
	for _, tl := range lines {
		line := tl.text
		var m map[string]any
		if tl.stream == "stdout" || json.Unmarshal([]byte(line), &m) != nil {
			level := slog.LevelError
			if tl.stream == "stdout" {
				level = slog.LevelInfo
			}
			out = append(out, &wire.LogRecord{TimeUnixNano: tl.time.UnixNano(), Level: int32(level),
				Message: line, Attrs: map[string]string{"stream": tl.stream}})
			continue
		}
		r := &wire.LogRecord{Attrs: map[string]string{}}
		if s, ok := m["time"].(string); ok {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				r.TimeUnixNano = t.UnixNano()
			}
		}
		if s, ok := m["level"].(string); ok {
			var l slog.Level
			if l.UnmarshalText([]byte(s)) == nil {
				r.Level = int32(l)
			}
		}
		r.Message, _ = m["msg"].(string)
		for k, v := range m {
			if k == "time" || k == "level" || k == "msg" {
				continue
			}
			if s, ok := v.(string); ok {
				r.Attrs[k] = s
			} else {
				b, _ := json.Marshal(v)
				r.Attrs[k] = string(b)
			}
		}
		out = append(out, r)
	}
	return out
}

// Process returns the worker process running now (the last started).
func (n *Nanny) Process() *os.Process {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cur.cmd.Process
}

// Starts returns how many times the nanny started the worker, and a
// channel closed at the next start.
func (n *Nanny) Starts() (int, <-chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.starts, n.restarts
}

// Done is closed when the nanny stops supervising: after Close, or when
// the worker ended and Restart is off (Err says why).
func (n *Nanny) Done() <-chan struct{} { return n.done }

// Err says why supervision ended, when it was not closed.
func (n *Nanny) Err() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.err
}

// Release stops restarting the worker: when it ends now, asked to or not,
// supervision ends. Close calls it.
func (n *Nanny) Release() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.closing {
		close(n.stop)
	}
	n.closing = true
}

// Close stops the worker (closing its standard input, then killing it
// after grace), waits until it has ended, and stops the control service.
func (n *Nanny) Close(grace time.Duration) {
	n.Release()
	n.mu.Lock()
	p := n.cur
	n.mu.Unlock()
	n.stopProc(p, grace)
	<-n.done
	n.stopServing()
}
