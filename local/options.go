package local

import (
	"io"
	"log/slog"
	"runtime"
	"time"

	"github.com/shoal-data/shoal/diagnostics/alert"
	"github.com/shoal-data/shoal/diagnostics/archive"
	"github.com/shoal-data/shoal/diagnostics/otelshoal"
	"github.com/shoal-data/shoal/graph"
)

// Option configures an Executor.
type Option func(*config)

type config struct {
	threads       int
	registry      *graph.Registry
	logger        *slog.Logger
	memoryLimit   int64
	spillFraction float64
	localDir      string
	resources     map[string]float64
	optimize      bool
	progress      io.Writer
	logSize       int
	noProfile     bool
	profileWindow time.Duration
	archiveDir    string
	archiveOpts   []archive.Option
	alerts        alert.Config
	otel          []otelshoal.Option
}

func defaultConfig() config {
	return config{
		threads:       runtime.GOMAXPROCS(0),
		registry:      graph.Default(),
		spillFraction: 0.6,
		optimize:      true,
	}
}

// WithThreads sets how many tasks run at once. The default is
// runtime.GOMAXPROCS(0).
func WithThreads(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.threads = n
		}
	}
}

// WithRegistry sets the registry of ops and codecs; the default is
// graph.Default().
func WithRegistry(r *graph.Registry) Option {
	return func(c *config) { c.registry = r }
}

// WithLogger sets where the executor logs; by default it logs nothing.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// WithMemoryLimit bounds the memory that held results take: when they take
// more than the spill fraction of the limit, the least recently used ones
// are written to disk (Arrow IPC files for Arrow data) and read back when
// needed. Zero, the default, means no limit and no spilling.
func WithMemoryLimit(bytes int64) Option {
	return func(c *config) { c.memoryLimit = bytes }
}

// WithSpillFraction sets the fraction of the memory limit above which
// results are spilled (default 0.6).
func WithSpillFraction(f float64) Option {
	return func(c *config) {
		if f > 0 && f <= 1 {
			c.spillFraction = f
		}
	}
}

// WithLocalDir sets the directory for spill files and ops' scratch files
// (shuffle shards). The executor works in a subdirectory of its own, which
// no other executor shares, removed by Close. The default is
// os.TempDir().
func WithLocalDir(dir string) Option {
	return func(c *config) { c.localDir = dir }
}

// WithResources declares abstract resources the executor offers, such as
// {"GPU": 1}; tasks that ask for more than that fail at once.
func WithResources(r map[string]float64) Option {
	return func(c *config) { c.resources = r }
}

// WithOptimize turns graph optimization (inlining cheap tasks and fusing
// linear chains) on or off; it is on by default. Unneeded tasks are always
// culled.
func WithOptimize(on bool) Option {
	return func(c *config) { c.optimize = on }
}

// WithProgress draws a progress bar of every computation on w (for example
// os.Stderr): done/total tasks per kind of task and the elapsed time.
func WithProgress(w io.Writer) Option {
	return func(c *config) { c.progress = w }
}

// WithTransitionLog sets how many task transitions are kept for Story and
// Dump (default 100,000).
func WithTransitionLog(n int) Option {
	return func(c *config) { c.logSize = n }
}

// WithProfiling turns the executor's CPU profiler on (the default) or
// off. On, the executor samples the CPU of its tasks continuously with the
// Go runtime's profiler, each sample labelled with its task's prefix, key
// and computation (see Profile), at an overhead of about one percent. The
// process has one CPU profile: while an executor profiles,
// runtime/pprof.StartCPUProfile fails elsewhere in the process, so turn
// it off to take CPU profiles of your own (an executor that finds the
// profile taken waits for it to be free).
func WithProfiling(on bool) Option {
	return func(c *config) { c.noProfile = !on }
}

// WithProfileWindow sets how long the profiler samples before it cuts a
// window of samples (default 5s): Profile merges windows, so its
// resolution in time is that.
func WithProfileWindow(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.profileWindow = d
		}
	}
}

// WithAlerts sets the thresholds of the executor's alerts (see package
// diagnostics/alert; zero fields take their defaults): a task that runs
// far longer than the others of its prefix, a shuffle partition far
// larger than the others of its shuffle, heavy spilling. The rules about
// workers' heartbeats, memory and disks are a cluster's.
func WithAlerts(c alert.Config) Option {
	return func(cfg *config) { cfg.alerts = c }
}

// WithOpenTelemetry exports the executor's traces (a span per computation
// and per task run), metrics and logs to OpenTelemetry as opts say: to
// the providers given (otelshoal.WithTracerProvider...), or over OTLP as
// the OTEL_* environment variables say with otlp.Export(). By default
// nothing is exported. See package otelshoal for the spans and metrics.
func WithOpenTelemetry(opts ...otelshoal.Option) Option {
	return func(c *config) { c.otel = append(c.otel, opts...) }
}
