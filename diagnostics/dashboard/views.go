package dashboard

import (
	"log/slog"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/shoal-data/shoal/diagnostics"
)

// TaskWindow is the task stream of a window of time: the body of
// GET /api/task-window. Every run that overlaps the window counts: when
// there are at most the asked number of them, each is a bar (Runs);
// beyond, the window is cut into equal buckets and each bucket tells,
// per worker and prefix, how many thread-seconds tasks ran (Buckets).
// Nothing of the window is left out either way.
type TaskWindow struct {
	Start time.Time `json:"start"` // the window, by the scheduler's clock
	Stop  time.Time `json:"stop"`
	// Workers are the rows of the stream: every worker that ran a task in
	// the window, by address, with its threads.
	Workers []StreamWorker `json:"workers"`
	// Prefixes are the task prefixes that ran in the window, in the order
	// of their first run: Buckets refer to them by index.
	Prefixes []string `json:"prefixes"`
	// Count is the number of runs in the window; Erred how many of them
	// failed.
	Count int `json:"count"`
	Erred int `json:"erred"`
	// Runs are the runs of the window, oldest first, when they are not
	// aggregated.
	Runs []TaskRun `json:"runs"`
	// Aggregated says the runs are summed into Buckets instead.
	Aggregated bool `json:"aggregated"`
	// BucketSeconds is the width of a bucket.
	BucketSeconds float64 `json:"bucket_seconds,omitempty"`
	// Buckets are [bucket, worker, prefix, busy, count, erred]: the index
	// of the bucket from Start, the index of the worker in Workers and of
	// the prefix in Prefixes, the thread-seconds tasks of the prefix ran
	// on the worker in the bucket, how many of them ended in it, and how
	// many of those failed.
	Buckets [][6]float64 `json:"buckets,omitempty"`
}

// StreamWorker is a row of the task stream.
type StreamWorker struct {
	Address string `json:"address"`
	Threads int    `json:"threads"` // 0 when the worker is gone
}

// Workers is the body of GET /api/workers.
type Workers struct {
	Time    time.Time     `json:"time"`
	Workers []WorkerStats `json:"workers"` // by address
}

// WorkerStats is a worker and its use of resources, as it last reported
// them (every heartbeat, a second by default).
type WorkerStats struct {
	Worker
	CPU     float64        `json:"cpu"`              // percent of one core its process used since the report before
	RSS     int64          `json:"rss"`              // bytes of its process's resident memory
	NetIn   float64        `json:"net_in"`           // bytes/s it fetched from peers and its scheduler
	NetOut  float64        `json:"net_out"`          // bytes/s it served to peers and clients
	FDs     int            `json:"fds"`              // open file descriptors of its process; -1 unknown
	Disk    []Disk         `json:"disk"`             // its directories
	Tasks   map[string]int `json:"tasks"`            // its own count of tasks: "executing", "ready", "waiting", "fetching", "memory"
	Gone    bool           `json:"gone,omitempty"`   // it left or died; these are its last numbers
	Reason  string         `json:"reason,omitempty"` // why it is gone
	History []WorkerSample `json:"history"`          // oldest first
}

// Disk is the use of one of a worker's directories.
type Disk struct {
	Name string `json:"name"` // "local" (its own: spill files) or "scratch" (ops' files: shuffles)
	Path string `json:"path"`
	Used int64  `json:"used"` // bytes of the files in it
	Free int64  `json:"free"` // bytes free on its file system
	Size int64  `json:"size"` // bytes of its file system
}

// WorkerSample is a worker's numbers at one report.
type WorkerSample struct {
	Time      time.Time `json:"time"`
	CPU       float64   `json:"cpu"` // percent of one core
	RSS       int64     `json:"rss"`
	Managed   int64     `json:"managed"`
	Spilled   int64     `json:"spilled"`
	NetIn     float64   `json:"net_in"`  // bytes/s
	NetOut    float64   `json:"net_out"` // bytes/s
	Executing int       `json:"executing"`
}

// WorkerPage is the body of GET /api/worker?name=: one worker, its
// logs and the tasks it ran last.
type WorkerPage struct {
	Worker WorkerStats `json:"worker"`
	Logs   []LogEntry  `json:"logs"`  // its last records, oldest first
	Tasks  []TaskRun   `json:"tasks"` // its last runs, oldest first
}

// System is the body of GET /api/system: the scheduler process.
type System struct {
	Now     SystemSample   `json:"now"`
	History []SystemSample `json:"history"` // oldest first, one a second
}

// SystemSample is the scheduler process at one moment.
type SystemSample struct {
	Time       time.Time `json:"time"`
	CPU        float64   `json:"cpu"` // percent of one core since the sample before
	RSS        int64     `json:"rss"`
	HeapInUse  int64     `json:"heap_in_use"`
	Goroutines int       `json:"goroutines"`
	FDs        int       `json:"fds"` // -1 unknown
	// Handle is the mean time the scheduling core took per batch of
	// events since the sample before, HandleMax the longest; Batches
	// how many batches it handled.
	Handle    float64 `json:"handle_seconds"`
	HandleMax float64 `json:"handle_max_seconds"`
	Batches   int64   `json:"batches"`
	// Lateness is how late a timer of the process fired: goroutine
	// scheduling latency.
	Lateness float64 `json:"lateness_seconds"`
}

// Groups is the body of GET /api/groups: the tasks the scheduler knows,
// as task groups (the tasks of one kind of one collection: a key without
// its trailing indices, such as "read-csv-3fa2c1d0") and the
// dependencies between them.
type Groups struct {
	Groups []Group     `json:"groups"` // in the order they were submitted
	Edges  []GroupEdge `json:"edges"`
}

// Group is a task group.
type Group struct {
	Name        string         `json:"name"`
	Prefix      string         `json:"prefix"`
	Computation uint64         `json:"computation"`
	Total       int            `json:"total"`
	States      map[string]int `json:"states"`  // tasks by state: waiting, queued, processing, memory, erred, released (done), forgotten (done and let go)
	Bytes       int64          `json:"bytes"`   // of its results computed so far
	Seconds     float64        `json:"seconds"` // its tasks computed so far
}

// GroupEdge says the tasks of To depend on Count tasks of From.
type GroupEdge struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Count int    `json:"count"`
}

// LogQuery selects log records: the parameters of GET /api/logs. Empty
// fields select everything.
type LogQuery struct {
	Level  string // least level: "DEBUG", "INFO", "WARN" or "ERROR"
	Source string // "scheduler", or a worker's address or name
	Key    string // records about this task key (attribute "key")
	Text   string // records whose message or attributes contain it (case-insensitive)
	Limit  int    // the newest Limit of them; 0: the handler's default
}

// Matches reports whether r is one of the records q asks for, its source
// aside: of at least q's level, about q's task key, with q's text in its
// message or attributes.
func (q LogQuery) Matches(r LogRecord) bool {
	if q.Level != "" {
		var least, l slog.Level
		least.UnmarshalText([]byte(q.Level))
		if l.UnmarshalText([]byte(r.Level)) != nil || l < least {
			return false
		}
	}
	if q.Key != "" && r.Attrs["key"] != q.Key {
		return false
	}
	if q.Text == "" {
		return true
	}
	text := strings.ToLower(q.Text)
	if strings.Contains(strings.ToLower(r.Message), text) {
		return true
	}
	for k, v := range r.Attrs {
		if strings.Contains(strings.ToLower(k+"="+v), text) {
			return true
		}
	}
	return false
}

// Logs is the body of GET /api/logs.
type Logs struct {
	Records []LogEntry `json:"records"` // oldest first
	Matched int        `json:"matched"` // records that match, Limit aside
	Sources []string   `json:"sources"` // "scheduler" and every worker known, for the filter
}

// LogEntry is a log record of the scheduler or a worker.
type LogEntry struct {
	LogRecord
	Source string `json:"source"` // "scheduler", or the worker's address
}

// Errors is the body of GET /api/errors.
type Errors struct {
	Errors []ErrorRecord `json:"errors"` // newest first
	Failed []Computation `json:"failed"` // computations that failed, newest first
	Total  int           `json:"total"`  // errors since the scheduler started; Errors keeps the last of them
}

// ErrorRecord is a task that failed.
type ErrorRecord struct {
	Time        time.Time `json:"time"`
	Key         string    `json:"key"`
	Prefix      string    `json:"prefix"`
	Op          string    `json:"op"` // the function or operation the task ran
	Worker      string    `json:"worker,omitempty"`
	Computation uint64    `json:"computation,omitempty"`
	Error       string    `json:"error"`
	Stack       string    `json:"stack,omitempty"` // of a panic
}

// ProfileQuery selects the samples of a profile: the parameters of
// GET /api/profile. Zero times leave the window open on that side; empty
// lists select everything.
type ProfileQuery struct {
	Start, Stop time.Time
	Prefixes    []string
	Workers     []string
}

// Profile is the body of GET /api/profile: where the CPU time of the
// cluster went, as a flame graph.
type Profile struct {
	Start   time.Time `json:"start"` // of the windows merged
	Stop    time.Time `json:"stop"`
	Samples int64     `json:"samples"`
	Seconds float64   `json:"seconds"` // CPU seconds sampled
	// Prefixes and Workers are those found in the windows, for the
	// filters.
	Prefixes []string `json:"prefixes"`
	Workers  []string `json:"workers"`
	// Root is the flame graph: its value is every sample's, its children
	// the outermost functions. Frames below a thousandth of the total
	// are summed into their parent.
	Root     *FlameNode `json:"root"`
	Timeline Timeline   `json:"timeline"`
}

// ProfileOf returns the flame graph of p, a profile of the windows of
// store, with its window, samples and CPU time, and the prefixes and
// workers of store for the filters. Its Timeline is left empty.
func ProfileOf(p *profile.Profile, store *diagnostics.ProfileStore) *Profile {
	out := &Profile{Root: diagnostics.FlameGraph(p, diagnostics.DefaultFlameMinFraction), Prefixes: []string{},
		Workers: []string{}, Timeline: Timeline{Prefixes: []string{}, Busy: [][]float64{}}}
	prefixes, workers := store.Labels()
	out.Prefixes, out.Workers = append(out.Prefixes, prefixes...), append(out.Workers, workers...)
	if p.TimeNanos != 0 {
		out.Start = time.Unix(0, p.TimeNanos)
		out.Stop = out.Start.Add(time.Duration(p.DurationNanos))
	}
	for _, sm := range p.Sample {
		if len(sm.Value) > 0 {
			out.Samples += sm.Value[0]
		}
	}
	out.Seconds = float64(out.Root.Value) / 1e9
	return out
}

// FlameNode is a frame of a flame graph: a function, the CPU time in it
// and below (Value) and in it alone (Self), in nanoseconds.
type FlameNode = diagnostics.FlameNode

// Timeline says which prefixes ran when: the thread-seconds of task runs
// per prefix in equal buckets of time.
type Timeline struct {
	Start         time.Time   `json:"start"`
	BucketSeconds float64     `json:"bucket_seconds"`
	Prefixes      []string    `json:"prefixes"`
	Busy          [][]float64 `json:"busy"` // per prefix, per bucket
}

// FineMetrics is the body of GET /api/fine-metrics: where the time of
// each task prefix went, on every worker.
type FineMetrics struct {
	// Activities in the order to stack them: "compute" (wall time of
	// the task's function), "cpu" (CPU time sampled by the profiler, part
	// of compute), "queued" (ready, waiting for a thread), "waiting"
	// (waiting for its inputs to arrive), "transfer-in",
	// "transfer-out", "spill-write", "spill-read", "disk-write",
	// "disk-read", "encode", "decode", "idle" (threads with no task; no
	// prefix).
	Activities []string        `json:"activities"`
	Rows       []FineMetricRow `json:"rows"`
}

// FineMetricRow is one total of FineMetrics.
type FineMetricRow struct {
	Prefix   string  `json:"prefix"` // "" for what belongs to no task (idle)
	Activity string  `json:"activity"`
	Unit     string  `json:"unit"` // "seconds", "bytes" or "count"
	Value    float64 `json:"value"`
}

// Bandwidth is the body of GET /api/bandwidth: what moved between
// workers (and to clients) since the scheduler started.
type Bandwidth struct {
	Workers  []string         `json:"workers"` // every endpoint of Pairs
	Pairs    []Transfer       `json:"pairs"`
	Prefixes []PrefixTransfer `json:"prefixes"`
}

// Transfer is what one worker fetched from another.
type Transfer struct {
	From    string  `json:"from"` // who served it: a worker's address
	To      string  `json:"to"`   // who fetched it: a worker's address, or "client"
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"`
	Count   int64   `json:"count"`
}

// PrefixTransfer is what moved of one task prefix's results.
type PrefixTransfer struct {
	Prefix  string  `json:"prefix"`
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"`
	Count   int64   `json:"count"`
}

// Shuffles is the body of GET /api/shuffles.
type Shuffles struct {
	Shuffles []Shuffle `json:"shuffles"` // newest first
}

// Shuffle is one shuffle: its split tasks write every input's rows to
// files by output partition, its collect tasks read them.
type Shuffle struct {
	ID           string          `json:"id"`
	Computation  uint64          `json:"computation,omitempty"`
	Started      time.Time       `json:"started"`
	State        string          `json:"state"` // "running", "done" or "erred"
	Splits       int             `json:"splits"`
	SplitsDone   int             `json:"splits_done"`
	Collects     int             `json:"collects"`
	CollectsDone int             `json:"collects_done"`
	Erred        int             `json:"erred"`
	Workers      []ShuffleWorker `json:"workers"`
	// SplitGroups and CollectGroups are the task groups of its splits
	// and of the tasks that read its output.
	SplitGroups   []string `json:"split_groups"`
	CollectGroups []string `json:"collect_groups"`
}

// ShuffleWorker is a shuffle's work on one worker.
type ShuffleWorker struct {
	Address      string `json:"address"`
	BytesWritten int64  `json:"bytes_written"` // by its split tasks
	BytesRead    int64  `json:"bytes_read"`    // by its collect tasks
	Disk         int64  `json:"disk"`          // bytes of the shuffle's files in its directory now
	Free         int64  `json:"free"`          // bytes free there
}

// Alerts is the body of GET /api/alerts: what is wrong on the workers
// now, and what was lately.
type Alerts struct {
	Active []diagnostics.Alert `json:"active"` // raised and not resolved, oldest first
	Recent []diagnostics.Alert `json:"recent"` // the last resolved, oldest first
}
