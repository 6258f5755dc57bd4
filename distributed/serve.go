package distributed

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"google.golang.org/grpc"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/distributed/security"
	"github.com/shoal-data/shoal/distributed/worker"
	"github.com/shoal-data/shoal/graph"
)

// WorkerEnv is the environment variable that makes a process started by
// NewLocalCluster a worker: it holds the worker's configuration as JSON.
const WorkerEnv = "SHOAL_WORKER"

// workerSpec is what a LocalCluster tells a worker process.
type workerSpec struct {
	Scheduler         string             `json:"scheduler"`
	Name              string             `json:"name,omitempty"`
	Threads           int                `json:"threads"`
	MemoryLimit       int64              `json:"memory_limit,omitempty"`
	TargetFraction    float64            `json:"target_fraction,omitempty"`
	LocalDir          string             `json:"local_dir,omitempty"`
	ScratchDir        string             `json:"scratch_dir,omitempty"`
	Resources         map[string]float64 `json:"resources,omitempty"`
	LogLevel          slog.Level         `json:"log_level"`
	HeartbeatInterval time.Duration      `json:"heartbeat_interval,omitempty"`
	DeathTimeout      time.Duration      `json:"death_timeout,omitempty"`
	WatchStdin        bool               `json:"watch_stdin,omitempty"`
	Supervised        bool               `json:"supervised,omitempty"`
	Nanny             string             `json:"nanny,omitempty"`
	PauseFraction     float64            `json:"pause_fraction,omitempty"`
	MetricsListen     string             `json:"metrics_listen,omitempty"`
	InProcess         bool               `json:"-"`
	Security          *security.Config   `json:"security,omitempty"`
}

// ServeIfWorker turns the process into a worker when NewLocalCluster
// started it as one, and then returns true once the worker has stopped;
// otherwise it returns false at once. Call it at the top of main, before
// anything else, so that the functions your program registers exist in
// its workers too:
//
//	func main() {
//		if distributed.ServeIfWorker() {
//			return
//		}
//		...
//	}
//
// In tests, call it at the top of TestMain. A worker process logs JSON
// lines to its standard error, which the LocalCluster that started it
// passes to its own logger; it stops when the scheduler tells it to, when
// its parent process ends, or on SIGINT or SIGTERM.
func ServeIfWorker() bool {
	raw, ok := os.LookupEnv(WorkerEnv)
	if !ok {
		return false
	}
	os.Unsetenv(WorkerEnv) // not for the processes the worker's tasks start
	nanny, hasNanny := os.LookupEnv(NannyEnv)
	os.Unsetenv(NannyEnv)
	var spec workerSpec
	logger := slog.New(diagnostics.NewJSONHandler(os.Stderr, slog.LevelInfo))
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		logger.Error("bad worker configuration", "env", WorkerEnv, "error", err)
		return true
	}
	if hasNanny {
		spec.Nanny = nanny
	}
	logger = slog.New(diagnostics.NewJSONHandler(os.Stderr, spec.LogLevel))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if spec.WatchStdin {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			io.Copy(io.Discard, os.Stdin) // returns when the parent closes the pipe or dies
			cancel()
		}()
	}
	if err := runWorker(ctx, spec, graph.Default(), logger); err != nil && ctx.Err() == nil {
		logger.Error("worker stopped", "error", err)
	}
	return true
}

func runWorker(ctx context.Context, spec workerSpec, reg *graph.Registry, logger *slog.Logger) error {
	var sopts []grpc.ServerOption
	var dopts []grpc.DialOption
	var httpTLS *tls.Config
	if spec.Security != nil {
		var err error
		if sopts, err = spec.Security.ServerOptions(); err != nil {
			return err
		}
		if dopts, err = spec.Security.DialOptions(); err != nil {
			return err
		}
		if httpTLS, err = spec.Security.HTTPTLS(); err != nil {
			return err
		}
	}
	w, err := worker.New(worker.Config{ServerOptions: sopts, DialOptions: dopts, Scheduler: spec.Scheduler, Name: spec.Name, Threads: spec.Threads,
		MemoryLimit: spec.MemoryLimit, TargetFraction: spec.TargetFraction, LocalDir: spec.LocalDir,
		ScratchDir: spec.ScratchDir, Supervised: spec.Supervised, Nanny: spec.Nanny, PauseFraction: spec.PauseFraction,
		MetricsListen: spec.MetricsListen, HTTPTLS: httpTLS, InProcess: spec.InProcess,
		Resources: spec.Resources, Registry: reg, Logger: logger, HeartbeatInterval: spec.HeartbeatInterval,
		DeathTimeout: spec.DeathTimeout})
	if err != nil {
		return err
	}
	err = w.Run(ctx)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}
