// Package archive keeps the telemetry of a cluster or of the in-process
// executor in Parquet files that outlive it: the logs of every process,
// events, one row per task run, task transitions, and periodic samples of
// the processes' memory, CPU, disks and network. After the run, or after a
// crash, read them back as tables with Shoal itself:
//
//	tasks, err := dataframe.ReadParquet(ctx, archive.Glob(dir, archive.TableTasks))
//	medians := tasks.GroupBy("prefix").Median("duration_seconds")
//
// A LocalCluster keeps an archive by default; a scheduler started with
// `shoal scheduler --archive DIR` does too, and the in-process executor with
// local.WithArchive.
//
// # Files
//
// An archive is a directory with one subdirectory per table: logs, events,
// tasks, transitions and metrics. Each file holds rows of one table and is
// named after the time of its first row, in UTC, then the cluster that
// wrote it and a sequence number:
//
//	DIR/tasks/20260304T050607.123456789Z-scheduler-1a2b3c4d5e6f-000042.parquet
//
// Names sort oldest first. Several clusters may share a directory: the
// column cluster tells their rows apart. Logs may hold what tasks said of
// their data, so the directories the writer makes and its files can be
// read by their owner only.
//
// A file is written whole once its rows are due, under a temporary name
// beginning with a dot, and renamed when complete, so every file whose name
// ends in .parquet can be read, even after the process was killed. Rows wait
// in memory at most the flush interval (WithFlushInterval, 10 seconds by
// default), or until a table has WithMaxRows rows (100,000): a crash loses
// at most the last interval's rows. The total size of the files is bounded
// (WithMaxBytes, 1 GiB by default): once a new file takes the archive
// beyond, the oldest files, of any table, are removed first. The files of
// other writers in the same directory count too: the writer lists them when
// it opens and every minute.
//
// # Tables
//
// Times are timestamps in nanoseconds, UTC; durations are seconds (float64);
// sizes are bytes (int64). Text columns are strings (utf8, or
// dictionary-encoded text where values repeat); an absent value is the
// empty string or zero.
//
// logs (Log): time, cluster, process ("scheduler", "worker", "local"),
// worker (its address), pid, level ("INFO", "WARN", "ERROR"), message,
// stream ("stdout" or "stderr" for a line a worker process wrote, read by
// its supervisor; empty for a log record), key and error (the record's
// attributes of those names), attrs (every attribute, as a JSON object).
// Records of level Info and above are kept (WithLogLevel).
//
// events (Event): time, cluster, kind ("compute-started",
// "compute-finished", "spill", "unspill", "worker-added", "worker-removed",
// "topic"), computation, key, worker, bytes, path, error, tasks, topic,
// message.
//
// tasks (Task), one row per task run that ended: cluster, computation, key,
// prefix, group, op, worker, start, stop, duration_seconds, bytes, outcome
// ("memory", "erred" or "cancelled"), error.
//
// transitions (Transition): time, cluster, computation, key, prefix, from,
// to, worker, stimulus.
//
// metrics (Sample), one row per metric, process and time: time, cluster,
// process, worker, name, path, value. Sample lists the metrics' names, whose
// suffixes say their units. The scheduler samples itself and every worker
// every 5 seconds (WithSampleInterval).
package archive
