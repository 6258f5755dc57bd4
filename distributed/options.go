package distributed

import (
	"log/slog"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/shoal-data/shoal/distributed/security"
	"github.com/shoal-data/shoal/graph"
)

// ClientOption configures a Client.
type ClientOption func(*clientConfig)

type clientConfig struct {
	logger   *slog.Logger
	registry *graph.Registry
	name     string
	dial     []grpc.DialOption
	creds    credentials.TransportCredentials
	optimize bool
	events   bool
	gather   int
	scratch  string
	security *security.Config
}

func defaultClientConfig() clientConfig {
	return clientConfig{registry: graph.Default(), optimize: true, gather: 8}
}

// WithLogger sets where the client logs; by default nowhere.
func WithLogger(l *slog.Logger) ClientOption { return func(c *clientConfig) { c.logger = l } }

// WithRegistry sets the registry of ops and codecs the client builds
// graphs and decodes values with; the default is graph.Default(). The
// scheduler refuses the client when the workers' registries differ from it.
func WithRegistry(r *graph.Registry) ClientOption { return func(c *clientConfig) { c.registry = r } }

// WithName names the client in the scheduler's logs.
func WithName(name string) ClientOption { return func(c *clientConfig) { c.name = name } }

// WithTransportCredentials secures the connections to the scheduler and
// the workers (for example mutual TLS; insecure.NewCredentials() for
// plaintext). Connect needs it or WithSecurity.
func WithTransportCredentials(creds credentials.TransportCredentials) ClientOption {
	return func(c *clientConfig) { c.creds = creds }
}

// WithSecurity secures the connections to the scheduler and the workers
// as sec says: mutual TLS with the cluster's CA, and its token; or
// plaintext, when sec.Insecure asks for it.
func WithSecurity(sec security.Config) ClientOption {
	return func(c *clientConfig) { c.security = &sec }
}

// WithDialOptions adds gRPC dial options for the connections to the
// scheduler and the workers.
func WithDialOptions(opts ...grpc.DialOption) ClientOption {
	return func(c *clientConfig) { c.dial = append(c.dial, opts...) }
}

// WithOptimize turns graph optimization (inlining cheap tasks, fusing
// chains) on or off before graphs are sent; it is on by default. Unneeded
// tasks are always culled.
func WithOptimize(on bool) ClientOption { return func(c *clientConfig) { c.optimize = on } }

// WithEvents asks the scheduler for its diagnostics events (task
// transitions with where and how long tasks ran, computations, workers),
// published on Client.Events, so that progress bars and recorders work as
// with the in-process executor. It costs a message per batch of
// transitions.
func WithEvents() ClientOption { return func(c *clientConfig) { c.events = true } }

// WithGatherConcurrency sets how many values Gather fetches at once
// (default 8).
func WithGatherConcurrency(n int) ClientOption {
	return func(c *clientConfig) {
		if n > 0 {
			c.gather = n
		}
	}
}

// TaskOption sets the annotations of the tasks SubmitCall and Map make.
type TaskOption func(*graph.Annotations)

// Retries runs a failed task again up to n times before its error is
// final.
func Retries(n int) TaskOption { return func(a *graph.Annotations) { a.Retries = n } }

// Priority orders ready tasks: higher runs first.
func Priority(p int) TaskOption { return func(a *graph.Annotations) { a.Priority = p } }

// Resources makes the task run only on a worker with these abstract
// resources free, such as {"GPU": 1}.
func Resources(r map[string]float64) TaskOption {
	return func(a *graph.Annotations) { a.Resources = r }
}

// Workers restricts the task to the workers with these names or
// addresses.
func Workers(names ...string) TaskOption {
	return func(a *graph.Annotations) { a.Workers = names }
}

// AllowOtherWorkers lets a task restricted by Workers run elsewhere when
// none of its workers is there.
func AllowOtherWorkers() TaskOption { return func(a *graph.Annotations) { a.LooseRestrictions = true } }

// withScratchDir tells the client the workers' shared scratch directory,
// for LocalDir.
func withScratchDir(dir string) ClientOption { return func(c *clientConfig) { c.scratch = dir } }
