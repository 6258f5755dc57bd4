package dashboard

import "time"

// Source is what the dashboard reads: the scheduler implements it. Both
// methods are called for every request, from any goroutine; what they
// return belongs to the caller.
type Source interface {
	// Snapshot returns the state of the cluster now.
	Snapshot() *Status
	// TaskStream returns the task runs recorded after the first since
	// (as counted by TaskStream.Next), oldest first, at most limit of
	// them: the newest when there are more.
	TaskStream(since uint64, limit int) *TaskStream
}

// Status is the state of the cluster at one moment: the body of
// GET /api/status.
type Status struct {
	Time      time.Time      `json:"time"`      // when the snapshot was taken
	Scheduler Scheduler      `json:"scheduler"` // the scheduler itself
	Workers   []Worker       `json:"workers"`   // connected workers, by address
	Tasks     map[string]int `json:"tasks"`     // tasks the scheduler holds, by state: "waiting", "queued", "processing", "memory", "erred", "released", "cancelled"
	Progress  []Progress     `json:"progress"`  // per task prefix, in the order the prefixes first appeared
	Logs      []LogRecord    `json:"logs"`      // the scheduler's last log records, oldest first
	// StreamNext is the number of task runs recorded so far: the since
	// of a first GET /api/tasks that wants only what comes next.
	StreamNext uint64 `json:"stream_next"`
}

// Scheduler describes the scheduler.
type Scheduler struct {
	ID      string    `json:"id"`                // its random identity
	Address string    `json:"address"`           // host:port of its gRPC service
	Started time.Time `json:"started"`           // when it started
	Clients int       `json:"clients"`           // clients connected
	Metrics string    `json:"metrics,omitempty"` // host:port of its Prometheus /metrics; empty when not served
}

// Worker describes one worker as the scheduler last heard of it.
type Worker struct {
	Address     string    `json:"address"`           // host:port
	Name        string    `json:"name,omitempty"`    // its name, when it has one other than its address
	State       string    `json:"state"`             // "running", "paused" or "closing"
	Threads     int       `json:"threads"`           // tasks it runs at once
	MemoryLimit int64     `json:"memory_limit"`      // bytes; 0: none
	Managed     int64     `json:"managed"`           // bytes of the results it holds in memory
	Unmanaged   int64     `json:"unmanaged"`         // bytes of the rest of its process: process minus managed
	Spilled     int64     `json:"spilled"`           // bytes of the results it spilled to disk
	Processing  int       `json:"processing"`        // tasks it runs or was sent to run
	InMemory    int       `json:"in_memory"`         // results it holds
	LastSeen    time.Time `json:"last_seen"`         // when it last reported
	Metrics     string    `json:"metrics,omitempty"` // host:port of its Prometheus /metrics; empty when not served
}

// Progress counts the tasks of one key prefix (the name of the function
// or operation that makes them, such as "read-csv"): those the scheduler
// holds, and those of the current computations it already let go of.
// Done + Erred + Processing <= Total; the rest wait.
type Progress struct {
	Prefix     string `json:"prefix"`
	Total      int    `json:"total"`      // tasks of the prefix
	Done       int    `json:"done"`       // computed: in memory, or released after
	Memory     int    `json:"memory"`     // of Done, those whose results are in memory now
	Erred      int    `json:"erred"`      // failed, or a dependency did
	Processing int    `json:"processing"` // running, or sent to a worker to run
}

// TaskRun is one run of a task on a worker: a bar of the task stream.
type TaskRun struct {
	Seq    uint64    `json:"seq"`             // its number: runs are numbered from 1 in the order they ended
	Worker string    `json:"worker"`          // address of the worker that ran it
	Key    string    `json:"key"`             // the task
	Prefix string    `json:"prefix"`          // the key's prefix
	Start  time.Time `json:"start"`           // when it started, by the worker's clock
	Stop   time.Time `json:"stop"`            // when it ended
	State  string    `json:"state"`           // how it ended: "memory", "erred" or "cancelled"
	Error  string    `json:"error,omitempty"` // why it failed
}

// TaskStream is a part of the task stream: the body of GET /api/tasks.
type TaskStream struct {
	Tasks []TaskRun `json:"tasks"` // oldest first
	// Next is the since of the request for the runs after these.
	Next uint64 `json:"next"`
	// Missed counts the runs after since that are not in Tasks: no longer
	// kept, or beyond the limit.
	Missed uint64 `json:"missed"`
}

// LogRecord is one record the scheduler logged.
type LogRecord struct {
	Time    time.Time         `json:"time"`
	Level   string            `json:"level"` // "DEBUG", "INFO", "WARN" or "ERROR"
	Message string            `json:"message"`
	Attrs   map[string]string `json:"attrs,omitempty"`
}
