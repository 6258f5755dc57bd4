// Package shuffle moves the rows of N input partitions into M output
// partitions by hash or by range of key columns, through files, so that
// the memory a task holds is bounded by a budget rather than by the data:
// the exchange under set-index, sort, repartition and hash joins.
//
// A shuffle runs as tasks. Each of N split tasks takes one input
// partition, sends each row to an output with a Partitioner (by hash of
// keys, HashPartitioner, or by ranges of sort keys between divisions,
// RangePartitioner), buffers the partitioned rows up to Options.Budget
// bytes, then writes them out as shards (Arrow IPC streams) to a Storage
// and buffers again; it returns a Manifest: for each output, the byte
// ranges of its rows, their counts and sizes. Each of M collect tasks
// takes the N manifests, reads the shards of its output (only those) and
// returns them as one batch (Collect), or sorted by keys (CollectSorted,
// or OpenSorted to stream them): in memory when they fit in the budget,
// else by an external merge sort whose sorted runs go to the storage.
//
// Files live under one directory per shuffle id (Dir) in the storage,
// typically LocalStorage over the executor's local directory
// (graph.Env.LocalDir). A collect frees its shards when it has returned
// them; a failed or cancelled split or collect removes the files it
// wrote; Cleanup removes the whole directory once the shuffle is done,
// whether it succeeded, failed or was cancelled. A full disk is a
// *DiskFullError naming the operation, the partitions, the file and the
// bytes written.
//
// The layout (Options.Layout) is one file per split task with a section
// per output and flush (FilePerInput, the default: N files, sequential
// writes; a collect punches holes in the sections it has read) or one file
// per (input, output) pair and flush (FilePerShard: N*M files or more,
// each removed by its collect). Storage, Partitioner and the manifests are small and plain so
// that in a cluster a worker serves its shards to the others.
package shuffle
