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
// # Failures
//
// When a worker dies, the scheduler sees its stream break (or its
// heartbeats stop), computes again what it held and was running elsewhere,
// and the result is the same. A client that disconnects has its work
// released. The scheduler refuses a worker or a client whose registry of
// ops differs from the others', listing the names that differ.
package distributed
