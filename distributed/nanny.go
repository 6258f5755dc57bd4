package distributed

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/distributed/internal/procmem"
	"github.com/shoal-data/shoal/distributed/wire"
)

// NannyConfig describes a nanny: the supervisor of one worker process.
type NannyConfig struct {
	// Command makes the command that starts the worker process; it is
	// called for every start. The nanny sets its standard input (the
	// worker must stop when it closes, as ServeIfWorker's workers do) and
	// its standard error (passed to Output, or to Logger as JSON lines).
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
	// OnExit is called each time the worker process ends unasked, with
	// its pid, the cause (such as "exit code 3", "signal: killed",
	// "killed by the nanny: process memory ... above the terminate
	// threshold ...") and the last records it wrote to its standard error.
	// A LocalCluster and `shoal worker --nanny` tell the scheduler with it.
	OnExit func(pid int, cause string, last []*wire.LogRecord)
}

// Nanny starts a worker process, restarts it when it dies, and kills it
// when it uses more memory than its terminate threshold.
type Nanny struct {
	cfg    NannyConfig
	logger *slog.Logger

	mu       sync.Mutex
	cur      *nannyProc
	closing  bool
	starts   int
	restarts chan struct{} // closed and replaced at each start
	stop     chan struct{} // closed by Close
	done     chan struct{} // closed when supervision ends
	err      error         // why it ended, when not closed
}

type nannyProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	exited chan struct{}
	state  *os.ProcessState
	logs   *tailBuffer
	killed string // why the nanny killed it
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
	logger := cfg.Logger
	if logger == nil {
		logger = diagnostics.DiscardLogger()
	}
	n := &Nanny{cfg: cfg, logger: logger, restarts: make(chan struct{}), done: make(chan struct{}),
		stop: make(chan struct{})}
	p, err := n.start()
	if err != nil {
		return nil, err
	}
	go n.supervise(p)
	return n, nil
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
	setProcAttr(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("nanny: %w", err)
	}
	out, err := cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("nanny: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("nanny: start worker %s: %w", cmd.Path, err)
	}
	p := &nannyProc{cmd: cmd, stdin: stdin, exited: make(chan struct{}), logs: &tailBuffer{max: tailLines}}
	var fwd sync.WaitGroup
	fwd.Add(1)
	go func() {
		defer fwd.Done()
		forwardLogs(out, n.logger.With("pid", cmd.Process.Pid), p.logs)
	}()
	go func() {
		fwd.Wait()
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
		"terminate_threshold", n.terminateAbove())
	return p, nil
}

// supervise watches processes, one after the other, until Close.
func (n *Nanny) supervise(p *nannyProc) {
	defer close(n.done)
	backoff := 100 * time.Millisecond
	for {
		started := time.Now()
		n.watch(p)
		cause := exitCause(p)
		n.mu.Lock()
		closing := n.closing
		n.mu.Unlock()
		if closing {
			return
		}
		n.logger.Warn("worker process ended", "pid", p.cmd.Process.Pid, "reason", cause,
			"last_output", p.logs.last(5))
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

// parseLogLines turns a worker's standard error lines into log records:
// its JSON records, and any other line (a Go panic, a fatal error) as an
// error record of its own.
func parseLogLines(lines []string) []*wire.LogRecord {
	out := make([]*wire.LogRecord, 0, len(lines))
	for _, line := range lines {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			out = append(out, &wire.LogRecord{TimeUnixNano: time.Now().UnixNano(), Level: int32(slog.LevelError),
				Message: line, Attrs: map[string]string{"stream": "stderr"}})
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
// after grace) and waits until it has ended.
func (n *Nanny) Close(grace time.Duration) {
	n.Release()
	n.mu.Lock()
	p := n.cur
	n.mu.Unlock()
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
	<-n.done
}
