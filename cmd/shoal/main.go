// Command shoal runs the processes of a Shoal cluster: a scheduler, and
// workers that connect to it; and reads the dumps of clusters.
//
//	shoal scheduler (--tls-ca FILE --tls-cert FILE --tls-key FILE | --insecure) [--addr HOST:PORT]
//	                [--dashboard-address HOST:PORT] [--metrics-listen HOST:PORT] [--token-file FILE]
//	                [--archive DIR] [--archive-max-bytes 1GiB] [--archive-flush 10s]
//	shoal worker SCHEDULER_ADDR (--tls-ca FILE --tls-cert FILE --tls-key FILE | --insecure)
//	             [--threads N] [--memory-limit 4GiB] [--local-dir DIR] [--name NAME]
//	             [--resources GPU=1,...] [--listen HOST:PORT] [--nanny] [--pause 0.8]
//	             [--terminate 0.95] [--metrics-listen HOST:PORT] [--token-file FILE]
//	shoal dump inspect FILE [--stuck-after 1m]
//	shoal dump story FILE KEY...
//	shoal dump tasks FILE [--state STATE] [--worker ADDR] [--prefix PREFIX]
//	shoal dashboard --dump FILE [--listen HOST:PORT]
//
// Every process of a cluster uses mutual TLS, with a certificate signed by
// the cluster's CA (--tls-ca, --tls-cert, --tls-key), or plaintext when
// asked for with --insecure; without either, the commands refuse to
// start, on loopback too.
//
// A worker started by this command has the built-in ops of Shoal
// registered (graph, dataframe, array), and no others. Programs that
// register their own functions start their workers from the program
// itself: distributed.NewLocalCluster, with distributed.ServeIfWorker at
// the top of main.
//
// The dump commands read a cluster dump (distributed.Client.DumpClusterState)
// after the cluster is gone: inspect prints its workers, its erred and
// stuck tasks and their memory, story how tasks came to be where they were
// (on the scheduler and on the workers), tasks the tasks in a state; and
// dashboard --dump serves the dashboard's pages from it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/shoal-data/shoal/array" // registers the array ops
	_ "github.com/shoal-data/shoal/dataframe"
	"google.golang.org/grpc"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/diagnostics/archive"
	"github.com/shoal-data/shoal/diagnostics/otelshoal"
	"github.com/shoal-data/shoal/diagnostics/otelshoal/otlp"
	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/distributed/security"
	"github.com/shoal-data/shoal/distributed/server"
	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/distributed/worker"
	"github.com/shoal-data/shoal/graph"
)

const usage = `Usage:
  shoal scheduler [flags]                 run a scheduler
  shoal worker SCHEDULER_ADDR [flags]     run a worker connected to the scheduler at SCHEDULER_ADDR
  shoal dump inspect|story|tasks FILE     read a cluster dump (Client.DumpClusterState)
  shoal dashboard --dump FILE             serve the dashboard's pages from a cluster dump
  shoal help [scheduler|worker|dump|dashboard]
                                          show this help, or a command's flags

Every process of a cluster needs security flags: mutual TLS with
--tls-ca, --tls-cert and --tls-key (certificates signed by one CA, the same
for every process and client), or plaintext asked for with --insecure. Without
them, the commands refuse to start, on loopback too.

A worker started by this command has Shoal's built-in operations registered
(graph, dataframe and array) and nothing else. The scheduler refuses a client
whose registry of operations differs from the workers': programs that
register their own functions (graph.RegisterFunc) start their workers from
the same program, with distributed.NewLocalCluster and
distributed.ServeIfWorker() at the top of main.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch args[0] {
	case "scheduler":
		err = runScheduler(ctx, args[1:], stderr)
	case "worker":
		err = runWorker(ctx, args[1:], stderr)
	case "dump":
		err = runDump(args[1:], os.Stdout, stderr)
	case "dashboard":
		err = runDashboard(ctx, args[1:], stderr)
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			return run([]string{args[1], "--help"}, stderr)
		}
		fmt.Fprint(stderr, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "shoal: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	case err != nil:
		fmt.Fprintf(stderr, "shoal %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

var errUsage = errors.New("usage")

type securityFlags struct {
	ca, cert, key, tokenFile string
	insecure                 bool
}

func (f *securityFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.ca, "tls-ca", "", "PEM `file` of the CA that signs every process's certificate (mutual TLS; with --tls-cert and --tls-key)")
	fs.StringVar(&f.cert, "tls-cert", "", "PEM `file` of this process's certificate")
	fs.StringVar(&f.key, "tls-key", "", "PEM `file` of this process's key")
	fs.StringVar(&f.tokenFile, "token-file", "", "`file` holding the token every call must carry")
	fs.BoolVar(&f.insecure, "insecure", false, "use plaintext connections, without TLS: required without the --tls-* flags, on loopback too")
}

// errNoSecurity is the error of a command given neither TLS flags nor
// --insecure.
var errNoSecurity = fmt.Errorf("no TLS certificates given: give --tls-ca, --tls-cert and --tls-key "+
	"(PEM files; one CA signs every process's certificate), or --insecure to use plaintext connections: %w",
	security.ErrPlaintext)

// config returns the security configuration. Plaintext must be asked for
// with --insecure, on loopback too.
func (f *securityFlags) config() (*security.Config, error) {
	if f.ca == "" && f.cert == "" && f.key == "" && !f.insecure {
		return nil, errNoSecurity
	}
	c := &security.Config{CAFile: f.ca, CertFile: f.cert, KeyFile: f.key, Insecure: f.insecure}
	if f.tokenFile != "" {
		b, err := os.ReadFile(f.tokenFile)
		if err != nil {
			return nil, fmt.Errorf("--token-file: %w", err)
		}
		c.Token = strings.TrimSpace(string(b))
	}
	return c, nil
}

// grpcOptions returns the server and dial options of sec.
func grpcOptions(sec *security.Config) ([]grpc.ServerOption, []grpc.DialOption, error) {
	so, err := sec.ServerOptions()
	if err != nil {
		return nil, nil, err
	}
	do, err := sec.DialOptions()
	return so, do, err
}

type logFlags struct {
	format string
	level  string
}

func (l *logFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&l.format, "log-format", "console", "log `format`: console (for people) or json (for machines)")
	fs.StringVar(&l.level, "log-level", "info", "least `level` logged: debug, info, warn or error")
}

func (l *logFlags) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(l.level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: %w", l.level, err)
	}
	switch l.format {
	case "console":
		return slog.New(diagnostics.NewConsoleHandler(w, level)), nil
	case "json":
		return slog.New(diagnostics.NewJSONHandler(w, level)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want console or json", l.format)
}

func runScheduler(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("shoal scheduler", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8786", "`address` to listen on (host:port; \":8786\" for every interface)")
	saturation := fs.Float64("saturation", 0, "tasks sent to a worker per thread before the rest wait in the scheduler (default 4)")
	heartbeat := fs.Duration("heartbeat-timeout", 10*time.Second, "remove a worker silent for this long")
	noWorkers := fs.Duration("no-workers-timeout", time.Minute, "fail the tasks that wait for a worker when there has been none for this long (negative: wait for ever)")
	dashboard := fs.String("dashboard-address", "127.0.0.1:8787", "`address` to serve the dashboard on, a live web page of the cluster, and Prometheus metrics at /metrics (host:port; \":8787\" for every interface; empty: none)")
	metricsListen := fs.String("metrics-listen", "", "another `address` to serve Prometheus metrics on, at /metrics (host:port; empty: only beside the dashboard)")
	archiveDir := fs.String("archive", "", "`directory` where to keep the cluster's logs, events, task runs, transitions and metric samples in Parquet files that outlive it (empty: none)")
	archiveMax := fs.String("archive-max-bytes", "1GiB", "bound of the archive's total size; the oldest files are removed first (0: none)")
	archiveFlush := fs.Duration("archive-flush", archive.DefaultFlushInterval, "longest time a record waits in memory before it is in an archive file: what a crash loses at most")
	otlpEndpoint := fs.String("otlp-endpoint", "", "export traces, metrics and logs over OpenTelemetry's OTLP to this `URL`, such as http://localhost:4318 (empty: as the OTEL_* environment variables say; none by default)")
	otlpProtocol := fs.String("otlp-protocol", "", "OTLP `protocol` of --otlp-endpoint: grpc or http/protobuf (default: OTEL_EXPORTER_OTLP_PROTOCOL's, else http/protobuf)")
	var sf securityFlags
	sf.register(fs)
	var lf logFlags
	lf.register(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: shoal scheduler (--tls-ca FILE --tls-cert FILE --tls-key FILE | --insecure) [flags]\n\n"+
			"Runs a scheduler until interrupted. Workers and clients connect to its address.\n\n"+
			"It needs mutual TLS (--tls-ca, --tls-cert, --tls-key: PEM files, with one CA for every\n"+
			"process and client of the cluster), or plaintext asked for with --insecure, on\n"+
			"loopback too. Clients then connect with distributed.WithSecurity.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return errUsage
	}
	logger, err := lf.logger(stderr)
	if err != nil {
		return err
	}
	sec, err := sf.config()
	if err != nil {
		return err
	}
	sopts, dopts, err := grpcOptions(sec)
	if err != nil {
		return err
	}
	httpTLS, err := sec.HTTPTLS()
	if err != nil {
		return err
	}
	maxBytes, err := parseBytes(*archiveMax)
	if err != nil {
		return fmt.Errorf("--archive-max-bytes: %w", err)
	}
	if maxBytes == 0 {
		maxBytes = -1 // no bound
	}
	var otel []otelshoal.Option
	if *otlpEndpoint != "" {
		otel = append(otel, otlp.Export(otlp.WithEndpoint(*otlpEndpoint, *otlpProtocol)))
	}
	s, err := server.New(server.Config{Listen: *addr, Logger: logger, Saturation: *saturation,
		HeartbeatTimeout: *heartbeat, NoWorkersTimeout: *noWorkers, DashboardListen: *dashboard, MetricsListen: *metricsListen,
		ServerOptions: sopts, DialOptions: dopts, Insecure: sf.insecure, Archive: *archiveDir, HTTPTLS: httpTLS,
		ArchiveOptions: []archive.Option{archive.WithMaxBytes(maxBytes), archive.WithFlushInterval(*archiveFlush)},
		OpenTelemetry:  otel})
	if err != nil {
		return err
	}
	var dash string
	if a := s.DashboardAddress(); a != "" {
		dash = "http://" + a + "/status"
	}
	logger.Info("scheduler listening", "address", s.Address(), "dashboard", dash, "metrics", s.MetricsAddress(),
		"archive", s.ArchiveDir())
	<-ctx.Done()
	cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.Close(cctx)
}

func runWorker(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("shoal worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	threads := fs.Int("threads", 0, "tasks run at once (default: the number of CPUs)")
	memory := fs.String("memory-limit", "0", "memory limit: bytes with a unit (4GiB, 512MB) or 0 for none; results beyond --target of it spill to disk")
	target := fs.Float64("target", 0.6, "fraction of the memory limit above which results spill to disk")
	localDir := fs.String("local-dir", "", "`directory` for spill and scratch files (default: the system's temporary directory)")
	name := fs.String("name", "", "worker `name`, for logs and task restrictions (default: its address)")
	resources := fs.String("resources", "", "abstract resources offered, such as GPU=1,MEMORY=8e9")
	listen := fs.String("listen", "127.0.0.1:0", "`address` to serve results on (host:port; port 0 picks a free one)")
	nanny := fs.Bool("nanny", false, "run the worker as a child process of a nanny that restarts it when it dies and kills it above --terminate of the memory limit")
	pause := fs.Float64("pause", 0.8, "fraction of the memory limit above which the worker starts no new tasks (negative: never)")
	terminate := fs.Float64("terminate", 0.95, "with --nanny: fraction of the memory limit above which the nanny kills and restarts the worker (negative: never)")
	scratch := fs.String("scratch-dir", "", "`directory` for the scratch files of operations (shuffle shards); workers on one machine that share one can shuffle across each other (default: the worker's own directory)")
	metricsListen := fs.String("metrics-listen", "", "`address` to serve Prometheus metrics on, at /metrics (host:port; empty: none)")
	watchStdin := fs.Bool("watch-stdin", false, "stop when standard input closes (set by the nanny for its child)")
	supervisedBy := fs.String("supervised-by", "", "the `nanny` supervising this worker (set by the nanny for its child)")
	var sf securityFlags
	sf.register(fs)
	deathTimeout := fs.Duration("death-timeout", 60*time.Second, "give up after the scheduler is out of reach this long")
	var lf logFlags
	lf.register(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, `Usage: shoal worker SCHEDULER_ADDR (--tls-ca FILE --tls-cert FILE --tls-key FILE | --insecure) [flags]

Runs a worker connected to the scheduler at SCHEDULER_ADDR (host:port) until
interrupted or told to stop by the scheduler. It runs Shoal's built-in
operations (graph, dataframe, array) only: a client program that registers
functions of its own is refused by the scheduler; start workers from that
program instead (distributed.NewLocalCluster and distributed.ServeIfWorker).

It needs mutual TLS (--tls-ca, --tls-cert, --tls-key: certificates signed by
the scheduler's CA), or plaintext asked for with --insecure, on loopback too.

With --nanny, the worker runs as a child process of a nanny, which serves a
control service on the host of --listen (any free port): the scheduler asks it
there to set environment variables (the Environ worker plugin), which it does
by starting the worker again with them.

Flags:
`)
		fs.PrintDefaults()
	}
	// Flags may come before or after the scheduler's address.
	var positional []string
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(positional) != 1 {
		fs.Usage()
		return errUsage
	}
	limit, err := parseBytes(*memory)
	if err != nil {
		return fmt.Errorf("--memory-limit: %w", err)
	}
	res, err := parseResources(*resources)
	if err != nil {
		return fmt.Errorf("--resources: %w", err)
	}
	logger, err := lf.logger(stderr)
	if err != nil {
		return err
	}
	sec, err := sf.config()
	if err != nil {
		return err
	}
	sopts, dopts, err := grpcOptions(sec)
	if err != nil {
		return err
	}
	if *nanny {
		host, _, err := net.SplitHostPort(*listen)
		if err != nil {
			return fmt.Errorf("--listen %q: %w", *listen, err)
		}
		return runNanny(ctx, positional[0], args, limit, *terminate, net.JoinHostPort(host, "0"), *localDir, sopts, dopts,
			sf.insecure, logger)
	}
	// A nanny tells its worker the address of its control service.
	var nannyAddr string
	if *supervisedBy != "" {
		nannyAddr = os.Getenv(distributed.NannyEnv)
	}
	os.Unsetenv(distributed.NannyEnv)
	if *watchStdin {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			io.Copy(io.Discard, os.Stdin) // returns when the nanny closes the pipe or dies
			cancel()
		}()
	}
	httpTLS, err := sec.HTTPTLS()
	if err != nil {
		return err
	}
	w, err := worker.New(worker.Config{Scheduler: positional[0], Listen: *listen, Name: *name, Threads: *threads,
		MemoryLimit: limit, TargetFraction: *target, PauseFraction: *pause, LocalDir: *localDir, ScratchDir: *scratch,
		Resources: res, Registry: graph.Default(), Logger: logger, DeathTimeout: *deathTimeout,
		MetricsListen: *metricsListen, HTTPTLS: httpTLS, Nanny: nannyAddr, Supervised: *supervisedBy != "",
		ServerOptions: sopts, DialOptions: dopts, Insecure: sf.insecure})
	if err != nil {
		return err
	}
	err = w.Run(ctx)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// runNanny runs the worker as a child process (this program, with the same
// flags but --nanny) and supervises it until ctx is done: it restarts it
// when it dies, kills it above the terminate threshold, and tells the
// scheduler why it ended. It serves the nanny's control service on listen,
// through which the scheduler sets the worker's environment variables.
func runNanny(ctx context.Context, scheduler string, args []string, limit int64, terminate float64, listen, localDir string,
	serve []grpc.ServerOption, dial []grpc.DialOption, insecure bool, logger *slog.Logger) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("nanny: find this program: %w", err)
	}
	child := []string{"worker"}
	for _, a := range args {
		switch strings.TrimLeft(a, "-") {
		case "nanny", "nanny=true", "nanny=1":
			continue
		}
		child = append(child, a)
	}
	self := fmt.Sprintf("nanny pid %d", os.Getpid())
	if h, err := os.Hostname(); err == nil {
		self += " on " + h
	}
	child = append(child, "--watch-stdin", "--supervised-by", self, "--log-format", "json")
	conn, err := grpc.NewClient(scheduler, dial...)
	if err != nil {
		return fmt.Errorf("nanny: scheduler %s: %w", scheduler, err)
	}
	defer conn.Close()
	sched := wire.NewSchedulerClient(conn)
	n, err := distributed.StartNanny(distributed.NannyConfig{
		Command: func() *exec.Cmd {
			// Its standard output and error are the nanny's to read: what
			// its tasks print goes to the scheduler with its log.
			return exec.Command(exe, child...)
		},
		Restart:           true,
		MemoryLimit:       limit,
		TerminateFraction: terminate,
		// The nanny's records carry its address ("nanny"); its process
		// is named apart.
		Logger: logger.With("nanny_pid", os.Getpid()),
		OnOutput: func(pid int, recs []*wire.LogRecord) {
			rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if _, err := sched.WorkerOutput(rctx, &wire.WorkerExit{Pid: int32(pid), Logs: recs}); err != nil {
				logger.Debug("nanny could not pass the worker's output to the scheduler", "pid", pid, "error", err)
			}
		},
		OnExit: func(pid int, cause string, last []*wire.LogRecord) {
			rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if _, err := sched.WorkerExited(rctx, &wire.WorkerExit{Pid: int32(pid), Cause: cause, Logs: last}); err != nil {
				logger.Warn("nanny could not tell the scheduler why the worker ended", "pid", pid, "reason", cause,
					"error", err)
			}
		},
		Listen:        listen,
		ServerOptions: serve,
		WorkerDir:     localDir,
		Insecure:      insecure,
	})
	if err != nil {
		return err
	}
	defer n.Close(10 * time.Second)
	logger.Info("nanny serving", "address", n.Address(), "worker_pid", n.Process().Pid)
	select {
	case <-ctx.Done():
		return nil
	case <-n.Done():
		return n.Err()
	}
}

// parseBytes reads a size such as 4GiB, 512MB, 1e9 or 0.
func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}}
	mult := 1.0
	for _, u := range units {
		if strings.HasSuffix(strings.ToUpper(s), strings.ToUpper(u.suffix)) && len(u.suffix) <= len(s) {
			if strings.EqualFold(s[len(s)-len(u.suffix):], u.suffix) {
				mult = u.mult
				s = strings.TrimSpace(s[:len(s)-len(u.suffix)])
				break
			}
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("%q is not a size such as 4GiB, 512MB or 0", s)
	}
	return int64(f * mult), nil
}

// parseResources reads NAME=AMOUNT pairs separated by commas.
func parseResources(s string) (map[string]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := map[string]float64{}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q is not NAME=AMOUNT", part)
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 {
			return nil, fmt.Errorf("%q: amount %q is not a non-negative number", part, v)
		}
		out[k] = f
	}
	return out, nil
}
