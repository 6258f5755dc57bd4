package dashboard

import "time"

// Source is what the dashboard reads: the scheduler implements it. Every
// method is called for requests, from any goroutine, and must not block
// for long; what it returns belongs to the caller. A method that has
// nothing to show returns an empty value, not nil (Worker excepted).
type Source interface {
	// Snapshot returns the state of the cluster now.
	Snapshot() *Status
	// TaskStream returns the task runs recorded after the first since
	// (as counted by TaskStream.Next), oldest first, at most limit of
	// them: the newest when there are more.
	TaskStream(since uint64, limit int) *TaskStream
	// TaskWindow returns every task run of the last window: one bar per
	// run when there are at most maxBars, else time buckets of the busy
	// time per worker and prefix (see TaskWindow).
	TaskWindow(window time.Duration, maxBars int) *TaskWindow
	// Workers returns every worker with its resource use and a short
	// history of it.
	Workers() *Workers
	// Worker returns the page of one worker (an address or a name),
	// connected or gone; nil when the scheduler never knew it.
	Worker(name string) *WorkerPage
	// System returns the scheduler process's own resource use.
	System() *System
	// Groups returns the task groups of the current graphs and the
	// dependencies between them.
	Groups() *Groups
	// Logs returns the log records of the scheduler and the workers
	// that match q, newest last.
	Logs(q LogQuery) *Logs
	// Errors returns the erred tasks and the failed computations.
	Errors() *Errors
	// Profile returns the cluster's CPU profile of q's window as a
	// flame graph, with the timeline of the prefixes that ran.
	Profile(q ProfileQuery) (*Profile, error)
	// ProfileData returns the same profile as a gzipped pprof protocol
	// buffer, for go tool pprof.
	ProfileData(q ProfileQuery) ([]byte, error)
	// FineMetrics returns where the time of each task prefix went.
	FineMetrics() *FineMetrics
	// Bandwidth returns the bytes moved between workers.
	Bandwidth() *Bandwidth
	// Shuffles returns the shuffles of the current and recent
	// computations.
	Shuffles() *Shuffles
}

// AlertSource is a Source that also raises alerts (the scheduler does):
// every page shows the alerts raised in a banner, and /api/alerts lists
// them. The pages of a Source that is not one show no alerts.
type AlertSource interface {
	Source
	// Alerts returns the alerts raised and not resolved, and the last
	// ones resolved.
	Alerts() *Alerts
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
	// Computations are the running computations and the last ones that
	// ended, newest first; failed ones keep their progress rows.
	Computations []Computation `json:"computations"`
	// Erred counts the task runs that failed since the scheduler
	// started; RecentErrors are the last few of them, newest first.
	Erred        int           `json:"erred"`
	RecentErrors []ErrorRecord `json:"recent_errors"`
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

// Computation is one graph a client submitted.
type Computation struct {
	ID       uint64     `json:"id"`                // its number on the scheduler, from 1
	Started  time.Time  `json:"started"`           // when it was submitted
	Finished time.Time  `json:"finished,omitzero"` // when it ended; zero while it runs
	State    string     `json:"state"`             // "running", "done", "failed" or "cancelled"
	Error    string     `json:"error,omitempty"`   // why it failed
	Tasks    int        `json:"tasks"`             // tasks of its graph
	Progress []Progress `json:"progress"`          // its tasks per prefix, as when it ended for one that ended
	Caller   string     `json:"caller,omitempty"`  // where the program submitted it: "file:line"
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
