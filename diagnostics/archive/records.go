package archive

import (
	"encoding/json"
	"log/slog"
	"path/filepath"
	"time"
)

// The tables of an archive: each is a subdirectory of the archive's
// directory, holding Parquet files of one row type.
const (
	TableLogs        = "logs"        // rows of type Log
	TableEvents      = "events"      // rows of type Event
	TableTasks       = "tasks"       // rows of type Task
	TableTransitions = "transitions" // rows of type Transition
	TableMetrics     = "metrics"     // rows of type Sample
)

// Tables lists the tables of an archive.
var Tables = []string{TableLogs, TableEvents, TableTasks, TableTransitions, TableMetrics}

// The positions of the tables in Tables.
const (
	logsTable = iota
	eventsTable
	tasksTable
	transitionsTable
	metricsTable
)

// Glob returns the pattern that matches every file of a table in the
// archive directory dir, for dataframe.ReadParquet:
//
//	tasks, err := dataframe.ReadParquet(ctx, archive.Glob(dir, archive.TableTasks))
func Glob(dir, table string) string {
	return filepath.Join(dir, table, "*.parquet")
}

// The processes rows come from, in the column process.
const (
	ProcessScheduler = "scheduler" // the scheduler of a cluster
	ProcessWorker    = "worker"    // a worker of a cluster
	ProcessLocal     = "local"     // the in-process executor
)

// Log is a row of the logs table: a record a process logged at level Info
// or above, or a line a worker process wrote to its standard output or
// error that its supervisor read.
type Log struct {
	// Time is when the record was logged or the line read.
	Time time.Time `parquet:"time"`
	// Cluster identifies the scheduler or executor that wrote the row.
	Cluster string `parquet:"cluster,dict"`
	// Process is ProcessScheduler, ProcessWorker or ProcessLocal.
	Process string `parquet:"process,dict"`
	// Worker is the worker's address (empty for the output of a worker
	// process that had not joined yet). In the scheduler's records, it is
	// the worker the record is about, if any (its attribute "worker").
	Worker string `parquet:"worker,dict"`
	// Pid is the process's id, when known.
	Pid int64 `parquet:"pid"`
	// Level is "DEBUG", "INFO", "WARN" or "ERROR" (with an offset, such as
	// "WARN+2", for levels in between).
	Level string `parquet:"level,dict"`
	// Message is the record's message, or the line of output.
	Message string `parquet:"message"`
	// Stream is "stdout" or "stderr" for a line of output, empty for a
	// log record.
	Stream string `parquet:"stream,dict"`
	// Key and Error are the record's attributes "key" and "error", when it
	// has them: the task it is about and what went wrong.
	Key   string `parquet:"key"`
	Error string `parquet:"error"`
	// Attrs are all the record's attributes as a JSON object of strings,
	// groups flattened with dots ("a.b").
	Attrs string `parquet:"attrs"`
}

// NewLog returns the row of a log record with attributes attrs, which
// fill Key, Error, Stream and Attrs. The caller sets Process and Worker.
func NewLog(t time.Time, level slog.Level, msg string, attrs map[string]string) Log {
	l := Log{Time: t, Level: level.String(), Message: msg, Key: attrs["key"], Error: attrs["error"],
		Stream: attrs["stream"]}
	if len(attrs) > 0 {
		// A map of strings always marshals.
		b, _ := json.Marshal(attrs)
		l.Attrs = string(b)
	}
	return l
}

// Event is a row of the events table: something that happened to a
// computation, a result or a worker, as executors publish them
// (diagnostics.Event), other than task transitions, which have tables of
// their own, and fine performance metrics.
type Event struct {
	Time    time.Time `parquet:"time"`
	Cluster string    `parquet:"cluster,dict"`
	// Kind is the event's kind (diagnostics.Kind's names, such as
	// "compute-started", "compute-finished", "spill", "unspill",
	// "worker-added", "worker-removed"), or "topic" for an event a client
	// logged under a topic.
	Kind string `parquet:"kind,dict"`
	// Computation is the number of the computation the event is about.
	Computation int64 `parquet:"computation"`
	// Key is the result spilled or read back.
	Key string `parquet:"key"`
	// Worker is the worker that joined, left or spilled.
	Worker string `parquet:"worker,dict"`
	// Bytes is the size of the result spilled or read back.
	Bytes int64 `parquet:"bytes"`
	// Path is the spill file.
	Path string `parquet:"path"`
	// Error is why a computation failed or a worker was lost.
	Error string `parquet:"error"`
	// Tasks is the number of tasks of a computation started.
	Tasks int64 `parquet:"tasks"`
	// Topic names the topic of a client's event.
	Topic string `parquet:"topic,dict"`
	// Message is the message of a client's event, or, for a computation
	// started, its tasks per key prefix as a JSON object.
	Message string `parquet:"message"`
}

// Task is a row of the tasks table: one run of a task that ended (in
// memory, erred, or cancelled once started). A task that erred without a
// run of its own to blame (a dependency failed, or the workers running it
// died) has a row with no worker, and Start equal to Stop.
type Task struct {
	Cluster     string `parquet:"cluster,dict"`
	Computation int64  `parquet:"computation"`
	Key         string `parquet:"key"`
	// Prefix is the key's prefix (the kind of task, such as
	// "read-parquet"), Group its task group (prefix and token).
	Prefix string `parquet:"prefix,dict"`
	Group  string `parquet:"group,dict"`
	// Op is the registered op the task ran, when it erred.
	Op string `parquet:"op,dict"`
	// Worker is the worker that ran it (a slot, such as "local-0", for the
	// in-process executor).
	Worker string    `parquet:"worker,dict"`
	Start  time.Time `parquet:"start"`
	Stop   time.Time `parquet:"stop"`
	// DurationSeconds is Stop - Start.
	DurationSeconds float64 `parquet:"duration_seconds"`
	// Bytes is the size of the result, for outcome "memory".
	Bytes int64 `parquet:"bytes"`
	// Outcome is "memory", "erred" or "cancelled".
	Outcome string `parquet:"outcome,dict"`
	// Error is the task's error, for outcome "erred".
	Error string `parquet:"error"`
}

// Transition is a row of the transitions table: a task changed state in
// the scheduler.
type Transition struct {
	Time        time.Time `parquet:"time"`
	Cluster     string    `parquet:"cluster,dict"`
	Computation int64     `parquet:"computation"`
	Key         string    `parquet:"key"`
	Prefix      string    `parquet:"prefix,dict"`
	// From and To are the states: "released", "waiting", "queued",
	// "processing", "memory", "erred", "forgotten", "cancelled".
	From string `parquet:"from,dict"`
	To   string `parquet:"to,dict"`
	// Worker is the worker that ran the task, when the transition ends a
	// run.
	Worker string `parquet:"worker,dict"`
	// Stimulus identifies what caused the transition.
	Stimulus string `parquet:"stimulus"`
}

// Sample is a row of the metrics table: the value of one metric of one
// process at one time. The names of the metrics say their units:
//
//	memory_managed_bytes      results held in memory
//	memory_unmanaged_bytes    the rest of the process's memory (rss - managed)
//	memory_spilled_bytes      results spilled to disk
//	rss_bytes                 resident memory of the process
//	go_memory_bytes           memory the Go runtime holds (in-process executor)
//	cpu_percent               CPU use since the sample before (100: one core)
//	net_in_bytes_per_second   fetched from peers, since the sample before
//	net_out_bytes_per_second  served to peers and clients
//	disk_used_bytes           files under the directory Path
//	disk_free_bytes           free space on the file system of Path
//	disk_size_bytes           size of the file system of Path
//	open_files                file descriptors open
//	goroutines                goroutines of the process
//	tasks_STATE               tasks in a state (tasks_executing, tasks_ready,
//	                          ... on a worker; tasks_memory, tasks_erred, ...
//	                          on the scheduler)
//	workers, clients          connected to the scheduler
type Sample struct {
	Time    time.Time `parquet:"time"`
	Cluster string    `parquet:"cluster,dict"`
	// Process is ProcessScheduler, ProcessWorker or ProcessLocal.
	Process string `parquet:"process,dict"`
	// Worker is the worker's address; empty for the scheduler.
	Worker string `parquet:"worker,dict"`
	// Name is the metric's name.
	Name string `parquet:"name,dict"`
	// Path is the directory of a disk metric.
	Path  string  `parquet:"path,dict"`
	Value float64 `parquet:"value"`
}

// The row types stamp themselves with their cluster.
func (r *Log) stamp(c string)        { r.Cluster = c }
func (r *Event) stamp(c string)      { r.Cluster = c }
func (r *Task) stamp(c string)       { r.Cluster = c }
func (r *Transition) stamp(c string) { r.Cluster = c }
func (r *Sample) stamp(c string)     { r.Cluster = c }
