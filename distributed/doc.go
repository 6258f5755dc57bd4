// Package distributed runs Shoal's task graphs on a cluster of worker
// processes: the same DataFrame, array and Delayed code that runs on the
// in-process executor (package local) runs unchanged; only the executor
// handed to Compute changes.
//
// A cluster is a scheduler (package distributed/server) and workers
// (package distributed/worker). Start them with the shoal command
// (shoal scheduler, shoal worker ADDR), or all on this machine with
// NewLocalCluster, which starts the workers from the current program so
// that the functions it registers exist there too:
//
//	func main() {
//		if distributed.ServeIfWorker() { // this process was started as a worker
//			return
//		}
//		ctx := context.Background()
//		cluster, err := distributed.NewLocalCluster(ctx, distributed.LocalClusterOptions{Workers: 2})
//		...
//		defer cluster.Close()
//		client, err := cluster.Client(ctx)
//		...
//		defer client.Close()
//		table, err := df.Compute(ctx, client) // client is a graph.Executor
//		fmt.Println(client)                   // the cluster: scheduler, workers, threads, memory
//	}
//
// # Wire
//
// Control travels over gRPC (distributed/wire): every worker and client
// keeps one bidirectional stream to the scheduler, and each side sends what
// it has queued in one message, so that thousands of small tasks do not
// mean thousands of round trips. A graph travels as graph.Encode bytes in
// one message. Data travels over Arrow Flight: workers serve the values
// they hold (DoGet, the ticket being the key; many small values at once
// with the "shoal.get" action), fetch the inputs they lack from each other,
// and the client gathers results from them directly.
//
// Workers of one LocalCluster share a scratch directory (SharedDir) for
// the files of ops, so that a dataframe shuffle runs across worker
// processes; workers on different machines do not share shuffle shards
// yet.
//
// # Failures
//
// When a worker dies, the scheduler sees its stream break (or its
// heartbeats stop), computes again what it held and was running elsewhere,
// and the result is the same. Every worker process of a LocalCluster (and
// of `shoal worker --nanny`) is watched by a Nanny, which tells the
// scheduler why it ended (exit code, signal, memory) and passes on the last
// lines it wrote; with LocalClusterOptions.Nanny it also restarts it. A
// task that was running on AllowedFailures (3) workers that died fails
// with a *scheduler.KilledWorkerError naming the task, the workers and
// why each died. Tasks waiting on a busy worker move to a worker with an
// idle thread when computing them takes longer than moving their inputs
// (work stealing; server.Config.NoStealing turns it off). When no worker
// is left and none joins within server.Config.NoWorkersTimeout (1 minute;
// shoal scheduler --no-workers-timeout), the tasks waiting for one fail
// with a *scheduler.NoWorkersError that names the last workers and why
// they left. Errors keep their Go types from the workers to the client
// (graph.RegisterError): errors.Is(err, syscall.ENOSPC) and errors.As to
// a *csv.ParseError or a *dataframe.ShuffleError work as they do on the
// in-process executor. A client that
// disconnects has its work released. The scheduler refuses a worker or a
// client whose registry of ops differs from the others', listing the names
// that differ.
//
// # Memory
//
// A worker counts the bytes of the values it holds (managed memory) and
// measures its process (RSS). Past TargetFraction (0.6) of its memory limit
// it spills the least recently used values to disk as Arrow IPC; past
// PauseFraction (0.8) it starts no new tasks, and the scheduler sends it
// none; past TerminateFraction (0.95) its nanny kills it (and restarts it).
// Each change is logged with the numbers.
//
// # Client
//
// Besides Compute and Submit (graph.Executor), a Client submits registered
// functions (SubmitCall, Map) with per-task Retries, Priority, Resources
// and Workers restrictions; gathers (Gather, Wait, AsCompleted, Cancel);
// keeps values on the workers (Persist), sends values there (Scatter);
// names them for other clients (PublishDataset, GetDataset,
// ListDatasets); runs a function on every worker or on the scheduler
// directly (Run, RunOnScheduler); sets worker plugins up
// (RegisterWorkerPlugin, with the built-in UploadFile and Environ); and
// reads the cluster's logs (SchedulerLogs, WorkerLogs, including those of
// workers that died) and topic events (LogEvent, TopicEvents). Info and
// String describe the cluster as the Dask tutorial shows it.
//
// # Observability
//
// Every process logs with log/slog, each record with its worker, task key,
// op and reason, and keeps its last 10,000 records; workers send theirs to
// the scheduler as they log them, with the records of their tasks
// (graph.Logger) and, read by their nannies, what the tasks print.
//
// Every worker samples the CPU of its tasks continuously, each sample
// labelled with its task; Client.Profile merges the samples of a window
// into one profile for go tool pprof. Client.FineMetrics tells where the
// time of each kind of task went: computing, waiting, transfers, spills,
// encoding, idle threads.
//
// The scheduler serves a dashboard (LocalClusterOptions.NoDashboard
// turns it off; DashboardURL says where), with Prometheus metrics on
// /metrics beside it; with LocalClusterOptions.Metrics (or
// --metrics-listen), every worker serves its own. Their names are listed
// in the server and worker packages.
//
// # Security
//
// Package security gives mutual TLS between all processes and an optional
// token (LocalClusterOptions.Security, WithSecurity, the --tls-* and
// --token-file flags); security.NewLocal makes temporary certificates.
// Plaintext is used only when asked for: a LocalCluster without Security
// uses mutual TLS with temporary certificates it makes (its Client and
// Security methods hand them on, and Close removes them); Connect needs
// WithSecurity; `shoal scheduler` and `shoal worker` refuse to start
// without the --tls-* flags or --insecure, on loopback too. Plaintext is
// asked for with security.Config{Insecure: true} and --insecure.
package distributed
